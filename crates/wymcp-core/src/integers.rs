//! Whole-number floats where a schema wants an integer: found and cast along the gate's
//! keywords (`properties`, `additionalProperties` as a schema, `prefixItems`, `items`).
//!
//! The schema is read once, when the gate is built, into an [`IntegerPlan`]: the parts of the
//! schema from which an `integer` can be reached. A call then walks only those parts of its
//! data, reads no schema text, and renders a data path only for a value it reports.

use serde_json::{Number, Value};

use crate::pointer::{self, Step};

/// The subschemas of a gate's schema that lead to an `integer`, pruned to exactly those.
#[derive(Debug)]
pub(crate) struct IntegerPlan {
    /// This schema's `type` admits integers but not all numbers.
    wants_integer: bool,
    /// The `properties` whose subschema leads to an integer, in name order.
    properties: Vec<(String, IntegerPlan)>,
    /// `additionalProperties` as a schema, when it leads to an integer.
    additional: Option<Box<IntegerPlan>>,
    /// Every name `properties` declares, when `additional` is set: a declared key never falls
    /// to `additionalProperties`, even when its own schema leads nowhere.
    declared: Vec<String>,
    /// `prefixItems`, position by position (`None`: that position leads nowhere).
    prefix: Vec<Option<IntegerPlan>>,
    /// `items` as a schema, when it leads to an integer.
    items: Option<Box<IntegerPlan>>,
}

impl IntegerPlan {
    /// The plan of a schema, or `None` when no integer can be reached from it.
    pub(crate) fn of(schema: &Value) -> Option<IntegerPlan> {
        let map = schema.as_object()?;
        let declared_properties = map.get("properties").and_then(Value::as_object);
        let properties: Vec<(String, IntegerPlan)> = declared_properties
            .into_iter()
            .flatten()
            .filter_map(|(name, sub)| Some((name.clone(), IntegerPlan::of(sub)?)))
            .collect();
        let additional = map
            .get("additionalProperties")
            .filter(|a| a.is_object())
            .and_then(IntegerPlan::of)
            .map(Box::new);
        let declared = match (&additional, declared_properties) {
            (Some(_), Some(names)) => names.keys().cloned().collect(),
            _ => Vec::new(),
        };
        let prefix: Vec<Option<IntegerPlan>> = map
            .get("prefixItems")
            .and_then(Value::as_array)
            .map(|p| p.iter().map(IntegerPlan::of).collect())
            .unwrap_or_default();
        let items = map
            .get("items")
            .filter(|i| i.is_object())
            .and_then(IntegerPlan::of)
            .map(Box::new);
        let plan = IntegerPlan {
            wants_integer: wants_integer(schema),
            properties,
            additional,
            declared,
            prefix,
            items,
        };
        plan.leads_anywhere().then_some(plan)
    }

    fn leads_anywhere(&self) -> bool {
        self.wants_integer
            || !self.properties.is_empty()
            || self.additional.is_some()
            || self.prefix.iter().any(Option::is_some)
            || self.items.is_some()
    }

    /// The plan a value under `key` of an object follows, if any.
    fn for_key(&self, key: &str) -> Option<&IntegerPlan> {
        match self.properties.iter().find(|(name, _)| name == key) {
            Some((_, plan)) => Some(plan),
            None if self.declared.iter().any(|name| name == key) => None,
            None => self.additional.as_deref(),
        }
    }

    /// The plan the item at `index` of an array follows, if any.
    fn for_index(&self, index: usize) -> Option<&IntegerPlan> {
        match self.prefix.get(index) {
            Some(plan) => plan.as_ref(),
            None => self.items.as_deref(),
        }
    }

    /// Whether any whole-number float that should be an integer does not fit `i64`/`u64`.
    pub(crate) fn has_inexact(&self, value: &Value) -> bool {
        let mut any = false;
        self.visit(value, &mut Vec::new(), &mut |v, _| {
            any |= matches!(whole_float(v), Some(None));
        });
        any
    }

    /// The data paths of the whole-number floats that should be integers but do not fit.
    pub(crate) fn inexact_paths(&self, value: &Value) -> Vec<String> {
        let mut paths = Vec::new();
        self.visit(value, &mut Vec::new(), &mut |v, steps| {
            if matches!(whole_float(v), Some(None)) {
                paths.push(pointer::render(steps));
            }
        });
        paths
    }

    /// Visits every value this plan says should be an integer, with the steps that led there.
    fn visit<'v>(
        &self,
        value: &'v Value,
        steps: &mut Vec<Step<'v>>,
        f: &mut dyn FnMut(&Value, &[Step<'v>]),
    ) {
        if self.wants_integer {
            f(value, steps);
        }
        match value {
            Value::Object(object) if self.additional.is_none() => {
                // Only declared properties can lead anywhere: look those up.
                for (name, plan) in &self.properties {
                    if let Some((key, item)) = object.get_key_value(name) {
                        steps.push(Step::Key(key));
                        plan.visit(item, steps, f);
                        steps.pop();
                    }
                }
            }
            Value::Object(object) => {
                for (key, item) in object {
                    if let Some(plan) = self.for_key(key) {
                        steps.push(Step::Key(key));
                        plan.visit(item, steps, f);
                        steps.pop();
                    }
                }
            }
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    if let Some(plan) = self.for_index(index) {
                        steps.push(Step::Index(index));
                        plan.visit(item, steps, f);
                        steps.pop();
                    }
                }
            }
            _ => {}
        }
    }

    /// Casts every whole-number float this plan says should be an integer, in place. Returns
    /// whether one of them does not fit `i64`/`u64` (it stays a float: a type problem).
    pub(crate) fn cast(&self, value: &mut Value) -> bool {
        if self.wants_integer {
            match whole_float(value) {
                Some(Some(exact)) => {
                    *value = Value::Number(exact);
                    return false;
                }
                Some(None) => return true,
                None => {}
            }
        }
        let mut inexact = false;
        match value {
            Value::Object(object) if self.additional.is_none() => {
                for (name, plan) in &self.properties {
                    if let Some(item) = object.get_mut(name) {
                        inexact |= plan.cast(item);
                    }
                }
            }
            Value::Object(object) => {
                for (key, item) in object.iter_mut() {
                    if let Some(plan) = self.for_key(key) {
                        inexact |= plan.cast(item);
                    }
                }
            }
            Value::Array(items) => {
                for (index, item) in items.iter_mut().enumerate() {
                    if let Some(plan) = self.for_index(index) {
                        inexact |= plan.cast(item);
                    }
                }
            }
            _ => {}
        }
        inexact
    }
}

/// Whether a schema's `type` admits integers but not all numbers.
fn wants_integer(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(types)) => {
            types.iter().any(|t| t == "integer") && !types.iter().any(|t| t == "number")
        }
        _ => false,
    }
}

/// A whole-number float (at a place that wants an integer): `Some(exact)` when it can be cast,
/// `Some(None)` when it cannot (a type problem), `None` for any other value.
fn whole_float(value: &Value) -> Option<Option<Number>> {
    match value {
        Value::Number(n) if n.is_f64() && n.as_f64().is_some_and(|f| f.fract() == 0.0) => {
            Some(exact_integer(n))
        }
        _ => None,
    }
}

/// The exact integer a whole-number float stands for, when it fits `i64`/`u64`.
fn exact_integer(n: &Number) -> Option<Number> {
    let f = n.as_f64()?;
    if n.is_f64() && f.fract() == 0.0 {
        if f >= -(2f64.powi(63)) && f < 2f64.powi(63) {
            return Some(Number::from(f as i64));
        }
        if (0.0..2f64.powi(64)).contains(&f) {
            return Some(Number::from(f as u64));
        }
    }
    None
}
