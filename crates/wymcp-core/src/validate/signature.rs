//! An action's compact signature, `create(title: string, due?: date-time)`: what writing a call
//! of it needs, in one line, for the refusals of a missing or unknown action. Built once per
//! action when its schema is validated, so a refusal only copies it.

use serde_json::{Map, Value};

/// The signature of an action: its name, then each property as `name: type`, the required
/// ones first in declaration order and `?` marking the optional ones, then the
/// `required_one_of` groups (`; one of (id) | (name + color)`).
///
/// A property's type is its `enum` (`"low"|"high"`), its `const`, its `oneOf` or `anyOf`
/// alternatives joined by `|`, its `format`
/// (`date-time`), an array as its items' type with `[]`, its `type` (`string|null` for a
/// list), or `any` when the schema says none of these.
pub(super) fn signature(
    name: &str,
    properties: &Map<String, Value>,
    required: &[String],
    required_one_of: Option<&[Vec<String>]>,
) -> String {
    let mut params: Vec<String> = required
        .iter()
        .filter_map(|key| {
            properties
                .get(key)
                .map(|s| format!("{key}: {}", type_of(s)))
        })
        .collect();
    params.extend(
        properties
            .iter()
            .filter(|(key, _)| !required.contains(key))
            .map(|(key, schema)| format!("{key}?: {}", type_of(schema))),
    );
    let mut inner = params.join(", ");
    if let Some(groups) = required_one_of.filter(|g| !g.is_empty()) {
        let rendered: Vec<String> = groups
            .iter()
            .map(|g| format!("({})", g.join(" + ")))
            .collect();
        inner.push_str(&format!("; one of {}", rendered.join(" | ")));
    }
    format!("{name}({inner})")
}

/// The type a property's schema names, compactly.
fn type_of(schema: &Value) -> String {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let values: Vec<String> = values.iter().map(Value::to_string).collect();
        return values.join("|");
    }
    if let Some(value) = schema.get("const") {
        return value.to_string();
    }
    for alternatives in ["oneOf", "anyOf"] {
        if let Some(list) = schema.get(alternatives).and_then(Value::as_array) {
            let types: Vec<String> = list.iter().map(type_of).collect();
            return types.join("|");
        }
    }
    if let Some(format) = schema.get("format").and_then(Value::as_str) {
        return format.to_owned();
    }
    match schema.get("type") {
        Some(Value::String(t)) if t == "array" => match schema.get("items") {
            Some(items) if items.is_object() => format!("{}[]", type_of(items)),
            _ => "array".to_owned(),
        },
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(types)) => {
            let names: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
            if names.is_empty() {
                "any".to_owned()
            } else {
                names.join("|")
            }
        }
        _ => "any".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn props(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn required_first_then_optional_marked() {
        let p = props(json!({
            "due": {"type": "string", "format": "date-time"},
            "title": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "priority": {"enum": ["low", "high"]},
            "note": {"type": ["string", "null"]},
            "blob": {}
        }));
        let s = signature("create", &p, &["title".to_owned()], None);
        assert_eq!(
            s,
            "create(title: string, blob?: any, due?: date-time, note?: string|null, \
             priority?: \"low\"|\"high\", tags?: string[])"
        );
    }

    #[test]
    fn groups_follow_the_properties() {
        let p = props(json!({"id": {"type": "integer"}, "name": {"type": "string"}}));
        let groups = vec![vec!["id".to_owned()], vec!["name".to_owned()]];
        assert_eq!(
            signature("find", &p, &[], Some(&groups)),
            "find(id?: integer, name?: string; one of (id) | (name))"
        );
    }

    #[test]
    fn alternatives_are_joined() {
        let p = props(
            json!({"status": {"oneOf": [{"const": "open"}, {"const": "done"}]},
            "ref": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}),
        );
        assert_eq!(
            signature("set", &p, &[], None),
            "set(ref?: integer|null, status?: \"open\"|\"done\")"
        );
    }

    #[test]
    fn no_properties_is_empty_parens() {
        assert_eq!(signature("list", &Map::new(), &[], None), "list()");
    }
}
