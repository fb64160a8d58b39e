//! The unknown-key gate's reading of schemas (decisions O5): which keywords it follows, which
//! objects it closes, and that `close_properties` publishes exactly that closure.

use serde_json::{Map, Value, json};
use wymcp_core::keyset::{self, ANY_STRING_KEY};

fn obj(v: Value) -> Map<String, Value> {
    v.as_object().cloned().expect("an object literal")
}

fn unknown(props: Value, data: Value) -> Option<keyset::UnknownKeys> {
    keyset::check(&obj(props), &obj(data))
}

#[test]
fn data_itself_is_closed() {
    let r = unknown(json!({"a": {}}), json!({"a": 1, "b": 2})).expect("b is unknown");
    assert_eq!(r.listed, ["/b"]);
    assert_eq!(r.count, 1);
    assert_eq!(r.allowed.get(""), Some(&vec!["a".to_owned()]));
}

#[test]
fn prefix_items_then_items_are_followed() {
    let props = json!({"pair": {
        "type": "array",
        "prefixItems": [{"type": "object", "properties": {"x": {}}}],
        "items": {"type": "object", "properties": {"y": {}}}
    }});
    let r = unknown(props, json!({"pair": [{"x": 1, "q": 1}, {"y": 1, "x": 2}]}))
        .expect("two unknown keys");
    assert_eq!(r.listed, ["/pair/0/q", "/pair/1/x"]);
    assert_eq!(r.allowed["/pair/0"], ["x"]);
    assert_eq!(r.allowed["/pair/1"], ["y"]);
}

#[test]
fn keywords_outside_the_rule_leave_subtrees_free_form() {
    let props = json!({"choice": {"anyOf": [{"type": "object", "properties": {"a": {}}}]}});
    assert!(unknown(props, json!({"choice": {"zzz": 1}})).is_none());
}

#[test]
fn additional_properties_true_opens_and_a_schema_closes_values() {
    let props = json!({
        "open": {"type": "object", "properties": {"a": {}}, "additionalProperties": true},
        "labels": {"type": "object", "additionalProperties": {"type": "object", "properties": {"v": {}}}}
    });
    assert!(unknown(props.clone(), json!({"open": {"anything": 1}})).is_none());
    let r = unknown(props, json!({"labels": {"k/~": {"v": 1, "w": 2}}})).expect("w is unknown");
    assert_eq!(r.listed, ["/labels/k~1~0/w"]);
    assert_eq!(r.allowed["/labels/k~1~0"], ["v"]);
}

#[test]
fn no_properties_and_additional_properties_false_admits_no_key() {
    let props = json!({"empty": {"type": "object", "additionalProperties": false}});
    let r = unknown(props, json!({"empty": {"a": 1}})).expect("a is unknown");
    assert_eq!(r.listed, ["/empty/a"]);
    assert_eq!(r.allowed["/empty"], Vec::<String>::new());
}

#[test]
fn values_of_other_types_are_not_read() {
    let props = json!({"addr": {"type": "object", "properties": {"zip": {}}}});
    assert!(unknown(props, json!({"addr": "a string"})).is_none());
}

#[test]
fn listed_keys_are_the_first_ten_in_byte_order_with_their_holders_only() {
    let props = json!({"a": {"type": "object", "properties": {}}, "b": {"type": "object", "properties": {}}});
    let mut data = Map::new();
    let mut a = Map::new();
    for i in 0..12 {
        a.insert(format!("k{i:02}"), json!(1));
    }
    data.insert("a".into(), Value::Object(a));
    data.insert("b".into(), json!({"z": 1}));
    let r = keyset::check(&obj(props), &data).expect("unknown keys");
    assert_eq!(r.count, 13);
    assert_eq!(r.listed.len(), 10);
    assert_eq!(r.listed[0], "/a/k00");
    assert_eq!(r.listed[9], "/a/k09");
    assert_eq!(r.allowed.len(), 1, "only /a holds a listed key");
}

#[test]
fn any_string_key_is_named_where_an_additional_properties_schema_admits_keys() {
    // A holder that is closed never admits extra keys; the marker is named only where an
    // additionalProperties schema or `true` stands, so no closed holder lists it.
    let props = json!({"m": {"type": "object", "properties": {"a": {}}}});
    let r = unknown(props, json!({"m": {"b": 1}})).expect("b is unknown");
    assert!(!r.allowed["/m"].contains(&ANY_STRING_KEY.to_owned()));
}

#[test]
fn closure_is_published_along_the_same_keywords() {
    let props = json!({
        "addr": {"type": "object", "properties": {"zip": {}}},
        "open": {"type": "object", "properties": {"a": {}}, "additionalProperties": true},
        "list": {"type": "array", "items": {"type": "object", "properties": {"sku": {}}}},
        "pair": {"prefixItems": [{"type": "object", "properties": {"x": {}}}]},
        "labels": {"additionalProperties": {"type": "object", "properties": {"v": {}}}},
        "free": {"type": "object"},
        "alt": {"anyOf": [{"type": "object", "properties": {"a": {}}}]}
    });
    let closed = keyset::close_properties(&obj(props));
    assert_eq!(closed["addr"]["additionalProperties"], json!(false));
    assert_eq!(closed["open"]["additionalProperties"], json!(true));
    assert_eq!(
        closed["list"]["items"]["additionalProperties"],
        json!(false)
    );
    assert_eq!(
        closed["pair"]["prefixItems"][0]["additionalProperties"],
        json!(false)
    );
    assert_eq!(
        closed["labels"]["additionalProperties"]["additionalProperties"],
        json!(false)
    );
    assert_eq!(closed["free"], json!({"type": "object"}));
    assert_eq!(
        closed["alt"],
        json!({"anyOf": [{"type": "object", "properties": {"a": {}}}]}),
        "anyOf is not followed, so nothing is published under it"
    );
}
