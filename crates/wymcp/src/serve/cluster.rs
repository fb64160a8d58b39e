//! [`Cluster`]: this node among the nodes serving the same sessions, and [`Elsewhere`]: how a
//! stream event reaches a stream another node holds. What else crosses the [`Bus`] (a client's
//! answer to another node's request, a cancellation, the end of a session, a notification)
//! is sent and taken by [`Sessions`](super::sessions::Sessions).

use std::sync::Arc;

use crate::session::{Bus, BusMessage, EventLog, Recipient, node_id};

/// This node's id and its bus to the others (none: the node serves alone).
#[derive(Clone)]
pub(crate) struct Cluster {
    pub(crate) node: Arc<str>,
    pub(crate) bus: Option<Arc<dyn Bus>>,
}

impl Cluster {
    /// A node alone, under the process's node id.
    pub(crate) fn alone() -> Self {
        Cluster {
            node: node_id().into(),
            bus: None,
        }
    }
}

/// Where a stream event goes when this node does not hold the stream: the shared log, then
/// the bus.
#[derive(Clone)]
pub(crate) struct Elsewhere {
    pub(crate) node: Arc<str>,
    pub(crate) bus: Arc<dyn Bus>,
    pub(crate) events: Arc<dyn EventLog>,
}

impl Elsewhere {
    /// Logs `data` on stream `stream` of `session` and hands it to the node holding that
    /// stream (in a task: the caller is not async).
    pub(crate) fn log_and_send(&self, session: &str, stream: &str, data: String) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (this, session, stream) = (self.clone(), session.to_owned(), stream.to_owned());
        runtime.spawn(async move {
            match this.events.append(&session, &stream, data.clone()).await {
                Ok(id) => this.send(session, stream, id, data).await,
                Err(err) => tracing::warn!(%err, "SSE event log failed"),
            }
        });
    }

    /// Hands an event already logged to the node holding its stream.
    pub(crate) async fn send(&self, session: String, stream: String, id: String, data: String) {
        let message = BusMessage::Event {
            session,
            stream,
            id,
            data,
        };
        if let Err(err) = self
            .bus
            .publish(&self.node, Recipient::Everyone, message)
            .await
        {
            tracing::warn!(%err, "MCP bus: stream event not sent");
        }
    }
}
