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

use std::cmp::Ordering;
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
/// This reads the schema afresh on each call; a served action reads a [`KeyPlan`] compiled
/// once at `build()`.
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
    KeyPlan::for_properties(properties).check(data)
}

/// Checks a whole object schema (a plain tool's input schema) against `arguments`: the root is
/// classified like any nested object schema.
pub fn check_schema(schema: &Value, arguments: &Map<String, Value>) -> Option<UnknownKeys> {
    KeyPlan::of(schema).check(arguments)
}

/// The gate's reading of one schema, compiled once: which objects are closed, the names each
/// admits (sorted, for a binary search), and where the gate descends. A call walks its data
/// against the plan and reads no schema text.
///
/// ```
/// use serde_json::json;
/// use wymcp_core::keyset::KeyPlan;
///
/// let plan = KeyPlan::of(&json!({
///     "type": "object",
///     "properties": {"address": {"type": "object", "properties": {"zip": {}}}}
/// }));
/// let data = json!({"address": {"zip": "1", "zpi": "2"}});
/// let report = plan.check(data.as_object().unwrap()).unwrap();
/// assert_eq!(report.listed, vec!["/address/zpi"]);
/// assert!(plan.check(json!({"address": {"zip": "1"}}).as_object().unwrap()).is_none());
/// ```
#[derive(Debug, Clone, Default)]
pub struct KeyPlan {
    /// The rule for an object value; `None`: an object here is free-form.
    object: Option<ObjectRule>,
    /// The rule for an array value; `None`: the gate does not look inside.
    array: Option<ArrayRule>,
}

#[derive(Debug, Clone)]
struct ObjectRule {
    /// Every declared property name in byte order, with the plan of its schema (`None` when the
    /// gate has nothing to check below it).
    properties: Vec<(Box<str>, Option<Box<KeyPlan>>)>,
    /// Refuses a key outside `properties` (and no `additionalProperties` schema takes it).
    closed: bool,
    /// `additionalProperties` is `true` or a schema: any string key is admitted.
    any_string_key: bool,
    /// `additionalProperties` as a schema, with its plan (`None` inside when it leads nowhere).
    extra: Option<Option<Box<KeyPlan>>>,
}

#[derive(Debug, Clone)]
struct ArrayRule {
    prefix: Vec<Option<KeyPlan>>,
    items: Option<Box<KeyPlan>>,
}

impl KeyPlan {
    /// The plan of `data` for an action's `properties`: closed at the root.
    pub fn for_properties(properties: &Map<String, Value>) -> KeyPlan {
        KeyPlan {
            object: Some(ObjectRule::of(Some(properties), None)),
            array: None,
        }
    }

    /// The plan of a whole schema, following only the gate's keywords.
    pub fn of(schema: &Value) -> KeyPlan {
        let Some(map) = schema.as_object() else {
            return KeyPlan::default();
        };
        let properties = map.get("properties").and_then(Value::as_object);
        let additional = map.get("additionalProperties");
        let object = (properties.is_some() || additional.is_some())
            .then(|| ObjectRule::of(properties, additional));
        let prefix: Vec<Option<KeyPlan>> = map
            .get("prefixItems")
            .and_then(Value::as_array)
            .map(|p| p.iter().map(|s| KeyPlan::of(s).nonempty()).collect())
            .unwrap_or_default();
        let items = map
            .get("items")
            .filter(|i| i.is_object())
            .and_then(|i| KeyPlan::of(i).nonempty())
            .map(Box::new);
        let array = (prefix.iter().any(Option::is_some) || items.is_some())
            .then_some(ArrayRule { prefix, items });
        KeyPlan { object, array }
    }

    fn nonempty(self) -> Option<KeyPlan> {
        (self.object.is_some() || self.array.is_some()).then_some(self)
    }

    /// Every unknown key of `data` (an object value under this plan), or `None`.
    pub fn check(&self, data: &Map<String, Value>) -> Option<UnknownKeys> {
        let rule = self.object.as_ref()?;
        let mut found = Vec::new();
        rule.walk(data, &mut Vec::new(), &mut found);
        report(found)
    }

    fn walk<'p, 'v>(
        &'p self,
        value: &'v Value,
        steps: &mut Vec<Step<'v>>,
        found: &mut Vec<Found<'p>>,
    ) {
        match value {
            Value::Object(map) => {
                if let Some(rule) = &self.object {
                    rule.walk(map, steps, found);
                }
            }
            Value::Array(items) => {
                let Some(rule) = &self.array else { return };
                for (i, item) in items.iter().enumerate() {
                    let plan = match rule.prefix.get(i) {
                        Some(at) => at.as_ref(),
                        None => rule.items.as_deref(),
                    };
                    if let Some(plan) = plan {
                        steps.push(Step::Index(i));
                        plan.walk(item, steps, found);
                        steps.pop();
                    }
                }
            }
            _ => {}
        }
    }
}

impl ObjectRule {
    fn of(properties: Option<&Map<String, Value>>, additional: Option<&Value>) -> ObjectRule {
        let mut names: Vec<(Box<str>, Option<Box<KeyPlan>>)> = properties
            .into_iter()
            .flatten()
            .map(|(name, schema)| {
                (
                    name.as_str().into(),
                    KeyPlan::of(schema).nonempty().map(Box::new),
                )
            })
            .collect();
        names.sort_by(|a, b| a.0.cmp(&b.0));
        ObjectRule {
            properties: names,
            closed: match additional {
                None | Some(Value::Bool(false)) => properties.is_some() || additional.is_some(),
                _ => false,
            },
            any_string_key: matches!(additional, Some(Value::Object(_) | Value::Bool(true))),
            extra: additional
                .filter(|a| a.is_object())
                .map(|a| KeyPlan::of(a).nonempty().map(Box::new)),
        }
    }

    /// The declared property `key`: `Some(plan)` when declared (`plan` is where the gate goes
    /// next, if anywhere).
    ///
    /// `cursor` is where the previous key matched. Data keys usually come in byte order
    /// (serde_json's map is sorted, as the names are), so the scan forward from it takes a
    /// comparison or two; a key out of order (a map keeping insertion order) or an unknown one
    /// falls back to a binary search.
    fn declared(&self, key: &str, cursor: &mut usize) -> Option<Option<&KeyPlan>> {
        while let Some((name, plan)) = self.properties.get(*cursor) {
            match name.as_ref().cmp(key) {
                Ordering::Less => *cursor += 1,
                Ordering::Equal => {
                    *cursor += 1;
                    return Some(plan.as_deref());
                }
                Ordering::Greater => break,
            }
        }
        self.properties
            .binary_search_by(|(name, _)| name.as_ref().cmp(key))
            .ok()
            .map(|i| self.properties[i].1.as_deref())
    }

    /// Walks an object value. `steps` is the path to it, rendered only for an unknown key (a
    /// passing call renders no path).
    fn walk<'p, 'v>(
        &'p self,
        value: &'v Map<String, Value>,
        steps: &mut Vec<Step<'v>>,
        found: &mut Vec<Found<'p>>,
    ) {
        let mut cursor = 0;
        for (key, item) in value {
            let next = match self.declared(key, &mut cursor) {
                Some(next) => next,
                None => match &self.extra {
                    Some(next) => next.as_deref(),
                    None => {
                        if self.closed {
                            found.push(Found {
                                holder: pointer::render(steps),
                                admitted: self,
                                key: key.clone(),
                            });
                        }
                        continue;
                    }
                },
            };
            if let Some(plan) = next {
                steps.push(Step::Key(key));
                plan.walk(item, steps, found);
                steps.pop();
            }
        }
    }

    fn admitted_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.properties.iter().map(|(n, _)| n.to_string()).collect();
        if self.any_string_key {
            names.push(ANY_STRING_KEY.to_owned());
        }
        names.sort();
        names
    }
}

/// One unknown key: the holder's data path, the holder's rule, and the key.
struct Found<'p> {
    holder: String,
    admitted: &'p ObjectRule,
    key: String,
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
            .or_insert_with(|| f.admitted.admitted_names());
    }
    Some(UnknownKeys {
        listed,
        count,
        allowed,
    })
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
    if let Some(items) = map.get("items")
        && let Some(p) = schema_shape_offence(items, &pointer::push(at, "items"))
    {
        return Some(p);
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Keys out of byte order (a map that keeps insertion order) fall back to the binary search:
    /// every declared key is still found, every unknown one still refused.
    #[test]
    fn the_forward_scan_finds_keys_that_come_out_of_order() {
        let props = json!({"a": {}, "c": {}, "e": {}, "g": {}});
        let rule = ObjectRule::of(props.as_object(), None);
        let mut cursor = 0;
        for key in ["g", "a", "e", "c", "a"] {
            assert!(rule.declared(key, &mut cursor).is_some(), "{key}");
        }
        let mut cursor = 0;
        for key in ["e", "b", "a", "z"] {
            let expected = matches!(key, "e" | "a");
            assert_eq!(rule.declared(key, &mut cursor).is_some(), expected, "{key}");
        }
    }
}
