//! The scope gate: an action (or a plain tool) declaring scopes is called only by a caller
//! whose credentials hold all of them. It runs after authentication and after the action is
//! known, before any gate reads `data`. A call without an authenticated identity (a transport
//! without auth: stdio, HTTP without `.auth`) is not checked: there is no one to authorize.

use crate::serve::Identity;

/// The scopes of `required` that `identity` lacks; empty when it holds them all, or when
/// there is no identity to check.
pub(crate) fn missing<'a>(required: &'a [String], identity: Option<&Identity>) -> Vec<&'a str> {
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

    use super::missing;
    use crate::serve::Identity;

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
