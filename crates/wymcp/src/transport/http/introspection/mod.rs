//! [`IntrospectionAuth`]: opaque bearer tokens checked with the authorization server's token
//! introspection endpoint (RFC 7662), the answers cached.
//!
//! What a token must have to be accepted, as the endpoint describes it:
//! * `"active": true`;
//! * `aud` holding a configured audience, by default the `resource` of the server's
//!   protected-resource metadata (RFC 8707/9728): a token issued for another resource is
//!   refused, as [`JwtAuth`](super::jwt::JwtAuth) does;
//! * `iss` equal to a configured issuer, when issuers are configured;
//! * `exp`, when present, in the future and `nbf`, when present, in the past, within the
//!   leeway;
//! * a non-empty `sub`.
//!
//! A refusal is answered 401 `invalid_token` saying what failed; an endpoint that cannot be
//! reached, answers an error status, or answers something that is not an introspection
//! response is answered 503 (`temporarily_unavailable: …`), so a client keeps its token and
//! tries again.

mod builder;
mod cache;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::http::HeaderMap;
use futures_util::future::BoxFuture;
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

pub use builder::{IntrospectionAuthBuilder, IntrospectionConfigError};

use self::cache::Cache;
use super::auth::{Audiences, AuthRefusal, Authenticate, bearer_token};
use super::jwt::MAX_TOKEN_BYTES;
use crate::serve::Identity;

/// The most bytes an introspection response may have.
pub const MAX_RESPONSE_BYTES: usize = 64 * 1024;

/// Token introspection auth (RFC 7662): an [`Authenticate`] hook asking the authorization
/// server about each token it has not seen lately. The server authenticates with client
/// credentials (`client_secret_basic`).
///
/// Answers are cached by the token's SHA-256: an active token until its `exp` and at most
/// [`IntrospectionAuthBuilder::cache_ttl`] (60 s by default), an inactive one for
/// [`IntrospectionAuthBuilder::negative_cache_ttl`] (10 s), at most
/// [`IntrospectionAuthBuilder::cache_capacity`] tokens (10,000).
///
/// ```no_run
/// use wymcp::transport::http::introspection::IntrospectionAuth;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let auth = IntrospectionAuth::builder()
///     .endpoint("https://id.example.com/oauth2/introspect")
///     .client_credentials("mcp-server", "s3cret")
///     .issuer("https://id.example.com")
///     .audience("https://mcp.example.com/mcp")
///     .build()?;
/// # let _ = auth; Ok(()) }
/// ```
pub struct IntrospectionAuth {
    endpoint: String,
    client_id: String,
    client_secret: String,
    issuers: Vec<String>,
    audiences: Audiences,
    leeway: Duration,
    client: reqwest::Client,
    cache: Cache,
}

impl std::fmt::Debug for IntrospectionAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionAuth")
            .field("endpoint", &self.endpoint)
            .field("client_id", &self.client_id)
            .field("issuers", &self.issuers)
            .field("audiences", &self.audiences())
            .finish_non_exhaustive()
    }
}

/// What the endpoint said about a token, as the cache keeps it.
#[derive(Debug, Clone)]
pub(crate) enum Verdict {
    Accepted(Identity),
    Refused(String),
}

impl IntrospectionAuth {
    /// Starts a builder: an endpoint and client credentials are required.
    pub fn builder() -> IntrospectionAuthBuilder {
        IntrospectionAuthBuilder::default()
    }

    /// The audiences a token must name one of: the configured ones, else the resource URL
    /// of the protected-resource metadata.
    pub fn audiences(&self) -> Vec<String> {
        self.audiences.accepted()
    }

    /// Checks `token`: the identity the endpoint describes, or why not.
    pub async fn verify(&self, token: &str) -> Result<Identity, AuthRefusal> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(refused(format!(
                "the token is longer than {MAX_TOKEN_BYTES} bytes"
            )));
        }
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(verdict) = self.cache.get(&digest) {
            return answer(verdict);
        }
        let response = self.introspect(token).await.map_err(|why| {
            tracing::warn!(endpoint = %self.endpoint, %why, "token introspection failed");
            unavailable(why)
        })?;
        let now = now_secs();
        let verdict = self.judge(response, now);
        let until = match &verdict {
            Verdict::Accepted(identity) => self.cache.accepted_until(exp_of(identity), now),
            Verdict::Refused(_) => self.cache.refused_until(),
        };
        self.cache.put(digest, verdict.clone(), until);
        answer(verdict)
    }

    /// One POST to the endpoint: its JSON object, or why there is none.
    async fn introspect(&self, token: &str) -> Result<Map<String, Value>, String> {
        let mut response = self
            .client
            .post(&self.endpoint)
            .basic_auth(&self.client_id, Some(&self.client_secret))
            .header("accept", "application/json")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!(
                "token={}&token_type_hint=access_token",
                form_encoded(token)
            ))
            .send()
            .await
            .map_err(|e| format!("the introspection request failed: {e}"))?;
        if !response.status().is_success() {
            return Err(format!(
                "the introspection endpoint answered {}",
                response.status().as_u16()
            ));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| format!("the introspection response broke off: {e}"))?
        {
            if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
                return Err(format!(
                    "the introspection response is larger than {MAX_RESPONSE_BYTES} bytes"
                ));
            }
            body.extend_from_slice(&chunk);
        }
        match serde_json::from_slice(&body) {
            Ok(Value::Object(map)) if map.get("active").is_some_and(Value::is_boolean) => Ok(map),
            _ => Err("the introspection response is not a JSON object with `active`".to_owned()),
        }
    }

    /// Whether the endpoint's description of a token makes it acceptable here.
    ///
    /// `exp` and `nbf` are NumericDates (RFC 7519 §2): seconds since the epoch, a fraction
    /// allowed; any other value refuses the token (it was read as no date at all).
    fn judge(&self, claims: Map<String, Value>, now: u64) -> Verdict {
        let refuse = |why: &str| Verdict::Refused(why.to_owned());
        if claims.get("active") != Some(&Value::Bool(true)) {
            return refuse("the token is not active (revoked, expired or unknown)");
        }
        let leeway = self.leeway.as_secs();
        let (exp, nbf) = match (numeric_date(&claims, "exp"), numeric_date(&claims, "nbf")) {
            (Ok(exp), Ok(nbf)) => (exp, nbf),
            (Err(claim), _) | (_, Err(claim)) => {
                return Verdict::Refused(format!(
                    "the token's `{claim}` is not a NumericDate (seconds since the epoch)"
                ));
            }
        };
        // A fraction counts against the token: it expires at the second before, and becomes
        // valid at the second after.
        if let Some(exp) = exp
            && (exp.floor() as u64).saturating_add(leeway) <= now
        {
            return refuse("the token has expired (`exp`)");
        }
        if let Some(nbf) = nbf
            && (nbf.ceil() as u64) > now.saturating_add(leeway)
        {
            return refuse("the token is not valid yet (`nbf`)");
        }
        let audiences = self.audiences();
        if audiences.is_empty() {
            tracing::error!(
                "IntrospectionAuth has no audience: set `.audience(…)` or the protected-resource metadata"
            );
            return refuse("no audience is configured on this server");
        }
        if !names_any(claims.get("aud"), &audiences) {
            return refuse(
                "the token was issued for another audience (`aud`): not for this resource",
            );
        }
        if !self.issuers.is_empty() {
            let iss = claims.get("iss").and_then(Value::as_str);
            if !iss.is_some_and(|iss| self.issuers.iter().any(|i| i == iss)) {
                return refuse("the token's issuer (`iss`) is not accepted");
            }
        }
        match super::jwt::claims::identity(claims) {
            // With several issuers, `sub` alone does not say who it is.
            Some(identity) if self.issuers.len() > 1 => {
                Verdict::Accepted(identity.qualified_by_issuer())
            }
            Some(identity) => Verdict::Accepted(identity),
            None => refuse("the token has no `sub`"),
        }
    }
}

/// Whether `aud` (a string or an array of strings) names one of `audiences`.
fn names_any(aud: Option<&Value>, audiences: &[String]) -> bool {
    let named = |value: &Value| {
        value
            .as_str()
            .is_some_and(|a| audiences.iter().any(|x| x == a))
    };
    match aud {
        Some(Value::Array(values)) => values.iter().any(named),
        Some(value) => named(value),
        None => false,
    }
}

fn exp_of(identity: &Identity) -> Option<u64> {
    identity.claims().get("exp").and_then(Value::as_u64)
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `application/x-www-form-urlencoded` of a value: unreserved bytes as they are, every other
/// byte `%XX` (a bearer token is ASCII; `+`, `/` and `=` are the bytes that need it).
fn form_encoded(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

fn answer(verdict: Verdict) -> Result<Identity, AuthRefusal> {
    match verdict {
        Verdict::Accepted(identity) => Ok(identity),
        Verdict::Refused(why) => Err(refused(why)),
    }
}

fn refused(why: impl std::fmt::Display) -> AuthRefusal {
    AuthRefusal(format!("invalid_token: {why}"))
}

fn unavailable(why: impl std::fmt::Display) -> AuthRefusal {
    AuthRefusal::unavailable(format!("the token could not be checked now: {why}"))
}

impl Authenticate for IntrospectionAuth {
    fn authenticate<'a>(
        &'a self,
        headers: &'a HeaderMap,
    ) -> BoxFuture<'a, Result<Identity, AuthRefusal>> {
        Box::pin(async move { self.verify(bearer_token(headers)?).await })
    }

    fn set_resource(&self, resource: &str) {
        self.audiences.set_resource(resource);
    }
}

/// The NumericDate claim `claim` (absent: `None`); `Err(claim)` when it is there but not a
/// non-negative finite number.
fn numeric_date(
    claims: &Map<String, Value>,
    claim: &'static str,
) -> Result<Option<f64>, &'static str> {
    match claims.get(claim) {
        None => Ok(None),
        Some(value) => match value.as_f64() {
            Some(date) if date.is_finite() && date >= 0.0 => Ok(Some(date)),
            _ => Err(claim),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::{form_encoded, names_any};
    use serde_json::json;

    #[test]
    fn encodes_a_token_for_a_form_body() {
        assert_eq!(form_encoded("a.b-c_d~e"), "a.b-c_d~e");
        assert_eq!(form_encoded("ab+/c=="), "ab%2B%2Fc%3D%3D");
    }

    #[test]
    fn reads_aud_as_a_string_or_a_list() {
        let ours = ["https://mcp.example/mcp".to_owned()];
        assert!(names_any(Some(&json!("https://mcp.example/mcp")), &ours));
        assert!(names_any(
            Some(&json!(["x", "https://mcp.example/mcp"])),
            &ours
        ));
        assert!(!names_any(Some(&json!(["x"])), &ours));
        assert!(!names_any(None, &ours));
    }
}
