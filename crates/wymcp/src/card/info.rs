//! Who the server says it is: [`ServerInfo`] (in `initialize`, the Server Card and
//! `server.json`), with where its source lives ([`Repository`]) and the URLs clients connect to
//! ([`Remote`]).

use serde::Serialize;
use serde_json::{Map, Value};

use crate::protocol::ProtocolVersion;

/// Who the server says it is in `initialize` (`serverInfo`), verbatim.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServerInfo {
    /// The programmatic name.
    pub name: String,
    /// The version.
    pub version: String,
    /// A display title (2025-06-18 and later).
    pub title: Option<String>,
    /// A description (2025-11-25 and later).
    pub description: Option<String>,
    /// A website (2025-11-25 and later).
    pub website_url: Option<String>,
    /// Icons, as MCP `Icon` objects (2025-11-25 and later).
    pub icons: Vec<Value>,
    /// Where the source lives (the Server Card and `server.json` only).
    pub repository: Option<Repository>,
    /// The URLs clients connect to (the Server Card and `server.json` only).
    pub remotes: Vec<Remote>,
}

impl ServerInfo {
    /// The `serverInfo` object for a session of `version`: fields the revision lacks are left
    /// out.
    pub fn to_value(&self, version: ProtocolVersion) -> Value {
        let mut info = Map::new();
        info.insert("name".into(), Value::String(self.name.clone()));
        info.insert("version".into(), Value::String(self.version.clone()));
        if version.supports_tool_title() {
            if let Some(title) = &self.title {
                info.insert("title".into(), Value::String(title.clone()));
            }
        }
        if version.supports_icons() {
            if let Some(description) = &self.description {
                info.insert("description".into(), Value::String(description.clone()));
            }
            if let Some(url) = &self.website_url {
                info.insert("websiteUrl".into(), Value::String(url.clone()));
            }
            if !self.icons.is_empty() {
                info.insert("icons".into(), Value::Array(self.icons.clone()));
            }
        }
        Value::Object(info)
    }
}

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
