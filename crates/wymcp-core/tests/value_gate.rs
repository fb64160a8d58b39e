//! The value gate: problems worded without the sent value, every offending path collected, and
//! whole-number floats cast to integers only where exact (decisions O17).

use serde_json::{Value, json};
use wymcp_core::value_gate::ValueGate;

fn gate(properties: Value) -> ValueGate {
    ValueGate::for_properties(properties.as_object().expect("an object literal"))
        .expect("the schema builds")
}

#[test]
fn whole_floats_are_cast_at_every_depth_the_gate_follows() {
    let g = gate(json!({
        "n": {"type": "integer"},
        "maybe": {"type": ["integer", "null"]},
        "x": {"type": "number"},
        "rows": {"type": "array", "items": {"type": "object", "properties": {"q": {"type": "integer"}}}},
        "odd/key~": {"type": "integer"}
    }));
    let mut data =
        json!({"n": 2.0, "maybe": 3.0, "x": 4.0, "rows": [{"q": 5.0}, {"q": 6}], "odd/key~": 7.0});
    let sent = data.clone();
    assert!(g.check(&data).is_ok());
    g.cast(&mut data);
    let cast = r#"{"maybe":3,"n":2,"odd/key~":7,"rows":[{"q":5},{"q":6}],"x":4.0}"#;
    assert_eq!(data.to_string(), cast);
    // The served path: one walk that casts, then validates the cast value.
    let mut served = sent;
    assert!(g.check_and_cast(&mut served).is_ok());
    assert_eq!(served.to_string(), cast);
}

#[test]
fn casting_follows_additional_properties_and_prefix_items_as_the_gate_does() {
    let g = gate(json!({
        // A declared key follows its own schema, never `additionalProperties`.
        "m": {"type": "object", "properties": {"f": {"type": "number"}},
              "additionalProperties": {"type": "integer"}},
        "t": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "integer"}],
              "items": {"type": "integer"}}
    }));
    let mut data = json!({"m": {"f": 1.0, "extra": 2.0}, "t": [3.0, 4.0, 5.0]});
    let mut served = data.clone();
    assert!(g.check(&data).is_ok());
    g.cast(&mut data);
    let cast = r#"{"m":{"extra":2,"f":1.0},"t":[3.0,4,5]}"#;
    assert_eq!(data.to_string(), cast);
    assert!(g.check_and_cast(&mut served).is_ok());
    assert_eq!(served.to_string(), cast);
    let unfit = json!({"m": {"big": 1e20}, "t": [0.5, 1e20]});
    let report = g.check(&unfit).expect_err("not exactly representable");
    let paths: Vec<&str> = report.listed.iter().map(|i| i.path.as_str()).collect();
    assert_eq!(paths, ["/m/big", "/t/1"]);
    // The served path reports the same problems (the floats that do not fit stay floats).
    assert_eq!(g.check_and_cast(&mut unfit.clone()), Err(report));
}

#[test]
fn a_whole_float_beyond_i64_and_u64_is_a_type_problem() {
    let g = gate(json!({"n": {"type": "integer"}}));
    let report = g
        .check(&json!({"n": 1e20}))
        .expect_err("not exactly representable");
    assert_eq!(report.count, 1);
    assert_eq!(report.listed[0].path, "/n");
    assert_eq!(report.listed[0].problems, ["expected type integer"]);
}

#[test]
fn problems_name_the_rule_not_the_value() {
    let g = gate(json!({
        "when": {"type": "string", "format": "date-time"},
        "color": {"enum": ["red", "blue"]},
        "n": {"type": "integer", "minimum": 1},
        "code": {"type": "string", "pattern": "^[A-Z]+$"},
        "tags": {"type": "array", "maxItems": 1, "uniqueItems": true}
    }));
    let sent = json!({"when": "yesterday", "color": "secretcolor", "n": 0, "code": "lower", "tags": ["a", "a"]});
    let report = g.check(&sent).expect_err("every value offends");
    assert_eq!(report.count, 5);
    let rendered: Vec<(String, Vec<String>)> = report
        .listed
        .iter()
        .map(|i| (i.path.clone(), i.problems.clone()))
        .collect();
    assert_eq!(
        rendered,
        vec![
            (
                "/code".to_owned(),
                vec!["must match pattern ^[A-Z]+$".to_owned()]
            ),
            (
                "/color".to_owned(),
                vec!["must be one of the allowed values".to_owned()]
            ),
            ("/n".to_owned(), vec!["must be >= 1".to_owned()]),
            (
                "/tags".to_owned(),
                vec![
                    "must have <= 1 items".to_owned(),
                    "items must be unique".to_owned()
                ]
            ),
            (
                "/when".to_owned(),
                vec!["must be a valid date-time".to_owned()]
            ),
        ]
    );
    let text = format!("{report:?}");
    for value in ["yesterday", "secretcolor", "lower"] {
        assert!(!text.contains(value), "{value} must not be quoted");
    }
}

#[test]
fn null_is_a_value_like_any_other() {
    let g = gate(json!({"color": {"type": "string"}, "opt": {"type": ["string", "null"]}}));
    let report = g
        .check(&json!({"color": null}))
        .expect_err("null is not a string");
    assert_eq!(report.listed[0].problems, ["expected type string"]);
    assert!(g.check(&json!({"opt": null})).is_ok());
}

#[test]
fn fifteen_offences_list_ten_in_pointer_order_and_count_fifteen() {
    let props: serde_json::Map<String, Value> = (0..15)
        .map(|i| (format!("p{i:02}"), json!({"type": "integer"})))
        .collect();
    let g = ValueGate::for_properties(&props).expect("builds");
    let data: serde_json::Map<String, Value> =
        (0..15).map(|i| (format!("p{i:02}"), json!("x"))).collect();
    let report = g.check(&Value::Object(data)).expect_err("all offend");
    assert_eq!(report.count, 15);
    let paths: Vec<&str> = report.listed.iter().map(|i| i.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/p00", "/p01", "/p02", "/p03", "/p04", "/p05", "/p06", "/p07", "/p08", "/p09"
        ]
    );
}
