//! The action-schema chain: every rule of the contract, run identically by the runtime `build()`
//! and by the compile-time macro.
//!
//! # The action-schema invariant
//!
//! A key outside the vocabulary ([`ACTION_SCHEMA_KEYS`]) is refused; a key inside it reaches a
//! check. The checks run in a fixed order (name, vocabulary, description, properties, required,
//! required_one_of, defaults, notes, related, examples, scopes, then the JSON Schema build and the
//! defaults against it), and the first refusal is reported. What passes is a
//! [`ValidatedAction`]: the only way to obtain one, so an unvalidated schema cannot be served.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::action::Actions;
use crate::bound;
use crate::error::{Callback, ConfigurationError, Problem};
use crate::example;
use crate::excerpt::Excerpts;
use crate::value_gate::ValueGate;

mod fields;
mod published;
mod signature;

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
    scopes: Vec<String>,
    gate: ValueGate,
    rendered: Map<String, Value>,
    digest: Value,
    signature: String,
    excerpts: Excerpts,
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
    /// The OAuth scopes a caller must hold (all of them) to call this action; empty when it
    /// needs none.
    pub fn scopes(&self) -> &[String] {
        &self.scopes
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
    /// The compact signature the refusals of a missing or unknown action list: the required
    /// properties first, `?` on the optional ones, then any `required_one_of` groups.
    ///
    /// ```
    /// use serde_json::json;
    /// use wymcp_core::validate_action;
    ///
    /// let action = validate_action("create", &json!({
    ///     "description": "Create a task",
    ///     "properties": {
    ///         "title": {"type": "string"},
    ///         "due": {"type": "string", "format": "date-time"}
    ///     },
    ///     "required": ["title"]
    /// })).unwrap();
    /// assert_eq!(action.signature(), "create(title: string, due?: date-time)");
    /// ```
    pub fn signature(&self) -> &str {
        &self.signature
    }
    /// The excerpts of its property schemas a value or required-key refusal quotes (cut once,
    /// here).
    pub fn excerpts(&self) -> &Excerpts {
        &self.excerpts
    }
    /// How many of `keys` this action declares as top-level properties: how likely a call
    /// that sent them meant this action.
    pub fn declared_count<'k>(&self, keys: impl IntoIterator<Item = &'k str>) -> usize {
        keys.into_iter()
            .filter(|k| self.properties.contains_key(*k))
            .count()
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

/// Validates a list of OAuth scopes (a plain tool's): RFC 6749 scope tokens, each once.
pub fn validate_scopes(scopes: &[String]) -> Result<Vec<String>, Problem> {
    let mut schema = Map::new();
    schema.insert("scopes".into(), Value::from(scopes.to_vec()));
    fields::scopes(&schema)
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

/// Validates one action schema, returning the first refusal (the checks in the order the
/// module documents).
pub fn validate_action(name: &str, schema: &Value) -> Result<ValidatedAction, Problem> {
    fields::check_name(name)?;
    let schema = fields::vocabulary(schema)?;
    let description = fields::description(schema)?;
    let properties = fields::properties(schema)?;
    let required = fields::required(schema.get("required"), &properties)?;
    let required_one_of = fields::required_one_of(schema.get("required_one_of"), &properties)?;
    let defaults = fields::defaults(schema.get("defaults"), &properties, &required)?;
    let notes = fields::notes(schema)?;
    let related = fields::related(schema)?;
    let examples = fields::examples(schema)?;
    let scopes = fields::scopes(schema)?;
    let gate = ValueGate::for_properties(&properties).map_err(Problem::SchemaBuild)?;
    if let Some(defaults) = &defaults {
        fields::default_values(defaults, &properties, &gate)?;
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
    let mut action = ValidatedAction {
        name: name.to_owned(),
        description,
        properties,
        required,
        required_one_of,
        defaults,
        notes,
        related,
        examples,
        scopes,
        gate,
        rendered: Map::new(),
        digest: Value::Null,
        signature: String::new(),
        excerpts: Excerpts::default(),
    };
    action.excerpts = Excerpts::for_properties(&action.properties);
    action.signature = signature::signature(
        &action.name,
        &action.properties,
        &action.required,
        action.required_one_of(),
    );
    (action.rendered, action.digest) = published::texts(&action);
    Ok(action)
}
