//! Visibility follows authorization: what a principal is shown of a tool is what it may call.
//! An action declaring scopes the principal lacks is left out of the tool's `action` enum and
//! its description lines, of `help` at every level and of the refusals listing valid actions;
//! a tool none of whose actions it may call is left out of `tools/list`. Without an identity
//! (a transport without auth) everything is shown, as everything may be called.
//!
//! [`Visibility::ShowWithScope`] shows everything instead, each action or tool the principal
//! may not call marked with the scopes it needs (calls are refused as before).

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;
use wymcp_core::ValidatedAction;

use crate::context::Identity;
use crate::context::missing_scopes;
use crate::paging::ToolsCursor;
use crate::protocol::ProtocolVersion;
use crate::protocol::RpcError;
use crate::tool::definition;
use crate::tool::registered::{Kind, RegisteredTool};

/// What a caller is shown of the actions and tools it may not call
/// ([`ServerBuilder::visibility`](crate::ServerBuilder::visibility)).
///
/// ```
/// use wymcp::{Server, Visibility};
///
/// let server = Server::builder().visibility(Visibility::ShowWithScope).build()?;
/// # let _ = server;
/// # Ok::<(), wymcp::ConfigurationError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Visibility {
    /// Hidden: `tools/list`, each `action` enum and `help` show only what the caller may call
    /// (the default).
    #[default]
    Hide,
    /// Shown, marked: an action's description line ends `(needs scope: tasks:write)`, a plain
    /// tool's description too, and `help` gives its `needs_scopes`. The model learns what a
    /// token with more scopes would allow; a call is still refused 403 `insufficient_scope`.
    ShowWithScope,
}

/// The actions of `tool` shown to `identity`, each with the scopes it lacks for it (none for
/// an action it may call): the callable ones, or under [`Visibility::ShowWithScope`] all.
pub(crate) fn shown<'a>(
    tool: &'a RegisteredTool,
    identity: Option<&Identity>,
) -> Vec<(&'a ValidatedAction, Vec<&'a str>)> {
    let Kind::Action { actions, .. } = &tool.kind else {
        return Vec::new();
    };
    actions
        .iter()
        .filter_map(|a| shown_action(tool, a, identity).map(|missing| (a, missing)))
        .collect()
}

/// Whether `action` (one of `tool`'s) is shown to `identity`: the scopes it lacks for it (none
/// for an action it may call), or `None` when it is hidden. One action's `help` asks this of
/// that action alone, so its cost does not grow with the tool's actions.
pub(crate) fn shown_action<'a>(
    tool: &RegisteredTool,
    action: &'a ValidatedAction,
    identity: Option<&Identity>,
) -> Option<Vec<&'a str>> {
    let missing = missing_scopes(action.scopes(), identity);
    (missing.is_empty() || tool.visibility == Visibility::ShowWithScope).then_some(missing)
}

/// An action's description line, marked with the scopes the caller lacks.
pub(crate) fn summary(action: &ValidatedAction, missing: &[&str]) -> String {
    if missing.is_empty() {
        return action.summary();
    }
    format!("{} (needs scope: {})", action.summary(), missing.join(" "))
}

/// The actions of `tool` that `identity` may call, in name order (all of them for a tool
/// that is not an action tool: none).
pub(crate) fn callable<'a>(
    tool: &'a RegisteredTool,
    identity: Option<&Identity>,
) -> Vec<&'a ValidatedAction> {
    match &tool.kind {
        Kind::Action { actions, .. } => actions
            .iter()
            .filter(|a| missing_scopes(a.scopes(), identity).is_empty())
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
                    .any(|a| !missing_scopes(a.scopes(), identity).is_empty())
        }
        Kind::Plain {
            scopes: required, ..
        } => !missing_scopes(required, identity).is_empty(),
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
    let mut marked = stored.clone();
    if let Kind::Plain {
        scopes: required, ..
    } = &tool.kind
    {
        // Reached only when the caller lacks some of them.
        if tool.visibility == Visibility::Hide {
            return None;
        }
        let missing = missing_scopes(required, identity).join(" ");
        marked["description"] = format!("{} (needs scope: {missing})", tool.description).into();
        return Some(Cow::Owned(marked));
    }
    let shown = shown(tool, identity);
    if shown.is_empty() {
        // No callable action, and nothing shown of the others.
        return None;
    }
    let names: Vec<&str> = shown.iter().map(|(a, _)| a.name()).collect();
    let summaries: Vec<String> = shown.iter().map(|(a, m)| summary(a, m)).collect();
    marked["inputSchema"] = definition::action_input_schema(&names, &summaries);
    Some(Cow::Owned(marked))
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

/// The `tools/list` result for a request's `params`: with `per_page` `None` (the default) the
/// contract's single page, `cursor` ignored (LIST-11); with `Some(n)` at most `n` tools (0
/// reads as 1) from the request's `cursor` on, and `nextCursor` when more follow (see
/// [`ToolsCursor`]). A page costs what its own tools cost, wherever it is in the list: without
/// an identity every tool is shown and the cursor's place is an index; with one, the tools
/// before it are only tested for being seen, not rendered.
pub(crate) fn list_page(
    tools: &[Arc<RegisteredTool>],
    version: ProtocolVersion,
    identity: Option<&Identity>,
    per_page: Option<usize>,
    params: Option<&Value>,
) -> Result<Value, RpcError> {
    let Some(per_page) = per_page else {
        return Ok(list(tools, version, identity));
    };
    let cursor = ToolsCursor::from_params(params)?;
    let start = cursor.as_ref().map_or(0, |c| c.offset);
    // The tools the caller sees from `start - 1` on (from 0 for the first page).
    let from = start.saturating_sub(1);
    let mut seen: Box<dyn Iterator<Item = &Arc<RegisteredTool>>> = match identity {
        None => Box::new(tools.get(from..).unwrap_or_default().iter()),
        Some(_) => Box::new(tools.iter().filter(|t| sees(t, identity)).skip(from)),
    };
    if let Some(cursor) = &cursor {
        if seen.next().map(|t| t.name.as_str()) != Some(cursor.after.as_str()) {
            return Err(ToolsCursor::stale());
        }
    }
    let page: Vec<&Arc<RegisteredTool>> = seen.by_ref().take(per_page.max(1)).collect();
    let mut result = serde_json::Map::new();
    let next = match (page.last(), seen.next()) {
        (Some(last), Some(_)) => Some(ToolsCursor::encode(start + page.len(), &last.name)),
        _ => None,
    };
    let listed: Vec<Value> = page
        .into_iter()
        .filter_map(|t| definition_for(t, version, identity).map(Cow::into_owned))
        .collect();
    result.insert("tools".into(), Value::Array(listed));
    if let Some(next) = next {
        result.insert("nextCursor".into(), Value::String(next));
    }
    Ok(Value::Object(result))
}

/// Whether `identity` sees `tool` at all (help and plain tools always; an action tool when one
/// of its actions is callable).
pub(crate) fn sees(tool: &RegisteredTool, identity: Option<&Identity>) -> bool {
    tool.visibility == Visibility::ShowWithScope
        || !narrowed(tool, identity)
        || !callable(tool, identity).is_empty()
}
