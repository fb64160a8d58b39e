//! [`SubscriptionStore`]: where the `resources/subscribe` subscriptions of sessions are kept
//! when several nodes serve the same sessions.

use futures_util::future::BoxFuture;

use crate::Limits;

/// Why a subscription store refused or failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SubscriptionError {
    /// The session holds [`Limits::max_subscriptions_per_session`] subscriptions already.
    #[error(
        "Too many subscriptions: this session holds {max}, the limit \
         (Limits::max_subscriptions_per_session). Unsubscribe from one first."
    )]
    SessionFull {
        /// The limit.
        max: usize,
    },
    /// All sessions together hold [`Limits::max_subscriptions`] subscriptions already.
    #[error(
        "Too many subscriptions: the server holds {max}, its limit \
         (Limits::max_subscriptions). Try again later."
    )]
    ServerFull {
        /// The limit.
        max: usize,
    },
    /// The store could not be reached or failed; the reason is for logs.
    #[error("subscription store unavailable: {0}")]
    Unavailable(String),
}

/// Where the subscriptions of Streamable HTTP sessions live, shared by every node serving
/// them (`wymcp_redis::RedisSubscriptions` keeps them in Redis). Set it with
/// [`Backends::subscriptions`](crate::backend::Backends::subscriptions); without
/// one, a server keeps its subscriptions in its own process, as it does in any case for stdio
/// sessions (no other node knows them).
///
/// The server asks the store for a URI's subscribers when it emits
/// `notifications/resources/updated` ([`Server::notify_resource_updated`](crate::Server::notify_resource_updated)),
/// on the node that emits it only: other nodes hear the change for their listen streams, not
/// for the sessions, so each subscribed session is sent the notification once.
///
/// ```
/// use futures_util::future::BoxFuture;
/// use wymcp::Limits;
/// use wymcp::backend::{SubscriptionError, SubscriptionStore};
///
/// /// A store that keeps nothing (each subscribe is accepted and forgotten).
/// struct Forgetful;
///
/// impl SubscriptionStore for Forgetful {
///     fn subscribe<'a>(&'a self, _: &'a str, _: &'a str, _: &'a Limits)
///         -> BoxFuture<'a, Result<(), SubscriptionError>> { Box::pin(async { Ok(()) }) }
///     fn unsubscribe<'a>(&'a self, _: &'a str, _: &'a str)
///         -> BoxFuture<'a, Result<bool, SubscriptionError>> { Box::pin(async { Ok(false) }) }
///     fn subscribers<'a>(&'a self, _: &'a str)
///         -> BoxFuture<'a, Result<Vec<String>, SubscriptionError>> { Box::pin(async { Ok(Vec::new()) }) }
///     fn subscriptions_of<'a>(&'a self, _: &'a str)
///         -> BoxFuture<'a, Result<Vec<String>, SubscriptionError>> { Box::pin(async { Ok(Vec::new()) }) }
///     fn forget_session<'a>(&'a self, _: &'a str)
///         -> BoxFuture<'a, Result<(), SubscriptionError>> { Box::pin(async { Ok(()) }) }
/// }
///
/// let backends = wymcp::backend::Backends::new().subscriptions(Forgetful);
/// let server = wymcp::Server::builder().backends(backends).build().unwrap();
/// # let _ = server;
/// ```
pub trait SubscriptionStore: Send + Sync + 'static {
    /// Subscribes `session` to `uri`, within `limits`' two caps (subscribing again to a URI
    /// the session holds is accepted and changes nothing).
    fn subscribe<'a>(
        &'a self,
        session: &'a str,
        uri: &'a str,
        limits: &'a Limits,
    ) -> BoxFuture<'a, Result<(), SubscriptionError>>;

    /// Unsubscribes `session` from `uri`; whether it was subscribed.
    fn unsubscribe<'a>(
        &'a self,
        session: &'a str,
        uri: &'a str,
    ) -> BoxFuture<'a, Result<bool, SubscriptionError>>;

    /// The sessions subscribed to `uri`.
    fn subscribers<'a>(
        &'a self,
        uri: &'a str,
    ) -> BoxFuture<'a, Result<Vec<String>, SubscriptionError>>;

    /// The URIs `session` is subscribed to.
    fn subscriptions_of<'a>(
        &'a self,
        session: &'a str,
    ) -> BoxFuture<'a, Result<Vec<String>, SubscriptionError>>;

    /// Drops every subscription of `session`, which ended.
    fn forget_session<'a>(
        &'a self,
        session: &'a str,
    ) -> BoxFuture<'a, Result<(), SubscriptionError>>;
}
