//! An action's `examples` checked by the gates a call's `data` meets: an example the gates
//! would refuse is a configuration error, never a published lie.

use serde_json::{Map, Value};

use crate::error::Problem;
use crate::keyset;
use crate::value_gate::ValueGate;

/// What an action declares that its examples are held to.
pub(crate) struct Declared<'a> {
    pub(crate) properties: &'a Map<String, Value>,
    pub(crate) required: &'a [String],
    pub(crate) required_one_of: Option<&'a [Vec<String>]>,
    pub(crate) gate: &'a ValueGate,
}

/// The first example the gates would refuse, in the gates' order (unknown keys, `required`,
/// `required_one_of`, values), as the problem naming it and why.
pub(crate) fn refused(examples: &[Value], declared: &Declared<'_>) -> Option<Problem> {
    examples.iter().enumerate().find_map(|(index, example)| {
        let reason = refusal(example.as_object()?, declared)?;
        Some(Problem::ExampleRefused { index, reason })
    })
}

fn refusal(example: &Map<String, Value>, declared: &Declared<'_>) -> Option<String> {
    if let Some(unknown) = keyset::check(declared.properties, example) {
        return Some(format!("unknown key(s) {}", unknown.listed.join(", ")));
    }
    let missing: Vec<&str> = declared
        .required
        .iter()
        .filter(|name| !example.contains_key(name.as_str()))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        return Some(format!("required field(s) missing: {}", missing.join(", ")));
    }
    if let Some(groups) = declared.required_one_of.filter(|g| !g.is_empty()) {
        let satisfied = groups
            .iter()
            .any(|group| group.iter().all(|name| example.contains_key(name)));
        if !satisfied {
            return Some("no required_one_of group is fully present".into());
        }
    }
    let invalid = declared.gate.check(&Value::Object(example.clone())).err()?;
    Some(invalid.problem_lines().join("; "))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn declared_refusal(example: Value) -> Option<String> {
        let properties =
            json!({"id": {"type": "integer", "minimum": 1}, "title": {"type": "string"}});
        let properties = properties.as_object().cloned().unwrap_or_default();
        let gate = ValueGate::for_properties(&properties).expect("the schema builds");
        let groups = vec![vec!["id".to_owned()], vec!["title".to_owned()]];
        let declared = Declared {
            properties: &properties,
            required: &[],
            required_one_of: Some(&groups),
            gate: &gate,
        };
        refused(&[json!({"id": 1}), example], &declared).map(|p| p.to_string())
    }

    #[test]
    fn an_example_the_gates_admit_passes() {
        assert_eq!(declared_refusal(json!({"title": "Ship"})), None);
    }

    #[test]
    fn each_gate_refuses_the_example_it_would_refuse_from_a_caller() {
        let refused = |e| declared_refusal(e).unwrap_or_default();
        assert_eq!(
            refused(json!({"title": "x", "colour": 1})),
            "examples[1] would be refused by the gates: unknown key(s) /colour"
        );
        assert_eq!(
            refused(json!({})),
            "examples[1] would be refused by the gates: no required_one_of group is fully present"
        );
        assert!(
            refused(json!({"id": 0}))
                .starts_with("examples[1] would be refused by the gates: /id: ")
        );
    }
}
