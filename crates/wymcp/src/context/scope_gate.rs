//! The scope gate of what is not a tool: a resource, a resource template or a prompt declaring
//! scopes is read, got, subscribed to or completed only by a caller whose credentials hold all
//! of them. Lacking one is the JSON-RPC error [`RpcError::INSUFFICIENT_SCOPE`] (`-32003`), in
//! the words of a `tools/call`'s `insufficient_scope` refusal; Streamable HTTP answers it 403
//! with the step-up challenge, as it answers that call.
//!
//! The refusal names what the caller asked for, not whether the data behind it exists: it is
//! answered before a resource's reader or a prompt runs (a template's refusal is the same for
//! every URI it matches). The lists leave out what the caller may not use
//! ([`ServerBuilder::visibility`](crate::ServerBuilder::visibility)), so the model is not
//! tempted; a client that asks for it anyway learns the scopes to step up to.

use serde_json::{Value, json};

use crate::context::Identity;
use crate::context::missing_scopes;
use crate::protocol::RpcError;

/// Passes when `identity` holds every scope of `required` (or there is no identity: a
/// transport without auth); else the `-32003` refusal for `subject` (`resource
/// 'notes://a'`, `prompt 'plan'`, …).
pub(crate) fn check(
    required: &[String],
    identity: Option<&Identity>,
    subject: &str,
) -> Result<(), RpcError> {
    let missing = missing_scopes(required, identity);
    if missing.is_empty() {
        return Ok(());
    }
    Err(RpcError::new(
        RpcError::INSUFFICIENT_SCOPE,
        format!(
            "The caller's credentials lack the scope(s) {} that {subject} needs. Authorize \
             again with these scopes, then retry.",
            missing.join(", ")
        ),
        Some(json!({
            "error": "insufficient_scope",
            "required_scopes": required,
            "missing_scopes": missing,
        })),
    ))
}

/// The scopes `error` was refused for lacking, when it is [`check`]'s refusal: what the HTTP
/// transport's step-up challenge names.
pub(crate) fn scopes_needed(error: &RpcError) -> Option<Vec<String>> {
    if error.code() != RpcError::INSUFFICIENT_SCOPE {
        return None;
    }
    let data = error.data()?;
    if data.get("error").and_then(Value::as_str) != Some("insufficient_scope") {
        return None;
    }
    let required = data.get("required_scopes")?.as_array()?;
    required
        .iter()
        .map(|s| s.as_str().map(str::to_owned))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{check, scopes_needed};
    use crate::context::Identity;

    #[test]
    fn the_refusal_names_the_missing_scopes_and_carries_the_required_ones() {
        let required = ["tasks:read".to_owned(), "tasks:admin".to_owned()];
        let reader = Identity::new("r").claim("scope", json!("tasks:read"));
        let refused = check(&required, Some(&reader), "prompt 'plan'").expect_err("refused");
        assert_eq!(refused.code(), -32003);
        assert_eq!(
            refused.message(),
            "The caller's credentials lack the scope(s) tasks:admin that prompt 'plan' needs. \
             Authorize again with these scopes, then retry."
        );
        assert_eq!(
            scopes_needed(&refused),
            Some(vec!["tasks:read".to_owned(), "tasks:admin".to_owned()])
        );
        let admin = Identity::new("a").claim("scope", json!("tasks:read tasks:admin"));
        assert!(check(&required, Some(&admin), "prompt 'plan'").is_ok());
        assert!(check(&required, None, "prompt 'plan'").is_ok());
        assert!(check(&[], Some(&reader), "prompt 'plan'").is_ok());
    }

    #[test]
    fn another_error_needs_no_scopes() {
        let other = crate::protocol::RpcError::invalid_params_reason("x");
        assert_eq!(scopes_needed(&other), None);
    }
}
