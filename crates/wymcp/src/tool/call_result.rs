//! [`CallToolResult`]: the `result` of a `tools/call` that reached a tool.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

use super::{Content, ErrorKind};
use crate::protocol::ProtocolVersion;

/// The result of a `tools/call` that reached a tool: success, gate refusal, tool error or
/// contained fault alike (`isError` tells them apart).
#[derive(Debug, Clone, PartialEq)]
pub struct CallToolResult {
    pub(crate) content: Vec<Content>,
    pub(crate) is_error: bool,
    pub(crate) structured: Option<Value>,
    pub(crate) error_kind: Option<ErrorKind>,
    /// The scopes the caller lacked, when the call was refused for them (HTTP answers 403
    /// with the step-up challenge naming them).
    pub(crate) scopes_needed: Option<Vec<String>>,
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

    /// The scopes the call needs and the caller's credentials lack, when it was refused for
    /// them (`insufficient_scope`).
    pub fn scopes_needed(&self) -> Option<&[String]> {
        self.scopes_needed.as_deref()
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

/// A [`CallToolResult`] as the wire `result` of one revision, serialized directly: the same
/// bytes [`CallToolResult::to_value`] would serialize to (keys in sorted order, as a `Value` map
/// writes them), without building and dropping that tree.
pub(crate) struct WireResult<'a> {
    pub(crate) result: &'a CallToolResult,
    pub(crate) version: ProtocolVersion,
}

impl WireResult<'_> {
    /// The content items, each with its keys in sorted order.
    pub(crate) fn content(&self) -> impl Serialize + '_ {
        SortedItems(&self.result.content)
    }
}

impl Serialize for WireResult<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let structured = self
            .result
            .structured
            .as_ref()
            .filter(|_| self.version.supports_output_schema());
        let mut map = serializer.serialize_map(Some(2 + usize::from(structured.is_some())))?;
        map.serialize_entry("content", &SortedItems(&self.result.content))?;
        map.serialize_entry("isError", &self.result.is_error)?;
        if let Some(structured) = structured {
            map.serialize_entry("structuredContent", structured)?;
        }
        map.end()
    }
}

struct SortedItems<'a>(&'a [Content]);

impl Serialize for SortedItems<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(SortedContent))
    }
}

/// One content item with its keys in sorted order (serde's derive writes `type` first).
struct SortedContent<'a>(&'a Content);

impl Serialize for SortedContent<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        // `_meta` and `annotations` sort before every other key of an item.
        if let Some(meta) = self.0.meta() {
            map.serialize_entry("_meta", meta)?;
        }
        if let Some(annotations) = self.0.annotations() {
            map.serialize_entry("annotations", annotations)?;
        }
        match self.0 {
            Content::Text { text, .. } => {
                map.serialize_entry("text", text)?;
                map.serialize_entry("type", "text")?;
            }
            Content::Image {
                data, mime_type, ..
            }
            | Content::Audio {
                data, mime_type, ..
            } => {
                let kind = if matches!(self.0, Content::Image { .. }) {
                    "image"
                } else {
                    "audio"
                };
                map.serialize_entry("data", data)?;
                map.serialize_entry("mimeType", mime_type)?;
                map.serialize_entry("type", kind)?;
            }
            Content::Resource { resource, .. } => {
                map.serialize_entry("resource", resource)?;
                map.serialize_entry("type", "resource")?;
            }
            Content::ResourceLink {
                uri,
                name,
                description,
                mime_type,
                ..
            } => {
                if let Some(description) = description {
                    map.serialize_entry("description", description)?;
                }
                if let Some(mime_type) = mime_type {
                    map.serialize_entry("mimeType", mime_type)?;
                }
                map.serialize_entry("name", name)?;
                map.serialize_entry("type", "resource_link")?;
                map.serialize_entry("uri", uri)?;
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    /// Every content kind, with and without structured content, on every revision: the direct
    /// serialization writes exactly the bytes of the `Value` it replaces.
    #[test]
    fn wire_result_bytes_equal_the_value_bytes() {
        let content = vec![
            Content::text("t"),
            Content::image("aW1n", "image/png"),
            Content::audio("YXVk", "audio/wav"),
            Content::Resource {
                resource: json!({"uri": "file:///a", "text": "x", "mimeType": "text/plain"}),
                annotations: None,
                meta: None,
            },
            Content::ResourceLink {
                uri: "file:///b".into(),
                name: "b".into(),
                description: Some("d".into()),
                mime_type: Some("text/plain".into()),
                annotations: None,
                meta: None,
            },
            Content::ResourceLink {
                uri: "file:///c".into(),
                name: "c".into(),
                description: None,
                mime_type: None,
                annotations: None,
                meta: None,
            },
            Content::text("annotated")
                .with_annotations(object(json!({"audience": ["user"], "priority": 0.5})))
                .with_meta(object(json!({"z": 1, "a": "b"}))),
            Content::image("aW1n", "image/png").with_meta(object(json!({"k": true}))),
        ];
        for structured in [None, Some(json!({"z": 1, "a": [true, null]}))] {
            for is_error in [false, true] {
                let result = CallToolResult {
                    content: content.clone(),
                    is_error,
                    structured: structured.clone(),
                    error_kind: None,
                    scopes_needed: None,
                };
                for version in [
                    ProtocolVersion::V2025_03_26,
                    ProtocolVersion::V2025_06_18,
                    ProtocolVersion::V2025_11_25,
                ] {
                    let direct = serde_json::to_string(&WireResult {
                        result: &result,
                        version,
                    })
                    .expect("serializes");
                    let via_value =
                        serde_json::to_string(&result.to_value(version)).expect("serializes");
                    assert_eq!(direct, via_value, "{version:?}");
                }
            }
        }
    }
}
