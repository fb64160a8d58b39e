//! Checks on what other layers hand you: content lists, and JSON-RPC responses read over a
//! real transport.

use std::fmt;

use serde_json::{Value, json};

use super::client::action_arguments;
use crate::tool::Content;

/// A check on content or a response that did not hold; the message says what was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch(String);

impl Mismatch {
    fn new(message: impl Into<String>) -> Self {
        Mismatch(message.into())
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Mismatch {}

/// The single item of `content`.
///
/// ```
/// use wymcp::Content;
/// use wymcp::testing::unwrap_single;
///
/// let two = [Content::text("a"), Content::text("b")];
/// let error = unwrap_single(&two).unwrap_err();
/// assert!(error.message().starts_with("expected single content item, got: "));
/// ```
pub fn unwrap_single(content: &[Content]) -> Result<&Content, Mismatch> {
    match content {
        [item] => Ok(item),
        _ => Err(Mismatch::new(format!(
            "expected single content item, got: {}",
            serde_json::to_string(content).unwrap_or_else(|_| format!("{content:?}"))
        ))),
    }
}

/// The text of a content list holding exactly one text item.
///
/// ```
/// use wymcp::Content;
/// use wymcp::testing::unwrap_text;
///
/// assert_eq!(unwrap_text(&[Content::text("done")]).unwrap(), "done");
/// ```
pub fn unwrap_text(content: &[Content]) -> Result<&str, Mismatch> {
    let item = unwrap_single(content)?;
    item.as_text()
        .ok_or_else(|| Mismatch::new(format!("expected a text item, got: {item:?}")))
}

/// The single text item of `content`, parsed as JSON.
///
/// ```
/// use serde_json::json;
/// use wymcp::Content;
/// use wymcp::testing::unwrap_json;
///
/// assert_eq!(unwrap_json(&[Content::text(r#"{"id": 7}"#)]).unwrap(), json!({"id": 7}));
/// ```
pub fn unwrap_json(content: &[Content]) -> Result<Value, Mismatch> {
    let text = unwrap_text(content)?;
    serde_json::from_str(text)
        .map_err(|e| Mismatch::new(format!("expected JSON text, got {text:?}: {e}")))
}

/// A `tools/call` JSON-RPC request body with id 1.
///
/// ```
/// use serde_json::json;
/// use wymcp::testing::build_call_request;
///
/// let body = build_call_request("tasks", json!({"action": "get"}));
/// assert_eq!(body["method"], "tools/call");
/// assert_eq!(body["params"]["arguments"], json!({"action": "get"}));
/// ```
pub fn build_call_request(tool: &str, arguments: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    })
}

/// A `tools/call` request for one action: arguments `{"action", "data"}`, `data` left out when
/// it is `null` or `{}`.
///
/// ```
/// use serde_json::json;
/// use wymcp::testing::build_action_request;
///
/// let body = build_action_request("tasks", "get", json!({"id": "7"}));
/// assert_eq!(body["params"]["arguments"], json!({"action": "get", "data": {"id": "7"}}));
/// let body = build_action_request("tasks", "list", json!({}));
/// assert_eq!(body["params"]["arguments"], json!({"action": "list"}));
/// ```
pub fn build_action_request(tool: &str, action: &str, data: Value) -> Value {
    build_call_request(tool, action_arguments(action, data))
}

/// The `result` of a JSON-RPC response (or `response` itself when it already is a result).
fn call_result(response: &Value) -> Result<&Value, Mismatch> {
    if let Some(error) = response.get("error") {
        return Err(Mismatch::new(format!(
            "expected a result, got a JSON-RPC error: {error}"
        )));
    }
    let result = response.get("result").unwrap_or(response);
    if result.get("content").is_some_and(Value::is_array) {
        Ok(result)
    } else {
        Err(Mismatch::new(format!(
            "expected a tools/call result, got: {response}"
        )))
    }
}

fn result_content(result: &Value) -> Result<Vec<Content>, Mismatch> {
    serde_json::from_value(result["content"].clone())
        .map_err(|e| Mismatch::new(format!("content is not MCP content ({e}): {result}")))
}

fn is_error(result: &Value) -> bool {
    result
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// The text of a successful single-text `tools/call` response.
///
/// ```
/// use serde_json::json;
/// use wymcp::testing::text_response;
///
/// let ok = json!({"jsonrpc": "2.0", "id": 1,
///                 "result": {"content": [{"type": "text", "text": "done"}], "isError": false}});
/// assert_eq!(text_response(&ok).unwrap(), "done");
///
/// let refused = json!({"result": {"content": [{"type": "text", "text": "{}"}], "isError": true}});
/// assert!(text_response(&refused).unwrap_err().message().starts_with("expected success, got error"));
/// ```
pub fn text_response(response: &Value) -> Result<String, Mismatch> {
    let result = call_result(response)?;
    if is_error(result) {
        return Err(Mismatch::new(format!(
            "expected success, got error: {result}"
        )));
    }
    Ok(unwrap_text(&result_content(result)?)?.to_owned())
}

/// [`text_response`], parsed as JSON.
pub fn json_response(response: &Value) -> Result<Value, Mismatch> {
    let text = text_response(response)?;
    serde_json::from_str(&text)
        .map_err(|e| Mismatch::new(format!("expected JSON text, got {text:?}: {e}")))
}

/// The text of an `isError: true` `tools/call` response (gate refusals are such results).
///
/// ```
/// use serde_json::json;
/// use wymcp::testing::error_response;
///
/// let ok = json!({"result": {"content": [{"type": "text", "text": "done"}], "isError": false}});
/// assert!(error_response(&ok).unwrap_err().message().starts_with("expected error, got success"));
/// ```
pub fn error_response(response: &Value) -> Result<String, Mismatch> {
    let result = call_result(response)?;
    if !is_error(result) {
        return Err(Mismatch::new(format!(
            "expected error, got success: {result}"
        )));
    }
    Ok(unwrap_text(&result_content(result)?)?.to_owned())
}

fn media_response(response: &Value, kind: &str) -> Result<Content, Mismatch> {
    let result = call_result(response)?;
    if is_error(result) {
        return Err(Mismatch::new(format!(
            "expected success, got error: {result}"
        )));
    }
    let content = result_content(result)?;
    let item = unwrap_single(&content)?.clone();
    let matches = matches!(
        (&item, kind),
        (Content::Image { .. }, "image") | (Content::Audio { .. }, "audio")
    );
    if matches {
        Ok(item)
    } else {
        Err(Mismatch::new(format!(
            "expected an {kind} item, got: {item:?}"
        )))
    }
}

/// The single image item of a successful response.
pub fn image_response(response: &Value) -> Result<Content, Mismatch> {
    media_response(response, "image")
}

/// The single audio item of a successful response.
pub fn audio_response(response: &Value) -> Result<Content, Mismatch> {
    media_response(response, "audio")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn responses_are_told_apart() {
        let image = json!({"result": {"content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}], "isError": false}});
        assert!(image_response(&image).is_ok());
        assert!(audio_response(&image).is_err());
        let rpc_error =
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "x"}});
        assert!(text_response(&rpc_error).is_err());
        let ok = json!({"result": {"content": [{"type": "text", "text": "{\"id\":7}"}]}});
        assert_eq!(json_response(&ok), Ok(json!({"id": 7})));
    }
}
