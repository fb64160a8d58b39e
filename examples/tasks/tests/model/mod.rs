//! The scripted "model" of issue 47: it reads only a refusal's JSON text (never `help`) and
//! rewrites the call it sent by fixed rules ([`correct`]): take the likeliest listed action,
//! rename a key to the nearest name the refusal allows, fill a key from the `schemas` excerpt
//! (the example's value, else the first `enum` value, else a value of the `format`, else one
//! inside the range; an array that must not be empty gets one item built from the
//! `input_schema` digest), drop an argument outside `valid_arguments`.
//!
//! A directory module, so not a test target: `tests/one_retry.rs` replays the example's
//! broken calls with it, and wymcp-gateway's `tests/one_retry.rs` includes this file
//! (`#[path]`) to replay server-filesystem's through the gateway's folded actions.

#![allow(dead_code)]

use serde_json::{Map, Value, json};

/// The model: the corrected arguments, from the refusal's JSON text and the call it sent.
/// `None` when the refusal does not say how to fix it.
pub(crate) fn correct(sent: &Value, refusal_text: &str) -> Option<Value> {
    let refusal: Value = serde_json::from_str(refusal_text).ok()?;
    let mut call = sent.clone();
    let plain = call.get("action").is_none() && refusal.get("action").is_none();
    match refusal["error"].as_str()? {
        "missing_action" => {
            call["action"] = refusal["actions"][0]["name"].clone();
        }
        "unknown_action" => {
            let sent_action = sent["action"].as_str()?;
            call["action"] = json!(nearest(sent_action, names(&refusal["valid_actions"]))?);
        }
        "unknown_arguments" => {
            let valid = names(&refusal["valid_arguments"]);
            call.as_object_mut()?
                .retain(|key, _| valid.contains(&key.as_str()));
        }
        "missing_required_fields" | "missing_required_group" => {
            let data = data_of(&mut call, plain);
            let properties = refusal["input_schema"]["properties"].as_object()?;
            for entry in refusal["schemas"].as_array()? {
                let name = entry["path"].as_str()?.trim_start_matches('/');
                // A sent key the schema does not declare, near the missing name: a misspelling.
                let misspelled = data
                    .keys()
                    .find(|k| !properties.contains_key(*k) && distance(k, name) <= 2)
                    .cloned();
                let value = match misspelled {
                    Some(key) => data.remove(&key)?,
                    None => value_for(entry, None, digest_at(&refusal, entry["path"].as_str()?))?,
                };
                data.insert(name.to_owned(), value);
                if refusal["error"] == "missing_required_group" {
                    // One member of the first group is all the groups here need.
                    break;
                }
            }
        }
        "unknown_params" => {
            let data = Value::Object(data_of(&mut call, plain).clone());
            let mut fixed = data.clone();
            for unknown in refusal["unknown"].as_array()? {
                let path = unknown.as_str()?;
                let (parent, key) = path.rsplit_once('/')?;
                let allowed = names(&refusal["allowed"][parent]);
                let value = data.pointer(path)?.clone();
                let holder = fixed.pointer_mut(parent)?.as_object_mut()?;
                holder.remove(key);
                if let Some(name) = nearest(key, allowed).filter(|n| distance(n, key) <= 2) {
                    holder.insert(name.to_owned(), value);
                }
            }
            *data_of(&mut call, plain) = fixed.as_object()?.clone();
        }
        "invalid_values" => {
            let mut data = Value::Object(data_of(&mut call, plain).clone());
            for entry in refusal["schemas"].as_array()? {
                let path = entry["path"].as_str()?;
                let value = value_for(entry, data.pointer(path), digest_at(&refusal, path))?;
                set(&mut data, path, value)?;
            }
            *data_of(&mut call, plain) = data.as_object()?.clone();
        }
        _ => return None,
    }
    (&call != sent).then_some(call)
}

/// The object the data gates read: `data` of an action call, the arguments of a plain tool.
fn data_of(call: &mut Value, plain: bool) -> &mut Map<String, Value> {
    if !plain && !call["data"].is_object() {
        call["data"] = json!({});
    }
    let target = if plain { call } else { &mut call["data"] };
    target.as_object_mut().unwrap()
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .map(|l| l.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The schema at data path `path` in the refusal's `input_schema` digest (through
/// `properties` and `items`), which states what the bounded `schemas` excerpt leaves out: an
/// array's `items`.
fn digest_at<'a>(refusal: &'a Value, path: &str) -> Option<&'a Value> {
    let mut schema = &refusal["input_schema"];
    for segment in path.split('/').skip(1) {
        schema = match segment.parse::<usize>() {
            Ok(_) => schema.get("items")?,
            Err(_) => schema.get("properties")?.get(segment)?,
        };
    }
    Some(schema)
}

/// A value the excerpt admits: the example's, else the first enum value, else one of the
/// format, else one inside the range (the sent value clamped or cut when it has the right
/// type); for an array that must not be empty, one item built from the digest's `items`.
fn value_for(entry: &Value, sent: Option<&Value>, digest: Option<&Value>) -> Option<Value> {
    if let Some(example) = entry.get("example") {
        return Some(example.clone());
    }
    let schema = &entry["schema"];
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return Some(first.clone());
    }
    match schema["format"].as_str() {
        Some("date-time") => return Some(json!("2026-01-01T00:00:00Z")),
        Some("date") => return Some(json!("2026-01-01")),
        Some("email") => return Some(json!("someone@example.com")),
        Some("uri") => return Some(json!("https://example.com/")),
        _ => {}
    }
    let min = schema["minimum"].as_f64();
    let max = schema["maximum"].as_f64();
    // `["integer", "null"]` for an optional value: the first type that is not null.
    let kind = match &schema["type"] {
        Value::Array(types) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")?,
        other => other.as_str()?,
    };
    match kind {
        "integer" | "number" => {
            let low = min.unwrap_or(f64::MIN);
            let high = max.unwrap_or(f64::MAX);
            let at = sent
                .and_then(Value::as_f64)
                .unwrap_or(min.or(max).unwrap_or(1.0));
            let clamped = at.clamp(low, high);
            Some(json!(clamped as i64))
        }
        "string" => {
            if schema.get("pattern").is_some() {
                return None;
            }
            let min_len = schema["minLength"].as_u64().unwrap_or(1).max(1);
            let max_len = schema["maxLength"].as_u64().unwrap_or(u64::MAX);
            match sent.and_then(Value::as_str) {
                Some(s) if s.chars().count() as u64 > max_len => {
                    Some(json!(s.chars().take(max_len as usize).collect::<String>()))
                }
                _ => Some(json!("x".repeat(min_len as usize))),
            }
        }
        "boolean" => Some(json!(true)),
        "array" if schema["minItems"].as_u64().unwrap_or(0) > 0 => {
            let items = digest?.get("items")?;
            Some(json!([value_for(
                &json!({"schema": items}),
                None,
                Some(items)
            )?]))
        }
        "array" => Some(json!([])),
        "object" => {
            // Every required key, each with a value of its own schema.
            let mut object = Map::new();
            for key in names(&schema["required"]) {
                let property = schema.get("properties")?.get(key)?;
                let value = value_for(&json!({"schema": property}), None, Some(property))?;
                object.insert(key.to_owned(), value);
            }
            Some(Value::Object(object))
        }
        _ => None,
    }
}

/// Sets the value at a JSON Pointer, creating the last key.
fn set(root: &mut Value, path: &str, value: Value) -> Option<()> {
    let (parent, key) = path.rsplit_once('/')?;
    match root.pointer_mut(parent)? {
        Value::Object(map) => {
            map.insert(key.replace("~1", "/").replace("~0", "~"), value);
        }
        Value::Array(items) => *items.get_mut(key.parse::<usize>().ok()?)? = value,
        _ => return None,
    }
    Some(())
}

/// The name of `choices` nearest to `sent` (edit distance; the first on a tie).
pub(crate) fn nearest<'a>(sent: &str, choices: Vec<&'a str>) -> Option<&'a str> {
    choices.into_iter().min_by_key(|c| distance(sent, c))
}

/// Levenshtein distance over characters.
pub(crate) fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous + usize::from(ca != *cb);
            previous = row[j + 1];
            row[j + 1] = substitution.min(previous + 1).min(row[j] + 1);
        }
    }
    row[b.len()]
}
