//! Limits that hold against a hostile client, transport and security half (issue 19, rows D7,
//! D8, D12, D13, D14, D18), over real HTTP on 127.0.0.1: each test sends the hostile input,
//! asserts the exact refusal (status, header, body text, or the connection closed without an
//! answer), then that a normal call is answered right after.

#![allow(clippy::unwrap_used, missing_docs)]

mod hostile_kit;
mod http_harness;

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hostile_kit::{PING, Served, greeter_server, post};
use http_harness::{Http, borrowed, modern_headers};
use reqwest::StatusCode;
use serde_json::{Value, json};
use wymcp::Identity;
use wymcp::transport::http::{BearerAuth, ConnectionLimits, StreamableHttp};

const SHORT: Duration = Duration::from_millis(300);

async fn loopback(limits: ConnectionLimits) -> Served {
    Served::start(
        "127.0.0.1:0",
        StreamableHttp::builder(greeter_server()),
        limits,
    )
    .await
}

// ---------------------------------------------------------------------------------------------
// D7: connection limits from the HTTP stack

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn d7_a_slowloris_head_is_closed_at_the_header_read_timeout() {
    let served = loopback(ConnectionLimits::new().header_read_timeout(SHORT)).await;
    let mut slow = served.connect().await;
    // Half a head, then nothing more.
    slow.send("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a")
        .await;
    assert_eq!(slow.closed().await, b"", "closed without an answer");
    served.assert_serves().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn d7_an_idle_keep_alive_connection_is_closed_at_the_header_read_timeout() {
    let served = loopback(ConnectionLimits::new().header_read_timeout(SHORT)).await;
    let mut idle = served.connect().await;
    idle.send(&post("", PING)).await;
    let answer = idle.answer().await;
    assert_eq!(answer.status, 200);
    assert_eq!(
        answer.json(),
        json!({"jsonrpc": "2.0", "id": 1, "result": {}})
    );
    // Kept alive, then idle: closed once the wait for the next head runs out.
    assert_eq!(idle.closed().await, b"");
    served.assert_serves().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn d7_a_body_sent_too_slowly_is_refused_at_the_body_read_timeout() {
    let served = loopback(ConnectionLimits::new().body_read_timeout(SHORT)).await;
    let mut slow = served.connect().await;
    // The head announces 40 bytes; 10 come, then nothing.
    slow.send(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json\r\nContent-Length: 40\r\n\r\n{\"jsonrpc\"",
    )
    .await;
    let answer = slow.answer().await;
    answer.assert_refusal(
        408,
        format!(
            "Request Timeout: no piece of the request body arrived within {SHORT:?} \
             (ConnectionLimits::body_read_timeout)"
        ),
    );
    assert_eq!(
        slow.closed().await,
        b"",
        "the connection ends with the refusal"
    );
    served.assert_serves().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn d7_over_the_connection_cap_a_connection_waits_until_one_closes() {
    let limits = ConnectionLimits::new()
        .max_connections(2)
        .header_read_timeout(Duration::from_secs(60));
    let served = loopback(limits).await;
    let mut first = served.connect().await;
    let mut second = served.connect().await;
    for conn in [&mut first, &mut second] {
        conn.send(&post("", PING)).await;
        assert_eq!(conn.answer().await.status, 200);
    }
    // Both slots are held by kept-alive connections: the third is not accepted.
    let mut third = served.connect().await;
    third.send(&post("", PING)).await;
    let waiting = tokio::time::timeout(SHORT, third.read_answer()).await;
    assert!(waiting.is_err(), "answered over the cap");
    // One closes: the third is accepted and answered.
    drop(first);
    let answer = third.answer().await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.json()["result"], json!({}));
    drop((second, third));
    served.assert_serves().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn d7_without_keep_alive_each_connection_ends_with_its_answer() {
    let served = loopback(ConnectionLimits::new().keep_alive(false)).await;
    let mut conn = served.connect().await;
    conn.send(&post("", PING)).await;
    let answer = conn.answer().await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.header("connection"), Some("close"));
    assert_eq!(conn.closed().await, b"");
    served.assert_serves().await;
}

// ---------------------------------------------------------------------------------------------
// D8: Origin validated whatever the bind address

async fn public(configure: impl FnOnce(StreamableHttp) -> StreamableHttp) -> Served {
    let builder = configure(StreamableHttp::builder(greeter_server()));
    Served::start("0.0.0.0:0", builder, ConnectionLimits::new()).await
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"evil","version":"1"}}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn d8_a_foreign_origin_is_refused_on_a_public_bind() {
    let served = public(|b| b).await;
    let evil = "Host: evil.com\r\nOrigin: https://evil.example\r\n";
    let answer = served.ask(evil, INITIALIZE).await;
    assert_eq!(answer.status, 403);
    assert_eq!(answer.header("mcp-session-id"), None, "no session made");
    assert_eq!(answer.json()["error"]["code"], -32600);
    assert_eq!(
        answer.json()["error"]["data"]["error"],
        "Origin not allowed: https://evil.example"
    );
    // A prefix that looks like loopback is not loopback; an opaque origin is not allowed.
    for origin in ["http://[::1].evil.com", "http://localhost.evil.com", "null"] {
        let answer = served.ask(&format!("Origin: {origin}\r\n"), PING).await;
        answer.assert_refusal(403, format!("Origin not allowed: {origin}"));
    }
    // No Origin (a non-browser client) and a loopback origin pass; the public bind leaves the
    // Host allowlist off, so any valid Host does.
    for extra in [
        "Host: mcp.example.com\r\n",
        "Origin: http://localhost:5173\r\n",
    ] {
        assert_eq!(served.ask(extra, PING).await.status, 200, "{extra}");
    }
    served.assert_serves().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn d8_origins_follow_the_configured_hosts_and_protection_off_keeps_them_checked() {
    let served = public(|b| b.allowed_hosts(["mcp.example.com"])).await;
    let own = "Host: mcp.example.com\r\nOrigin: https://mcp.example.com\r\n";
    assert_eq!(served.ask(own, PING).await.status, 200);
    let answer = served.ask("Origin: https://evil.example\r\n", PING).await;
    assert_eq!(answer.status, 403);
    served.assert_serves().await;
    let off = public(|b| b.dns_rebinding_protection(false)).await;
    let answer = off.ask("Origin: https://evil.example\r\n", PING).await;
    answer.assert_refusal(403, "Origin not allowed: https://evil.example");
    let answer = off
        .ask("Origin: http://a\r\nOrigin: http://b\r\n", PING)
        .await;
    answer.assert_refusal(
        400,
        "Duplicated Origin header. Send exactly one Origin header.",
    );
    off.assert_serves().await;
}

// ---------------------------------------------------------------------------------------------
// D12: Host parsed strictly

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn d12_a_host_that_is_not_one_valid_authority_is_400() {
    for served in [loopback(ConnectionLimits::new()).await, public(|b| b).await] {
        for host in [
            "[::1].evil.com",
            "local host",
            "localhost:99999",
            "a@localhost",
            "[::1",
        ] {
            let answer = served.ask(&format!("Host: {host}\r\n"), PING).await;
            answer.assert_refusal(
                400,
                format!("Invalid Host header: expected host[:port], got {host}"),
            );
        }
        let answer = served
            .ask("Host: 127.0.0.1\r\nHost: evil.com\r\n", PING)
            .await;
        answer.assert_refusal(400, "Duplicated Host header. Send exactly one Host header.");
        served.assert_serves().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn d12_a_valid_foreign_host_is_403_on_loopback() {
    let served = loopback(ConnectionLimits::new()).await;
    let answer = served.ask("Host: evil.com:8080\r\n", PING).await;
    answer.assert_refusal(403, "Host not allowed: evil.com");
    assert_eq!(served.ask("Host: [::1]:8080\r\n", PING).await.status, 200);
    served.assert_serves().await;
}

/// Issue 48, N20: an absolute-form request target's authority replaces `Host` (RFC 9112
/// §3.2.2), so it is checked as `Host` is: `POST http://evil.com/mcp` beside an allowed
/// `Host` was served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n20_an_absolute_form_target_s_authority_is_checked_as_host() {
    let served = loopback(ConnectionLimits::new()).await;
    let absolute = |authority: &str| {
        post("", PING).replacen("POST /mcp ", &format!("POST http://{authority}/mcp "), 1)
    };
    for (authority, refused) in [("evil.com", "evil.com"), ("evil.com:8080", "evil.com")] {
        let mut conn = served.connect().await;
        conn.send(&absolute(authority)).await;
        conn.answer()
            .await
            .assert_refusal(403, format!("Host not allowed: {refused}"));
    }
    // An allowed authority in absolute form is served.
    let mut conn = served.connect().await;
    conn.send(&absolute(&format!("127.0.0.1:{}", served.addr.port())))
        .await;
    let answer = conn.answer().await;
    assert_eq!(answer.status, 200);
    assert_eq!(
        answer.json(),
        json!({"jsonrpc": "2.0", "id": 1, "result": {}})
    );
    served.assert_serves().await;

    // Without DNS-rebinding protection (a public bind), any target is served, as any Host is.
    let open = public(|b| b).await;
    let mut conn = open.connect().await;
    conn.send(&absolute("evil.com")).await;
    assert_eq!(conn.answer().await.status, 200);
}

// ---------------------------------------------------------------------------------------------
// D13, D18: the Authorization header and static tokens

async fn with_auth() -> Served {
    let auth = BearerAuth::new()
        .token("ada-token", Identity::new("ada"))
        .token("mallory-token", Identity::new("mallory"));
    let builder = StreamableHttp::builder(greeter_server()).auth(auth);
    Served::start("127.0.0.1:0", builder, ConnectionLimits::new()).await
}

/// Posts a ping with `extra` header lines on a fresh connection.
async fn ping_with(served: &Served, extra: &str) -> hostile_kit::RawAnswer {
    served.ask(extra, PING).await
}

const MALFORMED: &str = "Malformed Authorization header: expected `Bearer <token>` (RFC 6750 §2.1)";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn d13_a_malformed_authorization_is_400_invalid_request() {
    let served = with_auth().await;
    for value in [
        "Bearer",
        "Bearer ",
        "Bearer a b",
        "Bearer to=ken",
        "Bear(er) x",
        "ada-token",
    ] {
        let answer = ping_with(&served, &format!("Authorization: {value}\r\n")).await;
        assert_eq!(answer.status, 400, "{value}");
        assert_eq!(
            answer.header("www-authenticate"),
            Some(r#"Bearer error="invalid_request""#),
            "{value}"
        );
        assert_eq!(
            answer.json()["error"]["data"]["error"],
            MALFORMED,
            "{value}"
        );
    }
    let twice = "Authorization: Bearer ada-token\r\nAuthorization: Bearer ada-token\r\n";
    let answer = ping_with(&served, twice).await;
    assert_eq!(answer.status, 400);
    assert_eq!(
        answer.header("www-authenticate"),
        Some(r#"Bearer error="invalid_request""#)
    );
    assert_eq!(
        answer.json()["error"]["data"]["error"],
        "Duplicated Authorization header. Send exactly one Authorization header."
    );
    let answer = ping_with(&served, "Authorization: Bearer ada-token\r\n").await;
    assert_eq!(answer.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn d13_an_unknown_token_is_401_invalid_token_and_no_credentials_401_without_error() {
    let served = with_auth().await;
    // Unknown, a prefix of a known token, a known token with one character more or changed.
    for token in ["nope", "ada-toke", "ada-tokenx", "ada-tokeN", "ADA-TOKEN"] {
        let answer = ping_with(&served, &format!("Authorization: Bearer {token}\r\n")).await;
        assert_eq!(answer.status, 401, "{token}");
        assert_eq!(
            answer.header("www-authenticate"),
            Some(r#"Bearer error="invalid_token""#)
        );
        assert_eq!(answer.json()["error"]["data"]["error"], "invalid_token");
    }
    for extra in ["", "Authorization: Basic YWRhOnNlY3JldA==\r\n"] {
        let answer = ping_with(&served, extra).await;
        assert_eq!(answer.status, 401, "{extra}");
        assert_eq!(answer.header("www-authenticate"), Some("Bearer"));
        assert_eq!(answer.json()["error"]["data"]["error"], "Unauthorized");
    }
    // The scheme is case-insensitive; each static token stands for its own identity.
    for value in ["bearer ada-token", "BEARER mallory-token"] {
        let answer = ping_with(&served, &format!("Authorization: {value}\r\n")).await;
        assert_eq!(answer.status, 200, "{value}");
    }
}

// ---------------------------------------------------------------------------------------------
// D14: the sealed requestState, bound to its request and principal, encrypted

fn greet(user: &str, steps: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "greet_user", "arguments": {"user": user, "steps": steps},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}}})
}

fn retried(body: &Value, key: &str, name: &str, state: &Value) -> Value {
    let mut body = body.clone();
    body["id"] = json!(8);
    body["params"]["inputResponses"] =
        json!({key: {"action": "accept", "content": {"name": name}}});
    body["params"]["requestState"] = state.clone();
    body
}

async fn mrtr_post(http: &Http, bearer: Option<&str>, body: &Value) -> Value {
    let headers = modern_headers(body);
    let mut headers = borrowed(&headers);
    let bearer = bearer.map(|token| format!("Bearer {token}"));
    headers.extend(bearer.as_deref().map(|b| ("authorization", b)));
    let answer = http.post_raw(&headers, body.to_string()).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    answer.json()
}

/// The state of an `input_required` answer.
fn state_of(answer: &Value) -> Value {
    assert_eq!(answer["result"]["resultType"], "input_required", "{answer}");
    answer["result"]["requestState"].clone()
}

fn assert_refused(answer: &Value, why: &str) {
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(answer["error"]["data"]["reason"], "invalid_request_state");
    assert_eq!(
        answer["error"]["message"],
        format!("Invalid requestState: {why}")
    );
}

fn greeting(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"].as_str().unwrap()
}

const OTHER: &str = "it was issued for another request";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn d14_ada_s_state_replayed_into_mallory_s_request_is_refused() {
    let http = Http::serve(StreamableHttp::builder(greeter_server())).await;
    let ada = greet("Ada", 1);
    let state = state_of(&mrtr_post(&http, None, &ada).await);
    // Into the same tool with other arguments (Mallory's), and with one argument more.
    let mallory = retried(&greet("Mallory", 1), "confirm", "Mallory", &state);
    assert_refused(&mrtr_post(&http, None, &mallory).await, OTHER);
    let mut extra = retried(&ada, "confirm", "Ada", &state);
    extra["params"]["arguments"]["admin"] = json!(true);
    assert_refused(&mrtr_post(&http, None, &extra).await, OTHER);
    // Into another method.
    let mut help = retried(&ada, "confirm", "Ada", &state);
    help["params"]["name"] = json!("help");
    assert_refused(&mrtr_post(&http, None, &help).await, OTHER);
    // Mutated: one character of the sealed bytes changed, or cut short.
    let sealed = state.as_str().unwrap();
    let mut bytes = sealed.as_bytes().to_vec();
    let at = sealed.len() / 2;
    bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
    let flipped = json!(String::from_utf8(bytes).unwrap());
    let body = retried(&ada, "confirm", "Ada", &flipped);
    assert_refused(
        &mrtr_post(&http, None, &body).await,
        "its integrity check failed",
    );
    let cut = json!(&sealed[..40]);
    let body = retried(&ada, "confirm", "Ada", &cut);
    assert_refused(
        &mrtr_post(&http, None, &body).await,
        "its integrity check failed",
    );
    // Ada's own retry completes.
    let done = mrtr_post(&http, None, &retried(&ada, "confirm", "Ada", &state)).await;
    assert_eq!(greeting(&done), "Hello, Ada! (confirmed by Ada)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn d14_a_state_replayed_by_another_principal_is_refused() {
    let auth = BearerAuth::new()
        .token("ada-token", Identity::new("ada"))
        .token("mallory-token", Identity::new("mallory"));
    let http = Http::serve(StreamableHttp::builder(greeter_server()).auth(auth)).await;
    let ada = greet("Ada", 1);
    let state = state_of(&mrtr_post(&http, Some("ada-token"), &ada).await);
    let replay = retried(&ada, "confirm", "Ada", &state);
    assert_refused(
        &mrtr_post(&http, Some("mallory-token"), &replay).await,
        OTHER,
    );
    let done = mrtr_post(&http, Some("ada-token"), &replay).await;
    assert_eq!(greeting(&done), "Hello, Ada! (confirmed by Ada)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn d14_a_state_s_payload_cannot_be_read() {
    let http = Http::serve(StreamableHttp::builder(greeter_server())).await;
    let ada = greet("Ada-Lovelace-1815", 2);
    let first = state_of(&mrtr_post(&http, None, &ada).await);
    // Round 2's state carries round 1's answer.
    let round2 = retried(&ada, "first", "Countess-of-Lovelace", &first);
    let second = state_of(&mrtr_post(&http, None, &round2).await);
    for state in [&first, &second] {
        let sealed = state.as_str().unwrap();
        let encoded = sealed.strip_prefix("v2.").unwrap();
        let bytes = URL_SAFE_NO_PAD.decode(encoded).unwrap();
        let visible = String::from_utf8_lossy(&bytes);
        for plain in [
            "Countess-of-Lovelace",
            "Ada-Lovelace-1815",
            "greet_user",
            "tools/call",
            "confirm",
            "first",
        ] {
            assert!(!visible.contains(plain), "{plain} readable in the state");
        }
    }
    let done = mrtr_post(&http, None, &retried(&ada, "confirm", "Ada", &second)).await;
    assert_eq!(
        greeting(&done),
        "Hello, Ada-Lovelace-1815! (confirmed by AdaCountess-of-Lovelace)"
    );
}
