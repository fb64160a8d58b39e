//! Acceptance checks of behaviour-spec §1.12 (DEF-1 … DEF-29): a malformed tool is refused by
//! `Server::builder().tool(..).build()` with a `ConfigurationError` naming the tool, the
//! callback or action, and what is wrong, before anything is served.
//!
//! Each test asserts the exact `Display` text and the accessors `tool()`, `callback()`,
//! `action()` and `problem()`.
//!
//! Checks with no test here, because the Rust API makes them impossible or does not have the
//! feature yet:
//!
//! * DEF-14 (a non-string key inside nested `properties` is refused, not converted): every
//!   schema is a `serde_json::Value`, whose object keys are `String` by type; a non-string key
//!   cannot be written.
//! * DEF-21 (`title()` returning a number, `annotations()` returning a list, `name()` returning
//!   nil): the trait signatures fix the shapes (`&str`, `Option<String>`,
//!   `Option<Map<String, Value>>`), so a wrong shape does not compile. What the types leave open
//!   (the name's characters and length, a plain tool's input schema being an object schema) is
//!   tested below under DEF-21.
//! * DEF-24 (building from options that were already built): `ServerBuilder::build` consumes the
//!   builder and the help tool cannot be handed to a builder, so there is nothing to rebuild.
//! * DEF-26 (`www_authenticate` option) and DEF-27 (server hook module without the Server
//!   behaviour): neither is part of the builder's API yet.
//! * DEF-29 (runtime `register_tool`): runtime registration is not built yet.

mod mcp_schema;
mod spec_tool;

use serde_json::{Map, Value, json};
use spec_tool::{Spec, object};
use wymcp::tool::Callback;
use wymcp::tool::Problem;
use wymcp::{
    ActionSchema, Actions, CallOutput, CallResult, ConfigurationError, Context, Hint, PlainTool,
    Server, ServerBuilder,
};

/// A plain tool with a given name and input schema.
struct Plain {
    name: String,
    input: Map<String, Value>,
}

impl Plain {
    fn new(name: &str, input: Value) -> Self {
        Plain {
            name: name.to_owned(),
            input: object(input),
        }
    }
}

impl PlainTool for Plain {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        "A plain tool"
    }
    fn input_schema(&self) -> Map<String, Value> {
        self.input.clone()
    }
    async fn run(&self, _arguments: Map<String, Value>, _ctx: Context) -> CallResult {
        Ok(CallOutput::text("ran"))
    }
}

/// The refusal of a build that must fail.
fn refused(builder: ServerBuilder) -> ConfigurationError {
    builder
        .build()
        .expect_err("build accepted a configuration it must refuse")
}

/// The refusal of tool `t` declaring `actions`, written as a JSON literal.
fn refused_literal(actions: Value) -> ConfigurationError {
    refused(Server::builder().tool(Spec::new("t", Actions::from_value(actions))))
}

/// The refusal of tool `t` declaring `actions`, written with the builder.
fn refused_built(actions: Actions) -> ConfigurationError {
    refused(Server::builder().tool(Spec::new("t", actions)))
}

/// Asserts a refusal of tool `t`'s action `action`: accessors and exact text.
#[track_caller]
fn assert_action_refusal(err: &ConfigurationError, action: &str, problem: Problem, text: &str) {
    assert_eq!(err.to_string(), text);
    assert_eq!(err.tool(), Some("t"));
    assert_eq!(err.callback(), Some(Callback::Actions));
    assert_eq!(err.action(), Some(action));
    assert_eq!(err.problem(), &problem);
}

/// A server built from tool `t` declaring `actions` (a JSON literal) that must be accepted.
fn accepted_literal(actions: Value) -> Server {
    let server = Server::builder()
        .tool(Spec::new("t", Actions::from_value(actions)))
        .build()
        .expect("build refused a valid configuration");
    mcp_schema::assert_served_definitions_valid(&server);
    server
}

const KNOWN_KEYS: &str = "Known keys: description, properties, required, required_one_of, defaults, notes, related, examples, scopes";

// DEF-1 -------------------------------------------------------------------------------------

#[test]
fn def_1_action_description_with_a_newline_is_refused() {
    let err = refused_literal(json!({
        "create": {"description": "First line\nsecond", "properties": {}}
    }));
    assert_action_refusal(
        &err,
        "create",
        Problem::DescriptionNewline("First line\nsecond".into()),
        r#"tool "t", action "create": description must not contain a newline (summaries are joined by newlines), got "First line\nsecond""#,
    );
    let built =
        refused_built(Actions::new().action("create", ActionSchema::new("First line\nsecond")));
    assert_eq!(built, err);
}

#[test]
fn def_1_a_carriage_return_is_not_a_newline() {
    // Only "\n" joins summaries; "\r" is not checked (behaviour-spec §1.4 rule 3).
    let server =
        accepted_literal(json!({"create": {"description": "One\rline", "properties": {}}}));
    let listed = server.list_tools(wymcp::ProtocolVersion::V2025_11_25);
    assert_eq!(
        listed["tools"][0]["inputSchema"]["properties"]["action"]["description"],
        json!("create: One\rline")
    );
}

// DEF-2 -------------------------------------------------------------------------------------

#[test]
fn def_2_action_name_with_a_newline_is_refused() {
    let err = refused_literal(json!({"a\nb": {"description": "Do it", "properties": {}}}));
    assert_action_refusal(
        &err,
        "a\nb",
        Problem::ActionNameNewline("a\nb".into()),
        r#"tool "t", action "a\nb": an action name must not contain a newline (summaries are joined by newlines), got "a\nb""#,
    );
    let built = refused_built(Actions::new().action("a\nb", ActionSchema::new("Do it")));
    assert_eq!(built, err);
}

#[test]
fn def_2_empty_action_name_is_refused() {
    let err = refused_built(Actions::new().action("", ActionSchema::new("Do it")));
    assert_action_refusal(
        &err,
        "",
        Problem::ActionNameEmpty,
        r#"tool "t", action "": an action name must not be empty"#,
    );
}

#[test]
fn def_2_duplicate_action_name_is_refused() {
    let err = refused_built(
        Actions::new()
            .action("get", ActionSchema::new("Get one"))
            .action("get", ActionSchema::new("Get another")),
    );
    assert_action_refusal(
        &err,
        "get",
        Problem::DuplicateAction("get".into()),
        r#"tool "t", action "get": duplicate action name "get""#,
    );
}

// DEF-3 -------------------------------------------------------------------------------------

#[test]
fn def_3_unknown_action_schema_key_is_refused_listing_the_known_keys() {
    let err = refused_literal(json!({
        "create": {"description": "Create", "properties": {}, "example": {}}
    }));
    assert_action_refusal(
        &err,
        "create",
        Problem::UnknownKeys(vec!["example".into()]),
        &format!(
            r#"tool "t", action "create": unknown action-schema key(s): ["example"]. {KNOWN_KEYS}"#
        ),
    );
}

#[test]
fn def_3_several_unknown_keys_are_listed_sorted() {
    let err = refused_literal(json!({
        "create": {"require": ["x"], "description": "Create", "properties": {}, "example": {}}
    }));
    assert_action_refusal(
        &err,
        "create",
        Problem::UnknownKeys(vec!["example".into(), "require".into()]),
        &format!(
            r#"tool "t", action "create": unknown action-schema key(s): ["example", "require"]. {KNOWN_KEYS}"#
        ),
    );
}

#[test]
fn def_3_unknown_keys_are_reported_before_any_other_rule() {
    // The chain's order: name, vocabulary, description, properties, ... (first refusal wins).
    let err = refused_literal(json!({"create": {"oops": 1}}));
    assert_eq!(err.problem(), &Problem::UnknownKeys(vec!["oops".into()]));
    let err = refused_literal(json!({
        "create": {"description": "a\nb", "properties": {}, "required": ["ghost"]}
    }));
    assert_eq!(err.problem(), &Problem::DescriptionNewline("a\nb".into()));
}

// DEF-4 -------------------------------------------------------------------------------------

#[test]
fn def_4_missing_description_is_refused() {
    let err = refused_literal(json!({"create": {"properties": {}}}));
    assert_action_refusal(
        &err,
        "create",
        Problem::MissingDescription,
        r#"tool "t", action "create": missing description"#,
    );
}

#[test]
fn def_4_description_that_is_not_a_string_is_refused() {
    let err = refused_literal(json!({"create": {"description": 5, "properties": {}}}));
    assert_action_refusal(
        &err,
        "create",
        Problem::DescriptionNotString("5".into()),
        r#"tool "t", action "create": description must be a string, got 5"#,
    );
}

#[test]
fn def_4_missing_properties_is_refused() {
    let err = refused_literal(json!({"create": {"description": "Create"}}));
    assert_action_refusal(
        &err,
        "create",
        Problem::MissingProperties,
        r#"tool "t", action "create": missing properties"#,
    );
}

#[test]
fn def_4_properties_that_is_not_an_object_is_refused() {
    let err = refused_literal(json!({"create": {"description": "Create", "properties": ["x"]}}));
    assert_action_refusal(
        &err,
        "create",
        Problem::PropertiesNotObject {
            at: String::new(),
            got: r#"["x"]"#.into(),
        },
        r#"tool "t", action "create": properties must be an object, got ["x"]"#,
    );
}

#[test]
fn def_4_action_schema_that_is_not_an_object_is_refused() {
    let err = refused_built(Actions::new().action_value("create", json!("Create")));
    assert_action_refusal(
        &err,
        "create",
        Problem::ActionNotObject("Create".into()),
        r#"tool "t", action "create": an action schema must be an object, got Create"#,
    );
}

#[test]
fn def_4_actions_that_are_not_an_object_are_refused_on_the_actions_callback() {
    let err = refused_literal(json!([{"description": "Create", "properties": {}}]));
    assert_eq!(
        err.to_string(),
        r#"tool "t", callback actions: an action schema must be an object, got [{"description":"Create","properties":{}}]"#
    );
    assert_eq!(err.tool(), Some("t"));
    assert_eq!(err.callback(), Some(Callback::Actions));
    assert_eq!(err.action(), None);
}

// DEF-5, DEF-6 ------------------------------------------------------------------------------

#[test]
fn def_5_required_naming_an_undeclared_property_is_refused() {
    let err = refused_literal(json!({
        "create": {"description": "Create", "properties": {"x": {}}, "required": ["y"]}
    }));
    assert_action_refusal(
        &err,
        "create",
        Problem::RequiredUndeclared(vec!["y".into()]),
        r#"tool "t", action "create": required references field(s) not declared in properties: ["y"]"#,
    );
    let built = refused_built(
        Actions::new().action(
            "create",
            ActionSchema::new("Create")
                .property("x", json!({}))
                .required(["y"]),
        ),
    );
    assert_eq!(built, err);
}

#[test]
fn def_6_required_with_duplicate_entries_is_refused() {
    let err = refused_literal(json!({
        "create": {"description": "Create", "properties": {"x": {}}, "required": ["x", "x"]}
    }));
    assert_action_refusal(
        &err,
        "create",
        Problem::RequiredDuplicates(vec!["x".into()]),
        r#"tool "t", action "create": required has duplicate entries: ["x"]"#,
    );
}

#[test]
fn def_6_required_that_is_not_a_list_of_strings_is_refused() {
    let err = refused_literal(json!({
        "create": {"description": "Create", "properties": {"x": {}}, "required": ["x", 1]}
    }));
    assert_action_refusal(
        &err,
        "create",
        Problem::RequiredNotList(r#"["x",1]"#.into()),
        r#"tool "t", action "create": required must be a list of strings, got ["x",1]"#,
    );
}

// DEF-7 … DEF-10 ----------------------------------------------------------------------------

fn one_of(groups: Value) -> ConfigurationError {
    refused_literal(json!({
        "get": {
            "description": "Get",
            "properties": {"x": {}, "y": {}, "a": {}, "b": {}},
            "required_one_of": groups
        }
    }))
}

#[test]
fn def_7_required_one_of_with_a_group_that_is_not_a_list_is_refused() {
    let err = one_of(json!([["x"], "y"]));
    assert_action_refusal(
        &err,
        "get",
        Problem::RequiredOneOfNotList(r#"[["x"],"y"]"#.into()),
        r#"tool "t", action "get": required_one_of must be a list of lists of strings, got [["x"],"y"]"#,
    );
}

#[test]
fn def_8_required_one_of_with_an_empty_group_is_refused() {
    let err = one_of(json!([["x"], []]));
    assert_action_refusal(
        &err,
        "get",
        Problem::RequiredOneOfEmptyGroup,
        r#"tool "t", action "get": required_one_of contains an empty group"#,
    );
}

#[test]
fn def_8_required_one_of_group_rules_are_checked_per_group() {
    let err = one_of(json!([["x", "x"]]));
    assert_action_refusal(
        &err,
        "get",
        Problem::RequiredOneOfGroupDuplicates(vec!["x".into()]),
        r#"tool "t", action "get": required_one_of group has duplicate entries: ["x"]"#,
    );
    let err = one_of(json!([["x"], ["z"]]));
    assert_action_refusal(
        &err,
        "get",
        Problem::RequiredOneOfUndeclared(vec!["z".into()]),
        r#"tool "t", action "get": required_one_of group references field(s) not declared in properties: ["z"]"#,
    );
}

#[test]
fn def_9_required_one_of_group_that_is_a_strict_superset_is_refused() {
    let err = one_of(json!([["a"], ["a", "b"]]));
    assert_action_refusal(
        &err,
        "get",
        Problem::RequiredOneOfSuperset {
            superset: vec!["a".into(), "b".into()],
            subset: vec!["a".into()],
        },
        r#"tool "t", action "get": required_one_of group ["a", "b"] is a strict superset of ["a"] (dead config: the smaller group always satisfies first)"#,
    );
}

#[test]
fn def_10_required_one_of_with_duplicate_groups_is_refused() {
    let err = one_of(json!([["x"], ["x"]]));
    assert_action_refusal(
        &err,
        "get",
        Problem::RequiredOneOfDuplicateGroups(vec!["x".into()]),
        r#"tool "t", action "get": required_one_of has duplicate groups: ["x"]"#,
    );
    // A group is a set: the same names in another order are the same group.
    let err = one_of(json!([["a", "b"], ["b", "a"]]));
    assert_eq!(
        err.problem(),
        &Problem::RequiredOneOfDuplicateGroups(vec!["a".into(), "b".into()])
    );
}

#[test]
fn def_10_disjoint_and_overlapping_groups_are_accepted() {
    accepted_literal(json!({
        "get": {
            "description": "Get",
            "properties": {"a": {}, "b": {}, "c": {}, "d": {}},
            "required_one_of": [["a", "b"], ["b", "c"], ["a", "c"], ["d"]]
        }
    }));
}

// DEF-11, DEF-12 ----------------------------------------------------------------------------

#[test]
fn def_11_notes_that_are_not_a_string_are_refused() {
    let err = refused_literal(json!({
        "create": {"description": "Create", "properties": {}, "notes": 123}
    }));
    assert_action_refusal(
        &err,
        "create",
        Problem::NotesNotString("123".into()),
        r#"tool "t", action "create": notes must be a string, got 123"#,
    );
}

#[test]
fn def_11_related_that_is_not_a_list_of_strings_is_refused() {
    let err = refused_literal(json!({
        "create": {"description": "Create", "properties": {}, "related": ["get", 7]}
    }));
    assert_action_refusal(
        &err,
        "create",
        Problem::RelatedNotList(r#"["get",7]"#.into()),
        r#"tool "t", action "create": related must be a list of strings, got ["get",7]"#,
    );
}

#[test]
fn def_11_examples_that_are_not_a_list_of_objects_are_refused() {
    let err = refused_literal(json!({
        "create": {"description": "Create", "properties": {}, "examples": ["s"]}
    }));
    assert_action_refusal(
        &err,
        "create",
        Problem::ExamplesNotList(r#"["s"]"#.into()),
        r#"tool "t", action "create": examples must be a list of objects, got ["s"]"#,
    );
}

#[tokio::test]
async fn def_12_notes_with_newlines_are_accepted_and_published_verbatim() {
    let notes = "Overview.\n\n## Components";
    let server = accepted_literal(json!({
        "create": {
            "description": "Create",
            "properties": {"anything": {"type": "array"}},
            "notes": notes,
            "related": ["list"],
            "examples": [{"anything": ["goes", 1]}]
        },
        "list": {"description": "List", "properties": {}}
    }));
    let result = wymcp::testing::call_tool(
        &server,
        "help",
        Some(json!({"tool": "t", "action": "create"})),
        Context::default(),
    )
    .await
    .expect("help answers");
    assert!(!result.is_error());
    assert_eq!(
        result.json(),
        Some(json!({
            "tool": "t",
            "action": "create",
            "description": "Create",
            "properties": {"anything": {"type": "array"}},
            "required": [],
            "notes": notes,
            "related": ["list"],
            "examples": [{"anything": ["goes", 1]}]
        }))
    );
}

// DEF-13 … DEF-15 ---------------------------------------------------------------------------

#[test]
fn def_13_unknown_format_is_refused_on_actions_naming_the_action() {
    let err = refused_literal(json!({
        "create": {
            "description": "Create",
            "properties": {"when": {"type": "string", "format": "no-such-format"}}
        }
    }));
    let text = "at /properties/when/format: Unknown format: 'no-such-format'. Adjust configuration to ignore unrecognized formats";
    assert_action_refusal(
        &err,
        "create",
        Problem::SchemaBuild(text.into()),
        &format!(r#"tool "t", action "create": properties do not build as a JSON Schema: {text}"#),
    );
}

#[test]
fn def_13_a_property_schema_that_is_not_a_schema_is_refused() {
    let err = refused_literal(json!({
        "create": {"description": "Create", "properties": {"x": 5}}
    }));
    let text = r#"at /properties/x: 5 is not of types "boolean", "object""#;
    assert_action_refusal(
        &err,
        "create",
        Problem::SchemaBuild(text.into()),
        &format!(r#"tool "t", action "create": properties do not build as a JSON Schema: {text}"#),
    );
}

#[test]
fn def_13_every_catalogued_format_is_accepted() {
    let formats = [
        "date",
        "date-time",
        "time",
        "duration",
        "email",
        #[cfg(feature = "idn")]
        "idn-email",
        "hostname",
        #[cfg(feature = "idn")]
        "idn-hostname",
        "ipv4",
        "ipv6",
        "uri",
        "uri-reference",
        "iri",
        "iri-reference",
        "uri-template",
        "uuid",
        "regex",
        "json-pointer",
        "relative-json-pointer",
    ];
    let properties: Map<String, Value> = formats
        .iter()
        .map(|f| (f.to_string(), json!({"type": "string", "format": f})))
        .collect();
    accepted_literal(json!({"create": {"description": "Create", "properties": properties}}));
}

/// Without the `idn` feature the IDN formats are unknown: refused when the tool is built, the
/// refusal naming the feature that serves them.
#[cfg(not(feature = "idn"))]
#[test]
fn def_13_an_idn_format_without_the_idn_feature_is_refused_naming_it() {
    for format in ["idn-email", "idn-hostname"] {
        let err = refused_literal(json!({
            "create": {"description": "Create",
                       "properties": {"host": {"type": "string", "format": format}}}
        }));
        let text = format!(
            "at /properties/host/format: Unknown format: '{format}'. Adjust configuration to \
             ignore unrecognized formats (the formats idn-email and idn-hostname need wymcp's \
             `idn` feature)"
        );
        assert_action_refusal(
            &err,
            "create",
            Problem::SchemaBuild(text.clone()),
            &format!(
                r#"tool "t", action "create": properties do not build as a JSON Schema: {text}"#
            ),
        );
    }
}

#[test]
fn def_15_nested_additional_properties_that_is_not_a_schema_is_refused() {
    let err = refused_literal(json!({
        "create": {
            "description": "Create",
            "properties": {"address": {"type": "object", "additionalProperties": "yes"}}
        }
    }));
    assert_action_refusal(
        &err,
        "create",
        Problem::AdditionalPropertiesInvalid {
            at: "/address/additionalProperties".into(),
            got: "yes".into(),
        },
        r#"tool "t", action "create": additionalProperties must be true, false or a schema at /address/additionalProperties, got yes"#,
    );
}

#[test]
fn def_15_shape_is_checked_at_every_depth_the_gate_follows() {
    let deep = refused_literal(json!({
        "create": {
            "description": "Create",
            "properties": {
                "address": {
                    "type": "object",
                    "properties": {"geo": {"type": "object", "additionalProperties": 3}}
                }
            }
        }
    }));
    assert_eq!(
        deep.to_string(),
        r#"tool "t", action "create": additionalProperties must be true, false or a schema at /address/properties/geo/additionalProperties, got 3"#
    );
    let items = refused_literal(json!({
        "create": {
            "description": "Create",
            "properties": {"lines": {"type": "array", "items": {"type": "object", "properties": 5}}}
        }
    }));
    assert_action_refusal(
        &items,
        "create",
        Problem::PropertiesNotObject {
            at: "/lines/items/properties".into(),
            got: "5".into(),
        },
        r#"tool "t", action "create": properties must be an object at /lines/items/properties, got 5"#,
    );
    let extra = refused_literal(json!({
        "create": {
            "description": "Create",
            "properties": {"tags": {"type": "object", "additionalProperties": {"properties": []}}}
        }
    }));
    assert_eq!(
        extra.to_string(),
        r#"tool "t", action "create": properties must be an object at /tags/additionalProperties/properties, got []"#
    );
    let prefix = refused_literal(json!({
        "create": {
            "description": "Create",
            "properties": {
                "pair": {"type": "array", "prefixItems": [{}, {"additionalProperties": null}]}
            }
        }
    }));
    assert_eq!(
        prefix.to_string(),
        r#"tool "t", action "create": additionalProperties must be true, false or a schema at /pair/prefixItems/1/additionalProperties, got null"#
    );
}

#[test]
fn def_15_boolean_additional_properties_are_accepted() {
    accepted_literal(json!({
        "create": {
            "description": "Create",
            "properties": {
                "open": {"type": "object", "additionalProperties": true},
                "shut": {"type": "object", "additionalProperties": false},
                "map": {"type": "object", "additionalProperties": {"type": "integer"}}
            }
        }
    }));
}

// DEF-16 … DEF-19 ---------------------------------------------------------------------------

#[test]
fn def_16_default_failing_its_schema_is_refused() {
    let err = refused_literal(json!({
        "create": {
            "description": "Create",
            "properties": {"color": {"type": "string"}},
            "defaults": {"color": 5}
        }
    }));
    assert_action_refusal(
        &err,
        "create",
        Problem::DefaultInvalid {
            property: "color".into(),
            problems: vec!["/color: expected type string".into()],
        },
        r#"tool "t", action "create": default for "color" does not satisfy its schema: /color: expected type string"#,
    );
    let built = refused_built(
        Actions::new().action(
            "create",
            ActionSchema::new("Create")
                .property("color", json!({"type": "string"}))
                .default_value("color", json!(5)),
        ),
    );
    assert_eq!(built, err);
}

#[test]
fn def_16_default_is_checked_with_formats_asserted() {
    let err = refused_literal(json!({
        "create": {
            "description": "Create",
            "properties": {"due": {"type": "string", "format": "date"}},
            "defaults": {"due": "tomorrow"}
        }
    }));
    assert_eq!(
        err.to_string(),
        r#"tool "t", action "create": default for "due" does not satisfy its schema: /due: must be a valid date"#
    );
}

#[test]
fn def_17_default_for_an_undeclared_property_is_refused() {
    let err = refused_literal(json!({
        "create": {
            "description": "Create",
            "properties": {"color": {"type": "string"}},
            "defaults": {"ghost": 1}
        }
    }));
    assert_action_refusal(
        &err,
        "create",
        Problem::DefaultsUndeclared(vec!["ghost".into()]),
        r#"tool "t", action "create": defaults references field(s) not declared in properties: ["ghost"]"#,
    );
}

#[test]
fn def_17_defaults_that_are_not_an_object_are_refused() {
    let err = refused_literal(json!({
        "create": {"description": "Create", "properties": {}, "defaults": ["x"]}
    }));
    assert_action_refusal(
        &err,
        "create",
        Problem::DefaultsNotObject(r#"["x"]"#.into()),
        r#"tool "t", action "create": defaults must be an object keyed by property name, got ["x"]"#,
    );
}

#[test]
fn def_18_default_for_a_required_property_is_refused_as_dead_config() {
    let err = refused_literal(json!({
        "create": {
            "description": "Create",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
            "defaults": {"name": "x"}
        }
    }));
    assert_action_refusal(
        &err,
        "create",
        Problem::DefaultsRequired(vec!["name".into()]),
        r#"tool "t", action "create": defaults for required field(s) ["name"] can never apply (dead config)"#,
    );
}

#[test]
fn def_19_default_carrying_a_key_the_gate_refuses_is_refused() {
    let err = refused_literal(json!({
        "create": {
            "description": "Create",
            "properties": {"opts": {"type": "object", "properties": {"a": {}}}},
            "defaults": {"opts": {"zzz": 1}}
        }
    }));
    assert_action_refusal(
        &err,
        "create",
        Problem::DefaultUnknownKeys {
            property: "opts".into(),
            paths: vec!["/opts/zzz".into()],
        },
        r#"tool "t", action "create": default for "opts" carries key(s) the unknown-key gate would refuse: ["/opts/zzz"]"#,
    );
}

#[test]
fn def_19_default_in_an_open_object_is_accepted() {
    accepted_literal(json!({
        "create": {
            "description": "Create",
            "properties": {
                "opts": {"type": "object", "properties": {"a": {}}, "additionalProperties": true},
                "free": {"type": "object"},
                "color": {"type": ["string", "null"]}
            },
            "defaults": {"opts": {"zzz": 1}, "free": {"anything": 2}, "color": null}
        }
    }));
}

// DEF-20 ------------------------------------------------------------------------------------

#[track_caller]
fn assert_output_refusal(schema: Value, text: &str) {
    let err = refused(Server::builder().tool(
        Spec::new("t", Actions::new().action("get", ActionSchema::new("Get"))).output(schema),
    ));
    assert_eq!(
        err.to_string(),
        format!(
            r#"tool "t", callback output_schema: output schema does not build as a JSON Schema: {text}"#
        )
    );
    assert_eq!(err.tool(), Some("t"));
    assert_eq!(err.callback(), Some(Callback::OutputSchema));
    assert_eq!(err.action(), None);
    assert_eq!(err.problem(), &Problem::OutputSchemaBuild(text.into()));
}

#[test]
fn def_20_output_schema_with_a_type_naming_no_type_is_refused() {
    assert_output_refusal(
        json!({"type": "object", "properties": {"n": {"type": "nope"}}}),
        r#"at /properties/n/type: "nope" is not valid under any of the schemas listed in the 'anyOf' keyword"#,
    );
}

#[test]
fn def_20_output_schema_with_a_remote_ref_is_refused_never_fetched() {
    assert_output_refusal(
        json!({"type": "object", "$ref": "https://example.com/s.json"}),
        "Resource 'https://example.com/s.json' is not present in a registry and retrieving it failed: Retrieval is disabled, cannot fetch https://example.com/s.json",
    );
}

#[test]
fn def_20_output_schema_with_a_dangling_local_ref_is_refused() {
    assert_output_refusal(
        json!({"type": "object", "$ref": "#/$defs/missing"}),
        "Pointer '/$defs/missing' does not exist",
    );
}

#[test]
fn output_schema_that_does_not_describe_an_object_is_refused() {
    for (schema, got) in [
        (json!({"type": "array"}), "array"),
        (json!({"type": "nope"}), "nope"),
        (json!({}), "no type"),
    ] {
        let err = refused(Server::builder().tool(
            Spec::new("t", Actions::new().action("get", ActionSchema::new("Get"))).output(schema),
        ));
        assert_eq!(
            err.to_string(),
            format!(
                r#"tool "t", callback output_schema: output schema must declare "type": "object", got {got}"#
            )
        );
        assert_eq!(err.callback(), Some(Callback::OutputSchema));
    }
}

#[test]
fn annotations_of_the_wrong_type_are_refused_on_the_annotations_callback() {
    for (annotations, text) in [
        (
            json!({"readOnlyHint": "yes"}),
            r#"annotation "readOnlyHint" must be a boolean, got yes"#,
        ),
        (
            json!({"destructiveHint": false, "openWorldHint": 1}),
            r#"annotation "openWorldHint" must be a boolean, got 1"#,
        ),
        (
            json!({"title": ["Tasks"]}),
            r#"annotation "title" must be a string, got ["Tasks"]"#,
        ),
    ] {
        let err = refused(
            Server::builder().tool(
                Spec::new("t", Actions::new().action("get", ActionSchema::new("Get")))
                    .annotations(annotations),
            ),
        );
        assert_eq!(
            err.to_string(),
            format!(r#"tool "t", callback annotations: {text}"#)
        );
        assert_eq!(err.callback(), Some(Callback::Annotations));
        assert!(matches!(err.problem(), Problem::AnnotationType { .. }));
    }
}

#[test]
fn annotations_of_the_right_type_and_unknown_keys_are_served() {
    let server = Server::builder()
        .tool(
            Spec::new("t", Actions::new().action("get", ActionSchema::new("Get"))).annotations(
                json!({"readOnlyHint": true, "idempotentHint": false, "title": "T", "x-team": "ops"}),
            ),
        )
        .build()
        .expect("valid annotations build");
    let listed = server.list_tools(wymcp::ProtocolVersion::V2025_11_25);
    assert_eq!(
        listed["tools"][0]["annotations"],
        json!({"readOnlyHint": true, "idempotentHint": false, "title": "T", "x-team": "ops"})
    );
}

#[test]
fn def_20_output_schema_with_a_local_ref_that_resolves_is_accepted() {
    let server = Server::builder()
        .tool(
            Spec::new("t", Actions::new().action("get", ActionSchema::new("Get"))).output(json!({
                "type": "object",
                "properties": {"item": {"$ref": "#/$defs/item"}},
                "$defs": {"item": {"type": "object", "properties": {"id": {"type": "integer"}}}}
            })),
        )
        .build()
        .expect("a resolvable local $ref builds");
    mcp_schema::assert_served_definitions_valid(&server);
}

// DEF-21 (what the types leave open) --------------------------------------------------------

#[track_caller]
fn assert_name_refused(name: &str) {
    let err = refused(Server::builder().tool(Spec::new(name, Actions::new())));
    assert_eq!(
        err.to_string(),
        format!(
            r#"tool {name:?}, callback name: tool name must be 1 to 128 characters from A-Z, a-z, 0-9, '_', '-' and '.', got {name:?}"#
        )
    );
    assert_eq!(err.tool(), Some(name));
    assert_eq!(err.callback(), Some(Callback::Name));
    assert_eq!(err.action(), None);
    assert_eq!(err.problem(), &Problem::InvalidToolName(name.into()));
}

#[test]
fn def_21_tool_name_outside_the_mcp_alphabet_is_refused() {
    assert_name_refused("");
    assert_name_refused("has space");
    assert_name_refused("slash/name");
    assert_name_refused("é");
    assert_name_refused(&"n".repeat(129));
}

#[test]
fn def_21_tool_name_at_the_limits_is_accepted() {
    let longest = "n".repeat(128);
    let server = Server::builder()
        .tool(Spec::new(&longest, Actions::new()))
        .tool(Spec::new("A-z_0.9", Actions::new()))
        .build()
        .expect("valid names");
    assert_eq!(server.tool_names(), [longest.as_str(), "A-z_0.9", "help"]);
    mcp_schema::assert_served_definitions_valid(&server);
}

#[test]
fn def_21_plain_tool_input_schema_must_be_an_object_schema() {
    let err = refused(Server::builder().plain_tool(Plain::new("p", json!({"type": "array"}))));
    assert_eq!(
        err.to_string(),
        r#"tool "p", callback input_schema: input schema must declare "type": "object", got array"#
    );
    assert_eq!(err.tool(), Some("p"));
    assert_eq!(err.callback(), Some(Callback::InputSchema));
    assert_eq!(err.action(), None);
    assert_eq!(
        err.problem(),
        &Problem::InputSchemaNotObject("array".into())
    );

    let err = refused(Server::builder().plain_tool(Plain::new("p", json!({"properties": {}}))));
    assert_eq!(
        err.to_string(),
        r#"tool "p", callback input_schema: input schema must declare "type": "object", got no type"#
    );
}

#[test]
fn def_21_plain_tool_input_schema_must_build() {
    let err = refused(Server::builder().plain_tool(Plain::new(
        "p",
        json!({"type": "object", "properties": {"when": {"type": "string", "format": "nope"}}}),
    )));
    let text = "at /properties/when/format: Unknown format: 'nope'. Adjust configuration to ignore unrecognized formats";
    assert_eq!(
        err.to_string(),
        format!(
            r#"tool "p", callback input_schema: input schema does not build as a JSON Schema: {text}"#
        )
    );
    assert_eq!(err.problem(), &Problem::InputSchemaBuild(text.into()));

    let err = refused(Server::builder().plain_tool(Plain::new(
        "p",
        json!({"type": "object", "properties": {"o": {"additionalProperties": "yes"}}}),
    )));
    assert_eq!(
        err.to_string(),
        r#"tool "p", callback input_schema: additionalProperties must be true, false or a schema at /properties/o/additionalProperties, got yes"#
    );
    assert_eq!(
        err.problem(),
        &Problem::AdditionalPropertiesInvalid {
            at: "/properties/o/additionalProperties".into(),
            got: "yes".into(),
        }
    );

    // Locations are JSON Pointers into the input schema itself.
    let err = refused(
        Server::builder().plain_tool(Plain::new("p", json!({"type": "object", "properties": 5}))),
    );
    assert_eq!(
        err.to_string(),
        r#"tool "p", callback input_schema: properties must be an object at /properties, got 5"#
    );
}

// DEF-22, DEF-23, DEF-25 --------------------------------------------------------------------

#[test]
fn def_22_duplicate_tool_names_are_refused() {
    let err = refused(
        Server::builder()
            .tool(Spec::new("test_tool", Actions::new()))
            .tool(Spec::new("test_tool", Actions::new())),
    );
    assert_eq!(
        err.to_string(),
        r#"Duplicate tool name "test_tool" found in the server's tools list. Each tool must have a unique name."#
    );
    assert_eq!(err.problem(), &Problem::DuplicateTool("test_tool".into()));
    assert_eq!(err.callback(), None);
    assert_eq!(err.action(), None);
}

#[test]
fn def_22_an_action_tool_and_a_plain_tool_share_one_namespace() {
    let err = refused(
        Server::builder()
            .plain_tool(Plain::new("dup", json!({"type": "object"})))
            .tool(Spec::new("dup", Actions::new())),
    );
    assert_eq!(err.problem(), &Problem::DuplicateTool("dup".into()));
}

#[test]
fn def_23_a_consumer_tool_named_help_is_refused() {
    let expected = r#"tool "help": Tool "help" uses the reserved name "help". The help tool is provided by wymcp and injected into every server automatically."#;
    let err = refused(Server::builder().tool(Spec::new("help", Actions::new())));
    assert_eq!(err.to_string(), expected);
    assert_eq!(err.tool(), Some("help"));
    assert_eq!(err.action(), None);
    assert_eq!(err.problem(), &Problem::ReservedName("help".into()));

    let err = refused(Server::builder().plain_tool(Plain::new("help", json!({"type": "object"}))));
    assert_eq!(err.to_string(), expected);
}

#[test]
fn def_23_only_the_exact_name_help_is_reserved() {
    let server = Server::builder()
        .tool(Spec::new("Help", Actions::new()))
        .tool(Spec::new("help2", Actions::new()))
        .build()
        .expect("names other than help are free");
    assert_eq!(server.tool_names(), ["Help", "help2", "help"]);
    mcp_schema::assert_served_definitions_valid(&server);
}

#[test]
fn def_25_tool_list_is_the_consumer_tools_in_order_then_help() {
    let server = Server::builder()
        .tool(Spec::new("zeta", Actions::new()))
        .plain_tool(Plain::new("middle", json!({"type": "object"})))
        .tool(Spec::new("alpha", Actions::new()))
        .build()
        .expect("valid tools");
    assert_eq!(server.tool_names(), ["zeta", "middle", "alpha", "help"]);
    mcp_schema::assert_served_definitions_valid(&server);

    let empty = Server::builder().build().expect("no tools is valid");
    assert_eq!(empty.tool_names(), ["help"]);
}

#[test]
fn def_25_the_first_refused_tool_is_named_whatever_its_position() {
    let err = refused(
        Server::builder()
            .tool(Spec::new("fine", Actions::new()))
            .tool(Spec::new(
                "broken",
                Actions::from_value(json!({"get": {"description": "Get"}})),
            )),
    );
    assert_eq!(
        err.to_string(),
        r#"tool "broken", action "get": missing properties"#
    );
}

// DEF-28 ------------------------------------------------------------------------------------

#[test]
fn def_28_hint_without_description_is_refused() {
    let err = Hint::from_value(&json!({"tool": "t", "action": "get"}))
        .expect_err("description is required");
    assert_eq!(
        err.to_string(),
        "Hint is missing the required field :description"
    );
    assert_eq!(
        err.problem(),
        &Problem::Hint("Hint is missing the required field :description".into())
    );
    assert_eq!(err.tool(), None);
}

#[test]
fn def_28_hint_with_a_tool_that_is_not_a_string_is_refused() {
    let err = Hint::from_value(&json!({"tool": 1, "action": "a", "description": "d"}))
        .expect_err("tool must be a string");
    assert_eq!(err.to_string(), "Hint :tool must be a string, got: 1");
    let err = Hint::from_value(&json!({"tool": "t", "action": ["a"], "description": "d"}))
        .expect_err("action must be a string");
    assert_eq!(
        err.to_string(),
        r#"Hint :action must be a string, got: ["a"]"#
    );
}

#[test]
fn def_28_hint_with_an_unknown_field_or_a_bad_example_is_refused() {
    let err = Hint::from_value(&json!({"tool": "t", "action": "a", "description": "d", "why": 1}))
        .expect_err("unknown field");
    assert_eq!(
        err.to_string(),
        r#"Hint has unknown field(s) ["why"]; known fields: tool, action, description, example"#
    );
    let err =
        Hint::from_value(&json!({"tool": "t", "action": "a", "description": "d", "example": 5}))
            .expect_err("example must be an object");
    assert_eq!(err.to_string(), "Hint :example must be an object, got: 5");
}

#[test]
fn def_28_hint_json_has_example_only_when_given() {
    let hint = Hint::new("t", "get", "View it");
    assert_eq!(
        serde_json::to_value(&hint).expect("a hint serializes"),
        json!({"tool": "t", "action": "get", "description": "View it"})
    );
    let from_null = Hint::from_value(&json!({
        "tool": "t", "action": "get", "description": "View it", "example": null
    }))
    .expect("a null example is no example");
    assert_eq!(from_null, hint);
    let with = hint.with_example(object(json!({"id": 1})));
    assert_eq!(
        serde_json::to_value(&with).expect("a hint serializes"),
        json!({"tool": "t", "action": "get", "description": "View it", "example": {"id": 1}})
    );
}

// Examples and related, validated before served (issue 25) -----------------------------------

#[test]
fn an_example_the_gates_would_refuse_is_refused_naming_the_example_and_the_gate() {
    let properties = json!({"id": {"type": "integer", "minimum": 1}, "title": {"type": "string"}});
    let cases = [
        (
            json!([{"id": 1}, {"id": 2, "colour": "red"}]),
            1,
            "unknown key(s) /colour",
        ),
        (json!([{"title": "x"}]), 0, "required field(s) missing: id"),
        (json!([{"id": 0}]), 0, "/id: "),
    ];
    for (examples, index, reason) in cases {
        let err = refused_literal(json!({
            "get": {"description": "Get", "properties": properties.clone(), "required": ["id"],
                    "examples": examples.clone()}
        }));
        let text = err.to_string();
        let prefix = format!(
            r#"tool "t", action "get": examples[{index}] would be refused by the gates: {reason}"#
        );
        assert!(text.starts_with(&prefix), "{examples}: {text}");
        assert!(
            matches!(err.problem(), Problem::ExampleRefused { index: i, .. } if *i == index),
            "{err:?}"
        );
    }
    let groups = refused_literal(json!({
        "get": {"description": "Get", "properties": properties,
                "required_one_of": [["id"], ["title"]], "examples": [{}]}
    }));
    assert_eq!(
        groups.to_string(),
        r#"tool "t", action "get": examples[0] would be refused by the gates: no required_one_of group is fully present"#
    );
}

#[test]
fn related_naming_no_action_of_the_tool_is_refused() {
    let err = refused_literal(json!({
        "create": {"description": "Create", "properties": {}, "related": ["list", "lsit"]},
        "list": {"description": "List", "properties": {}}
    }));
    assert_action_refusal(
        &err,
        "create",
        Problem::RelatedUnknown {
            unknown: vec!["lsit".into()],
            actions: vec!["create".into(), "list".into()],
        },
        r#"tool "t", action "create": related names ["lsit"] that the tool does not declare; its actions: ["create", "list"]"#,
    );
}
