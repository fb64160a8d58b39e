//! Action schemas derived from Rust types: the schema schemars generates for a payload type,
//! reshaped into an action's `properties`, `required` and `defaults` (typed actions,
//! `#[wymcp::tool]` methods), with the formats and `null`s JSON Schema clients cannot use
//! taken out.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// `T`'s schema as schemars generates it, every subschema inlined, no `$schema`.
pub(crate) fn root_schema<T: JsonSchema>() -> Value {
    SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// The keys of a payload's root schema that an action expresses (or that mean nothing to it).
const ROOT_KEYS: [&str; 6] = [
    "type",
    "properties",
    "required",
    "additionalProperties",
    "title",
    "description",
];

/// Turns a payload's root schema into the action's `properties`, `required` and `defaults`.
/// A root the action cannot serve becomes a `properties` that is not an object, so `build()`
/// refuses it with a message naming the variant and what is wrong.
pub(crate) fn action_schema(
    mut action: Map<String, Value>,
    root: Value,
    owner: &str,
    type_name: &str,
) -> Map<String, Value> {
    match object_root(root).and_then(payload) {
        Ok(payload) => {
            action.insert("properties".into(), Value::Object(payload.properties));
            if !payload.required.is_empty() {
                action.insert("required".into(), Value::Array(payload.required));
            }
            if !payload.defaults.is_empty() {
                action.insert("defaults".into(), Value::Object(payload.defaults));
            }
        }
        Err(why) => {
            let refused = format!("(typed action: the data of {owner} is `{type_name}`, {why})");
            action.insert("properties".into(), Value::String(refused));
        }
    }
    action
}

/// The root of a payload's schema when an action's data can express it: an object schema
/// of named fields, no extra keys, nothing at its root but [`ROOT_KEYS`]. `Err`: why not.
fn object_root(root: Value) -> Result<Map<String, Value>, String> {
    let Value::Object(mut root) = root else {
        return Err(
            "whose schema is not an object schema; carry a struct with named fields".into(),
        );
    };
    if root
        .get("$defs")
        .is_some_and(|d| d.as_object().is_some_and(Map::is_empty))
    {
        root.remove("$defs");
    }
    match root.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        _ => return Err("which is not a struct with named fields; carry one".into()),
    }
    match root.get("additionalProperties") {
        None | Some(Value::Bool(false)) => {}
        Some(_) => {
            return Err("which admits extra keys (a flattened map?), but an action's data admits its properties only".into());
        }
    }
    let mut unsupported: Vec<&str> = root
        .keys()
        .map(String::as_str)
        .filter(|k| !ROOT_KEYS.contains(k))
        .collect();
    if !unsupported.is_empty() {
        unsupported.sort_unstable();
        return Err(format!(
            "whose schema uses {} at its root, which an action's data cannot express (a recursive type, a flattened enum?)",
            unsupported.join(", ")
        ));
    }
    Ok(root)
}

/// An action's data as a payload's root declares it.
struct Payload {
    properties: Map<String, Value>,
    /// The required names that have no default.
    required: Vec<Value>,
    defaults: Map<String, Value>,
}

/// The root's properties tidied (no `null` for an optional one, numeric formats as bounds,
/// defaults moved out); `Err` when a property keeps a `$ref`.
fn payload(mut root: Map<String, Value>) -> Result<Payload, String> {
    let mut properties = match root.remove("properties") {
        Some(Value::Object(p)) => p,
        _ => Map::new(),
    };
    let mut defaults = Map::new();
    let root_required = names(root.get("required"));
    for (name, schema) in &mut properties {
        if !root_required.contains(name) {
            denull(schema);
        }
        if let Value::Object(schema) = schema {
            if let Some(default) = schema.remove("default") {
                if !default.is_null() {
                    defaults.insert(name.clone(), default);
                }
            }
        }
        let mut refs = false;
        tidy(schema, &mut refs);
        if refs {
            return Err(format!(
                "whose property {name:?} keeps a $ref after inlining (a recursive type?); clients cannot follow refs"
            ));
        }
    }
    let required: Vec<Value> = match root.remove("required") {
        Some(Value::Array(r)) => r
            .into_iter()
            .filter(|n| n.as_str().is_some_and(|n| !defaults.contains_key(n)))
            .collect(),
        _ => Vec::new(),
    };
    Ok(Payload {
        properties,
        required,
        defaults,
    })
}

/// The keywords whose value is a schema.
const SCHEMA_KEYWORDS: [&str; 11] = [
    "additionalProperties",
    "items",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
];
/// The keywords whose value is a list of schemas.
const SCHEMA_LIST_KEYWORDS: [&str; 4] = ["anyOf", "oneOf", "allOf", "prefixItems"];
/// The keywords whose value is a map of schemas.
const SCHEMA_MAP_KEYWORDS: [&str; 4] = [
    "properties",
    "patternProperties",
    "dependentSchemas",
    "$defs",
];

/// What becomes of schemars' numeric formats (`uint32`, `int64`, `double`, ...): they are not
/// JSON Schema formats, so the value gate would refuse them as unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Widths {
    /// The format becomes the bounds it stands for: an input's value gate refuses a number
    /// the Rust type cannot hold, and the refusal names the range.
    AsBounds,
    /// The format and the bounds that only restate the type's width go: an output's values
    /// come from the Rust type itself, so `"maximum": 4294967295` tells a reader nothing and
    /// costs every `tools/list` its bytes. Bounds the author wrote (`range(...)`) stay.
    Dropped,
}

/// Rewrites schemars' integer and float formats (not JSON Schema formats, so the value gate
/// would refuse them as unknown) into the bounds they stand for, at every depth; reports a
/// remaining `$ref`.
pub(crate) fn tidy(schema: &mut Value, refs: &mut bool) {
    tidy_with(schema, refs, Widths::AsBounds);
}

/// [`tidy`] for an output schema: the numeric formats go with the bounds that restate the
/// type's width ([`Widths::Dropped`]).
pub(crate) fn tidy_output(schema: &mut Value, refs: &mut bool) {
    tidy_with(schema, refs, Widths::Dropped);
}

fn tidy_with(schema: &mut Value, refs: &mut bool, widths: Widths) {
    let Value::Object(map) = schema else {
        return;
    };
    if map.contains_key("$ref") {
        *refs = true;
    }
    let required = names(map.get("required"));
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        for (name, sub) in properties.iter_mut() {
            if !required.contains(name) {
                denull(sub);
            }
        }
    }
    if let Some(Value::String(format)) = map.get("format") {
        if let Some(bounds) = numeric_format(format) {
            map.remove("format");
            match (bounds, widths) {
                (Some((min, max)), Widths::AsBounds) => {
                    map.entry("minimum").or_insert(min);
                    map.entry("maximum").or_insert(max);
                }
                (Some((min, max)), Widths::Dropped) => {
                    for (key, width) in [("minimum", min), ("maximum", max)] {
                        if map.get(key) == Some(&width) {
                            map.remove(key);
                        }
                    }
                }
                (None, _) => {}
            }
        }
    }
    for key in SCHEMA_KEYWORDS {
        if let Some(sub) = map.get_mut(key) {
            tidy_with(sub, refs, widths);
        }
    }
    for key in SCHEMA_LIST_KEYWORDS {
        if let Some(Value::Array(list)) = map.get_mut(key) {
            list.iter_mut().for_each(|s| tidy_with(s, refs, widths));
        }
    }
    for key in SCHEMA_MAP_KEYWORDS {
        if let Some(Value::Object(subs)) = map.get_mut(key) {
            subs.values_mut().for_each(|s| tidy_with(s, refs, widths));
        }
    }
}

/// The names of a `required` list.
fn names(required: Option<&Value>) -> Vec<String> {
    required
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// An optional property is omitted, never `null`: removes the `null` schemars adds for an
/// `Option` (`"type": [T, "null"]`, a `null` in `enum`, `"anyOf": [T, {"type": "null"}]`), so a
/// property that is present always carries a value (`required_one_of` counts what is present).
pub(crate) fn denull(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    let is_null = |v: &Value| v.get("type").and_then(Value::as_str) == Some("null");
    if let Some(Value::Array(any)) = map.get("anyOf") {
        if let [a, b] = any.as_slice() {
            let other = match (is_null(a), is_null(b)) {
                (true, false) => Some(b.clone()),
                (false, true) => Some(a.clone()),
                _ => None,
            };
            if let Some(Value::Object(mut other)) = other {
                map.remove("anyOf");
                for (k, v) in std::mem::take(map) {
                    other.entry(k).or_insert(v);
                }
                *map = other;
            }
        }
    }
    if let Some(Value::Array(types)) = map.get_mut("type") {
        if types.len() > 1 {
            types.retain(|t| t != "null");
            if let [single] = types.as_slice() {
                let single = single.clone();
                map.insert("type".into(), single);
            }
        }
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        if values.len() > 1 {
            values.retain(|v| !v.is_null());
        }
    }
}

/// For a schemars numeric format: `Some(bounds)` (the bounds when JSON holds them exactly).
fn numeric_format(format: &str) -> Option<Option<(Value, Value)>> {
    let signed = |min: i64, max: i64| Some(Some((Value::from(min), Value::from(max))));
    let unsigned = |max: u64| Some(Some((Value::from(0u64), Value::from(max))));
    match format {
        "int8" => signed(i8::MIN.into(), i8::MAX.into()),
        "int16" => signed(i16::MIN.into(), i16::MAX.into()),
        "int32" => signed(i32::MIN.into(), i32::MAX.into()),
        "int64" => signed(i64::MIN, i64::MAX),
        "int" => signed(isize::MIN as i64, isize::MAX as i64),
        "uint8" => unsigned(u8::MAX.into()),
        "uint16" => unsigned(u16::MAX.into()),
        "uint32" => unsigned(u32::MAX.into()),
        "uint64" => unsigned(u64::MAX),
        "uint" => unsigned(usize::MAX as u64),
        "int128" | "uint128" | "float" | "double" => Some(None),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_output_schema_keeps_the_authors_bounds_but_not_the_types_width() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "count": {"type": "integer", "format": "uint32", "minimum": 0},
                "id": {"type": "integer", "format": "int64"},
                "priority": {"type": "integer", "format": "uint8", "minimum": 1, "maximum": 255},
                "score": {"type": "number", "format": "double"},
                "items": {"type": "array", "items": {"type": "integer", "format": "int32", "maximum": 9}}
            }
        });
        let mut refs = false;
        tidy_output(&mut schema, &mut refs);
        assert!(!refs);
        assert_eq!(
            schema["properties"],
            json!({
                "count": {"type": "integer"},
                "id": {"type": "integer"},
                "priority": {"type": "integer", "minimum": 1},
                "score": {"type": "number"},
                "items": {"type": "array", "items": {"type": "integer", "maximum": 9}}
            })
        );
    }

    #[test]
    fn a_root_that_is_not_an_object_schema_is_refused_through_properties() {
        let action = action_schema(Map::new(), json!({"type": "string"}), "Create", "String");
        assert!(action["properties"].is_string());
    }

    #[test]
    fn numeric_formats_become_bounds_and_defaults_move_out() {
        let root = json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255},
                "p": {"type": "integer", "format": "int32", "default": 3},
                "xs": {"type": "array", "items": {"type": "number", "format": "double"}}
            },
            "required": ["n"]
        });
        let action = action_schema(Map::new(), root, "V", "T");
        assert_eq!(
            Value::Object(action),
            json!({
                "properties": {
                    "n": {"type": "integer", "minimum": 0, "maximum": 255},
                    "p": {"type": "integer", "minimum": i32::MIN, "maximum": i32::MAX},
                    "xs": {"type": "array", "items": {"type": "number"}}
                },
                "required": ["n"],
                "defaults": {"p": 3}
            })
        );
    }
}
