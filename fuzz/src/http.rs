//! The Streamable HTTP service as a state machine: structured requests sent in process with
//! tower's `oneshot` (no sockets), the session ids and `requestState`s the server handed out
//! earlier in the same run reused, and the invariants checked after every step.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arbitrary::{Arbitrary, Result, Unstructured};
use axum::body::Body;
use axum::http::{HeaderValue, Method, Request, Response, StatusCode};
use futures_util::future::BoxFuture;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tokio::time::Instant;
use tower::ServiceExt;
use wymcp::Identity;
use wymcp::backend::{
    Backends, CreateError, InMemorySessionStore, SessionRecord, SessionStore, StoreError,
};
use wymcp::transport::http::{BearerAuth, StreamableHttp, StreamableHttpService};

use crate::json::{self, Era};
use crate::schema;

/// The cap on live sessions the service runs with.
pub const MAX_SESSIONS: usize = 3;
/// How long an idle session lives (virtual time: the runtime's clock is paused).
pub const SESSION_TTL: Duration = Duration::from_secs(60);
/// The request body limit the service runs with.
pub const BODY_LIMIT: usize = 64 * 1024;
/// The bound on a refusal's body: bounded echo keeps what a refusal quotes under it, however
/// large the request.
pub const REFUSAL_BOUND: usize = 16 * 1024;
/// The most a request's whole answer may take (an echo of the largest body, plus framing).
pub const ANSWER_BOUND: usize = BODY_LIMIT + REFUSAL_BOUND;
/// The bearer token the auth-on configuration accepts.
pub const TOKEN: &str = "fuzz-token";
/// The most steps one input runs.
pub const MAX_STEPS: usize = 24;

/// The session store of a run: [`InMemorySessionStore`]'s records, with idle expiry on the
/// runtime's (paused, virtual) clock so a TTL passes in no wall-clock time.
#[derive(Default)]
pub struct VirtualStore {
    inner: InMemorySessionStore,
    seen: Mutex<HashMap<String, Instant>>,
}

impl VirtualStore {
    fn seen(&self) -> std::sync::MutexGuard<'_, HashMap<String, Instant>> {
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// How many records the store holds that have not expired.
    pub fn live(&self, ttl: Duration) -> usize {
        let now = Instant::now();
        self.seen()
            .values()
            .filter(|t| now.duration_since(**t) < ttl)
            .count()
    }
}

impl SessionStore for VirtualStore {
    fn create(
        &self,
        record: SessionRecord,
        max: usize,
        ttl: Duration,
    ) -> BoxFuture<'_, std::result::Result<(), CreateError>> {
        Box::pin(async move {
            if self.live(ttl) >= max {
                return Err(CreateError::Full(max));
            }
            let id = record.id.clone();
            self.inner.create(record, usize::MAX, Duration::MAX).await?;
            self.seen().insert(id, Instant::now());
            Ok(())
        })
    }

    fn load<'a>(
        &'a self,
        id: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, std::result::Result<Option<Arc<SessionRecord>>, StoreError>> {
        Box::pin(async move {
            let now = Instant::now();
            match self.seen().get_mut(id) {
                Some(t) if now.duration_since(*t) < ttl => *t = now,
                _ => return Ok(None),
            }
            self.inner.load(id, Duration::MAX).await
        })
    }

    fn save(&self, record: SessionRecord) -> BoxFuture<'_, std::result::Result<bool, StoreError>> {
        self.inner.save(record)
    }

    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, std::result::Result<bool, StoreError>> {
        self.seen().remove(id);
        self.inner.remove(id)
    }

    fn reap(&self, ttl: Duration) -> BoxFuture<'_, std::result::Result<Vec<String>, StoreError>> {
        Box::pin(async move {
            let now = Instant::now();
            let gone: Vec<String> = self
                .seen()
                .iter()
                .filter(|(_, t)| now.duration_since(**t) >= ttl)
                .map(|(id, _)| id.clone())
                .collect();
            for id in &gone {
                self.seen().remove(id);
                self.inner.remove(id).await?;
            }
            Ok(gone)
        })
    }
}

/// A request's method.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Verb {
    Post,
    Get,
    Delete,
    Put,
    Options,
}

/// A header from the dictionary, or raw.
#[derive(Arbitrary, Debug)]
pub enum Header {
    Origin(u8),
    Host(u8),
    Accept(u8),
    ContentType(u8),
    /// An id handed out earlier in the run (by index), or one the server never made.
    Session(u8),
    ForeignSession(u8),
    Version(u8),
    LastEventId(u8),
    McpMethod(u8),
    McpName(u8),
    Authorization(u8),
    Raw(u8, String),
}

/// What a POST carries.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum BodyKind {
    Session,
    Stateless,
    /// A batch (2025-03-26) of up to this many session-era messages.
    Batch(u8),
    /// The answer to a server request the run saw (elicitation, by index).
    Answer(u8),
    /// Arbitrary JSON.
    Json,
    /// Arbitrary bytes.
    Raw,
    Empty,
    /// A body over the limit.
    Huge,
}

/// One step of a run.
#[derive(Arbitrary, Debug)]
pub struct Step {
    pub verb: Verb,
    /// 0: the endpoint `/`; others: paths the service does not serve.
    pub path: u8,
    /// Add the headers a well-behaved client sends (era, session, version, routing).
    pub polite: bool,
    /// Which issued session a polite request names.
    pub session: u8,
    pub headers: Vec<Header>,
    pub body: BodyKind,
    /// Let this many tens of (virtual) seconds pass before the step.
    pub pause: u8,
}

/// How a run's service is configured.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub struct Setup {
    pub auth: bool,
    pub polling: bool,
    pub strict_version: bool,
}

/// A session the run was handed.
#[derive(Debug)]
struct Issued {
    id: String,
    revision: usize,
    /// The last (virtual) time a request named it: its store record was refreshed no later.
    last_named: Instant,
    /// Deleted (200), or answered 404: it must never answer again.
    dead: bool,
}

/// The state of one run: the service and what the client learned from it.
pub struct Run {
    service: StreamableHttpService,
    store: Arc<VirtualStore>,
    setup: Setup,
    sessions: Vec<Issued>,
    states: Vec<String>,
    event_ids: Vec<String>,
    server_requests: Vec<Value>,
    pub steps: usize,
}

const ORIGINS: &[&str] = &[
    "http://localhost",
    "http://127.0.0.1:3000",
    "https://evil.example",
    "null",
];
const HOSTS: &[&str] = &[
    "localhost",
    "127.0.0.1:8080",
    "[::1]",
    "evil.example",
    "localhost:99999",
];
const ACCEPTS: &[&str] = &[
    "application/json, text/event-stream",
    "application/json",
    "text/event-stream",
    "*/*",
    "text/html",
];
const CONTENT_TYPES: &[&str] = &[
    "application/json",
    "application/json; charset=utf-8",
    "text/plain",
    "",
];
const PATHS: &[&str] = &[
    "/",
    "/mcp",
    "//",
    "/?x=1",
    "/.well-known/oauth-protected-resource",
];

impl Run {
    /// A fresh service (inside the current runtime) configured by `setup`.
    pub fn new(setup: Setup) -> Run {
        let store = Arc::new(VirtualStore::default());
        // The run's own sessions, in a store whose clock the input moves: a server of its own.
        let server = crate::fixture::builder()
            .backends(Backends::new().sessions(SharedStore(store.clone())))
            .build()
            .expect("the fixture server builds");
        let mut builder = StreamableHttp::builder(server)
            .max_sessions(MAX_SESSIONS)
            .session_ttl(SESSION_TTL)
            .body_limit(BODY_LIMIT)
            .sse_polling(setup.polling)
            .strict_version_header(setup.strict_version);
        if setup.auth {
            builder = builder.auth(BearerAuth::new().token(TOKEN, Identity::new("fuzzer")));
        }
        Run {
            service: builder.build(),
            store,
            setup,
            sessions: Vec::new(),
            states: Vec::new(),
            event_ids: Vec::new(),
            server_requests: Vec::new(),
            steps: 0,
        }
    }

    /// Runs the steps `u` describes, checking the invariants after each.
    pub async fn run(&mut self, u: &mut Unstructured<'_>) -> Result<()> {
        while !u.is_empty() && self.steps < MAX_STEPS {
            let step: Step = u.arbitrary()?;
            self.steps += 1;
            if step.pause > 0 {
                tokio::time::sleep(Duration::from_secs(10 * u64::from(step.pause % 16))).await;
            }
            let (request, facts) = self.request(u, &step)?;
            let response = tokio::time::timeout(
                Duration::from_secs(120),
                self.service.clone().oneshot(request),
            )
            .await
            .unwrap_or_else(|_| panic!("no answer within 120 s (virtual) to {facts:?}"));
            let response = match response {
                Ok(response) => response,
                Err(never) => match never {},
            };
            self.answered(response, &facts).await;
            self.check_sessions().await;
        }
        Ok(())
    }

    fn request(&mut self, u: &mut Unstructured<'_>, step: &Step) -> Result<(Request<Body>, Facts)> {
        let verb = match step.verb {
            Verb::Post => Method::POST,
            Verb::Get => Method::GET,
            Verb::Delete => Method::DELETE,
            Verb::Put => Method::PUT,
            Verb::Options => Method::OPTIONS,
        };
        let path = PATHS[usize::from(step.path) % PATHS.len()];
        let (body, message) = self.body(u, step.body)?;
        let stateless_body = message.as_ref().is_some_and(|m| {
            m.get("params")
                .and_then(|p| p.get("_meta"))
                .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
                .is_some()
        });
        let mut facts = Facts {
            endpoint: path == "/" || path.starts_with("/?"),
            verb: verb.clone(),
            session: None,
            version_header: None,
            stateless: stateless_body,
            method: message
                .as_ref()
                .and_then(|m| m["method"].as_str())
                .map(str::to_owned),
        };
        let mut builder = Request::builder().method(verb).uri(path);
        let mut headers: Vec<(String, String)> = Vec::new();
        if step.polite {
            self.polite(step, message.as_ref(), stateless_body, &mut headers);
        }
        for header in &step.headers {
            if let Some(pair) = self.header(header) {
                headers.push(pair);
            }
        }
        for (name, value) in &headers {
            let lower = name.to_ascii_lowercase();
            if lower == "mcp-session-id" {
                facts.session = Some(value.clone());
            }
            if lower == "mcp-protocol-version" {
                if value.trim() == "2026-07-28" {
                    facts.stateless = true;
                }
                facts.version_header = Some(value.trim().to_owned());
            }
            if let Ok(value) = HeaderValue::from_str(value) {
                builder = builder.header(name.as_str(), value);
            }
        }
        let request = builder
            .body(body)
            .expect("a request of checked parts builds");
        Ok((request, facts))
    }

    fn polite(
        &self,
        step: &Step,
        message: Option<&Value>,
        stateless: bool,
        headers: &mut Vec<(String, String)>,
    ) {
        headers.push(("host".into(), "localhost".into()));
        headers.push(("accept".into(), ACCEPTS[0].into()));
        headers.push(("content-type".into(), "application/json".into()));
        if self.setup.auth {
            headers.push(("authorization".into(), format!("Bearer {TOKEN}")));
        }
        if stateless {
            headers.push(("mcp-protocol-version".into(), "2026-07-28".into()));
            if let Some(message) = message {
                let method = message["method"].as_str().unwrap_or_default();
                headers.push(("mcp-method".into(), method.to_owned()));
                let name = match method {
                    "tools/call" | "prompts/get" => message["params"]["name"].as_str(),
                    "resources/read" => message["params"]["uri"].as_str(),
                    _ => None,
                };
                if let Some(name) = name {
                    headers.push(("mcp-name".into(), name.to_owned()));
                }
            }
        } else if !self.sessions.is_empty() {
            let session = &self.sessions[usize::from(step.session) % self.sessions.len()];
            headers.push(("mcp-session-id".into(), session.id.clone()));
            headers.push((
                "mcp-protocol-version".into(),
                schema::REVISIONS[session.revision].into(),
            ));
        }
    }

    fn header(&self, header: &Header) -> Option<(String, String)> {
        let pick = |list: &[&str], i: u8| list[usize::from(i) % list.len()].to_owned();
        Some(match header {
            Header::Origin(i) => ("origin".into(), pick(ORIGINS, *i)),
            Header::Host(i) => ("host".into(), pick(HOSTS, *i)),
            Header::Accept(i) => ("accept".into(), pick(ACCEPTS, *i)),
            Header::ContentType(i) => ("content-type".into(), pick(CONTENT_TYPES, *i)),
            Header::Session(i) if !self.sessions.is_empty() => (
                "mcp-session-id".into(),
                self.sessions[usize::from(*i) % self.sessions.len()]
                    .id
                    .clone(),
            ),
            Header::Session(_) => return None,
            Header::ForeignSession(i) => ("mcp-session-id".into(), format!("not-a-session-{i}")),
            Header::Version(i) => ("mcp-protocol-version".into(), pick(json::VERSIONS, *i)),
            Header::LastEventId(i) if !self.event_ids.is_empty() => (
                "last-event-id".into(),
                self.event_ids[usize::from(*i) % self.event_ids.len()].clone(),
            ),
            Header::LastEventId(i) => ("last-event-id".into(), format!("get:{i}")),
            Header::McpMethod(i) => ("mcp-method".into(), pick(json::METHODS, *i)),
            Header::McpName(i) => ("mcp-name".into(), pick(&crate::fixture::TOOLS, *i)),
            Header::Authorization(i) => (
                "authorization".into(),
                pick(
                    &[
                        "Bearer fuzz-token",
                        "Bearer wrong",
                        "Basic Zm9vOmJhcg==",
                        "Bearer",
                    ],
                    *i,
                ),
            ),
            Header::Raw(i, value) => (
                pick(&["x-fuzz", "mcp-param-name", "cookie"], *i),
                value.clone(),
            ),
        })
    }

    fn body(&self, u: &mut Unstructured<'_>, kind: BodyKind) -> Result<(Body, Option<Value>)> {
        let message = match kind {
            BodyKind::Session => json::message(u, Era::Session, &self.states)?,
            BodyKind::Stateless => json::message(u, Era::Stateless, &self.states)?,
            BodyKind::Batch(n) => {
                let mut items = Vec::new();
                for _ in 0..(n % 4) {
                    items.push(json::message(u, Era::Session, &self.states)?);
                }
                return Ok((Body::from(Value::Array(items).to_string()), None));
            }
            BodyKind::Answer(i) if !self.server_requests.is_empty() => {
                let id = self.server_requests[usize::from(i) % self.server_requests.len()].clone();
                json!({"jsonrpc": "2.0", "id": id,
                       "result": {"action": "accept", "content": {"name": "Ada"}}})
            }
            BodyKind::Answer(_) | BodyKind::Json => json::value(u, 3)?,
            BodyKind::Raw => {
                let bytes: Vec<u8> = u.arbitrary()?;
                return Ok((Body::from(bytes), None));
            }
            BodyKind::Empty => return Ok((Body::empty(), None)),
            BodyKind::Huge => return Ok((Body::from(vec![b' '; BODY_LIMIT + 1]), None)),
        };
        Ok((Body::from(message.to_string()), Some(message)))
    }

    /// Reads the answer (bounded in time and size) and checks it.
    async fn answered(&mut self, response: Response<Body>, facts: &Facts) {
        let status = response.status();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let issued = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        // A 2026-07-28 request has no session: whatever `Mcp-Session-Id` it carries, it neither
        // reaches nor ends one, so the session invariants concern the session era's requests.
        let named = facts
            .session
            .as_deref()
            .filter(|_| !facts.stateless)
            .and_then(|id| self.sessions.iter().position(|s| s.id == id));
        let mut gone = None;
        if let Some(i) = named {
            let session = &mut self.sessions[i];
            let expired = Instant::now().duration_since(session.last_named)
                >= SESSION_TTL + Duration::from_secs(1);
            // `initialize` and `ping` are session-exempt (behaviour spec §6.12: no session
            // lookup): answered whatever session they name, a new session for `initialize`.
            let exempt = matches!(facts.method.as_deref(), Some("ping" | "initialize"));
            assert!(
                exempt || !((session.dead || expired) && status.is_success()),
                "a {} session answered {status} to {facts:?}",
                if session.dead { "deleted" } else { "expired" },
            );
            session.last_named = Instant::now();
            // A 404 of the endpoint (not of a path the service does not serve) ends it, unless
            // it is an unknown method's (HTTP 404 with `-32601`, decisions O8): looked at below.
            if status == StatusCode::NOT_FOUND && facts.endpoint {
                gone = Some(i);
            }
            if facts.verb == Method::DELETE && status == StatusCode::OK {
                session.dead = true;
            }
        }
        let body = read_body(response.into_body()).await;
        if let Some(i) = gone {
            let method_not_found = serde_json::from_slice::<Value>(&body)
                .is_ok_and(|answer| answer["error"]["code"] == -32601);
            if !method_not_found {
                self.sessions[i].dead = true;
            }
        }
        assert!(
            body.len() <= ANSWER_BOUND,
            "an answer of {} bytes to {facts:?}",
            body.len()
        );
        if status.is_client_error() || status.is_server_error() {
            assert!(
                body.len() <= REFUSAL_BOUND,
                "a {status} refusal of {} bytes to {facts:?}",
                body.len()
            );
        }
        let messages = if content_type.starts_with("text/event-stream") {
            self.sse_messages(&body)
        } else if content_type.starts_with("application/json") && !body.is_empty() {
            let value: Value = serde_json::from_slice(&body)
                .unwrap_or_else(|e| panic!("a JSON answer that is not JSON ({e}) to {facts:?}"));
            vec![value]
        } else {
            Vec::new()
        };
        let revision = self.revision(facts, named, &messages);
        for message in &messages {
            if (status.is_success() || message.get("jsonrpc").is_some())
                && let Err(problem) = schema::check_body(revision, message)
            {
                panic!("{problem}\nanswering {status} to {facts:?}");
            }
            self.learn(message);
        }
        if let (Some(id), true) = (issued, status.is_success()) {
            let revision = messages
                .first()
                .and_then(|m| m["result"]["protocolVersion"].as_str())
                .map_or(2, schema::revision_index);
            if !self.sessions.iter().any(|s| s.id == id) {
                self.sessions.push(Issued {
                    id,
                    revision,
                    last_named: Instant::now(),
                    dead: false,
                });
            }
        }
    }

    /// The revision whose schema the answer to `facts` follows.
    fn revision(&self, facts: &Facts, named: Option<usize>, messages: &[Value]) -> usize {
        if facts.stateless {
            return 3;
        }
        if let Some(i) = named {
            return self.sessions[i].revision;
        }
        if let Some(version) = messages
            .first()
            .and_then(|m| m["result"]["protocolVersion"].as_str())
        {
            return schema::revision_index(version);
        }
        facts
            .version_header
            .as_deref()
            .map_or(2, |v| schema::revision_index(v).min(2))
    }

    fn sse_messages(&mut self, body: &[u8]) -> Vec<Value> {
        let text = String::from_utf8_lossy(body);
        let mut messages = Vec::new();
        for event in text.split("\n\n") {
            let mut data = String::new();
            for line in event.lines() {
                if let Some(rest) = line.strip_prefix("data:") {
                    if !data.is_empty() {
                        data.push('\n');
                    }
                    data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
                } else if let Some(id) = line.strip_prefix("id:")
                    && self.event_ids.len() < 64
                {
                    self.event_ids.push(id.trim().to_owned());
                }
            }
            if data.trim().is_empty() {
                continue;
            }
            let value: Value = serde_json::from_str(&data)
                .unwrap_or_else(|e| panic!("an SSE event whose data is not JSON ({e}): {data}"));
            messages.push(value);
        }
        messages
    }

    /// Keeps what the client may send back: `requestState`s and server request ids.
    fn learn(&mut self, message: &Value) {
        if let Some(state) = message["result"]["requestState"].as_str()
            && self.states.len() < 16
        {
            self.states.push(state.to_owned());
        }
        if message.get("method").is_some()
            && message.get("id").is_some()
            && self.server_requests.len() < 16
        {
            self.server_requests.push(message["id"].clone());
        }
    }

    /// The session-count invariant, and dead sessions are gone from the service too.
    async fn check_sessions(&self) {
        let live = self.store.live(SESSION_TTL);
        assert!(
            live <= MAX_SESSIONS,
            "{live} live sessions, over the cap of {MAX_SESSIONS}"
        );
        for session in self.sessions.iter().filter(|s| s.dead) {
            let handle = self.service.session(&session.id).await.ok().flatten();
            assert!(handle.is_none(), "a dead session still has a live handle");
        }
    }
}

/// What the client knows about a request it sent.
#[derive(Debug)]
pub struct Facts {
    /// The request's path is the endpoint's (others are answered 404 by the router).
    endpoint: bool,
    verb: Method,
    session: Option<String>,
    version_header: Option<String>,
    stateless: bool,
    /// The body's method.
    method: Option<String>,
}

/// A body read to its end, or for as long as it yields frames within a second (an SSE stream
/// stays open): at most 64 frames and [`ANSWER_BOUND`] + 1 bytes.
async fn read_body(mut body: Body) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..64 {
        match tokio::time::timeout(Duration::from_secs(1), body.frame()).await {
            Ok(Some(Ok(frame))) => {
                if let Ok(data) = frame.into_data() {
                    out.extend_from_slice(&data);
                }
                if out.len() > ANSWER_BOUND {
                    break;
                }
            }
            Ok(Some(Err(e))) => panic!("the answer's body failed: {e}"),
            Ok(None) | Err(_) => break,
        }
    }
    out
}

/// The store shared between the service and the run's checks.
struct SharedStore(Arc<VirtualStore>);

impl SessionStore for SharedStore {
    fn create(
        &self,
        r: SessionRecord,
        max: usize,
        ttl: Duration,
    ) -> BoxFuture<'_, std::result::Result<(), CreateError>> {
        self.0.create(r, max, ttl)
    }
    fn load<'a>(
        &'a self,
        id: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, std::result::Result<Option<Arc<SessionRecord>>, StoreError>> {
        self.0.load(id, ttl)
    }
    fn save(&self, r: SessionRecord) -> BoxFuture<'_, std::result::Result<bool, StoreError>> {
        self.0.save(r)
    }
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, std::result::Result<bool, StoreError>> {
        self.0.remove(id)
    }
    fn reap(&self, ttl: Duration) -> BoxFuture<'_, std::result::Result<Vec<String>, StoreError>> {
        self.0.reap(ttl)
    }
}
