//! [`UserStateStore`]: where per-principal state is kept.

use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::{DEFAULT_MAX_VALUE_BYTES, UserStateError};

/// Where user state is kept: each principal's keys, their values as compact JSON text.
/// Implementations bound the keys per principal and the value size, and forget a principal's
/// state after some idle time; [`UserState`](super::UserState) checks the key and encodes the value first.
pub trait UserStateStore: Send + Sync + 'static {
    /// The value of `key` for `principal`, as JSON text.
    fn get<'a>(
        &'a self,
        principal: &'a str,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, UserStateError>>;

    /// Sets `key` for `principal` to `json`.
    fn set<'a>(
        &'a self,
        principal: &'a str,
        key: &'a str,
        json: String,
    ) -> BoxFuture<'a, Result<(), UserStateError>>;

    /// Removes `key` for `principal`; whether it was there.
    fn remove<'a>(
        &'a self,
        principal: &'a str,
        key: &'a str,
    ) -> BoxFuture<'a, Result<bool, UserStateError>>;

    /// The largest value this store keeps, in bytes.
    fn max_value_bytes(&self) -> usize {
        DEFAULT_MAX_VALUE_BYTES
    }
}

/// A shared store is a store.
impl<T: UserStateStore + ?Sized> UserStateStore for Arc<T> {
    fn get<'a>(
        &'a self,
        principal: &'a str,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, UserStateError>> {
        (**self).get(principal, key)
    }
    fn set<'a>(
        &'a self,
        principal: &'a str,
        key: &'a str,
        json: String,
    ) -> BoxFuture<'a, Result<(), UserStateError>> {
        (**self).set(principal, key, json)
    }
    fn remove<'a>(
        &'a self,
        principal: &'a str,
        key: &'a str,
    ) -> BoxFuture<'a, Result<bool, UserStateError>> {
        (**self).remove(principal, key)
    }
    fn max_value_bytes(&self) -> usize {
        (**self).max_value_bytes()
    }
}
