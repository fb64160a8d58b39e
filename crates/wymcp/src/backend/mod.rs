//! The backends: where a server keeps what outlives one request, for implementers of a store
//! and for deployments that share state between nodes. A server built without them keeps
//! everything in its process; [`Backends`] names the ones to use instead, in one value given
//! to [`ServerBuilder::backends`](crate::ServerBuilder::backends).
//!
//! | Trait | Keeps | In process |
//! |---|---|---|
//! | [`SessionStore`] | session records ([`SessionRecord`]) | [`InMemorySessionStore`] |
//! | [`EventLog`] | the SSE events a client resumes from ([`LoggedEvent`]) | [`InMemoryEventLog`] |
//! | [`Bus`] | messages between the nodes serving the same sessions ([`BusMessage`], [`CallLease`]) | [`LocalBus`] (none unless set) |
//! | [`TaskStore`] | tasks ([`TaskRecord`]) | [`InMemoryTaskStore`] |
//! | [`UserStateStore`] | per-principal state | [`InMemoryUserState`] (off unless set) |
//! | [`SubscriptionStore`] | `resources/subscribe` subscriptions | this process |
//! | `RateLimitStore` | a rate limit's buckets (a layer's own: `RateLimitLayer::shared`) | this process |
//!
//! `wymcp-redis` implements every one of them on one Redis (`Redis::backends`).
//!
//! ```
//! use wymcp::Server;
//! use wymcp::backend::{Backends, InMemorySessionStore, InMemoryUserState, LocalBus};
//!
//! let backends = Backends::new()
//!     .sessions(InMemorySessionStore::new())
//!     .bus(LocalBus::new())
//!     .user_state(InMemoryUserState::default());
//! let server = Server::builder().backends(backends).build()?;
//! # let _ = server;
//! # Ok::<(), wymcp::ConfigurationError>(())
//! ```

mod backends;

pub use backends::Backends;

#[cfg(feature = "rate-limit")]
pub use crate::middleware::rate_store::{RateLimitStore, RateLimitStoreError};
pub use crate::resource::subscription_store::{SubscriptionError, SubscriptionStore};
pub use crate::session::bus::{Bus, BusMessage, CallLease, Notice, Recipient};
pub use crate::session::events::{EventLog, InMemoryEventLog, LoggedEvent};
pub use crate::session::handle::node_id;
pub use crate::session::local_bus::LocalBus;
pub use crate::session::store::{
    CreateError, InMemorySessionStore, SessionRecord, SessionStore, StoreError, StoreErrorKind,
    new_session_id,
};
pub use crate::task::store::{
    DEFAULT_MAX_TASKS, InMemoryTaskStore, ResumableCall, TaskRecord, TaskStore, TaskStoreError,
};
pub use crate::user_state::memory::{InMemoryUserState, UserStateLimits};
pub use crate::user_state::store::UserStateStore;
