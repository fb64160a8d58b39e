//! The credentials every call to the API carries.

use std::fmt;

use base64::Engine as _;

/// How the server authenticates to the API: added to every request it sends. The secret is
/// never logged: `Debug` shows the kind and the header or parameter name only.
///
/// Read secrets from the environment or a secret store, not from source:
///
/// ```
/// use wymcp_openapi::Auth;
///
/// let auth = Auth::bearer(std::env::var("PETS_TOKEN").unwrap_or_default());
/// assert_eq!(format!("{auth:?}"), "Auth::Bearer(<redacted>)");
/// let key = Auth::api_key_header("X-Api-Key", "s3cret");
/// assert_eq!(format!("{key:?}"), "Auth::ApiKeyHeader(X-Api-Key: <redacted>)");
/// ```
#[derive(Clone)]
pub struct Auth(Kind);

#[derive(Clone)]
enum Kind {
    Bearer(String),
    ApiKeyHeader { name: String, value: String },
    ApiKeyQuery { name: String, value: String },
    Basic { user: String, password: String },
    CallerBearer,
}

impl Auth {
    /// `Authorization: Bearer <token>`.
    pub fn bearer(token: impl Into<String>) -> Self {
        Self(Kind::Bearer(token.into()))
    }

    /// An API key sent in the header `name`.
    pub fn api_key_header(name: impl Into<String>, value: impl Into<String>) -> Self {
        Self(Kind::ApiKeyHeader {
            name: name.into(),
            value: value.into(),
        })
    }

    /// An API key sent as the query parameter `name`.
    pub fn api_key_query(name: impl Into<String>, value: impl Into<String>) -> Self {
        Self(Kind::ApiKeyQuery {
            name: name.into(),
            value: value.into(),
        })
    }

    /// `Authorization: Basic <base64(user:password)>` (RFC 7617).
    pub fn basic(user: impl Into<String>, password: impl Into<String>) -> Self {
        Self(Kind::Basic {
            user: user.into(),
            password: password.into(),
        })
    }

    /// The caller's own bearer token, forwarded: each call carries `Authorization: Bearer`
    /// with the token the MCP client presented to this server
    /// ([`Identity::bearer_token`](wymcp::Identity::bearer_token)). A call that came with none
    /// (stdio, a server without HTTP auth, a task resumed from its record) is refused before
    /// any request leaves, naming why.
    ///
    /// This is token passthrough, which the MCP security guidance warns against: choose it
    /// only for an API you control that accepts the tokens issued for this server (same
    /// issuer, its audience listed), never for a third-party API.
    ///
    /// ```
    /// use wymcp_openapi::Auth;
    ///
    /// assert_eq!(format!("{:?}", Auth::caller_bearer()), "Auth::CallerBearer");
    /// ```
    pub fn caller_bearer() -> Self {
        Self(Kind::CallerBearer)
    }

    /// Whether the header comes from the caller ([`caller_bearer`](Self::caller_bearer)).
    pub(crate) fn is_caller_bearer(&self) -> bool {
        matches!(self.0, Kind::CallerBearer)
    }

    /// The query parameter this auth adds, if it is one.
    pub(crate) fn query(&self) -> Option<(&str, &str)> {
        match &self.0 {
            Kind::ApiKeyQuery { name, value } => Some((name, value)),
            _ => None,
        }
    }

    /// The header this auth adds, if it is one, marked sensitive.
    pub(crate) fn header(&self) -> Option<(String, String)> {
        match &self.0 {
            Kind::Bearer(token) => Some(("authorization".into(), format!("Bearer {token}"))),
            Kind::ApiKeyHeader { name, value } => Some((name.clone(), value.clone())),
            Kind::Basic { user, password } => {
                let pair =
                    base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
                Some(("authorization".into(), format!("Basic {pair}")))
            }
            Kind::ApiKeyQuery { .. } | Kind::CallerBearer => None,
        }
    }
}

impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Kind::Bearer(_) => f.write_str("Auth::Bearer(<redacted>)"),
            Kind::ApiKeyHeader { name, .. } => write!(f, "Auth::ApiKeyHeader({name}: <redacted>)"),
            Kind::ApiKeyQuery { name, .. } => write!(f, "Auth::ApiKeyQuery({name}=<redacted>)"),
            Kind::Basic { user, .. } => write!(f, "Auth::Basic({user}:<redacted>)"),
            Kind::CallerBearer => f.write_str("Auth::CallerBearer"),
        }
    }
}
