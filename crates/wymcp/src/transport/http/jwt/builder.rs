//! [`JwtAuthBuilder`]'s settings and their checks.

use std::sync::Arc;
use std::time::Duration;

use jsonwebtoken::AlgorithmFamily;

use super::jwks::{Jwks, JwksSettings};
use super::keys::VerifyingKey;
use super::{
    Algorithm, DEFAULT_ALGORITHMS, DecodingKey, JwtAuth, JwtAuthBuilder, JwtConfigError, StaticKey,
};

impl JwtAuthBuilder {
    /// Accepts tokens whose `iss` is `issuer` (required; may be given more than once).
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        let issuer = issuer.into();
        if !self.issuers.contains(&issuer) {
            self.issuers.push(issuer);
        }
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
    ///
    /// With several issuers, name each key source's issuer instead
    /// ([`issuer_jwks_url`](Self::issuer_jwks_url), [`issuer_key`](Self::issuer_key)):
    /// [`build`](Self::build) refuses a key source bound to no issuer then.
    pub fn jwks_url(mut self, url: impl Into<String>) -> Self {
        self.jwks_urls.push((None, url.into()));
        self
    }

    /// Accepts tokens whose `iss` is `issuer` (as [`issuer`](Self::issuer) does), verified
    /// with the keys of this JWKS URL; those keys verify no token of another issuer. With
    /// several identity providers, give each its own:
    ///
    /// ```
    /// use wymcp::transport::http::jwt::JwtAuth;
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let auth = JwtAuth::builder()
    ///     .issuer_jwks_url("https://staff.example.com", "https://staff.example.com/jwks")
    ///     .issuer_jwks_url("https://partners.example.com", "https://partners.example.com/jwks")
    ///     .audience("https://mcp.example.com/mcp")
    ///     .build();
    /// assert!(auth.is_ok());
    /// # }
    /// ```
    pub fn issuer_jwks_url(mut self, issuer: impl Into<String>, url: impl Into<String>) -> Self {
        let issuer = issuer.into();
        self = self.issuer(issuer.clone());
        self.jwks_urls.push((Some(issuer), url.into()));
        self
    }

    /// Accepts tokens whose `iss` is `issuer` (as [`issuer`](Self::issuer) does), and a
    /// static key, as [`key`](Self::key) gives one, that verifies tokens of that issuer only.
    pub fn issuer_key(
        mut self,
        issuer: impl Into<String>,
        kid: Option<&str>,
        key: DecodingKey,
        algorithm: Algorithm,
    ) -> Self {
        let issuer = issuer.into();
        self = self.issuer(issuer.clone());
        self.keys.push(StaticKey {
            issuer: Some(issuer),
            kid: kid.map(str::to_owned),
            key,
            algorithm,
        });
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
    ///
    /// With several issuers, use [`issuer_key`](Self::issuer_key): a key bound to no issuer
    /// is refused then.
    pub fn key(mut self, kid: Option<&str>, key: DecodingKey, algorithm: Algorithm) -> Self {
        self.keys.push(StaticKey {
            issuer: None,
            kid: kid.map(str::to_owned),
            key,
            algorithm,
        });
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
        if self.keys.is_empty() && self.jwks_urls.is_empty() {
            return Err(JwtConfigError::NoKeys);
        }
        if self.issuers.len() > 1 {
            let unbound = (self.keys.iter().map(|k| &k.issuer))
                .chain(self.jwks_urls.iter().map(|(issuer, _)| issuer))
                .any(Option::is_none);
            if unbound {
                return Err(JwtConfigError::UnboundKeys);
            }
        }
        if let Some(issuer) = self.issuers.iter().find(|issuer| {
            let bound = |i: &Option<String>| i.is_none() || i.as_ref() == Some(*issuer);
            !(self.keys.iter().any(|k| bound(&k.issuer))
                || self.jwks_urls.iter().any(|(i, _)| bound(i)))
        }) {
            return Err(JwtConfigError::IssuerWithoutKeys(issuer.clone()));
        }
        let allowed = self.allowed()?;
        let keys = self.static_keys(&allowed)?;
        let jwks = (self.jwks_urls.iter())
            .map(|(issuer, url)| Ok((issuer.clone(), self.jwks(url, &allowed)?)))
            .collect::<Result<Vec<_>, JwtConfigError>>()?;
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
                if self.jwks_urls.is_empty() {
                    list.extend(self.keys.iter().map(|k| k.algorithm));
                }
                list
            }
        };
        if allowed.is_empty() {
            return Err(JwtConfigError::NoAlgorithms);
        }
        if !self.jwks_urls.is_empty()
            && let Some(hmac) = allowed.iter().find(|a| a.family() == AlgorithmFamily::Hmac)
        {
            return Err(JwtConfigError::HmacWithJwks(format!("{hmac:?}")));
        }
        Ok(allowed)
    }

    fn static_keys(&self, allowed: &[Algorithm]) -> Result<Vec<VerifyingKey>, JwtConfigError> {
        self.keys
            .iter()
            .map(|k| {
                if !allowed.contains(&k.algorithm) || k.key.family() != k.algorithm.family() {
                    return Err(JwtConfigError::KeyOutsideAllowlist {
                        kid: k.kid.clone(),
                        algorithm: format!("{:?}", k.algorithm),
                    });
                }
                Ok(VerifyingKey {
                    kid: k.kid.clone(),
                    key: Arc::new(k.key.clone()),
                    algorithms: vec![k.algorithm],
                    issuer: k.issuer.clone(),
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
