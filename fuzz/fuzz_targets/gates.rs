//! The gate chain, differential: an action schema `build()` accepts and arbitrary `arguments`
//! → no panic; every refusal bounded; a call that passes hands the tool `data` a plain
//! `jsonschema` validator of the same schema accepts (after defaults); a call the value gate
//! refuses is one that validator refuses too (unless only the gate's exact-integer reading
//! refused it: `1e20` is an integer to JSON Schema, not to an `i64`).
#![no_main]

use std::sync::{Arc, Mutex};

use arbitrary::{Result, Unstructured};
use jsonschema::Draft;
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value, json};
use wymcp::{ActionResult, ActionTool, Actions, Context, Data, Reply, Server};
use wymcp_fuzz::schemagen::{self, NAMES};

/// A tool whose one action is the generated schema; it keeps the data it was handed.
struct Probe {
    action: Value,
    seen: Arc<Mutex<Option<Value>>>,
}

impl ActionTool for Probe {
    fn name(&self) -> &str {
        "probe"
    }
    fn description(&self) -> &str {
        "Keeps what it is handed"
    }
    fn actions(&self) -> Actions {
        Actions::from_value(json!({"act": self.action}))
    }
    async fn run_action(&self, _action: &str, data: Data, _ctx: Context) -> ActionResult {
        *self.seen.lock().unwrap_or_else(|e| e.into_inner()) = Some(data.into_value());
        Ok(Reply::new(json!({"ok": true})))
    }
}

struct Case {
    properties: Map<String, Value>,
    required: Vec<String>,
    defaults: Map<String, Value>,
    data: Value,
    arguments: Map<String, Value>,
}

fn case(u: &mut Unstructured) -> Result<Case> {
    let mut values = Vec::new();
    let mut properties = Map::new();
    for name in NAMES.iter().take(u.int_in_range(1..=NAMES.len())?) {
        properties.insert((*name).to_owned(), schemagen::property(u, 2, &mut values)?);
    }
    let mut required = Vec::new();
    let mut defaults = Map::new();
    for name in properties.keys() {
        match u.int_in_range(0..=3u8)? {
            0 => required.push(name.clone()),
            1 => {
                defaults.insert(name.clone(), schemagen::data_value(u, &values, 1)?);
            }
            _ => {}
        }
    }
    let mut data = Map::new();
    for _ in 0..u.int_in_range(0..=5usize)? {
        let key = if u.ratio(7u8, 8)? { (*u.choose(&NAMES)?).to_owned() } else { wymcp_fuzz::json::string(u)? };
        data.insert(key, schemagen::data_value(u, &values, 2)?);
    }
    let data = if u.ratio(1u8, 16)? { wymcp_fuzz::json::value(u, 1)? } else { Value::Object(data) };
    let mut arguments = Map::new();
    arguments.insert("action".into(), json!(if u.ratio(15u8, 16)? { "act" } else { "other" }));
    arguments.insert("data".into(), data.clone());
    if u.ratio(1u8, 16)? {
        arguments.insert(wymcp_fuzz::json::string(u)?, wymcp_fuzz::json::value(u, 1)?);
    }
    Ok(Case { properties, required, defaults, data, arguments })
}

fuzz_target!(|bytes: &[u8]| {
    let mut u = Unstructured::new(bytes);
    let Ok(case) = case(&mut u) else { return };
    let mut action = json!({"description": "The probe's action", "properties": case.properties});
    if !case.required.is_empty() {
        action["required"] = json!(case.required);
    }
    if !case.defaults.is_empty() {
        action["defaults"] = Value::Object(case.defaults.clone());
    }
    let schema_len = action.to_string().len();
    let seen = Arc::new(Mutex::new(None));
    let probe = Probe { action, seen: seen.clone() };
    let Ok(server) = Server::builder().tool(probe).build() else { return };
    let plain = jsonschema::options()
        .with_draft(Draft::Draft202012)
        .should_validate_formats(true)
        .build(&json!({"type": "object", "properties": case.properties, "required": case.required}));
    let Ok(plain) = plain else {
        panic!("build() accepted properties a plain validator cannot compile: {:?}", case.properties)
    };
    let arguments = Value::Object(case.arguments.clone());
    let result = wymcp_fuzz::runtime()
        .block_on(wymcp::testing::call_tool(&server, "probe", Some(arguments), Context::default()))
        .expect("the probe tool exists and its arguments are an object");
    let handed = seen.lock().unwrap_or_else(|e| e.into_inner()).take();
    match handed {
        Some(data) => {
            assert!(!result.is_error(), "the tool ran but the call is an error");
            let problems: Vec<String> = plain.iter_errors(&data).map(|e| e.to_string()).collect();
            assert!(problems.is_empty(), "passed the gates, refused by jsonschema: {problems:?}\ndata {data}");
        }
        None => {
            assert!(result.is_error(), "the tool did not run, yet the call succeeded");
            let text = result.text().unwrap_or_default();
            assert!(
                text.len() <= 8 * 1024 + 2 * schema_len,
                "a refusal of {} bytes (schema {schema_len})", text.len()
            );
            let refusal = result.json().expect("every refusal is JSON");
            if refusal["error"] == "invalid_values" {
                let only_integers = refusal["invalid"].as_array().is_some_and(|all| {
                    all.iter().all(|i| i["problems"] == json!(["expected type integer"]))
                });
                let mut sent = case.data.clone();
                if let Value::Object(map) = &mut sent {
                    for (k, v) in &case.defaults {
                        map.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
                assert!(
                    only_integers || !plain.is_valid(&case.data) || !plain.is_valid(&sent),
                    "refused by the value gate ({refusal}), accepted by jsonschema: {}", case.data
                );
            }
        }
    }
});
