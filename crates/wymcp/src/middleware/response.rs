//! [`Response`]: what an operation service answers.

use serde_json::Value;

use crate::protocol::RpcError;
use crate::tool::CallToolResult;

/// What an [`Operation`](super::Operation) service answers: a call's result, or another
/// method's answer (its `result` or the JSON-RPC error it answers with). A layer that maps
/// responses sees both kinds.
///
/// ```
/// use wymcp::middleware::Response;
///
/// let answer = Response::Method(Ok(serde_json::json!({"tools": []})));
/// assert!(!answer.is_error());
/// assert!(answer.as_call().is_none());
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Response {
    /// A `tools/call`'s result; a tool error or a gate's refusal is an `isError` result.
    Call(CallToolResult),
    /// Another method's answer.
    Method(Result<Value, RpcError>),
}

impl Response {
    /// Whether the operation failed: an `isError` result, or a JSON-RPC error.
    pub fn is_error(&self) -> bool {
        match self {
            Response::Call(result) => result.is_error(),
            Response::Method(answer) => answer.is_err(),
        }
    }

    /// The call's result, for a `tools/call`.
    pub fn as_call(&self) -> Option<&CallToolResult> {
        match self {
            Response::Call(result) => Some(result),
            Response::Method(_) => None,
        }
    }

    /// The call's result to change, for a `tools/call`.
    pub fn as_call_mut(&mut self) -> Option<&mut CallToolResult> {
        match self {
            Response::Call(result) => Some(result),
            Response::Method(_) => None,
        }
    }
}

impl From<CallToolResult> for Response {
    fn from(result: CallToolResult) -> Self {
        Response::Call(result)
    }
}
