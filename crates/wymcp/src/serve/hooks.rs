//! [`SessionHooks`]: the server's say when a session starts and ends (every transport with sessions
//! runs them through the serving core).

use futures_util::future::BoxFuture;
use serde_json::{Map, Value};

use super::Identity;
use crate::protocol::ProtocolVersion;

/// What a hook sees of a session being started by `initialize`.
#[derive(Debug, Clone, Copy)]
pub struct SessionStart<'a> {
    /// The id the session will have.
    pub session_id: &'a str,
    /// The negotiated revision.
    pub version: ProtocolVersion,
    /// The client's `clientInfo` (or `{}`).
    pub client_info: &'a Value,
    /// The client's `capabilities` (or `{}`).
    pub client_capabilities: &'a Value,
    /// The caller's identity, when auth is configured.
    pub identity: Option<&'a Identity>,
}

/// Why a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EndReason {
    /// The client sent DELETE (or the application ended it).
    Deleted,
    /// It stayed idle past the session TTL.
    Expired,
}

/// Hooks the server runs on session start and end. Both are optional.
///
/// ```
/// use futures_util::future::BoxFuture;
/// use serde_json::{Map, Value, json};
/// use wymcp::transport::http::{SessionHooks, SessionStart};
///
/// struct OnlyKnownClients;
///
/// impl SessionHooks for OnlyKnownClients {
///     fn on_start<'a>(&'a self, start: SessionStart<'a>) -> BoxFuture<'a, Result<Map<String, Value>, String>> {
///         Box::pin(async move {
///             if start.client_info.get("name").is_none() {
///                 return Err("clientInfo.name is required".to_owned());
///             }
///             let mut assigns = Map::new();
///             assigns.insert("client".to_owned(), start.client_info.clone());
///             Ok(assigns)
///         })
///     }
/// }
/// ```
pub trait SessionHooks: Send + Sync + 'static {
    /// Runs at `initialize`, before the session exists. `Ok(assigns)` seeds the session's
    /// assigns; `Err(reason)` refuses the session (the client gets a `-32603` error whose
    /// `data.reason` is the reason, and no session).
    fn on_start<'a>(
        &'a self,
        start: SessionStart<'a>,
    ) -> BoxFuture<'a, Result<Map<String, Value>, String>> {
        let _ = start;
        Box::pin(async { Ok(Map::new()) })
    }

    /// Runs once after a session ended.
    fn on_end<'a>(&'a self, session_id: &'a str, reason: EndReason) -> BoxFuture<'a, ()> {
        let _ = (session_id, reason);
        Box::pin(async {})
    }
}
