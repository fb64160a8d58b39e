//! `tasks --metrics ADDR` (cargo feature `otel`): after real calls over Streamable HTTP, a
//! scrape of `http://ADDR/metrics` shows OpenTelemetry's MCP metrics and wymcp's counters in
//! Prometheus's text format, with the labels and counts of those calls; and a real Prometheus
//! (`prometheus` on `PATH`: Debian's package, which `.ci/run` installs) scraping that endpoint
//! finds the same series through its query API.

#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_tasks");
/// How long the banner may take before the test gives up.
const WAIT: Duration = Duration::from_secs(30);

/// The child, killed when the test ends however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One sample of the text format: its name, labels and value.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// The samples of a scrape (comment lines left out). Label values here have no `"` or `,`.
fn samples(text: &str) -> Vec<Sample> {
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let (series, value) = line.rsplit_once(' ').unwrap();
            let (name, labels) = match series.split_once('{') {
                Some((name, rest)) => (name, rest.trim_end_matches('}')),
                None => (series, ""),
            };
            let labels = labels
                .split(',')
                .filter(|pair| !pair.is_empty())
                .map(|pair| {
                    let (key, value) = pair.split_once('=').unwrap();
                    (key.to_owned(), value.trim_matches('"').to_owned())
                })
                .collect();
            Sample {
                name: name.to_owned(),
                labels,
                value: value.parse().unwrap(),
            }
        })
        .collect()
}

/// The value of the one sample named `name` whose labels include `labels` and none of
/// `absent`.
fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)], absent: &[&str]) -> f64 {
    let found: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.name == name)
        .filter(|s| {
            labels
                .iter()
                .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
        })
        .filter(|s| absent.iter().all(|k| !s.labels.contains_key(*k)))
        .collect();
    assert_eq!(found.len(), 1, "{name} {labels:?}: {found:?}");
    found[0].value
}

#[tokio::test]
async fn a_scrape_after_a_call_and_a_refusal_shows_their_durations_and_the_refusals_gate() {
    let data = std::env::temp_dir().join(format!("wymcp-tasks-metrics-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let mut child = Command::new(BIN)
        .args(["--port", "0", "--metrics", "127.0.0.1:0", "--data"])
        .arg(&data)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let _server = Server(child);
    let (tx, banner) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let (mut url, mut metrics) = (None, None);
    while url.is_none() {
        let line = banner.recv_timeout(WAIT).expect("the banner");
        let line = line.trim();
        let word = |rest: &str| rest.split_whitespace().next().map(str::to_owned);
        if let Some(rest) = line.strip_prefix("metrics") {
            metrics = word(rest);
        } else if let Some(rest) = line.strip_prefix("listening") {
            url = word(rest);
        }
    }
    let (url, metrics) = (url.unwrap(), metrics.expect("the banner's metrics line"));
    assert!(metrics.starts_with("http://127.0.0.1:"), "{metrics}");
    assert!(metrics.ends_with("/metrics"), "{metrics}");

    let http = reqwest::Client::new();
    let post = |body: Value, session: Option<&str>| {
        let mut request = http
            .post(&url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(session) = session {
            request = request
                .header("Mcp-Session-Id", session)
                .header("MCP-Protocol-Version", "2025-11-25");
        }
        request.send()
    };
    let init = post(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "metrics-test", "version": "1"}}}),
        None,
    )
    .await
    .unwrap();
    assert_eq!(init.status(), 200);
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let initialized = post(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        Some(&session),
    )
    .await
    .unwrap();
    assert_eq!(initialized.status(), 202);
    let call = |id: u64, action: &str, data: Value| {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "tasks", "arguments": {"action": action, "data": data}}});
        let answer = post(body, Some(&session));
        async move { answer.await.unwrap().json::<Value>().await.unwrap() }
    };
    let created = call(2, "create", json!({"title": "Scraped"})).await;
    assert_eq!(created["result"]["isError"], false, "{created}");
    // `get` needs an id or a title: the group gate refuses it.
    let refused = call(3, "get", json!({})).await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let text = refused["result"]["content"][0]["text"].as_str().unwrap();
    let refusal: Value = serde_json::from_str(text).unwrap();
    assert_eq!(refusal["error"], "missing_required_group", "{refused}");

    let scrape = http.get(&metrics).send().await.unwrap();
    assert_eq!(scrape.status(), 200);
    let content_type = scrape.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    let text = scrape.text().await.unwrap();
    assert!(
        text.contains("# TYPE mcp_server_operation_duration_seconds histogram\n"),
        "{text}"
    );
    let scraped = samples(&text);
    let tool = [
        ("mcp_method_name", "tools/call"),
        ("gen_ai_tool_name", "tasks"),
        ("gen_ai_operation_name", "execute_tool"),
        ("network_transport", "tcp"),
        ("mcp_protocol_version", "2025-11-25"),
        ("wymcp_era", "session"),
    ];
    let with = |extra: &[(&'static str, &'static str)]| {
        let mut labels = tool.to_vec();
        labels.extend_from_slice(extra);
        labels
    };
    let name = "mcp_server_operation_duration_seconds_count";
    let create = with(&[("wymcp_action", "create")]);
    assert_eq!(value(&scraped, name, &create, &["error_type"]), 1.0);
    let get = with(&[("wymcp_action", "get"), ("error_type", "tool_error")]);
    assert_eq!(value(&scraped, name, &get, &[]), 1.0);
    // The conventions' buckets, cumulative: the call took less than 300 s.
    let mut bucket = create.clone();
    bucket.push(("le", "300"));
    let name = "mcp_server_operation_duration_seconds_bucket";
    assert_eq!(value(&scraped, name, &bucket, &["error_type"]), 1.0);
    let mut bucket = create.clone();
    bucket.push(("le", "0.01"));
    value(&scraped, name, &bucket, &["error_type"]);

    let refusal = [
        ("wymcp_refusal", "missing_required_group"),
        ("gen_ai_tool_name", "tasks"),
        ("wymcp_action", "get"),
    ];
    assert_eq!(
        value(&scraped, "wymcp_server_refusals_total", &refusal, &[]),
        1.0
    );
    let session_labels = [
        ("network_transport", "tcp"),
        ("mcp_protocol_version", "2025-11-25"),
    ];
    assert_eq!(
        value(&scraped, "wymcp_server_sessions", &session_labels, &[]),
        1.0
    );
    // `initialize` and `notifications/initialized` are measured too, by method.
    let initialize = [("mcp_method_name", "initialize")];
    assert_eq!(
        value(
            &scraped,
            "mcp_server_operation_duration_seconds_count",
            &initialize,
            &[]
        ),
        1.0
    );

    // Only /metrics is served there.
    let elsewhere = metrics.replace("/metrics", "/mcp");
    assert_eq!(http.get(&elsewhere).send().await.unwrap().status(), 404);

    prometheus_finds_the_series(&http, &metrics, &data).await;
    let _ = std::fs::remove_dir_all(&data);
}

/// What a skipped check says, and the variable that makes its skip a failure.
const REQUIRE: &str = "WYMCP_REQUIRE_SERVICES";

/// A real Prometheus scraping `metrics` every second: its query API answers the call's duration
/// count and the refusal counter with their labels (and Prometheus's `job`). Without
/// `prometheus` on `PATH` it says so on one line and returns, or fails when
/// `WYMCP_REQUIRE_SERVICES=1`.
async fn prometheus_finds_the_series(
    http: &reqwest::Client,
    metrics: &str,
    data: &std::path::Path,
) {
    let installed = Command::new("prometheus")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !installed {
        let install = "prometheus is not on PATH (Debian/Ubuntu: apt-get install prometheus)";
        assert!(
            std::env::var(REQUIRE).as_deref() != Ok("1"),
            "metrics: the real Prometheus scrape: {install}, and {REQUIRE}=1 requires it"
        );
        let _ = writeln!(
            std::io::stderr(),
            "skipped metrics: the real Prometheus scrape: {install}; {REQUIRE}=1 makes this a failure"
        );
        return;
    }
    let target = metrics
        .trim_start_matches("http://")
        .trim_end_matches("/metrics");
    let dir = data.join("prometheus");
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: tasks\n    static_configs:\n      - targets: ['{target}']\n"
        ),
    )
    .unwrap();
    // A free port, released for Prometheus (which prints no port it picked itself).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("tsdb").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _prometheus = Server(child);
    let query = |promql: &'static str| {
        let url = format!("http://127.0.0.1:{port}/api/v1/query");
        async move {
            // Bounded: a scrape a second, 60 tries half a second apart.
            for _ in 0..60 {
                if let Ok(answer) = http.get(&url).query(&[("query", promql)]).send().await
                    && let Ok(body) = answer.json::<Value>().await
                    && body["status"] == "success"
                    && body["data"]["result"]
                        .as_array()
                        .is_some_and(|r| !r.is_empty())
                {
                    return body["data"]["result"].clone();
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            panic!("Prometheus found no series for {promql} within 30 s");
        }
    };
    let created = query(
        r#"mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",gen_ai_tool_name="tasks",wymcp_action="create"}"#,
    )
    .await;
    assert_eq!(created.as_array().unwrap().len(), 1, "{created}");
    assert_eq!(created[0]["metric"]["job"], "tasks", "{created}");
    assert_eq!(
        created[0]["metric"]["mcp_protocol_version"], "2025-11-25",
        "{created}"
    );
    assert_eq!(created[0]["value"][1], "1", "{created}");
    let refusals = query(r#"wymcp_server_refusals_total{gen_ai_tool_name="tasks"}"#).await;
    assert_eq!(refusals.as_array().unwrap().len(), 1, "{refusals}");
    assert_eq!(
        refusals[0]["metric"]["wymcp_refusal"], "missing_required_group",
        "{refusals}"
    );
    assert_eq!(refusals[0]["metric"]["wymcp_action"], "get", "{refusals}");
    assert_eq!(refusals[0]["value"][1], "1", "{refusals}");
}

/// `--metrics` that is no address and port is a refused command line (status 2, the usage);
/// one already taken stops the program before it serves (status 1), naming it.
#[test]
fn a_bad_or_busy_metrics_address_is_refused_naming_it() {
    let out = Command::new(BIN)
        .args(["--metrics", "nowhere", "--port", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with(
            "error: --metrics: \"nowhere\" is not an address and port (such as 127.0.0.1:9464)\n\n"
        ),
        "{stderr}"
    );

    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let data = std::env::temp_dir().join(format!("wymcp-tasks-busy-{}", std::process::id()));
    let out = Command::new(BIN)
        .args(["--metrics", &addr, "--port", "0", "--data"])
        .arg(&data)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&data);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains(&format!("error: cannot serve metrics on {addr}: ")),
        "{stderr}"
    );
}
