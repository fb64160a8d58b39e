//! [`IntrospectionAuthBuilder`]'s settings and their checks.

use std::time::Duration;

use super::IntrospectionAuth;
use super::cache::Cache;

/// Builds an [`IntrospectionAuth`] ([`IntrospectionAuth::builder`]).
#[derive(Debug, Default)]
#[must_use]
pub struct IntrospectionAuthBuilder {
    endpoint: Option<String>,
    credentials: Option<(String, String)>,
    issuers: Vec<String>,
    audiences: Vec<String>,
    leeway: Option<Duration>,
    cache_capacity: Option<usize>,
    cache_ttl: Option<Duration>,
    negative_cache_ttl: Option<Duration>,
    timeout: Option<Duration>,
}

/// An [`IntrospectionAuthBuilder`] setting that cannot check tokens safely.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IntrospectionConfigError {
    /// No endpoint.
    #[error("IntrospectionAuth needs the introspection endpoint (`.endpoint(…)`)")]
    NoEndpoint,
    /// No client credentials: RFC 7662 §2.1 has the caller authenticate.
    #[error("IntrospectionAuth needs client credentials (`.client_credentials(…)`)")]
    NoCredentials,
    /// The endpoint is not an `https` URL (`http` only for a loopback host).
    #[error("the introspection endpoint must be https (http only on a loopback host): {0}")]
    InsecureEndpoint(String),
    /// The HTTP client could not be built.
    #[error("the introspection client could not be built: {0}")]
    Client(String),
}

impl IntrospectionAuthBuilder {
    /// The introspection endpoint (`https`, or `http` on a loopback host).
    pub fn endpoint(mut self, url: impl Into<String>) -> Self {
        self.endpoint = Some(url.into());
        self
    }

    /// This server's client credentials at the authorization server, sent with HTTP Basic
    /// (`client_secret_basic`).
    pub fn client_credentials(mut self, id: impl Into<String>, secret: impl Into<String>) -> Self {
        self.credentials = Some((id.into(), secret.into()));
        self
    }

    /// Accepts tokens whose `iss` is `issuer` (may be given more than once); without one,
    /// the issuer is not checked (the endpoint vouches for its own tokens).
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

    /// The clock skew allowed on `exp` and `nbf` (default 60 s).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = Some(leeway);
        self
    }

    /// The most tokens whose answers are kept (default 10,000; 0 keeps none).
    pub fn cache_capacity(mut self, capacity: usize) -> Self {
        self.cache_capacity = Some(capacity);
        self
    }

    /// The longest an active token's answer is kept (default 60 s; never past its `exp`): a
    /// token revoked at the authorization server is still accepted here for up to this long.
    pub fn cache_ttl(mut self, ttl: Duration) -> Self {
        self.cache_ttl = Some(ttl);
        self
    }

    /// How long a refused token's answer is kept (default 10 s).
    pub fn negative_cache_ttl(mut self, ttl: Duration) -> Self {
        self.negative_cache_ttl = Some(ttl);
        self
    }

    /// How long one introspection request may take (default 5 s); past it the request
    /// being authenticated is answered 503.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The auth hook, or the setting that is missing or unsafe.
    pub fn build(self) -> Result<IntrospectionAuth, IntrospectionConfigError> {
        let endpoint = self.endpoint.ok_or(IntrospectionConfigError::NoEndpoint)?;
        if !crate::transport::http::jwt::secure_url(&endpoint) {
            return Err(IntrospectionConfigError::InsecureEndpoint(endpoint));
        }
        let (client_id, client_secret) = self
            .credentials
            .ok_or(IntrospectionConfigError::NoCredentials)?;
        let client = reqwest::Client::builder()
            .timeout(self.timeout.unwrap_or(Duration::from_secs(5)))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| IntrospectionConfigError::Client(e.to_string()))?;
        Ok(IntrospectionAuth {
            endpoint,
            client_id,
            client_secret,
            issuers: self.issuers,
            audiences: crate::transport::http::auth::Audiences::new(self.audiences),
            leeway: self.leeway.unwrap_or(Duration::from_secs(30)),
            client,
            cache: Cache::new(
                self.cache_capacity.unwrap_or(10_000),
                self.cache_ttl.unwrap_or(Duration::from_secs(60)),
                self.negative_cache_ttl.unwrap_or(Duration::from_secs(10)),
            ),
        })
    }
}
