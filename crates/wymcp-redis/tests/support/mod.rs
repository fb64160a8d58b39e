//! What the scale-out tests share: a real `redis-server`, the nodes' server, nodes served on
//! 127.0.0.1, and a client that sends each request to the next node in turn.

#![allow(dead_code)] // Each test target uses its own part.

pub(crate) mod fixture;
pub(crate) mod redis_server;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::oneshot;
use wymcp::transport::http::{HttpServer, StreamableHttp};

/// How long one SSE chunk may take before the test fails.
pub(crate) const WAIT: Duration = Duration::from_secs(10);
pub(crate) const SESSION_VERSION: &str = "2025-11-25";
pub(crate) const STATELESS_VERSION: &str = "2026-07-28";

/// A node: `builder` served on 127.0.0.1 port 0 until dropped.
pub(crate) struct Node {
    pub(crate) url: String,
    _stop: oneshot::Sender<()>,
}

impl Node {
    pub(crate) async fn serve(builder: StreamableHttp) -> Node {
        let http = HttpServer::bind("127.0.0.1:0", builder)
            .await
            .expect("a port on 127.0.0.1");
        let addr = http.local_addr().expect("its address");
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(http.run_until(async move {
            let _ = stopped.await;
        }));
        Node {
            url: format!("http://{addr}/mcp"),
            _stop: stop,
        }
    }
}

/// A node in a process of its own: this test binary run again with `WYMCP_TEST_NODE_REDIS`
/// set, its test named `test` serving the fixture on that Redis until killed (on drop).
pub(crate) struct NodeProcess {
    child: std::process::Child,
    pub(crate) url: String,
}

impl NodeProcess {
    pub(crate) fn spawn(test: &str, redis_url: &str) -> NodeProcess {
        NodeProcess::spawn_serving(test, redis_url, "fixture")
    }

    /// A node process serving [`fixture::tasks_server`].
    pub(crate) fn spawn_with_tasks(test: &str, redis_url: &str) -> NodeProcess {
        NodeProcess::spawn_serving(test, redis_url, "tasks")
    }

    fn spawn_serving(test: &str, redis_url: &str, server: &str) -> NodeProcess {
        use std::io::BufRead as _;
        let mut child = std::process::Command::new(std::env::current_exe().expect("this binary"))
            .args([test, "--exact", "--nocapture", "--test-threads=1"])
            .env("WYMCP_TEST_NODE_REDIS", redis_url)
            .env("WYMCP_TEST_NODE_SERVER", server)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("the node process starts");
        let stdout = std::io::BufReader::new(child.stdout.take().expect("its stdout"));
        let url = stdout
            .lines()
            .map_while(Result::ok)
            // The harness writes `test <name> ... ` before the test's own output, on its line.
            .find_map(|line| line.split("listening on ").nth(1).map(str::to_owned))
            .expect("the node process says where it listens");
        NodeProcess { child, url }
    }
}

impl Drop for NodeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Serves the fixture (`WYMCP_TEST_NODE_SERVER=tasks`: with its tasks in Redis) on the Redis
/// `WYMCP_TEST_NODE_REDIS` names, until killed; does nothing when it is not set (the body of
/// a node process's test, see [`NodeProcess`]).
pub(crate) fn serve_as_node_process() {
    let Ok(url) = std::env::var("WYMCP_TEST_NODE_REDIS") else {
        return;
    };
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(async move {
        let redis = wymcp_redis::Redis::connect(&url).await.expect("Redis");
        let keys = redis.request_state_keys().await.expect("the shared keys");
        let server = match std::env::var("WYMCP_TEST_NODE_SERVER").as_deref() {
            Ok("tasks") => fixture::tasks_server(Some(keys), &redis),
            _ => fixture::shared_server(keys, &redis),
        };
        let builder = StreamableHttp::builder(server);
        let http = HttpServer::bind("127.0.0.1:0", builder)
            .await
            .expect("a port");
        println!(
            "listening on http://{}/mcp",
            http.local_addr().expect("its address")
        );
        http.run().await.expect("serving");
    });
}

/// A client of several nodes: every HTTP request goes to the next node in turn.
pub(crate) struct Client {
    urls: Vec<String>,
    turn: AtomicUsize,
    http: reqwest::Client,
    /// The session (session era), once `initialize` answered it.
    pub(crate) session: Option<String>,
    pub(crate) stateless: bool,
}

/// An SSE response, read event by event with the events' ids.
pub(crate) struct Sse {
    resp: reqwest::Response,
    buf: Vec<u8>,
}

impl Sse {
    /// The next event with data: its id and its message; `None` when the stream ended.
    pub(crate) async fn next(&mut self) -> Option<(Option<String>, Value)> {
        loop {
            if let Some(at) = self.buf.windows(2).position(|w| w == b"\n\n") {
                let block: Vec<u8> = self.buf.drain(..at + 2).collect();
                let text = String::from_utf8_lossy(&block).into_owned();
                let id = text
                    .lines()
                    .find_map(|l| l.strip_prefix("id: "))
                    .map(str::to_owned);
                let data: String = text
                    .lines()
                    .filter_map(|l| l.strip_prefix("data: "))
                    .collect();
                if data.is_empty() {
                    continue;
                }
                return Some((id, serde_json::from_str(&data).expect("SSE data is JSON")));
            }
            let chunk = tokio::time::timeout(WAIT, self.resp.chunk())
                .await
                .expect("an SSE event arrives in time")
                .ok()??;
            self.buf.extend_from_slice(&chunk);
        }
    }

    /// The next message (without its id); panics when the stream ended.
    pub(crate) async fn message(&mut self) -> Value {
        self.next().await.expect("the stream goes on").1
    }
}

/// A POST's answer: its status, and its messages (one JSON body, or every SSE event's).
pub(crate) enum Answer {
    Json(u16, Value),
    Stream(u16, Sse),
    Empty(u16),
}

impl Answer {
    pub(crate) fn status(&self) -> u16 {
        match self {
            Answer::Json(s, _) | Answer::Stream(s, _) | Answer::Empty(s) => *s,
        }
    }

    /// The SSE stream; panics when the answer is not one.
    pub(crate) fn stream(self) -> Sse {
        match self {
            Answer::Stream(_, sse) => sse,
            Answer::Json(status, body) => panic!("not SSE: {status} {body}"),
            Answer::Empty(status) => panic!("not SSE: {status}, empty"),
        }
    }

    /// The one message: the JSON body, or the stream's last message.
    pub(crate) async fn last(self) -> Value {
        match self {
            Answer::Json(_, body) => body,
            Answer::Stream(_, mut sse) => {
                let mut last = Value::Null;
                while let Some((_, message)) = sse.next().await {
                    last = message;
                }
                last
            }
            Answer::Empty(status) => panic!("no message: {status}"),
        }
    }
}

/// The 2026-07-28 envelope of a client that can answer elicitation and sampling and declares
/// the tasks extension.
pub(crate) fn envelope() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": STATELESS_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {},
            "extensions": {"io.modelcontextprotocol/tasks": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "nodes-test", "version": "1"}
    })
}

impl Client {
    pub(crate) fn new(urls: Vec<String>, stateless: bool) -> Client {
        Client {
            urls,
            turn: AtomicUsize::new(0),
            http: reqwest::Client::new(),
            session: None,
            stateless,
        }
    }

    /// The node the next request goes to.
    fn next_url(&self) -> &str {
        let turn = self.turn.fetch_add(1, Ordering::Relaxed);
        &self.urls[turn % self.urls.len()]
    }

    fn headers(&self, body: &Value) -> Vec<(&'static str, String)> {
        let mut headers = vec![("accept", "application/json, text/event-stream".to_owned())];
        if self.stateless {
            headers.push(("mcp-protocol-version", STATELESS_VERSION.to_owned()));
            let method = body["method"].as_str().unwrap_or_default().to_owned();
            let name = match method.as_str() {
                "tools/call" => body["params"]["name"].as_str().map(str::to_owned),
                "resources/read" => body["params"]["uri"].as_str().map(str::to_owned),
                "tasks/get" | "tasks/update" | "tasks/cancel" => {
                    body["params"]["taskId"].as_str().map(str::to_owned)
                }
                _ => None,
            };
            if !method.is_empty() {
                headers.push(("mcp-method", method));
            }
            if let Some(name) = name {
                headers.push(("mcp-name", name));
            }
        } else if let Some(session) = &self.session {
            headers.push(("mcp-session-id", session.clone()));
            headers.push(("mcp-protocol-version", SESSION_VERSION.to_owned()));
        }
        headers
    }

    /// POSTs `body` to the next node.
    pub(crate) async fn post(&mut self, body: Value) -> Answer {
        let mut body = body;
        if self.stateless
            && let Some(params) = body.get_mut("params").and_then(Value::as_object_mut)
        {
            let meta = params.entry("_meta").or_insert_with(|| json!({}));
            if let (Some(meta), Value::Object(envelope)) = (meta.as_object_mut(), envelope()) {
                for (key, value) in envelope {
                    meta.entry(key).or_insert(value);
                }
            }
        }
        let url = self.next_url().to_owned();
        let mut req = self
            .http
            .post(url)
            .header("content-type", "application/json");
        for (name, value) in self.headers(&body) {
            req = req.header(name, value);
        }
        let resp = req
            .body(body.to_string())
            .send()
            .await
            .expect("the node answers");
        let status = resp.status().as_u16();
        if let Some(session) = resp.headers().get("mcp-session-id") {
            self.session = Some(session.to_str().expect("ASCII").to_owned());
        }
        let sse = resp
            .headers()
            .get("content-type")
            .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
        if sse {
            return Answer::Stream(
                status,
                Sse {
                    resp,
                    buf: Vec::new(),
                },
            );
        }
        let text = resp.text().await.unwrap_or_default();
        match serde_json::from_str(&text) {
            Ok(json) => Answer::Json(status, json),
            Err(_) => Answer::Empty(status),
        }
    }

    /// A request of `method` with `params`.
    pub(crate) async fn request(&mut self, id: i64, method: &str, params: Value) -> Answer {
        self.post(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await
    }

    /// A notification: the status it was answered with.
    pub(crate) async fn notify(&mut self, method: &str, params: Value) -> u16 {
        self.post(json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await
            .status()
    }

    /// GETs the session's stream from the next node, resuming after `last_event_id`.
    pub(crate) async fn get(&mut self, last_event_id: Option<&str>) -> (u16, Sse) {
        let url = self.next_url().to_owned();
        let mut req = self
            .http
            .get(url)
            .header("accept", "text/event-stream")
            .header("mcp-protocol-version", SESSION_VERSION);
        if let Some(session) = &self.session {
            req = req.header("mcp-session-id", session);
        }
        if let Some(id) = last_event_id {
            req = req.header("last-event-id", id);
        }
        let resp = req.send().await.expect("the node answers");
        (
            resp.status().as_u16(),
            Sse {
                resp,
                buf: Vec::new(),
            },
        )
    }

    /// DELETEs the session at the next node: the status.
    pub(crate) async fn delete(&mut self) -> u16 {
        let url = self.next_url().to_owned();
        let session = self.session.clone().expect("a session");
        let resp = self
            .http
            .delete(url)
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", SESSION_VERSION)
            .send()
            .await
            .expect("the node answers");
        resp.status().as_u16()
    }
}

/// `value` with what differs between runs replaced: server request ids, `requestState`.
pub(crate) fn normalized(mut value: Value) -> Value {
    fn walk(value: &mut Value) {
        match value {
            Value::String(s) if s.starts_with("srv-") => *s = "<server request>".into(),
            Value::Object(map) => {
                for (key, v) in map.iter_mut() {
                    if key == "requestState" {
                        *v = json!("<state>");
                    } else {
                        walk(v);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut value);
    value
}

/// A fresh session record of the latest session-era revision, for the store tests.
pub(crate) fn record(id: &str) -> wymcp::backend::SessionRecord {
    wymcp::backend::SessionRecord {
        id: id.to_owned(),
        version: wymcp::ProtocolVersion::LATEST_SESSION_ERA,
        client_capabilities: std::sync::Arc::new(json!({})),
        client_info: std::sync::Arc::new(json!({"name": "store-test", "version": "1"})),
        initialized: false,
        log_level: None,
        assigns: serde_json::Map::new(),
        subject: None,
    }
}
