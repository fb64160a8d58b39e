//! The server-wide budget of what `initialize` keeps: each live session's client capabilities
//! and client info, weighed ([`json_weight`](crate::limits::json_weight)) and counted together
//! against [`Limits::max_initialize_params_total`](crate::Limits::max_initialize_params_total),
//! so that the per-session bound (`max_initialize_params`) is an aggregate bound too: without
//! it, 10,000 sessions of 64 KiB capabilities each held about 10 GB (hostile-2026-12-04, N3).
//!
//! Counted per node, for the sessions this node created (what its memory holds); a place is
//! given back when the session ends here or is found gone.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use crate::session::SessionRecord;

/// What the live sessions' `initialize` data weighs together.
#[derive(Debug, Default)]
pub(crate) struct InitializeBudget {
    held: Mutex<Held>,
}

#[derive(Debug, Default)]
struct Held {
    total: usize,
    sessions: HashMap<String, usize>,
}

impl InitializeBudget {
    /// Takes `record`'s weight, unless the sessions would then weigh more than `max` together
    /// (`Err` with what they weigh now).
    pub(crate) fn reserve(&self, record: &SessionRecord, max: usize) -> Result<(), usize> {
        let weight = weight(record);
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        if held.total.saturating_add(weight) > max {
            return Err(held.total);
        }
        held.total += weight;
        if let Some(old) = held.sessions.insert(record.id.clone(), weight) {
            held.total -= old;
        }
        Ok(())
    }

    /// Gives back what session `id` took (nothing when it took nothing).
    pub(crate) fn release(&self, id: &str) {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(weight) = held.sessions.remove(id) {
            held.total -= weight;
        }
    }
}

/// What a session's record keeps of `initialize`: its client capabilities and client info.
fn weight(record: &SessionRecord) -> usize {
    crate::limits::json_weight(&record.client_capabilities)
        .saturating_add(crate::limits::json_weight(&record.client_info))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::Arc;

    use serde_json::{Value, json};

    use super::*;
    use crate::protocol::ProtocolVersion;

    fn record(id: &str, capabilities: Value) -> SessionRecord {
        SessionRecord {
            id: id.into(),
            version: ProtocolVersion::V2025_06_18,
            client_capabilities: Arc::new(capabilities),
            client_info: Arc::new(json!({})),
            initialized: false,
            log_level: None,
            assigns: Default::default(),
            subject: None,
        }
    }

    #[test]
    fn sessions_are_refused_past_the_total_and_admitted_again_once_one_ends() {
        let budget = InitializeBudget::default();
        let one = record("a", json!({"x": 1}));
        let w = weight(&one);
        budget.reserve(&one, 2 * w).unwrap();
        budget
            .reserve(&record("b", json!({"x": 1})), 2 * w)
            .unwrap();
        assert_eq!(
            budget.reserve(&record("c", json!({"x": 1})), 2 * w),
            Err(2 * w)
        );
        budget.release("a");
        budget.release("a");
        budget
            .reserve(&record("c", json!({"x": 1})), 2 * w)
            .unwrap();
    }
}
