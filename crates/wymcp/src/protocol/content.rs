//! [`Content`]: the items of a tool result.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// An item's `annotations` or `_meta`, when it has them.
type Members = Option<Map<String, Value>>;

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
        /// `annotations` (`audience`, `priority`, `lastModified`), as given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Map<String, Value>>,
        /// `_meta`, as given.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Map<String, Value>>,
    },
    /// An image, base64-encoded.
    Image {
        /// Base64 data.
        data: String,
        /// The MIME type, e.g. `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// `annotations` (`audience`, `priority`, `lastModified`), as given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Map<String, Value>>,
        /// `_meta`, as given.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Map<String, Value>>,
    },
    /// Audio, base64-encoded.
    Audio {
        /// Base64 data.
        data: String,
        /// The MIME type, e.g. `audio/wav`.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// `annotations` (`audience`, `priority`, `lastModified`), as given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Map<String, Value>>,
        /// `_meta`, as given.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Map<String, Value>>,
    },
    /// An embedded resource (`{uri, mimeType?, text | blob}`).
    Resource {
        /// The resource contents object.
        resource: Value,
        /// `annotations` (`audience`, `priority`, `lastModified`), as given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Map<String, Value>>,
        /// `_meta`, as given.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Map<String, Value>>,
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
        /// `annotations` (`audience`, `priority`, `lastModified`), as given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Map<String, Value>>,
        /// `_meta`, as given.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Map<String, Value>>,
    },
}

impl Content {
    /// A text item.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text {
            text: text.into(),
            annotations: None,
            meta: None,
        }
    }

    /// A text item holding `value` as compact JSON.
    pub fn json(value: &Value) -> Self {
        // The same compact text as `Display`, written without the formatter's overhead
        // (serializing a `Value` cannot fail).
        Content::Text {
            text: serde_json::to_string(value).unwrap_or_default(),
            annotations: None,
            meta: None,
        }
    }

    /// An image item.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Image {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }

    /// An audio item.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Audio {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
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
            annotations: None,
            meta: None,
        }
    }

    /// A resource link.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Content::ResourceLink {
            uri: uri.into(),
            name: name.into(),
            description: None,
            mime_type: None,
            annotations: None,
            meta: None,
        }
    }

    /// The text, for a text item.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text { text, .. } => Some(text),
            _ => None,
        }
    }

    /// The item with `annotations` (`audience`, `priority`, `lastModified`), which a client
    /// reads to decide who sees the item and how much it matters.
    ///
    /// ```
    /// use serde_json::json;
    /// use wymcp::Content;
    ///
    /// let item = Content::text("hi")
    ///     .with_annotations(json!({"audience": ["user"]}).as_object().cloned().unwrap_or_default());
    /// assert_eq!(
    ///     serde_json::to_value(&item).unwrap(),
    ///     json!({"type": "text", "text": "hi", "annotations": {"audience": ["user"]}})
    /// );
    /// ```
    pub fn with_annotations(mut self, value: Map<String, Value>) -> Self {
        *self.parts_mut().0 = Some(value);
        self
    }

    /// The item with `_meta`.
    pub fn with_meta(mut self, value: Map<String, Value>) -> Self {
        *self.parts_mut().1 = Some(value);
        self
    }

    /// The item's `annotations`, when it has them.
    pub fn annotations(&self) -> Option<&Map<String, Value>> {
        self.parts().0.as_ref()
    }

    /// The item's `_meta`, when it has one.
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        self.parts().1.as_ref()
    }

    fn parts(&self) -> (&Members, &Members) {
        match self {
            Content::Text {
                annotations, meta, ..
            }
            | Content::Image {
                annotations, meta, ..
            }
            | Content::Audio {
                annotations, meta, ..
            }
            | Content::Resource {
                annotations, meta, ..
            }
            | Content::ResourceLink {
                annotations, meta, ..
            } => (annotations, meta),
        }
    }

    fn parts_mut(&mut self) -> (&mut Members, &mut Members) {
        match self {
            Content::Text {
                annotations, meta, ..
            }
            | Content::Image {
                annotations, meta, ..
            }
            | Content::Audio {
                annotations, meta, ..
            }
            | Content::Resource {
                annotations, meta, ..
            }
            | Content::ResourceLink {
                annotations, meta, ..
            } => (annotations, meta),
        }
    }
}
