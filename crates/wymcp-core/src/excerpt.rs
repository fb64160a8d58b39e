//! What a value or required-key refusal quotes of the schema: the property's schema cut to the
//! keywords that say what to write there ([`EXCERPT_KEYWORDS`]: `type`, `format`, `enum`, the
//! bounds, lengths, `pattern` and item counts, `description`), and the value the action's first
//! example has at that place. A `oneOf` or `anyOf` whose every alternative is a `const` (a
//! documented Rust enum) is listed as the `enum`.
//!
//! A model that sent a string where an integer belongs, or left out a key, learns the shape from
//! the refusal alone (issue 47). The excerpts are cut once, when the schema is validated, along
//! the unknown-key gate's keywords (`properties`, `items`, `prefixItems`, an
//! `additionalProperties` schema; see [`keyset`](crate::keyset)): a place reached only through
//! another keyword has no excerpt. A refusal only looks one up by its data path.
//!
//! Everything quoted is bounded: the description, the format and the pattern by
//! [`bound::echo`], each enum value by [`bound::echo_json`] and their number by the caller's
//! cap, the example by [`bound::echo_json`].

use serde_json::{Map, Value};

use crate::bound;
use crate::pointer;

/// The schema keywords an excerpt keeps, in the order it lists them: what the value gate's
/// type, enum, format and range problems are about, and the description.
pub const EXCERPT_KEYWORDS: [&str; 13] = [
    "type",
    "format",
    "enum",
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "description",
];

/// The excerpts of one schema, cut once: one per place of `data` the unknown-key gate's
/// keywords reach.
///
/// ```
/// use serde_json::json;
/// use wymcp_core::excerpt::Excerpts;
///
/// let excerpts = Excerpts::for_properties(json!({
///     "due": {"type": "string", "format": "date-time", "description": "When it is due"},
///     "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}}
/// }).as_object().unwrap());
/// let example = json!({"due": "2026-01-01T00:00:00Z", "tags": ["b"]});
///
/// let due = excerpts.at("/due", Some(&example), 10).unwrap();
/// assert_eq!(due.schema, json!({"type": "string", "format": "date-time",
///                               "description": "When it is due"}));
/// assert_eq!(due.example, Some(json!("2026-01-01T00:00:00Z")));
///
/// // An index the example lacks reads its first item (every item has the same schema).
/// let tag = excerpts.at("/tags/3", Some(&example), 2).unwrap();
/// assert_eq!(tag.schema, json!({"enum": ["a", "b"], "enum_omitted": 1}));
/// assert_eq!(tag.example, Some(json!("b")));
/// assert!(excerpts.at("/nowhere", None, 10).is_none());
/// ```
#[derive(Debug, Clone, Default)]
pub struct Excerpts {
    /// Boxed: an action and a plain tool's schema hold one, and most refusals never read it.
    root: Box<Node>,
}

/// What a refusal quotes about one place of `data`.
#[derive(Debug, Clone, PartialEq)]
pub struct PropertyExcerpt {
    /// The property's schema cut to [`EXCERPT_KEYWORDS`], bounded; a cut `enum` is followed
    /// by `enum_omitted`, the number of values left out.
    pub schema: Value,
    /// The value the first example has there, bounded; `None` when there is no example or it
    /// has nothing there.
    pub example: Option<Value>,
}

#[derive(Debug, Clone, Default)]
struct Node {
    /// The excerpt's keywords but `enum`, bounded.
    kept: Vec<(&'static str, Value)>,
    /// Every `enum` value, each bounded (a refusal lists the first few).
    enumeration: Option<Vec<Value>>,
    /// The declared properties in byte order, for a binary search.
    properties: Vec<(Box<str>, Node)>,
    prefix: Vec<Node>,
    items: Option<Box<Node>>,
    extra: Option<Box<Node>>,
}

impl Excerpts {
    /// The excerpts of `data` for an action's `properties`.
    pub fn for_properties(properties: &Map<String, Value>) -> Excerpts {
        Excerpts {
            root: Box::new(Node {
                properties: Node::properties(properties),
                ..Node::default()
            }),
        }
    }

    /// The excerpts of a whole schema (a plain tool's input schema).
    pub fn of(schema: &Value) -> Excerpts {
        Excerpts {
            root: Box::new(Node::of(schema)),
        }
    }

    /// The excerpt at the data path `pointer` (a JSON Pointer, `""` for `data` itself), with
    /// at most `max_enum` enum values, and the value `example` has there. An array index the
    /// example does not hold reads its first item when the schema gives every item the same
    /// schema (`items`). `None` when the gate's keywords do not reach that place.
    pub fn at(
        &self,
        pointer: &str,
        example: Option<&Value>,
        max_enum: usize,
    ) -> Option<PropertyExcerpt> {
        let mut node: &Node = &self.root;
        let mut example = example;
        for token in pointer::tokens(pointer) {
            let (next, uniform) = node.child(&token)?;
            example = example.and_then(|e| step(e, &token, uniform));
            node = next;
        }
        Some(PropertyExcerpt {
            schema: node.render(max_enum),
            example: example.map(bound::echo_json),
        })
    }
}

/// The value at `token` below `value`; an index `value` lacks reads its first item when
/// `uniform` (all items share a schema).
fn step<'v>(value: &'v Value, token: &str, uniform: bool) -> Option<&'v Value> {
    match value {
        Value::Object(map) => map.get(token),
        Value::Array(items) => {
            let index: usize = token.parse().ok()?;
            items
                .get(index)
                .or_else(|| items.first().filter(|_| uniform))
        }
        _ => None,
    }
}

impl Node {
    fn of(schema: &Value) -> Node {
        let Some(map) = schema.as_object() else {
            return Node::default();
        };
        let kept = EXCERPT_KEYWORDS
            .iter()
            .filter(|k| **k != "enum")
            .filter_map(|k| Some((*k, keep(k, map.get(*k)?)?)))
            .collect();
        Node {
            kept,
            enumeration: map
                .get("enum")
                .and_then(Value::as_array)
                .map(|values| values.iter().map(bound::echo_json).collect())
                .or_else(|| constants(map)),
            properties: map
                .get("properties")
                .and_then(Value::as_object)
                .map(Node::properties)
                .unwrap_or_default(),
            prefix: map
                .get("prefixItems")
                .and_then(Value::as_array)
                .map(|p| p.iter().map(Node::of).collect())
                .unwrap_or_default(),
            items: map
                .get("items")
                .filter(|i| i.is_object())
                .map(|i| Box::new(Node::of(i))),
            extra: map
                .get("additionalProperties")
                .filter(|a| a.is_object())
                .map(|a| Box::new(Node::of(a))),
        }
    }

    fn properties(properties: &Map<String, Value>) -> Vec<(Box<str>, Node)> {
        let mut nodes: Vec<(Box<str>, Node)> = properties
            .iter()
            .map(|(name, schema)| (name.as_str().into(), Node::of(schema)))
            .collect();
        nodes.sort_by(|a, b| a.0.cmp(&b.0));
        nodes
    }

    /// The node at `token` below this one, and whether it is the schema of every item.
    fn child(&self, token: &str) -> Option<(&Node, bool)> {
        if let Ok(i) = self
            .properties
            .binary_search_by(|(name, _)| name.as_ref().cmp(token))
        {
            return Some((&self.properties[i].1, false));
        }
        if let Ok(index) = token.parse::<usize>() {
            if let Some(node) = self.prefix.get(index) {
                return Some((node, false));
            }
            if let Some(node) = &self.items {
                return Some((node, true));
            }
        }
        self.extra.as_deref().map(|node| (node, false))
    }

    fn render(&self, max_enum: usize) -> Value {
        let mut out: Map<String, Value> = self
            .kept
            .iter()
            .map(|(keyword, value)| ((*keyword).to_owned(), value.clone()))
            .collect();
        if let Some(values) = &self.enumeration {
            let listed: Vec<Value> = values.iter().take(max_enum).cloned().collect();
            let omitted = values.len() - listed.len();
            out.insert("enum".into(), Value::Array(listed));
            if omitted > 0 {
                out.insert("enum_omitted".into(), Value::from(omitted));
            }
        }
        Value::Object(out)
    }
}

/// The values of a `oneOf` or `anyOf` whose every alternative is a `const` (how a documented
/// Rust enum is written), each bounded: the excerpt lists them as its `enum`.
fn constants(map: &Map<String, Value>) -> Option<Vec<Value>> {
    ["oneOf", "anyOf"].iter().find_map(|keyword| {
        let alternatives = map.get(*keyword)?.as_array()?;
        alternatives
            .iter()
            .map(|a| a.get("const").map(bound::echo_json))
            .collect::<Option<Vec<Value>>>()
            .filter(|values| !values.is_empty())
    })
}

/// A keyword's value as an excerpt keeps it: texts bounded, numbers and type names as they are.
fn keep(keyword: &str, value: &Value) -> Option<Value> {
    match (keyword, value) {
        ("format" | "pattern" | "description", Value::String(text)) => {
            Some(Value::String(bound::echo(text)))
        }
        (
            "minimum" | "exclusiveMinimum" | "maximum" | "exclusiveMaximum" | "minLength"
            | "maxLength" | "minItems" | "maxItems",
            Value::Number(_),
        ) => Some(value.clone()),
        ("type", Value::String(_) | Value::Array(_)) => Some(bound::echo_json(value)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keeps_only_the_listed_keywords_and_bounds_the_texts() {
        let excerpts = Excerpts::for_properties(
            json!({"n": {
                "type": "integer", "minimum": 1, "maximum": 5, "multipleOf": 1,
                "description": "d".repeat(250), "title": "N", "default": 3
            }})
            .as_object()
            .expect("an object"),
        );
        let n = excerpts.at("/n", None, 10).expect("reached");
        assert_eq!(
            n.schema,
            json!({"type": "integer", "minimum": 1, "maximum": 5,
                   "description": format!("{}…(+50 chars)", "d".repeat(200))})
        );
        assert_eq!(n.example, None);
        let excerpts = Excerpts::for_properties(
            json!({"code": {
                "type": "string", "minLength": 2, "maxLength": 8, "pattern": "^[A-Z]+$",
                "exclusiveMinimum": 0, "exclusiveMaximum": 9
            }, "tags": {"type": "array", "minItems": 1, "maxItems": 3, "uniqueItems": true}})
            .as_object()
            .expect("an object"),
        );
        assert_eq!(
            excerpts.at("/code", None, 10).expect("reached").schema,
            json!({"type": "string", "minLength": 2, "maxLength": 8, "pattern": "^[A-Z]+$",
                   "exclusiveMinimum": 0, "exclusiveMaximum": 9})
        );
        assert_eq!(
            excerpts.at("/tags", None, 10).expect("reached").schema,
            json!({"type": "array", "minItems": 1, "maxItems": 3})
        );
    }

    #[test]
    fn follows_the_gate_keywords_at_any_depth() {
        let excerpts = Excerpts::of(&json!({
            "type": "object",
            "properties": {
                "address": {"type": "object", "properties": {"zip": {"type": "string"}}},
                "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]},
                "labels": {"type": "object", "additionalProperties": {"type": "boolean"}},
                "either": {"anyOf": [{"type": "object", "properties": {"x": {}}}]}
            }
        }));
        let example = json!({"address": {"zip": "75001"}, "pair": ["a", 1], "labels": {"x": true}});
        let at = |p: &str| excerpts.at(p, Some(&example), 10).expect("reached");
        assert_eq!(at("/address/zip").example, Some(json!("75001")));
        assert_eq!(at("/pair/1").schema, json!({"type": "integer"}));
        // prefixItems: another index is another schema, so no example is borrowed.
        assert_eq!(at("/pair/1").example, Some(json!(1)));
        assert_eq!(at("/labels/any key").schema, json!({"type": "boolean"}));
        assert_eq!(at("/labels/any key").example, None);
        assert!(excerpts.at("/either/x", Some(&example), 10).is_none());
        assert_eq!(at("").schema, json!({"type": "object"}));
    }

    #[test]
    fn alternatives_of_constants_are_listed_as_the_enum() {
        let excerpts = Excerpts::for_properties(
            json!({
                "status": {"description": "A status", "oneOf": [
                    {"const": "open", "description": "To do"}, {"const": "done"}]},
                "either": {"anyOf": [{"const": 1}, {"type": "string"}]}
            })
            .as_object()
            .expect("an object"),
        );
        assert_eq!(
            excerpts.at("/status", None, 10).expect("reached").schema,
            json!({"enum": ["open", "done"], "description": "A status"})
        );
        assert_eq!(
            excerpts.at("/either", None, 10).expect("reached").schema,
            json!({})
        );
    }

    #[test]
    fn a_long_enum_is_cut_and_counted() {
        let values: Vec<String> = (0..30).map(|i| format!("v{i}")).collect();
        let excerpts = Excerpts::for_properties(
            json!({"v": {"type": "string", "enum": values}})
                .as_object()
                .expect("an object"),
        );
        let v = excerpts.at("/v", None, 3).expect("reached");
        assert_eq!(
            v.schema,
            json!({"type": "string", "enum": ["v0", "v1", "v2"], "enum_omitted": 27})
        );
    }
}
