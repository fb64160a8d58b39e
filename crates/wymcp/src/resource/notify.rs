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

/// A server-wide change, as the listen streams of the stateless era (`subscriptions/listen`)
/// see it: no session is named, each stream picks what its filter asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    /// `notifications/tools/list_changed`.
    ToolsList,
    /// `notifications/prompts/list_changed`.
    PromptsList,
    /// `notifications/resources/list_changed`.
    ResourcesList,
    /// `notifications/resources/updated` for this URI.
    ResourceUpdated(std::sync::Arc<str>),
    /// Item `id` of extension `extension` changed (a task its status, or what it waits
    /// on): told to the streams that watch it, each as the extension reads it for its caller
    /// (`notifications/tasks`, the task as `tasks/get` answers it).
    Item {
        /// The extension's identifier (`io.modelcontextprotocol/tasks`).
        extension: &'static str,
        /// The item's id (a task id).
        id: std::sync::Arc<str>,
    },
}

/// The sending side every clone of a server shares: the session era's notifications (to a
/// session, or to every session) and the stateless era's changes (to every listen stream).
#[derive(Debug)]
pub(crate) struct Hub {
    tx: broadcast::Sender<ServerNotification>,
    changes: broadcast::Sender<Change>,
}

impl Hub {
    pub(crate) fn new() -> Self {
        Hub {
            tx: broadcast::channel(CAPACITY).0,
            changes: broadcast::channel(CAPACITY).0,
        }
    }

    /// A receiver of the server-wide changes (one per listen stream).
    pub(crate) fn changes(&self) -> broadcast::Receiver<Change> {
        self.changes.subscribe()
    }

    /// The sending side of the changes, for the parts of a server that emit them on their own
    /// (the tasks' status changes).
    pub(crate) fn change_sender(&self) -> broadcast::Sender<Change> {
        self.changes.clone()
    }

    /// Sends a change; answers whether any listen stream was open to take it.
    pub(crate) fn change(&self, change: Change) -> bool {
        self.changes.send(change).is_ok()
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<ServerNotification> {
        self.tx.subscribe()
    }

    /// Sends; answers whether any receiver (a transport) was listening.
    pub(crate) fn send(&self, notification: ServerNotification) -> bool {
        self.tx.send(notification).is_ok()
    }
}
