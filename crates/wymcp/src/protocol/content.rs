//! [`Content`]: the items of a tool result.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One item of a tool result's `content`.
///
/// ```
/// use serde_json::json;
/// use wymcp::Content;
///
/// assert_eq!(
///     serde_json::to_value(Content::text("hi")).unwrap(),
///     json!({"type": "text", "text": "hi"})
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Content {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// Base64 data.
        data: String,
        /// The MIME type, e.g. `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// Audio, base64-encoded.
    Audio {
        /// Base64 data.
        data: String,
        /// The MIME type, e.g. `audio/wav`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// An embedded resource (`{uri, mimeType?, text | blob}`).
    Resource {
        /// The resource contents object.
        resource: Value,
    },
    /// A link to a resource.
    ResourceLink {
        /// The resource URI.
        uri: String,
        /// The resource name.
        name: String,
        /// A description.
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// The MIME type.
        #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
}

impl Content {
    /// A text item.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }

    /// A text item holding `value` as compact JSON.
    pub fn json(value: &Value) -> Self {
        // The same compact text as `Display`, written without the formatter's overhead
        // (serializing a `Value` cannot fail).
        Content::Text {
            text: serde_json::to_string(value).unwrap_or_default(),
        }
    }

    /// An image item.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Image {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// An audio item.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Audio {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// An embedded text resource.
    pub fn embedded_text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Content::Resource {
            resource: serde_json::json!({
                "uri": uri.into(), "mimeType": mime_type.into(), "text": text.into()
            }),
        }
    }

    /// A resource link.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Content::ResourceLink {
            uri: uri.into(),
            name: name.into(),
            description: None,
            mime_type: None,
        }
    }

    /// The text, for a text item.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text { text } => Some(text),
            _ => None,
        }
    }
}
