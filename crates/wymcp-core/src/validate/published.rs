//! What a validated action publishes, built once: the action as help renders it and the
//! `input_schema` digest the data-level gates carry.

use serde_json::{Map, Value};

use super::ValidatedAction;
use crate::keyset;

/// The rendered action and its digest. Both publish the properties with the unknown-key gate's
/// closure (`additionalProperties: false` where the gate descends).
pub(super) fn texts(action: &ValidatedAction) -> (Map<String, Value>, Value) {
    let published = keyset::close_properties(&action.properties);
    let rendered = rendered(action, &published);
    let mut digest = Map::new();
    digest.insert("properties".into(), Value::Object(published));
    digest.insert("required".into(), strings(&action.required));
    digest.insert(
        "defaults".into(),
        Value::Object(action.defaults.clone().unwrap_or_default()),
    );
    if let Some(groups) = action.required_one_of() {
        digest.insert("required_one_of".into(), groups_value(groups));
    }
    (rendered, Value::Object(digest))
}

/// The vocabulary keys, `required` always present, the optional ones when declared.
fn rendered(action: &ValidatedAction, published: &Map<String, Value>) -> Map<String, Value> {
    let mut rendered = Map::new();
    rendered.insert(
        "description".into(),
        Value::String(action.description.clone()),
    );
    rendered.insert("properties".into(), Value::Object(published.clone()));
    rendered.insert("required".into(), strings(&action.required));
    if let Some(groups) = &action.required_one_of {
        rendered.insert("required_one_of".into(), groups_value(groups));
    }
    if let Some(d) = &action.defaults {
        rendered.insert("defaults".into(), Value::Object(d.clone()));
    }
    if let Some(n) = &action.notes {
        rendered.insert("notes".into(), Value::String(n.clone()));
    }
    if let Some(r) = &action.related {
        rendered.insert("related".into(), strings(r));
    }
    if let Some(e) = &action.examples {
        rendered.insert("examples".into(), Value::Array(e.clone()));
    }
    if !action.scopes.is_empty() {
        rendered.insert("scopes".into(), strings(&action.scopes));
    }
    rendered
}

fn strings(list: &[String]) -> Value {
    Value::Array(list.iter().cloned().map(Value::String).collect())
}

fn groups_value(groups: &[Vec<String>]) -> Value {
    Value::Array(groups.iter().map(|g| strings(g)).collect())
}
