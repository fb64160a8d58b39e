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
    /// Several issuers, and a key or JWKS URL bound to none of them: it would verify a token
    /// of any of them, so one issuer's key could sign for another's users.
    #[error(
        "JwtAuth with several issuers needs every key source bound to its issuer \
         (`.issuer_jwks_url(issuer, url)`, `.issuer_key(issuer, …)`): a key of one issuer must \
         not verify tokens of another"
    )]
    UnboundKeys,
    /// An issuer with no key source that could verify its tokens.
    #[error("JwtAuth has no key for issuer {0:?}: its tokens could never verify")]
    IssuerWithoutKeys(String),
    /// The HTTP client for the JWKS could not be built.
    #[error("the JWKS client could not be built: {0}")]
    Client(String),
}
