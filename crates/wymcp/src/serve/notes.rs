//! A call's request-related messages (progress, log messages, server requests) on their way to
//! the POST stream that answers it.
//!
//! A queue and a wake-up in one allocation. Every SSE-accepting call makes one, and most tools
//! never notify, so it must cost next to nothing when unused: a channel allocated its block
//! (over a kilobyte, cache-line aligned) up front on every call.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::Value;
use tokio::sync::Notify;

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    ready: Notify,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Value>,
    /// The receiving stream is gone: sends fail from now on.
    closed: bool,
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

/// A fresh, empty queue.
pub(crate) fn queue() -> (NoteSender, NoteReceiver) {
    let shared = Arc::new(Shared::default());
    (NoteSender(shared.clone()), NoteReceiver(shared))
}

impl NoteSender {
    /// Queues a message; `false` when the receiver is gone (the message is dropped).
    pub(crate) fn send(&self, message: Value) -> bool {
        let mut state = self.0.lock();
        if state.closed {
            return false;
        }
        state.queue.push_back(message);
        drop(state);
        self.0.ready.notify_one();
        true
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
        let (tx, mut rx) = queue();
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

    #[test]
    fn a_send_after_the_receiver_is_gone_fails() {
        let (tx, rx) = queue();
        assert!(tx.send(json!("queued")));
        drop(rx);
        assert!(!tx.send(json!("late")));
    }
}
