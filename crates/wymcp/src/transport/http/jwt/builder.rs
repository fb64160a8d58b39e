//! [`JwtAuthBuilder`]'s settings and their checks.

use std::sync::Arc;
use std::time::Duration;

use jsonwebtoken::AlgorithmFamily;

use super::jwks::{Jwks, JwksSettings};
use super::keys::VerifyingKey;
use super::{Algorithm, DEFAULT_ALGORITHMS, DecodingKey, JwtAuth, JwtAuthBuilder, JwtConfigError};

impl JwtAuthBuilder {
    /// Accepts tokens whose `iss` is `issuer` (required; may be given more than once).
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuers.push(issuer.into());
        self
    }

    /// Accepts tokens whose `aud` holds `audience` (may be given more than once). Without
    /// one, the audience is the `resource` of the server's protected-resource metadata.
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// Takes keys from this JWKS URL (`https`, or `http` on a loopback host), fetched when
    /// [`build`](Self::build) runs inside a Tokio runtime (else on first use) and kept as its
    /// `Cache-Control: max-age` says; a stale set is refreshed in the background while it
    /// keeps serving.
    pub fn jwks_url(mut self, url: impl Into<String>) -> Self {
        self.jwks_url = Some(url.into());
        self
    }

    /// A static key verifying `algorithm`, named `kid` (a token naming another `kid` is not
    /// verified with it).
    ///
    /// ```
    /// use wymcp::transport::http::jwt::{Algorithm, DecodingKey, JwtAuth};
    ///
    /// let auth = JwtAuth::builder()
    ///     .issuer("https://id.example.com")
    ///     .audience("https://mcp.example.com/mcp")
    ///     .algorithms([Algorithm::HS256])
    ///     .key(Some("dev"), DecodingKey::from_secret(b"a development secret").unwrap(), Algorithm::HS256)
    ///     .build();
    /// assert!(auth.is_ok());
    /// ```
    pub fn key(mut self, kid: Option<&str>, key: DecodingKey, algorithm: Algorithm) -> Self {
        self.keys.push((kid.map(str::to_owned), key, algorithm));
        self
    }

    /// The algorithm allowlist (default: RS256/384/512, PS256/384/512, ES256/384, EdDSA).
    pub fn algorithms(mut self, algorithms: impl IntoIterator<Item = Algorithm>) -> Self {
        self.algorithms = Some(algorithms.into_iter().collect());
        self
    }

    /// Clock skew allowed on `exp` and `nbf` (default 30 seconds; whole seconds).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = Some(leeway);
        self
    }

    /// The shortest time between two JWKS fetches caused by unknown key ids (default 30
    /// seconds): tokens naming keys nobody published cannot make the server hammer the
    /// identity provider.
    pub fn refetch_interval(mut self, interval: Duration) -> Self {
        self.refetch_interval = Some(interval);
        self
    }

    /// Bounds on how long a fetched JWKS is kept, whatever its `Cache-Control` says
    /// (default 1 minute to 24 hours; 1 minute without `max-age`).
    pub fn jwks_cache_bounds(mut self, shortest: Duration, longest: Duration) -> Self {
        self.cache_bounds = Some((shortest, longest.max(shortest)));
        self
    }

    /// The time a JWKS fetch may take (default 10 seconds).
    pub fn fetch_timeout(mut self, timeout: Duration) -> Self {
        self.fetch_timeout = Some(timeout);
        self
    }

    /// The longest a request waits for a JWKS fetch it needs (default 5 seconds): the first
    /// fetch, or one for a key id the set lacks. The fetch goes on in the background; the
    /// request is then answered `503 temporarily_unavailable: the identity provider's keys
    /// (JWKS) were not fetched within 5000 ms`. A stale set is refreshed without making any
    /// request wait.
    pub fn jwks_wait(mut self, wait: Duration) -> Self {
        self.jwks_wait = Some(wait);
        self
    }

    /// Accepts only RFC 9068 access tokens: a token whose header `typ` is not `at+jwt` (or
    /// `application/at+jwt`) is refused. Off by default, because many identity providers
    /// type their access tokens `JWT` or not at all; without it, a `typ` naming another kind
    /// of JWT (`dpop+jwt`, `logout+jwt`, `secevent+jwt`, …) is still refused. Turn it on when
    /// the provider issues `at+jwt`: an ID token of the same issuer whose `aud` matches is then
    /// refused too.
    pub fn require_at_jwt(mut self) -> Self {
        self.require_at_jwt = true;
        self
    }

    /// The [`JwtAuth`], or the setting that makes it unsafe.
    pub fn build(self) -> Result<JwtAuth, JwtConfigError> {
        if self.issuers.is_empty() {
            return Err(JwtConfigError::NoIssuer);
        }
        if self.keys.is_empty() && self.jwks_url.is_none() {
            return Err(JwtConfigError::NoKeys);
        }
        let allowed = self.allowed()?;
        let keys = self.static_keys(&allowed)?;
        let jwks = match &self.jwks_url {
            None => None,
            Some(url) => Some(self.jwks(url, &allowed)?),
        };
        Ok(JwtAuth {
            issuers: self.issuers,
            audiences: crate::transport::http::auth::Audiences::new(self.audiences),
            leeway: self.leeway.unwrap_or(Duration::from_secs(30)),
            allowed,
            keys,
            jwks,
            require_at_jwt: self.require_at_jwt,
        })
    }

    /// The allowlist: the configured one, else the defaults (with static keys only, the
    /// defaults and the static keys' algorithms). No HMAC with a JWKS.
    fn allowed(&self) -> Result<Vec<Algorithm>, JwtConfigError> {
        let allowed = match &self.algorithms {
            Some(list) => list.clone(),
            None => {
                let mut list = DEFAULT_ALGORITHMS.to_vec();
                if self.jwks_url.is_none() {
                    list.extend(self.keys.iter().map(|(_, _, alg)| *alg));
                }
                list
            }
        };
        if allowed.is_empty() {
            return Err(JwtConfigError::NoAlgorithms);
        }
        if self.jwks_url.is_some()
            && let Some(hmac) = allowed.iter().find(|a| a.family() == AlgorithmFamily::Hmac)
        {
            return Err(JwtConfigError::HmacWithJwks(format!("{hmac:?}")));
        }
        Ok(allowed)
    }

    fn static_keys(&self, allowed: &[Algorithm]) -> Result<Vec<VerifyingKey>, JwtConfigError> {
        self.keys
            .iter()
            .map(|(kid, key, algorithm)| {
                if !allowed.contains(algorithm) || key.family() != algorithm.family() {
                    return Err(JwtConfigError::KeyOutsideAllowlist {
                        kid: kid.clone(),
                        algorithm: format!("{algorithm:?}"),
                    });
                }
                Ok(VerifyingKey {
                    kid: kid.clone(),
                    key: Arc::new(key.clone()),
                    algorithms: vec![*algorithm],
                })
            })
            .collect()
    }

    fn jwks(&self, url: &str, allowed: &[Algorithm]) -> Result<Jwks, JwtConfigError> {
        if !secure_url(url) {
            return Err(JwtConfigError::InsecureJwksUrl(url.to_owned()));
        }
        let settings = JwksSettings {
            refetch_interval: self.refetch_interval.unwrap_or(Duration::from_secs(30)),
            max_age_bounds: self
                .cache_bounds
                .unwrap_or((Duration::from_secs(60), Duration::from_secs(24 * 3600))),
            allowed: allowed.to_vec(),
            wait: self.jwks_wait.unwrap_or(Duration::from_secs(5)),
            fetch_timeout: self.fetch_timeout.unwrap_or(Duration::from_secs(10)),
        };
        let jwks = Jwks::new(url.to_owned(), settings)
            .map_err(|e| JwtConfigError::Client(e.to_string()))?;
        jwks.prefetch();
        Ok(jwks)
    }
}

/// `https://…`, or `http://` to a loopback host.
pub(crate) fn secure_url(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    if lower.starts_with("https://") {
        return true;
    }
    let Some(rest) = lower.strip_prefix("http://") else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains('@') {
        return false;
    }
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => authority.split(':').next().unwrap_or_default(),
    };
    host == "localhost" || host == "::1" || host.starts_with("127.")
}
