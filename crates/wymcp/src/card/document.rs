//! The Server Card document and the pieces of identity it shares with `server.json`.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::server::ServerInfo;

/// The media type the Server Card is served with.
pub const SERVER_CARD_MEDIA_TYPE: &str = "application/mcp-server-card+json";

/// The `$schema` of the Server Card documents generated here.
pub const SERVER_CARD_SCHEMA: &str =
    "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";

/// Where the server's source lives (`repository` in the card and in `server.json`).
///
/// ```
/// use wymcp::card::Repository;
///
/// let repo = Repository::github("https://github.com/example/notes").subfolder("server");
/// assert_eq!(repo.source, "github");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Repository {
    /// The repository's URL.
    pub url: String,
    /// The hosting service (`github`, `gitlab`, ...).
    pub source: String,
    /// The folder holding the server, in a monorepo.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subfolder: Option<String>,
    /// The hosting service's stable repository id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

impl Repository {
    /// A repository at `url` hosted on `source`.
    pub fn new(url: impl Into<String>, source: impl Into<String>) -> Self {
        Repository {
            url: url.into(),
            source: source.into(),
            subfolder: None,
            id: None,
        }
    }

    /// A GitHub repository.
    pub fn github(url: impl Into<String>) -> Self {
        Self::new(url, "github")
    }

    /// The folder holding the server.
    #[must_use]
    pub fn subfolder(mut self, folder: impl Into<String>) -> Self {
        self.subfolder = Some(folder.into());
        self
    }

    /// The hosting service's repository id.
    #[must_use]
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }
}

/// One URL a client connects to (`remotes` in the card and in `server.json`).
///
/// ```
/// use wymcp::card::Remote;
///
/// let remote = Remote::streamable_http("https://notes.example.com/mcp")
///     .supported_protocol_versions(["2026-07-28", "2025-11-25"])
///     .authentication(true, ["bearer"]);
/// assert_eq!(remote.kind, "streamable-http");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Remote {
    /// The transport: `streamable-http` or `sse`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The endpoint's URL.
    pub url: String,
    /// The MCP revisions this endpoint serves (the card only; `server.json` leaves it out).
    #[serde(
        rename = "supportedProtocolVersions",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub supported_protocol_versions: Vec<String>,
    /// HTTP headers a client sends (registry `KeyValueInput` objects: `name`,
    /// `description`, `isRequired`, `isSecret`, ...).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<Value>,
    /// Whether authentication is required, and its schemes (the card only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authentication: Option<Value>,
}

impl Remote {
    /// A Streamable HTTP endpoint.
    pub fn streamable_http(url: impl Into<String>) -> Self {
        Remote {
            kind: "streamable-http".into(),
            url: url.into(),
            supported_protocol_versions: Vec::new(),
            headers: Vec::new(),
            authentication: None,
        }
    }

    /// The MCP revisions the endpoint serves.
    #[must_use]
    pub fn supported_protocol_versions<I, S>(mut self, versions: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.supported_protocol_versions = versions.into_iter().map(Into::into).collect();
        self
    }

    /// A header the client sends (a registry `KeyValueInput` object).
    #[must_use]
    pub fn header(mut self, header: Value) -> Self {
        self.headers.push(header);
        self
    }

    /// Whether authentication is required, and its schemes (`bearer`, `oauth2`).
    #[must_use]
    pub fn authentication<I, S>(mut self, required: bool, schemes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let schemes: Vec<Value> = schemes
            .into_iter()
            .map(|s| Value::String(s.into()))
            .collect();
        self.authentication = Some(serde_json::json!({"required": required, "schemes": schemes}));
        self
    }
}

/// The identity fields the card and `server.json` share, in their wire names.
pub(crate) fn identity(info: &ServerInfo, schema: &str) -> Map<String, Value> {
    let mut doc = Map::new();
    doc.insert("$schema".into(), schema.into());
    doc.insert("name".into(), info.name.clone().into());
    doc.insert("version".into(), info.version.clone().into());
    if let Some(description) = &info.description {
        doc.insert("description".into(), description.clone().into());
    }
    if let Some(title) = &info.title {
        doc.insert("title".into(), title.clone().into());
    }
    if let Some(url) = &info.website_url {
        doc.insert("websiteUrl".into(), url.clone().into());
    }
    if let Some(repository) = &info.repository {
        doc.insert("repository".into(), to_value(repository));
    }
    if !info.icons.is_empty() {
        doc.insert("icons".into(), Value::Array(info.icons.clone()));
    }
    doc
}

/// The Server Card of `info`.
pub(crate) fn server_card(info: &ServerInfo) -> Value {
    let mut doc = identity(info, SERVER_CARD_SCHEMA);
    if !info.remotes.is_empty() {
        let remotes = info.remotes.iter().map(to_value).collect();
        doc.insert("remotes".into(), Value::Array(remotes));
    }
    Value::Object(doc)
}

pub(crate) fn to_value(value: &impl Serialize) -> Value {
    // Plain structs of strings, vectors and JSON values: serializing them cannot fail.
    serde_json::to_value(value).unwrap_or(Value::Null)
}
