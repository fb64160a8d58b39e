//! [`State`]: what every request of one Streamable HTTP service shares: the serving core
//! (which owns the sessions, their streams and their event log), the settings, the auth hook,
//! the open `subscriptions/listen` streams. The routes read it; the service makes it.

use std::sync::Arc;

use super::auth::Authenticate;
use super::config::HttpConfig;
use crate::serve::{ClientCounts, Core, Listeners};

/// Shared by every request of one service.
pub(crate) struct State {
    /// The serving core: sessions, both eras, the call runner.
    pub(crate) core: Core,
    pub(crate) config: HttpConfig,
    pub(crate) auth: Option<Arc<dyn Authenticate>>,
    pub(crate) auth_module: &'static str,
    /// The open `subscriptions/listen` streams (2026-07-28).
    pub(crate) listeners: Listeners,
    /// The GET streams each client holds open.
    pub(crate) get_streams: ClientCounts,
}
