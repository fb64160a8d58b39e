//! Real third-party upstreams through the gateway, each in both modes: the official
//! `@modelcontextprotocol/server-everything`, `server-memory` and `server-filesystem` (npm) and
//! `mcp-server-time` (PyPI), pinned and installed under the target directory by `.ci/run`.
//! Every tool is called through the gateway and directly (a second process of the same
//! server), and the answers compared; in `actions` mode a call with an unknown key, a wrong
//! type or a missing required key is refused by the gates, and the upstream's record of the
//! lines it read (`fixtures/tee.py`) shows no request for it. `help` lists every upstream tool
//! as an action.

#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use wymcp::ProtocolVersion;
use wymcp::client::Client;
use wymcp::testing::{TestClient, assert_gate_error, assert_ok};
use wymcp_gateway::{Expose, Gateway, GatewayConfig, UpstreamConfig};

use support::{received, record};

/// One upstream: its command line, and per role (`d` direct, `a` actions, `t` tools) the
/// environment and a text that differs between roles (a directory), replaced before
/// comparing.
struct Upstream {
    name: &'static str,
    command: Vec<String>,
    env: Vec<(&'static str, String)>,
}

/// A bad call for the gates: the tool, and data with an unknown key, a wrong type and a
/// required key missing.
struct Bad {
    tool: &'static str,
    unknown: Value,
    wrong_type: Value,
    missing: Value,
}

fn tee(record: &Path, upstream: &Upstream) -> Vec<String> {
    let mut args = vec![support::fixture("tee.py"), record.display().to_string()];
    args.extend(upstream.command.iter().cloned());
    args
}

async fn gateway(upstream: &Upstream, expose: Expose, record: &Path) -> TestClient {
    let mut config = UpstreamConfig::stdio(upstream.name, "python3")
        .args(tee(record, upstream))
        .expose(expose)
        .timeout(Duration::from_secs(30));
    for (key, value) in &upstream.env {
        config = config.env(*key, value);
    }
    let gateway = Gateway::start(GatewayConfig::new().upstream(config)).await;
    for notice in gateway.notices() {
        eprintln!("{notice}");
    }
    assert!(
        gateway.notices().iter().all(|n| n.tool().is_some()),
        "the upstream started: {:?}",
        gateway.notices()
    );
    let server = gateway
        .register(wymcp::Server::builder().name("gateway-test"))
        .build()
        .unwrap();
    TestClient::new(server)
}

async fn direct(upstream: &Upstream, record: &Path) -> Client {
    let mut builder = Client::stdio("python3")
        .args(tee(record, upstream))
        .timeout(Duration::from_secs(30));
    for (key, value) in &upstream.env {
        builder = builder.env(*key, value);
    }
    builder.connect().await.unwrap()
}

/// Calls every `(tool, arguments)` directly, through the gateway in `actions` mode and in
/// `tools` mode (each role its own process, `roles` the text each role's answers carry that
/// the others' do not), compares the content of the three answers (through `same`), checks
/// the gates on `bad` and that `help` lists every tool, and returns the three `tools/list`
/// sizes (compact JSON bytes: direct, actions, tools).
async fn check(
    roles: [Upstream; 3],
    calls: &[(&str, Value)],
    bad: &Bad,
    same: fn(&str, &Value, &Value) -> bool,
) -> (usize, usize, usize) {
    let [d, a, t] = &roles;
    let name = d.name;
    let (rd, ra, rt) = (
        record(&format!("{name}-d")),
        record(&format!("{name}-a")),
        record(&format!("{name}-t")),
    );
    let direct = direct(d, &rd).await;
    let actions = gateway(a, Expose::Actions, &ra).await;
    let tools = gateway(t, Expose::Tools, &rt).await;

    let listed = direct.list_tools().await.unwrap();
    let mut called: Vec<&str> = calls.iter().map(|(tool, _)| *tool).collect();
    called.sort_unstable();
    let mut names: Vec<&str> = listed.iter().map(|t| t.name()).collect();
    names.sort_unstable();
    assert_eq!(called, names, "{name}: every tool is called");

    for (tool, arguments) in calls {
        let want = direct.call_tool(tool, arguments.clone()).await.unwrap();
        let want = json!({"content": want.raw()["content"], "isError": want.is_error()});
        let through_actions = support::call_action(&actions, name, tool, arguments.clone()).await;
        let got_a = if through_actions.is_error() {
            json!({"content": through_actions.result().to_value(ProtocolVersion::V2025_11_25)["content"], "isError": true})
        } else {
            json!({"content": assert_ok(&through_actions)["content"], "isError": false})
        };
        let through_tools = tools
            .call_tool(&format!("{name}_{tool}"), arguments.clone())
            .await
            .unwrap();
        let raw_t = through_tools
            .result()
            .to_value(ProtocolVersion::V2025_11_25);
        let got_t = json!({"content": raw_t["content"], "isError": through_tools.is_error()});
        let text = |v: &Value, role: &Upstream| {
            role.env.iter().fold(v.to_string(), |s, (_, value)| {
                s.replace(value.as_str(), "<ROLE>")
            })
        };
        let want_s: Value = serde_json::from_str(&text(&want, d)).unwrap();
        let got_a: Value = serde_json::from_str(&text(&got_a, a)).unwrap();
        let got_t: Value = serde_json::from_str(&text(&got_t, t)).unwrap();
        assert!(
            through_actions.gate_error().is_none(),
            "{name} {tool}: the gates admit what the upstream's schema admits: {:?} (direct: {want_s})",
            through_actions.text()
        );
        if want_s["isError"] == true {
            // An upstream error is the gateway's error, its text the upstream's.
            assert_eq!(got_a["isError"], true, "{name} {tool} (actions)");
            assert_eq!(got_t["isError"], true, "{name} {tool} (tools)");
            continue;
        }
        assert!(
            same(tool, &want_s, &got_a),
            "{name} {tool} (actions): {want_s} vs {got_a}"
        );
        let want_t = json!({"content": carried(&want_s["content"]), "isError": false});
        assert!(
            same(tool, &want_t, &got_t),
            "{name} {tool} (tools): {want_t} vs {got_t}"
        );
    }
    let good = calls.len();
    assert_eq!(
        received(&ra, "tools/call"),
        good,
        "{name}: the calls that reached the upstream"
    );

    for (what, data, gate) in [
        ("unknown key", &bad.unknown, "unknown_params"),
        ("wrong type", &bad.wrong_type, "invalid_values"),
        ("missing key", &bad.missing, "missing_required_fields"),
    ] {
        let refused = support::call_action(&actions, name, bad.tool, data.clone()).await;
        assert_gate_error(&refused, gate);
        assert_eq!(
            received(&ra, "tools/call"),
            good,
            "{name}: the {what} call never reached the upstream"
        );
    }

    let index = assert_ok(&actions.help(Some(name), None).await).to_string();
    for tool in &names {
        assert!(
            index.contains(&format!("\"{tool}")),
            "{name}: help lists {tool}: {index}"
        );
    }

    let size = |v: &Value| serde_json::to_string(v).unwrap().len();
    let direct_size =
        size(&json!({"tools": listed.iter().map(|t| t.raw().clone()).collect::<Vec<_>>()}));
    let sizes = (
        direct_size,
        size(&actions.list_tools(ProtocolVersion::V2025_11_25)),
        size(&tools.list_tools(ProtocolVersion::V2025_11_25)),
    );
    eprintln!(
        "{name}: tools/list compact JSON bytes: direct {}, actions {}, tools {}",
        sizes.0, sizes.1, sizes.2
    );
    direct.close().await.unwrap();
    sizes
}

/// What `tools` mode passes on of content items: wymcp's `Content` keeps each type's own
/// members and an item's `annotations` and `_meta`, not a resource link's `title`, `icons`
/// and `size` (the `actions` mode passes the items on verbatim). A known gap: docs/gateway.md.
fn carried(content: &Value) -> Value {
    let kept = |item: &Value| -> Value {
        let mut item = item.as_object().cloned().unwrap_or_default();
        for key in ["title", "icons", "size"] {
            item.remove(key);
        }
        Value::Object(item)
    };
    Value::Array(
        content
            .as_array()
            .map(|a| a.iter().map(kept).collect())
            .unwrap_or_default(),
    )
}

fn equal(_: &str, a: &Value, b: &Value) -> bool {
    a == b
}

fn node(name: &str, entry: &str, args: &[&str], env: Vec<(&'static str, String)>) -> Upstream {
    let mut command = vec!["node".to_owned(), entry.to_owned()];
    command.extend(args.iter().map(|a| (*a).to_owned()));
    Upstream {
        name: Box::leak(name.to_owned().into_boxed_str()),
        command,
        env,
    }
}

#[tokio::test]
async fn server_everything_in_both_modes() {
    let Some(entry) = support::npm_server("everything") else {
        return;
    };
    let role = |_: char| node("everything", &entry, &["stdio"], Vec::new());
    let calls = [
        ("echo", json!({"message": "hi from the gateway"})),
        (
            "get-annotated-message",
            json!({"messageType": "success", "includeImage": true}),
        ),
        ("get-env", json!({})),
        ("get-resource-links", json!({"count": 2})),
        (
            "get-resource-reference",
            json!({"resourceType": "Text", "resourceId": 1}),
        ),
        ("get-structured-content", json!({"location": "Chicago"})),
        ("get-sum", json!({"a": 2, "b": 3})),
        ("get-tiny-image", json!({})),
        (
            "gzip-file-as-resource",
            json!({"name": "hello.gz", "data": "data:text/plain;base64,aGVsbG8="}),
        ),
        ("toggle-simulated-logging", json!({})),
        ("toggle-subscriber-updates", json!({})),
        (
            "trigger-long-running-operation",
            json!({"duration": 0.2, "steps": 2}),
        ),
        ("simulate-research-query", json!({"topic": "gateways"})),
    ];
    let bad = Bad {
        tool: "get-sum",
        unknown: json!({"a": 1, "b": 2, "c": 3}),
        wrong_type: json!({"a": "one", "b": 2}),
        missing: json!({"a": 1}),
    };
    check(
        [role('d'), role('a'), role('t')],
        &calls,
        &bad,
        same_everything_answer,
    )
    .await;
}

/// server-everything's answers, the same but for the second a dynamic resource names
/// ("... created at 12:59:41 PM"): the direct call and the two through the gateway straddle a
/// second now and then.
fn same_everything_answer(_: &str, a: &Value, b: &Value) -> bool {
    let strip = |v: &Value| -> String {
        let text = v.to_string();
        let mut out = String::new();
        let mut rest = text.as_str();
        while let Some(at) = rest.find(" created at ") {
            out.push_str(&rest[..at]);
            // The time runs to the next quote: "12:59:41 PM\"".
            rest = rest[at..].find('"').map_or("", |end| &rest[at + end..]);
        }
        out.push_str(rest);
        out
    };
    strip(a) == strip(b)
}

#[tokio::test]
async fn server_memory_in_both_modes() {
    let Some(entry) = support::npm_server("memory") else {
        return;
    };
    let role = |r: char| {
        let file = support::target_dir()
            .join("gateway-test-records")
            .join(format!("graph-{r}-{}.jsonl", std::process::id()));
        let _ = std::fs::remove_file(&file);
        node(
            "memory",
            &entry,
            &[],
            vec![("MEMORY_FILE_PATH", file.display().to_string())],
        )
    };
    let calls = [
        (
            "create_entities",
            json!({"entities": [
            {"name": "Ada", "entityType": "person", "observations": ["wrote notes"]},
            {"name": "Engine", "entityType": "machine", "observations": []}]}),
        ),
        (
            "create_relations",
            json!({"relations": [{"from": "Ada", "to": "Engine", "relationType": "programmed"}]}),
        ),
        (
            "add_observations",
            json!({"observations": [{"entityName": "Ada", "contents": ["first program"]}]}),
        ),
        ("read_graph", json!({})),
        ("search_nodes", json!({"query": "Ada"})),
        ("open_nodes", json!({"names": ["Engine"]})),
        (
            "delete_observations",
            json!({"deletions": [{"entityName": "Ada", "observations": ["first program"]}]}),
        ),
        (
            "delete_relations",
            json!({"relations": [{"from": "Ada", "to": "Engine", "relationType": "programmed"}]}),
        ),
        ("delete_entities", json!({"entityNames": ["Engine"]})),
    ];
    let bad = Bad {
        tool: "search_nodes",
        unknown: json!({"query": "Ada", "limit": 3}),
        wrong_type: json!({"query": 7}),
        missing: json!({}),
    };
    check([role('d'), role('a'), role('t')], &calls, &bad, equal).await;
}

/// `get_file_info`'s times differ between the three directories: its answers are compared
/// without them.
fn same_file_answer(tool: &str, a: &Value, b: &Value) -> bool {
    if tool != "get_file_info" {
        return a == b;
    }
    let strip = |v: &Value| -> String {
        v.to_string()
            .split("\\n")
            .filter(|line| {
                !["created", "modified", "accessed"]
                    .iter()
                    .any(|t| line.contains(t))
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    strip(a) == strip(b)
}

#[tokio::test]
async fn server_filesystem_in_both_modes_and_its_catalogue() {
    let Some(entry) = support::npm_server("filesystem") else {
        return;
    };
    let role = |r: char| {
        let dir = support::target_dir()
            .join("gateway-test-records")
            .join(format!("fs-{r}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.txt"), "hello\nworld\n").unwrap();
        std::fs::write(dir.join("c.png"), [0x89, b'P', b'N', b'G', 13, 10, 26, 10]).unwrap();
        let dir = dir.canonicalize().unwrap().display().to_string();
        // The directory is the argument and the text that differs between roles.
        node(
            "filesystem",
            &entry,
            &[&dir],
            vec![("WYMCP_TEST_DIR", dir.clone())],
        )
    };
    let roles = [role('d'), role('a'), role('t')];
    // Arguments name `<DIR>`, written per role below: the calls are the same text.
    let calls: Vec<(&str, Value)> = vec![
        ("list_allowed_directories", json!({})),
        (
            "write_file",
            json!({"path": "<DIR>/b.txt", "content": "bee"}),
        ),
        ("read_file", json!({"path": "<DIR>/a.txt"})),
        ("read_text_file", json!({"path": "<DIR>/a.txt", "head": 1})),
        ("read_media_file", json!({"path": "<DIR>/c.png"})),
        (
            "read_multiple_files",
            json!({"paths": ["<DIR>/a.txt", "<DIR>/b.txt"]}),
        ),
        (
            "edit_file",
            json!({"path": "<DIR>/b.txt", "edits": [{"oldText": "bee", "newText": "bea"}]}),
        ),
        ("create_directory", json!({"path": "<DIR>/sub"})),
        ("list_directory", json!({"path": "<DIR>"})),
        ("list_directory_with_sizes", json!({"path": "<DIR>"})),
        ("directory_tree", json!({"path": "<DIR>"})),
        (
            "move_file",
            json!({"source": "<DIR>/b.txt", "destination": "<DIR>/sub/b.txt"}),
        ),
        ("search_files", json!({"path": "<DIR>", "pattern": "*.txt"})),
        ("get_file_info", json!({"path": "<DIR>/a.txt"})),
    ];
    let bad = Bad {
        tool: "read_text_file",
        unknown: json!({"path": "<DIR>/a.txt", "lines": 1}),
        wrong_type: json!({"path": "<DIR>/a.txt", "head": "one"}),
        missing: json!({"head": 1}),
    };
    // Every role's calls name its own directory: the three run the same calls on three
    // identical directories, `<DIR>` standing for it in the arguments and in what is compared.
    let sizes = check_per_role(roles, &calls, &bad).await;
    let ratio = sizes.1 as f64 / sizes.2 as f64;
    eprintln!("filesystem: actions/tools catalogue ratio {ratio:.2}");
    assert!(
        ratio <= 0.6,
        "the actions catalogue is at most 0.6 of the tools one: {sizes:?}"
    );
}

/// [`check`] for upstreams whose calls name a per-role directory (`<DIR>` in the arguments).
async fn check_per_role(
    roles: [Upstream; 3],
    calls: &[(&str, Value)],
    bad: &Bad,
) -> (usize, usize, usize) {
    let fill = |dir: &str, v: &Value| -> Value {
        serde_json::from_str(&v.to_string().replace("<DIR>", dir)).unwrap()
    };
    let [d, a, t] = &roles;
    let name = d.name;
    let (rd, ra, rt) = (
        record(&format!("{name}-d")),
        record(&format!("{name}-a")),
        record(&format!("{name}-t")),
    );
    let direct = direct(d, &rd).await;
    let actions = gateway(a, Expose::Actions, &ra).await;
    let tools = gateway(t, Expose::Tools, &rt).await;
    let dir = |u: &Upstream| u.env[0].1.clone();
    let listed = direct.list_tools().await.unwrap();
    let mut called: Vec<&str> = calls.iter().map(|(tool, _)| *tool).collect();
    called.sort_unstable();
    let mut names: Vec<&str> = listed.iter().map(|t| t.name()).collect();
    names.sort_unstable();
    assert_eq!(called, names, "{name}: every tool is called");
    let unrole = |v: Value, u: &Upstream| -> Value {
        serde_json::from_str(&v.to_string().replace(&dir(u), "<DIR>")).unwrap()
    };
    for (tool, arguments) in calls {
        let want = direct
            .call_tool(tool, fill(&dir(d), arguments))
            .await
            .unwrap();
        assert!(!want.is_error(), "{name} {tool}: {}", want.text());
        let want = unrole(want.raw()["content"].clone(), d);
        let got_a = support::call_action(&actions, name, tool, fill(&dir(a), arguments)).await;
        let got_a = unrole(assert_ok(&got_a)["content"].clone(), a);
        let got_t = tools
            .call_tool(&format!("{name}_{tool}"), fill(&dir(t), arguments))
            .await
            .unwrap();
        assert!(
            !got_t.is_error(),
            "{name} {tool} (tools): {:?}",
            got_t.text()
        );
        let got_t = unrole(
            got_t.result().to_value(ProtocolVersion::V2025_11_25)["content"].clone(),
            t,
        );
        assert!(
            same_file_answer(tool, &want, &got_a),
            "{name} {tool} (actions): {want} vs {got_a}"
        );
        let want_t = carried(&want);
        assert!(
            same_file_answer(tool, &want_t, &got_t),
            "{name} {tool} (tools): {want_t} vs {got_t}"
        );
    }
    let good = calls.len();
    assert_eq!(received(&ra, "tools/call"), good);
    for (data, gate) in [
        (&bad.unknown, "unknown_params"),
        (&bad.wrong_type, "invalid_values"),
        (&bad.missing, "missing_required_fields"),
    ] {
        let refused = support::call_action(&actions, name, bad.tool, fill(&dir(a), data)).await;
        assert_gate_error(&refused, gate);
        assert_eq!(
            received(&ra, "tools/call"),
            good,
            "{name}: a bad call reached the upstream"
        );
    }
    let index = assert_ok(&actions.help(Some(name), None).await).to_string();
    for tool in &names {
        assert!(
            index.contains(&format!("\"{tool}")),
            "{name}: help lists {tool}: {index}"
        );
    }
    let size = |v: &Value| serde_json::to_string(v).unwrap().len();
    let direct_size =
        size(&json!({"tools": listed.iter().map(|t| t.raw().clone()).collect::<Vec<_>>()}));
    let sizes = (
        direct_size,
        size(&actions.list_tools(ProtocolVersion::V2025_11_25)),
        size(&tools.list_tools(ProtocolVersion::V2025_11_25)),
    );
    eprintln!(
        "{name}: tools/list compact JSON bytes: direct {}, actions {}, tools {}",
        sizes.0, sizes.1, sizes.2
    );
    direct.close().await.unwrap();
    sizes
}

/// `get_current_time`'s answer carries the second it was asked: compared without its
/// `datetime`.
fn same_time_answer(tool: &str, a: &Value, b: &Value) -> bool {
    if tool != "get_current_time" {
        return a == b;
    }
    let read = |v: &Value| -> Value {
        let text = v["content"][0]["text"].as_str().unwrap_or_default();
        let mut answer: Value = serde_json::from_str(text).unwrap_or(Value::Null);
        if let Some(map) = answer.as_object_mut() {
            map.remove("datetime");
        }
        answer
    };
    read(a) == read(b) && read(a)["timezone"] == "UTC"
}

#[tokio::test]
async fn mcp_server_time_in_both_modes() {
    let Some(program) = support::time_server() else {
        return;
    };
    let role = |_: char| Upstream {
        name: "time",
        command: vec![
            program.clone(),
            "--local-timezone".to_owned(),
            "UTC".to_owned(),
        ],
        env: Vec::new(),
    };
    let calls = [
        ("get_current_time", json!({"timezone": "UTC"})),
        (
            "convert_time",
            json!({"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}),
        ),
    ];
    let bad = Bad {
        tool: "get_current_time",
        unknown: json!({"timezone": "UTC", "format": "iso"}),
        wrong_type: json!({"timezone": 9}),
        missing: json!({}),
    };
    check(
        [role('d'), role('a'), role('t')],
        &calls,
        &bad,
        same_time_answer,
    )
    .await;
}
