//! `--redis URL`: this process as one node of several sharing a Redis (docs/scale-out.md). Built
//! with the cargo feature `redis` (`cargo run -p wymcp-tasks --features redis -- --redis URL`); a
//! build without it, the default (its first build stays lean), refuses the flag and says so.

use wymcp::ServerBuilder;
use wymcp::middleware::RateLimitLayer;
use wymcp::mrtr::RequestStateKeys;

/// A Redis deployment this node joins.
#[cfg(feature = "redis")]
pub(crate) struct Node(wymcp_redis::Redis);

/// A Redis deployment this node joins: none in a build without the feature.
#[cfg(not(feature = "redis"))]
pub(crate) enum Node {}

/// What a build without the `redis` feature answers to `--redis` (a refused command line).
#[cfg(not(feature = "redis"))]
pub(crate) const NEEDS_REDIS: &str = "--redis needs the example built with Redis support: \
     cargo run -p wymcp-tasks --features redis -- --redis URL";

impl Node {
    /// Connects to the Redis at `url`.
    pub(crate) async fn join(url: &str) -> Result<Node, String> {
        #[cfg(feature = "redis")]
        return wymcp_redis::Redis::connect(url)
            .await
            .map(Node)
            .map_err(|e| format!("--redis {url}: {e}"));
        #[cfg(not(feature = "redis"))]
        return Err(format!("--redis {url}: {NEEDS_REDIS}"));
    }

    /// The requestState keys every node shares.
    pub(crate) async fn request_state_keys(&self) -> Result<RequestStateKeys, String> {
        #[cfg(feature = "redis")]
        return self.0.request_state_keys().await.map_err(|e| e.to_string());
        #[cfg(not(feature = "redis"))]
        match *self {}
    }

    /// `builder` with every store on this Redis: sessions, their events, the bus between nodes,
    /// resource subscriptions, tasks and user state.
    pub(crate) fn share(&self, builder: ServerBuilder) -> ServerBuilder {
        #[cfg(feature = "redis")]
        return builder.backends(self.0.backends());
        #[cfg(not(feature = "redis"))]
        {
            let _ = builder;
            match *self {}
        }
    }

    /// `layer` with its buckets on this Redis: one budget for every node.
    pub(crate) fn share_rate_limit(&self, layer: RateLimitLayer) -> RateLimitLayer {
        #[cfg(feature = "redis")]
        return layer.shared(self.0.rate_limits("calls"));
        #[cfg(not(feature = "redis"))]
        {
            let _ = layer;
            match *self {}
        }
    }
}
