//! Where a task's status changes go: to this node's `subscriptions/listen` streams (the
//! server's hub) and, through the relay, to every other node's, so a client listening on any
//! node hears of a task another node runs.

use std::sync::Arc;

use tokio::sync::broadcast;

use crate::resource::Change;
use crate::session::Notice;
use crate::session::Relay;

/// The task store's change feed: set by `build()`, silent before (a detached `Tasks`).
#[derive(Debug, Default)]
pub(crate) struct Watch {
    changes: Option<broadcast::Sender<Change>>,
    relay: Arc<Relay>,
}

impl Watch {
    /// Announces on `changes` (this node's listen streams) and `relay` (the other nodes').
    pub(crate) fn new(changes: broadcast::Sender<Change>, relay: Arc<Relay>) -> Self {
        Watch {
            changes: Some(changes),
            relay,
        }
    }

    /// Task `id` changed status, or what it waits on: each listen stream that asked for it
    /// reads it again (here and on the other nodes).
    pub(crate) fn changed(&self, id: &str) {
        if let Some(changes) = &self.changes {
            // No receiver: no listen stream is open on this node, nothing to tell.
            let _ = changes.send(Change::Item {
                extension: super::TASKS_EXTENSION,
                id: id.into(),
            });
        }
        self.relay.publish(Notice::TaskChanged {
            task_id: id.to_owned(),
        });
    }
}
