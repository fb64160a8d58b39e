//! [`Answer`]: one JSON-RPC message the core sends back, written to the wire without a `Value`
//! tree where the core can (a session-era `tools/call` result is serialized from its parts).

use std::sync::Arc;

use serde_json::Value;
use serde_json::value::RawValue;

use super::stateless::StatelessCall;
use crate::context::scope_gate;
use crate::dispatch::{CallToolResult, WireResult};
use crate::protocol::{ProtocolVersion, RpcError, failure, success, success_bytes, success_text};

/// One JSON-RPC message to send.
#[derive(Debug)]
pub(crate) enum Answer {
    /// A `tools/call` success, written from the typed result for the revision `version`.
    Call {
        id: Value,
        result: CallToolResult,
        version: ProtocolVersion,
    },
    /// A stateless `tools/call` success (2026-07-28), written from the typed result with the
    /// era's shaping (`resultType`, and `meta`: the server's name and version, written once).
    Stateless {
        id: Value,
        result: CallToolResult,
        meta: Arc<RawValue>,
    },
    /// Any other message, as a JSON value.
    Message(Value),
    /// A JSON-RPC error refusing a request for lacking `scopes` (a resource's, a template's or
    /// a prompt's: the scope gate's `-32003`), as a JSON value.
    ScopeRefused { message: Value, scopes: Vec<String> },
}

impl Answer {
    /// The answer to request `id` refused with `error`: [`Answer::ScopeRefused`] when it is the
    /// scope gate's refusal, else [`Answer::Message`].
    pub(crate) fn failure(id: Value, error: &RpcError) -> Answer {
        let message = failure(id, error);
        match scope_gate::scopes_needed(error) {
            Some(scopes) => Answer::ScopeRefused { message, scopes },
            None => Answer::Message(message),
        }
    }

    /// The message's JSON bytes (an HTTP body, an SSE event's data).
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        match self {
            Answer::Call {
                id,
                result,
                version,
            } => success_bytes(id, &wire(result, *version)),
            Answer::Stateless { id, result, meta } => success_bytes(id, &stateless(result, meta)),
            // Serializing a `Value` cannot fail.
            Answer::Message(message) | Answer::ScopeRefused { message, .. } => {
                serde_json::to_vec(message).unwrap_or_default()
            }
        }
    }

    /// The scopes a request was refused for lacking (`insufficient_scope`), if it was.
    pub(crate) fn scopes_needed(&self) -> Option<&[String]> {
        match self {
            Answer::Call { result, .. } | Answer::Stateless { result, .. } => {
                result.scopes_needed()
            }
            Answer::ScopeRefused { scopes, .. } => Some(scopes),
            Answer::Message(_) => None,
        }
    }

    /// The message as one line of text (stdio, SSE).
    pub(crate) fn into_text(self) -> String {
        match self {
            Answer::Call {
                id,
                result,
                version,
            } => success_text(&id, &wire(&result, version)),
            Answer::Stateless { id, result, meta } => success_text(&id, &stateless(&result, &meta)),
            Answer::Message(message) | Answer::ScopeRefused { message, .. } => message.to_string(),
        }
    }

    /// The message as a JSON value (a batch's answers are one array).
    pub(crate) fn into_value(self) -> Value {
        match self {
            Answer::Call {
                id,
                result,
                version,
            } => success(id, result.into_value(version)),
            Answer::Stateless { .. } => {
                serde_json::from_slice(&self.to_bytes()).unwrap_or(Value::Null)
            }
            Answer::Message(message) | Answer::ScopeRefused { message, .. } => message,
        }
    }
}

fn wire(result: &CallToolResult, version: ProtocolVersion) -> WireResult<'_> {
    WireResult { result, version }
}

fn stateless<'a>(result: &'a CallToolResult, meta: &'a RawValue) -> StatelessCall<'a> {
    StatelessCall { result, meta }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Answer;
    use crate::ProtocolVersion;
    use crate::tool::CallToolResult;
    use crate::tool::Content;

    #[test]
    fn every_form_of_an_answer_writes_the_same_message() {
        let call = || Answer::Call {
            id: json!(3),
            result: CallToolResult {
                content: vec![Content::text("hi")],
                is_error: false,
                structured: None,
                error_kind: None,
                scopes_needed: None,
            },
            version: ProtocolVersion::V2025_11_25,
        };
        let value = call().into_value();
        assert_eq!(value["result"]["content"][0]["text"], "hi");
        assert_eq!(call().to_bytes(), serde_json::to_vec(&value).expect("json"));
        assert_eq!(call().into_text(), value.to_string());
        let message = Answer::Message(json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
        assert_eq!(
            message.to_bytes(),
            br#"{"id":1,"jsonrpc":"2.0","result":{}}"#
        );
    }
}
