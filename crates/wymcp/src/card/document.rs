//! The Server Card document and the pieces of identity it shares with `server.json`.

use serde::Serialize;
use serde_json::{Map, Value};

use super::info::ServerInfo;

/// The media type the Server Card is served with.
pub const SERVER_CARD_MEDIA_TYPE: &str = "application/mcp-server-card+json";

/// The `$schema` of the Server Card documents generated here.
pub const SERVER_CARD_SCHEMA: &str =
    "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";

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
