//! A stateless `tools/call` result written straight from the typed result: the bytes
//! [`results::complete`](super::results::complete) would give the result's `Value`, without
//! building that tree (`_meta` with the server's `{name, version}`, `resultType`, then the
//! result's own fields, in the sorted order a `Value` map writes them). The `_meta` is the same
//! for every answer of a server: written once ([`meta`]), copied in as it is.

use std::sync::Arc;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;

use crate::ServerInfo;
use crate::dispatch::{CallToolResult, WireResult};
use crate::protocol::ProtocolVersion;
use crate::protocol::stateless::SERVER_INFO_KEY;

/// A `tools/call` result of the stateless era (no cache hint: `tools/call` has none).
pub(crate) struct StatelessCall<'a> {
    pub(crate) result: &'a CallToolResult,
    /// The server's `_meta` ([`meta`]).
    pub(crate) meta: &'a RawValue,
}

/// The `_meta` of every stateless answer of the server `info` names, as JSON text.
pub(crate) fn meta(info: &ServerInfo) -> Arc<RawValue> {
    // Writing strings into a map cannot fail; were it to, `_meta` would be `null`.
    serde_json::value::to_raw_value(&Meta(info))
        .unwrap_or_else(|_| RawValue::NULL.to_owned())
        .into()
}

impl Serialize for StatelessCall<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let structured = self.result.structured.as_ref();
        let mut map = serializer.serialize_map(Some(4 + usize::from(structured.is_some())))?;
        map.serialize_entry("_meta", self.meta)?;
        let result = WireResult {
            result: self.result,
            version: ProtocolVersion::V2026_07_28,
        };
        map.serialize_entry("content", &result.content())?;
        map.serialize_entry("isError", &self.result.is_error)?;
        map.serialize_entry("resultType", "complete")?;
        if let Some(structured) = structured {
            map.serialize_entry("structuredContent", structured)?;
        }
        map.end()
    }
}

/// `{"io.modelcontextprotocol/serverInfo": {"name": …, "version": …}}`.
struct Meta<'a>(&'a ServerInfo);

impl Serialize for Meta<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry(SERVER_INFO_KEY, &Info(self.0))?;
        map.end()
    }
}

struct Info<'a>(&'a ServerInfo);

impl Serialize for Info<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("name", &self.0.name)?;
        map.serialize_entry("version", &self.0.version)?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::StatelessCall;
    use crate::protocol::ProtocolVersion;
    use crate::protocol::stateless::CacheHints;
    use crate::serve::stateless::results::complete;
    use crate::tool::CallToolResult;
    use crate::tool::{Content, ErrorKind};
    use crate::{Server, ServerInfo};

    fn result(structured: Option<Value>, is_error: bool) -> CallToolResult {
        CallToolResult {
            content: vec![
                Content::text("hi"),
                Content::image("aGk=", "image/png"),
                Content::resource_link("file:///a", "a"),
            ],
            is_error,
            structured,
            error_kind: is_error.then_some(ErrorKind::Tool),
            scopes_needed: None,
        }
    }

    #[test]
    fn the_bytes_equal_those_of_the_shaped_value() {
        let server = Server::builder()
            .name("s")
            .version("1.2.3")
            .build()
            .expect("builds");
        let info: &ServerInfo = server.info();
        for (structured, is_error) in [
            (None, false),
            (Some(json!({"b": 1, "a": [2]})), false),
            (None, true),
        ] {
            let result = result(structured, is_error);
            let direct = serde_json::to_string(&StatelessCall {
                result: &result,
                meta: &super::meta(info),
            })
            .expect("serializes");
            let value = result.clone().into_value(ProtocolVersion::V2026_07_28);
            let shaped = complete(&server, "tools/call", &CacheHints::default(), value);
            assert_eq!(direct, shaped.to_string());
        }
    }
}
