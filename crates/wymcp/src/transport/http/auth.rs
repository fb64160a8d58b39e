//! The auth hook ([`Authenticate`]), the ready [`BearerAuth`], the reading of the
//! `Authorization` header (RFC 6750 §2.1), and the `WWW-Authenticate` challenge.

use std::fmt;

use axum::http::{HeaderMap, HeaderValue, header};
use futures_util::future::BoxFuture;
use sha2::{Digest, Sha256};
use subtle::{ConditionallySelectable as _, ConstantTimeEq as _};

use crate::serve::Identity;

/// An auth hook's refusal; the reason is sent to the client (401; 503 when made by
/// [`AuthRefusal::unavailable`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AuthRefusal(pub String);

/// The prefix of a refusal that says the credentials could not be checked now.
pub(crate) const UNAVAILABLE: &str = "temporarily_unavailable: ";

impl AuthRefusal {
    /// The credentials could not be checked now (the identity provider did not answer): the
    /// request is answered 503, not 401, so the client keeps its token.
    ///
    /// ```
    /// use wymcp::transport::http::AuthRefusal;
    ///
    /// let refusal = AuthRefusal::unavailable("the introspection endpoint did not answer");
    /// assert!(refusal.is_unavailable());
    /// assert!(!AuthRefusal("invalid_token: expired".into()).is_unavailable());
    /// ```
    pub fn unavailable(why: impl fmt::Display) -> Self {
        AuthRefusal(format!("{UNAVAILABLE}{why}"))
    }

    /// Whether this refusal is [`unavailable`](Self::unavailable)'s.
    pub fn is_unavailable(&self) -> bool {
        self.0.starts_with(UNAVAILABLE)
    }
}

/// Decides, from the request headers alone, who the caller is. Runs on every route (POST, GET,
/// DELETE) after the Origin/Host checks and before any session state is touched; a refusal is
/// answered 401 with a `WWW-Authenticate: Bearer …` challenge.
pub trait Authenticate: Send + Sync + 'static {
    /// The caller's identity, or why not.
    fn authenticate<'a>(
        &'a self,
        headers: &'a HeaderMap,
    ) -> BoxFuture<'a, Result<Identity, AuthRefusal>>;

    /// Told, when the service is built, the `resource` of its protected-resource metadata
    /// (RFC 9728): a hook checking a token's audience takes it as the audience it expects
    /// unless it was configured with one. The default ignores it.
    fn set_resource(&self, resource: &str) {
        let _ = resource;
    }
}

/// The audiences a token verifier accepts: the configured ones, else the `resource` of the
/// server's protected-resource metadata (told once, when the service is built).
#[cfg(feature = "jwt")]
#[derive(Debug, Default)]
pub(crate) struct Audiences {
    configured: Vec<String>,
    resource: std::sync::OnceLock<String>,
}

#[cfg(feature = "jwt")]
impl Audiences {
    pub(crate) fn new(configured: Vec<String>) -> Self {
        Audiences {
            configured,
            resource: std::sync::OnceLock::new(),
        }
    }

    /// The audiences a token must name one of (empty: none configured nor told).
    pub(crate) fn accepted(&self) -> Vec<String> {
        match (self.configured.is_empty(), self.resource.get()) {
            (false, _) => self.configured.clone(),
            (true, Some(resource)) => vec![resource.clone()],
            (true, None) => Vec::new(),
        }
    }

    /// Keeps the first resource told (one server, one resource).
    pub(crate) fn set_resource(&self, resource: &str) {
        let _ = self.resource.set(resource.to_owned());
    }
}

/// The bearer token of `headers`, or the refusal a token verifier answers without one: no
/// bearer credentials (`Unauthorized`), or a malformed header (`invalid_request`).
#[cfg(feature = "jwt")]
pub(crate) fn bearer_token(headers: &HeaderMap) -> Result<&str, AuthRefusal> {
    match presented(headers) {
        Presented::Bearer(token) => Ok(token),
        Presented::Nothing | Presented::OtherScheme => Err(AuthRefusal("Unauthorized".to_owned())),
        Presented::Malformed(_) => Err(AuthRefusal("invalid_request".to_owned())),
    }
}

type Verifier = Box<dyn Fn(&str) -> Option<Identity> + Send + Sync>;

/// Bearer-token auth: static tokens, a verifier closure, or both (static tokens first).
///
/// Static tokens are compared in constant time: the presented token's SHA-256 is compared with
/// the SHA-256 of every configured token, all of them, with `subtle`, so neither the length of
/// the common prefix nor which token matched shows in the time taken.
///
/// ```
/// use wymcp::Identity;
/// use wymcp::transport::http::BearerAuth;
///
/// let auth = BearerAuth::new()
///     .token("s3cret", Identity::new("alice"))
///     .verifier(|token| token.strip_prefix("svc-").map(Identity::new));
/// # let _ = auth;
/// ```
#[derive(Default)]
pub struct BearerAuth {
    /// SHA-256 of each static token, with the identity it stands for.
    tokens: Vec<([u8; 32], Identity)>,
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

    /// Accepts `token` as `identity` (a token given twice stands for the later identity).
    #[must_use]
    pub fn token(mut self, token: impl Into<String>, identity: Identity) -> Self {
        let digest = token_digest(&token.into());
        self.tokens.retain(|(known, _)| *known != digest);
        self.tokens.push((digest, identity));
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
        let token = match presented(headers) {
            Presented::Bearer(token) => token,
            Presented::Nothing | Presented::OtherScheme => {
                return Err(AuthRefusal("Unauthorized".to_owned()));
            }
            Presented::Malformed(_) => return Err(AuthRefusal("invalid_request".to_owned())),
        };
        if let Some(identity) = self.static_token(token) {
            return Ok(identity.clone());
        }
        self.verifier
            .as_ref()
            .and_then(|verify| verify(token))
            .ok_or_else(|| AuthRefusal("invalid_token".to_owned()))
    }

    /// The identity of a static token, compared with every configured token in constant time.
    fn static_token(&self, token: &str) -> Option<&Identity> {
        let presented = token_digest(token);
        // 0: none matched; i + 1: the i-th token matched. Every entry is compared, and the
        // index is selected without a branch on the comparison.
        let mut matched = 0u64;
        for (i, (digest, _)) in self.tokens.iter().enumerate() {
            let candidate = u64::try_from(i).map_or(u64::MAX, |i| i.saturating_add(1));
            matched =
                u64::conditional_select(&matched, &candidate, digest[..].ct_eq(&presented[..]));
        }
        let index = usize::try_from(matched.checked_sub(1)?).ok()?;
        self.tokens.get(index).map(|(_, identity)| identity)
    }
}

fn token_digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// What a request's `Authorization` header presents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Presented<'a> {
    /// No `Authorization` header.
    Nothing,
    /// `Bearer <token>`, the token in RFC 6750's `b64token` syntax.
    Bearer(&'a str),
    /// Credentials of another scheme (`Basic …`): no bearer credentials.
    OtherScheme,
    /// A header that is not `<scheme> <credentials>`, a bearer token outside the `b64token`
    /// syntax, or more than one `Authorization` header: what the client is told.
    Malformed(&'static str),
}

/// Reads the `Authorization` header by RFC 6750 §2.1: `Bearer 1*SP b64token`, the scheme
/// case-insensitive, one header.
pub(crate) fn presented(headers: &HeaderMap) -> Presented<'_> {
    const MALFORMED: &str = "Malformed Authorization header: expected `Bearer <token>` \
        (RFC 6750 §2.1)";
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let value = match (values.next(), values.next()) {
        (None, _) => return Presented::Nothing,
        (Some(value), None) => value,
        (Some(_), Some(_)) => {
            return Presented::Malformed(
                "Duplicated Authorization header. Send exactly one Authorization header.",
            );
        }
    };
    let Ok(value) = value.to_str() else {
        return Presented::Malformed(MALFORMED);
    };
    let Some((scheme, credentials)) = value.trim().split_once(' ') else {
        return Presented::Malformed(MALFORMED);
    };
    if scheme.is_empty() || !scheme.bytes().all(is_tchar) {
        return Presented::Malformed(MALFORMED);
    }
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Presented::OtherScheme;
    }
    let token = credentials.trim_start_matches(' ');
    match is_b64token(token) {
        true => Presented::Bearer(token),
        false => Presented::Malformed(MALFORMED),
    }
}

/// RFC 7230 `tchar`, the characters of an auth scheme's name.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// RFC 6750 `b64token`: `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
fn is_b64token(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
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

/// The RFC 6750 §3.1 error code a challenge carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChallengeError {
    /// No credentials were presented (or none of the bearer scheme): no error code.
    None,
    /// A malformed request (400).
    InvalidRequest,
    /// Bearer credentials were presented and refused (401).
    InvalidToken,
}

/// `Bearer` followed by the auth-params `key="value"` joined by `", "`, values escaped as
/// quoted strings, then `error="invalid_request"` or `error="invalid_token"` (RFC 6750 §3.1:
/// a request without credentials gets no error code); bare `Bearer` if the result is not a
/// valid header value.
pub(crate) fn challenge(params: &[(String, String)], error: ChallengeError) -> HeaderValue {
    let code = match error {
        ChallengeError::None => None,
        ChallengeError::InvalidRequest => Some("invalid_request"),
        ChallengeError::InvalidToken => Some("invalid_token"),
    };
    let error = code.map(|code| ("error".to_owned(), code.to_owned()));
    if params.is_empty() && error.is_none() {
        return HeaderValue::from_static("Bearer");
    }
    let rendered: Vec<String> = params
        .iter()
        .chain(error.as_ref())
        .map(|(k, v)| format!("{k}=\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\"")))
        .collect();
    HeaderValue::from_str(&format!("Bearer {}", rendered.join(", "))).unwrap_or_else(|_| {
        tracing::error!("www_authenticate: the configured auth-params are not a valid header");
        HeaderValue::from_static("Bearer")
    })
}

/// The step-up challenge of a call refused for lacking scopes: `Bearer
/// error="insufficient_scope", scope="<scopes>"` followed by the configured auth-params
/// (`resource_metadata`, …; a configured `scope` is replaced by the scopes needed).
pub(crate) fn step_up_challenge(params: &[(String, String)], scopes: &[String]) -> HeaderValue {
    let mut all = vec![
        ("error".to_owned(), "insufficient_scope".to_owned()),
        ("scope".to_owned(), scopes.join(" ")),
    ];
    all.extend(
        params
            .iter()
            .filter(|(k, _)| !k.eq_ignore_ascii_case("scope") && !k.eq_ignore_ascii_case("error"))
            .cloned(),
    );
    challenge(&all, ChallengeError::None)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use axum::http::{HeaderMap, HeaderValue, header};

    use super::{BearerAuth, Identity, Presented, presented};

    fn with(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    #[test]
    fn the_header_is_read_by_rfc_6750() {
        assert_eq!(presented(&with(&[])), Presented::Nothing);
        assert_eq!(presented(&with(&["Bearer abc"])), Presented::Bearer("abc"));
        assert_eq!(
            presented(&with(&["bearer  a.b-c_d~e+f/g=="])),
            Presented::Bearer("a.b-c_d~e+f/g==")
        );
        assert_eq!(presented(&with(&["Basic YTpi"])), Presented::OtherScheme);
        for malformed in [
            "Bearer",
            "Bearer a b",
            "Bearer =",
            "Bearer a=b",
            "abc",
            "Be@rer x",
        ] {
            assert!(
                matches!(presented(&with(&[malformed])), Presented::Malformed(_)),
                "{malformed}"
            );
        }
        assert!(matches!(
            presented(&with(&["Bearer a", "Bearer a"])),
            Presented::Malformed(why) if why.starts_with("Duplicated Authorization")
        ));
    }

    #[test]
    fn each_static_token_stands_for_its_identity_and_the_later_one_wins() {
        let auth = BearerAuth::new()
            .token("one", Identity::new("first"))
            .token("two", Identity::new("second"))
            .token("one", Identity::new("again"));
        assert_eq!(auth.tokens.len(), 2);
        assert_eq!(auth.static_token("two").unwrap(), &Identity::new("second"));
        assert_eq!(auth.static_token("one").unwrap(), &Identity::new("again"));
        for refused in ["", "on", "onex", "ONE", "tw0"] {
            assert!(auth.static_token(refused).is_none(), "{refused}");
        }
    }
}
