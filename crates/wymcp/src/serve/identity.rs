//! [`Identity`]: who the caller is, as the transport's authentication established it. The
//! serving core binds sessions to it and gives it to tools; how it is established (a bearer
//! token, a verifier) is the transport's.

use serde_json::{Map, Value, json};

/// Who the caller is, as an [`Authenticate`](crate::transport::http::Authenticate) hook established it.
///
/// A session is bound to the identity that initialized it: a later request of that session
/// presenting another subject is answered as if the session did not exist. Tools see the
/// identity in the session's assigns under `"identity"` (`{"subject": …, "claims": {…}}`).
#[derive(Debug, Clone, PartialEq)]
pub struct Identity {
    subject: String,
    claims: Map<String, Value>,
}

impl Identity {
    /// An identity for `subject` (a user or client id), without claims.
    pub fn new(subject: impl Into<String>) -> Self {
        Identity {
            subject: subject.into(),
            claims: Map::new(),
        }
    }

    /// Adds a claim (scopes, tenant, …).
    #[must_use]
    pub fn claim(mut self, key: impl Into<String>, value: Value) -> Self {
        self.claims.insert(key.into(), value);
        self
    }

    /// The subject.
    pub fn subject(&self) -> &str {
        &self.subject
    }

    /// The claims.
    pub fn claims(&self) -> &Map<String, Value> {
        &self.claims
    }

    /// `{"subject": …, "claims": {…}}`, as tools see it.
    pub fn to_value(&self) -> Value {
        json!({ "subject": self.subject, "claims": self.claims })
    }
}
