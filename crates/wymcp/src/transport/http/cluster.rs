//! The HTTP transport among several nodes: an event for a stream another node holds open
//! travels on the bus to it ([`Elsewhere`]), and an event another node sent is written to the
//! stream this node holds ([`deliver`]).

use std::sync::Arc;

use super::events::EventLog;
use super::streams::{StreamEvent, Streams};
use crate::session::{Bus, BusMessage, Recipient};

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

/// An event of stream `stream`, to this node's GET stream of the session (`get`) or to the
/// GET stream resuming that POST stream, if this node holds it.
pub(crate) fn deliver(streams: &Streams, session: &str, stream: &str, event: StreamEvent) {
    if stream == super::streams::GET_STREAM {
        streams.send(session, event);
    } else {
        streams.deliver_resumed(session, stream, event);
    }
}
