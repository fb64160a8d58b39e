//! Per-principal state across requests: [`Context::user_state`](crate::Context::user_state).
//!
//! A session-era tool keeps what it needs between calls in its session; a 2026-07-28 tool has
//! no session. `ctx.user_state()` is a small key-value store keyed by the authenticated
//! principal (the subject of the caller's identity), the same in both eras and on every node
//! sharing the store: a caller reads and writes only its own keys. Values are JSON.
//!
//! It is off until the server is given a store:
//! [`Backends::user_state`](crate::backend::Backends::user_state) with
//! [`InMemoryUserState`](crate::backend::InMemoryUserState) (this process), or `wymcp_redis::Redis::user_state()` (nodes sharing
//! Redis).
//!
//! ```
//! use serde_json::{Map, Value, json};
//! use wymcp::backend::{Backends, InMemoryUserState};
//! use wymcp::user_state::UserStateError;
//! use wymcp::{CallError, CallOutput, CallResult, Context, PlainTool, Server};
//!
//! /// Counts the caller's visits, across requests, sessions and nodes.
//! struct Visits;
//!
//! impl PlainTool for Visits {
//!     fn name(&self) -> &str { "visits" }
//!     fn description(&self) -> &str { "Counts your visits" }
//!     fn input_schema(&self) -> Map<String, Value> {
//!         json!({"type": "object"}).as_object().cloned().unwrap_or_default()
//!     }
//!     async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
//!         let failed = |e: UserStateError| CallError::tool(e.to_string());
//!         let state = ctx.user_state();
//!         let seen = state.get("visits").await.map_err(failed)?.and_then(|v| v.as_u64());
//!         let visits = seen.unwrap_or(0) + 1;
//!         state.set("visits", json!(visits)).await.map_err(failed)?;
//!         Ok(CallOutput::text(format!("visit {visits}")))
//!     }
//! }
//!
//! let server = Server::builder()
//!     .plain_tool(Visits)
//!     .backends(Backends::new().user_state(InMemoryUserState::default()))
//!     .build()?;
//! # let _ = server;
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! // Outside a server (and without an authenticated caller) there is no state to keep.
//! let none = Context::default().user_state().get("visits").await;
//! assert_eq!(none, Err(UserStateError::NotConfigured));
//! # });
//! # Ok::<(), wymcp::ConfigurationError>(())
//! ```

pub(crate) mod memory;
pub(crate) mod store;

use std::sync::Arc;

use serde_json::Value;

pub(crate) use store::UserStateStore;

/// The longest key, in bytes.
pub const MAX_KEY_BYTES: usize = 256;
/// The largest value, in bytes of compact JSON, unless the store's limits say less.
pub const DEFAULT_MAX_VALUE_BYTES: usize = 64 * 1024;
/// The most keys one principal holds, unless the store's limits say otherwise.
pub const DEFAULT_MAX_KEYS: usize = 256;

/// Why a user-state operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UserStateError {
    /// The server has no user-state store ([`Backends::user_state`](crate::backend::Backends::user_state)).
    #[error("no user state on this server (ServerBuilder::user_state)")]
    NotConfigured,
    /// The caller is not authenticated: there is nobody to keep state for.
    #[error("user state needs an authenticated caller")]
    NoPrincipal,
    /// The key is empty or longer than [`MAX_KEY_BYTES`].
    #[error("a user-state key is 1 to {MAX_KEY_BYTES} bytes; this one is {0}")]
    BadKey(usize),
    /// The value is larger than the store's bound.
    #[error("the value takes {size} bytes, over the {limit}-byte bound of user state")]
    TooLarge {
        /// The value's size (compact JSON).
        size: usize,
        /// The bound.
        limit: usize,
    },
    /// The principal holds as many keys as the store allows.
    #[error("this caller holds {0} user-state keys, the most allowed: remove one first")]
    TooManyKeys(usize),
    /// The store holds state for as many principals as it allows.
    #[error("user state holds {0} callers, the most allowed; try again later")]
    TooManyPrincipals(usize),
    /// The store failed.
    #[error("user-state store: {0}")]
    Store(String),
}

/// The calling principal's user state ([`Context::user_state`](crate::Context::user_state)).
#[derive(Debug)]
pub struct UserState<'a> {
    store: Option<&'a Arc<dyn UserStateStore>>,
    principal: Option<String>,
}

impl std::fmt::Debug for dyn UserStateStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UserStateStore")
    }
}

impl<'a> UserState<'a> {
    pub(crate) fn new(
        store: Option<&'a Arc<dyn UserStateStore>>,
        principal: Option<String>,
    ) -> Self {
        UserState { store, principal }
    }

    fn target(&self, key: &str) -> Result<(&'a Arc<dyn UserStateStore>, &str), UserStateError> {
        let store = self.store.ok_or(UserStateError::NotConfigured)?;
        let principal = self
            .principal
            .as_deref()
            .ok_or(UserStateError::NoPrincipal)?;
        if key.is_empty() || key.len() > MAX_KEY_BYTES {
            return Err(UserStateError::BadKey(key.len()));
        }
        Ok((store, principal))
    }

    /// The value of `key`, if set.
    pub async fn get(&self, key: &str) -> Result<Option<Value>, UserStateError> {
        let (store, principal) = self.target(key)?;
        match store.get(principal, key).await? {
            Some(json) => serde_json::from_str(&json)
                .map(Some)
                .map_err(|e| UserStateError::Store(format!("a stored value is not JSON: {e}"))),
            None => Ok(None),
        }
    }

    /// Sets `key` to `value`, within the store's bounds.
    pub async fn set(&self, key: &str, value: Value) -> Result<(), UserStateError> {
        let (store, principal) = self.target(key)?;
        let json = value.to_string();
        let limit = store.max_value_bytes();
        if json.len() > limit {
            return Err(UserStateError::TooLarge {
                size: json.len(),
                limit,
            });
        }
        store.set(principal, key, json).await
    }

    /// Removes `key`; whether it was set.
    pub async fn remove(&self, key: &str) -> Result<bool, UserStateError> {
        let (store, principal) = self.target(key)?;
        store.remove(principal, key).await
    }
}
