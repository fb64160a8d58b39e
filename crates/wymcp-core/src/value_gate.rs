//! The value gate: every value of a call's `data` checked against the action's JSON Schema
//! (draft 2020-12, formats asserted), every problem collected, none of them quoting a sent value.
//!
//! Validators are compiled once, when the tool is built, with remote `$ref` retrieval disabled:
//! nothing is ever fetched. An unknown `format` name is a configuration error, so every format a
//! schema uses is asserted. The format catalogue is the `jsonschema` crate's: `date`,
//! `date-time`, `time`, `duration`, `email`, `hostname`, `ipv4`, `ipv6`, `uri`,
//! `uri-reference`, `iri`, `iri-reference`, `uri-template`, `uuid`, `regex`, `json-pointer`,
//! `relative-json-pointer`, and with the `idn` feature (wymcp's `idn`; jsonschema's `idna`)
//! `idn-email` and `idn-hostname`. Without it a schema naming either is refused, the refusal
//! naming the feature.
//!
//! # How a problem is worded
//!
//! A problem names the rule the value broke, with schema-side values only (`must be >= 1`,
//! `must be a valid date-time`, `expected type integer`), never the value the caller sent: the
//! reader is an LLM that already has its call, and an error body may not spend its budget on
//! echoing it. Each text still passes through [`bound::echo`], since a schema
//! pattern can be long.
//!
//! # Whole-number floats
//!
//! A float with no fractional part, sent where the schema's `type` admits `integer` but not
//! `number`, reaches the tool as an integer (`2.0` arrives as `2`), when it is exactly
//! representable as `i64`/`u64`; otherwise it is a type problem. Casting follows the same
//! keywords as the unknown-key gate.

use std::collections::{BTreeMap, BTreeSet};

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{Draft, Validator};
use serde_json::{Map, Value};

use crate::bound::{self, MAX_ITEMS};
use crate::integers::IntegerPlan;
use crate::keyset::{KeyPlan, UnknownKeys};
use crate::pointer;

/// The validator options every schema wymcp serves is built with.
pub fn options() -> jsonschema::ValidationOptions<'static> {
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .should_validate_formats(true)
        .should_ignore_unknown_formats(false)
        .offline()
}

/// Builds a schema, rendering a refusal as text that says what the build stopped on.
pub fn build(schema: &Value) -> Result<Validator, String> {
    options().build(schema).map_err(|e| {
        let at = e.instance_path().to_string();
        let text = with_idn_hint(e.to_string());
        if at.is_empty() {
            bound::echo(&text)
        } else {
            bound::echo(&format!("at {at}: {text}"))
        }
    })
}

/// An unknown-format refusal of `idn-email` or `idn-hostname` says which feature serves them
/// (a build without `idn` does not know them); any other text is returned as it is.
fn with_idn_hint(text: String) -> String {
    if cfg!(feature = "idn") || !IDN_FORMATS.iter().any(|f| text.contains(f)) {
        return text;
    }
    format!("{text} (the formats idn-email and idn-hostname need wymcp's `idn` feature)")
}

/// How jsonschema names the IDN formats in an unknown-format refusal.
const IDN_FORMATS: [&str; 2] = [
    "Unknown format: 'idn-email'",
    "Unknown format: 'idn-hostname'",
];

/// One offending data path and its problems.
#[derive(Debug, Clone, PartialEq)]
pub struct Invalid {
    /// The data path (JSON Pointer), bounded.
    pub path: String,
    /// What is wrong there, each text bounded and free of the sent value.
    pub problems: Vec<String>,
}

/// What the value gate found: a bounded report of every offending path.
#[derive(Debug, Clone, PartialEq)]
pub struct InvalidValues {
    /// The first [`MAX_ITEMS`] offending paths in sort order, with their problems.
    pub listed: Vec<Invalid>,
    /// How many paths offend in all (when [`complete`](Self::complete)), or how many were
    /// found before the report stopped.
    pub count: usize,
    /// Whether every offending path was counted: `false` when `data` held more than
    /// [`MAX_REPORTED_VALUES`] values and only the first problem was reported.
    pub complete: bool,
    /// The data paths whose property's schema a refusal quotes ([`excerpt`](crate::excerpt)):
    /// each value of the wrong type, outside its `enum`, failing its `format`, or outside its
    /// range (`minimum`, `maximum` and their exclusive forms, `minLength`, `maxLength`,
    /// `pattern`, `minItems`, `maxItems`), matching none of its `oneOf` or `anyOf`
    /// alternatives, and each missing required property (its own path,
    /// below the object that lacks it). The first [`MAX_ITEMS`] in sort order, bounded.
    pub schema_paths: Vec<String>,
}

/// Most JSON values (every object, array and scalar, at any depth) of a failing `data` for
/// which the value gate counts every problem; above it, the first problem alone is reported.
pub const MAX_REPORTED_VALUES: usize = 50_000;

/// Whether `value` holds more than `max` JSON values (stops counting past `max`).
fn more_values_than(value: &Value, max: usize) -> bool {
    fn count(value: &Value, budget: &mut usize) -> bool {
        if *budget == 0 {
            return true;
        }
        *budget -= 1;
        match value {
            Value::Array(items) => items.iter().any(|item| count(item, budget)),
            Value::Object(map) => map.values().any(|item| count(item, budget)),
            _ => false,
        }
    }
    let mut budget = max;
    count(value, &mut budget)
}

impl InvalidValues {
    /// Every listed problem as one line, `"<path>: <problem>"`.
    pub fn problem_lines(self) -> Vec<String> {
        self.listed
            .into_iter()
            .flat_map(|i| {
                let path = i.path;
                i.problems.into_iter().map(move |p| format!("{path}: {p}"))
            })
            .collect()
    }
}

/// A compiled value gate for one schema: the validator, the schema it was built from, and
/// where in it an integer can be reached (for the integer cast).
#[derive(Debug)]
pub struct ValueGate {
    validator: Validator,
    schema: Value,
    /// `None` when no schema along the gate's keywords says `integer`: then no float can need
    /// casting. Boxed: most gates have none, and the gate sits inside every tool.
    integers: Option<Box<IntegerPlan>>,
    /// The unknown-key gate's reading of the same schema (boxed, like `integers`: the gate
    /// sits inside every tool).
    keys: Box<KeyPlan>,
}

impl ValueGate {
    /// Compiles the gate for an action's `properties` (the root object schema around them).
    pub fn for_properties(properties: &Map<String, Value>) -> Result<Self, String> {
        let mut root = Map::new();
        root.insert("type".into(), Value::String("object".into()));
        root.insert("properties".into(), Value::Object(properties.clone()));
        Self::for_schema(Value::Object(root))
    }

    /// Compiles the gate for a whole schema.
    pub fn for_schema(schema: Value) -> Result<Self, String> {
        let validator = build(&schema)?;
        let integers = IntegerPlan::of(&schema).map(Box::new);
        let keys = Box::new(KeyPlan::of(&schema));
        Ok(ValueGate {
            validator,
            schema,
            integers,
            keys,
        })
    }

    /// The schema the gate was built from.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// The unknown-key gate on the same schema (see [`keyset`](crate::keyset)): every key of
    /// `data` outside a closed object, or `None`.
    pub fn unknown_keys(&self, data: &Map<String, Value>) -> Option<UnknownKeys> {
        self.keys.check(data)
    }

    /// Whether `value` passes (no report built).
    pub fn is_valid(&self, value: &Value) -> bool {
        self.validator.is_valid(value)
            && !self
                .integers
                .as_ref()
                .is_some_and(|plan| plan.has_inexact(value))
    }

    /// Checks `value`, collecting every problem, or `Ok(())` when it passes.
    pub fn check(&self, value: &Value) -> Result<(), InvalidValues> {
        if self.is_valid(value) {
            return Ok(());
        }
        Err(self.report(value))
    }

    /// [`check`](Self::check) and [`cast`](Self::cast) in one walk of the integers: casts
    /// first, then validates the cast value (an integer and its whole-number float pass and
    /// fail the same keywords). On a refusal the value may be partly cast.
    ///
    /// ```
    /// use serde_json::json;
    /// use wymcp_core::value_gate::ValueGate;
    ///
    /// let gate = ValueGate::for_schema(json!({
    ///     "type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}
    /// })).unwrap();
    /// let mut data = json!({"n": 2.0});
    /// gate.check_and_cast(&mut data).unwrap();
    /// assert_eq!(data, json!({"n": 2}));
    /// assert!(data["n"].is_i64());
    /// assert!(gate.check_and_cast(&mut json!({"n": 0.0})).is_err());
    /// ```
    pub fn check_and_cast(&self, value: &mut Value) -> Result<(), InvalidValues> {
        let inexact = self.integers.as_ref().is_some_and(|plan| plan.cast(value));
        if !inexact && self.validator.is_valid(value) {
            return Ok(());
        }
        Err(self.report(value))
    }

    /// Every problem of a value that does not pass, collected and bounded (the first alone
    /// when the value is too large to report whole; see the module's cost note).
    fn report(&self, value: &Value) -> InvalidValues {
        if more_values_than(value, MAX_REPORTED_VALUES) {
            return self.first_problem(value);
        }
        let mut by_path: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut schema_paths = BTreeSet::new();
        for error in self.validator.iter_errors(value) {
            let text = bound::echo(&problem_text(error.kind()));
            let path = error.instance_path().to_string();
            if let Some(at) = schema_path(&path, error.kind()) {
                schema_paths.insert(at);
            }
            let entry = by_path.entry(path).or_default();
            if !entry.contains(&text) {
                entry.push(text);
            }
        }
        let inexact = self.integers.as_ref().map(|plan| plan.inexact_paths(value));
        for path in inexact.into_iter().flatten() {
            schema_paths.insert(path.clone());
            let entry = by_path.entry(path).or_default();
            let text = "expected type integer".to_owned();
            if !entry.contains(&text) {
                entry.push(text);
            }
        }
        let count = by_path.len();
        let listed = by_path
            .into_iter()
            .take(MAX_ITEMS)
            .map(|(path, problems)| Invalid {
                path: bound::echo(&path),
                problems,
            })
            .collect();
        InvalidValues {
            listed,
            count,
            complete: true,
            schema_paths: bounded_paths(schema_paths),
        }
    }

    /// The report of a value too large to report whole: the first problem the validator meets.
    #[cold]
    fn first_problem(&self, value: &Value) -> InvalidValues {
        let (path, text, at) = match self.validator.validate(value) {
            Err(error) => {
                let path = error.instance_path().to_string();
                let at = schema_path(&path, error.kind());
                (path, bound::echo(&problem_text(error.kind())), at)
            }
            // Valid by the validator: the problem is an inexact integer.
            Ok(()) => {
                let paths = self.integers.as_ref().map(|plan| plan.inexact_paths(value));
                let first = paths.into_iter().flatten().next().unwrap_or_default();
                (
                    first.clone(),
                    "expected type integer".to_owned(),
                    Some(first),
                )
            }
        };
        InvalidValues {
            listed: vec![Invalid {
                path: bound::echo(&path),
                problems: vec![text],
            }],
            count: 1,
            complete: false,
            schema_paths: bounded_paths(at),
        }
    }

    /// Casts whole-number floats to integers where the schema asks for an integer (only call on
    /// a value that passed [`check`](Self::check)).
    pub fn cast(&self, value: &mut Value) {
        if let Some(plan) = &self.integers {
            plan.cast(value);
        }
    }
}

/// The data path whose property's schema a refusal of `kind` at `path` quotes: the value's own
/// for a problem of its type, its allowed values, its format or its range (bounds, lengths,
/// pattern, item counts) or its `oneOf`/`anyOf` alternatives (the excerpt lists alternatives
/// of constants as its `enum`), the missing property's for a required one, none for the others
/// (their rule is not in the excerpt: `not`, `uniqueItems`, `multipleOf`, `const`, ...).
fn schema_path(path: &str, kind: &ValidationErrorKind) -> Option<String> {
    use ValidationErrorKind as K;
    match kind {
        K::Type { .. }
        | K::Enum { .. }
        | K::Format { .. }
        | K::Minimum { .. }
        | K::ExclusiveMinimum { .. }
        | K::Maximum { .. }
        | K::ExclusiveMaximum { .. }
        | K::MinLength { .. }
        | K::MaxLength { .. }
        | K::Pattern { .. }
        | K::MinItems { .. }
        | K::MaxItems { .. }
        | K::OneOfNotValid { .. }
        | K::AnyOf { .. } => Some(path.to_owned()),
        K::Required {
            property: Value::String(name),
        } => Some(pointer::push(path, name)),
        _ => None,
    }
}

/// The first [`MAX_ITEMS`] paths in sort order, each bounded.
fn bounded_paths(paths: impl IntoIterator<Item = String>) -> Vec<String> {
    paths
        .into_iter()
        .take(MAX_ITEMS)
        .map(|p| bound::echo(&p))
        .collect()
}

/// Words one validation error without quoting the instance.
pub fn problem_text(kind: &ValidationErrorKind) -> String {
    use ValidationErrorKind as K;
    match kind {
        K::Type { kind } => format!("expected type {}", type_names(kind)),
        K::Enum { .. } => "must be one of the allowed values".into(),
        K::Constant { .. } => "must equal the schema's constant".into(),
        K::Minimum { limit } => format!("must be >= {limit}"),
        K::ExclusiveMinimum { limit } => format!("must be > {limit}"),
        K::Maximum { limit } => format!("must be <= {limit}"),
        K::ExclusiveMaximum { limit } => format!("must be < {limit}"),
        K::MultipleOf { multiple_of } => format!("must be a multiple of {multiple_of}"),
        K::MinLength { limit } => format!("length must be >= {limit}"),
        K::MaxLength { limit } => format!("length must be <= {limit}"),
        K::Pattern { pattern } => format!("must match pattern {pattern}"),
        K::Format { format } => format!("must be a valid {format}"),
        K::MinItems { limit } => format!("must have >= {limit} items"),
        K::MaxItems { limit } => format!("must have <= {limit} items"),
        K::AdditionalItems { limit } => format!("must have <= {limit} items"),
        K::UniqueItems => "items must be unique".into(),
        K::Contains => "must contain an item matching the schema in contains".into(),
        K::MinProperties { limit } => format!("must have >= {limit} properties"),
        K::MaxProperties { limit } => format!("must have <= {limit} properties"),
        K::Required { property } => match property {
            Value::String(name) => format!("missing required property '{name}'"),
            other => format!("missing required property {other}"),
        },
        K::AdditionalProperties { .. } => "has properties the schema does not allow".into(),
        K::UnevaluatedProperties { .. } => "has properties the schema does not evaluate".into(),
        K::UnevaluatedItems { .. } => "has items the schema does not evaluate".into(),
        K::PropertyNames { .. } => "has a property name the schema refuses".into(),
        K::OneOfNotValid { .. } | K::OneOfMultipleValid { .. } => {
            "must match exactly one schema in oneOf".into()
        }
        K::AnyOf { .. } => "must match at least one schema in anyOf".into(),
        K::Not { .. } => "must not match the schema in not".into(),
        K::FalseSchema => "no value is allowed here".into(),
        K::ContentEncoding { content_encoding } => {
            format!("must be valid {content_encoding} content")
        }
        K::ContentMediaType { content_media_type } => {
            format!("must be valid {content_media_type} content")
        }
        K::Custom { keyword, .. } => format!("fails the schema's {keyword} keyword"),
        K::Referencing(_) => "could not be checked: a schema reference does not resolve".into(),
        _ => "does not match the schema".into(),
    }
}

fn type_names(kind: &TypeKind) -> String {
    match kind {
        TypeKind::Single(t) => t.to_string(),
        TypeKind::Multiple(set) => {
            let names: Vec<String> = set.iter().map(|t| t.to_string()).collect();
            names.join(" or ")
        }
    }
}
