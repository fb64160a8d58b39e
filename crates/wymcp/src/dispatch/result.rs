//! [`CallToolResult`]: the `result` of a `tools/call` that reached a tool.

use serde_json::{Map, Value};

use crate::protocol::ProtocolVersion;
use crate::tool::{Content, ErrorKind};

/// The result of a `tools/call` that reached a tool: success, gate refusal, tool error or
/// contained fault alike (`isError` tells them apart).
#[derive(Debug, Clone, PartialEq)]
pub struct CallToolResult {
    pub(crate) content: Vec<Content>,
    pub(crate) is_error: bool,
    pub(crate) structured: Option<Value>,
    pub(crate) error_kind: Option<ErrorKind>,
}

impl CallToolResult {
    /// The content items.
    pub fn content(&self) -> &[Content] {
        &self.content
    }

    /// Whether the result is an error (`isError`).
    pub fn is_error(&self) -> bool {
        self.is_error
    }

    /// The validated structured content, when the tool declares an output schema.
    pub fn structured_content(&self) -> Option<&Value> {
        self.structured.as_ref()
    }

    /// How an error was classified (`None` for success and for faults).
    pub fn error_kind(&self) -> Option<ErrorKind> {
        self.error_kind
    }

    /// The first content item's text, when it is a text item.
    pub fn text(&self) -> Option<&str> {
        self.content.first().and_then(Content::as_text)
    }

    /// The first text item parsed as JSON (every wymcp refusal and action reply is one).
    pub fn json(&self) -> Option<Value> {
        self.text().and_then(|t| serde_json::from_str(t).ok())
    }

    /// The wire `result` object for a session of `version` (no `structuredContent` on
    /// 2025-03-26).
    pub fn to_value(&self, version: ProtocolVersion) -> Value {
        self.clone().into_value(version)
    }

    /// [`to_value`](Self::to_value), moving the structured content instead of copying it.
    pub(crate) fn into_value(self, version: ProtocolVersion) -> Value {
        let mut result = Map::new();
        result.insert(
            "content".into(),
            serde_json::to_value(&self.content).unwrap_or_else(|_| Value::Array(Vec::new())),
        );
        result.insert("isError".into(), Value::Bool(self.is_error));
        if version.supports_output_schema() {
            if let Some(structured) = self.structured {
                result.insert("structuredContent".into(), structured);
            }
        }
        Value::Object(result)
    }
}
