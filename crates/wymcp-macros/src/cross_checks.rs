//! Checks across an action's parts that one action alone cannot make: `related` naming the
//! tool's other actions, and a typed action's extras naming its struct's properties.

use proc_macro2::{Span, TokenStream};
use serde_json::Value;
use wymcp_core::{ConfigurationError, Problem};

use crate::json::Node;
use crate::typed::{Action, Payload};

/// Every action's `related` names actions of the tool, by the runtime's rule.
pub(crate) fn check_related<'a, 'b: 'a>(
    actions: impl IntoIterator<Item = &'a Action<'b>> + Clone,
) -> syn::Result<()> {
    let mut names: Vec<&str> = actions
        .clone()
        .into_iter()
        .map(|a| a.name.as_str())
        .collect();
    names.sort_unstable();
    for action in actions {
        let Some(related) = action.extras.get("related").and_then(Value::as_array) else {
            continue;
        };
        let related: Vec<String> = related
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
        if let Some(problem) = wymcp_core::related_offence(&related, &names) {
            let error = ConfigurationError::new(problem).in_action(action.name.clone());
            let span = action.nodes.iter().find(|(k, _, _)| k == "related").map_or(
                action.name_span,
                |(_, span, node)| {
                    let Problem::RelatedUnknown { unknown, .. } = error.problem() else {
                        return *span;
                    };
                    first_string(node, unknown).unwrap_or(*span)
                },
            );
            return Err(syn::Error::new(span, error.to_string()));
        }
    }
    Ok(())
}

fn first_string(node: &Node, wanted: &[String]) -> Option<Span> {
    match node {
        Node::Scalar(Value::String(s), span) if wanted.contains(s) => Some(*span),
        Node::Array(items, _) => items.iter().find_map(|i| first_string(i, wanted)),
        _ => None,
    }
}

impl Action<'_> {
    /// For a struct payload: compile-time checks that every property the `required_one_of`
    /// groups and the examples name is one of the struct's (when `#[wymcp::data]` recorded
    /// them), each pointing at the name's token.
    pub(crate) fn field_checks(&self) -> TokenStream {
        let Payload::Struct(ty) = self.payload else {
            return TokenStream::new();
        };
        let mut checks = TokenStream::new();
        for (key, _, node) in &self.nodes {
            match (key.as_str(), node) {
                ("required_one_of", Node::Array(groups, _)) => {
                    for group in groups {
                        let Node::Array(names, _) = group else {
                            continue;
                        };
                        for name in names {
                            if let Node::Scalar(Value::String(name), span) = name {
                                checks.extend(crate::fields::check(
                                    ty,
                                    name,
                                    "required_one_of",
                                    *span,
                                ));
                            }
                        }
                    }
                }
                ("examples", Node::Array(examples, _)) => {
                    for example in examples {
                        let Node::Object(entries, _) = example else {
                            continue;
                        };
                        for (name, span, _) in entries {
                            checks.extend(crate::fields::check(ty, name, "an example", *span));
                        }
                    }
                }
                _ => {}
            }
        }
        checks
    }
}
