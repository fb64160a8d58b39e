//! [`ActionChoices`]: the actions a `missing_action` or `unknown_action` refusal offers, each
//! with its description and signature, so the model writes the call without a `help` round.
//! Bounded by [`Limits::max_listed_actions`] and [`Limits::max_action_signature`].

use serde_json::{Map, Value, json};
use wymcp_core::ValidatedAction;
use wymcp_core::bound;

use crate::Limits;

/// The actions a caller may call, in name order (for `valid_actions`) and in the order the
/// refusal lists them: the actions declaring the most of the sent data keys first.
#[derive(Debug)]
pub(crate) struct ActionChoices<'a> {
    ranked: Vec<&'a ValidatedAction>,
    max_listed: usize,
    max_chars: usize,
}

impl<'a> ActionChoices<'a> {
    /// `actions` in name order; `sent` the call's data keys (none for `help`). An action
    /// that declares more of the sent keys ranks before one that declares fewer; ties, and
    /// the actions that declare none, stay in name order.
    pub(crate) fn new<'k>(
        actions: Vec<&'a ValidatedAction>,
        sent: impl Iterator<Item = &'k str> + Clone,
        limits: &Limits,
    ) -> Self {
        let mut scored: Vec<(usize, &'a ValidatedAction)> = actions
            .into_iter()
            .map(|a| (a.declared_count(sent.clone()), a))
            .collect();
        // Stable: the name order survives among equal scores.
        scored.sort_by_key(|(score, _)| std::cmp::Reverse(*score));
        ActionChoices {
            ranked: scored.into_iter().map(|(_, a)| a).collect(),
            max_listed: limits.max_listed_actions,
            max_chars: limits.max_action_signature,
        }
    }

    /// The action names, sorted ascending (the contract's `valid_actions`).
    pub(crate) fn names(&self) -> Vec<&'a str> {
        let mut names: Vec<&'a str> = self.ranked.iter().map(|a| a.name()).collect();
        names.sort_unstable();
        names
    }

    /// Whether there is no action to offer.
    pub(crate) fn is_empty(&self) -> bool {
        self.ranked.is_empty()
    }

    /// `actions`: the first [`Limits::max_listed_actions`] as `{name, description,
    /// signature}`, each text cut to [`Limits::max_action_signature`] characters, and
    /// `actions_omitted` when some were left out.
    pub(crate) fn insert_into(&self, p: &mut Map<String, Value>) {
        let listed: Vec<Value> = self
            .ranked
            .iter()
            .take(self.max_listed)
            .map(|a| {
                json!({
                    "name": a.name(),
                    "description": bound::echo_within(a.description(), self.max_chars),
                    "signature": bound::echo_within(a.signature(), self.max_chars),
                })
            })
            .collect();
        let omitted = self.ranked.len().saturating_sub(listed.len());
        p.insert("actions".into(), Value::Array(listed));
        if omitted > 0 {
            p.insert("actions_omitted".into(), json!(omitted));
            p.insert(
                "actions_note".into(),
                Value::String(format!(
                    "{omitted} more action(s) not listed here: the limit is {} \
                     (Limits::max_listed_actions); help lists them all",
                    self.max_listed
                )),
            );
        }
    }
}
