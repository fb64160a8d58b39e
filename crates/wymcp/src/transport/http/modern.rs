//! The stateless era (MCP 2026-07-28) on the same endpoint: a POST whose body carries the
//! `_meta` envelope, or whose `MCP-Protocol-Version` header names 2026-07-28, is served here
//! without a session. Nothing is loaded from or written to the session store, and no
//! `Mcp-Session-Id` is minted.
//!
//! Checks, in order (each with the code the specification gives it): a request, not a batch
//! (400 `-32600`); the method served in this era (404 `-32601`); the envelope (400 `-32602`);
//! `MCP-Protocol-Version` equal to the envelope's revision (400 `-32020`); the revision served
//! (400 `-32022`); `Mcp-Method` and `Mcp-Name` equal to the body, and for `tools/call` each
//! `Mcp-Param-*` its tool's `x-mcp-header` properties call for (400 `-32020`). A tool that
//! asks for a client capability the request did not declare is answered 400 `-32021`.
//!
//! `tools/call`, `prompts/get` and `resources/read` run under a multi round-trip input round
//! ([`crate::mrtr`]): a call waiting for input is answered `input_required`; a bad
//! `requestState` or `inputResponses` is `-32602` with HTTP 200, like every handler error.
//!
//! The era's own checks, handlers and result shaping are transport-neutral
//! ([`crate::stateless`], shared with stdio); what lives here is HTTP's: the header checks
//! between them, the statuses, and SSE framing.

use std::sync::Arc;

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::auth::Identity;
use super::error::{HttpError, json_response};
use super::service::{State, VERSION_HEADER, VERSION_NAME, accepts, header_str};
use crate::protocol::modern::{
    self, Envelope, ModernMethod, PROTOCOL_VERSION_KEY, header_mismatch,
};
use crate::protocol::{Kind, ProtocolVersion, RpcError};
use crate::stateless::{self, Answer, Prepared, Refusal};
use crate::{Context, Delivery, Notifier};

/// The `Mcp-Method` header.
const METHOD_HEADER: &str = "mcp-method";
/// The `Mcp-Name` header.
const NAME_HEADER: &str = "mcp-name";

/// Whether the `MCP-Protocol-Version` header names a stateless revision.
pub(crate) fn header_names_modern(headers: &HeaderMap) -> bool {
    header_str(headers, &VERSION_NAME)
        .and_then(|v| v.trim().parse::<ProtocolVersion>().ok())
        .is_some_and(ProtocolVersion::is_stateless)
}

/// Whether a POST belongs to the stateless era: the header names it (`header_names_modern`,
/// read once by the POST), or the body carries the envelope's `protocolVersion` (whatever its
/// value, so an unsupported one gets `-32022`).
pub(crate) fn applies(header_names_modern: bool, message: &Value) -> bool {
    header_names_modern
        || message
            .get("params")
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get(PROTOCOL_VERSION_KEY))
            .is_some()
}

/// GET and DELETE in the stateless era: 405, there is no session stream to open or end.
pub(crate) fn method_not_allowed() -> Response {
    (
        StatusCode::METHOD_NOT_ALLOWED,
        [(header::ALLOW, "POST")],
        axum::Json(json!({
            "error": "Method Not Allowed: MCP 2026-07-28 is served by POST only"
        })),
    )
        .into_response()
}

/// Serves one stateless POST whose wire checks (auth, Origin/Host, Accept, Content-Type, body
/// limit) already passed: the era's own checks ([`crate::stateless`]) with the header checks
/// between them, then the handler.
pub(crate) async fn handle(
    state: &Arc<State>,
    headers: &HeaderMap,
    identity: Option<&Identity>,
    message: Value,
) -> Result<Response, HttpError> {
    let kind = Kind::of(&message);
    let rid = kind.rejection_id();
    let (id, name) = match kind {
        Kind::Request { id, method } => (id, method),
        // Notifications need no answer; this era has no server requests to answer.
        Kind::Notification { .. } => return Ok(StatusCode::ACCEPTED.into_response()),
        Kind::Response { .. } | Kind::Unknown => {
            return Err(HttpError::invalid_request(
                StatusCode::BAD_REQUEST,
                rid,
                "MCP 2026-07-28 takes one JSON-RPC request per POST",
            ));
        }
    };
    let incoming = stateless::admit(&state.server, id, name, &message).map_err(refused)?;
    let (id, params) = (&incoming.id, incoming.params.as_ref());
    check_headers(
        headers,
        id,
        &incoming.envelope,
        &incoming.name,
        incoming.method,
        params,
    )?;
    let version = incoming.version().map_err(refused)?;
    if incoming.method == ModernMethod::ToolsCall {
        check_param_headers(&state.server, headers, id, params, version)?;
    }
    let principal = identity.map(Identity::subject);
    let mut prepared = match incoming.prepare(&state.server, version, principal) {
        Ok(prepared) => prepared,
        Err(refusal) => return Err(refused(refusal)),
    };
    if let Some(identity) = identity {
        prepared.ctx = prepared.ctx.assign("identity", identity.to_value());
    }
    match prepared.method {
        ModernMethod::ToolsCall => {
            let sse = accepts(headers, "text/event-stream");
            Ok(call_tool(state, prepared, sse).await)
        }
        ModernMethod::SubscriptionsListen => Ok(super::listen::open(
            state,
            headers,
            prepared.id,
            prepared.params.as_ref(),
        )),
        _ => {
            let ctx = prepared.ctx.build();
            let server = &state.server;
            let round = prepared.round.as_deref();
            let result = stateless::execute(server, prepared.method, prepared.params, &ctx, round);
            let result = result.await;
            Ok(respond(call_answer(
                state,
                &ctx,
                &prepared.name,
                prepared.id,
                result,
            )))
        }
    }
}

/// A refusal of the era's checks with its status: 404 for a method not served, 200 for a bad
/// input round (a handler's error), 400 for the rest.
fn refused(refusal: Refusal) -> HttpError {
    let status = match refusal {
        Refusal::MethodNotFound { .. } => StatusCode::NOT_FOUND,
        Refusal::InputRound { .. } => StatusCode::OK,
        Refusal::InvalidRequest { .. }
        | Refusal::Envelope { .. }
        | Refusal::UnsupportedVersion { .. } => StatusCode::BAD_REQUEST,
    };
    HttpError::rpc(status, refusal.id().clone(), refusal.error())
}

/// `MCP-Protocol-Version` equal to the envelope's revision, then `Mcp-Method` and `Mcp-Name`
/// equal to the body: values trimmed, compared case-sensitively.
fn check_headers(
    headers: &HeaderMap,
    id: &Value,
    envelope: &Envelope,
    name: &str,
    method: ModernMethod,
    params: Option<&Value>,
) -> Result<(), HttpError> {
    let header = |key: &str| header_str(headers, key).map(str::trim);
    let expect = |key: &str, shown: &str, body: &str| -> Result<(), HttpError> {
        let sent = header(key);
        if sent == Some(body) {
            Ok(())
        } else {
            Err(bad(id, header_mismatch(shown, sent, body)))
        }
    };
    expect(VERSION_HEADER, "MCP-Protocol-Version", envelope.requested())?;
    expect(METHOD_HEADER, "Mcp-Method", name)?;
    if let Some(key) = method.name_param()
        && let Some(body) = params.and_then(|p| p.get(key)).and_then(Value::as_str)
    {
        expect(NAME_HEADER, "Mcp-Name", body)?;
    }
    Ok(())
}

/// `Mcp-Param-<Suffix>` for every argument whose schema property carries
/// `"x-mcp-header": "<Suffix>"`: present exactly when the argument is, and equal to it once
/// decoded (a string as is, any other value as its JSON text).
fn check_param_headers(
    server: &crate::Server,
    headers: &HeaderMap,
    id: &Value,
    params: Option<&Value>,
    version: ProtocolVersion,
) -> Result<(), HttpError> {
    let Some(name) = params.and_then(|p| p.get("name")).and_then(Value::as_str) else {
        return Ok(());
    };
    let Some(tool) = server.registered().iter().find(|t| t.name == name) else {
        return Ok(());
    };
    let definition = tool.definition.for_version(version);
    let arguments = params.and_then(|p| p.get("arguments"));
    for (argument, suffix) in modern::header_params(&definition["inputSchema"]) {
        let header = format!("Mcp-Param-{suffix}");
        let sent = header_str(headers, header.to_ascii_lowercase()).map(str::trim);
        let body = arguments.and_then(|a| a.get(argument)).map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
        let matches = match (sent, &body) {
            (None, None) => true,
            (Some(sent), Some(body)) => {
                modern::decode_param_header(sent).is_some_and(|decoded| decoded == *body)
            }
            _ => false,
        };
        if !matches {
            let shown = body.as_deref().unwrap_or("<absent>");
            return Err(bad(id, header_mismatch(&header, sent, shown)));
        }
    }
    Ok(())
}

fn bad(id: &Value, error: RpcError) -> HttpError {
    HttpError::rpc(StatusCode::BAD_REQUEST, id.clone(), error)
}

/// What a stateless call produced next.
enum Frame {
    Note(Value),
    Done(Result<Value, RpcError>),
}

/// Runs a `tools/call`: answered as JSON, or (when the tool sends notifications and the client
/// accepts `text/event-stream`) as an SSE stream carrying them, then the response.
async fn call_tool(state: &Arc<State>, prepared: Prepared, sse: bool) -> Response {
    let Prepared {
        id,
        params,
        ctx,
        round,
        ..
    } = prepared;
    let (tx, mut rx) = mpsc::unbounded_channel::<Frame>();
    let mut ctx = ctx;
    if sse {
        let notes = tx.clone();
        ctx = ctx.notifier(Notifier::with_delivery(
            "post",
            move |message: Value| match notes.send(Frame::Note(message)) {
                Ok(()) => Delivery::Sent,
                Err(_) => Delivery::Disconnected,
            },
        ));
    }
    let token = CancellationToken::new();
    let ctx = ctx.cancellation(token.clone()).build();
    let server = state.server.clone();
    let call_ctx = ctx.clone();
    tokio::spawn(async move {
        let method = ModernMethod::ToolsCall;
        let result = stateless::execute(&server, method, params, &call_ctx, round.as_deref()).await;
        call_ctx.complete();
        // The receiver is gone when the client went away: nothing to deliver.
        let _ = tx.send(Frame::Done(result));
    });
    // The call is cancelled when the client goes away before its answer.
    let guard = token.drop_guard();
    match rx.recv().await {
        Some(Frame::Done(result)) => respond(call_answer(state, &ctx, "tools/call", id, result)),
        Some(Frame::Note(first)) => {
            let stream = CallStream {
                state: state.clone(),
                ctx,
                id,
                rx,
                first: Some(first),
                done: false,
                _guard: guard,
            };
            super::service::sse_response(futures_util::stream::unfold(stream, next_frame))
        }
        None => {
            let error = RpcError::new(RpcError::INTERNAL_ERROR, "Internal error", None);
            HttpError::rpc(StatusCode::INTERNAL_SERVER_ERROR, id, error).into_response()
        }
    }
}

/// The call's answer ([`stateless::answer`]): `-32021` is refused with 400.
fn call_answer(
    state: &State,
    ctx: &Context,
    method: &str,
    id: Value,
    result: Result<Value, RpcError>,
) -> Result<Value, HttpError> {
    let hints = &state.config.cache_hints;
    match stateless::answer(&state.server, hints, ctx, method, id, result) {
        Answer::Response(message) => Ok(message),
        Answer::MissingCapability { id, error } => Err(bad(&id, error)),
    }
}

/// A call's answer as JSON (HTTP 200), or its refusal.
fn respond(answer: Result<Value, HttpError>) -> Response {
    match answer {
        Ok(body) => json_response(StatusCode::OK, &body),
        Err(refusal) => refusal.into_response(),
    }
}

/// A stateless call answered as SSE.
struct CallStream {
    state: Arc<State>,
    ctx: Context,
    id: Value,
    rx: mpsc::UnboundedReceiver<Frame>,
    first: Option<Value>,
    done: bool,
    _guard: DropGuard,
}

async fn next_frame(
    mut s: CallStream,
) -> Option<(Result<Bytes, std::convert::Infallible>, CallStream)> {
    if s.done {
        return None;
    }
    let message = match s.first.take() {
        Some(note) => note,
        None => match s.rx.recv().await? {
            Frame::Note(note) => note,
            Frame::Done(result) => {
                s.done = true;
                let (server, hints) = (&s.state.server, &s.state.config.cache_hints);
                stateless::answer(server, hints, &s.ctx, "tools/call", s.id.clone(), result)
                    .into_message()
            }
        },
    };
    let frame = format!("event: message\ndata: {message}\n\n");
    Some((Ok(Bytes::from(frame)), s))
}
