//! The open streams of a deployment's sessions on this node ([`Streams`], held by
//! [`Sessions`](super::sessions::Sessions)): each session's standalone stream (Streamable
//! HTTP's GET stream, stdout on stdio), the GET streams resuming a POST stream (SEP-1699), the
//! keys of POST streams; and how many `subscriptions/listen` streams are open ([`Listeners`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio_util::sync::CancellationToken;

use super::stream_queue::StreamSender;
use crate::session::Delivery;

/// One frame for a session's stream: an event id and its JSON data. An event without an id is
/// appended to the event log by the stream as it writes it (keeping the order it was sent in).
#[derive(Debug, Clone)]
pub(crate) struct StreamEvent {
    pub(crate) id: Option<String>,
    pub(crate) data: String,
}

#[derive(Debug)]
pub(crate) struct StreamSlot {
    pub(crate) generation: u64,
    pub(crate) tx: StreamSender,
    pub(crate) stop: CancellationToken,
}

/// The open streams of one endpoint.
#[derive(Debug, Default)]
pub(crate) struct Streams {
    // Keyed by session ids this server made: foldhash, not SipHash.
    streams: Mutex<foldhash::HashMap<String, StreamSlot>>,
    /// GET streams resuming a POST stream the tool closed mid-call (SEP-1699), by session and
    /// POST stream key; they live beside the session's standalone GET stream.
    resumed: Mutex<HashMap<(String, String), StreamSlot>>,
    generation: Mutex<u64>,
    streams_opened: std::sync::atomic::AtomicU64,
}

/// `post<n>`, written straight into the shared string (one allocation, no formatting
/// machinery: every call answered over SSE makes one).
fn stream_key(mut n: u64) -> Arc<str> {
    // The digits are written from the end, then "post" before them: at most 4 + 20 bytes.
    let mut key = [0u8; 24];
    let mut at = key.len();
    loop {
        at -= 1;
        // `n % 10` is a single digit: the cast cannot truncate.
        key[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    at -= 4;
    key[at..at + 4].copy_from_slice(b"post");
    // Only ASCII was written.
    Arc::from(std::str::from_utf8(&key[at..]).unwrap_or("post"))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Streams {
    /// Attaches a GET stream, stopping the one it replaces: the session's standalone stream,
    /// or (`resumed`) the stream resuming that POST stream. Answers the slot's generation.
    pub(crate) fn attach_stream(
        &self,
        session: &str,
        tx: StreamSender,
        stop: CancellationToken,
        resumed: Option<String>,
    ) -> u64 {
        let generation = {
            let mut g = lock(&self.generation);
            *g += 1;
            *g
        };
        let slot = StreamSlot {
            generation,
            tx,
            stop,
        };
        let old = match resumed {
            Some(stream) => lock(&self.resumed).insert((session.to_owned(), stream), slot),
            None => lock(&self.streams).insert(session.to_owned(), slot),
        };
        if let Some(old) = old {
            old.stop.cancel();
        }
        generation
    }

    /// Detaches the stream of `generation`, if it is still the attached one.
    pub(crate) fn detach_stream(&self, session: &str, generation: u64) {
        let mut streams = lock(&self.streams);
        if streams
            .get(session)
            .is_some_and(|s| s.generation == generation)
        {
            streams.remove(session);
        }
        drop(streams);
        lock(&self.resumed).retain(|(s, _), slot| s != session || slot.generation != generation);
    }

    /// The sessions whose GET stream is attached here.
    pub(crate) fn sessions(&self) -> Vec<String> {
        lock(&self.streams).keys().cloned().collect()
    }

    /// Sends to the attached stream; `false` when none is attached or it is gone.
    pub(crate) fn send(&self, session: &str, event: StreamEvent) -> bool {
        self.deliver(session, event) == Delivery::Sent
    }

    /// Sends to the attached stream, saying what became of the event.
    pub(crate) fn deliver(&self, session: &str, event: StreamEvent) -> Delivery {
        let streams = lock(&self.streams);
        match streams.get(session) {
            None => Delivery::NoStream,
            Some(slot) if slot.tx.send(event).is_ok() => Delivery::Sent,
            Some(_) => Delivery::Disconnected,
        }
    }

    /// Sends an event of the detached POST stream `stream` to the session's GET stream, if
    /// that GET stream resumed `stream`.
    pub(crate) fn deliver_resumed(&self, session: &str, stream: &str, event: StreamEvent) -> bool {
        lock(&self.resumed)
            .get(&(session.to_owned(), stream.to_owned()))
            .is_some_and(|slot| slot.tx.send(event).is_ok())
    }

    /// A fresh stream key for a POST answered as SSE (`post<n>`), so its event ids differ from
    /// every other stream's.
    pub(crate) fn next_stream_key(&self) -> Arc<str> {
        let n = self
            .streams_opened
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        stream_key(n)
    }

    /// Stops every open stream (server shutdown).
    pub(crate) fn close_streams(&self) {
        for (_, slot) in lock(&self.streams).drain() {
            slot.stop.cancel();
        }
        for (_, slot) in lock(&self.resumed).drain() {
            slot.stop.cancel();
        }
    }

    /// Ends the session's streams.
    pub(crate) fn end_session(&self, session: &str) {
        if let Some(slot) = lock(&self.streams).remove(session) {
            slot.stop.cancel();
        }
        lock(&self.resumed).retain(|(s, _), slot| {
            if s == session {
                slot.stop.cancel();
            }
            s != session
        });
    }
}

#[cfg(test)]
mod tests {
    use super::stream_key;

    #[test]
    fn stream_keys_read_post_and_the_number() {
        for n in [0, 7, 10, 4_096, u64::MAX] {
            assert_eq!(&*stream_key(n), format!("post{n}"));
        }
    }
}

/// The open listen streams of one service: how many, how many each client holds, and the
/// token that ends them.
#[derive(Debug, Default)]
pub(crate) struct Listeners {
    open: Arc<AtomicUsize>,
    per_client: super::ClientCounts,
    stop: Mutex<CancellationToken>,
}

impl Listeners {
    /// Takes a slot, unless `max` streams are open.
    pub(crate) fn acquire(&self, max: usize) -> Option<Slot> {
        self.open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()?;
        Some(Slot(self.open.clone()))
    }

    /// Takes a place for `client`, unless it holds `max` streams.
    pub(crate) fn acquire_for(&self, client: String, max: usize) -> Option<super::ClientSlot> {
        self.per_client.acquire(client, max)
    }

    /// The token that ends the streams open now.
    pub(crate) fn stop(&self) -> CancellationToken {
        self.stop
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Ends every open stream gracefully; streams opened afterwards are not affected.
    pub(crate) fn close(&self) {
        let old = std::mem::take(&mut *self.stop.lock().unwrap_or_else(PoisonError::into_inner));
        old.cancel();
    }
}

/// One open stream's place under the limit, given back when the stream is dropped.
pub(crate) struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}
