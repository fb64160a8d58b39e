//! The tools a server lists ([`ToolInfo`]) and what a call answers ([`ToolResult`]), read from
//! the wire as the server sent them, with the crate's [`Content`] for the items.

use serde::Deserialize;
use serde_json::Value;

use crate::protocol::content::Content;

/// One tool of a server's `tools/list`: its name, description and schemas, and the whole
/// definition as sent ([`raw`](Self::raw): annotations, `_meta`, icons).
///
/// ```no_run
/// # async fn run(client: wymcp::client::Client) -> Result<(), wymcp::client::ClientError> {
/// for tool in client.list_tools().await? {
///     println!("{}: {}", tool.name(), tool.description().unwrap_or_default());
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    name: String,
    raw: Value,
}

impl ToolInfo {
    /// Reads one entry of `tools`; `None` when it has no string `name`.
    pub(crate) fn of(raw: Value) -> Option<ToolInfo> {
        let name = raw.get("name")?.as_str()?.to_owned();
        Some(ToolInfo { name, raw })
    }

    /// The tool's name, as [`Client::call_tool`](super::Client::call_tool) takes it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `title`, when sent.
    pub fn title(&self) -> Option<&str> {
        self.raw.get("title").and_then(Value::as_str)
    }

    /// `description`, when sent.
    pub fn description(&self) -> Option<&str> {
        self.raw.get("description").and_then(Value::as_str)
    }

    /// `inputSchema` (`null` when the server sent none).
    pub fn input_schema(&self) -> &Value {
        self.raw.get("inputSchema").unwrap_or(&Value::Null)
    }

    /// `outputSchema`, when sent.
    pub fn output_schema(&self) -> Option<&Value> {
        self.raw.get("outputSchema")
    }

    /// The definition as the server sent it.
    pub fn raw(&self) -> &Value {
        &self.raw
    }
}

/// The result of [`Client::call_tool`](super::Client::call_tool): a tool's answer, or its
/// refusal ([`is_error`](Self::is_error): a tool failure is a result, not a JSON-RPC error).
///
/// ```no_run
/// # async fn run(client: wymcp::client::Client) -> Result<(), wymcp::client::ClientError> {
/// let result = client.call_tool("add", serde_json::json!({"a": 1, "b": 2})).await?;
/// if result.is_error() {
///     eprintln!("refused: {}", result.text());
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    content: Vec<Content>,
    raw: Value,
}

impl ToolResult {
    /// Reads a `tools/call` result sent some other way: as [`Client::request`](super::Client::request)
    /// answers it, the `result` a task's `tasks/get` inlines once it completed
    /// ([`Client::get_task`](super::Client::get_task)), or the answer of
    /// [`Client::call_tool_with_tasks`](super::Client::call_tool_with_tasks) when it is not a
    /// task handle. Content items of a type this crate does not know are left out of
    /// [`content`](Self::content) (they stay in [`raw`](Self::raw)).
    ///
    /// ```
    /// use serde_json::json;
    /// use wymcp::client::ToolResult;
    ///
    /// let result = ToolResult::from_raw(json!({"content": [{"type": "text", "text": "hi"}]}));
    /// assert_eq!(result.text(), "hi");
    /// assert!(!result.is_error());
    /// ```
    pub fn from_raw(raw: Value) -> ToolResult {
        let content = raw
            .get("content")
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(|item| Content::deserialize(item).ok())
                    .collect()
            })
            .unwrap_or_default();
        ToolResult { content, raw }
    }

    /// `isError`: the tool refused or failed.
    pub fn is_error(&self) -> bool {
        self.raw.get("isError").and_then(Value::as_bool) == Some(true)
    }

    /// The content items.
    pub fn content(&self) -> &[Content] {
        &self.content
    }

    /// The text items' text, joined with newlines.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self.content.iter().filter_map(Content::as_text).collect();
        texts.join("\n")
    }

    /// `structuredContent`, when sent.
    pub fn structured_content(&self) -> Option<&Value> {
        self.raw.get("structuredContent")
    }

    /// The result as the server sent it.
    pub fn raw(&self) -> &Value {
        &self.raw
    }

    /// The [`content`](Self::content) items and the [`raw`](Self::raw) result, taken
    /// without a copy (a proxy passing the answer on).
    ///
    /// ```no_run
    /// # async fn run(client: wymcp::client::Client) -> Result<(), wymcp::client::ClientError> {
    /// let result = client.call_tool("add", serde_json::json!({"a": 1, "b": 2})).await?;
    /// let (content, mut raw) = result.into_parts();
    /// let structured = raw.get_mut("structuredContent").map(serde_json::Value::take);
    /// println!("{} items, structured: {structured:?}", content.len());
    /// # Ok(()) }
    /// ```
    pub fn into_parts(self) -> (Vec<Content>, Value) {
        (self.content, self.raw)
    }
}
