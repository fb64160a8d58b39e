//! [`ServerNotification`]: notifications the server emits outside any request
//! (`notifications/resources/updated`, `.../list_changed`), on a channel the transport drains.

use serde_json::{Value, json};
use tokio::sync::broadcast;

/// How many undelivered notifications the channel keeps per receiver before the oldest are
/// dropped (a lagging receiver sees `RecvError::Lagged`).
const CAPACITY: usize = 256;

/// A notification for the transport to deliver: to one session, or to every session.
///
/// ```
/// use wymcp::resource::ServerNotification;
///
/// let n = ServerNotification::resource_updated("test://a", Some("s1".into()));
/// assert_eq!(n.method(), "notifications/resources/updated");
/// assert_eq!(n.message["params"]["uri"], "test://a");
/// assert_eq!(n.session_id.as_deref(), Some("s1"));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServerNotification {
    /// The session to deliver to; `None` is every session (or the only one, on stdio).
    pub session_id: Option<String>,
    /// The whole JSON-RPC notification (`{"jsonrpc": "2.0", "method": ..., "params": ...}`).
    pub message: Value,
}

impl ServerNotification {
    /// A notification of `method` with `params` for `session_id`.
    pub fn new(method: &str, params: Value, session_id: Option<String>) -> Self {
        ServerNotification {
            session_id,
            message: json!({ "jsonrpc": "2.0", "method": method, "params": params }),
        }
    }

    /// `notifications/resources/updated` for `uri`.
    pub fn resource_updated(uri: &str, session_id: Option<String>) -> Self {
        Self::new(
            "notifications/resources/updated",
            json!({ "uri": uri }),
            session_id,
        )
    }

    /// The notification's method.
    pub fn method(&self) -> &str {
        self.message["method"].as_str().unwrap_or_default()
    }
}

/// The sending side every clone of a server shares.
#[derive(Debug)]
pub(crate) struct Hub {
    tx: broadcast::Sender<ServerNotification>,
}

impl Hub {
    pub(crate) fn new() -> Self {
        Hub {
            tx: broadcast::channel(CAPACITY).0,
        }
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<ServerNotification> {
        self.tx.subscribe()
    }

    /// Sends; answers whether any receiver (a transport) was listening.
    pub(crate) fn send(&self, notification: ServerNotification) -> bool {
        self.tx.send(notification).is_ok()
    }
}
