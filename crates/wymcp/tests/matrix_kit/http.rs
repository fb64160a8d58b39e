//! The matrix's HTTP wire: a real Streamable HTTP server on 127.0.0.1 port 0 (through
//! `http_harness`), a session-era session or 2026-07-28's per-request headers, and the
//! messages of one POST read back one by one, whether it was answered as JSON or SSE.

use std::time::Duration;

use serde_json::{Value, json};
use wymcp::Server;
use wymcp::transport::http::StreamableHttp;

use super::era::{SESSION_VERSION, STATELESS_VERSION};
use crate::http_harness::{Answer, Http, Sse, borrowed, modern_headers};

/// How long one SSE chunk may take before the test fails.
const CHUNK_WAIT: Duration = Duration::from_secs(10);

/// What one POST is answering.
enum Source {
    /// Nothing (yet), or a JSON body already handed out.
    Idle,
    /// A JSON body not yet read by [`HttpWire::next`].
    Json(Value),
    /// An SSE stream.
    Sse(Sse),
}

/// How a POST was answered.
pub(crate) struct Posted {
    pub(crate) status: u16,
    /// The `Mcp-Session-Id` header, if any.
    pub(crate) session: Option<String>,
    /// Whether the body is an SSE stream (else JSON, or empty).
    pub(crate) sse: bool,
}

/// A served endpoint, the session in use (session era) and the POST being read.
pub(crate) struct HttpWire {
    http: Http,
    stateless: bool,
    session: Option<String>,
    source: Source,
}

impl HttpWire {
    /// Serves `server`; every POST is of the stateless era when `stateless`.
    pub(crate) async fn serve(server: Server, stateless: bool) -> HttpWire {
        HttpWire {
            http: Http::serve(StreamableHttp::builder(server)).await,
            stateless,
            session: None,
            source: Source::Idle,
        }
    }

    /// The session later POSTs name (after `initialize` answered it in `Mcp-Session-Id`).
    pub(crate) fn join(&mut self, session: String) {
        self.session = Some(session);
    }

    /// The 2026-07-28 headers of `body`, or the session's (`Mcp-Session-Id`,
    /// `MCP-Protocol-Version`).
    fn headers(&self, body: &Value) -> Vec<(String, String)> {
        if self.stateless {
            return modern_headers(body);
        }
        match &self.session {
            Some(session) => vec![
                ("mcp-session-id".to_owned(), session.clone()),
                (
                    "mcp-protocol-version".to_owned(),
                    SESSION_VERSION.to_owned(),
                ),
            ],
            // `initialize`, before `join`.
            None => Vec::new(),
        }
    }

    /// POSTs `body`; its answer is read by [`HttpWire::next`].
    pub(crate) async fn send(&mut self, body: &Value) -> Posted {
        let headers = self.headers(body);
        self.send_with(&headers, body.to_string()).await
    }

    /// POSTs `text` as it is (not necessarily JSON-RPC), with the session's headers or
    /// 2026-07-28's version header alone; its answer is read by [`HttpWire::next`].
    pub(crate) async fn send_text(&mut self, text: &str) -> Posted {
        let headers = match self.stateless {
            true => vec![(
                "MCP-Protocol-Version".to_owned(),
                STATELESS_VERSION.to_owned(),
            )],
            false => self.headers(&Value::Null),
        };
        self.send_with(&headers, text.to_owned()).await
    }

    async fn send_with(&mut self, headers: &[(String, String)], body: String) -> Posted {
        let resp = self.http.post_with(&borrowed(headers), body).await;
        let status = resp.status().as_u16();
        let session = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let sse = resp
            .headers()
            .get("content-type")
            .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
        self.source = if sse {
            Source::Sse(Sse::bounded(resp, CHUNK_WAIT))
        } else {
            let text = resp.text().await.unwrap_or_default();
            match serde_json::from_str(&text) {
                Ok(json) => Source::Json(json),
                Err(_) if text.is_empty() => Source::Idle,
                Err(e) => panic!("POST answered neither JSON nor SSE ({e}): {text:?}"),
            }
        };
        Posted {
            status,
            session,
            sse,
        }
    }

    /// The next message the current POST carries; `None` when it carries no more.
    pub(crate) async fn next(&mut self) -> Option<Value> {
        match std::mem::replace(&mut self.source, Source::Idle) {
            Source::Idle => None,
            Source::Json(json) => Some(json),
            Source::Sse(mut sse) => {
                let message = sse.message().await;
                self.source = Source::Sse(sse);
                message
            }
        }
    }

    /// Hangs up on the current POST (the client going away).
    pub(crate) fn hang_up(&mut self) {
        self.source = Source::Idle;
    }

    /// POSTs a notification or a response to a server request: the HTTP status.
    pub(crate) async fn post(&self, message: &Value) -> u16 {
        let headers = self.headers(message);
        let answer = self
            .http
            .post_raw(&borrowed(&headers), message.to_string())
            .await;
        assert!(answer.text.is_empty(), "{}", answer.text);
        answer.status.as_u16()
    }

    /// Ends the conversation. In a session: DELETE answers 200, and the session is gone (a
    /// request naming it is answered 404 `-32001`). At 2026-07-28: DELETE answers 405, `Allow:
    /// POST`, there being no session to end.
    pub(crate) async fn close(self) {
        let Some(session) = self.session.clone() else {
            let headers = [("MCP-Protocol-Version", STATELESS_VERSION)];
            let resp = self.http.send(reqwest::Method::DELETE, &headers).await;
            let answer = Answer::read(resp).await;
            assert_eq!(answer.status, 405, "{}", answer.text);
            assert_eq!(answer.header("allow"), Some("POST"));
            let error = "Method Not Allowed: MCP 2026-07-28 is served by POST only";
            assert_eq!(answer.json(), json!({"error": error}));
            return;
        };
        self.http.delete(&session).await;
        let list = json!({"jsonrpc": "2.0", "id": "gone", "method": "tools/list"});
        let headers = self.headers(&list);
        let answer = self
            .http
            .post_raw(&borrowed(&headers), list.to_string())
            .await;
        assert_eq!(answer.status, 404, "{}", answer.text);
        let terminated = json!({"code": -32001, "message": "Session terminated"});
        assert_eq!(
            answer.json(),
            json!({"jsonrpc": "2.0", "id": "gone", "error": terminated})
        );
    }
}
