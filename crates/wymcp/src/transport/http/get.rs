//! GET: the session's SSE stream for messages not tied to a request.

use std::collections::HashSet;
use std::convert::Infallible;
use std::sync::Arc;

use std::time::Duration;

use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::Response;
use bytes::Bytes;
use futures_util::stream::{self, Stream, StreamExt as _};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::checks::{WireRefusal, accepts, header_str, plain_refusal, wire_checks};
use super::service::{GET_STREAM, SESSION_NAME, State, VERSION_NAME};
use super::sse;
use super::streams::StreamEvent;
use crate::protocol::ProtocolVersion;
use crate::serve::Class;

/// Detaches the stream from its session when the response body is dropped.
struct Attached {
    state: Arc<State>,
    session: String,
    generation: u64,
}

impl Drop for Attached {
    fn drop(&mut self) {
        self.state
            .streams
            .detach_stream(&self.session, self.generation);
    }
}

pub(crate) async fn handle(state: Arc<State>, req: Request) -> Response {
    match open(state, req).await {
        Ok(response) => response,
        Err(refusal) => plain_refusal(refusal),
    }
}

async fn open(state: Arc<State>, req: Request) -> Result<Response, WireRefusal> {
    let headers = req.headers();
    let identity = wire_checks(&state, headers)
        .await
        .inspect_err(|refusal| refusal.report_auth("GET", None, None))?;
    // The stateless era has no session stream: 405, once the caller passed the wire checks.
    if super::header_names_stateless(headers) {
        return Ok(super::stateless_method_not_allowed());
    }
    if !accepts(headers, "text/event-stream") {
        return Err((
            StatusCode::NOT_ACCEPTABLE,
            "Not Acceptable: the client must accept text/event-stream".to_owned(),
        )
            .into());
    }
    let Some(session) = header_str(headers, &SESSION_NAME) else {
        return Err((
            StatusCode::BAD_REQUEST,
            "Missing mcp-session-id header".to_owned(),
        )
            .into());
    };
    let requested = match header_str(headers, &VERSION_NAME) {
        None => None,
        Some(raw) => match raw.trim().parse::<ProtocolVersion>() {
            Ok(v) if !v.is_stateless() => Some(v),
            _ => {
                return Err((
                    StatusCode::BAD_REQUEST,
                    "Unsupported MCP-Protocol-Version header".to_owned(),
                )
                    .into());
            }
        },
    };
    let core = &state.core;
    let record = core
        .resolve(session, identity.as_ref(), &serde_json::Value::Null, None)
        .await
        .map_err(session_refusal)?;
    core.check_version(&record, requested, &serde_json::Value::Null)
        .map_err(session_refusal)?;
    let last_event_id = if headers.get_all("last-event-id").iter().count() > 1 {
        tracing::warn!("SSE resumption point discarded: duplicated Last-Event-ID header");
        None
    } else {
        header_str(headers, "last-event-id").map(str::to_owned)
    };

    // A GET resuming a POST stream (SEP-1699 polling) carries what that stream's call sends
    // from now on; it attaches before the replay is read, so no event falls in between (an
    // event both replayed and delivered live is written once).
    let resumed = last_event_id
        .as_deref()
        .and_then(|last| last.rsplit_once('.'))
        .map(|(stream, _)| stream)
        .filter(|stream| *stream != GET_STREAM)
        .map(str::to_owned);
    let (tx, rx) = mpsc::unbounded_channel();
    let stop = CancellationToken::new();
    // A stream attaching while the tool list is dirty hears about it right after priming.
    if resumed.is_none()
        && let Some(note) = core.handle(&record).on_stream_attached()
    {
        let _ = tx.send(StreamEvent {
            id: None,
            data: note.to_string(),
        });
    }
    let generation = state
        .streams
        .attach_stream(&record.id, tx, stop.clone(), resumed.clone());

    let mut first = Vec::new();
    if let Some(last) = &last_event_id {
        match state.events.replay_after(&record.id, last).await {
            Ok(Some(missed)) => first.extend(missed.into_iter().filter(|e| !e.data.is_empty())),
            Ok(None) => tracing::warn!(
                last_event_id = %wymcp_core::bound::echo(last),
                "SSE resumption point discarded: unknown or expired event id"
            ),
            Err(err) => tracing::warn!(%err, "SSE replay failed"),
        }
    }
    let replayed: HashSet<String> = first.iter().map(|e| e.id.clone()).collect();
    let attached = Attached {
        state: state.clone(),
        session: record.id.clone(),
        generation,
    };
    // The priming event belongs to the stream resumed, so a later resumption continues it.
    let priming = match state
        .events
        .append(
            &record.id,
            resumed.as_deref().unwrap_or(GET_STREAM),
            String::new(),
        )
        .await
    {
        Ok(id) => id,
        Err(err) => {
            tracing::error!(%err, "SSE event log failed");
            return Err((
                StatusCode::INTERNAL_SERVER_ERROR,
                "Event log unavailable".to_owned(),
            )
                .into());
        }
    };
    let mut head: Vec<Bytes> = first
        .iter()
        .map(|e| sse::event(Some(&e.id), None, &e.data))
        .collect();
    head.push(sse::event(Some(&priming), state.config.sse_retry, ""));
    let body = stream::iter(head)
        .chain(live_events(
            rx,
            stop,
            attached,
            state.config.keepalive,
            replayed,
        ))
        .map(Ok::<Bytes, Infallible>);
    Ok(sse::response(body))
}

/// A refusal of the session's resolution in GET's plain dialect.
fn session_refusal(refusal: crate::serve::Refusal) -> WireRefusal {
    let (status, message) = match refusal.class {
        Class::SessionGone => (StatusCode::NOT_FOUND, "Session not found".to_owned()),
        Class::Store => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "Session store unavailable".to_owned(),
        ),
        _ => (StatusCode::BAD_REQUEST, refusal.reason()),
    };
    (status, message).into()
}

/// Events pushed to the session, with keepalive comments in between, until the stream is
/// replaced, the session ends or the client goes away. Events whose id is in `replayed` were
/// written by the replay already and are skipped.
fn live_events(
    rx: mpsc::UnboundedReceiver<StreamEvent>,
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
                                .events
                                .append(&attached.session, GET_STREAM, data.clone())
                                .await
                            {
                                Ok(id) => id,
                                Err(err) => {
                                    tracing::warn!(%err, "SSE event log failed");
                                    String::new()
                                }
                            };
                            Some(sse::event(Some(&id), None, &data))
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
