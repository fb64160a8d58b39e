//! [`Relay`]: the notifications a server emits that the other nodes must hear too. The server
//! and the tasks extension publish into it; every deployment serving the server with a
//! [`Bus`](super::Bus) subscribes and sends what it hears to its nodes, so one server served
//! by several deployments at once needs no "first one wins".

use tokio::sync::broadcast;

use super::Notice;

/// How many notices wait for a slow relay before the oldest are dropped (each drop logged).
const CAPACITY: usize = 1024;

/// The notices of one server for the other nodes.
#[derive(Debug)]
pub(crate) struct Relay(broadcast::Sender<Notice>);

impl Default for Relay {
    fn default() -> Self {
        Relay(broadcast::channel(CAPACITY).0)
    }
}

impl Relay {
    /// Hands `notice` to the deployments relaying it (none: nothing to do).
    pub(crate) fn publish(&self, notice: Notice) {
        let _ = self.0.send(notice);
    }

    /// A receiver of the notices published from now on (one per relaying deployment).
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Notice> {
        self.0.subscribe()
    }
}
