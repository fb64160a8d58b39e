//! A live session's running calls: each one's cancellation token, by request id, so that
//! `notifications/cancelled` can reach it and ending the session stops them all.
//!
//! The registry belongs to the session (inside its [`SessionHandle`]), not to the node: a call
//! registers and unregisters without a session id in its key, and a client choosing request
//! ids can only crowd its own session's table. That is also why the table uses foldhash (fast,
//! randomly seeded) rather than SipHash: the node-wide table it replaces, shared by every
//! session, needed SipHash's resistance to chosen keys.
//!
//! [`SessionHandle`]: crate::SessionHandle

use std::sync::{Mutex, PoisonError};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// The running calls of one session, by request id (a JSON value: `7` and `"7"` are two ids).
#[derive(Debug, Default)]
pub(crate) struct RunningCalls {
    calls: Mutex<Table>,
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

    /// Registers a call by its request id; answers its registration and cancellation token.
    /// A running call with the same id stays running but can no longer be cancelled by id.
    pub(crate) fn start(&self, id: &Value) -> (Registration, CancellationToken) {
        let key = id.clone();
        let token = CancellationToken::new();
        let mut table = self.table();
        table.serial += 1;
        let serial = table.serial;
        table.by_id.insert(
            key.clone(),
            Running {
                token: token.clone(),
                serial,
            },
        );
        (Registration { key, serial }, token)
    }

    /// Unregisters a call (only its own registration: see [`start`](Self::start)).
    pub(crate) fn finish(&self, registration: &Registration) {
        let mut table = self.table();
        if table
            .by_id
            .get(&registration.key)
            .is_some_and(|running| running.serial == registration.serial)
        {
            table.by_id.remove(&registration.key);
        }
    }

    /// Cancels the call with this request id; `false` when none runs.
    pub(crate) fn cancel(&self, id: &Value) -> bool {
        let removed = self.table().by_id.remove(id);
        match removed {
            Some(running) => {
                running.token.cancel();
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
    }

    /// How many calls are registered.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.table().by_id.len()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::RunningCalls;

    #[test]
    fn cancel_reaches_the_call_by_its_id_once() {
        let calls = RunningCalls::default();
        let (_seven, seven) = calls.start(&json!(7));
        let (_text, text) = calls.start(&json!("7"));
        assert!(calls.cancel(&json!(7)));
        assert!(seven.is_cancelled());
        assert!(!text.is_cancelled(), "the string id \"7\" is another call");
        assert!(!calls.cancel(&json!(7)), "already cancelled and removed");
        assert_eq!(calls.len(), 1);
    }

    #[test]
    fn finishing_removes_only_the_calls_own_registration() {
        let calls = RunningCalls::default();
        let (first, _) = calls.start(&json!(1));
        let (second, second_token) = calls.start(&json!(1));
        calls.finish(&first);
        assert_eq!(
            calls.len(),
            1,
            "the later call with the same id stays registered"
        );
        assert!(calls.cancel(&json!(1)));
        assert!(second_token.is_cancelled());
        calls.finish(&second);
        assert_eq!(calls.len(), 0);
    }

    #[test]
    fn cancel_all_stops_every_call_and_empties_the_table() {
        let calls = RunningCalls::default();
        let (_a, a) = calls.start(&json!(1));
        let (_b, b) = calls.start(&json!("b"));
        calls.cancel_all();
        assert!(a.is_cancelled() && b.is_cancelled());
        assert_eq!(calls.len(), 0);
    }
}
