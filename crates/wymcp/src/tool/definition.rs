//! A tool's `tools/list` definition, assembled once from validated callbacks.

use serde_json::{Map, Value, json};

use crate::protocol::ProtocolVersion;

/// The exact description of the injected help tool.
pub(crate) const HELP_DESCRIPTION: &str = "Get details about this server's tools. No arguments: an index of every tool and its actions. {tool}: that tool's actions in full (schemas, notes, examples). {tool, action}: one action in full.";

/// A tool's wire definition, built only from callbacks that passed validation, in the two
/// shapes the revisions need (2025-03-26 has no `title` or `outputSchema`).
#[derive(Debug, Clone)]
pub(crate) struct ToolDefinition {
    current: Value,
    legacy: Value,
    /// The `x-mcp-header` annotations of the input schema: read once here, not on every
    /// 2026-07-28 call (most tools have none).
    header_params: Vec<HeaderParam>,
}

/// An argument a 2026-07-28 request repeats in a header (`x-mcp-header` in its schema).
#[derive(Debug, Clone)]
pub(crate) struct HeaderParam {
    /// The argument's name.
    pub(crate) argument: String,
    /// The header as a refusal names it: `Mcp-Param-<Suffix>`.
    pub(crate) header: String,
    /// The header's name as looked up (lower-case).
    pub(crate) lookup: String,
}

impl ToolDefinition {
    pub(crate) fn assemble(
        name: &str,
        description: &str,
        input_schema: Value,
        title: Option<String>,
        annotations: Option<Map<String, Value>>,
        output_schema: Option<Map<String, Value>>,
    ) -> Self {
        let header_params = crate::protocol::stateless::header_params(&input_schema)
            .into_iter()
            .map(|(argument, suffix)| {
                let header = format!("Mcp-Param-{suffix}");
                let lookup = header.to_ascii_lowercase();
                HeaderParam {
                    argument: argument.to_owned(),
                    header,
                    lookup,
                }
            })
            .collect();
        let mut def = Map::new();
        def.insert("name".into(), Value::String(name.to_owned()));
        def.insert("description".into(), Value::String(description.to_owned()));
        def.insert("inputSchema".into(), input_schema);
        if let Some(annotations) = annotations.filter(|a| !a.is_empty()) {
            def.insert("annotations".into(), Value::Object(annotations));
        }
        let legacy = Value::Object(def.clone());
        if let Some(title) = title {
            def.insert("title".into(), Value::String(title));
        }
        if let Some(schema) = output_schema {
            def.insert("outputSchema".into(), Value::Object(schema));
        }
        ToolDefinition {
            current: Value::Object(def),
            legacy,
            header_params,
        }
    }

    /// The arguments a 2026-07-28 request repeats in `Mcp-Param-<Suffix>` headers, from the
    /// input schema's `x-mcp-header` annotations.
    pub(crate) fn header_params(&self) -> &[HeaderParam] {
        &self.header_params
    }

    /// The definition as served to a session of `version`.
    pub(crate) fn for_version(&self, version: ProtocolVersion) -> &Value {
        if version.supports_tool_title() {
            &self.current
        } else {
            &self.legacy
        }
    }
}

/// The generated input schema of an action tool: a sorted action enum whose description is the
/// summaries joined by newlines, and a bare `data` object.
pub(crate) fn action_input_schema(names: &[&str], summaries: &[String]) -> Value {
    json!({
        "type": "object",
        "required": ["action"],
        "properties": {
            "action": {
                "type": "string",
                "enum": names,
                "description": summaries.join("\n"),
            },
            "data": {"type": "object"},
        },
    })
}

/// The help tool's input schema.
pub(crate) fn help_input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "tool": {"type": "string", "description": "Tool name to get details about"},
            "action": {"type": "string", "description": "Action name within that tool (requires tool)"},
        },
        "additionalProperties": false,
    })
}
