//! [`RegisteredTool`]: a tool that passed every build-time check, with everything the request
//! path needs built once.

use std::sync::Arc;

use wymcp_core::schema::{InputSchema, build_output_schema};
use wymcp_core::value_gate::ValueGate;
use wymcp_core::{Callback, ConfigurationError, Problem, ValidatedActions, validate_actions};

use crate::tool::definition::{self, ToolDefinition};
use crate::tool::erased::{DynActionTool, DynDescribe, DynPlainTool};

/// The name reserved for the injected help tool.
pub(crate) const HELP: &str = "help";

/// How a registered tool runs.
pub(crate) enum Kind {
    Action {
        tool: Arc<dyn DynActionTool>,
        actions: ValidatedActions,
    },
    Plain {
        tool: Arc<dyn DynPlainTool>,
        input: InputSchema,
        /// The published input schema, as refusals carry it.
        digest: serde_json::Value,
        /// The scopes a caller must hold.
        scopes: Vec<String>,
    },
    Help,
}

/// A validated tool: its stored definition, compiled gates and output-schema validator.
pub(crate) struct RegisteredTool {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) definition: ToolDefinition,
    pub(crate) kind: Kind,
    pub(crate) output: Option<ValueGate>,
    /// What a caller lacking this tool's scopes is shown of it.
    pub(crate) visibility: crate::tool::visibility::Visibility,
}

impl RegisteredTool {
    /// The scopes its actions declare (each action's; a plain tool's own).
    pub(crate) fn declared_scopes(&self) -> Vec<&String> {
        match &self.kind {
            Kind::Action { actions, .. } => actions.iter().flat_map(|a| a.scopes()).collect(),
            Kind::Plain { scopes, .. } => scopes.iter().collect(),
            Kind::Help => Vec::new(),
        }
    }
}

impl std::fmt::Debug for RegisteredTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredTool")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Checks a tool name: 1 to 128 characters of `[A-Za-z0-9_.-]` (the MCP naming guidance).
fn check_name(name: &str) -> Result<(), ConfigurationError> {
    let ok = !name.is_empty()
        && name.len() <= 128
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(
            ConfigurationError::new(Problem::InvalidToolName(wymcp_core::bound::echo(name)))
                .in_tool(name)
                .in_callback(Callback::Name),
        )
    }
}

struct Described {
    name: String,
    description: String,
    title: Option<String>,
    annotations: Option<serde_json::Map<String, serde_json::Value>>,
    output_schema: Option<serde_json::Map<String, serde_json::Value>>,
    output: Option<ValueGate>,
}

impl Described {
    /// The registered tool of this description, its input schema `input`, run as `kind`.
    fn register(self, input: serde_json::Value, kind: Kind) -> RegisteredTool {
        let definition = ToolDefinition::assemble(
            &self.name,
            &self.description,
            input,
            self.title,
            self.annotations,
            self.output_schema,
        );
        RegisteredTool {
            name: self.name,
            description: self.description,
            definition,
            kind,
            output: self.output,
            visibility: crate::tool::visibility::Visibility::default(),
        }
    }
}

/// Calls the describing callbacks once and validates what they return.
fn describe(tool: &dyn DynDescribe) -> Result<Described, ConfigurationError> {
    let name = tool.name().to_owned();
    check_name(&name)?;
    if name == HELP {
        return Err(ConfigurationError::new(Problem::ReservedName(name.clone())).in_tool(name));
    }
    let output_schema = tool.output_schema();
    let output = match &output_schema {
        None => None,
        Some(schema) => Some(build_output_schema(schema).map_err(|p| {
            ConfigurationError::new(p)
                .in_tool(name.clone())
                .in_callback(Callback::OutputSchema)
        })?),
    };
    let annotations = tool.annotations();
    if let Some(annotations) = &annotations {
        wymcp_core::schema::check_annotations(annotations).map_err(|p| {
            ConfigurationError::new(p)
                .in_tool(name.clone())
                .in_callback(Callback::Annotations)
        })?;
    }
    Ok(Described {
        description: tool.description().to_owned(),
        title: tool.title(),
        annotations,
        output_schema,
        output,
        name,
    })
}

impl RegisteredTool {
    /// Validates an action tool: name, actions, output schema; builds its definition.
    pub(crate) fn action(tool: Arc<dyn DynActionTool>) -> Result<Self, ConfigurationError> {
        let d = describe(tool.as_ref())?;
        let actions = validate_actions(&tool.actions()).map_err(|e| e.in_tool(d.name.clone()))?;
        let summaries = wymcp_core::action_summaries(&actions);
        let input = definition::action_input_schema(&actions.names(), &summaries);
        Ok(d.register(input, Kind::Action { tool, actions }))
    }

    /// Validates a plain tool: name, input schema, output schema; builds its definition.
    pub(crate) fn plain(tool: Arc<dyn DynPlainTool>) -> Result<Self, ConfigurationError> {
        let d = describe(tool.as_ref())?;
        let schema = tool.input_schema();
        let input = InputSchema::build(&schema).map_err(|p| {
            ConfigurationError::new(p)
                .in_tool(d.name.clone())
                .in_callback(Callback::InputSchema)
        })?;
        let published = serde_json::Value::Object(input.published().clone());
        let scopes = wymcp_core::validate_scopes(&tool.scopes())
            .map_err(|p| ConfigurationError::new(p).in_tool(d.name.clone()))?;
        let kind = Kind::Plain {
            scopes,
            tool,
            digest: published.clone(),
            input,
        };
        Ok(d.register(published, kind))
    }

    /// The framework's help tool.
    pub(crate) fn help() -> Self {
        RegisteredTool {
            name: HELP.to_owned(),
            description: definition::HELP_DESCRIPTION.to_owned(),
            definition: ToolDefinition::assemble(
                HELP,
                definition::HELP_DESCRIPTION,
                definition::help_input_schema(),
                None,
                None,
                None,
            ),
            kind: Kind::Help,
            output: None,
            visibility: crate::tool::visibility::Visibility::default(),
        }
    }

    /// The position of action `name` among the tool's actions (sorted by name).
    pub(crate) fn action_index(&self, name: &str) -> Option<usize> {
        match &self.kind {
            Kind::Action { actions, .. } => actions.iter().position(|a| a.name() == name),
            _ => None,
        }
    }

    /// The name of the action at `index` (see [`action_index`](Self::action_index)).
    pub(crate) fn action_name(&self, index: usize) -> Option<&str> {
        match &self.kind {
            Kind::Action { actions, .. } => actions.iter().nth(index).map(|a| a.name()),
            _ => None,
        }
    }

    /// Whether the tool is an action tool with action `name`.
    pub(crate) fn has_action(&self, name: &str) -> bool {
        match &self.kind {
            Kind::Action { actions, .. } => actions.names().contains(&name),
            _ => false,
        }
    }
}
