//! The user-state part of [`ServerBuilder`].

use std::sync::Arc;

use super::ServerBuilder;
use crate::user_state::UserStateStore;

impl ServerBuilder {
    /// Keeps per-principal state in `store` ([`Context::user_state`](crate::Context::user_state);
    /// off unless set): [`InMemoryUserState`](crate::user_state::InMemoryUserState) for one
    /// process, a shared store for several nodes.
    pub fn user_state(mut self, store: impl UserStateStore) -> Self {
        self.user_state = Some(Arc::new(store));
        self
    }
}
