//! [`Relay`]: where a server's notifications go besides this node, once a transport with a
//! [`Bus`] serves it. The server and the tasks extension both publish through it.

use std::sync::{Arc, OnceLock};

use super::{Bus, Notice, Recipient};

/// Where a server's notifications go besides this node: the first transport with a bus to
/// serve the server installs it (so a server shared by several services relays once).
#[derive(Default)]
pub(crate) struct Relay(OnceLock<(Arc<str>, Arc<dyn Bus>)>);

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Relay")
            .field(&self.0.get().map(|(node, _)| node))
            .finish()
    }
}

impl Relay {
    /// Relays from node `node` on `bus` (the first call wins).
    pub(crate) fn install(&self, node: Arc<str>, bus: Arc<dyn Bus>) {
        let _ = self.0.set((node, bus));
    }

    /// Sends `notice` to the other nodes, when a transport installed a bus (and a Tokio
    /// runtime runs: the bus is async, the notifying call is not).
    pub(crate) fn publish(&self, notice: Notice) {
        let Some((node, bus)) = self.0.get() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (node, bus) = (node.clone(), bus.clone());
        runtime.spawn(async move {
            let message = super::BusMessage::Notify(notice);
            if let Err(err) = bus.publish(&node, Recipient::Everyone, message).await {
                tracing::warn!(%err, "MCP bus: notification not relayed");
            }
        });
    }
}
