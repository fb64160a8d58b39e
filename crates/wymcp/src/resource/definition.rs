//! [`Resource`] and [`ResourceTemplate`]: what `resources/list` and
//! `resources/templates/list` describe.

use std::sync::Arc;

use base64::Engine;
use serde_json::{Map, Value};

use crate::protocol::ProtocolVersion;
use crate::resource::ResourceContents;
use crate::resource::read::{ReadResource, Reader};

/// Where a resource's contents come from.
#[derive(Clone)]
pub(crate) enum Source {
    Text(String),
    Blob(String),
    Reader(Reader),
}

/// The metadata resources and templates share (`name`, `title`, `description`, `mimeType`,
/// `icons`, `annotations`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Meta {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) mime_type: Option<String>,
    pub(crate) icons: Vec<Value>,
    pub(crate) annotations: Option<Map<String, Value>>,
    /// The OAuth scopes a caller must hold, all of them, to see and read it.
    pub(crate) scopes: Vec<String>,
}

/// Writes what names a resource, template, prompt or prompt argument (MCP's base metadata):
/// `name`, `title` from 2025-06-18 on, and `description`, each when there is one.
pub(crate) fn write_named(
    map: &mut Map<String, Value>,
    version: ProtocolVersion,
    name: &str,
    title: Option<&String>,
    description: Option<&String>,
) {
    map.insert("name".into(), Value::String(name.to_owned()));
    if version.supports_tool_title()
        && let Some(title) = title
    {
        map.insert("title".into(), Value::String(title.clone()));
    }
    if let Some(description) = description {
        map.insert("description".into(), Value::String(description.clone()));
    }
}

impl Meta {
    fn new(name: String) -> Self {
        Meta {
            name,
            ..Meta::default()
        }
    }

    /// Writes the fields `version` allows into `map`.
    fn write(&self, map: &mut Map<String, Value>, version: ProtocolVersion) {
        write_named(
            map,
            version,
            &self.name,
            self.title.as_ref(),
            self.description.as_ref(),
        );
        if let Some(mime) = &self.mime_type {
            map.insert("mimeType".into(), Value::String(mime.clone()));
        }
        if let Some(annotations) = &self.annotations {
            let mut annotations = annotations.clone();
            if !version.supports_tool_title() {
                // `lastModified` arrived with 2025-06-18.
                annotations.remove("lastModified");
            }
            map.insert("annotations".into(), Value::Object(annotations));
        }
        if version.supports_icons() && !self.icons.is_empty() {
            map.insert("icons".into(), Value::Array(self.icons.clone()));
        }
    }
}

/// The listed object `to_value` wrote, as a caller lacking the scopes `missing` is shown it
/// under `Visibility::ShowWithScope`: its description
/// ends `(needs scope: …)`, as a tool's does.
pub(crate) fn marked(mut listed: Value, missing: &[&str]) -> Value {
    let needs = format!("(needs scope: {})", missing.join(" "));
    let described = match listed.get("description").and_then(Value::as_str) {
        Some(description) => format!("{description} {needs}"),
        None => needs,
    };
    listed["description"] = Value::String(described);
    listed
}

macro_rules! metadata_setters {
    () => {
        /// A display title (served from 2025-06-18 on).
        pub fn title(mut self, title: impl Into<String>) -> Self {
            self.meta.title = Some(title.into());
            self
        }

        /// A description.
        pub fn description(mut self, description: impl Into<String>) -> Self {
            self.meta.description = Some(description.into());
            self
        }

        /// The MIME type.
        pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
            self.meta.mime_type = Some(mime_type.into());
            self
        }

        /// An icon, an MCP `Icon` object (`src`, optional `mimeType`, `sizes`, `theme`); served
        /// from 2025-11-25 on.
        pub fn icon(mut self, icon: Value) -> Self {
            self.meta.icons.push(icon);
            self
        }

        /// MCP annotations (`audience`, `priority`, `lastModified`), passed through verbatim
        /// (`lastModified` left out for 2025-03-26).
        pub fn annotations(mut self, annotations: Map<String, Value>) -> Self {
            self.meta.annotations = Some(annotations);
            self
        }

        /// The OAuth scopes a caller must hold, all of them, to read this (and to subscribe
        /// to it, or complete its variables): RFC 6749 scope tokens, checked by
        /// [`build`](crate::ServerBuilder::build). A caller lacking one is refused `-32003`
        /// ([`RpcError::INSUFFICIENT_SCOPE`](crate::RpcError::INSUFFICIENT_SCOPE); 403 with
        /// the step-up challenge over Streamable HTTP), and the list leaves it out (see
        /// [`ServerBuilder::visibility`](crate::ServerBuilder::visibility)). A transport
        /// without auth has no one to refuse.
        pub fn scopes<I, S>(mut self, scopes: I) -> Self
        where
            I: IntoIterator<Item = S>,
            S: Into<String>,
        {
            self.meta.scopes = scopes.into_iter().map(Into::into).collect();
            self
        }
    };
}

/// A resource with a fixed URI: static text, static binary, or contents read on demand.
///
/// ```
/// use wymcp::Resource;
///
/// let readme = Resource::text("file:///readme.md", "readme", "# Hello")
///     .title("Read me")
///     .description("The project's front page")
///     .mime_type("text/markdown");
/// let logo = Resource::blob("file:///logo.png", "logo", [0x89, b'P', b'N', b'G'])
///     .mime_type("image/png");
/// let server = wymcp::Server::builder().resource(readme).resource(logo).build().unwrap();
/// assert_eq!(server.resource_uris(), ["file:///readme.md", "file:///logo.png"]);
/// ```
#[derive(Clone)]
#[must_use]
pub struct Resource {
    pub(crate) uri: String,
    pub(crate) meta: Meta,
    pub(crate) size: Option<u64>,
    pub(crate) source: Source,
}

impl std::fmt::Debug for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resource")
            .field("uri", &self.uri)
            .field("meta", &self.meta)
            .finish_non_exhaustive()
    }
}

impl Resource {
    /// A static text resource.
    pub fn text(uri: impl Into<String>, name: impl Into<String>, text: impl Into<String>) -> Self {
        Resource::with_source(uri.into(), name.into(), Source::Text(text.into()))
    }

    /// A static binary resource; the bytes are base64-encoded once, here.
    pub fn blob(uri: impl Into<String>, name: impl Into<String>, bytes: impl AsRef<[u8]>) -> Self {
        let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
        Resource::with_source(uri.into(), name.into(), Source::Blob(encoded))
    }

    /// A static binary resource given already base64-encoded (standard alphabet, padded),
    /// served verbatim.
    pub fn blob_base64(
        uri: impl Into<String>,
        name: impl Into<String>,
        base64: impl Into<String>,
    ) -> Self {
        Resource::with_source(uri.into(), name.into(), Source::Blob(base64.into()))
    }

    /// A resource whose contents `reader` produces on each read (its variables are empty).
    pub fn dynamic(
        uri: impl Into<String>,
        name: impl Into<String>,
        reader: impl ReadResource,
    ) -> Self {
        Resource::with_source(uri.into(), name.into(), Source::Reader(Arc::new(reader)))
    }

    fn with_source(uri: String, name: String, source: Source) -> Self {
        Resource {
            uri,
            meta: Meta::new(name),
            size: None,
            source,
        }
    }

    metadata_setters!();

    /// The size in bytes, for clients to estimate context use. Static resources default to the
    /// size of their contents.
    pub fn size(mut self, bytes: u64) -> Self {
        self.size = Some(bytes);
        self
    }

    /// The URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The static contents (`None` for a dynamic resource).
    pub(crate) fn static_contents(&self) -> Option<ResourceContents> {
        let contents = match &self.source {
            Source::Text(text) => ResourceContents::text(&self.uri, text.clone()),
            Source::Blob(blob) => ResourceContents::blob_base64(&self.uri, blob.clone()),
            Source::Reader(_) => return None,
        };
        Some(match &self.meta.mime_type {
            Some(mime) => contents.with_mime_type(mime.clone()),
            None => contents,
        })
    }

    /// The `Resource` object for a session of `version`.
    pub fn to_value(&self, version: ProtocolVersion) -> Value {
        let mut map = Map::new();
        map.insert("uri".into(), Value::String(self.uri.clone()));
        self.meta.write(&mut map, version);
        let size = self
            .size
            .or_else(|| self.static_contents().map(|c| c.size()));
        if let Some(size) = size {
            map.insert("size".into(), Value::from(size));
        }
        Value::Object(map)
    }
}

/// A family of resources named by an RFC 6570 URI template, read by a callback that receives
/// the variables the URI matched with.
///
/// ```
/// use wymcp::Context;
/// use wymcp::resource::{ReadResource, ResourceContents, ResourceError, Variables};
/// use wymcp::ResourceTemplate;
///
/// struct Data;
/// impl ReadResource for Data {
///     async fn read(&self, uri: &str, vars: Variables, _ctx: Context)
///         -> Result<Vec<ResourceContents>, ResourceError>
///     {
///         let id = vars.get("id").unwrap_or_default();
///         Ok(vec![ResourceContents::text(uri, format!("Data for ID: {id}"))])
///     }
/// }
///
/// let template = ResourceTemplate::new("test://template/{id}/data", "data", Data)
///     .mime_type("text/plain");
/// let server = wymcp::Server::builder().resource_template(template).build().unwrap();
/// assert_eq!(server.resource_template_uris(), ["test://template/{id}/data"]);
/// ```
#[derive(Clone)]
#[must_use]
pub struct ResourceTemplate {
    pub(crate) template: String,
    pub(crate) meta: Meta,
    pub(crate) reader: Reader,
}

impl std::fmt::Debug for ResourceTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceTemplate")
            .field("template", &self.template)
            .field("meta", &self.meta)
            .finish_non_exhaustive()
    }
}

impl ResourceTemplate {
    /// A template (validated at [`build`](crate::ServerBuilder::build)) read by `reader`.
    pub fn new(
        uri_template: impl Into<String>,
        name: impl Into<String>,
        reader: impl ReadResource,
    ) -> Self {
        ResourceTemplate {
            template: uri_template.into(),
            meta: Meta::new(name.into()),
            reader: Arc::new(reader),
        }
    }

    metadata_setters!();

    /// The URI template, as declared.
    pub fn uri_template(&self) -> &str {
        &self.template
    }

    /// The `ResourceTemplate` object for a session of `version`.
    pub fn to_value(&self, version: ProtocolVersion) -> Value {
        let mut map = Map::new();
        map.insert("uriTemplate".into(), Value::String(self.template.clone()));
        self.meta.write(&mut map, version);
        Value::Object(map)
    }
}
