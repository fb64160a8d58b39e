//! Property tests over real HTTP on 127.0.0.1: which era a request is served in (MCP
//! 2026-07-28 when its `MCP-Protocol-Version` header names that revision or its
//! `params._meta` carries the envelope's revision key, the session era otherwise), and the
//! 2026-07-28 cross-checks of the routing headers against the body (`MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name`: trimmed, compared case-sensitively, the first mismatch refused
//! `-32020` naming its header). Found while fuzzing (docs/fuzzing.md); the fuzz targets
//! explore the same space without the oracle these tests state exactly.

#![allow(clippy::unwrap_used, missing_docs)]

mod http_harness;

use http_harness::{Http, envelope};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use reqwest::StatusCode;
use serde_json::{Map, Value, json};
use wymcp::transport::http::StreamableHttp;
use wymcp::{CallOutput, CallResult, Context, PlainTool, Server};

/// `-32020`, the 2026-07-28 header mismatch.
const HEADER_MISMATCH: i64 = -32020;

struct Echo;

impl PlainTool for Echo {
    fn name(&self) -> &str {
        "echo"
    }
    fn description(&self) -> &str {
        "Echoes its message"
    }
    fn input_schema(&self) -> Map<String, Value> {
        json!({"type": "object", "properties": {"message": {"type": "string"}}})
            .as_object()
            .cloned()
            .unwrap()
    }
    async fn run(&self, arguments: Map<String, Value>, _ctx: Context) -> CallResult {
        Ok(CallOutput::text(
            arguments["message"].as_str().unwrap_or(""),
        ))
    }
}

fn serve() -> (tokio::runtime::Runtime, Http) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = Server::builder()
        .name("era")
        .plain_tool(Echo)
        .build()
        .unwrap();
    let http = rt.block_on(Http::serve(StreamableHttp::builder(server)));
    (rt, http)
}

fn runner() -> TestRunner {
    TestRunner::new(Config {
        cases: 64,
        failure_persistence: None,
        ..Config::default()
    })
}

/// The version header a request carries, if any.
fn version_header() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        Just(None),
        Just(Some("2025-03-26".to_owned())),
        Just(Some("2025-06-18".to_owned())),
        Just(Some("2025-11-25".to_owned())),
        Just(Some("2026-07-28".to_owned())),
        Just(Some(" 2026-07-28 ".to_owned())),
    ]
}

/// What `params._meta` says of the revision: nothing, the modern one, or another value.
fn meta_version() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        Just(None),
        Just(Some(json!("2026-07-28"))),
        Just(Some(json!("2025-11-25"))),
        "[a-z0-9-]{0,12}".prop_map(|s| Some(json!(s))),
    ]
}

/// Whether an answer is the session era's refusal of a request that names no session.
fn asks_for_a_session(status: StatusCode, text: &str) -> bool {
    status == StatusCode::BAD_REQUEST && text.to_ascii_lowercase().contains("session")
}

#[test]
fn the_era_is_the_headers_or_the_envelopes() {
    let (rt, http) = serve();
    // `tools/list`: the session era refuses it without a session (`ping` it answers anyway).
    let strategy = (version_header(), meta_version());
    runner()
        .run(&strategy, |(header, meta)| {
            let method = "tools/list";
            let mut params = json!({});
            if let Some(version) = &meta {
                let mut envelope = envelope();
                envelope["io.modelcontextprotocol/protocolVersion"] = version.clone();
                params["_meta"] = envelope;
            }
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
            let mut headers = vec![("mcp-method", method)];
            if let Some(v) = header.as_deref() {
                headers.push(("mcp-protocol-version", v));
            }
            let answer = rt.block_on(http.post_raw(&headers, body.to_string()));
            let stateless =
                header.as_deref().map(str::trim) == Some("2026-07-28") || meta.is_some();
            let asked = asks_for_a_session(answer.status, &answer.text);
            prop_assert!(
                answer.header("mcp-session-id").is_none(),
                "no session is minted outside initialize: {}",
                answer.text
            );
            if stateless {
                prop_assert!(
                    !asked,
                    "a 2026-07-28 request was asked for a session: {}",
                    answer.text
                );
                let modern_header = header.as_deref().map(str::trim) == Some("2026-07-28");
                if meta == Some(json!("2026-07-28")) {
                    if modern_header {
                        prop_assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
                        prop_assert!(answer.json()["result"].is_object(), "{}", answer.text);
                    } else {
                        // Absent, or naming a session-era revision: the envelope's era, with
                        // the header refused as a mismatch.
                        prop_assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{}", answer.text);
                        prop_assert_eq!(answer.json()["error"]["code"].as_i64(), Some(-32020));
                    }
                }
            } else {
                prop_assert!(
                    asked,
                    "a session-era request served without a session: {} {}",
                    answer.status,
                    answer.text
                );
            }
            Ok(())
        })
        .unwrap();
}

/// How a test sends one routing header.
#[derive(Debug, Clone)]
enum Sent {
    /// The body's value.
    Same,
    /// The body's value padded with blanks, which are trimmed.
    Padded,
    /// Absent.
    Absent,
    /// Another value (a changed case counts: the comparison is case-sensitive).
    Other(String),
}

fn sent() -> impl Strategy<Value = Sent> {
    prop_oneof![
        3 => Just(Sent::Same),
        1 => Just(Sent::Padded),
        1 => Just(Sent::Absent),
        1 => "[A-Za-z0-9/_.-]{1,16}".prop_map(Sent::Other),
        1 => Just(Sent::Other("UPPER".to_owned())),
    ]
}

/// The header value `sent` makes of `body`, `None` when absent or the same as the body's.
fn value(sent: &Sent, body: &str) -> (Option<String>, bool) {
    match sent {
        Sent::Same => (Some(body.to_owned()), true),
        Sent::Padded => (Some(format!("  {body} ")), true),
        Sent::Absent => (None, false),
        Sent::Other(s) if s == "UPPER" => {
            let upper = body.to_ascii_uppercase();
            let same = upper == body;
            (Some(upper), same)
        }
        Sent::Other(s) => (Some(s.clone()), s == body),
    }
}

#[test]
fn routing_headers_are_checked_against_the_body_in_order() {
    let (rt, http) = serve();
    let strategy = (sent(), sent(), sent(), "[a-z]{0,8}");
    runner()
        .run(&strategy, |(version, method, name, message)| {
            let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
                "_meta": envelope(), "name": "echo", "arguments": {"message": message}
            }});
            let checks = [
                ("MCP-Protocol-Version", value(&version, "2026-07-28")),
                ("Mcp-Method", value(&method, "tools/call")),
                ("Mcp-Name", value(&name, "echo")),
            ];
            let headers: Vec<(&str, &str)> = checks
                .iter()
                .filter_map(|(h, (v, _))| v.as_deref().map(|v| (*h, v)))
                .collect();
            let answer = rt.block_on(http.post_raw(&headers, body.to_string()));
            let first_mismatch = checks.iter().find(|(_, (_, same))| !same).map(|(h, _)| *h);
            check_answer(first_mismatch, &answer, &message)
        })
        .unwrap();
}

fn check_answer(
    first_mismatch: Option<&str>,
    answer: &http_harness::Answer,
    message: &str,
) -> Result<(), TestCaseError> {
    let json = answer.json();
    match first_mismatch {
        None => {
            prop_assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
            prop_assert_eq!(&json["result"]["content"][0]["text"], &json!(message));
        }
        Some(header) => {
            prop_assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{}", answer.text);
            prop_assert_eq!(
                json["error"]["code"].as_i64(),
                Some(HEADER_MISMATCH),
                "{}",
                answer.text
            );
            let text = json["error"]["message"].as_str().unwrap_or_default();
            prop_assert!(
                text.contains(header),
                "the refusal names {}: {}",
                header,
                text
            );
            prop_assert_eq!(&json["id"], &json!(9));
        }
    }
    Ok(())
}
