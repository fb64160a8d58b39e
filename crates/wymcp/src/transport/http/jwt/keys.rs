//! A key a token may be verified with, and the algorithms it may be verified under.

use std::sync::Arc;

use jsonwebtoken::{Algorithm, DecodingKey};

/// A verification key: its id (`kid`), the key, and the algorithms it verifies.
#[derive(Clone)]
pub(crate) struct VerifyingKey {
    pub(crate) kid: Option<String>,
    pub(crate) key: Arc<DecodingKey>,
    pub(crate) algorithms: Vec<Algorithm>,
    /// The one issuer whose tokens it verifies (`None`: any configured issuer's).
    pub(crate) issuer: Option<String>,
}

impl std::fmt::Debug for VerifyingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerifyingKey")
            .field("kid", &self.kid)
            .field("algorithms", &self.algorithms)
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}
