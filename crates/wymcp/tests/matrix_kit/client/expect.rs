//! What the steps assert of every [`Exchange`]: its HTTP status and framing, and a tool
//! result's shape.

use serde_json::Value;

use super::{Exchange, Framing};

impl Exchange {
    /// Asserts the answer came with HTTP `status` on an HTTP path (none on stdio), as an SSE
    /// stream when `sse`, else as one JSON body (stdio: as lines).
    pub(crate) fn assert_answer(&self, status: u16, sse: bool) {
        let path = self.path;
        let expected = path.http().then_some(status);
        assert_eq!(self.status, expected, "{path:?}: {}", self.response);
        let expected = match (path.http(), sse) {
            (false, _) => Framing::Lines,
            (true, true) => Framing::Sse,
            (true, false) => Framing::Json,
        };
        assert_eq!(self.framing, expected, "{path:?}: {}", self.response);
    }

    /// The JSON of a tool result's one text item; the result must have no other field than
    /// `content` and `isError`, which must say `is_error`.
    pub(crate) fn tool_payload(&self, is_error: bool) -> Value {
        let path = self.path;
        let result = self.result();
        assert_eq!(result["isError"], is_error, "{path:?}: {result}");
        let mut keys: Vec<&String> = result
            .as_object()
            .map(|o| o.keys().collect())
            .unwrap_or_default();
        keys.sort();
        assert_eq!(keys, ["content", "isError"], "{path:?}: {result}");
        let content = result["content"].as_array().map(Vec::len);
        assert_eq!(content, Some(1), "{path:?}: {result}");
        assert_eq!(result["content"][0]["type"], "text", "{path:?}: {result}");
        self.tool_json()
    }
}
