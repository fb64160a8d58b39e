//! The OpenAPI loader (`wymcp-openapi`): arbitrary text, and documents generated from
//! OpenAPI's shape (paths, operations, parameters, bodies, `$ref`s to components that may
//! loop, dangle, point elsewhere or nest deep). Loading never panics and stays within its
//! bounds; a loaded document's tools register into a server whose `build()` answers (a
//! server or a refusal), and each tool's input schema is a JSON object.
#![no_main]

use arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value, json};
use wymcp::Server;
use wymcp_openapi::OpenApi;

const MAX_SCHEMA_BYTES: usize = 16 * 1024;

fn name(u: &mut Unstructured) -> Result<String> {
    Ok((*u.choose(&[
        "a", "b", "Item", "x-y", "list", "", "a/b", "~0", "é", "{id}",
    ])?)
    .to_owned())
}

fn reference(u: &mut Unstructured) -> Result<String> {
    Ok(match u.int_in_range(0..=5u8)? {
        0..=2 => format!("#/components/schemas/{}", name(u)?),
        3 => format!("#/components/parameters/{}", name(u)?),
        4 => "https://example.com/other.json#/x".to_owned(),
        _ => wymcp_fuzz::json::string(u)?,
    })
}

fn schema(u: &mut Unstructured, depth: u8) -> Result<Value> {
    if depth == 0 || u.ratio(1, 4)? {
        return Ok(match u.int_in_range(0..=5u8)? {
            0 => json!({"$ref": reference(u)?}),
            1 => json!({"type": "string", "enum": ["a", "b"]}),
            2 => json!({"type": "integer", "minimum": 0}),
            3 => json!({"type": *u.choose(&["number", "boolean", "null", "object", "array"])?}),
            4 => wymcp_fuzz::json::value(u, 2)?,
            _ => json!({}),
        });
    }
    Ok(match u.int_in_range(0..=4u8)? {
        0 => {
            let mut properties = Map::new();
            for _ in 0..u.int_in_range(0..=3u8)? {
                properties.insert(name(u)?, schema(u, depth - 1)?);
            }
            json!({"type": "object", "properties": properties, "required": [name(u)?]})
        }
        1 => json!({"type": "array", "items": schema(u, depth - 1)?}),
        2 => {
            json!({*u.choose(&["allOf", "anyOf", "oneOf"])?: [schema(u, depth - 1)?, schema(u, depth - 1)?]})
        }
        3 => json!({"$ref": reference(u)?, "description": "with a sibling"}),
        _ => json!({"not": schema(u, depth - 1)?}),
    })
}

fn operation(u: &mut Unstructured) -> Result<Value> {
    let mut op = Map::new();
    if u.arbitrary()? {
        op.insert("operationId".into(), json!(name(u)?));
    }
    if u.arbitrary()? {
        op.insert("tags".into(), json!([name(u)?]));
    }
    let mut parameters = Vec::new();
    for _ in 0..u.int_in_range(0..=3u8)? {
        parameters.push(if u.ratio(1, 5)? {
            json!({"$ref": reference(u)?})
        } else {
            json!({"name": name(u)?, "in": *u.choose(&["path", "query", "header", "cookie", "body"])?,
                   "required": u.arbitrary::<bool>()?, "schema": schema(u, 2)?})
        });
    }
    op.insert("parameters".into(), Value::Array(parameters));
    if u.arbitrary()? {
        op.insert(
            "requestBody".into(),
            json!({"content": {*u.choose(&["application/json", "text/plain", "application/x-www-form-urlencoded"])?:
                {"schema": schema(u, 3)?}}}),
        );
    }
    Ok(Value::Object(op))
}

fn document(u: &mut Unstructured) -> Result<String> {
    let mut paths = Map::new();
    for _ in 0..u.int_in_range(0..=6u8)? {
        let mut item = Map::new();
        for _ in 0..u.int_in_range(1..=3u8)? {
            let method = *u.choose(&[
                "get",
                "post",
                "put",
                "delete",
                "patch",
                "trace",
                "parameters",
            ])?;
            item.insert(method.into(), operation(u)?);
        }
        paths.insert(format!("/{}", name(u)?), Value::Object(item));
    }
    let mut schemas = Map::new();
    for _ in 0..u.int_in_range(0..=4u8)? {
        schemas.insert(name(u)?, schema(u, 3)?);
    }
    let version = *u.choose(&["3.0.3", "3.1.0", "2.0", "3.1", "4.0.0"])?;
    let doc = json!({"openapi": version, "info": {"title": "t", "version": "1"},
        "servers": [{"url": "http://127.0.0.1:9"}], "paths": paths,
        "components": {"schemas": schemas, "parameters": {"a": {"name": "a", "in": "query"}}}});
    Ok(doc.to_string())
}

fuzz_target!(|bytes: &[u8]| {
    let mut u = Unstructured::new(bytes);
    let text = if u.ratio(1, 4).unwrap_or(false) {
        String::from_utf8_lossy(u.take_rest()).into_owned()
    } else {
        let Ok(text) = document(&mut u) else { return };
        text
    };
    let loaded = OpenApi::builder()
        .base_url("http://127.0.0.1:9")
        .max_operations(32)
        .max_ref_depth(8)
        .max_schema_bytes(MAX_SCHEMA_BYTES)
        .load_str(&text);
    let Ok(api) = loaded else { return };
    let names: Vec<String> = api.tool_names().iter().map(|n| (*n).to_owned()).collect();
    for name in &names {
        assert!(!name.is_empty(), "a tool without a name from {text}");
    }
    if let Ok(server) = api.register(Server::builder()).build() {
        let listed = server.list_tools(wymcp::ProtocolVersion::V2025_11_25);
        for tool in listed["tools"].as_array().into_iter().flatten() {
            let schema = &tool["inputSchema"];
            assert!(
                schema.is_object(),
                "an input schema that is not an object: {tool}"
            );
            assert!(
                schema.to_string().len() <= 64 * MAX_SCHEMA_BYTES,
                "a schema past its bound: {} bytes",
                schema.to_string().len()
            );
        }
    }
});
