//! [`Refusal`]: a layer's "no", answered to the model as an `isError` result (as a JSON-RPC
//! error for a method other than `tools/call`).

use std::borrow::Cow;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::protocol::RpcError;
use crate::tool::CallToolResult;
use crate::tool::{Content, ErrorKind};

/// A layer's refusal of an operation. The model reads it as an `isError` result in the gates'
/// dialect: `{"errorType": …, "tool": …, "action": …, "message": …, "retryAfterMs": …}`.
///
/// A layer returns it as its error (`Err(Refusal::new(..).into())`); any other error a layer
/// returns is answered as `middleware_error`. A method other than `tools/call` has no
/// `isError` result: its refusal is the JSON-RPC error `-32000` whose `message` is the
/// refusal's and whose `data` is the same payload with `method` for `tool`.
///
/// ```
/// use std::time::Duration;
/// use wymcp::middleware::Refusal;
///
/// let refusal = Refusal::new("maintenance", "The tool is down for maintenance; retry in a minute.")
///     .retry_after(Duration::from_secs(60))
///     .detail("window", serde_json::json!("10:00-10:05"));
/// assert_eq!(refusal.error_type(), "maintenance");
/// assert_eq!(refusal.retry_after_ms(), Some(60_000));
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{error_type}: {message}")]
pub struct Refusal {
    error_type: Cow<'static, str>,
    message: String,
    retry_after: Option<Duration>,
    details: Map<String, Value>,
}

impl Refusal {
    /// A refusal of type `error_type` (`snake_case`, stable: the model may branch on it) with
    /// a message that says what to do.
    pub fn new(error_type: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Refusal {
            error_type: error_type.into(),
            message: message.into(),
            retry_after: None,
            details: Map::new(),
        }
    }

    /// When a retry may succeed: `retryAfterMs` (rounded up to whole milliseconds).
    #[must_use]
    pub fn retry_after(mut self, wait: Duration) -> Self {
        self.retry_after = Some(wait);
        self
    }

    /// An extra field of the payload (a limit, a pointer to `help`).
    #[must_use]
    pub fn detail(mut self, key: impl Into<String>, value: Value) -> Self {
        self.details.insert(key.into(), value);
        self
    }

    /// The `errorType`.
    pub fn error_type(&self) -> &str {
        &self.error_type
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// `retryAfterMs`, when set.
    pub fn retry_after_ms(&self) -> Option<u64> {
        self.retry_after.map(ceil_ms)
    }

    /// The result the model reads for `tool` (and `action`).
    pub(crate) fn into_result(self, tool: &str, action: Option<&str>) -> CallToolResult {
        let mut body = Map::new();
        body.insert("errorType".into(), Value::from(self.error_type.as_ref()));
        body.insert("tool".into(), Value::from(tool));
        if let Some(action) = action {
            body.insert("action".into(), Value::from(action));
        }
        body.insert("message".into(), Value::String(self.message));
        if let Some(wait) = self.retry_after {
            body.insert("retryAfterMs".into(), Value::from(ceil_ms(wait)));
        }
        for (key, value) in self.details {
            body.entry(key).or_insert(value);
        }
        CallToolResult {
            content: vec![Content::json(&Value::Object(body))],
            is_error: true,
            structured: None,
            error_kind: Some(ErrorKind::Dispatch),
            scopes_needed: None,
        }
    }
}

impl Refusal {
    /// The JSON-RPC error a request of `method` (not a `tools/call`) answers.
    pub(crate) fn into_rpc_error(self, method: &str) -> RpcError {
        let mut data = Map::new();
        data.insert("errorType".into(), Value::from(self.error_type.as_ref()));
        data.insert("method".into(), Value::from(method));
        if let Some(wait) = self.retry_after {
            data.insert("retryAfterMs".into(), Value::from(ceil_ms(wait)));
        }
        for (key, value) in self.details {
            data.entry(key).or_insert(value);
        }
        RpcError::new(
            RpcError::SERVER_BUSY,
            self.message,
            Some(Value::Object(data)),
        )
    }
}

/// Whole milliseconds, rounded up: a client that waits this long is not early.
pub(crate) fn ceil_ms(wait: Duration) -> u64 {
    let ms = wait.as_millis();
    let ms = if wait.subsec_nanos().is_multiple_of(1_000_000) {
        ms
    } else {
        ms + 1
    };
    u64::try_from(ms).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_payload_is_the_gates_dialect_and_details_never_replace_its_fields() {
        let result = Refusal::new("rate_limited", "Wait.")
            .retry_after(Duration::from_micros(1500))
            .detail("limit", Value::from("5/s"))
            .detail("tool", Value::from("spoofed"))
            .into_result("tasks", Some("list"));
        assert!(result.is_error());
        assert_eq!(
            result.json().expect("a refusal is one JSON text item"),
            serde_json::json!({"errorType": "rate_limited", "tool": "tasks", "action": "list",
                "message": "Wait.", "retryAfterMs": 2, "limit": "5/s"})
        );
    }

    #[test]
    fn a_methods_refusal_is_error_32000_with_the_same_payload_naming_the_method() {
        let error = Refusal::new("rate_limited", "Wait.")
            .retry_after(Duration::from_millis(40))
            .detail("method", Value::from("spoofed"))
            .into_rpc_error("resources/read");
        assert_eq!(error.code(), -32000);
        assert_eq!(error.message(), "Wait.");
        assert_eq!(
            error.data(),
            Some(
                &serde_json::json!({"errorType": "rate_limited", "method": "resources/read",
                "retryAfterMs": 40})
            )
        );
    }
}
