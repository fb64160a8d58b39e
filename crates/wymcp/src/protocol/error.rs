//! [`RpcError`]: a JSON-RPC error object.

use serde::Serialize;
use serde_json::{Value, json};

/// A JSON-RPC error object (`code`, `message`, optional `data`).
///
/// ```
/// use wymcp::RpcError;
///
/// let err = RpcError::unknown_tool("nope");
/// assert_eq!(err.code(), -32602);
/// assert_eq!(err.message(), "Unknown tool: nope");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("JSON-RPC error {code}: {message}")]
pub struct RpcError {
    code: i64,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<Value>,
}

impl RpcError {
    /// Parse error.
    pub const PARSE_ERROR: i64 = -32700;
    /// Invalid Request.
    pub const INVALID_REQUEST: i64 = -32600;
    /// Method not found.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid params.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal error.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// `-32000`, a server error: the server is running its most work for this client (a
    /// limit of [`Limits`](crate::Limits) is reached); retry later.
    pub const SERVER_BUSY: i64 = -32000;
    /// `-32003`, a server error: the caller's credentials lack a scope the resource, resource
    /// template or prompt declares (`data.error` is `"insufficient_scope"`, with
    /// `required_scopes` and `missing_scopes`). Over Streamable HTTP it is answered 403 with
    /// the step-up challenge, as a `tools/call` lacking a scope is.
    pub const INSUFFICIENT_SCOPE: i64 = -32003;

    /// An error with any code, message and data.
    pub fn new(code: i64, message: impl Into<String>, data: Option<Value>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data,
        }
    }

    /// The error with its message and every string of its `data` cut to `max_chars`
    /// characters (marked `…(+N chars)`): an application's error text never makes an answer
    /// as large as the input it quotes.
    pub(crate) fn bounded(mut self, max_chars: usize) -> Self {
        fn bound(text: &mut String, max_chars: usize) {
            if text.len() > max_chars {
                *text = wymcp_core::bound::echo_within(text, max_chars);
            }
        }
        bound(&mut self.message, max_chars);
        if let Some(Value::Object(data)) = &mut self.data {
            for value in data.values_mut() {
                if let Value::String(text) = value {
                    bound(text, max_chars);
                }
            }
        }
        self
    }

    /// `-32602` "Invalid params" with `data.reason`.
    pub fn invalid_params_reason(reason: impl Into<String>) -> Self {
        RpcError::new(
            Self::INVALID_PARAMS,
            "Invalid params",
            Some(json!({ "reason": reason.into() })),
        )
    }

    /// `-32601` "Method not found" (the method is not echoed).
    pub(crate) fn method_not_found() -> Self {
        RpcError::new(Self::METHOD_NOT_FOUND, "Method not found", None)
    }

    /// `-32602` naming an unknown tool (bounded), no `data`.
    pub fn unknown_tool(name: &str) -> Self {
        RpcError::new(
            Self::INVALID_PARAMS,
            format!("Unknown tool: {}", wymcp_core::bound::echo(name)),
            None,
        )
    }

    /// The code.
    pub fn code(&self) -> i64 {
        self.code
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The data, when any.
    pub fn data(&self) -> Option<&Value> {
        self.data.as_ref()
    }
}
