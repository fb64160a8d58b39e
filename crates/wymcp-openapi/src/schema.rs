//! Local `$ref`s resolved (bounded in depth and size) and OpenAPI's schema dialect turned into
//! the JSON Schema draft 2020-12 wymcp's gates validate.

use serde_json::{Map, Value, json};

use crate::error::LoadError;

/// The formats wymcp's value gate asserts (without its `idn` feature); any other format an
/// OpenAPI document uses (`int32`, `int64`, `float`, `double`, `byte`, `binary`, `password`,
/// ...) is an annotation there and is dropped, since the gate refuses an unknown format.
const ASSERTED_FORMATS: [&str; 17] = [
    "date",
    "date-time",
    "time",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uri-template",
    "uuid",
    "regex",
    "json-pointer",
    "relative-json-pointer",
];

/// OpenAPI keywords with no JSON Schema meaning, dropped (with `x-` extensions).
const DROPPED: [&str; 5] = [
    "example",
    "xml",
    "discriminator",
    "externalDocs",
    "nullable",
];

/// Resolves the local `$ref`s of the values one operation uses, within a depth and a size
/// bound.
pub(crate) struct Resolver<'d> {
    document: &'d Value,
    operation: String,
    max_depth: usize,
    max_bytes: usize,
    spent: usize,
    stack: Vec<String>,
}

impl<'d> Resolver<'d> {
    pub(crate) fn new(
        document: &'d Value,
        operation: &str,
        max_depth: usize,
        max_bytes: usize,
    ) -> Self {
        Self {
            document,
            operation: operation.to_owned(),
            max_depth,
            max_bytes,
            spent: 0,
            stack: Vec::new(),
        }
    }

    /// `value` with every `$ref` replaced by what it names (its siblings kept over it). A
    /// reference met again inside itself (a recursive schema) becomes an open schema saying so.
    pub(crate) fn resolve(&mut self, value: &Value) -> Result<Value, LoadError> {
        self.spend(2)?;
        match value {
            Value::Object(map) => {
                if let Some(Value::String(reference)) = map.get("$ref") {
                    return self.follow(reference, map);
                }
                let mut out = Map::new();
                for (key, child) in map {
                    self.spend(key.len() + 3)?;
                    out.insert(key.clone(), self.resolve(child)?);
                }
                Ok(Value::Object(out))
            }
            Value::Array(items) => items.iter().map(|item| self.resolve(item)).collect(),
            Value::String(s) => {
                self.spend(s.len())?;
                Ok(value.clone())
            }
            _ => {
                self.spend(6)?;
                Ok(value.clone())
            }
        }
    }

    fn follow(&mut self, reference: &str, map: &Map<String, Value>) -> Result<Value, LoadError> {
        let at = self
            .stack
            .last()
            .cloned()
            .unwrap_or_else(|| self.operation.clone());
        let Some(pointer) = reference.strip_prefix('#') else {
            return Err(LoadError::RemoteRef {
                at,
                reference: reference.to_owned(),
            });
        };
        if self.stack.iter().any(|r| r == reference) {
            return Ok(json!({"description": format!("(recursive: {reference})")}));
        }
        if self.stack.len() >= self.max_depth {
            return Err(LoadError::RefTooDeep {
                operation: self.operation.clone(),
                limit: self.max_depth,
            });
        }
        let Some(target) = self.document.pointer(pointer) else {
            return Err(LoadError::RefNotFound {
                at,
                reference: reference.to_owned(),
            });
        };
        self.stack.push(reference.to_owned());
        let resolved = self.resolve(target);
        self.stack.pop();
        let mut resolved = resolved?;
        // OpenAPI 3.1 (JSON Schema 2020-12) lets keywords sit beside `$ref`.
        if let Value::Object(out) = &mut resolved {
            for (key, sibling) in map.iter().filter(|(k, _)| k.as_str() != "$ref") {
                self.spend(key.len() + 3)?;
                out.insert(key.clone(), self.resolve(sibling)?);
            }
        }
        Ok(resolved)
    }

    fn spend(&mut self, bytes: usize) -> Result<(), LoadError> {
        self.spent = self.spent.saturating_add(bytes);
        if self.spent > self.max_bytes {
            return Err(LoadError::SchemaTooLarge {
                operation: self.operation.clone(),
                limit: self.max_bytes,
            });
        }
        Ok(())
    }
}

/// Turns a resolved OpenAPI schema (3.0 or 3.1) into JSON Schema 2020-12 in place: `nullable`
/// as a `null` type, 3.0's boolean `exclusiveMinimum`/`exclusiveMaximum` as numbers, formats
/// the gate does not assert, `example`, `xml`, `discriminator`, `externalDocs` and `x-`
/// extensions dropped. In a request (`request`), `readOnly` properties are dropped: the
/// server sets them.
pub(crate) fn normalize(schema: &mut Value, request: bool) {
    let Value::Object(map) = schema else {
        return;
    };
    if map.get("nullable") == Some(&Value::Bool(true)) {
        match map.get_mut("type") {
            Some(Value::String(t)) => {
                let t = std::mem::take(t);
                map.insert("type".into(), json!([t, "null"]));
            }
            Some(Value::Array(types)) if !types.contains(&json!("null")) => {
                types.push(json!("null"))
            }
            _ => {}
        }
        if let Some(Value::Array(values)) = map.get_mut("enum") {
            if !values.contains(&Value::Null) {
                values.push(Value::Null);
            }
        }
    }
    for (exclusive, bound) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        if let Some(Value::Bool(on)) = map.get(exclusive).cloned() {
            map.remove(exclusive);
            if on {
                if let Some(limit) = map.remove(bound) {
                    map.insert(exclusive.into(), limit);
                }
            }
        }
    }
    if let Some(Value::String(format)) = map.get("format") {
        if !ASSERTED_FORMATS.contains(&format.as_str()) {
            map.remove("format");
        }
    }
    map.retain(|key, _| !DROPPED.contains(&key.as_str()) && !key.starts_with("x-"));
    if request {
        drop_read_only(map);
    }
    for key in [
        "properties",
        "patternProperties",
        "$defs",
        "dependentSchemas",
    ] {
        if let Some(Value::Object(children)) = map.get_mut(key) {
            children
                .values_mut()
                .for_each(|child| normalize(child, request));
        }
    }
    for key in ["allOf", "anyOf", "oneOf", "prefixItems"] {
        if let Some(Value::Array(children)) = map.get_mut(key) {
            children
                .iter_mut()
                .for_each(|child| normalize(child, request));
        }
    }
    for key in [
        "items",
        "additionalProperties",
        "not",
        "contains",
        "if",
        "then",
        "else",
    ] {
        if let Some(child) = map.get_mut(key) {
            normalize(child, request);
        }
    }
}

fn drop_read_only(map: &mut Map<String, Value>) {
    let Some(Value::Object(properties)) = map.get_mut("properties") else {
        return;
    };
    let read_only: Vec<String> = properties
        .iter()
        .filter(|(_, p)| p.get("readOnly") == Some(&Value::Bool(true)))
        .map(|(k, _)| k.clone())
        .collect();
    if read_only.is_empty() {
        return;
    }
    properties.retain(|k, _| !read_only.contains(k));
    if let Some(Value::Array(required)) = map.get_mut("required") {
        required.retain(|r| r.as_str().is_none_or(|r| !read_only.iter().any(|k| k == r)));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn openapi_3_0_keywords_become_json_schema() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "id": {"type": "integer", "format": "int64", "readOnly": true},
                "age": {"type": "integer", "minimum": 0, "exclusiveMinimum": true},
                "tag": {"type": "string", "nullable": true, "example": "x"},
                "born": {"type": "string", "format": "date"}
            },
            "required": ["id", "age"],
            "x-internal": true
        });
        normalize(&mut schema, true);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "age": {"type": "integer", "exclusiveMinimum": 0},
                    "tag": {"type": ["string", "null"]},
                    "born": {"type": "string", "format": "date"}
                },
                "required": ["age"]
            })
        );
    }

    #[test]
    fn a_recursive_reference_ends_in_an_open_schema() {
        let document = json!({"components": {"schemas": {"Node": {
            "type": "object",
            "properties": {"child": {"$ref": "#/components/schemas/Node"}}
        }}}});
        let mut resolver = Resolver::new(&document, "op", 8, 10_000);
        let out = resolver
            .resolve(&json!({"$ref": "#/components/schemas/Node"}))
            .unwrap();
        assert_eq!(
            out["properties"]["child"],
            json!({"description": "(recursive: #/components/schemas/Node)"})
        );
    }
}
