//! A call's request-related messages (progress, log messages, server requests) on their way to
//! the POST stream that answers it.
//!
//! A queue and a wake-up in one allocation. Every SSE-accepting call makes one, and most tools
//! never notify, so it must cost next to nothing when unused: a channel allocated its block
//! (over a kilobyte, cache-line aligned) up front on every call.
//!
//! The queue is bounded ([`Limits::max_queued_notes`](crate::Limits::max_queued_notes)): a
//! client that reads its stream slowly, or not at all, must not make the server hold every
//! note a chatty tool sends (a slow reader of three calls sending 300,000 progress notes each
//! grew the server by 1.4 GB). When the queue is full, the oldest queued notification
//! (progress, a log message) makes room for the new message: the newest progress is the one
//! that says where the call is. A server→client request is never dropped (the call waits for
//! its answer); a notification finding only requests queued is dropped itself. Each drop is
//! counted, and logged once per call.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::Value;
use tokio::sync::Notify;

struct Shared {
    state: Mutex<State>,
    ready: Notify,
    /// Most messages queued at once (requests excepted: they are never dropped).
    max: usize,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Value>,
    /// The receiving stream is gone: sends fail from now on.
    closed: bool,
    /// Notifications dropped to keep the queue within its bound.
    dropped: u64,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The sending half, held by the call's notifier.
#[derive(Clone)]
pub(crate) struct NoteSender(Arc<Shared>);

/// The receiving half, held by the POST; dropping it makes every later send fail.
pub(crate) struct NoteReceiver(Arc<Shared>);

/// A fresh, empty queue of at most `max` messages (at least one).
pub(crate) fn queue(max: usize) -> (NoteSender, NoteReceiver) {
    let shared = Arc::new(Shared {
        state: Mutex::default(),
        ready: Notify::new(),
        max: max.max(1),
    });
    (NoteSender(shared.clone()), NoteReceiver(shared))
}

/// A JSON-RPC notification (no `id`): progress, a log message. Anything else is a request.
fn is_notification(message: &Value) -> bool {
    message.get("id").is_none()
}

impl NoteSender {
    /// Queues a message; `false` when the receiver is gone (the message is dropped). A full
    /// queue drops its oldest notification for it, or the message itself when it is a
    /// notification and only requests are queued (`true` all the same: the stream is there).
    pub(crate) fn send(&self, message: Value) -> bool {
        let mut state = self.0.lock();
        if state.closed {
            return false;
        }
        if state.queue.len() >= self.0.max {
            let oldest = state.queue.iter().position(is_notification);
            match oldest {
                Some(at) => {
                    state.queue.remove(at);
                }
                None if is_notification(&message) => {
                    dropped(&mut state, self.0.max);
                    return true;
                }
                // A request is queued beyond the bound: the call waits for its answer.
                None => {}
            }
            if oldest.is_some() {
                dropped(&mut state, self.0.max);
            }
        }
        state.queue.push_back(message);
        drop(state);
        self.0.ready.notify_one();
        true
    }
}

/// Counts a dropped notification; the first of a call is logged.
fn dropped(state: &mut State, max: usize) {
    state.dropped += 1;
    if state.dropped == 1 {
        tracing::warn!(
            max,
            "a call's notes outran its stream: the oldest notifications are dropped \
             (Limits::max_queued_notes)"
        );
    }
}

impl NoteReceiver {
    /// The next queued message, if any, without waiting.
    pub(crate) fn try_recv(&mut self) -> Option<Value> {
        self.0.lock().queue.pop_front()
    }

    /// The next message, waiting for one.
    pub(crate) async fn recv(&mut self) -> Value {
        let shared = &self.0;
        loop {
            // `notify_one` leaves a permit when nobody waits yet, so a send between the look
            // and the wait is not missed.
            let ready = shared.ready.notified();
            if let Some(message) = shared.lock().queue.pop_front() {
                return message;
            }
            ready.await;
        }
    }
}

impl Drop for NoteReceiver {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.closed = true;
        state.queue.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn messages_arrive_in_order_and_wake_a_waiting_receiver() {
        let (tx, mut rx) = queue(8);
        assert!(rx.try_recv().is_none());
        let waiting = tokio::spawn(async move {
            let first = rx.recv().await;
            let second = rx.recv().await;
            (first, second, rx)
        });
        tokio::task::yield_now().await;
        assert!(tx.send(json!(1)));
        assert!(tx.send(json!(2)));
        let (first, second, mut rx) = waiting.await.expect("the receiver finishes");
        assert_eq!((first, second), (json!(1), json!(2)));
        assert!(rx.try_recv().is_none());
    }

    fn progress(n: u64) -> Value {
        json!({"jsonrpc": "2.0", "method": "notifications/progress",
               "params": {"progressToken": "t", "progress": n}})
    }

    #[test]
    fn a_full_queue_keeps_the_newest_notifications() {
        let (tx, mut rx) = queue(3);
        for n in 1..=10 {
            assert!(tx.send(progress(n)), "the stream is there");
        }
        let kept: Vec<Value> = std::iter::from_fn(|| rx.try_recv()).collect();
        assert_eq!(kept, [progress(8), progress(9), progress(10)]);
        assert_eq!(tx.0.lock().dropped, 7);
    }

    #[test]
    fn a_request_is_never_dropped_and_notifications_make_room_for_it() {
        let (tx, mut rx) = queue(2);
        let ask = |id: u64| json!({"jsonrpc": "2.0", "id": id, "method": "sampling/createMessage"});
        assert!(tx.send(progress(1)));
        assert!(tx.send(ask(1)));
        // Full: the progress note makes room for the second request.
        assert!(tx.send(ask(2)));
        // Only requests queued: a third request goes beyond the bound, a notification is dropped.
        assert!(tx.send(ask(3)));
        assert!(tx.send(progress(2)));
        let kept: Vec<Value> = std::iter::from_fn(|| rx.try_recv()).collect();
        assert_eq!(kept, [ask(1), ask(2), ask(3)]);
    }

    #[test]
    fn a_send_after_the_receiver_is_gone_fails() {
        let (tx, rx) = queue(8);
        assert!(tx.send(json!("queued")));
        drop(rx);
        assert!(!tx.send(json!("late")));
    }
}
