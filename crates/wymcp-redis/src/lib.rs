//! Scale-out for [wymcp](https://docs.rs/wymcp) on Redis: **any node serves any request of any
//! session**. Sessions are data, kept in Redis; calls have owners, and what concerns a call
//! (a client's answer to the server request it sent, a cancellation, the end of its session,
//! an event for a stream) reaches the node running it over Redis pub/sub.
//!
//! One [`Redis`] per process holds a reconnecting connection; [`Redis::backends`] gives its
//! session store, SSE event log, bus, task store, user state and subscriptions to a server in
//! one value:
//!
//! ```no_run
//! use wymcp::transport::http::StreamableHttp;
//! use wymcp_redis::Redis;
//!
//! # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let redis = Redis::connect("redis://127.0.0.1:6379/").await?;
//! let server = wymcp::Server::builder()
//!     .backends(redis.backends())
//!     // Every node opens the stateless era's requestState sealed by any other.
//!     .request_state_keys(redis.request_state_keys().await?)
//!     .build()?;
//! let service = StreamableHttp::builder(server).build();
//! # let _ = service; Ok(()) }
//! ```
//!
//! What Redis holds (keys under the prefix, `wymcp` by default):
//!
//! | key | type | what | lifetime |
//! |---|---|---|---|
//! | `wymcp:session:<id>` | string (JSON) | the session record | the session TTL, renewed by every request |
//! | `wymcp:sessions` | sorted set | session id → last use as the reaper last saw it (ms): the cap and the reaper | removed when the reaper finds the session ended |
//! | `wymcp:client:<client>` | sorted set | a client's live sessions: `Limits::max_sessions_per_client` over every node | until its last session ends |
//! | `wymcp:session-clients` | hash | session id → its client | as above |
//! | `wymcp:events:<id>` | stream | the session's SSE events, at most [`Redis::max_events`] and [`Redis::max_event_bytes`] of data | [`Redis::events_ttl`] after the last |
//! | `wymcp:event-bytes:<id>` | string (integer) | the bytes of data the session's event stream holds | as above |
//! | `wymcp:bus:all`, `wymcp:bus:node:<node>` | pub/sub channels | messages between nodes | not stored |
//! | `wymcp:request-state-key` | string | the shared requestState key | never expires |
//! | `wymcp:user:<principal>` | hash (key → JSON) | a principal's user state (`Identity::principal`: the subject, or issuer and subject with several issuers) ([`Redis::user_state`]) | 24 h after its last use, unless set |
//! | `wymcp:task:<id>` | string (JSON) | a task of the tasks extension ([`Redis::task_store`]) | the task's TTL from its creation |
//! | `wymcp:subs:<id>` | set | the URIs a session subscribed to ([`Redis::subscription_store`]) | until the session ends |
//! | `wymcp:subscribers:<uri>` | set | the sessions subscribed to a URI | until its last subscriber ends |
//! | `wymcp:tasks-of:<subject>`, `wymcp:tasks` | sorted sets | a principal's kept tasks and every kept task (id → expiry ms): [`RedisTaskStore::max_tasks_per_principal`], [`RedisTaskStore::max_tasks`] | as long as their longest-lived task |
//! | `wymcp:running:<subject>` | sorted set | a principal's running tasks (id → heartbeat), for `task_max_running_per_principal` over every node | as long as its longest-lived task |
//! | `wymcp:rate:<name>:<limit>\|<caller>` | string (integer) | a shared rate limit's bucket ([`Redis::rate_limits`]) | until the bucket is full again |
//! | `wymcp:subscriptions` | string (integer) | how many subscriptions all sessions hold: `Limits::max_subscriptions` | never expires |
//!
//! Requests cost one round trip each to load their session (`GETEX … PX` reads the record
//! and renews its TTL; Redis 6.2 or later); a record is written only when it changes. When Redis is unreachable,
//! requests are answered 503 (`session store unavailable`) and service resumes by itself
//! when it returns; when Redis is full (`maxmemory`), writes are refused naming it ("Redis is
//! full"). `rediss://` (TLS) and a password in the URL are supported; Redis Cluster is refused
//! at connect. `docs/scale-out.md` has the design, a deployment without sticky sessions
//! and the failure semantics.

mod bus;
mod connection;
mod events;
mod failure;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod loads;
mod rate_limits;
mod record;
mod store;
mod subscriptions;
mod tasks;
mod user_state;

pub use bus::RedisBus;
pub use connection::{Redis, RedisBuilder};
pub use events::RedisEventLog;
pub use rate_limits::RedisRateLimits;
pub use store::RedisSessionStore;
pub use subscriptions::RedisSubscriptions;
pub use tasks::RedisTaskStore;
pub use user_state::RedisUserState;

/// A Redis call failed.
pub type Error = redis::RedisError;
