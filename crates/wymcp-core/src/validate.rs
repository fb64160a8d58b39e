//! The action-schema chain: every rule of the contract, run identically by the runtime `build()`
//! and by the compile-time macro.
//!
//! # The action-schema invariant
//!
//! A key outside the vocabulary ([`ACTION_SCHEMA_KEYS`]) is refused; a key inside it reaches a
//! check. The checks run in a fixed order (name, vocabulary, description, properties, required,
//! required_one_of, defaults, notes, related, examples, then the JSON Schema build and the
//! defaults against it), and the first refusal is reported. What passes is a
//! [`ValidatedAction`]: the only way to obtain one, so an unvalidated schema cannot be served.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::action::{ACTION_SCHEMA_KEYS, Actions};
use crate::bound;
use crate::error::{Callback, ConfigurationError, Problem};
use crate::example;
use crate::keyset;
use crate::value_gate::ValueGate;

/// One action whose schema passed every rule, with its compiled value gate and the texts the
/// gates and help publish (built once).
#[derive(Debug)]
pub struct ValidatedAction {
    name: String,
    description: String,
    properties: Map<String, Value>,
    required: Vec<String>,
    required_one_of: Option<Vec<Vec<String>>>,
    defaults: Option<Map<String, Value>>,
    notes: Option<String>,
    related: Option<Vec<String>>,
    examples: Option<Vec<Value>>,
    gate: ValueGate,
    rendered: Map<String, Value>,
    digest: Value,
}

impl ValidatedAction {
    /// The action's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The one-line description, verbatim.
    pub fn description(&self) -> &str {
        &self.description
    }
    /// The declared property schemas, verbatim.
    pub fn properties(&self) -> &Map<String, Value> {
        &self.properties
    }
    /// The unconditionally required property names, in declaration order.
    pub fn required(&self) -> &[String] {
        &self.required
    }
    /// The OR-of-AND groups, when declared and non-empty.
    pub fn required_one_of(&self) -> Option<&[Vec<String>]> {
        self.required_one_of.as_deref().filter(|g| !g.is_empty())
    }
    /// The defaults, when declared.
    pub fn defaults(&self) -> Option<&Map<String, Value>> {
        self.defaults.as_ref()
    }
    /// The long-form notes, when declared.
    pub fn notes(&self) -> Option<&str> {
        self.notes.as_deref()
    }
    /// The related action names, when declared.
    pub fn related(&self) -> Option<&[String]> {
        self.related.as_deref()
    }
    /// The example payloads, when declared.
    pub fn examples(&self) -> Option<&[Value]> {
        self.examples.as_deref()
    }
    /// The compiled value gate.
    pub fn value_gate(&self) -> &ValueGate {
        &self.gate
    }
    /// The summary `"<action>: <description>"` of the action enum and the help index.
    pub fn summary(&self) -> String {
        format!("{}: {}", self.name, self.description)
    }
    /// The action as help publishes it: the vocabulary keys, `required` always present,
    /// optional keys when declared, properties with the unknown-key gate's closure published.
    pub fn rendered(&self) -> &Map<String, Value> {
        &self.rendered
    }
    /// The `input_schema` digest the data-level gates carry.
    pub fn digest(&self) -> &Value {
        &self.digest
    }
}

/// A tool's validated actions, sorted by name.
#[derive(Debug, Default)]
pub struct ValidatedActions {
    actions: Vec<ValidatedAction>,
}

impl ValidatedActions {
    /// The actions, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = &ValidatedAction> {
        self.actions.iter()
    }
    /// The action named `name`.
    pub fn get(&self, name: &str) -> Option<&ValidatedAction> {
        self.actions
            .binary_search_by(|a| a.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.actions[i])
    }
    /// The action names, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.actions.iter().map(|a| a.name.as_str()).collect()
    }
    /// How many actions.
    pub fn len(&self) -> usize {
        self.actions.len()
    }
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.actions.is_empty()
    }
}

/// The action summaries, `"<action>: <description>"`, sorted by action name: the one source of
/// the `tools/list` action enum's description and the help index.
pub fn action_summaries(actions: &ValidatedActions) -> Vec<String> {
    actions.iter().map(ValidatedAction::summary).collect()
}

/// Validates every action of a tool. A refusal names the action (or the `actions` callback) but
/// not the tool: the caller adds it with [`ConfigurationError::in_tool`].
pub fn validate_actions(actions: &Actions) -> Result<ValidatedActions, ConfigurationError> {
    if let Some(malformed) = actions.malformed() {
        return Err(
            ConfigurationError::new(Problem::ActionNotObject(bound::echo_value(malformed)))
                .in_callback(Callback::Actions),
        );
    }
    let mut seen = BTreeSet::new();
    let mut validated = Vec::with_capacity(actions.len());
    for (name, schema) in actions.entries() {
        if !seen.insert(name.as_str()) {
            return Err(
                ConfigurationError::new(Problem::DuplicateAction(name.clone()))
                    .in_action(name.clone()),
            );
        }
        let action = validate_action(name, schema)
            .map_err(|problem| ConfigurationError::new(problem).in_action(name.clone()))?;
        validated.push(action);
    }
    validated.sort_by(|a, b| a.name.cmp(&b.name));
    let names: Vec<&str> = validated.iter().map(|a| a.name.as_str()).collect();
    for action in &validated {
        if let Some(problem) = related_offence(action.related().unwrap_or_default(), &names) {
            return Err(ConfigurationError::new(problem).in_action(action.name.clone()));
        }
    }
    Ok(ValidatedActions { actions: validated })
}

/// `related` naming something that is not one of the tool's actions (`names`, sorted).
pub fn related_offence(related: &[String], names: &[&str]) -> Option<Problem> {
    let unknown: Vec<String> = related
        .iter()
        .filter(|r| !names.contains(&r.as_str()))
        .cloned()
        .collect();
    (!unknown.is_empty()).then(|| Problem::RelatedUnknown {
        unknown,
        actions: names.iter().map(|n| (*n).to_owned()).collect(),
    })
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

/// Validates one action schema, returning the first refusal.
pub fn validate_action(name: &str, schema: &Value) -> Result<ValidatedAction, Problem> {
    if name.is_empty() {
        return Err(Problem::ActionNameEmpty);
    }
    if name.contains('\n') {
        return Err(Problem::ActionNameNewline(bound::echo(name)));
    }
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
    let description = match schema.get("description") {
        None => return Err(Problem::MissingDescription),
        Some(Value::String(d)) if d.contains('\n') => {
            return Err(Problem::DescriptionNewline(bound::echo(d)));
        }
        Some(Value::String(d)) => d.clone(),
        Some(other) => return Err(Problem::DescriptionNotString(render(other))),
    };
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
    if let Some(problem) = keyset::shape_offence(&properties) {
        return Err(problem);
    }
    let required = check_required(schema.get("required"), &properties)?;
    let required_one_of = check_required_one_of(schema.get("required_one_of"), &properties)?;
    let defaults = check_defaults(schema.get("defaults"), &properties, &required)?;
    let notes = match schema.get("notes") {
        None => None,
        Some(Value::String(n)) => Some(n.clone()),
        Some(other) => return Err(Problem::NotesNotString(render(other))),
    };
    let related = match schema.get("related") {
        None => None,
        Some(v) => Some(string_list(v).ok_or_else(|| Problem::RelatedNotList(render(v)))?),
    };
    let examples = match schema.get("examples") {
        None => None,
        Some(Value::Array(list)) if list.iter().all(Value::is_object) => Some(list.clone()),
        Some(other) => return Err(Problem::ExamplesNotList(render(other))),
    };
    let gate = ValueGate::for_properties(&properties).map_err(Problem::SchemaBuild)?;
    if let Some(defaults) = &defaults {
        check_default_values(defaults, &properties, &gate)?;
    }
    let declared = example::Declared {
        properties: &properties,
        required: &required,
        required_one_of: required_one_of.as_deref(),
        gate: &gate,
    };
    if let Some(problem) = examples
        .as_deref()
        .and_then(|e| example::refused(e, &declared))
    {
        return Err(problem);
    }
    let published = keyset::close_properties(&properties);
    let mut rendered = Map::new();
    rendered.insert("description".into(), Value::String(description.clone()));
    rendered.insert("properties".into(), Value::Object(published.clone()));
    rendered.insert("required".into(), strings(&required));
    if let Some(groups) = &required_one_of {
        rendered.insert("required_one_of".into(), groups_value(groups));
    }
    if let Some(d) = &defaults {
        rendered.insert("defaults".into(), Value::Object(d.clone()));
    }
    if let Some(n) = &notes {
        rendered.insert("notes".into(), Value::String(n.clone()));
    }
    if let Some(r) = &related {
        rendered.insert("related".into(), strings(r));
    }
    if let Some(e) = &examples {
        rendered.insert("examples".into(), Value::Array(e.clone()));
    }
    let mut digest = Map::new();
    digest.insert("properties".into(), Value::Object(published));
    digest.insert("required".into(), strings(&required));
    digest.insert(
        "defaults".into(),
        Value::Object(defaults.clone().unwrap_or_default()),
    );
    if let Some(groups) = required_one_of.as_ref().filter(|g| !g.is_empty()) {
        digest.insert("required_one_of".into(), groups_value(groups));
    }
    Ok(ValidatedAction {
        name: name.to_owned(),
        description,
        properties,
        required,
        required_one_of,
        defaults,
        notes,
        related,
        examples,
        gate,
        rendered,
        digest: Value::Object(digest),
    })
}

fn strings(list: &[String]) -> Value {
    Value::Array(list.iter().cloned().map(Value::String).collect())
}

fn groups_value(groups: &[Vec<String>]) -> Value {
    Value::Array(groups.iter().map(|g| strings(g)).collect())
}

fn check_required(
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

fn check_required_one_of(
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

fn check_defaults(
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

fn check_default_values(
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
