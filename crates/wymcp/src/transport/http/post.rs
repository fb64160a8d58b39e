//! POST: one JSON-RPC message (or a 2025-03-26 batch) per request. The request is read and
//! checked here (auth, Origin and Host, `Accept`, `Content-Type`, the body limit, the JSON),
//! its era decided, and its message handed to the serving core; what comes back is written as
//! JSON or, for a call that sends related messages, as an SSE stream ([`super::call`]).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{ConnectInfo, Request};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt;
use serde_json::Value;

use super::accept::Accept;
use super::checks::{header_str, wire_checks};
use super::error::{HttpError, json_bytes_response, json_response};
use super::headers::{SESSION_HEADER, VersionHeader, WireHeaders};
use super::rejection::{
    BodyTimeout, Dialect, JsonNotAccepted, MalformedJson, PayloadTooLarge, Rejection,
    UnreadableBody, UnsupportedMediaType, UnsupportedVersion,
};
use super::state::State;
use crate::protocol::{Kind, headers};
use crate::serve::{Era, Identity, Inbound, Loaded, Outcome, Related, RoutingHeaders};

/// A POST's response. Not an `async fn` (see `service::route`): mapping `process`'s future
/// keeps one copy of the request in the router's box.
pub(crate) fn handle(state: Arc<State>, req: Request) -> impl Future<Output = Response> {
    process(state, req).map(|outcome| outcome.unwrap_or_else(IntoResponse::into_response))
}

async fn process(state: Arc<State>, req: Request) -> Result<Response, HttpError> {
    let (parts, body) = req.into_parts();
    let headers = &parts.headers;
    let wire = WireHeaders::of(headers);
    let identity = match wire_checks(&state, &wire, &parts.uri).await {
        Ok(identity) => identity,
        Err(refusal) => {
            // The body of a caller auth refused is never read: the events carry no request id.
            refusal.report_auth("POST", None, None);
            return Err(refusal.write(Dialect::JsonRpc(Value::Null)));
        }
    };
    let identity = identity.as_ref();
    let accept = Accept::of(&wire);
    check_accept(accept).map_err(refused)?;
    check_content_type(&wire).map_err(refused)?;
    let body = read_body(&state, &wire, body).await.map_err(refused)?;
    let version = wire.version_header();
    let loaded = load_ahead(&state, &wire, version).await;
    let message: Value = serde_json::from_slice(&body).map_err(|_| refused(MalformedJson))?;
    // The era is decided per request: the stateless one never touches the session store.
    // The stateless era and batches run boxed: their futures are several times the size of a
    // session call's, and every POST's future (boxed by the router) would otherwise be as
    // large as the largest of them (see docs/performance-history.md, "Future sizes").
    // The client's address, behind a trusted proxy the forwarded one: a session is counted
    // against it, and so is a listen stream.
    let client = peer(&parts)
        .map(|peer| super::forwarded::client_address(peer, headers, &state.config.trusted_proxies));
    if Era::of(version.names_stateless(), &message) == Era::Stateless {
        let received = (message, body);
        let stateless = stateless_request(&state, &wire, (identity, client), accept, received);
        return Box::pin(stateless).await;
    }
    drop(body);
    let requested = version.session_era().map_err(|raw| {
        let id = Kind::of(&message).rejection_id();
        Rejection::from(UnsupportedVersion::new(raw)).write(Dialect::JsonRpc(id))
    })?;
    let carrier = Headers(&wire);
    let inbound = |message: Value, related: Related| Inbound {
        message,
        era: Era::Session,
        session: wire.session.text(),
        identity,
        related,
        requested,
        // The session era checks no routing header; a request span reads `traceparent`.
        headers: Some(&carrier),
        client,
        loaded,
        raw: None,
    };
    if let Value::Array(items) = message {
        return Box::pin(batch(&state, items, inbound(Value::Null, Related::None))).await;
    }
    let related = related(&state, accept, &message);
    let lease_id = lease_id(&state, &related, &message);
    let outcome = state.core.serve(inbound(message, related)).await?;
    let session = wire.session.text();
    Ok(respond(&state, accept, outcome, (session, lease_id)).await)
}

/// The session a session-era POST names, loaded once its body is read and before it is parsed
/// ([`Core::load`](crate::serve::Core::load) says why); `None` unless the version header names
/// a session-era revision, so that the stateless era never touches the session store. (A
/// body that claims the stateless era under a session-era header has had its session loaded
/// for nothing; a 2025-03-26 client, which sends no version header, has its session loaded
/// where it is resolved.)
async fn load_ahead(
    state: &State,
    wire: &WireHeaders<'_>,
    version: VersionHeader<'_>,
) -> Option<Loaded> {
    let id = wire.session.text()?;
    if !matches!(version.session_era(), Ok(Some(_))) {
        return None;
    }
    Some(state.core.sessions().load(id).await)
}

/// Where a message's related messages go: only a call answered over SSE opens a stream (and so
/// needs a key for its events).
fn related(state: &State, accept: Accept, message: &Value) -> Related {
    if accept.sse && is_call(message) {
        Related::Stream {
            name: state.core.sessions().streams().next_stream_key(),
            polling: state.config.sse_polling,
        }
    } else {
        Related::None
    }
}

/// With other nodes, the id of a call answered on a stream: it names the call in its lease
/// (`serve/lease.rs`).
fn lease_id(state: &State, related: &Related, message: &Value) -> Option<Value> {
    match (state.core.sessions().elsewhere(), related) {
        (Some(_), Related::Stream { .. }) => message.get("id").cloned(),
        _ => None,
    }
}

/// A refusal of the request before its body is parsed: JSON-RPC, id `null`.
fn refused(refusal: impl Into<Rejection>) -> HttpError {
    refusal.into().write(Dialect::JsonRpc(Value::Null))
}

/// A POST's client must take JSON answers.
fn check_accept(accept: Accept) -> Result<(), JsonNotAccepted> {
    match accept.json {
        true => Ok(()),
        false => Err(JsonNotAccepted),
    }
}

/// Whether the message is a `tools/call` request: the only request whose answer may be a
/// stream.
fn is_call(message: &Value) -> bool {
    message.get("method").and_then(Value::as_str) == Some("tools/call")
}

/// Writes what serving the message produced; a call's stream is logged under `session` (the
/// session era's streams are resumable), and leased under its request id when there are other
/// nodes.
async fn respond(
    state: &Arc<State>,
    accept: Accept,
    outcome: Outcome,
    (session, request_id): (Option<&str>, Option<Value>),
) -> Response {
    match outcome {
        Outcome::Accepted => StatusCode::ACCEPTED.into_response(),
        Outcome::Message(answer) => match answer.scopes_needed() {
            Some(scopes) => super::call::step_up(state, scopes, answer.to_bytes()),
            None => json_bytes_response(StatusCode::OK, answer.to_bytes()),
        },
        Outcome::Started { session, message } => {
            let mut response = json_response(StatusCode::OK, &message);
            if let Ok(value) = HeaderValue::from_str(&session) {
                response.headers_mut().insert(SESSION_HEADER, value);
            }
            response
        }
        Outcome::Call(call) => super::call::answer(state, call, session, request_id).await,
        // Boxed: opening a stream awaits the task store, and its future inline would enlarge
        // every request's.
        Outcome::Listen(listen) => Box::pin(super::listen::open(state, accept, listen)).await,
    }
}

/// The headers of a request: the stateless era's routing checks, a span's `traceparent`.
struct Headers<'h>(&'h WireHeaders<'h>);

impl RoutingHeaders for Headers<'_> {
    fn get(&self, name: &str) -> Option<&str> {
        // The three read on every request were found by the one pass; a name given as text
        // is parsed (lower-cased, checked) at its lookup.
        match name {
            headers::PROTOCOL_VERSION => self.0.version.text(),
            headers::METHOD => self.0.method.text(),
            headers::NAME => self.0.name.text(),
            other => header_str(self.0.map, other),
        }
    }
}

/// The connection's address, when the server was given it (`HttpServer` is).
fn peer(parts: &axum::http::request::Parts) -> Option<std::net::IpAddr> {
    let info = parts.extensions.get::<ConnectInfo<SocketAddr>>()?;
    Some(info.0.ip())
}

/// A POST of the stateless era (MCP 2026-07-28): served without a session; nothing is loaded
/// from or written to the session store, and no `Mcp-Session-Id` is minted. The body read is
/// kept with the message (`Inbound::raw`).
async fn stateless_request(
    state: &Arc<State>,
    wire: &WireHeaders<'_>,
    (identity, client): (Option<&Identity>, Option<std::net::IpAddr>),
    accept: Accept,
    (message, body): (Value, bytes::Bytes),
) -> Result<Response, HttpError> {
    let related = if accept.admits_sse && is_call(&message) {
        Related::Stream {
            name: Arc::from("post"),
            polling: false,
        }
    } else {
        Related::None
    };
    let inbound = Inbound {
        message,
        era: Era::Stateless,
        session: None,
        identity,
        related,
        requested: None,
        headers: Some(&Headers(wire)),
        client,
        loaded: None,
        raw: Some(body),
    };
    let outcome = state.core.serve(inbound).await?;
    Ok(respond(state, accept, outcome, (None, None)).await)
}

/// A JSON-RPC batch: 2025-03-26 sessions only.
async fn batch(
    state: &Arc<State>,
    items: Vec<Value>,
    inbound: Inbound<'_>,
) -> Result<Response, HttpError> {
    Ok(match state.core.serve_batch(items, inbound).await? {
        Some(replies) => json_response(StatusCode::OK, &replies),
        None => StatusCode::ACCEPTED.into_response(),
    })
}

fn check_content_type(wire: &WireHeaders<'_>) -> Result<(), UnsupportedMediaType> {
    // What the SDKs send, compared whole before anything is split.
    if wire
        .content_type
        .first
        .is_some_and(|v| v.as_bytes() == b"application/json")
    {
        return Ok(());
    }
    let is_json = wire
        .content_type
        .text()
        .and_then(|v| v.split(';').next())
        .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("application/json"));
    match is_json {
        true => Ok(()),
        false => Err(UnsupportedMediaType),
    }
}

async fn read_body(
    state: &State,
    wire: &WireHeaders<'_>,
    body: Body,
) -> Result<bytes::Bytes, Rejection> {
    let limit = state.config.body_limit;
    let declared = wire
        .content_length
        .text()
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(PayloadTooLarge { limit }.into());
    }
    axum::body::to_bytes(body, limit).await.map_err(|err| {
        let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&err);
        while let Some(e) = source {
            if e.is::<http_body_util::LengthLimitError>() {
                return PayloadTooLarge { limit }.into();
            }
            // Downcast, justified: hyper reports a body's failure as a boxed error chain;
            // which limit ended the read is known only from the source's type.
            if let Some(timed_out) = e.downcast_ref::<super::framed::BodyTimedOut>() {
                let timed_out = *timed_out;
                return BodyTimeout { timed_out }.into();
            }
            source = e.source();
        }
        UnreadableBody.into()
    })
}
