//! The JWKS of a [`JwtAuth`](super::JwtAuth): fetched from its URL, kept for as long as the
//! response's `Cache-Control: max-age` says (within bounds), and fetched again early when a
//! token names a key id the set does not hold, at most once per refetch interval.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;

use super::keys::VerifyingKey;

/// The most bytes a JWKS response may have.
pub(crate) const MAX_JWKS_BYTES: usize = 256 * 1024;
/// The most keys kept from one JWKS.
pub(crate) const MAX_JWKS_KEYS: usize = 64;

/// Why a JWKS could not be had.
#[derive(Debug, thiserror::Error)]
pub(crate) enum JwksError {
    #[error("the JWKS request failed: {0}")]
    Request(String),
    #[error("the JWKS endpoint answered {0}")]
    Status(u16),
    #[error("the JWKS is larger than {MAX_JWKS_BYTES} bytes")]
    TooLarge,
    #[error("the JWKS is not a JSON object with a `keys` array")]
    Shape,
}

/// The keys of the last fetch, and when they go stale.
struct Fetched {
    keys: Vec<VerifyingKey>,
    stale_at: Instant,
    fetched_at: Instant,
}

/// A JWKS URL and its cache.
pub(crate) struct Jwks {
    url: String,
    client: reqwest::Client,
    cache: Mutex<Option<Fetched>>,
    /// One fetch at a time; a request that waited here sees the fetch it waited for.
    fetching: tokio::sync::Mutex<()>,
    pub(crate) refetch_interval: Duration,
    pub(crate) max_age_bounds: (Duration, Duration),
    pub(crate) allowed: Vec<Algorithm>,
}

impl std::fmt::Debug for Jwks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Jwks")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl Jwks {
    pub(crate) fn new(url: String, timeout: Duration) -> Result<Self, reqwest::Error> {
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(Jwks {
            url,
            client,
            cache: Mutex::new(None),
            fetching: tokio::sync::Mutex::new(()),
            refetch_interval: Duration::from_secs(30),
            max_age_bounds: (Duration::from_secs(60), Duration::from_secs(24 * 3600)),
            allowed: Vec::new(),
        })
    }

    /// The keys a token with key id `kid` may be verified with: from the cache while it is
    /// fresh and names `kid`; else after a fetch (a stale set, or an unknown `kid` once the
    /// refetch interval has passed). A failed fetch keeps the keys already held.
    pub(crate) async fn keys_for(&self, kid: Option<&str>) -> Vec<VerifyingKey> {
        let now = Instant::now();
        if let Some(keys) = self.cached(kid, now) {
            return keys;
        }
        let _turn = self.fetching.lock().await;
        // Another request may have fetched while this one waited.
        if let Some(keys) = self.cached(kid, Instant::now()) {
            return keys;
        }
        match self.fetch().await {
            Ok((keys, max_age)) => {
                let (low, high) = self.max_age_bounds;
                let now = Instant::now();
                let fetched = Fetched {
                    keys,
                    stale_at: now + max_age.unwrap_or(low).clamp(low, high),
                    fetched_at: now,
                };
                let matching = matching(&fetched.keys, kid);
                *self.lock() = Some(fetched);
                matching
            }
            Err(error) => {
                tracing::warn!(url = %self.url, %error, "JWKS fetch failed; keeping the keys held");
                let mut cache = self.lock();
                if let Some(held) = cache.as_mut() {
                    // Not again before the refetch interval: a failing endpoint is not hammered.
                    held.fetched_at = Instant::now();
                }
                cache
                    .as_ref()
                    .map(|held| matching(&held.keys, kid))
                    .unwrap_or_default()
            }
        }
    }

    /// The cached keys for `kid`, or `None` when a fetch is due: none held, the set stale, or
    /// `kid` unknown; but never within the refetch interval of the last fetch (a token naming
    /// an unknown key then is refused without one).
    fn cached(&self, kid: Option<&str>, now: Instant) -> Option<Vec<VerifyingKey>> {
        let cache = self.lock();
        let held = cache.as_ref()?;
        let keys = matching(&held.keys, kid);
        let fresh = now < held.stale_at;
        let recent = now.saturating_duration_since(held.fetched_at) < self.refetch_interval;
        ((fresh && !keys.is_empty()) || recent).then_some(keys)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Fetched>> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One GET of the JWKS: its usable keys and the response's `max-age`.
    async fn fetch(&self) -> Result<(Vec<VerifyingKey>, Option<Duration>), JwksError> {
        let mut response = self
            .client
            .get(&self.url)
            .header("accept", "application/json")
            .send()
            .await
            .map_err(|e| JwksError::Request(e.to_string()))?;
        if !response.status().is_success() {
            return Err(JwksError::Status(response.status().as_u16()));
        }
        let max_age = response
            .headers()
            .get_all("cache-control")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find_map(max_age);
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| JwksError::Request(e.to_string()))?
        {
            if body.len() + chunk.len() > MAX_JWKS_BYTES {
                return Err(JwksError::TooLarge);
            }
            body.extend_from_slice(&chunk);
        }
        Ok((parse_jwks(&body, &self.allowed)?, max_age))
    }
}

/// The keys that may verify a token naming `kid`: the key of that id; without a `kid`, every
/// key.
fn matching(keys: &[VerifyingKey], kid: Option<&str>) -> Vec<VerifyingKey> {
    keys.iter()
        .filter(|key| kid.is_none() || key.kid.as_deref() == kid)
        .cloned()
        .collect()
}

/// `max-age` of a `Cache-Control` value; `no-store` and `no-cache` count as 0 (the lower
/// bound then applies).
pub(crate) fn max_age(value: &str) -> Option<Duration> {
    value.split(',').map(str::trim).find_map(|directive| {
        let lower = directive.to_ascii_lowercase();
        if lower == "no-store" || lower == "no-cache" {
            return Some(Duration::ZERO);
        }
        let seconds = lower.strip_prefix("max-age=")?.trim_matches('"');
        seconds.parse::<u64>().ok().map(Duration::from_secs)
    })
}

/// The signing keys of a JWKS document: public keys only (an `oct` key is never taken from a
/// JWKS, so no HMAC algorithm can be verified with one), not marked for encryption, at most
/// [`MAX_JWKS_KEYS`]; each usable with its `alg` when it names one, else with the allowed
/// algorithms of its family. Keys this crate cannot use are skipped.
pub(crate) fn parse_jwks(
    body: &[u8],
    allowed: &[Algorithm],
) -> Result<Vec<VerifyingKey>, JwksError> {
    let document: Value = serde_json::from_slice(body).map_err(|_| JwksError::Shape)?;
    let entries = document
        .get("keys")
        .and_then(Value::as_array)
        .ok_or(JwksError::Shape)?;
    let keys = entries
        .iter()
        .filter(|entry| entry.get("kty").and_then(Value::as_str) != Some("oct"))
        .filter_map(|entry| serde_json::from_value::<Jwk>(entry.clone()).ok())
        .filter(|jwk| !matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)))
        .filter_map(|jwk| from_jwk(&jwk, allowed))
        .take(MAX_JWKS_KEYS)
        .collect();
    Ok(keys)
}

fn from_jwk(jwk: &Jwk, allowed: &[Algorithm]) -> Option<VerifyingKey> {
    let key = DecodingKey::from_jwk(jwk).ok()?;
    let family = key.family();
    // A key for another algorithm (`RSA-OAEP`, …) signs nothing.
    let named = match jwk.common.key_algorithm {
        Some(alg) => Some(Algorithm::try_from(alg).ok()?),
        None => None,
    };
    let algorithms: Vec<Algorithm> = allowed
        .iter()
        .copied()
        .filter(|alg| alg.family() == family)
        .filter(|alg| named.is_none_or(|named| named == *alg))
        .collect();
    (!algorithms.is_empty()).then(|| VerifyingKey {
        kid: jwk.common.key_id.clone(),
        key: std::sync::Arc::new(key),
        algorithms,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::time::Duration;

    use super::max_age;

    #[test]
    fn cache_control_gives_the_max_age() {
        assert_eq!(
            max_age("public, max-age=300"),
            Some(Duration::from_secs(300))
        );
        assert_eq!(max_age("Max-Age=\"60\""), Some(Duration::from_secs(60)));
        assert_eq!(max_age("no-store"), Some(Duration::ZERO));
        assert_eq!(max_age("public"), None);
        assert_eq!(max_age("max-age=soon"), None);
    }
}
