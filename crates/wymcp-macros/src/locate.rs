//! Where a refusal points: the token of the user's literal that the rule names.

use proc_macro2::Span;
use wymcp_core::{ConfigurationError, Problem};

use crate::json::Node;

/// The span of the token a refusal is about, falling back to the nearest enclosing one.
pub(crate) fn span_of(root: &Node, error: &ConfigurationError) -> Span {
    let Some(action) = error.action() else {
        return root.span();
    };
    let Some((key_span, schema)) = root.get(action) else {
        return root.span();
    };
    let field = |name: &str| schema.get(name).map(|(_, v)| v);
    let element = |name: &str, wanted: &[String]| -> Option<Span> {
        let list = field(name)?;
        find_string(list, wanted)
    };
    let span = match error.problem() {
        Problem::ActionNameNewline(_) | Problem::ActionNameEmpty | Problem::DuplicateAction(_) => {
            Some(key_span)
        }
        Problem::UnknownKeys(keys) => keys.first().and_then(|k| schema.get(k)).map(|(s, _)| s),
        Problem::DescriptionNotString(_) | Problem::DescriptionNewline(_) => {
            field("description").map(Node::span)
        }
        Problem::PropertiesNotObject { at, .. }
        | Problem::AdditionalPropertiesInvalid { at, .. } => {
            field("properties").map(|p| navigate(p, at))
        }
        Problem::SchemaBuild(message) => field("properties").map(|p| schema_build_span(p, message)),
        Problem::RequiredNotList(_) | Problem::RequiredDuplicates(_) => {
            field("required").map(Node::span)
        }
        Problem::RequiredUndeclared(names) => element("required", names),
        Problem::RequiredOneOfUndeclared(names) | Problem::RequiredOneOfGroupDuplicates(names) => {
            element("required_one_of", names)
        }
        Problem::RequiredOneOfNotList(_)
        | Problem::RequiredOneOfEmptyGroup
        | Problem::RequiredOneOfDuplicateGroups(_)
        | Problem::RequiredOneOfSuperset { .. } => field("required_one_of").map(Node::span),
        Problem::DefaultsNotObject(_)
        | Problem::DefaultsUndeclared(_)
        | Problem::DefaultsRequired(_) => field("defaults").map(Node::span),
        Problem::DefaultInvalid { property, .. } | Problem::DefaultUnknownKeys { property, .. } => {
            field("defaults")
                .and_then(|d| d.get(property))
                .map(|(_, v)| v.span())
        }
        Problem::NotesNotString(_) => field("notes").map(Node::span),
        Problem::RelatedNotList(_) => field("related").map(Node::span),
        Problem::ScopesInvalid(_) => field("scopes").map(Node::span),
        Problem::ExamplesNotList(_) => field("examples").map(Node::span),
        Problem::ExampleRefused { index, .. } => field("examples").map(|e| match e {
            Node::Array(items, span) => items.get(*index).map_or(*span, Node::span),
            other => other.span(),
        }),
        Problem::RelatedUnknown { unknown, .. } => element("related", unknown),
        _ => None,
    };
    span.unwrap_or_else(|| schema.span())
}

/// The first string element (at any depth) whose value is one of `wanted`.
fn find_string(node: &Node, wanted: &[String]) -> Option<Span> {
    match node {
        Node::Scalar(serde_json::Value::String(s), span) if wanted.contains(s) => Some(*span),
        Node::Array(items, _) => items.iter().find_map(|i| find_string(i, wanted)),
        _ => None,
    }
}

/// Follows a JSON Pointer into the literal as far as it goes.
fn navigate(node: &Node, pointer: &str) -> Span {
    let mut here = node;
    for token in pointer.split('/').skip(1) {
        let token = token.replace("~1", "/").replace("~0", "~");
        let next = match here {
            Node::Object(..) => here.get(&token).map(|(_, v)| v),
            Node::Array(items, _) => token.parse::<usize>().ok().and_then(|i| items.get(i)),
            Node::Scalar(..) => None,
        };
        match next {
            Some(n) => here = n,
            None => break,
        }
    }
    here.span()
}

/// For a schema that does not build: the `format` value the message names, or the `at` path.
fn schema_build_span(properties: &Node, message: &str) -> Span {
    if let Some(span) = find_format(properties, message) {
        return span;
    }
    if let Some(rest) = message.strip_prefix("at /properties") {
        let pointer = rest.split(':').next().unwrap_or_default();
        return navigate(properties, pointer);
    }
    properties.span()
}

fn find_format(node: &Node, message: &str) -> Option<Span> {
    match node {
        Node::Object(entries, _) => entries.iter().find_map(|(k, _, v)| match v {
            Node::Scalar(serde_json::Value::String(name), span)
                if k == "format" && message.contains(&format!("'{name}'")) =>
            {
                Some(*span)
            }
            other => find_format(other, message),
        }),
        Node::Array(items, _) => items.iter().find_map(|i| find_format(i, message)),
        Node::Scalar(..) => None,
    }
}
