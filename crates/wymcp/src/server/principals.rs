//! The per-principal parts of [`ServerBuilder`]: what a principal is shown of what it may not
//! call, and the state it keeps.

use std::sync::Arc;

use super::ServerBuilder;
use crate::tool::visibility::Visibility;
use crate::user_state::UserStateStore;

impl ServerBuilder {
    /// Keeps per-principal state in `store` ([`Context::user_state`](crate::Context::user_state);
    /// off unless set): [`InMemoryUserState`](crate::user_state::InMemoryUserState) for one
    /// process, a shared store for several nodes.
    pub fn user_state(mut self, store: impl UserStateStore) -> Self {
        self.user_state = Some(Arc::new(store));
        self
    }

    /// What a caller is shown of the actions and tools whose scopes it lacks (default
    /// [`Visibility::Hide`]); applies to the tools given to this builder (tools added to a
    /// session at run time hide).
    pub fn visibility(mut self, visibility: Visibility) -> Self {
        self.visibility = visibility;
        self
    }
}
