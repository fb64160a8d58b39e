//! The unknown-key gate's reading of a schema: which objects are closed, which keys they admit.
//!
//! # The rule
//!
//! The gate reads `data` against an action's `properties` at every depth, following exactly
//! these keywords: `properties`, `items` (a single schema), `prefixItems`, and
//! `additionalProperties` when it is a schema. Subtrees reached only through any other keyword
//! (`anyOf`, `$ref`, `patternProperties`, ...) are free-form for the gate; the value gate still
//! checks them.
//!
//! An object schema is **closed** (refuses a key outside its property names) when it declares
//! `properties` and writes `additionalProperties` as absent or `false`, or when it declares no
//! `properties` but writes `additionalProperties: false` (it admits no key at all). `data`
//! itself is always closed. `additionalProperties: true` opens an object; an
//! `additionalProperties` schema admits any extra key and closes its value by that schema; any
//! other object schema without `properties` is free-form.
//!
//! The gate reads keys, never values, and [`close_properties`] publishes the very same closure
//! as `"additionalProperties": false`, so the schema a caller reads states what the gate enforces.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::bound::{self, MAX_ITEMS};
use crate::pointer::{self, Step};

/// The name listed in `allowed` where an `additionalProperties` schema admits any string key.
pub const ANY_STRING_KEY: &str = "<any string key>";

/// What the unknown-key gate found: a bounded report of the keys outside a closed object.
#[derive(Debug, Clone, PartialEq)]
pub struct UnknownKeys {
    /// The first [`MAX_ITEMS`] unknown keys as data paths (JSON Pointers) in sort order, bounded.
    pub listed: Vec<String>,
    /// How many unknown keys there are in all.
    pub count: usize,
    /// For each object holding one of the listed keys: its data path → its admitted names.
    pub allowed: BTreeMap<String, Vec<String>>,
}

/// Checks `data` against `properties` (closed at the root) and reports every unknown key, or
/// `None` when every key is known.
///
/// ```
/// use serde_json::json;
/// use wymcp_core::keyset;
///
/// let props = json!({"zip": {"type": "string"}});
/// let data = json!({"zip": "1", "zpi": "2"});
/// let report = keyset::check(props.as_object().unwrap(), data.as_object().unwrap()).unwrap();
/// assert_eq!(report.listed, vec!["/zpi"]);
/// assert_eq!(report.allowed[""], vec!["zip"]);
/// ```
pub fn check(properties: &Map<String, Value>, data: &Map<String, Value>) -> Option<UnknownKeys> {
    let mut found = Vec::new();
    walk_object(Some(properties), None, data, &mut Vec::new(), &mut found);
    report(found)
}

/// Checks a whole object schema (a plain tool's input schema) against `arguments`: the root is
/// classified like any nested object schema.
pub fn check_schema(schema: &Value, arguments: &Map<String, Value>) -> Option<UnknownKeys> {
    let mut found = Vec::new();
    walk_object_schema(schema, arguments, &mut Vec::new(), &mut found);
    report(found)
}

/// One unknown key: the holder's data path, the holder's schema, and the key.
struct Found<'s> {
    holder: String,
    admitted: Admitted<'s>,
    key: String,
}

#[derive(Clone, Copy)]
struct Admitted<'s> {
    properties: Option<&'s Map<String, Value>>,
    any_string_key: bool,
}

fn report(found: Vec<Found<'_>>) -> Option<UnknownKeys> {
    if found.is_empty() {
        return None;
    }
    let count = found.len();
    let mut paths: Vec<(String, usize)> = found
        .iter()
        .enumerate()
        .map(|(i, f)| (pointer::push(&f.holder, &f.key), i))
        .collect();
    paths.sort();
    let mut allowed = BTreeMap::new();
    let mut listed = Vec::with_capacity(MAX_ITEMS);
    for (path, i) in paths.into_iter().take(MAX_ITEMS) {
        listed.push(bound::echo(&path));
        let f = &found[i];
        allowed
            .entry(bound::echo(&f.holder))
            .or_insert_with(|| admitted_names(f.admitted));
    }
    Some(UnknownKeys {
        listed,
        count,
        allowed,
    })
}

fn admitted_names(admitted: Admitted<'_>) -> Vec<String> {
    let mut names: Vec<String> = admitted
        .properties
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    if admitted.any_string_key {
        names.push(ANY_STRING_KEY.to_owned());
    }
    names.sort();
    names
}

/// Walks an object value against a schema given by its parts. `steps` is the path to the
/// value, rendered only for an unknown key (a passing call renders no path).
fn walk_object<'s, 'v>(
    properties: Option<&'s Map<String, Value>>,
    additional: Option<&'s Value>,
    value: &'v Map<String, Value>,
    steps: &mut Vec<Step<'v>>,
    found: &mut Vec<Found<'s>>,
) {
    let closed = match additional {
        None | Some(Value::Bool(false)) => properties.is_some() || additional.is_some(),
        _ => false,
    };
    let extra_schema = additional.filter(|a| a.is_object());
    for (key, item) in value {
        if let Some(schema) = properties.and_then(|p| p.get(key)).or(extra_schema) {
            steps.push(Step::Key(key));
            walk_value(schema, item, steps, found);
            steps.pop();
        } else if closed {
            found.push(Found {
                holder: pointer::render(steps),
                admitted: Admitted {
                    properties,
                    any_string_key: matches!(
                        additional,
                        Some(Value::Object(_) | Value::Bool(true))
                    ),
                },
                key: key.clone(),
            });
        }
    }
}

fn walk_object_schema<'s, 'v>(
    schema: &'s Value,
    value: &'v Map<String, Value>,
    steps: &mut Vec<Step<'v>>,
    found: &mut Vec<Found<'s>>,
) {
    let Some(schema) = schema.as_object() else {
        return;
    };
    let properties = schema.get("properties").and_then(Value::as_object);
    let additional = schema.get("additionalProperties");
    if properties.is_none() && additional.is_none() {
        return; // free-form
    }
    walk_object(properties, additional, value, steps, found);
}

/// Walks any value against a property schema, following only the gate's keywords.
fn walk_value<'s, 'v>(
    schema: &'s Value,
    value: &'v Value,
    steps: &mut Vec<Step<'v>>,
    found: &mut Vec<Found<'s>>,
) {
    match value {
        Value::Object(map) => walk_object_schema(schema, map, steps, found),
        Value::Array(items) => {
            let Some(schema) = schema.as_object() else {
                return;
            };
            let prefix = schema.get("prefixItems").and_then(Value::as_array);
            let rest = schema.get("items").filter(|i| i.is_object());
            for (i, item) in items.iter().enumerate() {
                let item_schema = prefix.and_then(|p| p.get(i)).or(rest);
                if let Some(item_schema) = item_schema {
                    steps.push(Step::Index(i));
                    walk_value(item_schema, item, steps, found);
                    steps.pop();
                }
            }
        }
        _ => {}
    }
}

/// Publishes the gate's closure: a copy of `properties` in which every nested object schema the
/// gate closes (declares `properties`, `additionalProperties` absent) carries
/// `"additionalProperties": false`. Property schemas are otherwise verbatim.
///
/// ```
/// use serde_json::json;
/// use wymcp_core::keyset::close_properties;
///
/// let props = json!({"addr": {"type": "object", "properties": {"zip": {}}}});
/// let closed = close_properties(props.as_object().unwrap());
/// assert_eq!(closed["addr"]["additionalProperties"], json!(false));
/// ```
pub fn close_properties(properties: &Map<String, Value>) -> Map<String, Value> {
    properties
        .iter()
        .map(|(k, v)| (k.clone(), close_schema(v)))
        .collect()
}

/// [`close_properties`] for one whole schema (a plain tool's input schema).
pub fn close_schema(schema: &Value) -> Value {
    let Some(map) = schema.as_object() else {
        return schema.clone();
    };
    let mut out = map.clone();
    if let Some(Value::Object(props)) = map.get("properties") {
        out.insert("properties".into(), Value::Object(close_properties(props)));
        if !map.contains_key("additionalProperties") {
            out.insert("additionalProperties".into(), Value::Bool(false));
        }
    }
    if let Some(items @ Value::Object(_)) = map.get("items") {
        out.insert("items".into(), close_schema(items));
    }
    if let Some(Value::Array(prefix)) = map.get("prefixItems") {
        out.insert(
            "prefixItems".into(),
            Value::Array(prefix.iter().map(close_schema).collect()),
        );
    }
    if let Some(extra @ Value::Object(_)) = map.get("additionalProperties") {
        out.insert("additionalProperties".into(), close_schema(extra));
    }
    Value::Object(out)
}

/// Refusals of a schema's shape along the gate's keywords: a `properties` that is not an object,
/// an `additionalProperties` that is neither a boolean nor a schema. Returns the first.
pub(crate) fn shape_offence(properties: &Map<String, Value>) -> Option<crate::Problem> {
    for (key, schema) in properties {
        if let Some(problem) = schema_shape_offence(schema, &pointer::push("", key)) {
            return Some(problem);
        }
    }
    None
}

/// [`shape_offence`] for one whole schema (a plain tool's input schema): locations are JSON
/// Pointers into that schema itself.
pub(crate) fn whole_schema_offence(schema: &Value) -> Option<crate::Problem> {
    schema_shape_offence(schema, "")
}

fn schema_shape_offence(schema: &Value, at: &str) -> Option<crate::Problem> {
    let map = schema.as_object()?;
    if let Some(props) = map.get("properties") {
        let Some(props) = props.as_object() else {
            return Some(crate::Problem::PropertiesNotObject {
                at: pointer::push(at, "properties"),
                got: bound::echo_value(props),
            });
        };
        for (key, sub) in props {
            let here = pointer::push(&pointer::push(at, "properties"), key);
            if let Some(p) = schema_shape_offence(sub, &here) {
                return Some(p);
            }
        }
    }
    if let Some(extra) = map.get("additionalProperties") {
        match extra {
            Value::Bool(_) => {}
            Value::Object(_) => {
                let here = pointer::push(at, "additionalProperties");
                if let Some(p) = schema_shape_offence(extra, &here) {
                    return Some(p);
                }
            }
            other => {
                return Some(crate::Problem::AdditionalPropertiesInvalid {
                    at: pointer::push(at, "additionalProperties"),
                    got: bound::echo_value(other),
                });
            }
        }
    }
    if let Some(items) = map.get("items") {
        if let Some(p) = schema_shape_offence(items, &pointer::push(at, "items")) {
            return Some(p);
        }
    }
    if let Some(Value::Array(prefix)) = map.get("prefixItems") {
        for (i, sub) in prefix.iter().enumerate() {
            let here = pointer::push_index(&pointer::push(at, "prefixItems"), i);
            if let Some(p) = schema_shape_offence(sub, &here) {
                return Some(p);
            }
        }
    }
    None
}
