//! The injected `help` tool: an index, a tool, or one action in full, answered from the
//! session's effective tool list as the caller sees it (only what it may call), with
//! dispatch's own argument gates and refusal builders.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::Outcome;
use super::choices::ActionChoices;
use super::gates::{ArgType, Vocabulary, check_arguments};
use super::refusal::{Refusal, help_pointer};
use crate::Limits;
use crate::context::Context;
use crate::context::Identity;
use crate::tool::registered::{Kind, RegisteredTool};
use crate::tool::visibility::{sees, shown, shown_action, summary};
use crate::tool::{Content, ErrorKind};

/// Help's arguments: `tool` and `action`, both strings (read from its hand-written schema).
const HELP_ARGUMENTS: Vocabulary = Vocabulary {
    names: &["tool", "action"],
    types: &[ArgType::String, ArgType::String],
};

/// Answers a help call.
pub(crate) fn answer(
    tools: &[Arc<RegisteredTool>],
    arguments: &Map<String, Value>,
    ctx: &Context,
    limits: &Limits,
) -> Outcome {
    if let Err(refusal) = check_arguments(arguments, &HELP_ARGUMENTS, || help_pointer(None, None)) {
        return Outcome::refused(&refusal);
    }
    let tool = arguments.get("tool").and_then(Value::as_str);
    let action = arguments.get("action").and_then(Value::as_str);
    let level = match (tool, action) {
        (_, Some(_)) => "action",
        (Some(_), None) => "tool",
        (None, None) => "index",
    };
    let identity = ctx.identity();
    let seen: Vec<Arc<RegisteredTool>> = tools
        .iter()
        .filter(|t| sees(t, identity))
        .cloned()
        .collect();
    let result = resolve(&seen, tool, action, ctx, limits);
    tracing::debug!(
        name: "wymcp.help.called",
        tool = tool.map(wymcp_core::bound::echo),
        action = action.map(wymcp_core::bound::echo),
        level,
        session_id = ctx.session_id(),
        is_error = result.is_err(),
    );
    match result {
        Ok(body) => Outcome::Ok {
            content: vec![Content::json(&body)],
            structured: None,
        },
        Err(body) => Outcome::Err {
            content: vec![Content::json(&body)],
            kind: ErrorKind::Dispatch,
        },
    }
}

fn valid_tools(tools: &[Arc<RegisteredTool>]) -> Vec<&str> {
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    names
}

fn resolve(
    tools: &[Arc<RegisteredTool>],
    tool: Option<&str>,
    action: Option<&str>,
    ctx: &Context,
    limits: &Limits,
) -> Result<Value, Value> {
    let Some(tool_name) = tool else {
        if let Some(action) = action {
            return Err(Refusal::MissingTool {
                action,
                valid: valid_tools(tools),
            }
            .payload());
        }
        return Ok(index(tools, ctx.identity()));
    };
    let Some(target) = tools.iter().find(|t| t.name == tool_name) else {
        return Err(Refusal::UnknownTool {
            sent: tool_name,
            valid: valid_tools(tools),
        }
        .payload());
    };
    match action {
        None => Ok(tool_level(target, ctx.identity())),
        Some(action) => action_level(target, action, ctx, limits),
    }
}

/// `help {}`: every tool with its description and the summaries of the actions `identity`
/// may call.
fn index(tools: &[Arc<RegisteredTool>], identity: Option<&Identity>) -> Value {
    let entries: Vec<Value> = tools
        .iter()
        .map(|t| {
            let summaries: Vec<String> = shown(t, identity)
                .iter()
                .map(|(a, m)| summary(a, m))
                .collect();
            json!({"tool": t.name, "description": t.description, "actions": summaries})
        })
        .collect();
    json!({ "tools": entries })
}

fn tool_level(tool: &RegisteredTool, identity: Option<&Identity>) -> Value {
    let mut body = Map::new();
    body.insert("tool".into(), Value::String(tool.name.clone()));
    body.insert(
        "description".into(),
        Value::String(tool.description.clone()),
    );
    let mut actions = Map::new();
    match &tool.kind {
        Kind::Action { .. } => {
            for (action, missing) in shown(tool, identity) {
                let mut rendered = action.rendered().clone();
                needs_scopes(&mut rendered, &missing);
                actions.insert(action.name().to_owned(), Value::Object(rendered));
            }
        }
        Kind::Plain {
            digest,
            scopes: required,
            ..
        } => {
            body.insert("input_schema".into(), digest.clone());
            needs_scopes(
                &mut body,
                &crate::context::missing_scopes(required, identity),
            );
        }
        Kind::Help => {}
    }
    body.insert("actions".into(), Value::Object(actions));
    Value::Object(body)
}

fn action_level(
    tool: &RegisteredTool,
    action: &str,
    ctx: &Context,
    limits: &Limits,
) -> Result<Value, Value> {
    let (inner, found) = match &tool.kind {
        Kind::Action {
            tool: inner,
            actions,
        } => {
            // The named action alone: the whole list is built only for the refusal.
            match actions
                .get(action)
                .and_then(|a| shown_action(tool, a, ctx.identity()).map(|missing| (a, missing)))
            {
                Some(found) => (inner, found),
                None => {
                    let shown = shown(tool, ctx.identity());
                    return Err(Refusal::UnknownAction {
                        tool: &tool.name,
                        sent: action,
                        valid: ActionChoices::new(
                            shown.iter().map(|(a, _)| *a).collect(),
                            std::iter::empty(),
                            limits,
                        ),
                    }
                    .payload());
                }
            }
        }
        _ => {
            return Err(Refusal::UnknownAction {
                tool: &tool.name,
                sent: action,
                valid: ActionChoices::new(Vec::new(), std::iter::empty(), limits),
            }
            .payload());
        }
    };
    let (found, missing) = found;
    let mut body = Map::new();
    body.insert("tool".into(), Value::String(tool.name.clone()));
    body.insert("action".into(), Value::String(found.name().to_owned()));
    body.extend(found.rendered().clone());
    needs_scopes(&mut body, &missing);
    if let Some(context) = inner.action_context(found.name(), ctx) {
        body.insert("context".into(), Value::Object(context));
    }
    Ok(Value::Object(body))
}

/// Marks what the caller may not call ([`Visibility::ShowWithScope`]) with the scopes it lacks.
///
/// [`Visibility::ShowWithScope`]: crate::Visibility::ShowWithScope
fn needs_scopes(body: &mut Map<String, Value>, missing: &[&str]) {
    if !missing.is_empty() {
        body.insert("needs_scopes".into(), json!(missing));
    }
}
