//! The one registry of running calls: each one's cancellation token, by request id, so that
//! `notifications/cancelled` can reach it and ending the session (or the connection) stops
//! them all. A session has one (inside its [`SessionHandle`]); so has a stdio connection for
//! its stateless requests.
//!
//! The registry belongs to the session (inside its [`SessionHandle`]), not to the node: a call
//! registers and unregisters without a session id in its key, and a client choosing request
//! ids can only crowd its own session's table. That is also why the table uses foldhash (fast,
//! randomly seeded) rather than SipHash: the node-wide table it replaces, shared by every
//! session, needed SipHash's resistance to chosen keys.
//!
//! [`SessionHandle`]: crate::SessionHandle

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// The running calls of one session or connection, by request id (a JSON value: `7` and `"7"`
/// are two ids).
#[derive(Debug, Default)]
pub(crate) struct RunningCalls {
    calls: Mutex<Table>,
    /// Signalled whenever a call finishes (see [`RunningCalls::drained`]).
    finished: Notify,
}

/// What is registered: a call, or a `subscriptions/listen` stream (which ends gracefully when
/// its connection does, so [`RunningCalls::cancel_calls`] and [`RunningCalls::drained`] leave
/// it out).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Work {
    Call,
    Listen,
}

/// A registered call: dropping it unregisters the call, however the call ends.
#[derive(Debug)]
pub(crate) struct RunningCall {
    calls: Arc<RunningCalls>,
    registration: Registration,
}

impl Drop for RunningCall {
    fn drop(&mut self) {
        self.calls.finish(&self.registration);
    }
}

#[derive(Debug, Default)]
struct Table {
    by_id: foldhash::HashMap<Value, Running>,
    /// Registrations so far: tells a call's own registration from a later call that reused its
    /// request id (the later one replaces it; the earlier call's end must not remove it).
    serial: u64,
}

#[derive(Debug)]
struct Running {
    token: CancellationToken,
    serial: u64,
    work: Work,
}

/// One call's place in [`RunningCalls`], for [`RunningCalls::finish`].
#[derive(Debug)]
pub(crate) struct Registration {
    key: Value,
    serial: u64,
}

impl RunningCalls {
    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a call by its request id; answers its registration (dropping it unregisters
    /// the call) and its cancellation token. A running call with the same id stays running but
    /// can no longer be cancelled by id.
    pub(crate) fn start(
        self: &Arc<Self>,
        id: &Value,
        work: Work,
    ) -> (RunningCall, CancellationToken) {
        self.start_within(id, work, usize::MAX)
            .expect("no cap: a registration always succeeds")
    }

    /// [`start`](Self::start), unless `max` calls are registered already (`None`): the count
    /// and the registration under one lock, so concurrent calls cannot pass the cap together.
    pub(crate) fn start_within(
        self: &Arc<Self>,
        id: &Value,
        work: Work,
        max: usize,
    ) -> Option<(RunningCall, CancellationToken)> {
        let (registration, token) = self.register(id, work, max)?;
        let call = RunningCall {
            calls: self.clone(),
            registration,
        };
        Some((call, token))
    }

    fn register(
        &self,
        id: &Value,
        work: Work,
        max: usize,
    ) -> Option<(Registration, CancellationToken)> {
        let mut table = self.table();
        if table.by_id.len() >= max {
            return None;
        }
        let key = id.clone();
        let token = CancellationToken::new();
        table.serial += 1;
        let serial = table.serial;
        table.by_id.insert(
            key.clone(),
            Running {
                token: token.clone(),
                serial,
                work,
            },
        );
        Some((Registration { key, serial }, token))
    }

    /// Unregisters a call (only its own registration: see [`start`](Self::start)).
    fn finish(&self, registration: &Registration) {
        let mut table = self.table();
        if table
            .by_id
            .get(&registration.key)
            .is_some_and(|running| running.serial == registration.serial)
        {
            table.by_id.remove(&registration.key);
        }
        drop(table);
        self.finished.notify_waiters();
    }

    /// Cancels every running call but the listen streams (they end gracefully instead).
    pub(crate) fn cancel_calls(&self) {
        let mut table = self.table();
        table.by_id.retain(|_, running| {
            let call = running.work == Work::Call;
            if call {
                running.token.cancel();
            }
            !call
        });
        drop(table);
        self.finished.notify_waiters();
    }

    /// Resolves once no call (listen streams aside) is registered.
    pub(crate) async fn drained(&self) {
        loop {
            let finished = self.finished.notified();
            if !self.table().by_id.values().any(|r| r.work == Work::Call) {
                return;
            }
            finished.await;
        }
    }

    /// Cancels the call with this request id; `false` when none runs.
    pub(crate) fn cancel(&self, id: &Value) -> bool {
        let removed = self.table().by_id.remove(id);
        match removed {
            Some(running) => {
                running.token.cancel();
                self.finished.notify_waiters();
                true
            }
            None => false,
        }
    }

    /// Cancels every running call (the session ended).
    pub(crate) fn cancel_all(&self) {
        let calls = std::mem::take(&mut self.table().by_id);
        for running in calls.into_values() {
            running.token.cancel();
        }
        self.finished.notify_waiters();
    }

    /// Whether a call (listen streams aside) is registered.
    pub(crate) fn is_busy(&self) -> bool {
        self.table().by_id.values().any(|r| r.work == Work::Call)
    }

    /// How many calls are registered.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.table().by_id.len()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::{RunningCalls, Work};

    #[test]
    fn concurrent_starts_never_pass_the_cap() {
        // Eight threads start calls with distinct ids against a cap of 4, over and over: the
        // count and the registration are one step, so no more than 4 are ever registered.
        const CAP: usize = 4;
        let calls = Arc::new(RunningCalls::default());
        for round in 0..200_u64 {
            let started: Vec<_> = std::thread::scope(|scope| {
                let handles: Vec<_> = (0..8_u64)
                    .map(|t| {
                        let calls = calls.clone();
                        scope.spawn(move || {
                            calls.start_within(&json!(round * 8 + t), Work::Call, CAP)
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .filter_map(|h| h.join().ok().flatten())
                    .collect()
            });
            assert_eq!(
                started.len(),
                CAP,
                "round {round}: {} started",
                started.len()
            );
            assert_eq!(calls.len(), CAP);
            drop(started);
            assert_eq!(calls.len(), 0);
        }
    }

    #[test]
    fn cancel_reaches_the_call_by_its_id_once() {
        let calls = Arc::new(RunningCalls::default());
        let (_seven, seven) = calls.start(&json!(7), Work::Call);
        let (_text, text) = calls.start(&json!("7"), Work::Call);
        assert!(calls.cancel(&json!(7)));
        assert!(seven.is_cancelled());
        assert!(!text.is_cancelled(), "the string id \"7\" is another call");
        assert!(!calls.cancel(&json!(7)), "already cancelled and removed");
        assert_eq!(calls.len(), 1);
    }

    #[test]
    fn finishing_removes_only_the_calls_own_registration() {
        let calls = Arc::new(RunningCalls::default());
        let (first, _) = calls.start(&json!(1), Work::Call);
        let (second, second_token) = calls.start(&json!(1), Work::Call);
        drop(first);
        assert_eq!(
            calls.len(),
            1,
            "the later call with the same id stays registered"
        );
        assert!(calls.cancel(&json!(1)));
        assert!(second_token.is_cancelled());
        drop(second);
        assert_eq!(calls.len(), 0);
    }

    #[test]
    fn cancel_all_stops_every_call_and_empties_the_table() {
        let calls = Arc::new(RunningCalls::default());
        let (_a, a) = calls.start(&json!(1), Work::Call);
        let (_b, b) = calls.start(&json!("b"), Work::Call);
        calls.cancel_all();
        assert!(a.is_cancelled() && b.is_cancelled());
        assert_eq!(calls.len(), 0);
    }

    #[tokio::test]
    async fn listen_streams_are_neither_cancelled_nor_waited_for_with_the_calls() {
        let calls = Arc::new(RunningCalls::default());
        let (call, call_token) = calls.start(&json!(1), Work::Call);
        let (_listen, listen_token) = calls.start(&json!(2), Work::Listen);
        let waiting = tokio::spawn({
            let calls = calls.clone();
            async move { calls.drained().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "a call still runs");
        drop(call);
        waiting.await.expect("drained once the call finished");
        calls.cancel_calls();
        assert!(!call_token.is_cancelled(), "it finished before");
        assert!(
            !listen_token.is_cancelled(),
            "a listen stream ends gracefully"
        );
        assert_eq!(calls.len(), 1);
    }
}
