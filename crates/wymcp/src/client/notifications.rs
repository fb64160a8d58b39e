//! [`Notification`]: a server's notification seen on an answer's SSE stream, and the bounded
//! queue that holds them until the user drains it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use tokio::sync::Notify;

/// A notification the server sent on the SSE stream of an answer, before the response
/// (`notifications/progress`, `notifications/message`, ...), as it came.
///
/// ```no_run
/// # async fn run(client: wymcp::client::Client) {
/// for note in client.drain_notifications() {
///     println!("{}: {:?}", note.method(), note.params());
/// }
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    method: String,
    params: Option<Value>,
    related: Option<Value>,
}

impl Notification {
    /// The method, e.g. `notifications/progress`.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The params, when sent.
    pub fn params(&self) -> Option<&Value> {
        self.params.as_ref()
    }

    /// The `_meta.progressToken` of this client's request the notification was sent for, when
    /// the transport tells (over Streamable HTTP, it came on that request's response stream)
    /// and the request carried one; `None` over stdio and on the session's GET stream. A
    /// relay (a gateway) routes a log message to the call that caused it by this token.
    pub fn related_progress_token(&self) -> Option<&Value> {
        self.related.as_ref()
    }

    /// The notification, sent for the request whose progress token is `related`.
    pub(crate) fn related_to(mut self, related: Option<Value>) -> Notification {
        self.related = related;
        self
    }

    /// Reads a JSON-RPC notification (a `method` and no `id`); `None` for any other message.
    pub(crate) fn of(mut message: Value) -> Option<Notification> {
        let obj = message.as_object_mut()?;
        if obj.contains_key("id") {
            return None;
        }
        let Some(Value::String(method)) = obj.remove("method") else {
            return None;
        };
        Some(Notification {
            method,
            params: obj.remove("params"),
            related: None,
        })
    }
}

/// The user's observer of notifications ([`ClientBuilder::on_notification`](super::ClientBuilder::on_notification)).
pub(crate) type Observer = Arc<dyn Fn(&Notification) + Send + Sync>;

/// At most `max` notifications, oldest first. One that arrives when the queue is full is
/// dropped and counted: a call's answer is never lost because the queue was not drained.
/// With an observer installed, each notification goes to it as it arrives, in order, on the
/// transport's reader (before the reader goes on to the next message, the response of the
/// request it came with included), and none is queued.
pub(crate) struct Queue {
    observer: Option<Observer>,
    items: Mutex<VecDeque<Notification>>,
    max: usize,
    dropped: AtomicU64,
    /// Woken at each notification queued.
    arrived: Notify,
}

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queue")
            .field("observer", &self.observer.is_some())
            .field("max", &self.max)
            .field("dropped", &self.dropped)
            .finish_non_exhaustive()
    }
}

impl Queue {
    pub(crate) fn new(max: usize, observer: Option<Observer>) -> Self {
        Queue {
            observer,
            items: Mutex::new(VecDeque::new()),
            max,
            dropped: AtomicU64::new(0),
            arrived: Notify::new(),
        }
    }

    pub(crate) fn push(&self, note: Notification) {
        if let Some(observer) = &self.observer {
            observer(&note);
            return;
        }
        let mut items = self.items.lock().unwrap_or_else(PoisonError::into_inner);
        if items.len() >= self.max {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        items.push_back(note);
        drop(items);
        self.arrived.notify_waiters();
    }

    /// Counts a notification dropped before it was read (an SSE event over its limit).
    pub(crate) fn count_dropped(&self) {
        self.dropped.fetch_add(1, Ordering::Relaxed);
    }

    /// The oldest notification, waiting for one when none is queued.
    pub(crate) async fn next(&self) -> Notification {
        loop {
            // Registered before the queue is looked at: a push in between still wakes it.
            let arrived = self.arrived.notified();
            let next = self
                .items
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .pop_front();
            if let Some(note) = next {
                return note;
            }
            arrived.await;
        }
    }

    pub(crate) fn drain(&self) -> Vec<Notification> {
        let mut items = self.items.lock().unwrap_or_else(PoisonError::into_inner);
        items.drain(..).collect()
    }

    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use serde_json::json;

    use super::{Notification, Queue};

    #[test]
    fn a_full_queue_drops_and_counts_what_arrives() {
        let queue = Queue::new(2, None);
        for i in 0..3 {
            let note = json!({"jsonrpc": "2.0", "method": "n", "params": {"i": i}});
            queue.push(Notification::of(note).expect("a notification"));
        }
        let kept: Vec<_> = queue.drain().iter().map(|n| n.params().cloned()).collect();
        assert_eq!(kept, [Some(json!({"i": 0})), Some(json!({"i": 1}))]);
        assert_eq!(queue.dropped(), 1);
        assert!(Notification::of(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})).is_none());
    }

    #[test]
    fn an_observer_sees_each_notification_as_it_arrives_and_none_is_queued() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let observer = {
            let seen = Arc::clone(&seen);
            Arc::new(move |note: &Notification| {
                seen.lock()
                    .expect("not poisoned")
                    .push(note.params().cloned());
            })
        };
        let queue = Queue::new(1, Some(observer));
        for i in 0..3 {
            let note = json!({"jsonrpc": "2.0", "method": "n", "params": {"i": i}});
            queue.push(Notification::of(note).expect("a notification"));
            // Seen at once, on the pusher's own thread: before whatever it reads next.
            assert_eq!(seen.lock().expect("not poisoned").len(), i + 1);
        }
        assert!(queue.drain().is_empty());
        assert_eq!(queue.dropped(), 0);
    }
}
