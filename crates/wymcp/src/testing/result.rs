//! What a test reads of a call: [`ToolResult`] and, for a refusal of the gates, [`GateError`].

use std::fmt;

use serde_json::{Map, Value};

use crate::protocol::ProtocolVersion;
use crate::tool::CallToolResult;
use crate::tool::{Content, ErrorKind};

/// A refusal by one of the dispatch gates (or by `help`): the payload's `error` name, and the
/// whole payload.
///
/// ```
/// use serde_json::json;
/// use wymcp::testing::GateError;
///
/// let gate = GateError {
///     error: "unknown_action".into(),
///     payload: json!({"error": "unknown_action", "help": "help {tool: \"tasks\"}"}),
/// };
/// assert_eq!(gate.help(), Some("help {tool: \"tasks\"}"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct GateError {
    /// The payload's `error` value (`missing_required_fields`, `invalid_values`, ...).
    pub error: String,
    /// The whole refusal payload as the caller reads it.
    pub payload: Value,
}

impl GateError {
    /// The refusal's `message`, when it has one.
    pub fn message(&self) -> Option<&str> {
        self.payload.get("message").and_then(Value::as_str)
    }

    /// The help call the refusal points at (`help {tool: "tasks", action: "create"}`).
    pub fn help(&self) -> Option<&str> {
        self.payload.get("help").and_then(Value::as_str)
    }
}

impl fmt::Display for GateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "gate refused the call ({}): {}",
            self.error, self.payload
        )
    }
}

impl std::error::Error for GateError {}

/// What a tool call answered, as a test reads it: the [`CallToolResult`] and its first text
/// item parsed as JSON (every action reply and every refusal is one).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    result: CallToolResult,
    json: Option<Value>,
}

/// What a [`ToolResult`] is, told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// `isError: false`.
    Ok,
    /// A gate (or help) refused the call before the tool's code ran.
    GateError,
    /// The tool ran and answered an error.
    ToolError,
    /// The tool panicked; the framework contained it (`errorType: tool_fault`).
    Fault,
}

impl ToolResult {
    /// Wraps a [`CallToolResult`].
    pub fn new(result: CallToolResult) -> Self {
        let json = result.json();
        ToolResult { result, json }
    }

    /// The result as the framework produced it.
    pub fn result(&self) -> &CallToolResult {
        &self.result
    }

    /// The result, unwrapped.
    pub fn into_result(self) -> CallToolResult {
        self.result
    }

    /// Whether the result is an error (`isError`).
    pub fn is_error(&self) -> bool {
        self.result.is_error()
    }

    /// Success, gate refusal, tool error or contained fault.
    pub fn outcome(&self) -> Outcome {
        if !self.result.is_error() {
            return Outcome::Ok;
        }
        match self.result.error_kind() {
            Some(ErrorKind::Dispatch) => Outcome::GateError,
            Some(_) => Outcome::ToolError,
            None => Outcome::Fault,
        }
    }

    /// The content items.
    pub fn content(&self) -> &[Content] {
        self.result.content()
    }

    /// The first content item's text, when it is a text item.
    pub fn text(&self) -> Option<&str> {
        self.result.text()
    }

    /// The first text item parsed as JSON.
    pub fn json(&self) -> Option<&Value> {
        self.json.as_ref()
    }

    /// The validated `structuredContent`, when the tool declares an output schema.
    pub fn structured_content(&self) -> Option<&Value> {
        self.result.structured_content()
    }

    /// The gate refusal, when a gate refused the call.
    pub fn gate_error(&self) -> Option<GateError> {
        if self.outcome() != Outcome::GateError {
            return None;
        }
        let payload = self.json.clone()?;
        let error = payload.get("error")?.as_str()?.to_owned();
        Some(GateError { error, payload })
    }

    /// The `hints` of a reply or error body (empty when there are none).
    pub fn hints(&self) -> Vec<Value> {
        self.json
            .as_ref()
            .and_then(|j| j.get("hints"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    }

    /// The `context` of a reply or error body (what `action_context` added).
    pub fn context(&self) -> Option<&Map<String, Value>> {
        self.json
            .as_ref()
            .and_then(|j| j.get("context"))
            .and_then(Value::as_object)
    }

    /// The wire `result` object for a session of `version`.
    pub fn to_value(&self, version: ProtocolVersion) -> Value {
        self.result.to_value(version)
    }
}

impl From<CallToolResult> for ToolResult {
    fn from(result: CallToolResult) -> Self {
        ToolResult::new(result)
    }
}
