//! The parts of [`ServerBuilder`] kept outside the process when several nodes serve the same
//! sessions.

use std::sync::Arc;

use super::ServerBuilder;
use crate::resource::SubscriptionStore;

impl ServerBuilder {
    /// Keeps the `resources/subscribe` subscriptions of sessions in `store`, shared by every
    /// node serving them (`wymcp_redis::Redis::subscription_store`), so a subscription taken
    /// by one node is notified from any node and outlives the node that took it. Without it
    /// (the default) subscriptions live in this process; the sessions of stdio (whose records
    /// no other node shares) keep theirs here in any case. [`Limits::max_subscriptions`](crate::Limits::max_subscriptions)
    /// then bounds the store's total, every node's together.
    pub fn subscription_store(mut self, store: impl SubscriptionStore) -> Self {
        self.subscription_store = Some(Arc::new(store));
        self
    }
}
