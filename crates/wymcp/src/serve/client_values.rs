//! The client capabilities and client info that `initialize` keeps, shared between sessions
//! that sent the same ones.
//!
//! A session's record keeps its client's `capabilities` and `clientInfo` for as long as it
//! lives. Sessions of one client program send the same few small objects, and each object,
//! parsed, costs about 0.7 KiB (a `serde_json::Map` node is allocated for 11 members however
//! few it holds): shared, 10,000 idle sessions of one client take about 7 MiB less
//! (docs/performance.md, "What a session holds"). Values are shared only when small
//! ([`MAX_SHARED_TEXT`]), and at most [`MAX_SHARED`] are kept for sharing, so what this table
//! holds for itself is bounded; a value never seen before is kept for its session as before.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

/// At most this many values are kept for sharing (each one's sessions share it).
pub(crate) const MAX_SHARED: usize = 16;

/// Values longer than this as JSON text are not shared: each session keeps its own.
pub(crate) const MAX_SHARED_TEXT: usize = 1024;

/// Recently kept client values, each shared by the sessions that sent an equal one.
#[derive(Debug, Default)]
pub(crate) struct ClientValues {
    kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    values: Vec<Arc<Value>>,
    /// The slot the next new value replaces once `values` is full.
    next: usize,
}

impl ClientValues {
    /// `value` as a session keeps it: the one already kept when an equal value is, else a new
    /// one (kept for the next sessions when small).
    pub(crate) fn share(&self, value: &Value) -> Arc<Value> {
        if crate::limits::json_longer_than(value, MAX_SHARED_TEXT) {
            return Arc::new(value.clone());
        }
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(same) = kept.values.iter().find(|kept| ***kept == *value) {
            return same.clone();
        }
        let new = Arc::new(value.clone());
        if kept.values.len() < MAX_SHARED {
            kept.values.push(new.clone());
        } else {
            let slot = kept.next;
            kept.values[slot] = new.clone();
            kept.next = (slot + 1) % MAX_SHARED;
        }
        new
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn equal_values_are_one_allocation_and_different_ones_are_not() {
        let values = ClientValues::default();
        let a = values.share(&json!({"name": "claude", "version": "1.0"}));
        let b = values.share(&json!({"name": "claude", "version": "1.0"}));
        let c = values.share(&json!({"name": "claude", "version": "1.1"}));
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(*c, json!({"name": "claude", "version": "1.1"}));
    }

    #[test]
    fn large_values_are_not_kept_for_sharing() {
        let values = ClientValues::default();
        let large = json!({"name": "x".repeat(MAX_SHARED_TEXT)});
        let a = values.share(&large);
        let b = values.share(&large);
        assert_eq!(a, b);
        assert!(!Arc::ptr_eq(&a, &b));
        assert!(
            values
                .kept
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .values
                .is_empty()
        );
    }

    #[test]
    fn at_most_max_shared_values_are_kept_the_oldest_replaced_first() {
        let values = ClientValues::default();
        let first = values.share(&json!({"n": 0}));
        for n in 1..=MAX_SHARED {
            values.share(&json!({ "n": n }));
        }
        let kept = values
            .kept
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values
            .len();
        assert_eq!(kept, MAX_SHARED);
        // `{"n": 0}` was the oldest: replaced, so a new one is not the first one.
        assert!(!Arc::ptr_eq(&first, &values.share(&json!({"n": 0}))));
        // `{"n": 2}` is still kept.
        let two = values.share(&json!({"n": 2}));
        assert!(Arc::ptr_eq(&two, &values.share(&json!({"n": 2}))));
    }
}
