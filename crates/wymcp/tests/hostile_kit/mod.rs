//! What the hostile-transport tests share: an [`HttpServer`] on 127.0.0.1 (or every address)
//! port 0 under chosen [`ConnectionLimits`], a raw TCP client that writes exactly the bytes a
//! hostile client would (half a head, two `Host` headers, a stalled body) and reads what comes
//! back, and the normal call every test makes after its hostile input. A directory module, so
//! not a test target.

#![allow(dead_code, clippy::unwrap_used)]

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use wymcp::transport::http::{ConnectionLimits, HttpServer, StreamableHttp};
use wymcp::{CallResult, Content, Context, PlainTool, Server};

/// The most any test waits for the server to do what it must (close, answer). A bound on a
/// hang, not a speed target: the limits under test are a fraction of it.
pub(crate) const PATIENCE: Duration = Duration::from_secs(10);

/// A served endpoint: its address; the server stops when this is dropped.
pub(crate) struct Served {
    pub(crate) addr: SocketAddr,
    _shutdown: oneshot::Sender<()>,
}

impl Served {
    /// Binds `bind` (such as `"127.0.0.1:0"` or `"0.0.0.0:0"`) under `limits` and serves.
    pub(crate) async fn start(
        bind: &str,
        builder: StreamableHttp,
        limits: ConnectionLimits,
    ) -> Self {
        let http = HttpServer::bind(bind, builder)
            .await
            .unwrap()
            .connection_limits(limits);
        let port = http.local_addr().unwrap().port();
        let (tx, rx) = oneshot::channel::<()>();
        tokio::spawn(http.run_until(async move {
            let _ = rx.await;
        }));
        Served {
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            _shutdown: tx,
        }
    }

    /// The endpoint's URL on 127.0.0.1.
    pub(crate) fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// A new raw connection.
    pub(crate) async fn connect(&self) -> Raw {
        Raw(TcpStream::connect(self.addr).await.unwrap())
    }

    /// Posts `body` with `extra` header lines (see [`post`]) on a fresh connection: the answer.
    pub(crate) async fn ask(&self, extra: &str, body: &str) -> RawAnswer {
        let mut conn = self.connect().await;
        conn.send(&post(extra, body)).await;
        conn.answer().await
    }

    /// The normal call made after every hostile input: a `ping`, answered 200 `{}`.
    pub(crate) async fn assert_serves(&self) {
        let answer = reqwest::Client::new()
            .post(self.url())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(PING)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), reqwest::StatusCode::OK);
        let body: Value = answer.json().await.unwrap();
        assert_eq!(body, json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    }
}

/// A JSON-RPC `ping` (answered without a session).
pub(crate) const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

/// A whole `POST /mcp` of `body` with `extra` header lines (each ending in `\r\n`), `Host:
/// 127.0.0.1` unless `extra` names the host itself.
pub(crate) fn post(extra: &str, body: &str) -> String {
    let host = match extra.to_ascii_lowercase().contains("host:") {
        true => String::new(),
        false => "Host: 127.0.0.1\r\n".to_owned(),
    };
    format!(
        "POST /mcp HTTP/1.1\r\n{host}{extra}Content-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// An answer read off a raw connection.
#[derive(Debug)]
pub(crate) struct RawAnswer {
    pub(crate) status: u16,
    /// Header lines, names lowercased.
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: String,
}

impl RawAnswer {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }

    /// Asserts a JSON-RPC refusal: `status`, code `-32600`, and `reason` as `data.error`.
    pub(crate) fn assert_refusal(&self, status: u16, reason: impl AsRef<str>) {
        assert_eq!(self.status, status, "{}", self.body);
        let body = self.json();
        assert_eq!(body["error"]["code"], -32600, "{body}");
        assert_eq!(body["error"]["data"]["error"], reason.as_ref(), "{body}");
    }
}

/// A raw TCP connection to the server.
pub(crate) struct Raw(pub(crate) TcpStream);

impl Raw {
    pub(crate) async fn send(&mut self, bytes: &str) {
        self.0.write_all(bytes.as_bytes()).await.unwrap();
    }

    /// Reads one answer (with a `Content-Length` body), within [`PATIENCE`].
    pub(crate) async fn answer(&mut self) -> RawAnswer {
        tokio::time::timeout(PATIENCE, self.read_answer())
            .await
            .expect("an answer within the patience bound")
    }

    /// Reads one answer, waiting as long as it takes.
    pub(crate) async fn read_answer(&mut self) -> RawAnswer {
        let mut buf = Vec::new();
        let head_end = loop {
            if let Some(end) = find(&buf, b"\r\n\r\n") {
                break end;
            }
            let mut chunk = [0u8; 4096];
            let n = self.0.read(&mut chunk).await.unwrap();
            assert!(
                n > 0,
                "closed before an answer: {:?}",
                String::from_utf8_lossy(&buf)
            );
            buf.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8(buf[..head_end].to_vec()).unwrap();
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .unwrap()
            .split(' ')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        let length: usize = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .map_or(0, |(_, v)| v.parse().unwrap());
        let mut body = buf[head_end + 4..].to_vec();
        while body.len() < length {
            let mut chunk = [0u8; 4096];
            let n = self.0.read(&mut chunk).await.unwrap();
            assert!(n > 0, "closed mid-body");
            body.extend_from_slice(&chunk[..n]);
        }
        RawAnswer {
            status,
            headers,
            body: String::from_utf8(body).unwrap(),
        }
    }

    /// Waits (within [`PATIENCE`]) for the server to close the connection; what it sent
    /// before closing (nothing, for a connection closed without an answer).
    pub(crate) async fn closed(&mut self) -> Vec<u8> {
        let mut sent = Vec::new();
        let read = tokio::time::timeout(PATIENCE, async {
            loop {
                let mut chunk = [0u8; 4096];
                match self.0.read(&mut chunk).await {
                    Ok(0) => return,
                    Ok(n) => sent.extend_from_slice(&chunk[..n]),
                    // A reset is a close too.
                    Err(_) => return,
                }
            }
        })
        .await;
        assert!(read.is_ok(), "the server kept the connection open");
        sent
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// A tool that elicits a confirmation (key `confirm`) and greets the user its arguments name;
/// with `"steps": 2` it asks a name first (key `first`), so its second state carries an answer.
pub(crate) struct Greeter;

impl PlainTool for Greeter {
    fn name(&self) -> &str {
        "greet_user"
    }
    fn description(&self) -> &str {
        "Greets the user its arguments name, after confirming"
    }
    fn input_schema(&self) -> serde_json::Map<String, Value> {
        json!({"type": "object", "properties": {"user": {"type": "string"},
                                                 "steps": {"type": "integer"}}})
        .as_object()
        .cloned()
        .unwrap()
    }
    async fn run(&self, arguments: serde_json::Map<String, Value>, ctx: Context) -> CallResult {
        let form = |message: &str| {
            wymcp::session::Elicitation::form(
                message,
                json!({"type": "object", "properties": {"name": {"type": "string"}}}),
            )
        };
        let failed = |e: wymcp::session::ClientRequestError| wymcp::CallError::tool(e.to_string());
        let user = arguments["user"].as_str().unwrap_or("?").to_owned();
        let mut said = String::new();
        if arguments.get("steps").and_then(Value::as_u64) == Some(2) {
            let first = ctx
                .elicit(form("Your name?").key("first"))
                .await
                .map_err(failed)?;
            said = first["content"]["name"].as_str().unwrap_or("?").to_owned();
        }
        let confirm = ctx
            .elicit(form("Confirm?").key("confirm"))
            .await
            .map_err(failed)?;
        let by = confirm["content"]["name"].as_str().unwrap_or("?");
        Ok(wymcp::CallOutput::new(vec![Content::text(format!(
            "Hello, {user}! (confirmed by {by}{said})"
        ))]))
    }
}

/// A server with the [`Greeter`] and a second tool of the same shape under another name.
pub(crate) fn greeter_server() -> Server {
    Server::builder()
        .name("hostile")
        .plain_tool(Greeter)
        .build()
        .unwrap()
}
