//! [`Bus`]: how the nodes serving the same sessions reach each other. Sessions are data (a
//! shared [`SessionStore`](super::SessionStore)); calls have owners: the node running a call
//! holds its live things (its cancellation, the server→client requests it waits on, the SSE
//! stream it writes), and what concerns them travels on the bus to that node.

use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::StoreError;

/// What one node tells another (or every other) about the sessions they share.
///
/// Messages are plain data (serde), so a bus can carry them as JSON:
///
/// ```
/// use serde_json::json;
/// use wymcp::backend::BusMessage;
///
/// let cancel = BusMessage::Cancel { session: "s1".into(), request_id: json!(7) };
/// let wire = serde_json::to_string(&cancel).unwrap();
/// assert_eq!(wire, r#"{"kind":"cancel","session":"s1","request_id":7}"#);
/// assert_eq!(serde_json::from_str::<BusMessage>(&wire).unwrap(), cancel);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum BusMessage {
    /// A client's answer to the server→client request `id` (sampling, elicitation, roots),
    /// for the node that sent the request (its id names that node).
    Answer {
        /// The session.
        session: String,
        /// The server request's id (`srv-<node>.<stream>.<random>`).
        id: String,
        /// `Ok(result)` or `Err(error object)`.
        answer: Result<Value, Value>,
    },
    /// `notifications/cancelled` for the call `request_id` of `session`, wherever it runs.
    Cancel {
        /// The session.
        session: String,
        /// The cancelled request's JSON-RPC id.
        request_id: Value,
    },
    /// The session ended (DELETE, expiry): every node lets go of its live things (its running
    /// calls are cancelled, its streams end).
    Ended {
        /// The session.
        session: String,
    },
    /// An event logged on stream `stream` of `session` (with its log id), for the node
    /// holding that stream open (a GET stream, or a GET resuming a POST stream).
    Event {
        /// The session.
        session: String,
        /// The stream's key (`get`, `post<n>`).
        stream: String,
        /// The event's id in the event log.
        id: String,
        /// The event's `data`.
        data: String,
    },
    /// A server notification emitted on another node (`resources/updated`, a
    /// `list_changed`), for the streams this node holds.
    Notify(Notice),
}

/// A server notification, as it travels between nodes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "notice", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Notice {
    /// `notifications/resources/updated` for `uri`.
    ResourceUpdated {
        /// The resource's URI.
        uri: String,
    },
    /// `notifications/tools/list_changed`.
    ToolsListChanged,
    /// `notifications/prompts/list_changed`.
    PromptsListChanged,
    /// `notifications/resources/list_changed`.
    ResourcesListChanged,
    /// A task of the tasks extension changed status: `notifications/tasks` for the
    /// `subscriptions/listen` streams that asked for it.
    TaskChanged {
        /// The task's id.
        task_id: String,
    },
}

/// What the bus knows of a call answered on a resumable stream (its lease: the node running
/// it renews it while it runs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallLease {
    /// A node runs the call (request id given) and renews its lease.
    Held(Value),
    /// The call (request id given) neither finished nor had its lease renewed: the node
    /// running it stopped.
    Orphaned(Value),
    /// Nothing is known: the call finished, or never ran on a stream.
    Unknown,
}

/// Where a [`BusMessage`] goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recipient<'a> {
    /// The node of this id.
    Node(&'a str),
    /// Every node but the sender.
    Everyone,
}

/// Carries [`BusMessage`]s between the nodes serving the same sessions. Without a bus (the
/// default) a node serves only what it owns; with one (such as Redis pub/sub,
/// `wymcp-redis`), any node serves any request of any session.
///
/// Delivery is at most once and unordered between senders; a message to a node that is gone
/// is lost (the failure semantics in `docs/scale-out.md` say what a client sees then).
pub trait Bus: Send + Sync + 'static {
    /// Sends `message` from node `from` to `to`.
    fn publish<'a>(
        &'a self,
        from: &'a str,
        to: Recipient<'a>,
        message: BusMessage,
    ) -> BoxFuture<'a, Result<(), StoreError>>;

    /// The messages for node `node`: those sent to it, and those sent to everyone by another
    /// node. The stream ends only when the bus is dropped; a bus that loses its connection
    /// reconnects by itself (what was sent meanwhile is lost).
    fn subscribe(&self, node: &str) -> BoxStream<'static, BusMessage>;

    /// Records, for `ttl` more, that this node runs call `request_id` answered on stream
    /// `stream` of `session` (the node renews it while the call runs). The default keeps
    /// nothing: a node's death then goes unreported (see [`CallLease`]).
    fn hold_call<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
        request_id: &'a Value,
        ttl: std::time::Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let _ = (session, stream, request_id, ttl);
        Box::pin(async { Ok(()) })
    }

    /// The call on `stream` of `session` ended (answered, cancelled): its lease goes.
    fn release_call<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let _ = (session, stream);
        Box::pin(async { Ok(()) })
    }

    /// What is known of the call on `stream` of `session`.
    fn call_lease<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
    ) -> BoxFuture<'a, Result<CallLease, StoreError>> {
        let _ = (session, stream);
        Box::pin(async { Ok(CallLease::Unknown) })
    }
}

/// A shared bus is a bus: several services (nodes of one process) can hold one.
impl<T: Bus + ?Sized> Bus for std::sync::Arc<T> {
    fn publish<'a>(
        &'a self,
        from: &'a str,
        to: Recipient<'a>,
        message: BusMessage,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        (**self).publish(from, to, message)
    }
    fn subscribe(&self, node: &str) -> BoxStream<'static, BusMessage> {
        (**self).subscribe(node)
    }
    fn hold_call<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
        request_id: &'a Value,
        ttl: std::time::Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        (**self).hold_call(session, stream, request_id, ttl)
    }
    fn release_call<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        (**self).release_call(session, stream)
    }
    fn call_lease<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
    ) -> BoxFuture<'a, Result<CallLease, StoreError>> {
        (**self).call_lease(session, stream)
    }
}

/// The node a server→client request id (`srv-<node>.<stream>.<random>`) names.
pub(crate) fn node_of_request(id: &str) -> Option<&str> {
    id.strip_prefix("srv-")?
        .split_once('.')
        .map(|(node, _)| node)
}

#[cfg(test)]
mod tests {
    use super::node_of_request;

    #[test]
    fn a_server_request_id_names_its_node() {
        assert_eq!(node_of_request("srv-AbC_12-x.post3.zz"), Some("AbC_12-x"));
        assert_eq!(node_of_request("srv-n.get.r"), Some("n"));
        assert_eq!(node_of_request("client-7"), None);
        assert_eq!(node_of_request("srv-nodot"), None);
    }
}
