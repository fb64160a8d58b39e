//! [`ResourceContents`]: what `resources/read` answers (text or base64 blob).

use base64::Engine;
use serde_json::{Map, Value};

/// One item of a `resources/read` result (`TextResourceContents` or `BlobResourceContents`);
/// also what an embedded resource ([`Content::Resource`](crate::protocol::content::Content)) carries.
///
/// ```
/// use serde_json::json;
/// use wymcp::resource::ResourceContents;
///
/// let text = ResourceContents::text("test://a", "hello").with_mime_type("text/plain");
/// assert_eq!(text.to_value(), json!({"uri": "test://a", "mimeType": "text/plain", "text": "hello"}));
/// let blob = ResourceContents::blob("test://b", [0xFF, 0x00]);
/// assert_eq!(blob.to_value(), json!({"uri": "test://b", "blob": "/wA="}));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceContents {
    uri: String,
    mime_type: Option<String>,
    body: Body,
    meta: Option<Map<String, Value>>,
}

#[derive(Debug, Clone, PartialEq)]
enum Body {
    Text(String),
    Blob(String),
}

impl ResourceContents {
    /// Text contents.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        ResourceContents {
            uri: uri.into(),
            mime_type: None,
            body: Body::Text(text.into()),
            meta: None,
        }
    }

    /// Binary contents, base64-encoded here.
    pub fn blob(uri: impl Into<String>, bytes: impl AsRef<[u8]>) -> Self {
        let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
        Self::blob_base64(uri, encoded)
    }

    /// Binary contents already base64-encoded (standard alphabet, padded), sent verbatim.
    pub fn blob_base64(uri: impl Into<String>, base64: impl Into<String>) -> Self {
        ResourceContents {
            uri: uri.into(),
            mime_type: None,
            body: Body::Blob(base64.into()),
            meta: None,
        }
    }

    /// Sets the MIME type.
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets `_meta` (2025-06-18 and later; left out for 2025-03-26).
    #[must_use]
    pub fn with_meta(mut self, meta: Map<String, Value>) -> Self {
        self.meta = Some(meta);
        self
    }

    /// The URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The MIME type, when set.
    pub fn mime_type(&self) -> Option<&str> {
        self.mime_type.as_deref()
    }

    /// The text, for text contents.
    pub fn as_text(&self) -> Option<&str> {
        match &self.body {
            Body::Text(text) => Some(text),
            Body::Blob(_) => None,
        }
    }

    /// The base64 data, for binary contents.
    pub fn as_blob_base64(&self) -> Option<&str> {
        match &self.body {
            Body::Blob(blob) => Some(blob),
            Body::Text(_) => None,
        }
    }

    /// The size in bytes of the raw contents (the decoded blob's, the text's UTF-8).
    pub fn size(&self) -> u64 {
        match &self.body {
            Body::Text(text) => text.len() as u64,
            Body::Blob(blob) => {
                let padding = blob.bytes().rev().take_while(|&b| b == b'=').count();
                ((blob.len() / 4) * 3).saturating_sub(padding) as u64
            }
        }
    }

    /// The wire object, `_meta` included.
    pub fn to_value(&self) -> Value {
        self.render(true)
    }

    pub(crate) fn render(&self, with_meta: bool) -> Value {
        let mut map = Map::new();
        map.insert("uri".into(), Value::String(self.uri.clone()));
        if let Some(mime) = &self.mime_type {
            map.insert("mimeType".into(), Value::String(mime.clone()));
        }
        match &self.body {
            Body::Text(text) => map.insert("text".into(), Value::String(text.clone())),
            Body::Blob(blob) => map.insert("blob".into(), Value::String(blob.clone())),
        };
        if with_meta && let Some(meta) = &self.meta {
            map.insert("_meta".into(), Value::Object(meta.clone()));
        }
        Value::Object(map)
    }
}

impl From<ResourceContents> for crate::protocol::content::Content {
    /// An embedded resource (`{"type": "resource", "resource": {...}}`).
    fn from(contents: ResourceContents) -> Self {
        crate::protocol::content::Content::Resource {
            resource: contents.to_value(),
            annotations: None,
            meta: None,
        }
    }
}
