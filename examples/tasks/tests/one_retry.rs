//! Issue 47's acceptance: broken calls replayed through the example over real HTTP on
//! 127.0.0.1, each corrected once by a scripted "model" that reads only the refusal's JSON text
//! (never `help`) and rewrites its own call by fixed rules. Every case whose refusal carries
//! the answer must be accepted on the first retry; the figure is reported in
//! docs/tools-and-gates.md ("How many refusals a model fixes in one retry").
//!
//! The rules ([`correct`]) are what a careful model does with the refusal alone: take the
//! likeliest listed action, rename a key to the nearest name the refusal allows, fill a key
//! from the `schemas` excerpt (the example's value, else the first `enum` value, else a value
//! of the `format`, else one inside the range), drop an argument outside `valid_arguments`.
//!
//! Run: `cargo test -p wymcp-tasks --test one_retry -- --nocapture` (prints the figure and the
//! catalogue's bytes).

#![allow(clippy::unwrap_used, missing_docs)]

#[allow(dead_code)]
#[path = "../src/resources.rs"]
mod resources;
#[allow(dead_code)]
#[path = "../src/store.rs"]
mod store;
#[allow(dead_code)]
#[path = "../src/tools.rs"]
mod tools;

use serde_json::{Map, Value, json};
use wymcp::transport::http::{HttpServer, StreamableHttp};

use crate::store::Store;

/// The example served over HTTP on an ephemeral port of 127.0.0.1, over a fresh database.
struct Example {
    url: String,
    client: reqwest::Client,
    next_id: std::sync::atomic::AtomicU64,
}

impl Example {
    async fn start() -> Example {
        let server = tools::server(Store::open_in_memory().unwrap()).unwrap();
        let http = HttpServer::bind("127.0.0.1:0", StreamableHttp::builder(server))
            .await
            .unwrap();
        let url = format!("http://{}/mcp", http.local_addr().unwrap());
        tokio::spawn(http.run());
        Example {
            url,
            client: reqwest::Client::new(),
            next_id: std::sync::atomic::AtomicU64::new(1),
        }
    }

    /// One stateless (2026-07-28) request: its JSON-RPC answer.
    async fn request(&self, method: &str, params: Value, name: Option<&str>) -> Value {
        let id = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut params = params;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "one-retry", "version": "1"}});
        let mut request = self
            .client
            .post(&self.url)
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", method);
        if let Some(name) = name {
            request = request.header("Mcp-Name", name);
        }
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let answer = request.json(&body).send().await.unwrap();
        assert_eq!(answer.status(), 200);
        answer.json().await.unwrap()
    }

    /// Calls `tool` with `arguments`: `Ok(text)` when accepted, `Err(refusal text)` when the
    /// result is an error (the text the model reads).
    async fn call(&self, tool: &str, arguments: &Value) -> Result<String, String> {
        let answer = self
            .request(
                "tools/call",
                json!({"name": tool, "arguments": arguments}),
                Some(tool),
            )
            .await;
        let result = &answer["result"];
        let text = result["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if result["isError"] == true {
            Err(text)
        } else {
            assert!(result.is_object(), "{answer}");
            Ok(text)
        }
    }
}

/// One broken call: its class, the tool and arguments, and whether its refusal carries what
/// fixing it takes.
struct Case {
    class: &'static str,
    tool: &'static str,
    arguments: Value,
    carries_the_answer: bool,
}

fn case(class: &'static str, tool: &'static str, arguments: Value) -> Case {
    Case {
        class,
        tool,
        arguments,
        carries_the_answer: true,
    }
}

/// The broken calls, by class (issue 47's list).
fn cases() -> Vec<Case> {
    vec![
        case(
            "missing action",
            "tasks",
            json!({"data": {"title": "Buy milk", "priority": 2}}),
        ),
        case(
            "missing action",
            "tasks",
            json!({"data": {"status": "all", "limit": 5}}),
        ),
        case(
            "missing action",
            "projects",
            json!({"data": {"include_archived": true}}),
        ),
        case(
            "misspelled action",
            "tasks",
            json!({"action": "crate", "data": {"title": "Buy milk"}}),
        ),
        case("misspelled action", "tasks", json!({"action": "lsit"})),
        case("misspelled action", "projects", json!({"action": "lst"})),
        case(
            "misspelled key",
            "tasks",
            json!({"action": "create", "data": {"titel": "Buy milk"}}),
        ),
        case(
            "misspelled key",
            "tasks",
            json!({"action": "create", "data": {"title": "Buy milk", "prority": 1}}),
        ),
        case(
            "misspelled key",
            "tasks",
            json!({"action": "create",
            "data": {"title": "Pack", "checklist": [{"txt": "Passport"}]}}),
        ),
        case(
            "misspelled key",
            "search",
            json!({"query": "milk", "limt": 3}),
        ),
        case(
            "missing required key",
            "tasks",
            json!({"action": "create", "data": {"priority": 2}}),
        ),
        case(
            "missing required key",
            "tasks",
            json!({"action": "update", "data": {"priority": 1}}),
        ),
        case(
            "missing required key",
            "tasks",
            json!({"action": "import", "data": {"tasks": [{"priority": 2}]}}),
        ),
        case("missing required key", "search", json!({"limit": 3})),
        case("missing group key", "tasks", json!({"action": "get"})),
        case(
            "missing group key",
            "tasks",
            json!({"action": "get", "data": {"idd": 1}}),
        ),
        case(
            "wrong type",
            "tasks",
            json!({"action": "create", "data": {"title": "Buy milk", "priority": "high"}}),
        ),
        case(
            "wrong type",
            "tasks",
            json!({"action": "create", "data": {"title": "Buy milk", "tags": "admin"}}),
        ),
        case(
            "wrong type",
            "tasks",
            json!({"action": "list", "data": {"limit": "ten"}}),
        ),
        case(
            "wrong type",
            "search",
            json!({"query": "milk", "include_done": "yes"}),
        ),
        case(
            "bad format",
            "tasks",
            json!({"action": "create", "data": {"title": "Buy milk", "due": "tomorrow"}}),
        ),
        case(
            "bad format",
            "tasks",
            json!({"action": "update", "data": {"id": 1, "due": "next week"}}),
        ),
        case(
            "bad value",
            "tasks",
            json!({"action": "create", "data": {"title": "Buy milk", "priority": 9}}),
        ),
        case(
            "bad value",
            "tasks",
            json!({"action": "list", "data": {"limit": 500}}),
        ),
        case(
            "bad value",
            "tasks",
            json!({"action": "update", "data": {"id": 1, "status": "finished"}}),
        ),
        case(
            "bad value",
            "projects",
            json!({"action": "create", "data": {"name": "Home Stuff"}}),
        ),
        case(
            "extra argument",
            "tasks",
            json!({"action": "create", "data": {"title": "Buy milk"}, "priority": 1}),
        ),
        case(
            "extra argument",
            "tasks",
            json!({"action": "list", "verbose": true}),
        ),
    ]
}

/// The model: the corrected arguments, from the refusal's JSON text and the call it sent.
/// `None` when the refusal does not say how to fix it.
fn correct(sent: &Value, refusal_text: &str) -> Option<Value> {
    let refusal: Value = serde_json::from_str(refusal_text).ok()?;
    let mut call = sent.clone();
    let plain = call.get("action").is_none() && refusal.get("action").is_none();
    match refusal["error"].as_str()? {
        "missing_action" => {
            call["action"] = refusal["actions"][0]["name"].clone();
        }
        "unknown_action" => {
            let sent_action = sent["action"].as_str()?;
            call["action"] = json!(nearest(sent_action, names(&refusal["valid_actions"]))?);
        }
        "unknown_arguments" => {
            let valid = names(&refusal["valid_arguments"]);
            call.as_object_mut()?
                .retain(|key, _| valid.contains(&key.as_str()));
        }
        "missing_required_fields" | "missing_required_group" => {
            let data = data_of(&mut call, plain);
            let properties = refusal["input_schema"]["properties"].as_object()?;
            for entry in refusal["schemas"].as_array()? {
                let name = entry["path"].as_str()?.trim_start_matches('/');
                // A sent key the schema does not declare, near the missing name: a misspelling.
                let misspelled = data
                    .keys()
                    .find(|k| !properties.contains_key(*k) && distance(k, name) <= 2)
                    .cloned();
                let value = match misspelled {
                    Some(key) => data.remove(&key)?,
                    None => value_for(entry, None)?,
                };
                data.insert(name.to_owned(), value);
                if refusal["error"] == "missing_required_group" {
                    // One member of the first group is all the groups here need.
                    break;
                }
            }
        }
        "unknown_params" => {
            let data = Value::Object(data_of(&mut call, plain).clone());
            let mut fixed = data.clone();
            for unknown in refusal["unknown"].as_array()? {
                let path = unknown.as_str()?;
                let (parent, key) = path.rsplit_once('/')?;
                let allowed = names(&refusal["allowed"][parent]);
                let value = data.pointer(path)?.clone();
                let holder = fixed.pointer_mut(parent)?.as_object_mut()?;
                holder.remove(key);
                if let Some(name) = nearest(key, allowed).filter(|n| distance(n, key) <= 2) {
                    holder.insert(name.to_owned(), value);
                }
            }
            *data_of(&mut call, plain) = fixed.as_object()?.clone();
        }
        "invalid_values" => {
            let mut data = Value::Object(data_of(&mut call, plain).clone());
            for entry in refusal["schemas"].as_array()? {
                let path = entry["path"].as_str()?;
                let value = value_for(entry, data.pointer(path))?;
                set(&mut data, path, value)?;
            }
            *data_of(&mut call, plain) = data.as_object()?.clone();
        }
        _ => return None,
    }
    (&call != sent).then_some(call)
}

/// The object the data gates read: `data` of an action call, the arguments of a plain tool.
fn data_of(call: &mut Value, plain: bool) -> &mut Map<String, Value> {
    if !plain && !call["data"].is_object() {
        call["data"] = json!({});
    }
    let target = if plain { call } else { &mut call["data"] };
    target.as_object_mut().unwrap()
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .map(|l| l.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// A value the excerpt admits: the example's, else the first enum value, else one of the
/// format, else one inside the range (the sent value clamped or cut when it has the right
/// type).
fn value_for(entry: &Value, sent: Option<&Value>) -> Option<Value> {
    if let Some(example) = entry.get("example") {
        return Some(example.clone());
    }
    let schema = &entry["schema"];
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return Some(first.clone());
    }
    match schema["format"].as_str() {
        Some("date-time") => return Some(json!("2026-01-01T00:00:00Z")),
        Some("date") => return Some(json!("2026-01-01")),
        Some("email") => return Some(json!("someone@example.com")),
        Some("uri") => return Some(json!("https://example.com/")),
        _ => {}
    }
    let min = schema["minimum"].as_f64();
    let max = schema["maximum"].as_f64();
    // `["integer", "null"]` for an optional value: the first type that is not null.
    let kind = match &schema["type"] {
        Value::Array(types) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")?,
        other => other.as_str()?,
    };
    match kind {
        "integer" | "number" => {
            let low = min.unwrap_or(f64::MIN);
            let high = max.unwrap_or(f64::MAX);
            let at = sent
                .and_then(Value::as_f64)
                .unwrap_or(min.or(max).unwrap_or(1.0));
            let clamped = at.clamp(low, high);
            Some(json!(clamped as i64))
        }
        "string" => {
            if schema.get("pattern").is_some() {
                return None;
            }
            let min_len = schema["minLength"].as_u64().unwrap_or(1).max(1);
            let max_len = schema["maxLength"].as_u64().unwrap_or(u64::MAX);
            match sent.and_then(Value::as_str) {
                Some(s) if s.chars().count() as u64 > max_len => {
                    Some(json!(s.chars().take(max_len as usize).collect::<String>()))
                }
                _ => Some(json!("x".repeat(min_len as usize))),
            }
        }
        "boolean" => Some(json!(true)),
        "array" => Some(json!([])),
        "object" => Some(json!({})),
        _ => None,
    }
}

/// Sets the value at a JSON Pointer, creating the last key.
fn set(root: &mut Value, path: &str, value: Value) -> Option<()> {
    let (parent, key) = path.rsplit_once('/')?;
    match root.pointer_mut(parent)? {
        Value::Object(map) => {
            map.insert(key.replace("~1", "/").replace("~0", "~"), value);
        }
        Value::Array(items) => *items.get_mut(key.parse::<usize>().ok()?)? = value,
        _ => return None,
    }
    Some(())
}

/// The name of `choices` nearest to `sent` (edit distance; the first on a tie).
fn nearest<'a>(sent: &str, choices: Vec<&'a str>) -> Option<&'a str> {
    choices.into_iter().min_by_key(|c| distance(sent, c))
}

/// Levenshtein distance over characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous + usize::from(ca != *cb);
            previous = row[j + 1];
            row[j + 1] = substitution.min(previous + 1).min(row[j] + 1);
        }
    }
    row[b.len()]
}

#[test]
fn the_model_renames_fills_and_clamps_by_its_rules() {
    assert_eq!(distance("crate", "create"), 1);
    assert_eq!(nearest("lsit", vec!["create", "get", "list"]), Some("list"));
    let refusal = json!({"error": "invalid_values", "action": "create",
        "schemas": [{"path": "/priority", "schema": {"type": "integer", "minimum": 1, "maximum": 5}}]});
    let sent = json!({"action": "create", "data": {"priority": 9}});
    assert_eq!(
        correct(&sent, &refusal.to_string()),
        Some(json!({"action": "create", "data": {"priority": 5}}))
    );
    // Nothing to go on: no correction.
    let refusal = json!({"error": "invalid_values", "action": "create", "schemas": []});
    assert_eq!(correct(&sent, &refusal.to_string()), None);
}

#[tokio::test]
async fn every_refusal_that_carries_the_answer_is_fixed_in_one_retry() {
    let example = Example::start().await;
    // One task exists, so that `id: 1` names something.
    let seed = json!({"action": "create", "data": {"title": "Renew passport"}});
    example.call("tasks", &seed).await.unwrap();

    let cases = cases();
    let mut fixed = 0;
    let mut report = Vec::new();
    let mut unexpected = Vec::new();
    for case in &cases {
        let refusal = match example.call(case.tool, &case.arguments).await {
            Err(refusal) => refusal,
            Ok(text) => panic!("{}: {} was accepted: {text}", case.class, case.arguments),
        };
        let retry = correct(&case.arguments, &refusal);
        let accepted = match &retry {
            Some(arguments) => example.call(case.tool, arguments).await.is_ok(),
            None => false,
        };
        fixed += usize::from(accepted);
        report.push(format!(
            "{:<21} {:>5}  {} -> {}",
            case.class,
            if accepted { "fixed" } else { "NOT" },
            case.arguments,
            retry.map_or("(no correction)".to_owned(), |r| r.to_string()),
        ));
        if accepted != case.carries_the_answer {
            unexpected.push(format!("{}\n  refusal: {refusal}", report.last().unwrap()));
        }
    }
    println!("{}", report.join("\n"));
    println!("fixed in one retry: {fixed} of {}", cases.len());
    assert!(unexpected.is_empty(), "{}", unexpected.join("\n"));
}

/// The catalogue a model reads (`tools/list`) against its flat equivalent: one tool per action
/// (`tasks_create`, ...) with the action's description and its own input schema (its
/// properties and required keys, closed), the plain tools as served, no `help`. The action
/// schemas are read from `help {tool, action}`, so both sides describe the same actions.
#[tokio::test]
async fn the_catalogue_against_its_flat_equivalent() {
    let example = Example::start().await;
    let list = example.request("tools/list", json!({}), None).await;
    let served = list["result"]["tools"].as_array().unwrap().clone();
    let mut flat = Vec::new();
    for tool in &served {
        let name = tool["name"].as_str().unwrap();
        if name == "help" {
            continue;
        }
        let index = example.call("help", &json!({"tool": name})).await.unwrap();
        let index: Value = serde_json::from_str(&index).unwrap();
        let actions: Vec<String> = index["actions"]
            .as_object()
            .map(|a| a.keys().cloned().collect())
            .unwrap_or_default();
        if actions.is_empty() {
            flat.push(tool.clone());
            continue;
        }
        for action in actions {
            let help = example
                .call("help", &json!({"tool": name, "action": action}))
                .await
                .unwrap();
            let help: Value = serde_json::from_str(&help).unwrap();
            flat.push(json!({
                "name": format!("{name}_{action}"),
                "description": help["description"],
                "inputSchema": {"type": "object", "properties": help["properties"],
                                "required": help.get("required").cloned().unwrap_or(json!([])),
                                "additionalProperties": false},
            }));
        }
    }
    // What the served bytes buy: each part's share, as `(part, bytes)`.
    let size = |v: &Value| v.to_string().len();
    let mut parts = vec![
        ("help's definition", 0),
        ("action summaries", 0),
        ("outputSchema", 0),
    ];
    for tool in &served {
        if tool["name"] == "help" {
            parts[0].1 += size(tool);
        }
        parts[1].1 += size(&tool["inputSchema"]["properties"]["action"]["description"]);
        parts[2].1 += tool.get("outputSchema").map_or(0, size);
    }
    let served_bytes = Value::Array(served).to_string().len();
    let flat_bytes = Value::Array(flat.clone()).to_string().len();
    let ratio = served_bytes as f64 / flat_bytes as f64;
    println!(
        "tools/list: {served_bytes} bytes; flat ({} tools): {flat_bytes} bytes; ratio {ratio:.2}",
        flat.len()
    );
    for (part, bytes) in parts {
        println!("  {part}: {bytes} bytes");
    }
    assert_eq!(
        flat.len(),
        7 + 3 + 1,
        "seven task actions, three project ones, search"
    );
    assert!(ratio < 1.0, "the catalogue is smaller than the flat one");
}
