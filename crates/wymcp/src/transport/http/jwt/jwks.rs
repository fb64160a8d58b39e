//! The JWKS of a [`JwtAuth`](super::JwtAuth): fetched from its URL when the auth is built
//! (inside a Tokio runtime) or on first use, kept for as long as the response's
//! `Cache-Control: max-age` says (within bounds), and fetched again early when a token names a
//! key id the set does not hold, at most once per refetch interval.
//!
//! One fetch at a time, in a task of its own: requests never run a fetch themselves.
//! * A stale set keeps serving while the fetch runs (stale-while-revalidate): a slow or
//!   hanging identity provider delays no request whose key the set holds.
//! * A request that needs the fetch (no set held yet, or a `kid` the set lacks) waits for it
//!   at most the bounded wait ([`JwtAuthBuilder::jwks_wait`](super::JwtAuthBuilder::jwks_wait)),
//!   then is answered with what is held: without any set, `503 temporarily_unavailable`, never
//!   a 401 for a token that could not be checked.
//! * A failed fetch keeps the keys held and is not retried before the refetch interval, held
//!   set or not: a failing endpoint is not hammered by the requests it fails.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;
use tokio::sync::watch;

use super::keys::VerifyingKey;

/// The most bytes a JWKS response may have.
pub(crate) const MAX_JWKS_BYTES: usize = 256 * 1024;
/// The most keys kept from one JWKS.
pub(crate) const MAX_JWKS_KEYS: usize = 64;

/// Why a JWKS could not be had.
#[derive(Debug, Clone, thiserror::Error)]
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

/// Why the keys for a token could not be told now: the request is answered 503.
#[derive(Debug, thiserror::Error)]
pub(crate) enum JwksUnavailable {
    /// No key set was ever fetched; the last attempt failed.
    #[error("the identity provider's keys (JWKS) could not be fetched: {0}")]
    Failed(JwksError),
    /// The fetch the request needed did not finish within the bounded wait.
    #[error("the identity provider's keys (JWKS) were not fetched within {}", millis(*.0))]
    Slow(Duration),
}

fn millis(wait: Duration) -> String {
    format!("{} ms", wait.as_millis())
}

/// How a [`Jwks`] fetches and keeps its keys.
pub(crate) struct JwksSettings {
    /// The shortest time between two fetches not made because the set went stale.
    pub(crate) refetch_interval: Duration,
    /// Bounds on a set's lifetime, whatever its `max-age` says.
    pub(crate) max_age_bounds: (Duration, Duration),
    /// The algorithms a key may verify.
    pub(crate) allowed: Vec<Algorithm>,
    /// The longest a request waits for a fetch it needs.
    pub(crate) wait: Duration,
    /// The longest one fetch may take.
    pub(crate) fetch_timeout: Duration,
}

/// The keys of the last successful fetch, and when they go stale.
struct Fetched {
    keys: Vec<VerifyingKey>,
    stale_at: Instant,
}

/// What is known of the JWKS: the set held, the fetch running, the last attempt.
#[derive(Default)]
struct State {
    held: Option<Fetched>,
    /// Whether a fetch task runs (one at a time).
    fetching: bool,
    /// When the last fetch ended, and how it failed if it did.
    last_attempt: Option<Instant>,
    last_error: Option<JwksError>,
}

/// A JWKS URL and its cache. Cloning shares them.
#[derive(Clone)]
pub(crate) struct Jwks {
    inner: Arc<Inner>,
}

struct Inner {
    url: String,
    client: reqwest::Client,
    settings: JwksSettings,
    state: Mutex<State>,
    /// Counts the fetches ended; a request waiting for one watches it.
    ended: watch::Sender<u64>,
}

impl std::fmt::Debug for Jwks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Jwks")
            .field("url", &self.inner.url)
            .finish_non_exhaustive()
    }
}

/// What a request does with the state it found.
enum Step {
    /// Verify with these keys (maybe none: the `kid` is unknown and no fetch is due).
    Serve(Vec<VerifyingKey>),
    /// Wait for the fetch running (started by this request or another).
    Wait,
    /// Nothing held and no fetch due: the last failure.
    Unavailable(JwksError),
}

impl Jwks {
    pub(crate) fn new(url: String, settings: JwksSettings) -> Result<Self, reqwest::Error> {
        let client = reqwest::Client::builder()
            .timeout(settings.fetch_timeout)
            .redirect(reqwest::redirect::Policy::none())
            // Fetches are minutes apart, and the first may run on the runtime that built the
            // auth, not the one serving: no connection is kept from one fetch to the next.
            .pool_max_idle_per_host(0)
            .build()?;
        Ok(Jwks {
            inner: Arc::new(Inner {
                url,
                client,
                settings,
                state: Mutex::new(State::default()),
                ended: watch::channel(0).0,
            }),
        })
    }

    /// Starts the first fetch when called inside a Tokio runtime, so that the set is held
    /// before the first request needs it; outside one, the first request starts it.
    pub(crate) fn prefetch(&self) {
        if tokio::runtime::Handle::try_current().is_ok() {
            let mut state = self.inner.lock();
            self.start(&mut state, Instant::now());
        }
    }

    /// The keys a token with key id `kid` may be verified with (see the module's
    /// documentation): the held set's while it names `kid` (a stale one starting a
    /// fetch in the background); else after waiting, boundedly, for a fetch.
    pub(crate) async fn keys_for(
        &self,
        kid: Option<&str>,
    ) -> Result<Vec<VerifyingKey>, JwksUnavailable> {
        // Subscribed before the state is read: a fetch ending after that is seen.
        let mut ended = self.inner.ended.subscribe();
        let wait = self.inner.settings.wait;
        let deadline = Instant::now() + wait;
        // The first look may start a fetch; each later one follows a fetch that ended (one
        // may have ended just before the first look, and another request may start one
        // after this request's ended): a few looks, all within the one bounded wait.
        for round in 0..4 {
            let step = {
                let mut state = self.inner.lock();
                self.step(&mut state, kid, Instant::now(), round == 0)
            };
            match step {
                Step::Serve(keys) => return Ok(keys),
                Step::Unavailable(error) => return Err(JwksUnavailable::Failed(error)),
                Step::Wait => {}
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if tokio::time::timeout(left, ended.changed()).await.is_err() {
                break;
            }
        }
        Err(JwksUnavailable::Slow(wait))
    }

    /// What a request for `kid` does now; starts a fetch when one is due and `may_start`.
    fn step(&self, state: &mut State, kid: Option<&str>, now: Instant, may_start: bool) -> Step {
        if let Some(held) = &state.held {
            let keys = matching(&held.keys, kid);
            if !keys.is_empty() {
                if now >= held.stale_at && may_start {
                    // Stale: refreshed in the background; the held keys serve meanwhile.
                    self.start(state, now);
                }
                return Step::Serve(keys);
            }
        }
        if may_start {
            self.start(state, now);
        }
        if state.fetching {
            return Step::Wait;
        }
        match (&state.held, &state.last_error) {
            (Some(_), _) | (None, None) => Step::Serve(Vec::new()),
            (None, Some(error)) => Step::Unavailable(error.clone()),
        }
    }

    /// Starts the fetch task unless one runs or the last fetch ended within the refetch
    /// interval.
    fn start(&self, state: &mut State, now: Instant) {
        let recent = state.last_attempt.is_some_and(|ended| {
            now.saturating_duration_since(ended) < self.inner.settings.refetch_interval
        });
        if state.fetching || recent {
            return;
        }
        state.fetching = true;
        let ending = Ending {
            inner: Arc::clone(&self.inner),
            ended: false,
        };
        tokio::spawn(async move {
            let outcome = ending.inner.fetch().await;
            ending.end(outcome);
        });
    }
}

/// Ends a fetch task: records its outcome, clears `fetching`, wakes the waiters. Dropped
/// before [`Ending::end`] (the task cancelled with its runtime), it ends the fetch as failed,
/// so that no request waits for a task that is gone.
struct Ending {
    inner: Arc<Inner>,
    ended: bool,
}

/// What one fetch gave: the keys and the response's `max-age`, or why not.
type Outcome = Result<(Vec<VerifyingKey>, Option<Duration>), JwksError>;

impl Ending {
    fn end(mut self, outcome: Outcome) {
        self.ended = true;
        self.inner.record(Some(outcome));
    }
}

impl Drop for Ending {
    fn drop(&mut self) {
        if !self.ended {
            self.inner.record(None);
        }
    }
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records a fetch's outcome (`None`: its task was cancelled) and wakes the waiters.
    fn record(&self, fetched: Option<Outcome>) {
        let now = Instant::now();
        {
            let mut state = self.lock();
            state.fetching = false;
            state.last_attempt = Some(now);
            match fetched {
                Some(Ok((keys, max_age))) => {
                    let (low, high) = self.settings.max_age_bounds;
                    let stale_at = now + max_age.unwrap_or(low).clamp(low, high);
                    state.held = Some(Fetched { keys, stale_at });
                    state.last_error = None;
                }
                Some(Err(error)) => {
                    tracing::warn!(url = %self.url, %error, "JWKS fetch failed; keeping the keys held");
                    state.last_error = Some(error);
                }
                None => {
                    state.last_error = Some(JwksError::Request("the fetch was cancelled".into()));
                }
            }
        }
        self.ended.send_modify(|count| *count += 1);
    }

    /// One GET of the JWKS: its usable keys and the response's `max-age`.
    async fn fetch(&self) -> Outcome {
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
        Ok((parse_jwks(&body, &self.settings.allowed)?, max_age))
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
        // The set's issuer binding is the set's, applied where it is read (`JwtAuth`).
        issuer: None,
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
