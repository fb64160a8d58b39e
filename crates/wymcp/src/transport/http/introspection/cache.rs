//! The answers of an [`IntrospectionAuth`](super::IntrospectionAuth), by token digest: bounded
//! in count and in time.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::Verdict;

/// Answers by the SHA-256 of their token, each until its time is up.
pub(crate) struct Cache {
    entries: Mutex<HashMap<[u8; 32], (Verdict, Instant)>>,
    pub(crate) capacity: usize,
    pub(crate) ttl: Duration,
    pub(crate) negative_ttl: Duration,
}

impl Cache {
    pub(crate) fn new(capacity: usize, ttl: Duration, negative_ttl: Duration) -> Self {
        Cache {
            entries: Mutex::new(HashMap::new()),
            capacity,
            ttl,
            negative_ttl,
        }
    }

    /// The answer kept for `digest`, while its time is not up.
    pub(crate) fn get(&self, digest: &[u8; 32]) -> Option<Verdict> {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let (verdict, until) = entries.get(digest)?;
        (Instant::now() < *until).then(|| verdict.clone())
    }

    /// Keeps `verdict` until `until`. A full cache first drops the answers whose time is up,
    /// then, still full, starts over (an attacker's flood of tokens cannot grow it).
    pub(crate) fn put(&self, digest: [u8; 32], verdict: Verdict, until: Instant) {
        let now = Instant::now();
        if until <= now || self.capacity == 0 {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if entries.len() >= self.capacity && !entries.contains_key(&digest) {
            entries.retain(|_, (_, until)| *until > now);
            if entries.len() >= self.capacity {
                entries.clear();
            }
        }
        entries.insert(digest, (verdict, until));
    }

    /// Until when an active token is kept: its `exp`, and at most the cache's TTL.
    pub(crate) fn accepted_until(&self, exp: Option<u64>, now_secs: u64) -> Instant {
        let left = exp.map_or(self.ttl, |exp| {
            Duration::from_secs(exp.saturating_sub(now_secs)).min(self.ttl)
        });
        Instant::now() + left
    }

    /// Until when a refused token is kept.
    pub(crate) fn refused_until(&self) -> Instant {
        Instant::now() + self.negative_ttl
    }
}
