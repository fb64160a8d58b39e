//! Bounded echo (behaviour-spec §5, decisions O6): what a refusal quotes back stays bounded
//! whatever the caller sent — ECHO-1 … ECHO-7.
//!
//! Out of scope here (telemetry, a later issue): ECHO-5's second half, that the
//! `wymcp.tool.error` event's `crash_reason` carries the panic payload whole. ECHO-5's "exit
//! reason" has no Rust meaning (the panic is the only fault kind); its Rust reading is a 1 MB
//! `&'static str` payload, beside ECHO-4's `String` payload.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use wymcp::tool::bound::{MAX_CHARS, MAX_ITEMS, echo, echo_list, echo_value};
use wymcp::tool::{CallToolResult, ErrorKind};
use wymcp::{ActionResult, ActionSchema, ActionTool, Actions, Context, Data, Reply, Server};

/// The bounded form of a string of `n` copies of `c`: the first 200, then the marker.
fn bounded(c: char, n: usize) -> String {
    format!(
        "{}…(+{} chars)",
        c.to_string().repeat(MAX_CHARS),
        n - MAX_CHARS
    )
}

/// Every refusal of this fixture, whatever it quotes, serializes under this many bytes. The
/// fixture's schema-side text (valid actions, the largest digest) is under 1 KiB; at most
/// 2 × 10 quoted strings of ≤ 200 ASCII characters plus their markers add ≤ 4.6 KiB.
const FIXTURE_BOUND: usize = 6 * 1024;

struct Orders;

impl ActionTool for Orders {
    fn name(&self) -> &str {
        "orders"
    }

    fn description(&self) -> &str {
        "Orders"
    }

    fn actions(&self) -> Actions {
        Actions::new()
            .action(
                "pick",
                ActionSchema::new("Pick one")
                    .property("choice", json!({"type": "string", "enum": ["a", "b"]}))
                    .property("code", json!({"type": "string", "pattern": "^[a-z]{3}$"}))
                    .property("fixed", json!({"const": "exactly"})),
            )
            .action(
                "shape",
                ActionSchema::new("Nested shapes")
                    .property(
                        "address",
                        json!({"type": "object", "properties": {"zip": {"type": "string"}}}),
                    )
                    .property(
                        "labels",
                        json!({"type": "object", "additionalProperties": {
                            "type": "object", "properties": {"v": {"type": "integer"}}
                        }}),
                    )
                    .property(
                        "items",
                        json!({"type": "array", "items": {
                            "type": "object", "properties": {"sku": {"type": "string"}}
                        }}),
                    ),
            )
            .action(
                "crash_owned",
                ActionSchema::new("Panics with a 1 MB String"),
            )
            .action(
                "crash_static",
                ActionSchema::new("Panics with a 1 MB &'static str"),
            )
            .action(
                "crash_wide",
                ActionSchema::new("Panics with 1 MB of two-byte characters"),
            )
    }

    async fn run_action(&self, action: &str, _data: Data, _ctx: Context) -> ActionResult {
        match action {
            "crash_owned" => panic!("{}", "y".repeat(1_000_000)),
            "crash_static" => {
                let leaked: &'static str = "z".repeat(1_000_000).leak();
                std::panic::panic_any(leaked)
            }
            "crash_wide" => panic!("{}", "é".repeat(500_000)),
            _ => Ok(Reply::new(json!({"ok": true}))),
        }
    }
}

fn server() -> Server {
    Server::builder()
        .tool(Orders)
        .build()
        .expect("the fixture builds")
}

async fn call(server: &Server, arguments: Value) -> CallToolResult {
    wymcp::testing::call_tool(server, "orders", Some(arguments), Context::default())
        .await
        .expect("the call reaches the tool")
}

/// The refusal's payload, after checking the whole text is under the fixture's bound.
fn bounded_payload(result: &CallToolResult) -> Value {
    assert!(result.is_error());
    let text = result.text().expect("a text item");
    assert!(
        text.len() < FIXTURE_BOUND,
        "payload of {} bytes exceeds the bound",
        text.len()
    );
    result.json().expect("JSON payload")
}

fn text_len(result: &CallToolResult) -> usize {
    result.text().map(str::len).unwrap_or_default()
}

// ECHO-1 ----------------------------------------------------------------------------------------

#[tokio::test]
async fn echo_1_a_huge_action_name_is_quoted_bounded() {
    let server = server();
    let mut sizes = Vec::new();
    for n in [10_000, 1_000_000] {
        let sent = "x".repeat(n);
        let result = call(&server, json!({"action": sent})).await;
        let body = bounded_payload(&result);
        assert_eq!(body["error"], "unknown_action");
        let message = body["message"].as_str().expect("message");
        assert!(message.starts_with(&format!("Unknown action '{}' for tool", bounded('x', n))));
        assert!(!message.contains(&"x".repeat(MAX_CHARS + 1)));
        sizes.push(text_len(&result) - n.to_string().len());
    }
    assert_eq!(sizes[0], sizes[1], "payload size independent of input size");
}

// ECHO-2 ----------------------------------------------------------------------------------------

#[tokio::test]
async fn echo_2_a_thousand_unknown_keys() {
    let server = server();
    let mut data = Map::new();
    for i in 0..1000 {
        data.insert(format!("k{i:06}"), json!(i));
    }
    let result = call(&server, json!({"action": "shape", "data": data})).await;
    let body = bounded_payload(&result);
    assert_eq!(body["error"], "unknown_params");
    let ten: Vec<String> = (0..10).map(|i| format!("/k{i:06}")).collect();
    assert_eq!(body["unknown"], json!(ten));
    assert_eq!(body["unknown_count"], 1000);
    assert_eq!(body["allowed"], json!({"": ["address", "items", "labels"]}));
    let small = text_len(&result);

    // A hundred times more keys: the same answer but for the count.
    let mut data = Map::new();
    for i in 0..100_000 {
        data.insert(format!("k{i:06}"), json!(i));
    }
    let result = call(&server, json!({"action": "shape", "data": data})).await;
    let body = bounded_payload(&result);
    assert_eq!(body["unknown"], json!(ten));
    assert_eq!(body["unknown_count"], 100_000);
    assert!(text_len(&result) <= small + 3);
}

#[tokio::test]
async fn echo_2_allowed_lists_only_the_holders_of_the_listed_ten() {
    let server = server();
    // 500 unknown keys at the root, 500 under /address: the first ten in sort order are all
    // under /address, so the root is not a listed holder.
    let mut data = Map::new();
    let mut address = Map::new();
    for i in 0..500 {
        data.insert(format!("r{i:03}"), json!(i));
        address.insert(format!("z{i:03}"), json!(i));
    }
    data.insert("address".into(), Value::Object(address));
    let body = bounded_payload(&call(&server, json!({"action": "shape", "data": data})).await);
    assert_eq!(body["unknown_count"], 1000);
    let ten: Vec<String> = (0..10).map(|i| format!("/address/z{i:03}")).collect();
    assert_eq!(body["unknown"], json!(ten));
    assert_eq!(body["allowed"], json!({"/address": ["zip"]}));

    // 1000 items each with one unknown key: ten holders, in pointer sort order.
    let items: Vec<Value> = (0..1000).map(|i| json!({"sku": "s", "bad": i})).collect();
    let body = bounded_payload(
        &call(
            &server,
            json!({"action": "shape", "data": {"items": items}}),
        )
        .await,
    );
    assert_eq!(body["unknown_count"], 1000);
    let holders = [
        "/items/0",
        "/items/1",
        "/items/10",
        "/items/100",
        "/items/101",
        "/items/102",
        "/items/103",
        "/items/104",
        "/items/105",
        "/items/106",
    ];
    let expected: Map<String, Value> = holders
        .iter()
        .map(|h| ((*h).to_owned(), json!(["sku"])))
        .collect();
    assert_eq!(body["allowed"], Value::Object(expected));
    let listed: Vec<String> = holders.iter().map(|h| format!("{h}/bad")).collect();
    assert_eq!(body["unknown"], json!(listed));
}

#[tokio::test]
async fn echo_2_unknown_arguments_are_capped_too() {
    let server = server();
    let mut arguments = Map::new();
    arguments.insert("action".into(), json!("pick"));
    for i in 0..1000 {
        arguments.insert(format!("a{i:04}"), json!(i));
    }
    let body = bounded_payload(&call(&server, Value::Object(arguments)).await);
    assert_eq!(body["error"], "unknown_arguments");
    let ten: Vec<String> = (0..10).map(|i| format!("a{i:04}")).collect();
    assert_eq!(body["unknown"], json!(ten));
    assert_eq!(body["unknown_count"], 1000);
}

// ECHO-3 ----------------------------------------------------------------------------------------

#[tokio::test]
async fn echo_3_a_huge_key_is_quoted_bounded() {
    let server = server();
    let key = "k".repeat(5000);
    // At the root: the path "/kkk…" (5001 characters) is bounded.
    let body = bounded_payload(
        &call(
            &server,
            json!({"action": "shape", "data": {key.clone(): 1}}),
        )
        .await,
    );
    let quoted = format!("/{}…(+4801 chars)", "k".repeat(MAX_CHARS - 1));
    assert_eq!(body["unknown"], json!([quoted]));
    assert_eq!(body["unknown_count"], 1);
    assert!(body["message"].as_str().expect("message").contains(&quoted));
    assert!(!body.to_string().contains(&"k".repeat(MAX_CHARS)));

    // Inside a caller-named holder: the holder's path in `allowed` is bounded as well.
    let body = bounded_payload(
        &call(
            &server,
            json!({"action": "shape", "data": {"labels": {key.clone(): {"w": 1}}}}),
        )
        .await,
    );
    let prefix = format!("/labels/{}", "k".repeat(MAX_CHARS - 8));
    assert_eq!(body["unknown"], json!([format!("{prefix}…(+4810 chars)")]));
    assert_eq!(
        body["allowed"],
        json!({format!("{prefix}…(+4808 chars)"): ["v"]})
    );

    // In an invalid_values path.
    let body = bounded_payload(
        &call(
            &server,
            json!({"action": "shape", "data": {"labels": {key.clone(): {"v": "x"}}}}),
        )
        .await,
    );
    assert_eq!(body["error"], "invalid_values");
    assert_eq!(
        body["invalid"],
        json!([{"path": format!("{prefix}…(+4810 chars)"), "problems": ["expected type integer"]}])
    );

    // As an unknown argument.
    let body = bounded_payload(&call(&server, json!({key.clone(): 1})).await);
    assert_eq!(body["error"], "unknown_arguments");
    assert_eq!(body["unknown"], json!([bounded('k', 5000)]));
}

// ECHO-4, ECHO-5 --------------------------------------------------------------------------------

#[tokio::test]
async fn echo_4_and_5_a_huge_panic_message_is_bounded() {
    let server = server();
    for (action, c, n) in [
        ("crash_owned", 'y', 1_000_000),
        ("crash_static", 'z', 1_000_000),
        ("crash_wide", 'é', 500_000),
    ] {
        let result = call(&server, json!({"action": action})).await;
        assert!(result.is_error());
        assert_eq!(result.error_kind(), None);
        let body = bounded_payload(&result);
        assert_eq!(
            body,
            json!({
                "errorType": "tool_fault",
                "tool": "orders",
                "exception": "panic",
                "message": bounded(c, n),
            })
        );
        assert!(text_len(&result) < 1024, "{action}: {}", text_len(&result));
    }
    // The server lives on.
    let result = call(&server, json!({"action": "pick"})).await;
    assert!(!result.is_error());
}

// ECHO-6 ----------------------------------------------------------------------------------------

#[tokio::test]
async fn echo_6_a_huge_invalid_value_is_never_quoted() {
    let server = server();
    let huge = "zq7".repeat(350_000); // ~1 MB
    let body = bounded_payload(
        &call(
            &server,
            json!({"action": "pick", "data": {"choice": huge, "code": huge, "fixed": huge}}),
        )
        .await,
    );
    assert_eq!(body["error"], "invalid_values");
    assert_eq!(body["invalid_count"], 3);
    assert_eq!(
        body["invalid"],
        json!([
            {"path": "/choice", "problems": ["must be one of the allowed values"]},
            {"path": "/code", "problems": ["must match pattern ^[a-z]{3}$"]},
            {"path": "/fixed", "problems": ["must equal the schema's constant"]},
        ])
    );
    let text = body.to_string();
    assert!(!text.contains("zq7"), "no fragment of the value");
    assert!(!text.contains("q7z"));
    // The same huge value under its own name at an unknown key: the key is quoted, the value
    // never.
    let body =
        bounded_payload(&call(&server, json!({"action": "pick", "data": {"bogus": huge}})).await);
    assert_eq!(body["unknown"], json!(["/bogus"]));
    assert!(!body.to_string().contains("zq7"));
}

// The unknown tool and help's quotes (behaviour-spec §5.1, inferred) ----------------------------

#[tokio::test]
async fn unknown_tool_and_help_quotes_are_bounded() {
    let server = server();
    let name = "t".repeat(1_000_000);
    let err = wymcp::testing::call_tool(&server, &name, None, Context::default())
        .await
        .expect_err("unknown tool");
    assert_eq!(
        err.message(),
        format!("Unknown tool: {}", bounded('t', 1_000_000))
    );
    assert_eq!(err.data(), None);

    let result = wymcp::testing::call_tool(
        &server,
        "help",
        Some(json!({"tool": name})),
        Context::default(),
    )
    .await
    .expect("help answers");
    assert_eq!(result.error_kind(), Some(ErrorKind::Dispatch));
    let body = bounded_payload(&result);
    assert_eq!(body["error"], "unknown_tool");
    assert!(!body.to_string().contains(&"t".repeat(MAX_CHARS + 1)));

    let result = wymcp::testing::call_tool(
        &server,
        "help",
        Some(json!({"action": name})),
        Context::default(),
    )
    .await
    .expect("help answers");
    let body = bounded_payload(&result);
    assert_eq!(body["error"], "missing_tool");
    assert!(!body.to_string().contains(&"t".repeat(MAX_CHARS + 1)));

    let result = wymcp::testing::call_tool(
        &server,
        "help",
        Some(json!({"tool": "orders", "action": name})),
        Context::default(),
    )
    .await
    .expect("help answers");
    let body = bounded_payload(&result);
    assert_eq!(body["error"], "unknown_action");
    assert!(!body.to_string().contains(&"t".repeat(MAX_CHARS + 1)));
}

// ECHO-7 ----------------------------------------------------------------------------------------

/// The longest marker: `…(+N chars)` with N of 20 digits.
const MARKER_MAX: usize = "…(+18446744073709551615 chars)".len();

#[test]
fn echo_7_edges() {
    assert_eq!(echo(""), "");
    let exact = "a".repeat(MAX_CHARS);
    assert_eq!(echo(&exact), exact);
    assert_eq!(
        echo(&"a".repeat(MAX_CHARS + 1)),
        bounded('a', MAX_CHARS + 1)
    );
    // Four-byte characters are never split.
    assert_eq!(echo(&"🦀".repeat(300)), bounded('🦀', 300));
    // Control characters are quoted as characters; JSON escapes them when serialized.
    let controls: String = (0u8..32).map(char::from).collect::<String>().repeat(10);
    let quoted = echo(&controls);
    assert_eq!(
        quoted.chars().count(),
        MAX_CHARS + "…(+120 chars)".chars().count()
    );
    assert!(serde_json::to_string(&quoted).is_ok());
    // A value built deeper than any parser would allow renders bounded and does not overflow.
    let mut deep = json!(1);
    for _ in 0..2_000 {
        deep = Value::Array(vec![deep]);
    }
    let rendered = echo_value(&deep);
    assert!(rendered.starts_with("[[[["));
    assert!(rendered.chars().count() <= MAX_CHARS + MARKER_MAX);
    // Free the deep value iteratively (serde_json drops recursively).
    while let Value::Array(mut inner) = deep {
        deep = inner.pop().unwrap_or(Value::Null);
    }
    // Wide values render bounded without being rendered whole.
    let wide: Map<String, Value> = (0..100_000)
        .map(|i| (format!("key{i}"), json!("v".repeat(10))))
        .collect();
    assert!(echo_value(&Value::Object(wide)).chars().count() <= MAX_CHARS + MARKER_MAX);
    assert_eq!(echo_value(&Value::Null), "null");
    assert_eq!(echo_value(&json!(1.5)), "1.5");
    let keys: Vec<String> = (0..1000).map(|i| "q".repeat(i)).collect();
    let listed = echo_list(keys.iter().map(String::as_str));
    assert_eq!(listed.len(), MAX_ITEMS);
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        any::<String>().prop_map(Value::String),
        (0usize..2_000, any::<char>()).prop_map(|(n, c)| Value::String(c.to_string().repeat(n))),
    ];
    leaf.prop_recursive(6, 96, 12, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..12).prop_map(Value::Array),
            prop::collection::vec((any::<String>(), inner), 0..12)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn echo_7_echo_is_total_and_exact(s in any::<String>(), c in any::<char>(), n in 0usize..1_000) {
        for text in [s.clone(), c.to_string().repeat(n), format!("{s}{}", c.to_string().repeat(n))] {
            let out = echo(&text);
            let count = text.chars().count();
            if count <= MAX_CHARS {
                prop_assert_eq!(out, text);
            } else {
                let head: String = text.chars().take(MAX_CHARS).collect();
                prop_assert_eq!(out, format!("{head}…(+{} chars)", count - MAX_CHARS));
            }
        }
    }

    #[test]
    fn echo_7_echo_value_is_total_and_bounded(value in json_value()) {
        let out = echo_value(&value);
        prop_assert!(out.chars().count() <= MAX_CHARS + MARKER_MAX);
        if let Value::String(s) = &value {
            prop_assert_eq!(out, echo(s));
        } else if value.to_string().chars().count() <= MAX_CHARS {
            // Small values render as their compact JSON.
            prop_assert_eq!(out, value.to_string());
        }
    }

    #[test]
    fn echo_7_echo_list_is_capped(items in prop::collection::vec(any::<String>(), 0..40)) {
        let out = echo_list(items.iter().map(String::as_str));
        prop_assert_eq!(out.len(), items.len().min(MAX_ITEMS));
        for (quoted, item) in out.iter().zip(&items) {
            prop_assert_eq!(quoted, &echo(item));
        }
    }
}

/// A tool whose reply suggests one hint per item it was sent, each quoting the item.
struct Echoing;

impl ActionTool for Echoing {
    fn name(&self) -> &str {
        "echoing"
    }
    fn description(&self) -> &str {
        "Suggests a follow-up per item"
    }
    fn actions(&self) -> Actions {
        Actions::new().action(
            "run",
            ActionSchema::new("Run").property("items", json!({"type": "array"})),
        )
    }
    async fn run_action(&self, _: &str, data: Data, _: Context) -> ActionResult {
        let items = data.get("items").cloned().unwrap_or(json!([]));
        Ok(Reply::new(json!({"ok": true})).with_hint_context(json!({"items": items})))
    }
    fn hints(&self, _: &str, hint_context: &Value) -> Vec<wymcp::Hint> {
        let items = hint_context["items"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        items
            .iter()
            .map(|item| {
                let text = item.as_str().unwrap_or_default();
                wymcp::Hint::new("echoing", "run", format!("Run again with {text}")).with_example(
                    json!({"items": [item]})
                        .as_object()
                        .cloned()
                        .expect("an object"),
                )
            })
            .collect()
    }
}

/// N12: hints are caller-influenced text: at most `Limits::max_hints` of them (the rest
/// counted), each quoting by the bounded echo and its description cut as an error text.
#[tokio::test]
async fn hints_are_capped_and_each_is_bounded() {
    let server = Server::builder()
        .tool(Echoing)
        .limits(wymcp::Limits::default().max_hints(3).max_error_text(100))
        .build()
        .expect("a valid server");
    let client = wymcp::testing::TestClient::new(server);
    let items: Vec<String> = (0..50)
        .map(|i| format!("{i}{}", "x".repeat(100_000)))
        .collect();
    let result = client
        .call("echoing", "run", json!({"items": items}))
        .await
        .expect("a result");
    let text = result.result().text().expect("a text").to_owned();
    assert!(text.len() < 2_000, "{} bytes", text.len());
    let body: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(body["hints"].as_array().expect("hints").len(), 3);
    assert_eq!(body["hints_omitted"], 47);
    let hint = &body["hints"][0];
    assert_eq!(
        hint["description"],
        format!("Run again with 0{}…(+99916 chars)", "x".repeat(84))
    );
    assert_eq!(
        hint["example"]["items"][0],
        bounded_prefixed("0", 'x', 100_000)
    );
}

/// `prefix` and `n` copies of `c`, bounded.
fn bounded_prefixed(prefix: &str, c: char, n: usize) -> String {
    let whole = format!("{prefix}{}", c.to_string().repeat(n));
    echo(&whole)
}
