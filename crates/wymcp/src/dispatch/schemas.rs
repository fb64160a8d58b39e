//! [`PropertySchemas`]: what a value or required-key refusal (`missing_required_fields`,
//! `missing_required_group`, `invalid_values`) quotes of the schema beside the contract's
//! fields: for each place to fix, its property's schema excerpt and the value the first example
//! has there, so a model that did not know the shape learns it without a `help` round
//! (issue 47).
//!
//! The excerpts are cut when the tool is built ([`wymcp_core::excerpt`]); a refusal looks them
//! up by data path and bounds the enum values by [`Limits::max_listed_enum_values`].

use serde_json::{Map, Value, json};
use wymcp_core::bound::{self, MAX_ITEMS};
use wymcp_core::excerpt::Excerpts;

use crate::Limits;

/// The excerpts of one action (or plain tool), its first example, and the enum bound.
#[derive(Debug)]
pub(crate) struct PropertySchemas<'a> {
    excerpts: &'a Excerpts,
    example: Option<&'a Value>,
    max_enum: usize,
}

impl<'a> PropertySchemas<'a> {
    /// `examples`: the action's declared examples, of which the first is quoted.
    pub(crate) fn new(
        excerpts: &'a Excerpts,
        examples: Option<&'a [Value]>,
        limits: &Limits,
    ) -> Self {
        PropertySchemas {
            excerpts,
            example: examples.and_then(<[Value]>::first),
            max_enum: limits.max_listed_enum_values,
        }
    }

    /// `schemas`: for each of the first [`MAX_ITEMS`] of `paths` (data paths, in the order
    /// listed) the gate's keywords reach, `{path, schema, example?}`. Nothing is inserted when
    /// none is reached.
    pub(crate) fn insert_into<'p>(
        &self,
        p: &mut Map<String, Value>,
        paths: impl IntoIterator<Item = &'p str>,
    ) {
        let entries: Vec<Value> = paths
            .into_iter()
            .take(MAX_ITEMS)
            .filter_map(|path| {
                let found = self.excerpts.at(path, self.example, self.max_enum)?;
                let mut entry = json!({"path": bound::echo(path), "schema": found.schema});
                if let Some(example) = found.example {
                    entry["example"] = example;
                }
                Some(entry)
            })
            .collect();
        if !entries.is_empty() {
            p.insert("schemas".into(), Value::Array(entries));
        }
    }
}
