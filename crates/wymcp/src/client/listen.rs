//! The session's GET stream over HTTP: opened at connect in the session era, read in a task
//! for as long as the client lives (notifications to the queue, the server's requests to the
//! handlers), reopened with `Last-Event-ID` when it drops so the events sent meanwhile arrive
//! once and in order.

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::HeaderMap;
use tokio::task::JoinHandle;

use super::era::Era;
use super::http::{Connection, Routed};
use super::link::Link;
use super::sse::{Event, SseReader};
use super::{ClientError, Shared};

/// What failures of the GET are named as.
const GET: &str = "GET";

/// The task reading the GET stream; ended when the client is.
#[derive(Debug)]
pub(crate) struct Listener {
    task: JoinHandle<()>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Opens the session's GET stream when the client speaks the session era over HTTP: waits
/// (under the timeout) for the server to accept it, so what the server sends once `connect`
/// returns is not missed. `None` when there is no stream to read: stdio, the stateless era, or
/// a server that answers the GET 405 (it offers none).
pub(crate) async fn start(shared: &Arc<Shared>) -> Option<Listener> {
    let Link::Http(conn) = &shared.link else {
        return None;
    };
    if !matches!(shared.era, Era::Session { .. }) {
        return None;
    }
    let headers = shared.era.headers(GET, None).ok()?;
    let first =
        match tokio::time::timeout(conn.settings.timeout, conn.open_stream(GET, &headers, None))
            .await
        {
            Ok(Err(err)) if final_refusal(&err) => {
                tracing::debug!(error = %err, "the server offers no GET stream");
                return None;
            }
            Ok(opened) => opened,
            Err(_) => Err(ClientError::Timeout {
                method: GET.to_owned(),
                after: conn.settings.timeout,
            }),
        };
    let shared = shared.clone();
    let task = tokio::spawn(async move {
        if let Link::Http(conn) = &shared.link {
            listen(conn, &headers, first).await;
        }
    });
    Some(Listener { task })
}

/// A refusal no retry changes: the server has no GET stream (405) or the session is gone (404).
fn final_refusal(err: &ClientError) -> bool {
    matches!(err.status(), Some(404 | 405))
}

/// Reads the stream, and reopens it after each drop: at most
/// [`max_reconnects`](super::ClientBuilder::max_reconnects) failed attempts in a row, each
/// after the server's `retry` delay (else the configured one).
async fn listen(
    conn: &Connection,
    headers: &HeaderMap,
    first: Result<reqwest::Response, ClientError>,
) {
    let mut reader = SseReader::new(conn.settings.max_event_bytes);
    let mut opened = first;
    let mut failures = 0usize;
    loop {
        match opened {
            Ok(mut response) => {
                failures = 0;
                read(conn, headers, &mut response, &mut reader).await;
                reader.restart();
            }
            Err(err) if final_refusal(&err) => {
                tracing::warn!(error = %err, "the GET stream ended for good");
                return;
            }
            Err(err) => {
                failures += 1;
                if failures > conn.settings.max_reconnects {
                    tracing::warn!(
                        error = %err,
                        max = conn.settings.max_reconnects,
                        "the GET stream could not be reopened (ClientBuilder::max_reconnects): \
                         the server's notifications and requests arrive on answers' streams only"
                    );
                    return;
                }
            }
        }
        let delay: Duration = reader.retry().unwrap_or(conn.settings.reconnect_delay);
        tokio::time::sleep(delay).await;
        opened = conn.open_stream(GET, headers, reader.last_event_id()).await;
    }
}

/// Reads one connection of the stream to its end (or its drop). An event over
/// [`max_event_bytes`](super::ClientBuilder::max_event_bytes) is dropped unheld and counted
/// with the dropped notifications; the stream reads on.
async fn read(
    conn: &Connection,
    headers: &HeaderMap,
    response: &mut reqwest::Response,
    reader: &mut SseReader,
) {
    let mut requests = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        reader.feed(&chunk, |event| {
            match event {
                Event::Data(data) => {
                    if let Routed::Request(request) = conn.route(data, None, None) {
                        requests.push(request);
                    }
                }
                Event::TooLarge => {
                    tracing::warn!(
                        max = conn.settings.max_event_bytes,
                        "an event of the GET stream over one SSE event's size \
                         (ClientBuilder::max_event_bytes): dropped"
                    );
                    conn.notes.count_dropped();
                }
            }
            true
        });
        for request in requests.drain(..) {
            let reply = conn.handlers.answer(request, None).await;
            let sent =
                tokio::time::timeout(conn.settings.timeout, conn.send_reply(GET, &reply, headers))
                    .await;
            match sent {
                Ok(Ok(())) => {}
                Ok(Err(err)) => {
                    tracing::warn!(error = %err, "the answer to the server's request was refused");
                }
                Err(_) => tracing::warn!("the answer to the server's request timed out"),
            }
        }
    }
}
