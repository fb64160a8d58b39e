//! GET: the session's SSE stream for messages not tied to a request.

use std::collections::HashSet;
use std::convert::Infallible;
use std::sync::Arc;

use std::time::Duration;

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Request};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures_util::stream::{self, Stream, StreamExt as _};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::accept::Accept;
use super::checks::{header_str, wire_checks};
use super::forwarded::client_address;
use super::headers::WireHeaders;
use super::rejection::{
    Dialect, EventLogUnavailable, MissingSessionId, Rejection, StatelessMethodNotAllowed,
    StreamNotAccepted, TooManyGetStreams, UnsupportedVersion,
};
use super::sse;
use super::state::State;
use crate::protocol::ProtocolVersion;
use crate::serve::{
    ClientSlot, Identity, LoggedEvent, SessionRecord, StreamEvent, StreamReceiver, StreamSender,
    counted_client,
};

/// The name of a session's GET stream (its standalone stream) in event ids.
pub(crate) const GET_STREAM: &str = "get";

/// Detaches the stream from its session when the response body is dropped (and gives its
/// client's place back).
struct Attached {
    state: Arc<State>,
    session: String,
    generation: u64,
    _client: Option<ClientSlot>,
}

impl Drop for Attached {
    fn drop(&mut self) {
        let streams = self.state.core.sessions().streams();
        streams.detach_stream(&self.session, self.generation);
    }
}

pub(crate) async fn handle(state: Arc<State>, req: Request) -> Response {
    match open(state, req).await {
        Ok(response) => response,
        Err(refusal) => refusal.write(Dialect::Plain).into_response(),
    }
}

async fn open(state: Arc<State>, req: Request) -> Result<Response, Rejection> {
    let headers = req.headers();
    let wire = WireHeaders::of(headers);
    let identity = wire_checks(&state, &wire, req.uri())
        .await
        .inspect_err(|refusal| refusal.report_auth("GET", None, None))?;
    // The stateless era has no session stream: 405, once the caller passed the wire checks.
    if wire.version_header().names_stateless() {
        return Err(StatelessMethodNotAllowed.into());
    }
    let (session, requested) = read_headers(&wire)?;
    let core = &state.core;
    let record = core
        .sessions()
        .resolve(session, identity.as_ref(), (&Value::Null, None), None)
        .await
        .map_err(Rejection::of_stream)?;
    core.check_version(&record, requested, &Value::Null)
        .map_err(Rejection::of_stream)?;
    let client = client_place(&state, &req, identity.as_ref())?;
    let last_event_id = last_event_id(headers);
    // A GET resuming a POST stream (SEP-1699 polling) carries what that stream's call sends
    // from now on; it attaches before the replay is read, so no event falls in between (an
    // event both replayed and delivered live is written once).
    let resumed = resumed_post_stream(last_event_id.as_deref());
    let (tx, rx) = crate::serve::stream_queue(
        state.config.max_stream_queue_bytes,
        "StreamableHttp::max_stream_queue_bytes",
    );
    let stop = CancellationToken::new();
    before_attaching(&state, &record, resumed.as_deref(), &tx, &stop);
    let streams = state.core.sessions().streams();
    let generation = streams.attach_stream(&record.id, tx, stop.clone(), resumed.clone());
    let attached = Attached {
        state: state.clone(),
        session: record.id.clone(),
        generation,
        _client: client,
    };
    let first = replay(&state, &record.id, last_event_id.as_deref()).await;
    let replayed: HashSet<String> = first.iter().map(|e| e.id.clone()).collect();
    // The priming event belongs to the stream resumed, so a later resumption continues it.
    let stream = resumed.as_deref().unwrap_or(GET_STREAM);
    let priming = prime(&state, &record.id, stream).await?;
    let mut head: Vec<Bytes> = first
        .iter()
        .map(|e| sse::event(Some(&e.id), None, &e.data))
        .collect();
    head.push(sse::event(Some(&priming), state.config.sse_retry, ""));
    let keepalive = state.config.keepalive;
    let live = live_events(rx, stop, attached, keepalive, replayed);
    let body = stream::iter(head).chain(live).map(Ok::<Bytes, Infallible>);
    Ok(sse::response(body))
}

/// The stream's place under its client's cap (its principal, else its address, behind a
/// trusted proxy the forwarded one): `None` when the client is not known (a service mounted
/// without the peer's address), a refusal when the client holds its most GET streams.
fn client_place(
    state: &State,
    req: &Request,
    identity: Option<&Identity>,
) -> Result<Option<ClientSlot>, Rejection> {
    let address = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|info| client_address(info.0.ip(), req.headers(), &state.config.trusted_proxies));
    let Some(client) = counted_client(identity, address) else {
        return Ok(None);
    };
    let max = state.config.max_get_streams_per_client;
    match state.get_streams.acquire(client, max) {
        Some(place) => Ok(Some(place)),
        None => {
            tracing::warn!(
                max,
                "GET stream refused: the client's stream limit is reached"
            );
            Err(TooManyGetStreams { max }.into())
        }
    }
}

/// What a stream attaching hears first: the session's dirty tool list (a GET stream), or, with
/// other nodes, the answer of a resumed POST stream's call whose node stopped (watched).
fn before_attaching(
    state: &State,
    record: &SessionRecord,
    resumed: Option<&str>,
    tx: &StreamSender,
    stop: &CancellationToken,
) {
    match resumed {
        None => {
            if let Some(note) = state.core.sessions().handle(record).on_stream_attached() {
                let data = note.to_string();
                let _ = tx.send(StreamEvent { id: None, data });
            }
        }
        Some(stream) => {
            if let Some(elsewhere) = state.core.sessions().elsewhere() {
                let watched = (record.id.as_str().into(), stream.to_owned());
                crate::serve::watch_lease(elsewhere.clone(), watched, tx.clone(), stop.clone());
            }
        }
    }
}

/// `Accept`, `Mcp-Session-Id` and `MCP-Protocol-Version`: the session the GET names and the
/// revision its header names, if any.
fn read_headers<'h>(
    wire: &WireHeaders<'h>,
) -> Result<(&'h str, Option<ProtocolVersion>), Rejection> {
    if !Accept::of(wire).admits_sse {
        return Err(StreamNotAccepted { request: "GET" }.into());
    }
    let Some(session) = wire.session.text() else {
        return Err(MissingSessionId.into());
    };
    match wire.version_header().session_era() {
        Ok(requested) => Ok((session, requested)),
        Err(raw) => Err(UnsupportedVersion::new(raw).into()),
    }
}

/// The POST stream a `Last-Event-ID` resumes (SEP-1699 polling), if it names one.
fn resumed_post_stream(last_event_id: Option<&str>) -> Option<String> {
    let (stream, _) = last_event_id?.rsplit_once('.')?;
    (stream != GET_STREAM).then(|| stream.to_owned())
}

/// Logs the stream's priming event (empty data); answers its id.
async fn prime(state: &State, session: &str, stream: &str) -> Result<String, Rejection> {
    match state
        .core
        .sessions()
        .events()
        .append(session, stream, String::new())
        .await
    {
        Ok(id) => Ok(id),
        Err(err) => {
            tracing::error!(%err, "SSE event log failed");
            Err(EventLogUnavailable.into())
        }
    }
}

/// The `Last-Event-ID` to resume after; a duplicated header is discarded.
fn last_event_id(headers: &HeaderMap) -> Option<String> {
    if headers.get_all("last-event-id").iter().count() > 1 {
        tracing::warn!("SSE resumption point discarded: duplicated Last-Event-ID header");
        return None;
    }
    header_str(headers, "last-event-id").map(str::to_owned)
}

/// The events of the session logged after `last` (priming events left out): what a resuming
/// client missed.
async fn replay(state: &State, session: &str, last: Option<&str>) -> Vec<LoggedEvent> {
    let Some(last) = last else {
        return Vec::new();
    };
    match state
        .core
        .sessions()
        .events()
        .replay_after(session, last)
        .await
    {
        Ok(Some(missed)) => missed.into_iter().filter(|e| !e.data.is_empty()).collect(),
        Ok(None) => {
            tracing::warn!(
                last_event_id = %wymcp_core::bound::echo(last),
                "SSE resumption point discarded: unknown or expired event id"
            );
            Vec::new()
        }
        Err(err) => {
            tracing::warn!(%err, "SSE replay failed");
            Vec::new()
        }
    }
}

/// Events pushed to the session, with keepalive comments in between, until the stream is
/// replaced, the session ends or the client goes away. Events whose id is in `replayed` were
/// written by the replay already and are skipped.
fn live_events(
    rx: StreamReceiver,
    stop: CancellationToken,
    attached: Attached,
    keepalive: Duration,
    replayed: HashSet<String>,
) -> impl Stream<Item = Bytes> + Send {
    let mut ticker = tokio::time::interval_at(
        tokio::time::Instant::now() + keepalive,
        keepalive.max(Duration::from_millis(1)),
    );
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    stream::unfold(
        (rx, stop, attached, ticker),
        move |(mut rx, stop, attached, mut ticker)| {
            let replayed = replayed.clone();
            async move {
                let next = tokio::select! {
                    biased;
                    () = stop.cancelled() => None,
                    event = rx.recv() => match event {
                        Some(StreamEvent { id: Some(id), .. }) if replayed.contains(&id) => {
                            Some(Bytes::new())
                        }
                        Some(StreamEvent { id: Some(id), data }) => {
                            Some(sse::event(Some(&id), None, &data))
                        }
                        Some(StreamEvent { id: None, data }) => {
                            let id = match attached
                                .state
                                .core
                                .sessions()
                                .events()
                                .append(&attached.session, GET_STREAM, data.clone())
                                .await
                            {
                                Ok(id) => Some(id),
                                // Sent without an id: the stream cannot be resumed past it,
                                // and the client's last id stays the last one logged.
                                Err(err) => {
                                    tracing::warn!(%err, "SSE event log failed: sent without an id");
                                    None
                                }
                            };
                            Some(sse::event(id.as_deref(), None, &data))
                        }
                        None => None,
                    },
                    _ = ticker.tick() => Some(Bytes::from_static(sse::KEEPALIVE)),
                };
                next.map(|bytes| (bytes, (rx, stop, attached, ticker)))
            }
        },
    )
}
