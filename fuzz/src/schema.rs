//! The official MCP JSON Schemas (the repository's copy under
//! `crates/wymcp/tests/fixtures/mcp-schema/`, the same files as the specification's
//! `schema/<revision>/schema.json`), compiled once per process.

use std::sync::OnceLock;

use jsonschema::Validator;
use serde_json::Value;

/// The revisions, oldest first.
pub const REVISIONS: [&str; 4] = ["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"];

fn compile(revision: &str, definition: &str) -> Validator {
    let path = format!(
        "{}/../crates/wymcp/tests/fixtures/mcp-schema/{revision}/schema.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    let mut root: Value = serde_json::from_str(&text).expect("a schema file is JSON");
    let map = root.as_object_mut().expect("a schema file is an object");
    let section = if map.contains_key("$defs") { "$defs" } else { "definitions" };
    map.insert("$ref".into(), Value::String(format!("#/{section}/{definition}")));
    jsonschema::validator_for(&root).unwrap_or_else(|e| panic!("{revision} {definition}: {e}"))
}

fn validators() -> &'static [(Validator, Validator); 4] {
    static ALL: OnceLock<[(Validator, Validator); 4]> = OnceLock::new();
    ALL.get_or_init(|| {
        REVISIONS.map(|r| {
            let error = if r < "2025-11-25" { "JSONRPCError" } else { "JSONRPCErrorResponse" };
            (compile(r, "JSONRPCMessage"), compile(r, error))
        })
    })
}

/// The index in [`REVISIONS`] of `revision`, or the latest session-era one when unknown.
pub fn revision_index(revision: &str) -> usize {
    REVISIONS.iter().position(|r| *r == revision).unwrap_or(2)
}

/// Checks one message the server wrote against `revision`'s `JSONRPCMessage`.
///
/// One divergence is known and allowed: JSON-RPC 2.0 answers a message whose id cannot be
/// read with `"id": null`, which no MCP schema admits (their `RequestId` is a string or an
/// integer); such an error is checked as the newest revision's `JSONRPCErrorResponse` without
/// its `id`, where the id is optional.
pub fn check_message(revision: usize, message: &Value) -> Result<(), String> {
    let (any, _) = &validators()[revision];
    if any.is_valid(message) {
        return Ok(());
    }
    if message.get("id") == Some(&Value::Null) && message.get("error").is_some() {
        let mut without = message.clone();
        if let Some(map) = without.as_object_mut() {
            map.remove("id");
        }
        let (_, error) = &validators()[3];
        if error.is_valid(&without) {
            return Ok(());
        }
    }
    let problems: Vec<String> = any
        .iter_errors(message)
        .take(5)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    Err(format!(
        "{} JSONRPCMessage: {problems:?}\n{message}",
        REVISIONS[revision]
    ))
}

/// Checks a body the server wrote: one message, or (2025-03-26) a batch of them.
pub fn check_body(revision: usize, body: &Value) -> Result<(), String> {
    match body {
        Value::Array(items) if !items.is_empty() => {
            items.iter().try_for_each(|m| check_message(revision, m))
        }
        _ => check_message(revision, body),
    }
}
