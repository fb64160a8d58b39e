//! [`JwtAuth`]: bearer tokens that are JWTs (RFC 7519, RFC 9068 access tokens), verified
//! against static keys or the keys of a JWKS URL, with the issuer and the audience checked.
//!
//! What a token must have to be accepted:
//! * an algorithm in the allowlist (`none` is never one; no HMAC algorithm with a JWKS),
//!   and a signature that verifies with the key its `kid` names (without a `kid`, the one key
//!   of that algorithm, when there is only one);
//! * `iss` equal to a configured issuer;
//! * `aud` holding a configured audience, by default the `resource` of the server's
//!   protected-resource metadata (RFC 8707/9728): a token issued for another resource is
//!   refused;
//! * `exp` in the future and `nbf`, when present, in the past, within the leeway;
//! * a non-empty `sub`;
//! * a header `typ` that is `at+jwt` (RFC 9068) with [`JwtAuthBuilder::require_at_jwt`];
//!   otherwise any `typ` but another explicitly typed JWT (`dpop+jwt`, `logout+jwt`, …).
//!
//! Every refusal is answered 401 with `WWW-Authenticate: Bearer …, error="invalid_token"`
//! and a message saying what failed; a token that could not be checked because no key set
//! could be fetched (or not within [`JwtAuthBuilder::jwks_wait`]) is answered 503
//! `temporarily_unavailable`, so that the client keeps it.

mod builder;
pub(crate) mod claims;
mod error;
mod jwks;
mod keys;

use std::time::Duration;

use axum::http::HeaderMap;
use futures_util::future::BoxFuture;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Validation, decode, decode_header};
use serde_json::{Map, Value};

pub(crate) use builder::secure_url;
pub use error::JwtConfigError;
pub use jsonwebtoken::{Algorithm, DecodingKey};

use self::jwks::{Jwks, JwksUnavailable};
use self::keys::VerifyingKey;
use super::auth::{Audiences, AuthRefusal, Authenticate, bearer_token};
use crate::serve::Identity;

/// The `typ` of an RFC 9068 access token (RFC 9068 §2.1), without `application/`.
const ACCESS_TOKEN_TYPE: &str = "at+jwt";

/// The longest token read, in bytes.
pub const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// The algorithms accepted unless [`JwtAuthBuilder::algorithms`] says otherwise: the
/// asymmetric ones.
pub(crate) const DEFAULT_ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// JWT bearer auth: an [`Authenticate`] hook verifying access tokens issued by an
/// authorization server.
///
/// ```no_run
/// use wymcp::transport::http::jwt::JwtAuth;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let auth = JwtAuth::builder()
///     .issuer("https://id.example.com/realms/main")
///     .jwks_url("https://id.example.com/realms/main/protocol/openid-connect/certs")
///     .audience("https://mcp.example.com/mcp")
///     .build()?;
/// # let _ = auth; Ok(()) }
/// ```
pub struct JwtAuth {
    issuers: Vec<String>,
    audiences: Audiences,
    leeway: Duration,
    allowed: Vec<Algorithm>,
    keys: Vec<VerifyingKey>,
    /// Each JWKS with the one issuer whose tokens its keys verify (`None`: any configured
    /// issuer's, with one issuer only).
    jwks: Vec<(Option<String>, Jwks)>,
    require_at_jwt: bool,
}

impl std::fmt::Debug for JwtAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtAuth")
            .field("issuers", &self.issuers)
            .field("audiences", &self.audiences())
            .field("allowed", &self.allowed)
            .field("keys", &self.keys)
            .field("jwks", &self.jwks)
            .finish_non_exhaustive()
    }
}

/// Builds a [`JwtAuth`] ([`JwtAuth::builder`]).
#[derive(Debug, Default)]
#[must_use]
pub struct JwtAuthBuilder {
    issuers: Vec<String>,
    audiences: Vec<String>,
    leeway: Option<Duration>,
    algorithms: Option<Vec<Algorithm>>,
    keys: Vec<StaticKey>,
    /// JWKS URLs, each with the issuer it is bound to (`None`: unbound).
    jwks_urls: Vec<(Option<String>, String)>,
    refetch_interval: Option<Duration>,
    cache_bounds: Option<(Duration, Duration)>,
    fetch_timeout: Option<Duration>,
    jwks_wait: Option<Duration>,
    require_at_jwt: bool,
}

/// A static key as configured: the issuer it is bound to (`None`: unbound), its id, the key and
/// its algorithm.
#[derive(Debug)]
struct StaticKey {
    issuer: Option<String>,
    kid: Option<String>,
    key: DecodingKey,
    algorithm: Algorithm,
}

impl JwtAuth {
    /// Starts a builder: an issuer and keys are required.
    pub fn builder() -> JwtAuthBuilder {
        JwtAuthBuilder::default()
    }

    /// The audiences a token must name one of: the configured ones, else the resource URL
    /// of the protected-resource metadata.
    pub fn audiences(&self) -> Vec<String> {
        self.audiences.accepted()
    }

    /// Verifies `token`: the identity of its claims, or why not.
    pub async fn verify(&self, token: &str) -> Result<Identity, AuthRefusal> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(refused(format!(
                "the token is longer than {MAX_TOKEN_BYTES} bytes"
            )));
        }
        let header = decode_header(token).map_err(|_| {
            refused("the token is not a signed JWT with a supported algorithm (`alg`)")
        })?;
        if !self.allowed.contains(&header.alg) {
            return Err(refused(format!(
                "the token's algorithm {:?} is not accepted",
                header.alg
            )));
        }
        let audiences = self.audiences();
        if audiences.is_empty() {
            tracing::error!(
                "JwtAuth has no audience: set `.audience(…)` or the protected-resource metadata"
            );
            return Err(refused("no audience is configured on this server"));
        }
        self.check_type(header.typ.as_deref())?;
        // The keys are chosen by the token's issuer (read before the signature is checked,
        // then checked again as a verified claim): one issuer's key never verifies a token
        // of another.
        let issuer = match unverified_issuer(token) {
            Some(Some(iss)) if self.issuers.contains(&iss) => iss,
            Some(Some(_)) => return Err(refused(describe(&ErrorKind::InvalidIssuer))),
            Some(None) => {
                let missing = ErrorKind::MissingRequiredClaim("iss".to_owned());
                return Err(refused(describe(&missing)));
            }
            None => return Err(refused("the token is invalid")),
        };
        let keys = self
            .keys_for(header.kid.as_deref(), header.alg, &issuer)
            .await
            .map_err(AuthRefusal::unavailable)?;
        if keys.is_empty() {
            return Err(refused(match &header.kid {
                Some(kid) => format!("no key with id {kid:?} verifies {:?}", header.alg),
                None => format!("no key verifies {:?}", header.alg),
            }));
        }
        // Without a `kid`, only a lone key is tried: a forged token cannot make the server try
        // every key of the set.
        if header.kid.is_none() && keys.len() > 1 {
            return Err(refused(
                "the token names no key (`kid`) and several keys could verify it",
            ));
        }
        let validation = self.validation(header.alg, &audiences, &issuer);
        let mut failure = None;
        for key in &keys {
            match decode::<Map<String, Value>>(token, &key.key, &validation) {
                Ok(data) => {
                    let identity = claims::identity(data.claims)
                        .ok_or_else(|| refused("the token has no `sub` claim"))?;
                    // With several issuers, `sub` alone does not say who it is.
                    return Ok(if self.issuers.len() > 1 {
                        identity.qualified_by_issuer()
                    } else {
                        identity
                    });
                }
                Err(error) => failure = Some(error),
            }
        }
        Err(refused(
            failure.map_or("the token is invalid", |e| describe(e.kind())),
        ))
    }

    /// The keys that may verify a token of `issuer` naming `kid` under `alg`: the static ones
    /// bound to that issuer (or to none), then those of the JWKS bound to it (or to none).
    async fn keys_for(
        &self,
        kid: Option<&str>,
        alg: Algorithm,
        issuer: &str,
    ) -> Result<Vec<VerifyingKey>, JwksUnavailable> {
        let of_issuer = |bound: &Option<String>| bound.as_deref().is_none_or(|b| b == issuer);
        let usable = |key: &VerifyingKey| {
            of_issuer(&key.issuer)
                && key.algorithms.contains(&alg)
                && (kid.is_none() || key.kid.as_deref() == kid)
        };
        let mut keys: Vec<VerifyingKey> = self.keys.iter().filter(|k| usable(k)).cloned().collect();
        let mut unavailable = None;
        for (_, jwks) in self.jwks.iter().filter(|(bound, _)| of_issuer(bound)) {
            if !keys.is_empty() {
                break;
            }
            match jwks.keys_for(kid).await {
                Ok(mut found) => {
                    found.retain(|k| k.algorithms.contains(&alg));
                    keys = found;
                }
                Err(error) => unavailable = Some(error),
            }
        }
        match unavailable {
            Some(error) if keys.is_empty() => Err(error),
            _ => Ok(keys),
        }
    }

    /// The header's `typ` (RFC 7515 §4.1.9: compared without case, `application/`
    /// optional): with [`JwtAuthBuilder::require_at_jwt`], `at+jwt` only (RFC 9068 §4);
    /// otherwise any but another explicitly typed JWT (`dpop+jwt`, `logout+jwt`, … : RFC
    /// 8725 §3.11), since many identity providers type their access tokens `JWT` or not at
    /// all.
    fn check_type(&self, typ: Option<&str>) -> Result<(), AuthRefusal> {
        let typ = typ.map(|t| {
            let lower = t.to_ascii_lowercase();
            match lower.strip_prefix("application/") {
                Some(rest) => rest.to_owned(),
                None => lower,
            }
        });
        let access_token = typ.as_deref() == Some(ACCESS_TOKEN_TYPE);
        if self.require_at_jwt && !access_token {
            return Err(refused(
                "the token's type (`typ`) is not `at+jwt`: only RFC 9068 access tokens are accepted",
            ));
        }
        if !access_token && typ.is_some_and(|t| t.ends_with("+jwt")) {
            return Err(refused(
                "the token's type (`typ`) names another kind of JWT, not an access token (`at+jwt`)",
            ));
        }
        Ok(())
    }

    fn validation(&self, alg: Algorithm, audiences: &[String], issuer: &str) -> Validation {
        let mut validation = Validation::new(alg);
        validation.set_issuer(&[issuer]);
        validation.set_audience(audiences);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.validate_nbf = true;
        validation.leeway = self.leeway.as_secs();
        validation
    }
}

/// The `iss` claim of a compact JWS's payload, read without checking its signature (to pick
/// the keys that may verify it; the verified claims are checked against it again): `None`
/// when the payload is not a JSON object, `Some(None)` when it has no string `iss`.
fn unverified_issuer(token: &str) -> Option<Option<String>> {
    use base64::Engine as _;
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .ok()?;
    let claims: Map<String, Value> = serde_json::from_slice(&bytes).ok()?;
    Some(claims.get("iss").and_then(Value::as_str).map(str::to_owned))
}

/// The keys of a JWKS document (`wymcp::fuzzing`).
#[cfg(feature = "fuzzing")]
pub(crate) fn parse_jwks_for_fuzzing(
    body: &[u8],
    allowed: &[Algorithm],
) -> Result<Vec<VerifyingKey>, String> {
    jwks::parse_jwks(body, allowed).map_err(|e| e.to_string())
}

/// What a verification failure tells the client.
fn describe(kind: &ErrorKind) -> &'static str {
    match kind {
        ErrorKind::ExpiredSignature => "the token has expired (`exp`)",
        ErrorKind::ImmatureSignature => "the token is not valid yet (`nbf`)",
        ErrorKind::InvalidAudience => {
            "the token was issued for another audience (`aud`): not for this resource"
        }
        ErrorKind::InvalidIssuer => "the token's issuer (`iss`) is not accepted",
        ErrorKind::InvalidSignature => "the token's signature does not verify",
        ErrorKind::MissingRequiredClaim(_) => {
            "the token lacks a required claim (`exp`, `iss`, `aud` and `sub` are required)"
        }
        ErrorKind::InvalidAlgorithm => "the token's algorithm does not fit the key",
        _ => "the token is invalid",
    }
}

fn refused(why: impl std::fmt::Display) -> AuthRefusal {
    AuthRefusal(format!("invalid_token: {why}"))
}

impl Authenticate for JwtAuth {
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
