//! Each key of an action schema read and checked on its own: the name, the vocabulary,
//! `description`, `properties`, `required`, `required_one_of`, `defaults` (declared, then their
//! values against the compiled gate), `notes`, `related`, `examples`.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::action::ACTION_SCHEMA_KEYS;
use crate::bound;
use crate::error::Problem;
use crate::keyset;
use crate::value_gate::ValueGate;

/// A name: not empty, one line.
pub(super) fn check_name(name: &str) -> Result<(), Problem> {
    if name.is_empty() {
        return Err(Problem::ActionNameEmpty);
    }
    if name.contains('\n') {
        return Err(Problem::ActionNameNewline(bound::echo(name)));
    }
    Ok(())
}

/// The schema as an object of vocabulary keys only ([`ACTION_SCHEMA_KEYS`]).
pub(super) fn vocabulary(schema: &Value) -> Result<&Map<String, Value>, Problem> {
    let Some(schema) = schema.as_object() else {
        return Err(Problem::ActionNotObject(render(schema)));
    };
    let mut unknown: Vec<String> = schema
        .keys()
        .filter(|k| !ACTION_SCHEMA_KEYS.contains(&k.as_str()))
        .cloned()
        .collect();
    if !unknown.is_empty() {
        unknown.sort();
        return Err(Problem::UnknownKeys(unknown));
    }
    Ok(schema)
}

/// `description`: required, a one-line string.
pub(super) fn description(schema: &Map<String, Value>) -> Result<String, Problem> {
    match schema.get("description") {
        None => Err(Problem::MissingDescription),
        Some(Value::String(d)) if d.contains('\n') => {
            Err(Problem::DescriptionNewline(bound::echo(d)))
        }
        Some(Value::String(d)) => Ok(d.clone()),
        Some(other) => Err(Problem::DescriptionNotString(render(other))),
    }
}

/// `properties`: required, an object of property schemas of a shape the unknown-key gate
/// reads.
pub(super) fn properties(schema: &Map<String, Value>) -> Result<Map<String, Value>, Problem> {
    let properties = match schema.get("properties") {
        None => return Err(Problem::MissingProperties),
        Some(Value::Object(p)) => p.clone(),
        Some(other) => {
            return Err(Problem::PropertiesNotObject {
                at: String::new(),
                got: render(other),
            });
        }
    };
    match keyset::shape_offence(&properties) {
        Some(problem) => Err(problem),
        None => Ok(properties),
    }
}

/// `notes`: a string, when declared.
pub(super) fn notes(schema: &Map<String, Value>) -> Result<Option<String>, Problem> {
    match schema.get("notes") {
        None => Ok(None),
        Some(Value::String(n)) => Ok(Some(n.clone())),
        Some(other) => Err(Problem::NotesNotString(render(other))),
    }
}

/// `related`: a list of strings, when declared (the names are checked against the tool's
/// actions once all are read).
pub(super) fn related(schema: &Map<String, Value>) -> Result<Option<Vec<String>>, Problem> {
    match schema.get("related") {
        None => Ok(None),
        Some(v) => Ok(Some(
            string_list(v).ok_or_else(|| Problem::RelatedNotList(render(v)))?,
        )),
    }
}

/// `scopes`: a list of RFC 6749 scope tokens, when declared (none: the action needs no scope).
pub(super) fn scopes(schema: &Map<String, Value>) -> Result<Vec<String>, Problem> {
    let Some(value) = schema.get("scopes") else {
        return Ok(Vec::new());
    };
    let is_token = |s: &String| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b))
    };
    match string_list(value) {
        Some(list) if list.iter().all(is_token) => {
            let mut unique: Vec<String> = Vec::with_capacity(list.len());
            for scope in list {
                if !unique.contains(&scope) {
                    unique.push(scope);
                }
            }
            Ok(unique)
        }
        _ => Err(Problem::ScopesInvalid(render(value))),
    }
}

/// `examples`: a list of objects, when declared (checked against the gates once compiled).
pub(super) fn examples(schema: &Map<String, Value>) -> Result<Option<Vec<Value>>, Problem> {
    match schema.get("examples") {
        None => Ok(None),
        Some(Value::Array(list)) if list.iter().all(Value::is_object) => Ok(Some(list.clone())),
        Some(other) => Err(Problem::ExamplesNotList(render(other))),
    }
}

/// `required`: declared property names, no duplicates (none when absent).
pub(super) fn required(
    value: Option<&Value>,
    properties: &Map<String, Value>,
) -> Result<Vec<String>, Problem> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    let required = string_list(value).ok_or_else(|| Problem::RequiredNotList(render(value)))?;
    let dups = duplicates(&required);
    if !dups.is_empty() {
        return Err(Problem::RequiredDuplicates(dups));
    }
    let missing = undeclared(&required, properties);
    if !missing.is_empty() {
        return Err(Problem::RequiredUndeclared(missing));
    }
    Ok(required)
}

/// `required_one_of`: non-empty groups of declared names, no group repeated or a superset of
/// another.
pub(super) fn required_one_of(
    value: Option<&Value>,
    properties: &Map<String, Value>,
) -> Result<Option<Vec<Vec<String>>>, Problem> {
    let Some(value) = value else {
        return Ok(None);
    };
    let not_list = || Problem::RequiredOneOfNotList(render(value));
    let groups: Vec<Vec<String>> = value
        .as_array()
        .ok_or_else(not_list)?
        .iter()
        .map(string_list)
        .collect::<Option<_>>()
        .ok_or_else(not_list)?;
    for group in &groups {
        if group.is_empty() {
            return Err(Problem::RequiredOneOfEmptyGroup);
        }
        let dups = duplicates(group);
        if !dups.is_empty() {
            return Err(Problem::RequiredOneOfGroupDuplicates(dups));
        }
        let missing = undeclared(group, properties);
        if !missing.is_empty() {
            return Err(Problem::RequiredOneOfUndeclared(missing));
        }
    }
    let sets: Vec<BTreeSet<&String>> = groups.iter().map(|g| g.iter().collect()).collect();
    for (i, a) in sets.iter().enumerate() {
        for b in &sets[i + 1..] {
            if a == b {
                return Err(Problem::RequiredOneOfDuplicateGroups(groups[i].clone()));
            }
        }
    }
    for (i, a) in sets.iter().enumerate() {
        for (j, b) in sets.iter().enumerate() {
            if i != j && a.len() > b.len() && b.is_subset(a) {
                return Err(Problem::RequiredOneOfSuperset {
                    superset: groups[i].clone(),
                    subset: groups[j].clone(),
                });
            }
        }
    }
    Ok(Some(groups))
}

/// `defaults`: an object of declared, not required, properties.
pub(super) fn defaults(
    value: Option<&Value>,
    properties: &Map<String, Value>,
    required: &[String],
) -> Result<Option<Map<String, Value>>, Problem> {
    let Some(value) = value else {
        return Ok(None);
    };
    let Some(defaults) = value.as_object() else {
        return Err(Problem::DefaultsNotObject(render(value)));
    };
    let names: Vec<String> = defaults.keys().cloned().collect();
    let missing = undeclared(&names, properties);
    if !missing.is_empty() {
        return Err(Problem::DefaultsUndeclared(missing));
    }
    let also_required: Vec<String> = names
        .iter()
        .filter(|n| required.contains(n))
        .cloned()
        .collect();
    if !also_required.is_empty() {
        return Err(Problem::DefaultsRequired(also_required));
    }
    Ok(Some(defaults.clone()))
}

/// Each default, alone, through the unknown-key gate and the value gate.
pub(super) fn default_values(
    defaults: &Map<String, Value>,
    properties: &Map<String, Value>,
    gate: &ValueGate,
) -> Result<(), Problem> {
    for (property, value) in defaults {
        let mut one = Map::new();
        one.insert(property.clone(), value.clone());
        if let Some(unknown) = keyset::check(properties, &one) {
            return Err(Problem::DefaultUnknownKeys {
                property: property.clone(),
                paths: unknown.listed,
            });
        }
        if let Err(invalid) = gate.check(&Value::Object(one)) {
            let problems = invalid.problem_lines();
            return Err(Problem::DefaultInvalid {
                property: property.clone(),
                problems,
            });
        }
    }
    Ok(())
}

fn render(v: &Value) -> String {
    bound::echo_value(v)
}

fn string_list(value: &Value) -> Option<Vec<String>> {
    value
        .as_array()?
        .iter()
        .map(|v| v.as_str().map(str::to_owned))
        .collect()
}

fn duplicates(names: &[String]) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut dups = BTreeSet::new();
    for n in names {
        if !seen.insert(n) {
            dups.insert(n.clone());
        }
    }
    dups.into_iter().collect()
}

fn undeclared(names: &[String], properties: &Map<String, Value>) -> Vec<String> {
    names
        .iter()
        .filter(|n| !properties.contains_key(n.as_str()))
        .cloned()
        .collect()
}
