//! A POST whose message became a call, answered: as JSON when the call's answer is its first
//! event (most calls), else as an SSE stream of its related messages and then its answer.
//!
//! In a session the stream is resumable: every event is logged under the stream's key (a GET
//! with `Last-Event-ID` replays it), and with SSE polling (SEP-1699) the stream opens with a
//! priming event and the tool may close it mid-call; what the call sends afterwards is logged
//! and handed to a GET stream that resumed this one. A stateless stream is not resumable: its
//! events carry no id.

use std::convert::Infallible;
use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures_util::StreamExt as _;

use super::error::{HttpError, json_bytes_response};
use super::sse;
use super::state::State;
use crate::serve::{Call, Event, Lease, StreamEvent};

/// The answer to a POST whose message became `call`; `session` names the session whose
/// event log keeps the stream's events (`None`: the stateless era); with other nodes, a
/// stream's call holds a lease under `request_id` while it runs.
pub(crate) async fn answer(
    state: &Arc<State>,
    mut call: Call,
    session: Option<&str>,
    request_id: Option<serde_json::Value>,
) -> Response {
    let first = match call.next().await {
        Event::Finished(Ok(answer)) => {
            if let Some(scopes) = answer.scopes_needed() {
                return step_up(state, scopes, answer.to_bytes());
            }
            return json_bytes_response(StatusCode::OK, answer.to_bytes());
        }
        Event::Finished(Err(refusal)) => return HttpError::from(refusal).into_response(),
        // No JSON-RPC response is sent for a cancelled request.
        Event::Cancelled => return StatusCode::ACCEPTED.into_response(),
        Event::Note(note) => Some(Event::Note(note)),
        // Closed before anything was sent: the stream opens (priming) and ends at once.
        Event::Closed => None,
    };
    let log = session.zip(call.stream_name()).map(|(session, key)| Log {
        session: session.to_owned(),
        key,
    });
    let lease = match (state.core.sessions().elsewhere(), &log, request_id) {
        (Some(elsewhere), Some(log), Some(id)) => {
            let (session, key) = (log.session.clone(), log.key.to_string());
            Some(Lease::hold(elsewhere, session, key, id).await)
        }
        _ => None,
    };
    let stream = CallStream {
        state: state.clone(),
        prime: log.is_some() && call.is_polling(),
        log,
        call,
        first,
        answered: false,
        _lease: lease,
    };
    sse::response(futures_util::stream::unfold(stream, next_frame).map(Ok::<Bytes, Infallible>))
}

/// A request refused for lacking `scopes` (a call's, or a resource's, template's or prompt's:
/// the scope gate's): 403 with the step-up challenge (the MCP authorization spec's
/// `insufficient_scope`, RFC 6750 §3.1), the refusal's JSON-RPC message as the body.
pub(super) fn step_up(state: &State, scopes: &[String], body: Vec<u8>) -> Response {
    let challenge = super::auth::step_up_challenge(&state.config.www_authenticate, scopes);
    let mut response = json_bytes_response(StatusCode::FORBIDDEN, body);
    response
        .headers_mut()
        .insert(axum::http::header::WWW_AUTHENTICATE, challenge);
    response
}

/// Where a session's stream logs its events.
struct Log {
    session: String,
    /// The stream's key in event ids (`post<n>`).
    key: Arc<str>,
}

impl Log {
    /// Appends an event to the log, answering its id (empty when the log failed).
    async fn append(&self, state: &State, data: String) -> String {
        match state
            .core
            .sessions()
            .events()
            .append(&self.session, &self.key, data)
            .await
        {
            Ok(id) => id,
            Err(err) => {
                tracing::warn!(%err, "SSE event log failed");
                String::new()
            }
        }
    }
}

/// A call answered as SSE.
struct CallStream {
    state: Arc<State>,
    log: Option<Log>,
    call: Call,
    /// The event that opened the stream, still to be written.
    first: Option<Event>,
    /// The priming event (SEP-1699) is still to be sent.
    prime: bool,
    /// The answer is written: the stream ends.
    answered: bool,
    /// The call's lease, with other nodes: renewed while the stream (or the detached call)
    /// lives.
    _lease: Option<Lease>,
}

/// The call's next event, as the text an SSE event carries.
enum Message {
    /// A related message.
    Data(String),
    /// The call's answer: the last message.
    Answer(String),
    Cancelled,
    Closed,
}

impl CallStream {
    async fn next_message(&mut self) -> Message {
        // The event that opened the stream goes first.
        let event = match self.first.take() {
            Some(event) => event,
            None => self.call.next().await,
        };
        match event {
            Event::Note(note) => Message::Data(note.to_string()),
            Event::Finished(Ok(answer)) => Message::Answer(answer.into_text()),
            Event::Finished(Err(refusal)) => Message::Answer(refusal.to_message().to_string()),
            Event::Cancelled => Message::Cancelled,
            Event::Closed => Message::Closed,
        }
    }
}

async fn next_frame(mut s: CallStream) -> Option<(Bytes, CallStream)> {
    if s.answered {
        return None;
    }
    if s.prime {
        // The priming event: an id to resume from, empty data, the reconnection delay.
        s.prime = false;
        let log = s.log.as_ref()?;
        let id = log.append(&s.state, String::new()).await;
        if id.is_empty() {
            // Not logged: nothing to resume from, so a comment instead of the priming event.
            return Some((Bytes::from_static(sse::KEEPALIVE), s));
        }
        return Some((sse::event(Some(&id), s.state.config.sse_retry, ""), s));
    }
    if s.call.is_closed() {
        detach(s);
        return None;
    }
    let data = match s.next_message().await {
        Message::Data(data) => data,
        Message::Answer(data) => {
            s.answered = true;
            data
        }
        Message::Cancelled => return None,
        Message::Closed => {
            detach(s);
            return None;
        }
    };
    let frame = match &s.log {
        Some(log) => {
            // An event the log refused goes out without an id: an empty `id:` line would
            // reset the client's last event id.
            let id = log.append(&s.state, data.clone()).await;
            sse::event(Some(id.as_str()).filter(|id| !id.is_empty()), None, &data)
        }
        None => sse::event(None, None, &data),
    };
    Some((frame, s))
}

/// The tool closed its stream (SEP-1699): the call runs on; everything it sends, its
/// response included, is logged under the stream's key (a GET with `Last-Event-ID` replays
/// it) and handed to a GET stream that resumed this stream.
fn detach(mut s: CallStream) {
    let Some(log) = s.log.take() else { return };
    s.call.detach();
    tokio::spawn(async move {
        let mut finished = false;
        while !finished {
            let data = match s.next_message().await {
                Message::Data(data) => data,
                Message::Answer(data) => {
                    finished = true;
                    data
                }
                Message::Cancelled | Message::Closed => break,
            };
            let id = log.append(&s.state, data.clone()).await;
            if !id.is_empty() {
                let event = StreamEvent {
                    id: Some(id.clone()),
                    data: data.clone(),
                };
                let here = (s.state.core.sessions().streams()).deliver_resumed(
                    &log.session,
                    &log.key,
                    event,
                );
                // The GET resuming this stream may be on another node.
                if !here && let Some(elsewhere) = s.state.core.sessions().elsewhere() {
                    let (session, key) = (log.session.clone(), log.key.to_string());
                    elsewhere.send(session, key, id, data).await;
                }
            }
        }
    });
}
