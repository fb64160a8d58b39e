//! The dispatch gates, in the contract's order; the first that fires answers.

use serde_json::{Map, Value};
use wymcp_core::schema::InputSchema;
use wymcp_core::{ValidatedAction, ValidatedActions};

use crate::Limits;
use crate::context::Identity;
use crate::context::missing_scopes;
use crate::dispatch::choices::ActionChoices;
use crate::dispatch::refusal::{Refusal, Target, help_pointer};
use crate::dispatch::schemas::PropertySchemas;

/// The JSON type an argument must have.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ArgType {
    String,
    Object,
}

impl ArgType {
    fn name(self) -> &'static str {
        match self {
            ArgType::String => "string",
            ArgType::Object => "object",
        }
    }
    fn admits(self, value: &Value) -> bool {
        match self {
            ArgType::String => value.is_string(),
            ArgType::Object => value.is_object(),
        }
    }
}

/// An arguments vocabulary: names and their types, in the order messages list them.
pub(crate) struct Vocabulary {
    pub(crate) names: &'static [&'static str],
    pub(crate) types: &'static [ArgType],
}

/// The action tool's arguments: `action` (string) and `data` (object).
pub(crate) const ACTION_ARGUMENTS: Vocabulary = Vocabulary {
    names: &["action", "data"],
    types: &[ArgType::String, ArgType::Object],
};

/// Gates 1 and 2, shared by action tools and help: names before types. A present key with the
/// wrong JSON type (`null` included) is a type refusal.
pub(crate) fn check_arguments<'a>(
    arguments: &Map<String, Value>,
    vocabulary: &Vocabulary,
    help: impl Fn() -> String,
) -> Result<(), Refusal<'a>> {
    let mut unknown: Vec<String> = arguments
        .keys()
        .filter(|k| !vocabulary.names.contains(&k.as_str()))
        .cloned()
        .collect();
    if !unknown.is_empty() {
        unknown.sort();
        return Err(Refusal::UnknownArguments {
            unknown,
            vocabulary: vocabulary.names,
            help: help(),
        });
    }
    for (name, ty) in vocabulary.names.iter().zip(vocabulary.types) {
        if let Some(value) = arguments.get(*name) {
            if !ty.admits(value) {
                return Err(Refusal::InvalidArgumentType {
                    argument: name,
                    expected: ty.name(),
                    help: help(),
                });
            }
        }
    }
    Ok(())
}

/// Runs every gate of an action tool on `arguments`; on success hands back the action and its
/// data, cast as the value gate read it and with defaults applied.
pub(crate) fn admit_action<'a>(
    tool: &'a str,
    actions: &'a ValidatedActions,
    arguments: &'a mut Map<String, Value>,
    identity: Option<&Identity>,
    limits: &Limits,
) -> Result<(&'a ValidatedAction, Map<String, Value>), Refusal<'a>> {
    check_arguments(arguments, &ACTION_ARGUMENTS, || {
        help_pointer(Some(tool), None)
    })?;
    let data = match arguments.remove("data") {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    };
    let action = find_action(tool, actions, arguments, &data, identity, limits)?;
    let target = Target {
        tool,
        action: Some(action.name()),
    };
    let missing = missing_scopes(action.scopes(), identity);
    if !missing.is_empty() {
        return Err(Refusal::InsufficientScope {
            target,
            required: action.scopes(),
            missing,
        });
    }
    let digest = action.digest();
    check_required(target, action, &data, limits)?;
    let gate = action.value_gate();
    if let Some(report) = gate.unknown_keys(&data) {
        return Err(Refusal::UnknownParams {
            target,
            report,
            digest,
        });
    }
    let mut data = Value::Object(data);
    if let Err(report) = gate.check_and_cast(&mut data) {
        return Err(Refusal::InvalidValues {
            target,
            report: Box::new(report),
            digest,
            schemas: PropertySchemas::new(action.excerpts(), action.examples(), limits),
        });
    }
    let Value::Object(mut data) = data else {
        unreachable!("data was built as an object above")
    };
    if let Some(defaults) = action.defaults() {
        for (key, value) in defaults {
            if !data.contains_key(key) {
                data.insert(key.clone(), value.clone());
            }
        }
    }
    Ok((action, data))
}

/// The `action` argument's action, or the refusal offering the valid ones, those declaring
/// the most of `data`'s keys first.
#[inline]
fn find_action<'a>(
    tool: &'a str,
    actions: &'a ValidatedActions,
    arguments: &'a Map<String, Value>,
    data: &Map<String, Value>,
    identity: Option<&Identity>,
    limits: &Limits,
) -> Result<&'a ValidatedAction, Refusal<'a>> {
    // The refusals list only the actions the caller may call (visibility follows
    // authorization); a hidden action named exactly is found, and the scope gate answers.
    // Built on refusal only: a valid call never ranks or renders the choices.
    let valid = || -> ActionChoices<'a> {
        let callable = actions
            .iter()
            .filter(|a| missing_scopes(a.scopes(), identity).is_empty())
            .collect();
        ActionChoices::new(callable, data.keys().map(String::as_str), limits)
    };
    let Some(sent) = arguments.get("action") else {
        return Err(Refusal::MissingAction {
            tool,
            valid: valid(),
        });
    };
    let sent = sent.as_str().unwrap_or_default();
    actions.get(sent).ok_or_else(|| Refusal::UnknownAction {
        tool,
        sent,
        valid: valid(),
    })
}

/// The `required` and `required_one_of` gates.
#[inline]
fn check_required<'a>(
    target: Target<'a>,
    action: &'a ValidatedAction,
    data: &Map<String, Value>,
    limits: &Limits,
) -> Result<(), Refusal<'a>> {
    let digest = action.digest();
    let missing: Vec<&str> = action
        .required()
        .iter()
        .filter(|name| !data.contains_key(name.as_str()))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        return Err(Refusal::MissingRequiredFields {
            target,
            missing,
            digest,
            schemas: PropertySchemas::new(action.excerpts(), action.examples(), limits),
        });
    }
    if let Some(groups) = action.required_one_of() {
        let satisfied = groups
            .iter()
            .any(|group| group.iter().all(|name| data.contains_key(name)));
        if !satisfied {
            return Err(Refusal::MissingRequiredGroup {
                target,
                groups,
                absent: absent_members(groups, data),
                digest,
                schemas: PropertySchemas::new(action.excerpts(), action.examples(), limits),
            });
        }
    }
    Ok(())
}

/// The members of `groups` that `data` lacks, each once, in the order the groups name them:
/// the keys whose schemas a `missing_required_group` refusal quotes.
fn absent_members<'a>(groups: &'a [Vec<String>], data: &Map<String, Value>) -> Vec<&'a str> {
    let mut absent: Vec<&'a str> = Vec::new();
    for name in groups.iter().flatten() {
        if !data.contains_key(name) && !absent.contains(&name.as_str()) {
            absent.push(name);
        }
    }
    absent
}

/// The unknown-key and value gates of a plain tool, read from its own input schema.
pub(crate) fn admit_plain<'a>(
    tool: &'a str,
    input: &'a InputSchema,
    digest: &'a Value,
    required: &'a [String],
    arguments: Map<String, Value>,
    identity: Option<&Identity>,
    limits: &Limits,
) -> Result<Map<String, Value>, Refusal<'a>> {
    let target = Target { tool, action: None };
    let missing = missing_scopes(required, identity);
    if !missing.is_empty() {
        return Err(Refusal::InsufficientScope {
            target,
            required,
            missing,
        });
    }
    let gate = input.value_gate();
    if let Some(report) = gate.unknown_keys(&arguments) {
        return Err(Refusal::UnknownParams {
            target,
            report,
            digest,
        });
    }
    let mut arguments = Value::Object(arguments);
    if let Err(report) = gate.check_and_cast(&mut arguments) {
        return Err(Refusal::InvalidValues {
            target,
            report: Box::new(report),
            digest,
            schemas: PropertySchemas::new(input.excerpts(), None, limits),
        });
    }
    match arguments {
        Value::Object(map) => Ok(map),
        _ => unreachable!("arguments were built as an object above"),
    }
}
