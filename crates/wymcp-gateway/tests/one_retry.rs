//! Issue 47's scripted model on a gateway-folded upstream: broken calls to the official
//! `@modelcontextprotocol/server-filesystem` (npm, pinned, installed by `.ci/run`) in `actions`
//! mode, each corrected from the refusal's JSON text alone (never `help`) by the rules of the
//! tasks example's model (`examples/tasks/tests/model`, included here), at most three times.
//! A call of one mistake whose refusal carries the answer must be accepted on the first retry,
//! one of two mistakes on the second; the figure is in docs/tools-and-gates.md.
//!
//! Run: `cargo test -p wymcp-gateway --test one_retry -- --nocapture` (prints every round).

#![allow(clippy::unwrap_used, missing_docs)]

mod support;

#[path = "../../../examples/tasks/tests/model/mod.rs"]
mod model;

use std::time::Duration;

use serde_json::{Value, json};
use wymcp::testing::TestClient;
use wymcp_gateway::{Expose, Gateway, GatewayConfig, UpstreamConfig};

/// The most retries a case gets: the "within three".
const MAX_RETRIES: usize = 3;

/// One broken call to the folded `filesystem` tool: its class, its arguments (`<DIR>` standing
/// for the served directory), and after how many retries the model must have it accepted
/// (`None`: its refusal cannot carry what the call needs, as a path the model cannot know).
struct Case {
    class: &'static str,
    arguments: Value,
    fixed_at: Option<usize>,
}

fn case(class: &'static str, arguments: Value) -> Case {
    let fixed_at = Some(if class == "two mistakes" { 2 } else { 1 });
    Case {
        class,
        arguments,
        fixed_at,
    }
}

fn unanswerable(class: &'static str, arguments: Value) -> Case {
    Case {
        fixed_at: None,
        ..case(class, arguments)
    }
}

fn cases() -> Vec<Case> {
    vec![
        case(
            "missing action",
            json!({"data": {"source": "<DIR>/m1.txt", "destination": "<DIR>/m2.txt"}}),
        ),
        case(
            "missing action",
            json!({"data": {"paths": ["<DIR>/a.txt"]}}),
        ),
        case(
            "missing action",
            json!({"data": {"path": "<DIR>/a.txt", "edits": [{"oldText": "hello", "newText": "hello"}]}}),
        ),
        case(
            "misspelled action",
            json!({"action": "read_txt_file", "data": {"path": "<DIR>/a.txt"}}),
        ),
        case(
            "misspelled action",
            json!({"action": "list_directry", "data": {"path": "<DIR>"}}),
        ),
        case(
            "misspelled action",
            json!({"action": "get_file_inf", "data": {"path": "<DIR>/a.txt"}}),
        ),
        case(
            "misspelled key",
            json!({"action": "read_text_file", "data": {"path": "<DIR>/a.txt", "haed": 1}}),
        ),
        case(
            "misspelled key",
            json!({"action": "search_files", "data": {"path": "<DIR>", "patern": "*.txt"}}),
        ),
        case(
            "misspelled key",
            json!({"action": "edit_file", "data": {"path": "<DIR>/a.txt",
                   "edits": [{"oldTxt": "hello", "newText": "hello"}], "dryRun": true}}),
        ),
        case(
            "missing required key",
            json!({"action": "write_file", "data": {"path": "<DIR>/w.txt"}}),
        ),
        case(
            "missing required key",
            json!({"action": "search_files", "data": {"path": "<DIR>"}}),
        ),
        unanswerable(
            "missing required key",
            json!({"action": "read_text_file", "data": {"head": 1}}),
        ),
        case(
            "wrong type",
            json!({"action": "read_text_file", "data": {"path": "<DIR>/a.txt", "head": "one"}}),
        ),
        case(
            "wrong type",
            json!({"action": "edit_file", "data": {"path": "<DIR>/a.txt",
                   "edits": [{"oldText": "hello", "newText": "hello"}], "dryRun": "yes"}}),
        ),
        unanswerable(
            "wrong type",
            json!({"action": "list_directory", "data": {"path": 5}}),
        ),
        case(
            "bad value",
            json!({"action": "list_directory_with_sizes", "data": {"path": "<DIR>", "sortBy": "largest"}}),
        ),
        case(
            "extra argument",
            json!({"action": "list_allowed_directories", "verbose": true}),
        ),
        case(
            "two mistakes",
            json!({"action": "read_txt_file", "data": {"path": "<DIR>/a.txt", "haed": 1}}),
        ),
        case(
            "two mistakes",
            json!({"action": "get_file_info", "verbose": true, "data": {"pth": "<DIR>/a.txt"}}),
        ),
    ]
}

/// The gateway serving server-filesystem over `dir` in `actions` mode.
async fn gateway(entry: &str, dir: &str) -> TestClient {
    let config = UpstreamConfig::stdio("filesystem", "node")
        .args([entry.to_owned(), dir.to_owned()])
        .expose(Expose::Actions)
        .timeout(Duration::from_secs(30));
    let gateway = Gateway::start(GatewayConfig::new().upstream(config)).await;
    assert!(
        gateway.notices().iter().all(|n| n.tool().is_some()),
        "the upstream started: {:?}",
        gateway.notices()
    );
    let server = gateway
        .register(wymcp::Server::builder().name("gateway-one-retry"))
        .build()
        .unwrap();
    TestClient::new(server)
}

/// Calls the folded tool: `Ok` when accepted, `Err(refusal text)` when the answer is an error.
async fn call(client: &TestClient, arguments: &Value) -> Result<(), String> {
    let answer = client
        .call_tool("filesystem", arguments.clone())
        .await
        .unwrap();
    let text = answer.text().unwrap_or_default().to_owned();
    if answer.is_error() { Err(text) } else { Ok(()) }
}

/// Replays `case`: the retry that was accepted (`None`: none of [`MAX_RETRIES`]), and a line
/// per round.
async fn replay(client: &TestClient, sent: Value) -> (Option<usize>, Vec<String>) {
    let mut sent = sent;
    let mut refusal = match call(client, &sent).await {
        Err(refusal) => refusal,
        Ok(()) => panic!("{sent} was accepted"),
    };
    let mut rounds = Vec::new();
    for retry in 1..=MAX_RETRIES {
        let Some(corrected) = model::correct(&sent, &refusal) else {
            rounds.push(format!("  {retry}: (no correction) after {refusal}"));
            return (None, rounds);
        };
        rounds.push(format!("  {retry}: {corrected}"));
        match call(client, &corrected).await {
            Ok(()) => return (Some(retry), rounds),
            Err(next) => refusal = next,
        }
        sent = corrected;
    }
    rounds.push(format!("  refused: {refusal}"));
    (None, rounds)
}

#[tokio::test]
async fn server_filesystems_refusals_are_fixed_from_the_refusal_alone() {
    let Some(entry) = support::npm_server("filesystem") else {
        return;
    };
    let dir = support::target_dir()
        .join("gateway-test-records")
        .join(format!("one-retry-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.txt"), "hello\nworld\n").unwrap();
    std::fs::write(dir.join("m1.txt"), "move me\n").unwrap();
    let dir = dir.canonicalize().unwrap().display().to_string();
    let client = gateway(&entry, &dir).await;

    let cases = cases();
    let (mut in_one, mut within_three) = (0, 0);
    let mut report = Vec::new();
    let mut unexpected = Vec::new();
    for case in &cases {
        let sent: Value =
            serde_json::from_str(&case.arguments.to_string().replace("<DIR>", &dir)).unwrap();
        let (fixed_at, rounds) = replay(&client, sent).await;
        in_one += usize::from(fixed_at == Some(1));
        within_three += usize::from(fixed_at.is_some());
        let verdict = fixed_at.map_or("NOT".to_owned(), |r| format!("fixed@{r}"));
        report.push(format!(
            "{:<21} {:>7}  {}\n{}",
            case.class,
            verdict,
            case.arguments,
            rounds.join("\n")
        ));
        if fixed_at != case.fixed_at {
            unexpected.push(report.last().unwrap().clone());
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("{}", report.join("\n"));
    println!(
        "server-filesystem through the gateway: fixed in one retry: {in_one} of {}; within {MAX_RETRIES}: {within_three} of {}",
        cases.len(),
        cases.len()
    );
    assert!(unexpected.is_empty(), "{}", unexpected.join("\n"));
}
