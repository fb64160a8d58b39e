//! The calling principal's user state ([`crate::user_state`]).

use super::Context;
use crate::user_state::UserState;

impl Context {
    /// The calling principal's state, kept across requests, sessions and both eras by the
    /// server's store ([`Backends::user_state`](crate::backend::Backends::user_state)):
    /// [`UserState::get`], [`set`](UserState::set), [`remove`](UserState::remove). Each
    /// answers [`UserStateError::NoPrincipal`](crate::user_state::UserStateError::NoPrincipal)
    /// for an unauthenticated caller and
    /// [`NotConfigured`](crate::user_state::UserStateError::NotConfigured) without a store.
    ///
    /// ```
    /// use wymcp::Context;
    /// use wymcp::user_state::UserStateError;
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let answer = Context::default().user_state().set("k", serde_json::json!(1)).await;
    /// assert_eq!(answer, Err(UserStateError::NotConfigured));
    /// # });
    /// ```
    pub fn user_state(&self) -> UserState<'_> {
        UserState::new(self.inner.user_state.as_ref(), self.principal())
    }
}
