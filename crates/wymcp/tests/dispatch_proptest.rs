//! Property: whatever `arguments` and `data` a caller sends — random types, deep nesting, huge
//! strings, thousands of keys — the dispatcher never panics and always answers a result whose
//! text stays under a fixed bound.
//!
//! "Never panics" is read through the fault boundary: a panic anywhere in the gates would be
//! contained and answered as a `tool_fault`, and the fixture's own code never panics, so every
//! answer must be a success or a gate refusal, never a fault.
//!
//! # The bound
//!
//! [`BOUND`] is 48 KiB, from the bounded-echo arithmetic (decisions O6):
//!
//! * a quoted string is at most 200 characters plus a `…(+N chars)` marker; serialized in the
//!   JSON text, a character takes at most 6 bytes (a control character escapes as `\u001f`), so
//!   one quote is at most `200 × 6 + 32` = 1,232 bytes;
//! * the refusal quoting the most is `unknown_params`: ten listed paths, the same ten in its
//!   `message`, and at most ten holder paths as keys of `allowed` — 30 quotes, ≤ 36,960 bytes;
//! * everything else in a payload is schema-side (action names, property names, the digest,
//!   fixed message words), never larger than help's tool-level answer for the fixture, which
//!   [`fixed_text_is_small`] pins under 8 KiB.
//!
//! 36,960 + 8,192 < 49,152. A 16 KiB bound would not be one: ten unknown keys of 200 control
//! characters each already take 24 KiB (listed, then again in the message).

use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{Map, Value, json};
use wymcp::tool::bound::MAX_CHARS;
use wymcp::{
    ActionResult, ActionSchema, ActionTool, Actions, CallOutput, CallResult, Context, Data,
    PlainTool, Reply, Server,
};

/// The fixed bound on a result's text (see the module docs).
const BOUND: usize = 48 * 1024;

/// The largest schema-side text any payload of the fixture can carry.
const FIXED_MAX: usize = 8 * 1024;

/// One quote at its largest in JSON text (see the module docs).
const QUOTE_MAX: usize = MAX_CHARS * 6 + 32;

const _: () = assert!(30 * QUOTE_MAX + FIXED_MAX <= BOUND);

struct Orders;

impl ActionTool for Orders {
    fn name(&self) -> &str {
        "orders"
    }

    fn description(&self) -> &str {
        "Order management"
    }

    fn actions(&self) -> Actions {
        Actions::new()
            .action(
                "create",
                ActionSchema::new("Create an order")
                    .property("name", json!({"type": "string", "minLength": 1}))
                    .property(
                        "sku",
                        json!({"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"}),
                    )
                    .property(
                        "quantity",
                        json!({"type": "integer", "minimum": 1, "maximum": 1000}),
                    )
                    .property("price", json!({"type": "number", "exclusiveMinimum": 0}))
                    .property("email", json!({"type": "string", "format": "email"}))
                    .property(
                        "created_at",
                        json!({"type": "string", "format": "date-time"}),
                    )
                    .property(
                        "tags",
                        json!({"type": "array", "items": {"type": "string"}, "maxItems": 20,
                               "uniqueItems": true}),
                    )
                    .property(
                        "address",
                        json!({"type": "object", "properties": {
                            "street": {"type": "string"},
                            "city": {"type": "string"},
                            "zip": {"type": "string", "maxLength": 10},
                            "country": {"enum": ["SE", "FI", "NO"]}
                        }, "required": ["city"]}),
                    )
                    .property(
                        "lines",
                        json!({"type": "array", "items": {"type": "object", "properties": {
                            "sku": {"type": "string"},
                            "qty": {"type": "integer", "minimum": 1}
                        }}}),
                    )
                    .property("active", json!({"type": "boolean"}))
                    .required(["name", "sku"])
                    .required_one_of([["email"], ["address"]])
                    .default_value("active", json!(true)),
            )
            .action(
                "get",
                ActionSchema::new("Get an order")
                    .property("id", json!({"type": "integer"}))
                    .required(["id"]),
            )
            .action(
                "annotate",
                ActionSchema::new("Annotate an order")
                    .property(
                        "meta",
                        json!({"type": "object", "additionalProperties": true}),
                    )
                    .property(
                        "labels",
                        json!({"type": "object", "additionalProperties": {
                            "type": "object", "properties": {"v": {"type": "integer"}}
                        }}),
                    )
                    .property(
                        "pairs",
                        json!({"type": "array", "prefixItems": [
                            {"type": "object", "properties": {"k": {"type": "string"}}},
                            {"type": "integer"}
                        ]}),
                    ),
            )
            .action("list", ActionSchema::new("List orders"))
    }

    async fn run_action(&self, action: &str, data: Data, _ctx: Context) -> ActionResult {
        Ok(Reply::new(json!({"action": action, "keys": data.len()})))
    }
}

struct Lookup;

impl PlainTool for Lookup {
    fn name(&self) -> &str {
        "lookup"
    }
    fn description(&self) -> &str {
        "A plain tool"
    }
    fn input_schema(&self) -> Map<String, Value> {
        match json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "maxLength": 100},
                "limit": {"type": "integer", "minimum": 1},
                "filter": {"type": "object", "properties": {"field": {"type": "string"}}}
            },
            "required": ["query"]
        }) {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }
    async fn run(&self, arguments: Map<String, Value>, _ctx: Context) -> CallResult {
        Ok(CallOutput::json(json!({"keys": arguments.len()})))
    }
}

fn server() -> Server {
    Server::builder()
        .tool(Orders)
        .plain_tool(Lookup)
        .build()
        .expect("the fixture builds")
}

/// Names the schemas know, so random data often reaches deep into them.
const NAMES: &[&str] = &[
    "action",
    "data",
    "tool",
    "name",
    "sku",
    "quantity",
    "price",
    "email",
    "created_at",
    "tags",
    "address",
    "street",
    "city",
    "zip",
    "country",
    "lines",
    "qty",
    "active",
    "id",
    "meta",
    "labels",
    "v",
    "pairs",
    "k",
    "query",
    "limit",
    "filter",
    "field",
];

const ACTIONS: &[&str] = &["create", "get", "annotate", "list", "nope", ""];

fn key() -> BoxedStrategy<String> {
    prop_oneof![
        6 => prop::sample::select(NAMES).prop_map(str::to_owned),
        2 => any::<String>(),
        1 => "[a-z/~.]{1,6}",
        1 => (1usize..5_000, any::<char>()).prop_map(|(n, c)| c.to_string().repeat(n)),
    ]
    .boxed()
}

fn scalar() -> BoxedStrategy<Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        (-1_000i64..1_000).prop_map(|n| json!(n as f64)),
        prop::sample::select(ACTIONS).prop_map(|s| json!(s)),
        "[A-Z]{3}-[0-9]{4}".prop_map(Value::String),
        any::<String>().prop_map(Value::String),
        (0usize..50_000, any::<char>()).prop_map(|(n, c)| Value::String(c.to_string().repeat(n))),
    ]
    .boxed()
}

fn value() -> BoxedStrategy<Value> {
    scalar()
        .prop_recursive(8, 160, 10, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..10).prop_map(Value::Array),
                prop::collection::vec((key(), inner), 0..10)
                    .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
            ]
        })
        .boxed()
}

/// A value nested `depth` levels deep, alternating objects (under a known name) and arrays.
fn deep(depth: usize, name: &str, leaf: Value) -> Value {
    let mut v = leaf;
    for level in 0..depth {
        v = if level % 2 == 0 {
            let mut map = Map::new();
            map.insert(name.to_owned(), v);
            Value::Object(map)
        } else {
            Value::Array(vec![v])
        };
    }
    v
}

/// Usually a value of the right kind, sometimes any value.
fn mostly(right: impl Strategy<Value = Value> + 'static) -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        2 => Just(None),
        5 => right.prop_map(Some),
        1 => scalar().prop_map(Some),
    ]
}

/// `create` data keyed by declared names only, so the group and value gates are reached.
fn create_data() -> BoxedStrategy<Value> {
    let strings = || {
        prop_oneof![
            "[a-zA-Z ]{0,12}".prop_map(Value::String),
            any::<String>().prop_map(Value::String),
        ]
    };
    let address = prop::collection::vec(
        (
            prop::sample::select(&["street", "city", "zip", "country"][..]),
            prop_oneof!["SE|FI|XX".prop_map(Value::String), strings(), scalar()],
        ),
        0..5,
    )
    .prop_map(|pairs| Value::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()));
    let line =
        (mostly(strings()), mostly((-3i64..5).prop_map(|n| json!(n)))).prop_map(|(sku, qty)| {
            let mut map = Map::new();
            if let Some(sku) = sku {
                map.insert("sku".into(), sku);
            }
            if let Some(qty) = qty {
                map.insert("qty".into(), qty);
            }
            Value::Object(map)
        });
    (
        (
            mostly(strings()),
            mostly(prop_oneof![
                "[A-Z]{3}-[0-9]{4}".prop_map(Value::String),
                strings()
            ]),
            mostly(prop_oneof![
                (-5i64..2_000).prop_map(|n| json!(n)),
                (-5i64..2_000).prop_map(|n| json!(n as f64)),
                any::<f64>().prop_map(|f| json!(f)),
            ]),
            mostly(any::<f64>().prop_map(|f| json!(f))),
            mostly(prop_oneof![
                "[a-z]{1,5}@[a-z]{1,5}\\.com".prop_map(Value::String),
                strings()
            ]),
            mostly(prop_oneof![Just(json!("2026-01-02T03:04:05Z")), strings(),]),
        ),
        (
            mostly(
                prop::collection::vec(prop_oneof![strings(), scalar()], 0..25)
                    .prop_map(Value::Array),
            ),
            mostly(address),
            mostly(prop::collection::vec(line, 0..30).prop_map(Value::Array)),
            mostly(any::<bool>().prop_map(Value::Bool)),
        ),
    )
        .prop_map(
            |((name, sku, quantity, price, email, created_at), (tags, address, lines, active))| {
                let mut map = Map::new();
                for (key, value) in [
                    ("name", name),
                    ("sku", sku),
                    ("quantity", quantity),
                    ("price", price),
                    ("email", email),
                    ("created_at", created_at),
                    ("tags", tags),
                    ("address", address),
                    ("lines", lines),
                    ("active", active),
                ] {
                    if let Some(value) = value {
                        map.insert(key.to_owned(), value);
                    }
                }
                Value::Object(map)
            },
        )
        .boxed()
}

/// `data` candidates: random objects, thousands of keys, deep nesting, near-valid payloads.
fn data() -> BoxedStrategy<Value> {
    prop_oneof![
        4 => prop::collection::vec((key(), value()), 0..16)
            .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        1 => (0usize..4_000, "[a-z]{0,3}", prop::sample::select(NAMES)).prop_map(
            |(n, prefix, known)| {
                let mut map: Map<String, Value> =
                    (0..n).map(|i| (format!("{prefix}{i}"), json!(i))).collect();
                map.insert(known.to_owned(), json!({"v": "x"}));
                Value::Object(map)
            }
        ),
        1 => (1usize..120, prop::sample::select(NAMES), scalar(), prop::sample::select(NAMES))
            .prop_map(|(depth, name, leaf, at)| {
                let mut map = Map::new();
                map.insert(at.to_owned(), deep(depth, name, leaf));
                Value::Object(map)
            }),
        2 => (value(), value(), prop::collection::vec((key(), value()), 0..4)).prop_map(
            |(address, lines, extra)| {
                let mut map = Map::new();
                map.insert("name".into(), json!("Widget"));
                map.insert("sku".into(), json!("ABC-1234"));
                map.insert("address".into(), address);
                map.insert("lines".into(), lines);
                map.extend(extra);
                Value::Object(map)
            }
        ),
        1 => value(),
        6 => create_data(),
    ]
    .boxed()
}

/// `arguments`: an action (usually a string), `data`, and sometimes stray keys.
fn arguments() -> BoxedStrategy<Map<String, Value>> {
    let action = prop_oneof![
        1 => Just(None),
        6 => prop::sample::select(ACTIONS).prop_map(|s| Some(json!(s))),
        1 => value().prop_map(Some),
    ];
    let data = prop_oneof![1 => Just(None), 6 => data().prop_map(Some)];
    let extra = prop_oneof![
        6 => Just(Vec::new()),
        1 => prop::collection::vec((key(), value()), 0..12),
        1 => (0usize..3_000).prop_map(|n| (0..n).map(|i| (format!("x{i}"), json!(i))).collect()),
    ];
    let random = (action, data, extra).prop_map(|(action, data, extra)| {
        let mut map: Map<String, Value> = extra.into_iter().collect();
        if let Some(action) = action {
            map.insert("action".into(), action);
        }
        if let Some(data) = data {
            map.insert("data".into(), data);
        }
        map
    });
    // Half the time, `create` with data keyed by its own names: the later gates and the
    // success path are reached as often as the early ones.
    let directed = create_data().prop_map(|data| {
        let mut map = Map::new();
        map.insert("action".into(), json!("create"));
        map.insert("data".into(), data);
        map
    });
    prop_oneof![random, directed].boxed()
}

fn tool() -> impl Strategy<Value = &'static str> {
    prop_oneof![8 => Just("orders"), 1 => Just("lookup"), 1 => Just("help")]
}

/// Calls the dispatcher and checks its answer; the result's text length.
fn check(
    server: &Server,
    tool: &str,
    arguments: Map<String, Value>,
) -> Result<usize, TestCaseError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let result = runtime.block_on(wymcp::testing::call_tool(
        server,
        tool,
        Some(Value::Object(arguments)),
        Context::default(),
    ));
    let result = match result {
        Ok(result) => result,
        Err(e) => return Err(TestCaseError::fail(format!("not a result: {e}"))),
    };
    let total: usize = result
        .content()
        .iter()
        .map(|c| c.as_text().map(str::len).unwrap_or_default())
        .sum();
    prop_assert!(total < BOUND, "{tool}: result text of {total} bytes");
    prop_assert_eq!(result.content().len(), 1);
    let body = result.json();
    prop_assert!(body.is_some(), "every answer of the fixture is JSON");
    let body = body.unwrap_or_default();
    prop_assert!(
        body.get("errorType").is_none(),
        "the dispatcher panicked: {}",
        body
    );
    if result.is_error() {
        prop_assert!(
            body["error"].is_string(),
            "a refusal names its error: {}",
            body
        );
        prop_assert!(
            body["help"].is_string(),
            "a refusal points at help: {}",
            body
        );
    }
    let wire = result.to_value(wymcp::ProtocolVersion::V2025_11_25);
    prop_assert!(serde_json::to_string(&wire).is_ok());
    Ok(total)
}

#[test]
fn fixed_text_is_small() {
    let server = server();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    for tool in ["orders", "lookup"] {
        let result = runtime
            .block_on(wymcp::testing::call_tool(
                &server,
                "help",
                Some(json!({"tool": tool})),
                Context::default(),
            ))
            .expect("help answers");
        let len = result.text().map(str::len).unwrap_or_default();
        assert!(len < FIXED_MAX, "{tool}: {len} bytes of schema-side text");
    }
}

#[test]
fn adversarial_quotes_stay_under_the_bound() {
    // The worst case the arithmetic allows for: twelve caller-named holders of 300 control
    // characters, each holding one unknown key of 300 control characters, so the ten listed
    // paths and the ten holders in `allowed` are all at their longest escaped length.
    let server = server();
    let mut labels = Map::new();
    for i in 0..12u8 {
        // U+000E … U+0019: each escapes to six bytes (`\u000e`).
        let holder: String = std::iter::repeat_n(char::from(i + 14), 300).collect();
        let key: String = std::iter::repeat_n(char::from(i + 14), 300).collect();
        let mut inner = Map::new();
        inner.insert(key, json!(1));
        labels.insert(holder, Value::Object(inner));
    }
    let arguments = json!({"action": "annotate", "data": {"labels": labels}});
    let Value::Object(arguments) = arguments else {
        unreachable!("built as an object")
    };
    match check(&server, "orders", arguments) {
        // Over twice a 16 KiB "bound", and still under BOUND.
        Ok(total) => assert!(total > 32 * 1024, "{total}"),
        Err(e) => panic!("{e}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        max_shrink_iters: 200,
        ..ProptestConfig::default()
    })]

    #[test]
    fn dispatcher_answers_bounded(tool in tool(), arguments in arguments()) {
        static SERVER: OnceLock<Server> = OnceLock::new();
        check(SERVER.get_or_init(server), tool, arguments)?;
    }
}
