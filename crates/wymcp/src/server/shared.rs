//! The stores of [`ServerBuilder`] kept outside the process: one [`Backends`] value.

use super::ServerBuilder;
use crate::backend::Backends;

impl ServerBuilder {
    /// Uses `backends` instead of the process's memory: sessions, their events and the bus
    /// between nodes (taken by every deployment serving the server), tasks, per-principal
    /// state and resource subscriptions. Each store left unset stays in the process; a second
    /// call replaces the first. See [`crate::backend`].
    ///
    /// ```
    /// use wymcp::Server;
    /// use wymcp::backend::{Backends, InMemoryUserState};
    ///
    /// let server = Server::builder()
    ///     .backends(Backends::new().user_state(InMemoryUserState::default()))
    ///     .build()?;
    /// # let _ = server;
    /// # Ok::<(), wymcp::ConfigurationError>(())
    /// ```
    pub fn backends(mut self, backends: Backends) -> Self {
        self.backends = backends;
        self
    }
}
