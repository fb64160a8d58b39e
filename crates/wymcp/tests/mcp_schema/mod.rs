//! Validation against the official MCP JSON Schemas, copied into `tests/fixtures/mcp-schema`
//! from `/work/shared/mcp-schema/<rev>/schema.json` so the tests read nothing outside the repo.
//!
//! Shared by the tests that check wire messages (a directory module, so not a test target).

#![allow(dead_code)]

use std::path::PathBuf;

use jsonschema::Validator;
use serde_json::Value;
use wymcp::{ProtocolVersion, Server};

/// The revisions whose official schema the fixtures hold.
pub(crate) const REVISIONS: [ProtocolVersion; 3] = [
    ProtocolVersion::V2025_03_26,
    ProtocolVersion::V2025_06_18,
    ProtocolVersion::V2025_11_25,
];

fn schema_file(version: ProtocolVersion) -> Value {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "tests",
        "fixtures",
        "mcp-schema",
        version.as_str(),
        "schema.json",
    ]
    .iter()
    .collect();
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

/// A validator for one definition of a revision's schema: the schema file itself, its root
/// `$ref` pointed at the definition (`definitions` in the draft-07 files, `$defs` in 2020-12).
pub(crate) fn validator(version: ProtocolVersion, definition: &str) -> Validator {
    let mut root = schema_file(version);
    let map = root.as_object_mut().expect("a schema file is an object");
    let section = if map.contains_key("$defs") {
        "$defs"
    } else {
        "definitions"
    };
    assert!(
        map.get(section)
            .and_then(|d| d.get(definition))
            .is_some_and(Value::is_object),
        "{version}: the schema has no {section}/{definition}"
    );
    map.insert(
        "$ref".into(),
        Value::String(format!("#/{section}/{definition}")),
    );
    jsonschema::validator_for(&root)
        .unwrap_or_else(|e| panic!("{version}: building {definition}: {e}"))
}

/// Every problem `value` has against `validator`, rendered.
pub(crate) fn problems(validator: &Validator, value: &Value) -> Vec<String> {
    validator
        .iter_errors(value)
        .map(|e| format!("{} at {:?}", e, e.instance_path().to_string()))
        .collect()
}

/// Asserts that every tool definition `server` serves to each revision validates against that
/// revision's `Tool`, and the whole `tools/list` result against its `ListToolsResult`.
pub(crate) fn assert_served_definitions_valid(server: &Server) {
    for version in REVISIONS {
        let tool = validator(version, "Tool");
        let list = validator(version, "ListToolsResult");
        let result = server.list_tools(version);
        let tools = result["tools"].as_array().expect("tools is an array");
        assert!(!tools.is_empty(), "help is always listed");
        for definition in tools {
            let found = problems(&tool, definition);
            assert!(
                found.is_empty(),
                "{version}: definition {definition} is not a valid Tool: {found:?}"
            );
        }
        let found = problems(&list, &result);
        assert!(
            found.is_empty(),
            "{version}: {result} is not a valid ListToolsResult: {found:?}"
        );
    }
}

/// Asserts that `value` is a valid `definition` of `version`'s schema.
pub(crate) fn assert_valid(version: ProtocolVersion, definition: &str, value: &Value) {
    let found = problems(&validator(version, definition), value);
    assert!(
        found.is_empty(),
        "{value} is not a valid {definition}: {found:?}"
    );
}
