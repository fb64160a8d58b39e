//! The server's side of the stateless era's results: its capabilities, the `server/discover`
//! result, and the shaping every result gets (`resultType`, `_meta` serverInfo, cache hints).

use serde_json::{Map, Value, json};

use crate::Server;
use crate::protocol::ProtocolVersion;
use crate::protocol::stateless::{CacheHints, SERVER_INFO_KEY, supported_versions};

/// The capabilities of the stateless era ([`Server::capabilities`] at 2026-07-28).
pub(crate) fn capabilities(server: &Server) -> &Value {
    // A server's capabilities never change once built: worked out on first use, then read
    // by every request's method check.
    server
        .features()
        .stateless_capabilities
        .get_or_init(|| server.capabilities(ProtocolVersion::V2026_07_28))
}

/// The `server/discover` result (without the shaping [`complete`] adds).
pub(crate) fn discover_result(server: &Server) -> Value {
    let mut result = Map::new();
    result.insert("supportedVersions".into(), json!(supported_versions()));
    result.insert("capabilities".into(), capabilities(server).clone());
    if let Some(instructions) = server.instructions() {
        result.insert("instructions".into(), json!(instructions));
    }
    Value::Object(result)
}

/// Shapes a result of the stateless era: `resultType: "complete"` unless set, the server's
/// `{name, version}` in `_meta`, and `method`'s cache hint when it has one.
pub(crate) fn complete(server: &Server, method: &str, hints: &CacheHints, result: Value) -> Value {
    let mut map = match result {
        Value::Object(map) => map,
        other => {
            let mut map = Map::new();
            map.insert("value".into(), other);
            map
        }
    };
    map.entry("resultType")
        .or_insert_with(|| Value::from("complete"));
    let info = server.info();
    let meta = map
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(meta) = meta.as_object_mut() {
        meta.insert(
            SERVER_INFO_KEY.into(),
            json!({ "name": info.name, "version": info.version }),
        );
    }
    // An `InputRequiredResult` is no answer to cache.
    let input_required = map.get("resultType").and_then(Value::as_str) == Some("input_required");
    if let Some(hint) = hints.get(method).filter(|_| !input_required) {
        map.insert("ttlMs".into(), json!(hint.ttl_ms));
        map.insert("cacheScope".into(), json!(hint.scope.as_str()));
    }
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::capabilities;
    use crate::Server;

    #[test]
    fn list_changed_is_declared_only_when_the_server_declares_it() {
        let plain = Server::builder().build().expect("builds");
        assert!(capabilities(&plain)["tools"].get("listChanged").is_none());
        let declared = Server::builder()
            .list_changed(true)
            .build()
            .expect("builds");
        assert_eq!(capabilities(&declared)["tools"]["listChanged"], true);
    }
}
