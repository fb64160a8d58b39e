//! Why a [`JwtAuth`](super::JwtAuth) could not be built.

/// A [`JwtAuthBuilder`](super::JwtAuthBuilder) setting that cannot verify tokens safely.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JwtConfigError {
    /// No issuer: every token's `iss` must be checked.
    #[error("JwtAuth needs an issuer (`.issuer(…)`): tokens of any issuer would be accepted")]
    NoIssuer,
    /// Neither static keys nor a JWKS URL.
    #[error("JwtAuth needs keys: `.jwks_url(…)` or `.key(…)`")]
    NoKeys,
    /// An empty algorithm allowlist.
    #[error("JwtAuth's algorithm allowlist is empty")]
    NoAlgorithms,
    /// An HMAC algorithm allowed while keys come from a JWKS: a token signed with a public
    /// key used as an HMAC secret must never verify.
    #[error(
        "JwtAuth refuses HMAC algorithm {0} with a JWKS URL: a JWKS holds public keys, and a \
         public key must never serve as an HMAC secret"
    )]
    HmacWithJwks(String),
    /// A static key given for an algorithm outside the allowlist.
    #[error("the static key {kid:?} is for {algorithm}, which the allowlist does not hold")]
    KeyOutsideAllowlist {
        /// The key's id.
        kid: Option<String>,
        /// Its algorithm.
        algorithm: String,
    },
    /// The JWKS URL is not an `https` URL (`http` only for a loopback host).
    #[error("the JWKS URL must be https (http only on a loopback host): {0}")]
    InsecureJwksUrl(String),
    /// The HTTP client for the JWKS could not be built.
    #[error("the JWKS client could not be built: {0}")]
    Client(String),
}
