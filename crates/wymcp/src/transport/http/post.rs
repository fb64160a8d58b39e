//! POST: one JSON-RPC message (or a 2025-03-26 batch) per request.

use std::sync::{Arc, PoisonError};

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt;
use serde_json::{Value, json};

use super::auth::Identity;
use super::error::{ErrorBody, HttpError, json_bytes_response, json_response};
use super::get::frame;
use super::hooks::SessionStart;
use super::notes::{self, NoteReceiver};
use super::service::{
    SESSION_HEADER, SESSION_NAME, State, VERSION_NAME, header_str, media_ranges, owns,
    range_admits, wire_checks,
};
use super::session::{CreateError, SessionRecord};
use super::session::{SharedAssigns, StreamEvent};
use crate::dispatch::{CallToolResult, WireResult};
use crate::protocol::success_bytes;
use crate::protocol::{
    Kind, Method, ProtocolVersion, RpcError, failure, initialize_result, success, validate_envelope,
};
use crate::session::engine::{
    Engine, Rejected, Step, call_context, is_internal_assign, new_record,
};
use crate::session::{RunningCall, SessionHandle};
use crate::{Delivery, Notifier};
use futures_util::StreamExt as _;
use tokio_util::sync::CancellationToken;

/// What handling one message produced.
enum Outcome {
    /// A JSON-RPC answer, with the session id to announce (after `initialize`).
    Reply {
        body: Value,
        status: StatusCode,
        new_session: Option<String>,
    },
    /// A call's answer, serialized straight to bytes (no result or envelope `Value` is built).
    Answer {
        id: Value,
        result: CallToolResult,
        version: ProtocolVersion,
    },
    /// Accepted: a notification or a client response (202, no body).
    Accepted,
    /// The request was cancelled: no JSON-RPC response is sent (202, no body).
    Cancelled,
    /// An SSE stream carrying the call's notifications, then its response.
    Stream(Response),
}

impl Outcome {
    fn ok(body: Value) -> Outcome {
        Outcome::Reply {
            body,
            status: StatusCode::OK,
            new_session: None,
        }
    }
}

/// A POST's response. Not an `async fn` (see `service::route`): mapping `process`'s future
/// keeps one copy of the request in the router's box.
pub(crate) fn handle(state: Arc<State>, req: Request) -> impl Future<Output = Response> {
    process(state, req).map(|outcome| outcome.unwrap_or_else(IntoResponse::into_response))
}

async fn process(state: Arc<State>, req: Request) -> Result<Response, HttpError> {
    let (parts, body) = req.into_parts();
    let headers = &parts.headers;
    let identity = match wire_checks(&state, headers).await {
        Ok(identity) => identity,
        Err(refusal) => {
            // The body of a caller auth refused is never read: the events carry no request id.
            refusal.report_auth("POST", None, None);
            return Err(refusal.rpc(Value::Null));
        }
    };
    let identity = identity.as_ref();
    let accept = Accept::of(headers);
    if !accept.json {
        return Err(HttpError::invalid_request(
            StatusCode::NOT_ACCEPTABLE,
            Value::Null,
            "Not Acceptable: the client must accept application/json (and text/event-stream)",
        ));
    }
    check_content_type(headers)?;
    let body = read_body(&state, headers, body).await?;
    let message: Value =
        serde_json::from_slice(&body).map_err(|_| HttpError::parse_error("Malformed JSON"))?;
    // The era is decided per request: the stateless one never touches the session store.
    // The stateless era and batches run boxed: their futures are several times the size of a
    // session call's, and every POST's future (boxed by the router) would otherwise be as
    // large as the largest of them (see docs/performance.md, "Future sizes").
    let version = VersionHeader::of(headers);
    if super::modern::applies(version.names_stateless(), &message) {
        return Box::pin(super::modern::handle(&state, headers, identity, message)).await;
    }
    let outcome = match message {
        Value::Array(items) => {
            return Box::pin(batch(&state, headers, version, identity, items)).await;
        }
        message => single(&state, headers, version, identity, accept.sse, message).await?,
    };
    Ok(respond(outcome))
}

fn respond(outcome: Outcome) -> Response {
    match outcome {
        Outcome::Reply {
            body,
            status,
            new_session,
        } => {
            let mut response = json_response(status, &body);
            if let Some(id) = new_session
                && let Ok(value) = HeaderValue::from_str(&id)
            {
                response.headers_mut().insert(SESSION_HEADER, value);
            }
            response
        }
        Outcome::Answer {
            id,
            result,
            version,
        } => json_bytes_response(
            StatusCode::OK,
            success_bytes(
                &id,
                &WireResult {
                    result: &result,
                    version,
                },
            ),
        ),
        Outcome::Accepted | Outcome::Cancelled => StatusCode::ACCEPTED.into_response(),
        Outcome::Stream(response) => response,
    }
}

fn check_content_type(headers: &HeaderMap) -> Result<(), HttpError> {
    let is_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("application/json"));
    if is_json {
        Ok(())
    } else {
        Err(HttpError::invalid_request(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Value::Null,
            "Unsupported Media Type: the body must be application/json",
        ))
    }
}

async fn read_body(
    state: &State,
    headers: &HeaderMap,
    body: Body,
) -> Result<bytes::Bytes, HttpError> {
    let limit = state.config.body_limit;
    let too_large = || {
        HttpError::invalid_request(
            StatusCode::PAYLOAD_TOO_LARGE,
            Value::Null,
            format!("Payload Too Large: the body limit is {limit} bytes"),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    axum::body::to_bytes(body, limit).await.map_err(|err| {
        let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&err);
        while let Some(e) = source {
            if e.is::<http_body_util::LengthLimitError>() {
                return too_large();
            }
            source = e.source();
        }
        HttpError::invalid_request(
            StatusCode::BAD_REQUEST,
            Value::Null,
            "Could not read the request body",
        )
    })
}

/// A POST's `MCP-Protocol-Version` header, read once: the era test and the session era's
/// check both need it.
#[derive(Debug, Clone, Copy)]
enum VersionHeader<'h> {
    Absent,
    NotText,
    /// The raw text, and the revision it names (`None`: none this server knows).
    Text(&'h str, Option<ProtocolVersion>),
}

impl<'h> VersionHeader<'h> {
    fn of(headers: &'h HeaderMap) -> Self {
        match headers.get(&VERSION_NAME) {
            None => VersionHeader::Absent,
            Some(value) => match value.to_str() {
                Ok(raw) => VersionHeader::Text(raw, raw.trim().parse().ok()),
                Err(_) => VersionHeader::NotText,
            },
        }
    }

    /// The header names a stateless (2026-07-28) revision.
    fn names_stateless(self) -> bool {
        matches!(self, VersionHeader::Text(_, Some(v)) if v.is_stateless())
    }

    /// The session era's reading: the revision named, none, or a 400 for a header that names
    /// no session-era revision.
    fn session_era(self, rid: &Value) -> Result<Option<ProtocolVersion>, HttpError> {
        match self {
            VersionHeader::Absent => Ok(None),
            VersionHeader::NotText => Err(unsupported_version(rid, "<not text>")),
            VersionHeader::Text(_, Some(v)) if !v.is_stateless() => Ok(Some(v)),
            VersionHeader::Text(raw, _) => Err(unsupported_version(rid, raw)),
        }
    }
}

fn unsupported_version(rid: &Value, raw: &str) -> HttpError {
    HttpError::invalid_request(
        StatusCode::BAD_REQUEST,
        rid.clone(),
        format!(
            "Unsupported MCP-Protocol-Version header: {}. Supported: 2025-11-25, 2025-06-18, 2025-03-26.",
            wymcp_core::bound::echo(raw)
        ),
    )
}

/// Loads the session the request names: 400 without the header, 404 when unknown.
async fn resolve(
    state: &State,
    headers: &HeaderMap,
    identity: Option<&Identity>,
    rid: &Value,
    message: Option<&Value>,
) -> Result<Arc<SessionRecord>, HttpError> {
    let Some(id) = header_str(headers, &SESSION_NAME) else {
        return Err(HttpError::invalid_request(
            StatusCode::BAD_REQUEST,
            rid.clone(),
            "Missing Mcp-Session-Id header. Initialize first.",
        ));
    };
    match state.store.load(id, state.config.session_ttl).await {
        Ok(Some(record)) if owns(&record, identity) => Ok(record),
        Ok(_) => {
            let request_id = message.and_then(|m| m.get("id"));
            tracing::info!(
                name: "wymcp.session.not_found",
                session_id = %wymcp_core::bound::echo(id),
                request_id = request_id.map(|id| wymcp_core::bound::echo(&id.to_string())),
                method = message
                    .and_then(|m| m.get("method"))
                    .and_then(serde_json::Value::as_str)
                    .map(wymcp_core::bound::echo),
                "MCP session not found"
            );
            Err(HttpError::session_not_found(rid.clone()))
        }
        Err(err) => Err(store_failure(rid, &err)),
    }
}

fn store_failure(rid: &Value, err: &dyn std::fmt::Display) -> HttpError {
    tracing::error!(%err, "MCP session store failed");
    HttpError::rpc(
        StatusCode::INTERNAL_SERVER_ERROR,
        rid.clone(),
        RpcError::new(
            RpcError::INTERNAL_ERROR,
            "Internal error",
            Some(json!({ "reason": "session store unavailable" })),
        ),
    )
}

async fn single(
    state: &Arc<State>,
    headers: &HeaderMap,
    version: VersionHeader<'_>,
    identity: Option<&Identity>,
    sse: bool,
    message: Value,
) -> Result<Outcome, HttpError> {
    let kind = Kind::of(&message);
    let rid = kind.rejection_id();
    let requested = version.session_era(&rid)?;
    if let Kind::Request { id, method } = &kind {
        match Method::parse(method) {
            Some(Method::Initialize) => {
                validate(&message, &rid)?;
                return initialize(state, id.clone(), message.get("params"), identity).await;
            }
            Some(Method::Ping) => {
                validate(&message, &rid)?;
                return Ok(Outcome::ok(success(id.clone(), json!({}))));
            }
            _ => {}
        }
    }
    let record = resolve(state, headers, identity, &rid, Some(&message)).await?;
    in_session(state, record, requested, identity, sse, kind, message).await
}

/// What a POST's `Accept` header allows, read in one pass (it used to be parsed twice per
/// request).
struct Accept {
    /// `application/json`, by name or by a wildcard (`*/*`, `application/*`); also when there
    /// is no `Accept` header at all: `service::accepts`, on the same ranges.
    json: bool,
    /// `text/event-stream` named itself (not only through a wildcard): the answer may be a
    /// stream.
    sse: bool,
}

impl Accept {
    fn of(headers: &HeaderMap) -> Self {
        let mut seen = false;
        let mut json = false;
        let mut sse = false;
        for line in headers.get_all(header::ACCEPT) {
            seen = true;
            // What the official SDKs send, compared whole before anything is split.
            if line.as_bytes() == b"application/json, text/event-stream" {
                json = true;
                sse = true;
                continue;
            }
            for range in media_ranges(line) {
                json = json || range_admits(range, b"application/json");
                sse = sse || range.eq_ignore_ascii_case(b"text/event-stream");
            }
        }
        Accept {
            json: json || !seen,
            sse,
        }
    }
}

/// Everything after session resolution: the version header here, then the transport-neutral
/// engine (client answers, lifecycle gate, envelope, method table).
async fn in_session(
    state: &Arc<State>,
    record: Arc<SessionRecord>,
    requested: Option<ProtocolVersion>,
    identity: Option<&Identity>,
    sse: bool,
    kind: Kind,
    message: Value,
) -> Result<Outcome, HttpError> {
    let rid = kind.rejection_id();
    if state.config.strict_version_header
        && record.version >= ProtocolVersion::V2025_06_18
        && requested.is_some_and(|v| v != record.version)
    {
        return Err(HttpError::invalid_request(
            StatusCode::BAD_REQUEST,
            rid,
            "Incorrect MCP-Protocol-Version header. Expected the version negotiated during initialize.",
        ));
    }
    let handle = state.handle(&record);
    let engine = Engine {
        store: state.store.as_ref(),
    };
    match engine.in_session(&record, &handle, kind, message).await {
        Ok(Step::Reply(body)) => Ok(Outcome::ok(body)),
        Ok(Step::Accepted) => Ok(Outcome::Accepted),
        Ok(Step::Initialize { id, params }) => {
            initialize(state, id, params.as_ref(), identity).await
        }
        Ok(Step::Call { id, params }) => call_tool(state, record, handle, id, params, sse).await,
        Err(rejected) => Err(rejection(rejected)),
    }
}

/// A refusal of the engine in the HTTP dialect.
fn rejection(rejected: Rejected) -> HttpError {
    match rejected {
        Rejected::Invalid { id, message } => {
            HttpError::invalid_request(StatusCode::BAD_REQUEST, id, message)
        }
        Rejected::MethodNotFound { id } => HttpError::method_not_found(id),
        Rejected::Gone { id } => HttpError::session_not_found(id),
        Rejected::Store { id, error } => store_failure(&id, &error),
    }
}

fn validate(message: &Value, rid: &Value) -> Result<(), HttpError> {
    validate_envelope(message)
        .map_err(|reason| HttpError::invalid_request(StatusCode::BAD_REQUEST, rid.clone(), reason))
}

async fn initialize(
    state: &State,
    id: Value,
    params: Option<&Value>,
    identity: Option<&Identity>,
) -> Result<Outcome, HttpError> {
    let assigns = identity
        .map(|i| {
            let mut assigns = serde_json::Map::new();
            assigns.insert("identity".to_owned(), i.to_value());
            assigns
        })
        .unwrap_or_default();
    let mut record = new_record(params, assigns, identity.map(|i| i.subject().to_owned()));
    let version = record.version;
    if let Some(hooks) = &state.hooks {
        let start = SessionStart {
            session_id: &record.id,
            version,
            client_info: &record.client_info,
            client_capabilities: &record.client_capabilities,
            identity,
        };
        let started = std::panic::AssertUnwindSafe(hooks.on_start(start));
        match futures_util::FutureExt::catch_unwind(started).await {
            Ok(Ok(assigns)) => record.assigns.extend(
                assigns
                    .into_iter()
                    .filter(|(key, _)| !is_internal_assign(key)),
            ),
            Ok(Err(reason)) => {
                tracing::warn!(
                    name: "wymcp.server.reject",
                    server = state.server.info().name.as_str(),
                    session_id = record.id.as_str(),
                    reason = %wymcp_core::bound::echo(&reason),
                    request_id = %wymcp_core::bound::echo(&id.to_string()),
                    "MCP session refused by the server's hook"
                );
                let error = RpcError::new(
                    RpcError::INTERNAL_ERROR,
                    "Internal error",
                    Some(json!({ "reason": reason })),
                );
                return Ok(Outcome::ok(failure(id, &error)));
            }
            Err(payload) => {
                let fault = crate::dispatch::fault::Fault::from_panic(payload.as_ref());
                tracing::error!(
                    name: "wymcp.server.error",
                    server = state.server.info().name.as_str(),
                    session_id = record.id.as_str(),
                    exception = "panic",
                    error = %fault.bounded_message(),
                    request_id = %wymcp_core::bound::echo(&id.to_string()),
                    "the server's session hook panicked"
                );
                let error = RpcError::new(RpcError::INTERNAL_ERROR, "Internal error", None);
                return Ok(Outcome::ok(failure(id, &error)));
            }
        }
    }
    let session = record.id.clone();
    let client_info = wymcp_core::bound::echo(&record.client_info.to_string());
    match state
        .store
        .create(record, state.config.max_sessions, state.config.session_ttl)
        .await
    {
        Ok(()) => {}
        Err(CreateError::Full(max)) => {
            tracing::warn!(max, "MCP session refused: the session limit is reached");
            return Err(HttpError::invalid_request(
                StatusCode::SERVICE_UNAVAILABLE,
                id,
                format!(
                    "Too many sessions: the limit of {max} live sessions is reached. Try again later."
                ),
            ));
        }
        Err(CreateError::Store(err)) => return Err(store_failure(&id, &err)),
    }
    tracing::info!(
        name: "wymcp.session.start",
        session_id = session.as_str(),
        client_info = %client_info,
        version = version.as_str(),
        "MCP session started"
    );
    Ok(Outcome::Reply {
        body: success(id, initialize_result(&state.server, version)),
        status: StatusCode::OK,
        new_session: Some(session),
    })
}

async fn call_tool(
    state: &Arc<State>,
    record: Arc<SessionRecord>,
    handle: SessionHandle,
    id: Value,
    params: Option<Value>,
    sse: bool,
) -> Result<Outcome, HttpError> {
    let assigns = state.live.assigns(&record);
    // Unregistered however the call ends (including the client going away mid-call).
    let (registration, token) = handle.start_call(&id);
    let mut ctx = call_context(
        &record,
        &handle,
        &id,
        params.as_ref(),
        assigns.clone(),
        token.clone(),
    );
    // Request-related messages travel on this POST's SSE stream when the client accepts
    // text/event-stream; otherwise on the session's GET stream (the context's fallback).
    // Only a call answered over SSE opens a stream (and so needs a key for its events).
    let stream_key: Arc<str> = if sse {
        state.live.next_stream_key()
    } else {
        Arc::from("")
    };
    // A plain-JSON answer has no stream for notifications: no channel either.
    let mut notes = None;
    if sse {
        let (notes_tx, rx) = notes::queue();
        notes = Some(rx);
        ctx = ctx.notifier(Notifier::for_stream(
            stream_key.clone(),
            move |message: Value| {
                if notes_tx.send(message) {
                    Delivery::Sent
                } else {
                    Delivery::Disconnected
                }
            },
        ));
    }
    // SSE polling (SEP-1699): the tool may end this stream mid-call.
    let polling = sse && state.config.sse_polling;
    let closer = CancellationToken::new();
    if polling {
        ctx = ctx.stream_closer(closer.clone());
    }
    let server = state.server.clone();
    let ctx = ctx.build();
    let mut call: CallFuture = Box::pin(async move {
        let result = server.tools_call(params, ctx.clone()).await;
        ctx.complete();
        result
    });
    let mut pending = std::collections::VecDeque::new();
    let mut done = false;
    tokio::select! {
        biased;
        // The call is polled first: most calls finish on their first poll, and then no waiter
        // is registered on the cancellation token or the notification queue only to be removed
        // again. A cancellation that raced a call finished at once answers it anyway.
        result = &mut call => {
            // Notifications sent before the call finished still go first, on a stream.
            if let Some(notes) = &mut notes {
                while let Some(note) = notes.try_recv() {
                    pending.push_back(note);
                }
            }
            write_back(state, &record.id, &assigns, Some(&record.assigns)).await;
            if pending.is_empty() {
                drop(registration);
                return Ok(match result {
                    Ok(result) => Outcome::Answer {
                        id,
                        result,
                        version: record.version,
                    },
                    Err(error) => Outcome::ok(failure(id, &error)),
                });
            }
            pending.push_back(answer(id.clone(), result, record.version));
            done = true;
        }
        () = token.cancelled() => return Ok(Outcome::Cancelled),
        Some(note) = next_note(&mut notes) => pending.push_back(note),
        // Closed before anything was sent: the stream opens (priming) and ends at once.
        () = closer.cancelled(), if polling => {}
    }
    let stream = PostStream {
        state: state.clone(),
        session: record.id.clone(),
        stream: stream_key,
        id,
        version: record.version,
        call,
        notes,
        token,
        assigns,
        pending,
        done,
        prime: polling,
        polling,
        closer,
        _registration: registration,
    };
    let body = futures_util::stream::unfold(stream, next_frame)
        .map(Ok::<bytes::Bytes, std::convert::Infallible>);
    Ok(Outcome::Stream(super::service::sse_response(body)))
}

/// The call's next notification or server request; never, when it has no channel.
async fn next_note(notes: &mut Option<NoteReceiver>) -> Option<Value> {
    match notes {
        Some(notes) => Some(notes.recv().await),
        None => std::future::pending().await,
    }
}

type CallFuture = std::pin::Pin<Box<dyn Future<Output = Result<CallToolResult, RpcError>> + Send>>;

fn answer(id: Value, result: Result<CallToolResult, RpcError>, version: ProtocolVersion) -> Value {
    match result {
        Ok(result) => success(id, result.into_value(version)),
        Err(error) => failure(id, &error),
    }
}

/// Writes the assigns back, so the record stays the source of truth for other nodes.
/// `loaded` is what the request loaded with its record: when the assigns still equal it, the
/// call changed nothing and the store is not touched (the common case, and no store round trip).
async fn write_back(
    state: &State,
    session: &str,
    assigns: &SharedAssigns,
    loaded: Option<&serde_json::Map<String, Value>>,
) {
    let snapshot = assigns
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    if loaded.is_some_and(|loaded| *loaded == snapshot) {
        return;
    }
    if let Ok(Some(fresh)) = state.store.load(session, state.config.session_ttl).await
        && fresh.assigns != snapshot
    {
        let mut fresh = Arc::unwrap_or_clone(fresh);
        fresh.assigns = snapshot;
        if let Err(err) = state.store.save(fresh).await {
            tracing::warn!(%err, "could not save the session's assigns");
        }
    }
}

/// A POST answered as SSE: the call's notifications as they come, then its response.
struct PostStream {
    state: Arc<State>,
    session: String,
    stream: Arc<str>,
    id: Value,
    /// The session's revision, for the wire shape of the call's result.
    version: ProtocolVersion,
    call: CallFuture,
    /// The call's notifications and server requests (`None` for a plain-JSON answer).
    notes: Option<NoteReceiver>,
    token: CancellationToken,
    assigns: SharedAssigns,
    /// Messages to send before waiting for more.
    pending: std::collections::VecDeque<Value>,
    /// The call has finished (its response is the last of `pending`).
    done: bool,
    /// The priming event (SEP-1699) is still to be sent.
    prime: bool,
    /// SSE polling is on: `closer` ends the stream while the call goes on.
    polling: bool,
    closer: CancellationToken,
    _registration: RunningCall,
}

/// What the call produced next.
enum Next {
    Message(Value),
    /// The tool closed the stream (SEP-1699).
    Closed,
    /// Finished or cancelled: nothing more.
    End,
}

/// The call's next message: a queued one, a notification or server request, or its response.
async fn next_message(s: &mut PostStream, watch_close: bool) -> Next {
    if let Some(message) = s.pending.pop_front() {
        return Next::Message(message);
    }
    if s.done {
        return Next::End;
    }
    tokio::select! {
        biased;
        // Cancelled: the stream ends without a response.
        () = s.token.cancelled() => Next::End,
        () = s.closer.cancelled(), if watch_close => Next::Closed,
        Some(note) = next_note(&mut s.notes) => Next::Message(note),
        result = &mut s.call => {
            s.done = true;
            write_back(&s.state, &s.session, &s.assigns, None).await;
            if let Some(notes) = &mut s.notes {
                while let Some(note) = notes.try_recv() {
                    s.pending.push_back(note);
                }
            }
            s.pending.push_back(answer(s.id.clone(), result, s.version));
            s.pending.pop_front().map_or(Next::End, Next::Message)
        }
    }
}

async fn next_frame(mut s: PostStream) -> Option<(bytes::Bytes, PostStream)> {
    if s.prime {
        // The priming event: an id to resume from, empty data, the reconnection delay.
        s.prime = false;
        let id = log_event(&s.state, &s.session, &s.stream, String::new()).await;
        let retry = s.state.config.sse_retry;
        return Some((frame(&id, "", retry), s));
    }
    let watch_close = s.polling;
    if watch_close && s.closer.is_cancelled() {
        detach(s);
        return None;
    }
    let message = match next_message(&mut s, watch_close).await {
        Next::Message(message) => message,
        Next::End => return None,
        Next::Closed => {
            detach(s);
            return None;
        }
    };
    let data = message.to_string();
    let event_id = match s
        .state
        .events
        .append(&s.session, &s.stream, data.clone())
        .await
    {
        Ok(id) => id,
        Err(err) => {
            tracing::warn!(%err, "SSE event log failed");
            String::new()
        }
    };
    Some((frame(&event_id, &data, None), s))
}

/// Appends an event of the stream to the event log, answering its id (empty when the log
/// failed).
async fn log_event(state: &State, session: &str, stream: &str, data: String) -> String {
    match state.events.append(session, stream, data).await {
        Ok(id) => id,
        Err(err) => {
            tracing::warn!(%err, "SSE event log failed");
            String::new()
        }
    }
}

/// The tool closed its stream (SEP-1699): the call runs on; everything it sends, its
/// response included, is logged under the stream's key (a GET with `Last-Event-ID` replays
/// it) and handed to a GET stream that resumed this stream.
fn detach(mut s: PostStream) {
    tokio::spawn(async move {
        loop {
            let message = match next_message(&mut s, false).await {
                Next::Message(message) => message,
                Next::Closed | Next::End => break,
            };
            let data = message.to_string();
            let id = log_event(&s.state, &s.session, &s.stream, data.clone()).await;
            if !id.is_empty() {
                s.state.live.deliver_resumed(
                    &s.session,
                    &s.stream,
                    StreamEvent { id: Some(id), data },
                );
            }
        }
    });
}

/// A JSON-RPC batch: 2025-03-26 sessions only.
async fn batch(
    state: &Arc<State>,
    headers: &HeaderMap,
    version: VersionHeader<'_>,
    identity: Option<&Identity>,
    items: Vec<Value>,
) -> Result<Response, HttpError> {
    let requested = version.session_era(&Value::Null)?;
    let record = resolve(state, headers, identity, &Value::Null, None).await?;
    if !record.version.supports_batches() {
        return Err(HttpError::invalid_request(
            StatusCode::BAD_REQUEST,
            Value::Null,
            format!(
                "JSON-RPC batches are not supported by protocol version {}. Send one message per POST.",
                record.version
            ),
        ));
    }
    if items.is_empty() {
        return Err(HttpError::invalid_request(
            StatusCode::BAD_REQUEST,
            Value::Null,
            "Empty batch",
        ));
    }
    let mut replies = Vec::new();
    for item in items {
        let kind = Kind::of(&item);
        let rid = kind.rejection_id();
        let outcome = if kind.method() == Some(Method::Initialize.as_str()) {
            Err(HttpError::invalid_request(
                StatusCode::BAD_REQUEST,
                rid,
                "initialize must not be part of a batch",
            ))
        } else {
            match state.store.load(&record.id, state.config.session_ttl).await {
                Ok(Some(fresh)) => {
                    in_session(state, fresh, requested, identity, false, kind, item).await
                }
                Ok(None) => return Err(HttpError::session_not_found(Value::Null)),
                Err(err) => Err(store_failure(&rid, &err)),
            }
        };
        match outcome {
            Ok(Outcome::Reply { body, .. }) => replies.push(body),
            Ok(Outcome::Answer {
                id,
                result,
                version,
            }) => replies.push(success(id, result.into_value(version))),
            Ok(Outcome::Accepted | Outcome::Cancelled | Outcome::Stream(_)) => {}
            Err(err) => {
                if let ErrorBody::JsonRpc { id, error } = err.body() {
                    replies.push(failure(id.clone(), error));
                }
            }
        }
    }
    if replies.is_empty() {
        Ok(StatusCode::ACCEPTED.into_response())
    } else {
        Ok(json_response(StatusCode::OK, &Value::Array(replies)))
    }
}

#[cfg(test)]
mod tests {
    use axum::http::{HeaderMap, HeaderValue, header};

    use super::Accept;

    fn accept(values: &[&'static str]) -> (bool, bool) {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(header::ACCEPT, HeaderValue::from_static(value));
        }
        let accept = Accept::of(&headers);
        (accept.json, accept.sse)
    }

    #[test]
    fn accept_reads_json_and_event_stream_by_name_wildcard_and_parameters() {
        assert_eq!(
            accept(&["application/json, text/event-stream"]),
            (true, true)
        );
        assert_eq!(
            accept(&["Text/Event-Stream;q=0.9 ,APPLICATION/JSON"]),
            (true, true)
        );
        assert_eq!(
            accept(&["text/event-stream", "application/json"]),
            (true, true)
        );
        assert_eq!(
            accept(&["*/*"]),
            (true, false),
            "a wildcard is not a stream"
        );
        assert_eq!(accept(&["application/*; q=0.5"]), (true, false));
        assert_eq!(accept(&["text/event-stream"]), (false, true));
        assert_eq!(accept(&["application/jsonl, text/*"]), (false, false));
        assert_eq!(accept(&[]), (true, false), "no Accept header accepts JSON");
    }
}
