//! The queue between what a stream is sent (a session's standalone stream: Streamable HTTP's
//! GET stream, or stdout on stdio) and the writer that sends it on to a client, bounded in
//! bytes: a client that reads slower than the server sends (or not at all) cannot make the
//! server hold its events without limit (hostile-2026-12-04, N5's GET stream and stdout).
//!
//! Past the bound the queue is closed, never waited on: the writer sees the end at once (the
//! events still queued are dropped), the stream ends, and the first sender that met the bound
//! logs why (a `tracing` warning naming the limit). A GET stream's events are in the event log,
//! so the client resumes them with `Last-Event-ID`; on stdio the connection ends.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::streams::StreamEvent;

/// What one queued event costs beside its data (the event, its id, the channel's slot).
const EVENT_OVERHEAD: usize = 64;

/// A queue of at most `max_bytes` of events (each counted as its data and id plus 64 bytes),
/// whose overflow is reported naming `limit` (the setting, such as
/// `StreamableHttp::max_stream_queue_bytes`).
pub(crate) fn stream_queue(
    max_bytes: usize,
    limit: &'static str,
) -> (StreamSender, StreamReceiver) {
    let (tx, rx) = mpsc::unbounded_channel();
    let shared = Arc::new(Queued {
        bytes: AtomicUsize::new(0),
        max_bytes,
        limit,
        overflowed: AtomicBool::new(false),
        overflow: CancellationToken::new(),
    });
    (
        StreamSender {
            tx,
            queued: shared.clone(),
        },
        StreamReceiver { rx, queued: shared },
    )
}

#[derive(Debug)]
struct Queued {
    bytes: AtomicUsize,
    max_bytes: usize,
    limit: &'static str,
    overflowed: AtomicBool,
    /// Cancelled when the queue overflows (a writer blocked on its client wakes up).
    overflow: CancellationToken,
}

/// Why an event was not queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotQueued {
    /// The writer is gone (the stream ended).
    Closed,
    /// The queue was full: it is closed now.
    Overflowed,
}

/// The sending side; cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct StreamSender {
    tx: mpsc::UnboundedSender<StreamEvent>,
    queued: Arc<Queued>,
}

impl StreamSender {
    /// Queues `event`, unless the writer is gone or the queue would pass its bound (which
    /// closes it).
    pub(crate) fn send(&self, event: StreamEvent) -> Result<(), NotQueued> {
        let queued = &self.queued;
        if queued.overflowed.load(Ordering::Acquire) || self.tx.is_closed() {
            return Err(NotQueued::Closed);
        }
        let cost = cost(&event);
        let before = queued.bytes.fetch_add(cost, Ordering::AcqRel);
        if before.saturating_add(cost) > queued.max_bytes {
            queued.bytes.fetch_sub(cost, Ordering::AcqRel);
            if !queued.overflowed.swap(true, Ordering::AcqRel) {
                queued.overflow.cancel();
                tracing::warn!(
                    name: "wymcp.stream.overflow",
                    queued_bytes = before,
                    limit = queued.limit,
                    "stream closed: its client reads slower than the server sends; more than \
                     {} bytes of events waited to be written ({})",
                    queued.max_bytes,
                    queued.limit
                );
            }
            return Err(NotQueued::Overflowed);
        }
        self.tx.send(event).map_err(|_| {
            queued.bytes.fetch_sub(cost, Ordering::AcqRel);
            NotQueued::Closed
        })
    }
}

/// The writer's side.
#[derive(Debug)]
pub(crate) struct StreamReceiver {
    rx: mpsc::UnboundedReceiver<StreamEvent>,
    queued: Arc<Queued>,
}

impl StreamReceiver {
    /// Resolves once the queue overflowed: a writer waiting on a client that does not read
    /// races its write against this, and stops.
    pub(crate) async fn overflowed(&self) {
        self.queued.overflow.cancelled().await;
    }

    /// The next event; `None` once every sender is gone or the queue overflowed.
    pub(crate) async fn recv(&mut self) -> Option<StreamEvent> {
        if self.queued.overflowed.load(Ordering::Acquire) {
            self.rx.close();
            return None;
        }
        let event = self.rx.recv().await?;
        self.queued.bytes.fetch_sub(cost(&event), Ordering::AcqRel);
        if self.queued.overflowed.load(Ordering::Acquire) {
            self.rx.close();
            return None;
        }
        Some(event)
    }
}

fn cost(event: &StreamEvent) -> usize {
    let id = event.id.as_ref().map_or(0, String::len);
    event.data.len() + id + EVENT_OVERHEAD
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn event(data: &str) -> StreamEvent {
        StreamEvent {
            id: None,
            data: data.to_owned(),
        }
    }

    #[tokio::test]
    async fn a_queue_past_its_bound_closes_and_its_reader_sees_the_end() {
        let (tx, mut rx) = stream_queue(2 * (EVENT_OVERHEAD + 10), "Test::limit");
        tx.send(event("0123456789")).unwrap();
        tx.send(event("0123456789")).unwrap();
        assert_eq!(tx.send(event("x")), Err(NotQueued::Overflowed));
        assert_eq!(tx.send(event("x")), Err(NotQueued::Closed));
        assert!(rx.recv().await.is_none());
    }

    #[tokio::test]
    async fn what_is_read_makes_room() {
        let (tx, mut rx) = stream_queue(EVENT_OVERHEAD + 10, "Test::limit");
        for _ in 0..100 {
            tx.send(event("0123456789")).unwrap();
            assert_eq!(rx.recv().await.unwrap().data, "0123456789");
        }
        drop(tx);
        assert!(rx.recv().await.is_none());
    }
}
