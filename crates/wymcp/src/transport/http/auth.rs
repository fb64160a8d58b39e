//! The auth hook ([`Authenticate`]), the ready [`BearerAuth`], and the `WWW-Authenticate`
//! challenge.

use std::collections::HashMap;
use std::fmt;

use axum::http::{HeaderMap, HeaderValue, header};
use futures_util::future::BoxFuture;

pub use crate::serve::Identity;

/// An auth hook's refusal; the reason is sent to the client (401).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AuthRefusal(pub String);

/// Decides, from the request headers alone, who the caller is. Runs on every route (POST, GET,
/// DELETE) after the Origin/Host checks and before any session state is touched; a refusal is
/// answered 401 with a `WWW-Authenticate: Bearer …` challenge.
pub trait Authenticate: Send + Sync + 'static {
    /// The caller's identity, or why not.
    fn authenticate<'a>(
        &'a self,
        headers: &'a HeaderMap,
    ) -> BoxFuture<'a, Result<Identity, AuthRefusal>>;
}

type Verifier = Box<dyn Fn(&str) -> Option<Identity> + Send + Sync>;

/// Bearer-token auth: static tokens, a verifier closure, or both (static tokens first).
///
/// ```
/// use wymcp::transport::http::{BearerAuth, Identity};
///
/// let auth = BearerAuth::new()
///     .token("s3cret", Identity::new("alice"))
///     .verifier(|token| token.strip_prefix("svc-").map(Identity::new));
/// # let _ = auth;
/// ```
#[derive(Default)]
pub struct BearerAuth {
    tokens: HashMap<String, Identity>,
    verifier: Option<Verifier>,
}

impl fmt::Debug for BearerAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BearerAuth")
            .field("tokens", &self.tokens.len())
            .field("verifier", &self.verifier.is_some())
            .finish()
    }
}

impl BearerAuth {
    /// No tokens accepted yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Accepts `token` as `identity`.
    #[must_use]
    pub fn token(mut self, token: impl Into<String>, identity: Identity) -> Self {
        self.tokens.insert(token.into(), identity);
        self
    }

    /// Accepts the tokens `verify` maps to an identity.
    #[must_use]
    pub fn verifier(
        mut self,
        verify: impl Fn(&str) -> Option<Identity> + Send + Sync + 'static,
    ) -> Self {
        self.verifier = Some(Box::new(verify));
        self
    }

    fn check(&self, headers: &HeaderMap) -> Result<Identity, AuthRefusal> {
        let mut values = headers.get_all(header::AUTHORIZATION).iter();
        let (Some(value), None) = (values.next(), values.next()) else {
            return Err(AuthRefusal("Unauthorized".to_owned()));
        };
        let value = value
            .to_str()
            .map_err(|_| AuthRefusal("invalid_request".to_owned()))?;
        let Some((scheme, token)) = value.trim().split_once(' ') else {
            return Err(AuthRefusal("invalid_request".to_owned()));
        };
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(AuthRefusal("invalid_request".to_owned()));
        }
        let token = token.trim();
        if let Some(identity) = self.tokens.get(token) {
            return Ok(identity.clone());
        }
        self.verifier
            .as_ref()
            .and_then(|verify| verify(token))
            .ok_or_else(|| AuthRefusal("invalid_token".to_owned()))
    }
}

impl Authenticate for BearerAuth {
    fn authenticate<'a>(
        &'a self,
        headers: &'a HeaderMap,
    ) -> BoxFuture<'a, Result<Identity, AuthRefusal>> {
        let result = self.check(headers);
        Box::pin(async move { result })
    }
}

/// `Bearer` followed by the auth-params `key="value"` joined by `", "`, values escaped as
/// quoted strings, then `error="invalid_token"` when the request presented credentials that
/// were refused (RFC 6750 §3.1: a request without any gets no error code); bare `Bearer` if
/// the result is not a valid header value.
pub(crate) fn challenge(params: &[(String, String)], invalid_token: bool) -> HeaderValue {
    let error = [("error".to_owned(), "invalid_token".to_owned())];
    let extra: &[(String, String)] = if invalid_token { &error } else { &[] };
    if params.is_empty() && extra.is_empty() {
        return HeaderValue::from_static("Bearer");
    }
    let rendered: Vec<String> = params
        .iter()
        .chain(extra)
        .map(|(k, v)| format!("{k}=\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\"")))
        .collect();
    HeaderValue::from_str(&format!("Bearer {}", rendered.join(", "))).unwrap_or_else(|_| {
        tracing::error!("www_authenticate: the configured auth-params are not a valid header");
        HeaderValue::from_static("Bearer")
    })
}
