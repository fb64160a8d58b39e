//! A verified token's claims as an [`Identity`].

use serde_json::{Map, Value};

use crate::serve::Identity;

/// The identity a verified token's claims stand for: `sub` is its subject (a token without
/// one is refused); every claim is kept, so [`Identity::scopes`], [`Identity::issuer`] and
/// [`Identity::client_id`] read `scope`/`scp`, `iss` and `client_id`/`azp` from them.
pub(crate) fn identity(claims: Map<String, Value>) -> Option<Identity> {
    let subject = claims.get("sub").and_then(Value::as_str)?.to_owned();
    if subject.is_empty() {
        return None;
    }
    Some(
        claims
            .into_iter()
            .fold(Identity::new(subject), |identity, (k, v)| {
                identity.claim(k, v)
            }),
    )
}
