//! [`InMemoryUserState`]: user state in this process, bounded.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;

use super::{DEFAULT_MAX_KEYS, DEFAULT_MAX_VALUE_BYTES, UserStateError, UserStateStore};

/// The bounds of an [`InMemoryUserState`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct UserStateLimits {
    /// The largest value, in bytes of compact JSON (default 64 KiB).
    pub max_value_bytes: usize,
    /// The most keys one principal holds (default 256).
    pub max_keys: usize,
    /// The most principals with state (default 10,000).
    pub max_principals: usize,
    /// How long a principal's state is kept after its last write or read (default 24 h).
    pub idle_ttl: Duration,
}

impl Default for UserStateLimits {
    fn default() -> Self {
        UserStateLimits {
            max_value_bytes: DEFAULT_MAX_VALUE_BYTES,
            max_keys: DEFAULT_MAX_KEYS,
            max_principals: 10_000,
            idle_ttl: Duration::from_secs(24 * 3600),
        }
    }
}

/// User state in this process (it ends with it), within [`UserStateLimits`]: past them a
/// write is refused naming the bound; a principal idle past `idle_ttl` is forgotten.
///
/// ```
/// use std::time::Duration;
/// use wymcp::backend::{InMemoryUserState, UserStateLimits};
///
/// let mut limits = UserStateLimits::default();
/// limits.max_keys = 16;
/// limits.idle_ttl = Duration::from_secs(3600);
/// let store = InMemoryUserState::with_limits(limits);
/// # let _ = store;
/// ```
#[derive(Debug)]
pub struct InMemoryUserState {
    limits: UserStateLimits,
    principals: Mutex<HashMap<String, Held>>,
}

#[derive(Debug)]
struct Held {
    keys: HashMap<String, String>,
    used: Instant,
}

impl Default for InMemoryUserState {
    fn default() -> Self {
        InMemoryUserState::with_limits(UserStateLimits::default())
    }
}

impl InMemoryUserState {
    /// A store within `limits`.
    pub fn with_limits(limits: UserStateLimits) -> Self {
        InMemoryUserState {
            limits,
            principals: Mutex::new(HashMap::new()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Held>> {
        self.principals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The principal's state, if held and not idle past the TTL (touched).
    fn live<'m>(
        &self,
        map: &'m mut HashMap<String, Held>,
        principal: &str,
    ) -> Option<&'m mut Held> {
        let now = Instant::now();
        let idle = map
            .get(principal)
            .is_some_and(|held| now.duration_since(held.used) >= self.limits.idle_ttl);
        if idle {
            map.remove(principal);
        }
        let held = map.get_mut(principal)?;
        held.used = now;
        Some(held)
    }

    fn write(&self, principal: &str, key: &str, json: String) -> Result<(), UserStateError> {
        let mut map = self.lock();
        if self.live(&mut map, principal).is_none() {
            if map.len() >= self.limits.max_principals {
                let ttl = self.limits.idle_ttl;
                map.retain(|_, held| held.used.elapsed() < ttl);
            }
            if map.len() >= self.limits.max_principals {
                return Err(UserStateError::TooManyPrincipals(
                    self.limits.max_principals,
                ));
            }
            let fresh = Held {
                keys: HashMap::new(),
                used: Instant::now(),
            };
            map.insert(principal.to_owned(), fresh);
        }
        let Some(held) = map.get_mut(principal) else {
            return Err(UserStateError::Store(
                "the principal's state vanished".into(),
            ));
        };
        if !held.keys.contains_key(key) && held.keys.len() >= self.limits.max_keys {
            return Err(UserStateError::TooManyKeys(self.limits.max_keys));
        }
        held.keys.insert(key.to_owned(), json);
        Ok(())
    }
}

impl UserStateStore for InMemoryUserState {
    fn get<'a>(
        &'a self,
        principal: &'a str,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, UserStateError>> {
        let mut map = self.lock();
        let value = self
            .live(&mut map, principal)
            .and_then(|held| held.keys.get(key).cloned());
        Box::pin(std::future::ready(Ok(value)))
    }

    fn set<'a>(
        &'a self,
        principal: &'a str,
        key: &'a str,
        json: String,
    ) -> BoxFuture<'a, Result<(), UserStateError>> {
        Box::pin(std::future::ready(self.write(principal, key, json)))
    }

    fn remove<'a>(
        &'a self,
        principal: &'a str,
        key: &'a str,
    ) -> BoxFuture<'a, Result<bool, UserStateError>> {
        let mut map = self.lock();
        let removed = self
            .live(&mut map, principal)
            .is_some_and(|held| held.keys.remove(key).is_some());
        Box::pin(std::future::ready(Ok(removed)))
    }

    fn max_value_bytes(&self) -> usize {
        self.limits.max_value_bytes
    }
}
