//! What differs between the protocol eras on the wire, in one place: how a request is
//! framed (the session era's plain params, 2026-07-28's `_meta` envelope) and what a result
//! carries besides its payload (`resultType`, serverInfo, cache hints), which
//! [`settle`] asserts per era and strips, so the script compares payloads alone.

use serde_json::{Value, json};

use super::Path;
use super::fixture::{NAME, VERSION};

/// The session era's revision, which the session paths initialize at.
pub(crate) const SESSION_VERSION: &str = "2025-11-25";
/// The stateless era's revision.
pub(crate) const STATELESS_VERSION: &str = "2026-07-28";

const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// The capabilities a matrix client declares unless told otherwise: it answers sampling and
/// elicitation.
pub(crate) fn capabilities() -> Value {
    json!({"sampling": {}, "elicitation": {}})
}

/// What a request's `_meta` carries besides the envelope's version and client info.
#[derive(Clone, Default)]
pub(crate) struct Extras {
    /// `io.modelcontextprotocol/clientCapabilities` (`{}` when `null`).
    pub(crate) capabilities: Value,
    /// `progressToken`.
    pub(crate) progress: Option<Value>,
    /// `io.modelcontextprotocol/logLevel` (the stateless era's per-request level).
    pub(crate) log_level: Option<String>,
}

/// A JSON-RPC request of `method` on `path`: the stateless era puts the envelope and the log
/// level in `params._meta`; both eras the progress token.
pub(crate) fn request(
    path: Path,
    id: Value,
    method: &str,
    params: Value,
    extras: &Extras,
) -> Value {
    let mut params = match params {
        Value::Null => json!({}),
        params => params,
    };
    let mut meta = serde_json::Map::new();
    if path.stateless() {
        meta.insert(
            "io.modelcontextprotocol/protocolVersion".into(),
            json!(STATELESS_VERSION),
        );
        let capabilities = match &extras.capabilities {
            Value::Null => json!({}),
            declared => declared.clone(),
        };
        meta.insert(
            "io.modelcontextprotocol/clientCapabilities".into(),
            capabilities,
        );
        meta.insert(
            "io.modelcontextprotocol/clientInfo".into(),
            json!({"name": "matrix-client", "version": "0"}),
        );
        if let Some(level) = &extras.log_level {
            meta.insert("io.modelcontextprotocol/logLevel".into(), json!(level));
        }
    }
    if let Some(token) = &extras.progress {
        meta.insert("progressToken".into(), token.clone());
    }
    // Joined to a `_meta` the caller sent (a `traceparent`).
    match params.get_mut("_meta").and_then(Value::as_object_mut) {
        Some(sent) => sent.extend(meta),
        None if !meta.is_empty() => params["_meta"] = Value::Object(meta),
        None => {}
    }
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// The methods whose stateless results carry cache hints.
fn cached(method: &str) -> bool {
    matches!(
        method,
        "server/discover"
            | "tools/list"
            | "prompts/list"
            | "resources/list"
            | "resources/templates/list"
            | "resources/read"
    )
}

/// Asserts the era-specific parts of `method`'s `result` on `path` and answers the result
/// without them: at 2026-07-28 `resultType: "complete"`, `_meta` with exactly the server's
/// `{name, version}`, and (for the cached methods) the default hints `ttlMs: 0`,
/// `cacheScope: "private"`; in the session era none of these.
pub(crate) fn settle(path: Path, method: &str, result: &Value) -> Value {
    let mut result = result.clone();
    let Some(fields) = result.as_object_mut() else {
        panic!("{path:?} {method}: the result is not an object: {result}");
    };
    if !path.stateless() {
        for key in ["resultType", "ttlMs", "cacheScope", "_meta"] {
            assert!(
                !fields.contains_key(key),
                "{path:?} {method}: the session era has no {key}: {result}"
            );
        }
        return result;
    }
    let mut expected_meta = serde_json::Map::new();
    expected_meta.insert(
        SERVER_INFO.into(),
        json!({"name": NAME, "version": VERSION}),
    );
    let era = json!({
        "resultType": fields.remove("resultType"),
        "_meta": fields.remove("_meta"),
        "ttlMs": fields.remove("ttlMs"),
        "cacheScope": fields.remove("cacheScope"),
    });
    let hints = cached(method);
    assert_eq!(
        era,
        json!({
            "resultType": "complete",
            "_meta": expected_meta,
            "ttlMs": if hints { json!(0) } else { Value::Null },
            "cacheScope": if hints { json!("private") } else { Value::Null },
        }),
        "{path:?} {method}: the stateless era's own fields"
    );
    result
}
