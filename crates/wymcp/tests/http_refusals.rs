//! Every refusal of the Streamable HTTP endpoint, provoked over real HTTP on 127.0.0.1 and
//! asserted whole: status, body (exact JSON, or none) and the header it is sent with
//! (`WWW-Authenticate`, `Allow`), or that it is sent with neither. One table per server; each
//! row names the refusal type (`transport/http/rejection.rs`) it provokes. POST refusals are
//! JSON-RPC envelopes, GET and DELETE refusals `{"error": "<text>"}` (behaviour-spec.md §6.4).
//!
//! Requests are written on a raw TCP connection, so that a row can send what a client library
//! would not: no `Host`, a header twice, a body that stops arriving.

#![allow(clippy::unwrap_used, missing_docs)]

mod hostile_kit;
mod http_harness;

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use hostile_kit::{Greeter, Raw, Served};
use http_harness::{modern_headers, request};
use reqwest::header::HeaderMap;
use serde_json::{Value, json};
use wymcp::backend::{
    Backends, CreateError, EventLog, InMemorySessionStore, LoggedEvent, SessionRecord,
    SessionStore, StoreError,
};
use wymcp::transport::http::{
    AuthRefusal, Authenticate, BearerAuth, ConnectionLimits, StreamableHttp,
};
use wymcp::{Identity, Server};

/// The body read timeout of the servers: a body that stops arriving is refused after it.
const BODY_TIMEOUT: Duration = Duration::from_millis(300);
/// The body limit of the servers.
const BODY_LIMIT: usize = 4096;
/// The session id [`FlakyStore`] fails to load.
const BROKEN: &str = "broken-session";

// ---------------------------------------------------------------------------------------------
// Requests and rows

/// A request as written on the wire.
#[derive(Clone)]
struct Req {
    method: &'static str,
    headers: Vec<(String, String)>,
    body: String,
    /// A `Content-Length` other than the body's (a body that stops arriving).
    declared: Option<usize>,
}

impl Req {
    fn new(method: &'static str, headers: &[(&str, &str)]) -> Req {
        let mut all = vec![("Host".to_owned(), "127.0.0.1".to_owned())];
        all.extend(
            headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        Req {
            method,
            headers: all,
            body: String::new(),
            declared: None,
        }
    }

    /// A POST of `body` as JSON, accepting JSON and SSE.
    fn post(body: impl ToString) -> Req {
        let mut req = Req::new(
            "POST",
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
            ],
        );
        req.body = body.to_string();
        req
    }

    /// A 2026-07-28 POST of `body`, with the headers its method calls for.
    fn modern(body: &Value) -> Req {
        modern_headers(body)
            .into_iter()
            .fold(Req::post(body), |req, (k, v)| req.header(&k, &v))
    }

    /// A GET accepting SSE.
    fn get() -> Req {
        Req::new("GET", &[("Accept", "text/event-stream")])
    }

    fn delete() -> Req {
        Req::new("DELETE", &[])
    }

    /// Adds a header (a header named again is sent twice).
    fn header(mut self, name: &str, value: &str) -> Req {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Replaces every value of a header.
    fn set(self, name: &str, value: &str) -> Req {
        self.without(name).header(name, value)
    }

    fn without(mut self, name: &str) -> Req {
        self.headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        self
    }

    fn session(self, id: &str) -> Req {
        self.header("Mcp-Session-Id", id)
    }

    fn wire(&self) -> String {
        let mut text = format!("{} /mcp HTTP/1.1\r\n", self.method);
        for (name, value) in &self.headers {
            text.push_str(&format!("{name}: {value}\r\n"));
        }
        let length = self.declared.unwrap_or(self.body.len());
        text.push_str(&format!("Content-Length: {length}\r\n\r\n{}", self.body));
        text
    }
}

/// What a refusal's body must be.
enum Body {
    Json(Value),
    Empty,
}

/// One refusal provoked and asserted.
struct Row {
    /// The refusal type, and where it is provoked.
    refusal: &'static str,
    request: Req,
    status: u16,
    body: Body,
    /// The header it is sent with, if any (`www-authenticate` or `allow`).
    header: Option<(&'static str, String)>,
}

fn row(refusal: &'static str, request: Req, status: u16, body: Body) -> Row {
    Row {
        refusal,
        request,
        status,
        body,
        header: None,
    }
}

impl Row {
    fn with(mut self, name: &'static str, value: &str) -> Row {
        self.header = Some((name, value.to_owned()));
        self
    }
}

/// The JSON-RPC dialect's `-32600` envelope.
fn invalid(id: Value, text: &str) -> Body {
    Body::Json(json!({"jsonrpc": "2.0", "id": id, "error": {
        "code": -32600, "message": "Invalid Request", "data": {"error": text}}}))
}

/// The plain dialect.
fn plain(text: &str) -> Body {
    Body::Json(json!({ "error": text }))
}

async fn check(served: &Served, rows: Vec<Row>) {
    for row in rows {
        let mut conn = served.connect().await;
        conn.send(&row.request.wire()).await;
        let answer = conn.answer().await;
        let name = row.refusal;
        assert_eq!(answer.status, row.status, "{name}: {}", answer.body);
        match &row.body {
            Body::Json(expected) => {
                assert_eq!(&answer.json(), expected, "{name}");
                assert_eq!(
                    answer.header("content-type"),
                    Some("application/json"),
                    "{name}"
                );
            }
            Body::Empty => assert_eq!(answer.body, "", "{name}"),
        }
        for header in ["www-authenticate", "allow"] {
            let expected = row
                .header
                .as_ref()
                .filter(|(n, _)| *n == header)
                .map(|(_, v)| v.as_str());
            assert_eq!(answer.header(header), expected, "{name}: {header}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Servers

/// A session store that fails to load [`BROKEN`], and is the in-memory store otherwise.
#[derive(Default)]
struct FlakyStore {
    inner: InMemorySessionStore,
}

impl SessionStore for FlakyStore {
    fn create(
        &self,
        record: SessionRecord,
        max: usize,
        ttl: Duration,
    ) -> BoxFuture<'_, Result<(), CreateError>> {
        self.inner.create(record, max, ttl)
    }
    fn load<'a>(
        &'a self,
        id: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Option<Arc<SessionRecord>>, StoreError>> {
        if id == BROKEN {
            return Box::pin(async { Err(StoreError::unavailable("the store is down")) });
        }
        self.inner.load(id, ttl)
    }
    fn save(&self, record: SessionRecord) -> BoxFuture<'_, Result<bool, StoreError>> {
        self.inner.save(record)
    }
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        self.inner.remove(id)
    }
    fn reap(&self, ttl: Duration) -> BoxFuture<'_, Result<Vec<String>, StoreError>> {
        self.inner.reap(ttl)
    }
}

/// An event log that records nothing: every append fails.
struct DeadLog;

impl EventLog for DeadLog {
    fn append<'a>(
        &'a self,
        _session: &'a str,
        _stream: &'a str,
        _data: String,
    ) -> BoxFuture<'a, Result<String, StoreError>> {
        Box::pin(async { Err(StoreError::unavailable("the log is down")) })
    }
    fn replay_after<'a>(
        &'a self,
        _session: &'a str,
        _last_event_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Vec<LoggedEvent>>, StoreError>> {
        Box::pin(async { Ok(None) })
    }
    fn remove_session<'a>(&'a self, _session: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async { Ok(()) })
    }
}

/// Bearer tokens, with two that the hook answers otherwise: `later` (the credentials cannot
/// be checked now) and `boom` (the hook panics).
struct Hook(BearerAuth);

impl Authenticate for Hook {
    fn authenticate<'a>(
        &'a self,
        headers: &'a HeaderMap,
    ) -> BoxFuture<'a, Result<Identity, AuthRefusal>> {
        match headers.get("authorization").and_then(|v| v.to_str().ok()) {
            Some("Bearer later") => Box::pin(async {
                Err(AuthRefusal::unavailable(
                    "the identity provider did not answer",
                ))
            }),
            Some("Bearer boom") => panic!("hook bug"),
            _ => self.0.authenticate(headers),
        }
    }
}

/// A server whose tools' list changes, so that `subscriptions/listen` has something to
/// deliver.
fn server(backends: Backends) -> Server {
    Server::builder()
        .name("refusals")
        .list_changed(true)
        .plain_tool(Greeter)
        .backends(backends)
        .build()
        .unwrap()
}

async fn serve(configure: impl FnOnce(StreamableHttp) -> StreamableHttp) -> Served {
    serve_on(Backends::new(), configure).await
}

async fn serve_on(
    backends: Backends,
    configure: impl FnOnce(StreamableHttp) -> StreamableHttp,
) -> Served {
    let builder = StreamableHttp::builder(server(backends))
        .body_limit(BODY_LIMIT)
        .max_listen_streams(1);
    let limits = ConnectionLimits::new().body_read_timeout(BODY_TIMEOUT);
    Served::start("127.0.0.1:0", configure(builder), limits).await
}

/// A ready 2025-11-25 session on `served`.
async fn ready(served: &Served) -> String {
    let client = reqwest::Client::new();
    let post = |session: Option<&str>, body: Value| {
        let mut req = client
            .post(served.url())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(session) = session {
            req = req.header("mcp-session-id", session);
        }
        req.body(body.to_string()).send()
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "refusals", "version": "0"}}});
    let answer = post(None, init).await.unwrap();
    assert_eq!(answer.status(), reqwest::StatusCode::OK);
    let session = answer.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let answer = post(Some(&session), note).await.unwrap();
    assert_eq!(answer.status(), reqwest::StatusCode::ACCEPTED);
    session
}

fn list(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"})
}

fn listen(id: i64) -> Value {
    let filter = json!({"notifications": {"toolsListChanged": true}});
    request(json!(id), "subscriptions/listen", filter)
}

// ---------------------------------------------------------------------------------------------
// The tables

const SUPPORTED: &str = "Supported: 2025-11-25, 2025-06-18, 2025-03-26.";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wire_check_refusals_in_both_dialects() {
    let served = serve(|b| b).await;
    let dup_session = "Duplicated Mcp-Session-Id header. Send exactly one Mcp-Session-Id header.";
    let dup_version =
        "Duplicated MCP-Protocol-Version header. Send exactly one MCP-Protocol-Version header.";
    let dup_origin = "Duplicated Origin header. Send exactly one Origin header.";
    let dup_host = "Duplicated Host header. Send exactly one Host header.";
    let origin = "Origin not allowed: http://evil.example";
    let invalid_host = "Invalid Host header: expected host[:port], got [::1].evil.com";
    let host = "Host not allowed: evil.com";
    let mut rows = Vec::new();
    for (route, rpc) in [
        (Req::post(list(1)), true),
        (Req::get(), false),
        (Req::delete(), false),
    ] {
        let body = |text: &str| match rpc {
            // The wire checks run before the body is read: the id is `null`.
            true => invalid(Value::Null, text),
            false => plain(text),
        };
        let req = || route.clone();
        rows.extend([
            row(
                "DuplicatedHeader (Mcp-Session-Id)",
                req().session("a").session("b"),
                400,
                body(dup_session),
            ),
            row(
                "DuplicatedHeader (MCP-Protocol-Version)",
                req()
                    .header("MCP-Protocol-Version", "2025-11-25")
                    .header("MCP-Protocol-Version", "2025-11-25"),
                400,
                body(dup_version),
            ),
            row(
                "DuplicatedHeader (Origin)",
                req()
                    .header("Origin", "http://localhost")
                    .header("Origin", "http://localhost"),
                400,
                body(dup_origin),
            ),
            row(
                "DuplicatedHeader (Host)",
                req().header("Host", "127.0.0.1"),
                400,
                body(dup_host),
            ),
            row(
                "OriginNotAllowed",
                req().header("Origin", "http://evil.example"),
                403,
                body(origin),
            ),
            row(
                "MissingHost",
                req().without("Host"),
                403,
                body("Missing Host header"),
            ),
            row(
                "InvalidHost",
                req().set("Host", "[::1].evil.com"),
                400,
                body(invalid_host),
            ),
            row(
                "HostNotAllowed",
                req().set("Host", "Evil.COM:80"),
                403,
                body(host),
            ),
        ]);
    }
    check(&served, rows).await;
    served.assert_serves().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn post_refusals_are_json_rpc_envelopes() {
    let served = serve_on(Backends::new().sessions(FlakyStore::default()), |b| b).await;
    let session = ready(&served).await;
    let too_large = format!(
        "Payload Too Large: the body limit is {BODY_LIMIT} bytes (StreamableHttp::body_limit)"
    );
    let timed_out = format!(
        "Request Timeout: no piece of the request body arrived within {BODY_TIMEOUT:?} \
         (ConnectionLimits::body_read_timeout)"
    );
    let mut stalled = Req::post(r#"{"jsonrpc""#);
    stalled.declared = Some(40);
    let gone = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let frobnicate = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/frobnicate"});
    let rows = vec![
        row(
            "JsonNotAccepted",
            Req::post(list(1)).set("Accept", "text/html"),
            406,
            invalid(
                Value::Null,
                "Not Acceptable: the client must accept application/json (and text/event-stream)",
            ),
        ),
        row(
            "UnsupportedMediaType",
            Req::post(list(1)).set("Content-Type", "text/plain"),
            415,
            invalid(
                Value::Null,
                "Unsupported Media Type: the body must be application/json",
            ),
        ),
        row(
            "PayloadTooLarge (declared)",
            Req::post(" ".repeat(BODY_LIMIT + 1)),
            413,
            invalid(Value::Null, &too_large),
        ),
        row(
            "BodyTimeout",
            stalled,
            408,
            invalid(Value::Null, &timed_out),
        ),
        row(
            "MalformedJson",
            Req::post("{not json"),
            400,
            Body::Json(json!({"jsonrpc": "2.0", "id": null, "error": {
                "code": -32700, "message": "Parse error", "data": {"reason": "Malformed JSON"}}})),
        ),
        row(
            "UnsupportedVersion",
            Req::post(list(3))
                .session(&session)
                .header("MCP-Protocol-Version", "1999-01-01"),
            400,
            invalid(
                json!(3),
                &format!("Unsupported MCP-Protocol-Version header: 1999-01-01. {SUPPORTED}"),
            ),
        ),
        row(
            "MissingSessionId",
            Req::post(list(1)),
            400,
            invalid(json!(1), "Missing Mcp-Session-Id header. Initialize first."),
        ),
        row(
            "SessionNotFound (a request)",
            Req::post(list(7)).session("bogus"),
            404,
            Body::Json(json!({"jsonrpc": "2.0", "id": 7, "error": {
                "code": -32001, "message": "Session terminated"}})),
        ),
        row(
            "SessionNotFound (a notification)",
            Req::post(gone).session("bogus"),
            404,
            Body::Empty,
        ),
        row(
            "Core (the session store failed)",
            Req::post(list(2)).session(BROKEN),
            503,
            Body::Json(json!({"jsonrpc": "2.0", "id": 2, "error": {
                "code": -32603, "message": "Internal error",
                "data": {"reason": "session store unavailable"}}})),
        ),
        row(
            "Core (an unknown method)",
            Req::post(frobnicate).session(&session),
            404,
            Body::Json(json!({"jsonrpc": "2.0", "id": 7, "error": {
                "code": -32601, "message": "Method not found"}})),
        ),
        row(
            "StreamNotAccepted (subscriptions/listen)",
            Req::modern(&listen(1)).set("Accept", "application/json"),
            406,
            invalid(
                json!(1),
                "Not Acceptable: subscriptions/listen is answered as a text/event-stream; \
                 the client must accept it",
            ),
        ),
        row("MethodNotAllowed", Req::new("PUT", &[]), 405, Body::Empty)
            .with("allow", "GET, POST, DELETE"),
    ];
    check(&served, rows).await;
    // A body over the limit that does not say so is refused once the limit is passed.
    let mut streamed = served.connect().await;
    let body = " ".repeat(BODY_LIMIT + 1);
    streamed
        .send(&format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             Accept: application/json\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
            body.len()
        ))
        .await;
    let answer = streamed.answer().await;
    assert_eq!(answer.status, 413, "{}", answer.body);
    assert_eq!(
        answer.json(),
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600,
               "message": "Invalid Request", "data": {"error": too_large}}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_listen_stream_limit_is_refused_under_the_request_id() {
    let served = serve(|b| b).await;
    // The one stream allowed, held open.
    let mut held: Raw = served.connect().await;
    held.send(&Req::modern(&listen(1)).wire()).await;
    assert_eq!(held.answer().await.status, 200);
    let rows = vec![row(
        "TooManyListenStreams",
        Req::modern(&listen(2)),
        503,
        invalid(
            json!(2),
            "Too many listen streams: the limit of 1 open subscriptions/listen streams is \
             reached. Close one or try again later.",
        ),
    )];
    check(&served, rows).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_and_delete_refusals_speak_plain_json() {
    let served = serve_on(Backends::new().sessions(FlakyStore::default()), |b| {
        b.strict_version_header(true)
    })
    .await;
    let session = ready(&served).await;
    let stateless = "Method Not Allowed: MCP 2026-07-28 is served by POST only";
    let unsupported = format!("Unsupported MCP-Protocol-Version header: 1999-01-01. {SUPPORTED}");
    let mut rows = vec![
        row(
            "StreamNotAccepted (GET)",
            Req::get()
                .set("Accept", "application/json")
                .session(&session),
            406,
            plain(
                "Not Acceptable: GET is answered as a text/event-stream; the client must accept it",
            ),
        ),
        row(
            "UnsupportedVersion (GET)",
            Req::get()
                .session(&session)
                .header("MCP-Protocol-Version", "1999-01-01"),
            400,
            plain(&unsupported),
        ),
        row(
            "Core (GET: another version than the session's)",
            Req::get()
                .session(&session)
                .header("MCP-Protocol-Version", "2025-06-18"),
            400,
            plain(
                "Incorrect MCP-Protocol-Version header. Expected the version negotiated \
                 during initialize.",
            ),
        ),
    ];
    for route in [Req::get as fn() -> Req, Req::delete] {
        rows.extend([
            row(
                "MissingSessionId (GET, DELETE)",
                route(),
                400,
                plain("Missing mcp-session-id header"),
            ),
            row(
                "SessionNotFound (GET, DELETE)",
                route().session("bogus"),
                404,
                plain("Session not found"),
            ),
            row(
                "SessionStoreUnavailable (GET, DELETE)",
                route().session(BROKEN),
                503,
                plain("Session store unavailable: try again shortly"),
            ),
            row(
                "StatelessMethodNotAllowed (GET, DELETE)",
                route().header("MCP-Protocol-Version", "2026-07-28"),
                405,
                plain(stateless),
            )
            .with("allow", "POST"),
        ]);
    }
    check(&served, rows).await;
    served.assert_serves().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_whose_event_log_fails_is_refused() {
    let served = serve_on(Backends::new().events(DeadLog), |b| b).await;
    let session = ready(&served).await;
    let rows = vec![row(
        "EventLogUnavailable",
        Req::get().session(&session),
        503,
        plain("Event log unavailable: try again shortly"),
    )];
    check(&served, rows).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_refusals_carry_their_challenge() {
    let bearer = BearerAuth::new().token("good", Identity::new("alice"));
    let served = serve(|b| {
        b.auth(Hook(bearer))
            .www_authenticate([("resource_metadata", "https://example.com/prm")])
    })
    .await;
    let challenge = r#"Bearer resource_metadata="https://example.com/prm""#;
    let malformed = "Malformed Authorization header: expected `Bearer <token>` (RFC 6750 §2.1)";
    let unavailable = "temporarily_unavailable: the identity provider did not answer";
    let mut rows = Vec::new();
    for (route, rpc) in [
        (Req::post(list(5)), true),
        (Req::get().session("s"), false),
        (Req::delete().session("s"), false),
    ] {
        let body = |text: &str| match rpc {
            true => invalid(Value::Null, text),
            false => plain(text),
        };
        let req = |authorization: Option<&str>| {
            let req = route.clone();
            match authorization {
                Some(value) => req.header("Authorization", value),
                None => req,
            }
        };
        rows.extend([
            row("AuthRefused (none)", req(None), 401, body("Unauthorized"))
                .with("www-authenticate", challenge),
            row(
                "AuthRefused (refused)",
                req(Some("Bearer wrong")),
                401,
                body("invalid_token"),
            )
            .with(
                "www-authenticate",
                &format!(r#"{challenge}, error="invalid_token""#),
            ),
            row(
                "AuthRefused (malformed)",
                req(Some("Bearer a b")),
                400,
                body(malformed),
            )
            .with(
                "www-authenticate",
                &format!(r#"{challenge}, error="invalid_request""#),
            ),
            row(
                "AuthRefused (panicked)",
                req(Some("Bearer boom")),
                401,
                body("Authentication error"),
            )
            .with("www-authenticate", challenge),
            row(
                "AuthRefused (unavailable)",
                req(Some("Bearer later")),
                503,
                body(unavailable),
            ),
        ]);
    }
    check(&served, rows).await;
}
