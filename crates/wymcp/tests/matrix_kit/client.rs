//! The matrix client: sends a request on its [`Path`] and reads the whole [`Exchange`],
//! answering what the server asks (elicitation, sampling) the way each era asks it.

use std::time::Duration;

use serde_json::{Map, Value, json};
use wymcp::Server;

use super::Path;
use super::era::{self, Extras, SESSION_VERSION};
use super::fixture::{self, NAME, SlowToken, VERSION};
use super::http::HttpWire;
use super::schema;
use super::stdio::StdioWire;

mod cancel;
mod changes;
mod expect;

pub(crate) use changes::Watch;

/// How many `input_required` rounds a request may take before the test fails.
const MAX_ROUNDS: usize = 4;
/// How long the `slow` tool may take to see its cancellation.
const CANCEL_WAIT: Duration = Duration::from_secs(10);

/// How an answer reached the client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Framing {
    /// HTTP, one `application/json` body.
    Json,
    /// HTTP, a `text/event-stream` body.
    Sse,
    /// stdio, lines among the others.
    Lines,
}

/// One request, read to its response.
#[derive(Debug)]
pub(crate) struct Exchange {
    path: Path,
    method: String,
    /// The HTTP status of the last POST (`None` on stdio).
    pub(crate) status: Option<u16>,
    /// How the last answer was framed.
    pub(crate) framing: Framing,
    /// The JSON-RPC response of the last round, its id checked.
    pub(crate) response: Value,
    /// The notifications the request's answer carried, every round's, in order.
    pub(crate) notes: Vec<Value>,
    /// What the server asked, `{"method", "params"}` each, sorted by method: its requests on
    /// the wire (session era), or its `inputRequests` (2026-07-28).
    pub(crate) asked: Vec<Value>,
    /// The requests sent: 1, plus one retry per `input_required` round.
    pub(crate) rounds: usize,
}

impl Exchange {
    /// The result without its era's own fields (asserted by [`era::settle`]); panics on an
    /// error response.
    pub(crate) fn result(&self) -> Value {
        let Some(result) = self.response.get("result") else {
            panic!(
                "{:?} {}: not a result: {}",
                self.path, self.method, self.response
            );
        };
        era::settle(self.path, &self.method, result)
    }

    /// The JSON-RPC error; panics on a result.
    pub(crate) fn error(&self) -> &Value {
        match self.response.get("error") {
            Some(error) => error,
            None => panic!(
                "{:?} {}: not an error: {}",
                self.path, self.method, self.response
            ),
        }
    }

    /// The JSON a tool answered in its one text item.
    pub(crate) fn tool_json(&self) -> Value {
        let result = self.result();
        let text = result["content"][0]["text"].as_str().unwrap_or_else(|| {
            panic!("{:?}: no text content in {result}", self.path);
        });
        serde_json::from_str(text)
            .unwrap_or_else(|e| panic!("{:?}: not JSON ({e}): {text}", self.path))
    }
}

enum Wire {
    Http(HttpWire),
    Stdio(StdioWire),
}

/// A client on one path, talking to a fresh [`fixture::server`].
pub(crate) struct Client {
    path: Path,
    wire: Wire,
    /// The server served (the script changes its tool list).
    server: Server,
    next_id: i64,
    log_level: Option<String>,
    capabilities: Value,
    slow: SlowToken,
    /// The answer to `initialize` (session era) or `server/discover` (2026-07-28).
    pub(crate) opened: Exchange,
}

/// What the matrix's user answers to the server's questions.
pub(crate) fn answer(method: &str) -> Value {
    match method {
        "elicitation/create" => json!({"action": "accept", "content": {"name": "Ada"}}),
        "sampling/createMessage" => json!({"role": "assistant", "model": "matrix-model",
            "content": {"type": "text", "text": "A short summary."}}),
        other => panic!("the matrix client answers no {other}"),
    }
}

impl Client {
    /// Serves a fresh server on `path` and opens the conversation declaring
    /// [`era::capabilities`]: see [`Client::open_declaring`].
    pub(crate) async fn open(path: Path) -> Client {
        Client::open_declaring(path, era::capabilities()).await
    }

    /// Serves a fresh server on `path` and opens the conversation: `initialize` and
    /// `notifications/initialized` (session era) or `server/discover` (2026-07-28), the client
    /// declaring `capabilities` there (session era) or on every request (2026-07-28).
    pub(crate) async fn open_declaring(path: Path, capabilities: Value) -> Client {
        Client::open_on(path, capabilities, fixture::server(false)).await
    }

    /// [`Client::open`] on a server declaring `listChanged`.
    pub(crate) async fn open_announcing(path: Path) -> Client {
        Client::open_on(path, era::capabilities(), fixture::server(true)).await
    }

    /// Serves `server` (instead of the matrix's fixture) on `path` and opens the conversation.
    // The middleware tests' entry; `matrix.rs` serves its fixture.
    #[allow(dead_code)]
    pub(crate) async fn open_serving(path: Path, server: Server) -> Client {
        let (_, slow) = tokio::sync::watch::channel(None);
        Client::open_on(path, era::capabilities(), (server, slow)).await
    }

    async fn open_on(
        path: Path,
        capabilities: Value,
        (server, slow): (Server, SlowToken),
    ) -> Client {
        let wire = match path {
            Path::HttpSession | Path::HttpStateless => {
                Wire::Http(HttpWire::serve(server.clone(), path.stateless()).await)
            }
            Path::StdioSession | Path::StdioStateless => {
                Wire::Stdio(StdioWire::serve(server.clone()))
            }
        };
        let placeholder = Exchange {
            path,
            method: String::new(),
            status: None,
            framing: Framing::Lines,
            response: Value::Null,
            notes: Vec::new(),
            asked: Vec::new(),
            rounds: 0,
        };
        let mut client = Client {
            path,
            wire,
            server,
            next_id: 1,
            log_level: None,
            capabilities,
            slow,
            opened: placeholder,
        };
        client.opened = match path.stateless() {
            true => client.request("server/discover", json!({})).await,
            false => client.initialize().await,
        };
        client
    }

    async fn initialize(&mut self) -> Exchange {
        let params = json!({"protocolVersion": SESSION_VERSION,
            "capabilities": self.capabilities,
            "clientInfo": {"name": "matrix-client", "version": "0"}});
        let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params});
        let (exchange, session) = self.round(body, "initialize").await;
        if let (Wire::Http(http), Some(session)) = (&mut self.wire, session) {
            http.join(session);
        }
        let status = self.notify("notifications/initialized", Value::Null).await;
        assert!(status.is_none_or(|s| s == 202), "initialized: {status:?}");
        exchange
    }

    pub(crate) fn path(&self) -> Path {
        self.path
    }

    /// Sends `method` with `params` and reads it to its response.
    pub(crate) async fn request(&mut self, method: &str, params: Value) -> Exchange {
        self.request_with(method, params, None).await
    }

    /// A `tools/call` of `tool` with `arguments`.
    pub(crate) async fn call(&mut self, tool: &str, arguments: Value) -> Exchange {
        let params = json!({"name": tool, "arguments": arguments});
        self.request("tools/call", params).await
    }

    /// Sends `method` with `params` (and a `progressToken` when given), answering every
    /// `input_required` round with a retry.
    pub(crate) async fn request_with(
        &mut self,
        method: &str,
        params: Value,
        progress: Option<Value>,
    ) -> Exchange {
        let extras = self.extras(progress);
        let mut params = params;
        let (mut notes, mut asked) = (Vec::new(), Vec::new());
        for round in 1..=MAX_ROUNDS {
            let id = self.take_id();
            let body = era::request(self.path, id, method, params.clone(), &extras);
            let (mut exchange, _) = self.round(body, method).await;
            notes.append(&mut exchange.notes);
            asked.append(&mut exchange.asked);
            let result = &exchange.response["result"];
            if result["resultType"] != "input_required" {
                asked.sort_by(|a, b| a["method"].as_str().cmp(&b["method"].as_str()));
                return Exchange {
                    notes,
                    asked,
                    rounds: round,
                    ..exchange
                };
            }
            let (responses, mut requests) = input_round(self.path, result);
            asked.append(&mut requests);
            params["inputResponses"] = Value::Object(responses);
            params["requestState"] = result["requestState"].clone();
        }
        panic!(
            "{:?} {method}: still input_required after {MAX_ROUNDS} rounds",
            self.path
        );
    }

    /// Sets the log level: `logging/setLevel` on every path (answered per era), and at
    /// 2026-07-28 `io.modelcontextprotocol/logLevel` on every later request.
    pub(crate) async fn set_log_level(&mut self, level: &str) -> Exchange {
        let exchange = self
            .request("logging/setLevel", json!({"level": level}))
            .await;
        if self.path.stateless() {
            self.log_level = Some(level.to_owned());
        }
        exchange
    }

    /// A request of `method` with `params` as this path frames it (with the next id), not
    /// sent.
    pub(crate) fn body(&mut self, method: &str, params: Value) -> Value {
        let id = self.take_id();
        era::request(self.path, id, method, params, &self.extras(None))
    }

    /// Sends `text` as it is (a line on stdio, a POST body on HTTP): the HTTP status and the
    /// one message answering it.
    pub(crate) async fn send_text(&mut self, text: &str) -> (Option<u16>, Value) {
        let status = match &mut self.wire {
            Wire::Http(http) => Some(http.send_text(text).await.status),
            Wire::Stdio(stdio) => {
                stdio.send_line(text).await;
                None
            }
        };
        let Some(answer) = self.next().await else {
            panic!("{:?}: {text:?} was answered nothing", self.path);
        };
        (status, answer)
    }

    /// Ends the conversation: stdio closes its input and must then end cleanly with nothing
    /// more written; HTTP ends its session with DELETE, or (2026-07-28) is told there is none.
    pub(crate) async fn close(self) {
        match self.wire {
            Wire::Stdio(stdio) => stdio.close().await,
            Wire::Http(http) => http.close().await,
        }
    }

    /// Sends a notification: the HTTP status, if any.
    pub(crate) async fn notify(&mut self, method: &str, params: Value) -> Option<u16> {
        let mut message = json!({"jsonrpc": "2.0", "method": method});
        if !params.is_null() {
            message["params"] = params;
        }
        match &mut self.wire {
            Wire::Http(http) => Some(http.post(&message).await),
            Wire::Stdio(stdio) => {
                stdio.send(&message).await;
                None
            }
        }
    }

    fn extras(&self, progress: Option<Value>) -> Extras {
        Extras {
            capabilities: self.capabilities.clone(),
            progress,
            log_level: self.log_level.clone(),
        }
    }

    /// The next request id: numbers and strings in turn, so every path echoes both kinds.
    fn take_id(&mut self) -> Value {
        self.next_id += 1;
        match self.next_id % 2 {
            0 => json!(self.next_id),
            _ => json!(format!("m-{}", self.next_id)),
        }
    }

    /// Sends `body`: the HTTP status, the `Mcp-Session-Id` its answer carries, and how it
    /// is framed.
    async fn send(&mut self, body: &Value) -> (Option<u16>, Option<String>, Framing) {
        match &mut self.wire {
            Wire::Http(http) => {
                let posted = http.send(body).await;
                let framing = if posted.sse {
                    Framing::Sse
                } else {
                    Framing::Json
                };
                (Some(posted.status), posted.session, framing)
            }
            Wire::Stdio(stdio) => {
                stdio.send(body).await;
                (None, None, Framing::Lines)
            }
        }
    }

    async fn next(&mut self) -> Option<Value> {
        match &mut self.wire {
            Wire::Http(http) => http.next().await,
            Wire::Stdio(stdio) => stdio.next().await,
        }
    }

    /// Sends `body` and reads until its response, answering the server's requests on the
    /// wire; the exchange and the `Mcp-Session-Id` its answer carried.
    async fn round(&mut self, body: Value, method: &str) -> (Exchange, Option<String>) {
        let (status, session, framing) = self.send(&body).await;
        // 2026-07-28 mints no session.
        assert!(
            !self.path.stateless() || session.is_none(),
            "{:?} {method}: Mcp-Session-Id {session:?}",
            self.path
        );
        let (mut notes, mut asked) = (Vec::new(), Vec::new());
        let response = loop {
            let Some(message) = self.next().await else {
                panic!(
                    "{:?} {method}: answered no response (HTTP {status:?})",
                    self.path
                );
            };
            if message.get("method").is_some() {
                schema::check_message(self.path, &message);
            }
            match (message.get("method"), message.get("id")) {
                (Some(asked_for), Some(id)) => {
                    let asked_for = asked_for.as_str().unwrap_or_default();
                    let reply = json!({"jsonrpc": "2.0", "id": id, "result": answer(asked_for)});
                    asked.push(json!({"method": asked_for, "params": message["params"]}));
                    self.reply(&reply).await;
                }
                (Some(_), None) => notes.push(message),
                (None, _) if message["id"] == body["id"] => break message,
                (None, _) => panic!("{:?} {method}: a stray message {message}", self.path),
            }
        };
        schema::check_response(self.path, method, &response);
        let exchange = Exchange {
            path: self.path,
            method: method.to_owned(),
            status,
            framing,
            response,
            notes,
            asked,
            rounds: 1,
        };
        (exchange, session)
    }

    /// Answers a server request: on HTTP a POST in the session, answered 202.
    async fn reply(&mut self, reply: &Value) {
        match &mut self.wire {
            Wire::Http(http) => assert_eq!(http.post(reply).await, 202, "{reply}"),
            Wire::Stdio(stdio) => stdio.send(reply).await,
        }
    }
}

/// The answers to an `input_required` result's requests, and the requests as asked.
fn input_round(path: Path, result: &Value) -> (Map<String, Value>, Vec<Value>) {
    let mut keys: Vec<&str> = result
        .as_object()
        .map(|fields| fields.keys().map(String::as_str).collect())
        .unwrap_or_default();
    keys.sort_unstable();
    // No cache hint on input_required.
    assert_eq!(
        keys,
        ["_meta", "inputRequests", "requestState", "resultType"],
        "{path:?}: {result}"
    );
    assert!(result["requestState"].is_string(), "{path:?}: {result}");
    schema::check_input_required(path, result);
    assert_eq!(
        result["_meta"],
        json!({"io.modelcontextprotocol/serverInfo": {"name": NAME, "version": VERSION}}),
        "{path:?}: {result}"
    );
    let Some(requests) = result["inputRequests"].as_object() else {
        panic!("{path:?}: input_required without inputRequests: {result}");
    };
    let mut responses = Map::new();
    let mut asked = Vec::new();
    for (key, request) in requests {
        let method = request["method"].as_str().unwrap_or_default();
        responses.insert(key.clone(), answer(method));
        asked.push(json!({"method": method, "params": request["params"]}));
    }
    (responses, asked)
}
