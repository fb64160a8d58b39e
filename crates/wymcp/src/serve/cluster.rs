//! [`Cluster`]: this node among the nodes serving the same sessions, and what the serving core
//! sends to and takes from the others over the [`Bus`]: a client's answer to a server request
//! sent by another node, a cancellation of a call running elsewhere, the end of a session, a
//! server notification.

use std::sync::Arc;

use serde_json::Value;

use super::Core;
use crate::Server;
use crate::session::{Bus, BusMessage, Notice, Recipient, node_id, node_of_request};

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

impl Core {
    /// This node's id.
    pub(crate) fn node(&self) -> &Arc<str> {
        &self.cluster().node
    }

    /// The bus to the other nodes, when there are others.
    pub(crate) fn bus(&self) -> Option<&Arc<dyn Bus>> {
        self.cluster().bus.as_ref()
    }

    /// Sends `message` to `to` on the bus, if there is one; a failure is logged (the bus is
    /// at most once: the failure semantics of `docs/scale-out.md` cover a lost message).
    pub(crate) async fn publish(&self, to: Recipient<'_>, message: BusMessage) {
        if let Some(bus) = self.bus()
            && let Err(err) = bus.publish(self.node(), to, message).await
        {
            tracing::warn!(%err, node = %self.node(), "MCP bus: message not sent");
        }
    }

    /// A client's answer to server request `id` of `session` that no call here awaits: to
    /// the node whose id the request carries.
    pub(crate) async fn route_answer(
        &self,
        session: &str,
        id: &Value,
        answer: Result<Value, Value>,
    ) {
        let Some(id) = id.as_str() else { return };
        match node_of_request(id) {
            Some(node) if node != &**self.node() => {
                let message = BusMessage::Answer {
                    session: session.to_owned(),
                    id: id.to_owned(),
                    answer,
                };
                self.publish(Recipient::Node(node), message).await;
            }
            // This node's own request, no longer waited on; or not a server request id.
            _ => {}
        }
    }

    /// `notifications/cancelled` for a call of `session` that does not run here: every other
    /// node cancels it if it runs there.
    pub(crate) async fn cancel_elsewhere(&self, session: &str, request_id: &Value) {
        let message = BusMessage::Cancel {
            session: session.to_owned(),
            request_id: request_id.clone(),
        };
        self.publish(Recipient::Everyone, message).await;
    }

    /// Takes what another node sent about the sessions this core serves (an
    /// [`Event`](BusMessage::Event) is the transport's); answers whether it was the core's.
    pub(crate) fn on_bus(&self, message: &BusMessage) -> bool {
        match message {
            BusMessage::Answer {
                session,
                id,
                answer,
            } => {
                if let Some(handle) = self.live().existing(session) {
                    handle.deliver_response(&Value::String(id.clone()), answer.clone());
                }
            }
            BusMessage::Cancel {
                session,
                request_id,
            } => {
                if let Some(handle) = self.live().existing(session)
                    && handle.cancel_call(request_id)
                {
                    tracing::info!(request_id = %request_id, "MCP call cancelled by the client (through another node)");
                }
            }
            BusMessage::Ended { session } => self.forget_gone(session),
            BusMessage::Notify(notice) => notify_here(self.server(), notice),
            _ => return false,
        }
        true
    }
}

/// A notification another node's server emitted, emitted by this node's server to the
/// sessions and listen streams it serves (and not relayed again).
fn notify_here(server: &Server, notice: &Notice) {
    match notice {
        Notice::ResourceUpdated { uri } => {
            server.notify_resource_updated_here(uri);
        }
        Notice::ToolsListChanged => {
            server.notify_tools_list_changed_here();
        }
        Notice::PromptsListChanged => {
            server.notify_prompts_list_changed_here();
        }
        Notice::ResourcesListChanged => {
            server.notify_resources_list_changed_here();
        }
        Notice::TaskChanged { task_id } => {
            server
                .features()
                .hub
                .change(crate::resource::Change::Task(task_id.as_str().into()));
        }
    }
}
