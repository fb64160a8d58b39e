//! A real Streamable HTTP server on 127.0.0.1 port 0 and a reqwest client for it: the server
//! start, the session era's handshake, POSTs with their default headers, SSE reading, and the
//! 2026-07-28 envelope and headers. Shared by the HTTP test files (a directory module, so not
//! a test target).

#![allow(dead_code, clippy::unwrap_used)]

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use wymcp::transport::http::{HttpServer, StreamableHttp, StreamableHttpService};

/// The `Accept` of a client taking both JSON and SSE answers.
pub(crate) const BOTH: &str = "application/json, text/event-stream";

/// A served endpoint and a client for it. The server runs until this is dropped or
/// [`Http::shut_down`] is called.
pub(crate) struct Http {
    pub(crate) url: String,
    pub(crate) client: reqwest::Client,
    pub(crate) service: StreamableHttpService,
    shutdown: Option<oneshot::Sender<()>>,
}

/// Lets a test's `Harness`, which holds an [`Http`] in its `http` field next to what the test
/// needs besides, be used as that `Http` (its own methods go first).
#[allow(unused_macros)] // Not every HTTP test needs more than the `Http`.
macro_rules! serves_http {
    ($harness:ty) => {
        impl std::ops::Deref for $harness {
            type Target = http_harness::Http;
            fn deref(&self) -> &http_harness::Http {
                &self.http
            }
        }
    };
}
#[allow(unused_imports)]
pub(crate) use serves_http;

/// An answer read to its end.
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) text: String,
}

impl Answer {
    pub(crate) async fn read(resp: reqwest::Response) -> Answer {
        Answer {
            status: resp.status(),
            headers: resp.headers().clone(),
            text: resp.text().await.unwrap(),
        }
    }

    /// The body, which must be JSON.
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.text)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.text))
    }

    /// The body as JSON, `null` when it is not.
    pub(crate) fn json_or_null(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or(Value::Null)
    }

    /// The reason a refusal gives (its `error.data.error` text); panics with the body when
    /// there is none.
    pub(crate) fn refusal_reason(&self) -> String {
        match &self.json()["error"]["data"]["error"] {
            Value::String(reason) => reason.clone(),
            _ => panic!("no refusal reason in {:?}", self.text),
        }
    }

    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

impl Http {
    /// Binds `builder` on 127.0.0.1 port 0 and serves it in the background.
    pub(crate) async fn serve(builder: StreamableHttp) -> Http {
        let http = HttpServer::bind("127.0.0.1:0", builder).await.unwrap();
        let addr = http.local_addr().unwrap();
        let service = http.service().clone();
        let (tx, rx) = oneshot::channel::<()>();
        tokio::spawn(http.run_until(async move {
            let _ = rx.await;
        }));
        Http {
            url: format!("http://{addr}/mcp"),
            client: reqwest::Client::new(),
            service,
            shutdown: Some(tx),
        }
    }

    /// Starts the graceful shutdown.
    pub(crate) fn shut_down(&mut self) {
        let _ = self.shutdown.take().unwrap().send(());
    }

    /// A POST of `body`: JSON, accepting JSON and SSE, unless `headers` name another
    /// `content-type` or `accept` (a header named twice in `headers` is sent twice).
    pub(crate) fn post_request(
        &self,
        headers: &[(&str, &str)],
        body: impl Into<reqwest::Body>,
    ) -> reqwest::RequestBuilder {
        let mut map = HeaderMap::new();
        for (k, v) in headers {
            map.append(
                HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        if !map.contains_key("content-type") {
            map.insert("content-type", HeaderValue::from_static("application/json"));
        }
        self.client
            .post(&self.url)
            .header("accept", BOTH)
            .headers(map)
            .body(body)
    }

    /// POSTs `body` with `headers` (see [`Http::post_request`]); the response, unread.
    pub(crate) async fn post_with(
        &self,
        headers: &[(&str, &str)],
        body: impl Into<reqwest::Body>,
    ) -> reqwest::Response {
        self.post_request(headers, body).send().await.unwrap()
    }

    /// POSTs `body` with `headers` (see [`Http::post_request`]); the answer, read.
    pub(crate) async fn post_raw(
        &self,
        headers: &[(&str, &str)],
        body: impl Into<reqwest::Body>,
    ) -> Answer {
        Answer::read(self.post_with(headers, body).await).await
    }

    /// POSTs `body` in `session` when given; the response, unread.
    pub(crate) async fn post_stream(
        &self,
        session: Option<&str>,
        body: &Value,
    ) -> reqwest::Response {
        let headers: Vec<(&str, &str)> =
            session.map(|s| ("mcp-session-id", s)).into_iter().collect();
        self.post_with(&headers, body.to_string()).await
    }

    /// POSTs `body` in `session` when given; the answer, read.
    pub(crate) async fn post(&self, session: Option<&str>, body: &Value) -> Answer {
        Answer::read(self.post_stream(session, body).await).await
    }

    /// A request of any `method` with only `headers`.
    pub(crate) async fn send(
        &self,
        method: reqwest::Method,
        headers: &[(&str, &str)],
    ) -> reqwest::Response {
        let mut req = self.client.request(method, &self.url);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        req.send().await.unwrap()
    }

    /// Opens `session`'s GET stream with `headers` besides; it must be answered 200.
    pub(crate) async fn get_stream(
        &self,
        session: &str,
        headers: &[(&str, &str)],
    ) -> reqwest::Response {
        let mut all = vec![("accept", "text/event-stream"), ("mcp-session-id", session)];
        all.extend_from_slice(headers);
        let resp = self.send(reqwest::Method::GET, &all).await;
        assert_eq!(resp.status(), StatusCode::OK);
        resp
    }

    /// DELETEs `session`; it must be answered 200.
    pub(crate) async fn delete(&self, session: &str) {
        let resp = self
            .send(reqwest::Method::DELETE, &[("mcp-session-id", session)])
            .await;
        assert_eq!(resp.status(), StatusCode::OK);
    }

    /// POSTs `init` (an `initialize`), which must be answered 200: the session id and the
    /// answer.
    pub(crate) async fn initialize_with(&self, init: &Value) -> (String, Answer) {
        let answer = self.post(None, init).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
        let session = answer.header("mcp-session-id").unwrap().to_owned();
        (session, answer)
    }

    /// Initializes at `version` as `test-client`: the session id and the answer.
    pub(crate) async fn initialize(&self, version: &str) -> (String, Answer) {
        self.initialize_with(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "test-client", "version": "0.0.1"}
            }}),
        )
        .await
    }

    /// Sends `notifications/initialized` in `session` with `headers` besides; it must be
    /// answered 202.
    pub(crate) async fn initialized(&self, session: &str, headers: &[(&str, &str)]) {
        let mut all = vec![("mcp-session-id", session)];
        all.extend_from_slice(headers);
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let answer = self.post_raw(&all, note.to_string()).await;
        assert_eq!(answer.status, StatusCode::ACCEPTED);
    }

    /// A ready session at `version` (see [`Http::initialize`]) and its `initialize` answer.
    pub(crate) async fn ready_with_answer(&self, version: &str) -> (String, Answer) {
        let (session, answer) = self.initialize(version).await;
        self.initialized(&session, &[]).await;
        (session, answer)
    }

    /// A ready session at `version` (see [`Http::initialize`]).
    pub(crate) async fn ready(&self, version: &str) -> String {
        self.ready_with_answer(version).await.0
    }

    /// A 2025-11-25 session declaring `capabilities`, next to stateless requests: later
    /// messages carry `mcp-protocol-version` (see [`Http::session_post`]).
    pub(crate) async fn open_session(&self, capabilities: Value) -> String {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": capabilities,
            "clientInfo": {"name": "t", "version": "0"}}});
        let (session, _) = self.initialize_with(&init).await;
        self.initialized(&session, &[("mcp-protocol-version", "2025-11-25")])
            .await;
        session
    }

    /// POSTs `body` in a session of [`Http::open_session`]; the response, unread.
    pub(crate) async fn session_post(&self, session: &str, body: &Value) -> reqwest::Response {
        let headers = [
            ("mcp-session-id", session),
            ("mcp-protocol-version", "2025-11-25"),
        ];
        self.post_with(&headers, body.to_string()).await
    }
}

// ---------------------------------------------------------------------------------------------
// SSE

/// Reads a streaming body until `needle` appears (bounded by a generous safety timeout).
pub(crate) async fn read_until(resp: &mut reqwest::Response, buf: &mut String, needle: &str) {
    let found = tokio::time::timeout(Duration::from_secs(20), async {
        while !buf.contains(needle) {
            match resp.chunk().await.unwrap() {
                Some(chunk) => buf.push_str(&String::from_utf8_lossy(&chunk)),
                None => return false,
            }
        }
        true
    })
    .await
    .unwrap_or(false);
    assert!(found, "stream never carried {needle:?}; got {buf:?}");
}

/// Reads a streaming body to its end.
pub(crate) async fn read_to_end(resp: &mut reqwest::Response, buf: &mut String) {
    tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(chunk) = resp.chunk().await.unwrap() {
            buf.push_str(&String::from_utf8_lossy(&chunk));
        }
    })
    .await
    .expect("the stream should end");
}

/// The JSON of every `data:` line in `buf` that parses.
pub(crate) fn data_lines(buf: &str) -> Vec<Value> {
    buf.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter(|data| !data.is_empty())
        .filter_map(|data| serde_json::from_str(data).ok())
        .collect()
}

/// One SSE event.
pub(crate) enum Event {
    /// No data: a priming event or a keep-alive comment.
    Comment,
    Message(Value),
}

/// Reads an SSE response event by event.
pub(crate) struct Sse {
    resp: reqwest::Response,
    buf: Vec<u8>,
    wait: Option<Duration>,
}

impl Sse {
    /// Waits as long as the stream takes.
    pub(crate) fn new(resp: reqwest::Response) -> Sse {
        Sse {
            resp,
            buf: Vec::new(),
            wait: None,
        }
    }

    /// Panics when a chunk takes longer than `wait`.
    pub(crate) fn bounded(resp: reqwest::Response, wait: Duration) -> Sse {
        Sse {
            wait: Some(wait),
            ..Sse::new(resp)
        }
    }

    /// The next event (`None`: the stream ended).
    pub(crate) async fn event(&mut self) -> Option<Event> {
        loop {
            if let Some(at) = self.buf.windows(2).position(|w| w == b"\n\n") {
                let block: Vec<u8> = self.buf.drain(..at + 2).collect();
                let data: String = std::str::from_utf8(&block)
                    .unwrap()
                    .lines()
                    .filter_map(|l| l.strip_prefix("data: "))
                    .collect();
                return Some(if data.is_empty() {
                    Event::Comment
                } else {
                    Event::Message(serde_json::from_str(&data).unwrap())
                });
            }
            let chunk = match self.wait {
                Some(wait) => tokio::time::timeout(wait, self.resp.chunk())
                    .await
                    .expect("an event arrives in time"),
                None => self.resp.chunk().await,
            };
            self.buf.extend_from_slice(&chunk.unwrap()?);
        }
    }

    /// The next message, skipping comments (`None`: the stream ended).
    pub(crate) async fn message(&mut self) -> Option<Value> {
        loop {
            match self.event().await? {
                Event::Comment => continue,
                Event::Message(message) => return Some(message),
            }
        }
    }

    /// Reads until a message with `method`: it, and every message read before it.
    pub(crate) async fn until(&mut self, method: &str) -> (Value, Vec<Value>) {
        let mut before = Vec::new();
        loop {
            let message = self.message().await.expect("stream ended");
            if message["method"] == method {
                return (message, before);
            }
            before.push(message);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// MCP 2026-07-28

/// The 2026-07-28 envelope, declaring no capabilities.
pub(crate) fn envelope() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"}
    })
}

/// A 2026-07-28 request: `params` gets the envelope unless it has `_meta`.
pub(crate) fn request(id: Value, method: &str, mut params: Value) -> Value {
    params
        .as_object_mut()
        .unwrap()
        .entry("_meta")
        .or_insert_with(envelope);
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// The headers a 2026-07-28 body calls for: the version, the method and, for `tools/call`,
/// `prompts/get` and `resources/read`, the name.
pub(crate) fn modern_headers(body: &Value) -> Vec<(String, String)> {
    let mut headers = vec![("MCP-Protocol-Version".to_owned(), "2026-07-28".to_owned())];
    let method = body["method"].as_str().unwrap_or_default();
    headers.push(("Mcp-Method".to_owned(), method.to_owned()));
    let name = match method {
        "tools/call" | "prompts/get" => body["params"]["name"].as_str(),
        "resources/read" => body["params"]["uri"].as_str(),
        _ => None,
    };
    if let Some(name) = name {
        headers.push(("Mcp-Name".to_owned(), name.to_owned()));
    }
    headers
}

/// Borrows owned header pairs for [`Http::post_request`].
pub(crate) fn borrowed(headers: &[(String, String)]) -> Vec<(&str, &str)> {
    headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}
