//! [`PlainTool`]: a tool with its own input schema and run.

use std::future::Future;

use serde_json::{Map, Value};

use crate::context::Context;
use crate::protocol::RpcError;
use crate::tool::Content;

/// What a plain tool's run returns.
pub type CallResult = Result<CallOutput, CallError>;

/// A tool with its own input schema and a single run: the framework's help tool is one, and so
/// is any tool whose arguments are not an action and its data.
///
/// Its arguments still pass the unknown-key gate and the value gate, read from its own input
/// schema, with the same refusals an action tool gives.
///
/// ```
/// use serde_json::{json, Map, Value};
/// use wymcp::{CallOutput, CallResult, Context, PlainTool};
///
/// struct Echo;
///
/// impl PlainTool for Echo {
///     fn name(&self) -> &str { "echo" }
///     fn description(&self) -> &str { "Echoes its message" }
///     fn input_schema(&self) -> Map<String, Value> {
///         json!({"type": "object", "properties": {"message": {"type": "string"}},
///                "required": ["message"]})
///             .as_object().cloned().unwrap_or_default()
///     }
///     async fn run(&self, arguments: Map<String, Value>, _ctx: Context) -> CallResult {
///         Ok(CallOutput::text(arguments["message"].as_str().unwrap_or_default()))
///     }
/// }
///
/// let server = wymcp::Server::builder().plain_tool(Echo).build().unwrap();
/// assert_eq!(server.tool_names(), ["echo", "help"]);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a plain tool",
    label = "implement `wymcp::PlainTool` for `{Self}`, or `wymcp::ActionTool` and register it with `.tool(...)`"
)]
pub trait PlainTool: Send + Sync + 'static {
    /// The tool's name (`help` is reserved).
    fn name(&self) -> &str;

    /// The description, verbatim.
    fn description(&self) -> &str;

    /// The input schema: a JSON Schema object with `"type": "object"`.
    fn input_schema(&self) -> Map<String, Value>;

    /// Runs the tool with arguments that passed the gates.
    fn run(
        &self,
        arguments: Map<String, Value>,
        ctx: Context,
    ) -> impl Future<Output = CallResult> + Send;

    /// A JSON Schema for structured results. Default: none.
    fn output_schema(&self) -> Option<Map<String, Value>> {
        None
    }

    /// A display title. Default: none.
    fn title(&self) -> Option<String> {
        None
    }

    /// MCP tool annotations, verbatim. Default: none.
    fn annotations(&self) -> Option<Map<String, Value>> {
        None
    }

    /// The OAuth scopes a caller must hold, all of them, to call and to see this tool
    /// (RFC 6749 scope tokens, checked by `build()`). Default: none.
    fn scopes(&self) -> Vec<String> {
        Vec::new()
    }
}

/// A successful tool result: content items and, optionally, structured content.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutput {
    pub(crate) content: Vec<Content>,
    pub(crate) structured: Option<Value>,
}

impl CallOutput {
    /// A result of these content items.
    pub fn new(content: Vec<Content>) -> Self {
        CallOutput {
            content,
            structured: None,
        }
    }

    /// A result of one text item.
    pub fn text(text: impl Into<String>) -> Self {
        CallOutput::new(vec![Content::text(text)])
    }

    /// A result of one text item holding `value` as JSON, also offered as structured content
    /// when the tool declares an output schema.
    pub fn json(value: Value) -> Self {
        CallOutput {
            content: vec![Content::json(&value)],
            structured: Some(value),
        }
    }

    /// Sets the structured content explicitly (validated against the output schema).
    pub fn with_structured(mut self, value: Value) -> Self {
        self.structured = Some(value);
        self
    }

    /// The content items.
    pub fn content(&self) -> &[Content] {
        &self.content
    }
}

/// How a failed call is classified in telemetry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A gate refused the call before the tool's own code ran.
    Dispatch,
    /// The tool ran and answered with an error.
    Tool,
}

impl ErrorKind {
    /// `"dispatch"` or `"tool"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Dispatch => "dispatch",
            ErrorKind::Tool => "tool",
        }
    }
}

/// A failed tool result: the text the caller reads, and its classification; or, made with
/// [`CallError::protocol`], a JSON-RPC error that fails the request itself.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct CallError {
    message: String,
    kind: ErrorKind,
    /// The JSON-RPC error the request fails with, in place of an `isError` result.
    protocol: Option<Box<RpcError>>,
}

impl CallError {
    /// The tool ran and answered with an error (classified `tool`).
    pub fn tool(message: impl Into<String>) -> Self {
        CallError {
            message: message.into(),
            kind: ErrorKind::Tool,
            protocol: None,
        }
    }

    /// The tool refused its input before doing anything (classified `dispatch`).
    pub fn dispatch(message: impl Into<String>) -> Self {
        CallError {
            message: message.into(),
            kind: ErrorKind::Dispatch,
            protocol: None,
        }
    }

    /// The call fails with the JSON-RPC error `error` (a protocol-level error), not with a
    /// tool result: a plain request is answered with it, and a call running as a task
    /// ([`crate::task`]) ends the task `failed` with it, its `code`, `message` and `data` as
    /// they are. For an error the caller should read and act on, [`CallError::tool`] (an
    /// `isError` result) is the usual answer; this one is for a failure of the request
    /// itself, such as another server's failed task passed on as it failed.
    ///
    /// ```
    /// use serde_json::json;
    /// use wymcp::{CallError, RpcError};
    ///
    /// let quota = RpcError::new(-32050, "Quota exhausted", Some(json!({"retryAfterMs": 60000})));
    /// let error = CallError::protocol(quota.clone());
    /// assert_eq!(error.protocol_error(), Some(&quota));
    /// assert_eq!(error.message(), "Quota exhausted");
    /// ```
    pub fn protocol(error: RpcError) -> Self {
        CallError {
            message: error.message().to_owned(),
            kind: ErrorKind::Tool,
            protocol: Some(Box::new(error)),
        }
    }

    /// The JSON-RPC error the request fails with, when made with [`CallError::protocol`].
    pub fn protocol_error(&self) -> Option<&RpcError> {
        self.protocol.as_deref()
    }

    pub(crate) fn into_protocol(self) -> Result<RpcError, Self> {
        match self.protocol {
            Some(error) => Ok(*error),
            None => Err(self),
        }
    }

    /// The text.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The classification.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
}
