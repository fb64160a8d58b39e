//! Visibility follows authorization: what a principal is shown of a tool is what it may call.
//! An action declaring scopes the principal lacks is left out of the tool's `action` enum and
//! its description lines, of `help` at every level and of the refusals listing valid actions;
//! a tool none of whose actions it may call is left out of `tools/list`. Without an identity
//! (a transport without auth) everything is shown, as everything may be called.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;
use wymcp_core::ValidatedAction;

use crate::dispatch::scopes;
use crate::protocol::ProtocolVersion;
use crate::serve::Identity;
use crate::tool::definition;
use crate::tool::registered::{Kind, RegisteredTool};

/// The actions of `tool` that `identity` may call, in name order (all of them for a tool
/// that is not an action tool: none).
pub(crate) fn callable<'a>(
    tool: &'a RegisteredTool,
    identity: Option<&Identity>,
) -> Vec<&'a ValidatedAction> {
    match &tool.kind {
        Kind::Action { actions, .. } => actions
            .iter()
            .filter(|a| scopes::missing(a.scopes(), identity).is_empty())
            .collect(),
        Kind::Plain { .. } | Kind::Help => Vec::new(),
    }
}

/// Whether some action of `tool` is hidden from `identity`.
fn narrowed(tool: &RegisteredTool, identity: Option<&Identity>) -> bool {
    match &tool.kind {
        Kind::Action { actions, .. } => {
            identity.is_some()
                && actions
                    .iter()
                    .any(|a| !scopes::missing(a.scopes(), identity).is_empty())
        }
        Kind::Plain {
            scopes: required, ..
        } => !scopes::missing(required, identity).is_empty(),
        Kind::Help => false,
    }
}

/// The `tools/list` definition of `tool` for `version` as `identity` sees it: the stored one
/// when nothing is hidden (no copy), one with the callable actions only when some are, `None`
/// when none is callable.
pub(crate) fn definition_for<'a>(
    tool: &'a RegisteredTool,
    version: ProtocolVersion,
    identity: Option<&Identity>,
) -> Option<Cow<'a, Value>> {
    let stored = tool.definition.for_version(version);
    if !narrowed(tool, identity) {
        return Some(Cow::Borrowed(stored));
    }
    let shown = callable(tool, identity);
    if shown.is_empty() {
        // No callable action, or a plain tool whose scopes the caller lacks.
        return None;
    }
    let names: Vec<&str> = shown.iter().map(|a| a.name()).collect();
    let summaries: Vec<String> = shown.iter().map(|a| a.summary()).collect();
    let mut narrowed = stored.clone();
    narrowed["inputSchema"] = definition::action_input_schema(&names, &summaries);
    Some(Cow::Owned(narrowed))
}

/// The `tools/list` result of `tools` for `version` as `identity` sees it.
pub(crate) fn list(
    tools: &[Arc<RegisteredTool>],
    version: ProtocolVersion,
    identity: Option<&Identity>,
) -> Value {
    let listed: Vec<Value> = tools
        .iter()
        .filter_map(|t| definition_for(t, version, identity).map(Cow::into_owned))
        .collect();
    serde_json::json!({ "tools": listed })
}

/// Whether `identity` sees `tool` at all (help and plain tools always; an action tool when one
/// of its actions is callable).
pub(crate) fn sees(tool: &RegisteredTool, identity: Option<&Identity>) -> bool {
    !narrowed(tool, identity) || !callable(tool, identity).is_empty()
}
