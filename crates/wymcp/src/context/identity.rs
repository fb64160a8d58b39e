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
    /// The principal when it is not the subject ([`qualified_by_issuer`](Self::qualified_by_issuer)).
    principal: Option<String>,
    /// The bearer token the caller presented ([`bearer_token`](Self::bearer_token)).
    credential: Credential,
}

/// The bearer token a request presented: how the caller proved who it is, not part of who it
/// is. Never shown (`Debug` redacts it), never compared (two identities differing only in
/// it are one caller), never kept ([`Identity::to_value`] leaves it out: no session record,
/// task record or store holds it).
#[derive(Clone, Default)]
struct Credential(Option<std::sync::Arc<str>>);

impl PartialEq for Credential {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "<redacted>"
        } else {
            "None"
        })
    }
}

impl Identity {
    /// An identity for `subject` (a user or client id), without claims.
    pub fn new(subject: impl Into<String>) -> Self {
        Identity {
            subject: subject.into(),
            claims: Map::new(),
            principal: None,
            credential: Credential::default(),
        }
    }

    /// Whom the server keys what it keeps for the caller by: sessions, tasks, user state,
    /// per-principal quotas and rate limits. It is the [`subject`](Self::subject), unless the
    /// identity is [`qualified_by_issuer`](Self::qualified_by_issuer): then `sub` alone does
    /// not say who it is (OIDC makes `sub` unique within its issuer only), and the principal
    /// is `<iss>|<sub>` (`%` and `|` in the issuer percent-encoded, so no two issuer-subject
    /// pairs give one principal).
    ///
    /// ```
    /// use wymcp::Identity;
    /// use serde_json::json;
    ///
    /// let alice = Identity::new("alice").claim("iss", json!("https://idp-a.example"));
    /// assert_eq!(alice.principal(), "alice");
    /// let alice = alice.qualified_by_issuer();
    /// assert_eq!(alice.principal(), "https://idp-a.example|alice");
    /// assert_eq!(alice.subject(), "alice");
    /// ```
    pub fn principal(&self) -> &str {
        self.principal.as_deref().unwrap_or(&self.subject)
    }

    /// This identity with its issuer (`iss`) in its [`principal`](Self::principal): what an
    /// authenticator that accepts tokens of several issuers answers (`JwtAuth` given several
    /// `issuer`s does), so that alice of one issuer is not alice of another. Without an `iss`
    /// claim the principal stays the subject.
    #[must_use]
    pub fn qualified_by_issuer(mut self) -> Self {
        self.principal = self.issuer().map(|issuer| {
            let issuer = issuer.replace('%', "%25").replace('|', "%7C");
            format!("{issuer}|{}", self.subject)
        });
        self
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

    /// The issuer: the `iss` claim.
    ///
    /// ```
    /// use wymcp::Identity;
    /// use serde_json::json;
    ///
    /// let who = Identity::new("alice").claim("iss", json!("https://id.example.com"));
    /// assert_eq!(who.issuer(), Some("https://id.example.com"));
    /// ```
    pub fn issuer(&self) -> Option<&str> {
        self.claims.get("iss").and_then(Value::as_str)
    }

    /// The OAuth client the token was issued to: the `client_id` claim (RFC 9068), else `azp`.
    ///
    /// ```
    /// use wymcp::Identity;
    /// use serde_json::json;
    ///
    /// let who = Identity::new("alice").claim("azp", json!("desktop-app"));
    /// assert_eq!(who.client_id(), Some("desktop-app"));
    /// ```
    pub fn client_id(&self) -> Option<&str> {
        ["client_id", "azp"]
            .iter()
            .find_map(|key| self.claims.get(*key).and_then(Value::as_str))
    }

    /// The scopes granted: the `scope` claim (space-separated, RFC 8693/9068) or, without it,
    /// `scp` (a string or an array of strings, as Entra and Okta issue it).
    ///
    /// ```
    /// use wymcp::Identity;
    /// use serde_json::json;
    ///
    /// let who = Identity::new("alice").claim("scope", json!("tasks:read tasks:write"));
    /// assert_eq!(who.scopes(), ["tasks:read", "tasks:write"]);
    /// let who = Identity::new("bob").claim("scp", json!(["tasks:read"]));
    /// assert!(who.has_scope("tasks:read") && !who.has_scope("tasks:write"));
    /// ```
    pub fn scopes(&self) -> Vec<&str> {
        let claim = self.claims.get("scope").or_else(|| self.claims.get("scp"));
        match claim {
            Some(Value::String(joined)) => joined.split_ascii_whitespace().collect(),
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        }
    }

    /// Whether [`scopes`](Self::scopes) holds `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes().contains(&scope)
    }

    /// `{"subject": …, "claims": {…}}`, as tools see it.
    pub fn to_value(&self) -> Value {
        match &self.principal {
            None => json!({ "subject": self.subject, "claims": self.claims }),
            Some(principal) => json!({
                "subject": self.subject, "claims": self.claims, "principal": principal,
            }),
        }
    }

    /// The identity [`to_value`](Self::to_value) wrote (`None`: not one).
    pub(crate) fn from_value(value: &Value) -> Option<Identity> {
        let subject = value.get("subject")?.as_str()?;
        let claims = match value.get("claims") {
            Some(Value::Object(claims)) => claims.clone(),
            None => Map::new(),
            Some(_) => return None,
        };
        let principal = match value.get("principal") {
            Some(Value::String(principal)) => Some(principal.clone()),
            None => None,
            Some(_) => return None,
        };
        Some(Identity {
            subject: subject.to_owned(),
            claims,
            principal,
            credential: Credential::default(),
        })
    }

    /// This identity with the bearer token the caller presented: the HTTP transport sets it
    /// on the identity its auth accepted (a custom transport may too), so that a tool which
    /// calls another API *as the caller* can forward it ([`bearer_token`](Self::bearer_token)).
    pub fn with_bearer_token(mut self, token: impl Into<std::sync::Arc<str>>) -> Self {
        self.credential = Credential(Some(token.into()));
        self
    }

    /// The bearer token the caller presented with this request, when its transport
    /// authenticated one with a bearer token (Streamable HTTP with auth configured; never on
    /// stdio, never for a task resumed from its record).
    ///
    /// Forwarding it to another service is *token passthrough*: that service sees a token
    /// issued for this server, which it should refuse (RFC 8707 audiences) and which lets it
    /// act as the caller here. Forward it only to a service you control that expects it
    /// (wymcp-openapi does so only when its `Auth::caller_bearer` is chosen). The token is
    /// not kept anywhere: `Debug` shows `<redacted>`, [`to_value`](Self::to_value) leaves it
    /// out, and two identities differing only in it are equal.
    ///
    /// ```
    /// use wymcp::Identity;
    ///
    /// let who = Identity::new("alice").with_bearer_token("eyJhbGciOi...");
    /// assert_eq!(who.bearer_token(), Some("eyJhbGciOi..."));
    /// assert!(!format!("{who:?}").contains("eyJ"));
    /// assert_eq!(who, Identity::new("alice"));
    /// assert!(who.to_value().get("token").is_none());
    /// ```
    pub fn bearer_token(&self) -> Option<&str> {
        self.credential.0.as_deref()
    }
}

/// The scope gate's test: the scopes of `required` that `identity` lacks; empty when it holds
/// them all, or when there is no identity to check (a transport without auth: there is no one
/// to authorize). An action or plain tool declaring scopes is called only by a caller whose
/// credentials hold all of them (`dispatch`'s gates); a caller is shown only what it may call
/// (`tool::visibility`).
pub(crate) fn missing_scopes<'a>(
    required: &'a [String],
    identity: Option<&Identity>,
) -> Vec<&'a str> {
    let Some(identity) = identity else {
        return Vec::new();
    };
    if required.is_empty() {
        return Vec::new();
    }
    let granted = identity.scopes();
    required
        .iter()
        .map(String::as_str)
        .filter(|scope| !granted.contains(scope))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Identity, missing_scopes as missing};

    #[test]
    fn every_required_scope_must_be_granted() {
        let required = vec!["tasks:read".to_owned(), "tasks:write".to_owned()];
        let reader = Identity::new("r").claim("scope", json!("tasks:read"));
        let writer = Identity::new("w").claim("scope", json!("tasks:write tasks:read"));
        assert_eq!(missing(&required, Some(&reader)), ["tasks:write"]);
        assert!(missing(&required, Some(&writer)).is_empty());
        assert!(missing(&required, None).is_empty());
        assert!(missing(&[], Some(&Identity::new("nobody"))).is_empty());
    }
}
