//! The build-time checks across a server's parts: tools registered once each, layers and task
//! settings naming tools (and actions) that exist; and what the served tools declare.

use std::collections::HashSet;
use std::sync::Arc;

use wymcp_core::{ConfigurationError, Problem};

use super::builder::Pending;
use crate::middleware::Layers;
use crate::tool::registered::RegisteredTool;
use crate::tool::visibility::Visibility;

/// Validates and registers every pending tool, refusing a name given twice.
pub(super) fn register_tools(
    pending: Vec<Pending>,
    visibility: Visibility,
) -> Result<Vec<Arc<RegisteredTool>>, ConfigurationError> {
    let mut names = HashSet::new();
    let mut tools = Vec::with_capacity(pending.len() + 1);
    for pending in pending {
        let mut tool = match pending {
            Pending::Action(t) => RegisteredTool::action(t)?,
            Pending::Plain(t) => RegisteredTool::plain(t)?,
        };
        tool.visibility = visibility;
        if !names.insert(tool.name.clone()) {
            return Err(ConfigurationError::new(Problem::DuplicateTool(
                tool.name.clone(),
            )));
        }
        tools.push(Arc::new(tool));
    }
    Ok(tools)
}

/// Every tool given task support or a task start exists (or is `help`).
pub(super) fn check_task_tools(
    tasks: &crate::task::TaskPolicies,
    tools: &[Arc<RegisteredTool>],
) -> Result<(), ConfigurationError> {
    let (named, actions) = tasks.named();
    let unknown = named
        .into_iter()
        .find(|t| *t != "help" && !tools.iter().any(|tool| &tool.name == *t));
    if let Some(unknown) = unknown {
        return Err(ConfigurationError::new(Problem::InvalidTaskTool(
            unknown.clone(),
        )));
    }
    for (tool, action) in actions {
        let found = tools.iter().find(|t| &t.name == tool);
        if !found.is_some_and(|t| t.has_action(action)) {
            return Err(ConfigurationError::new(Problem::InvalidTaskTool(format!(
                "{tool} (action {action})"
            ))));
        }
    }
    Ok(())
}

/// Every tool and action a layer is attached to exists.
pub(super) fn check_layers(
    layers: &Layers,
    tools: &[Arc<RegisteredTool>],
) -> Result<(), ConfigurationError> {
    let find = |name: &str| tools.iter().find(|t| t.name == name);
    for (name, _) in &layers.tools {
        if find(name).is_none() {
            return Err(ConfigurationError::new(Problem::LayerUnknownTool(
                name.clone(),
            )));
        }
    }
    for (name, action, _) in &layers.actions {
        let Some(tool) = find(name) else {
            return Err(ConfigurationError::new(Problem::LayerUnknownTool(
                name.clone(),
            )));
        };
        if !tool.has_action(action) {
            return Err(ConfigurationError::new(Problem::LayerUnknownAction {
                tool: name.clone(),
                action: action.clone(),
            }));
        }
    }
    Ok(())
}

/// Every scope `tools` declare, sorted, once each.
pub(super) fn declared_scopes(tools: &[Arc<RegisteredTool>]) -> Vec<String> {
    let mut all: Vec<String> = tools
        .iter()
        .flat_map(|t| t.declared_scopes())
        .cloned()
        .collect();
    all.sort();
    all.dedup();
    all
}
