//! Bounded echo of every refusal kind, as a property: whatever a caller sends (strings of
//! any length and characters, in the action, a key, a value, an argument, `help`'s tool or
//! action), each of the ten dispatch refusals is the kind it should be, stays under one
//! bound, and quotes nothing sent longer than [`MAX_CHARS`] characters whole.

#![allow(clippy::unwrap_used, missing_docs)]

use proptest::prelude::*;
use serde_json::{Value, json};
use wymcp::tool::CallToolResult;
use wymcp::tool::bound::MAX_CHARS;
use wymcp::{ActionResult, ActionSchema, ActionTool, Actions, Context, Data, Reply, Server};

/// Every refusal of this fixture serializes under this many bytes: its schema-side text is
/// under 1 KiB, and at most ten quoted strings of ≤ 200 characters (≤ 4 bytes each) with
/// their markers come on top.
const BOUND: usize = 10 * 1024;

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
                    .required(["choice"]),
            )
            .action(
                "find",
                ActionSchema::new("Find by id or title")
                    .property("id", json!({"type": "integer"}))
                    .property("title", json!({"type": "string"}))
                    .required_one_of([["id"], ["title"]]),
            )
    }
    async fn run_action(&self, _action: &str, _data: Data, _ctx: Context) -> ActionResult {
        Ok(Reply::new(json!({"ok": true})))
    }
}

/// The ten kinds, and the arguments (to `orders`, or to `help`) that draw each with `s`.
fn arguments(kind: &str, s: &str) -> (&'static str, Value) {
    let (tool, arguments) = match kind {
        "unknown_arguments" => ("orders", json!({"action": "pick", s: 1})),
        "invalid_argument_type" => ("orders", json!({"action": "pick", "data": s})),
        "missing_action" => ("orders", json!({"data": {"choice": s}})),
        "unknown_action" => ("orders", json!({"action": format!("x{s}")})),
        "missing_required_fields" => ("orders", json!({"action": "pick", "data": {"code": s}})),
        "missing_required_group" => ("orders", json!({"action": "find", "data": {}})),
        "unknown_params" => (
            "orders",
            json!({"action": "pick", "data": {"choice": "a", s: s}}),
        ),
        "invalid_values" => (
            "orders",
            json!({"action": "pick", "data": {"choice": s, "code": s}}),
        ),
        "missing_tool" => ("help", json!({"action": s})),
        _ => ("help", json!({"tool": format!("x{s}")})),
    };
    (tool, arguments)
}

const KINDS: [&str; 10] = [
    "unknown_arguments",
    "invalid_argument_type",
    "missing_action",
    "unknown_action",
    "missing_required_fields",
    "missing_required_group",
    "unknown_params",
    "invalid_values",
    "missing_tool",
    "unknown_tool",
];

fn call(server: &Server, tool: &str, arguments: Value) -> CallToolResult {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(wymcp::testing::call_tool(
            server,
            tool,
            Some(arguments),
            Context::default(),
        ))
        .unwrap()
}

/// Strings short and long, ASCII and not: the long ones past the echo bound.
fn sent() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{0,8}",
        any::<String>(),
        (any::<char>(), 150usize..3_000).prop_map(|(c, n)| c.to_string().repeat(n)),
        ("[ -~]{1,4}", 60usize..2_000).prop_map(|(s, n)| s.repeat(n)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn every_refusal_kind_is_bounded(kind in proptest::sample::select(KINDS.to_vec()), s in sent()) {
        // `unknown_params` with an empty key, `invalid_values` with a valid choice: other kinds.
        prop_assume!(!(kind == "unknown_params" && (s.is_empty() || s == "choice" || s == "code")));
        prop_assume!(!(kind == "invalid_values" && (s == "a" || s == "b")));
        prop_assume!(!(kind == "unknown_arguments" && (s == "action" || s == "data")));
        prop_assume!(!(kind == "missing_tool" && s.is_empty()));
        let server = Server::builder().tool(Orders).build().unwrap();
        let (tool, arguments) = arguments(kind, &s);
        let result = call(&server, tool, arguments);
        prop_assert!(result.is_error());
        let text = result.text().unwrap();
        let refusal: Value = serde_json::from_str(text).unwrap();
        prop_assert_eq!(refusal["error"].as_str(), Some(kind), "{}", text);
        prop_assert!(text.len() <= BOUND, "{} bytes for {}", text.len(), kind);
        if s.chars().count() > MAX_CHARS {
            // Quoted strings are JSON-escaped in the text: search the parsed values.
            let whole = serde_json::to_string(&refusal).unwrap();
            let escaped = serde_json::to_string(&s).unwrap();
            let inner = &escaped[1..escaped.len() - 1];
            prop_assert!(!whole.contains(inner), "{} quotes what it was sent whole", kind);
        }
    }
}
