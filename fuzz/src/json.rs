//! Arbitrary JSON drawn from the protocol's tokens, and JSON-RPC messages of both eras built
//! from it: well-formed often enough to get past the first checks, broken often enough to
//! test them.

use arbitrary::{Result, Unstructured};
use serde_json::{Map, Value, json};

use crate::fixture;

/// Method names of both eras, and some that are not.
pub const METHODS: &[&str] = &[
    "initialize",
    "notifications/initialized",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/roots/list_changed",
    "server/discover",
    "subscriptions/listen",
    "sampling/createMessage",
    "elicitation/create",
    "tasks/get",
    "",
    "rpc.discover",
];

/// Object keys of the protocol.
pub const KEYS: &[&str] = &[
    "jsonrpc",
    "id",
    "method",
    "params",
    "result",
    "error",
    "_meta",
    "name",
    "arguments",
    "action",
    "data",
    "text",
    "tags",
    "level",
    "limit",
    "filter",
    "tag",
    "title",
    "message",
    "steps",
    "uri",
    "cursor",
    "protocolVersion",
    "capabilities",
    "clientInfo",
    "version",
    "progressToken",
    "requestId",
    "reason",
    "inputResponses",
    "requestState",
    "user_name",
    "content",
    "ref",
    "argument",
    "value",
    "filters",
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/clientCapabilities",
    "io.modelcontextprotocol/clientInfo",
    "io.modelcontextprotocol/logLevel",
    "elicitation",
    "sampling",
    "roots",
];

/// Protocol revisions, the ones served and some that are not.
pub const VERSIONS: &[&str] = &[
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
    "2024-11-05",
    "2099-01-01",
    "",
];

/// Strings worth trying as values.
const STRINGS: &[&str] = &[
    "add", "get", "list", "low", "high", "debug", "info", "error", "2.0", "ref/prompt",
    "ref/resource", "accept", "decline", "v1.", "\u{0}", "é", "\u{202e}", "%00", "../",
];

/// A string: a token, or arbitrary text.
pub fn string(u: &mut Unstructured) -> Result<String> {
    Ok(match u.int_in_range(0..=5u8)? {
        0 => u.choose(KEYS)?.to_string(),
        1 => u.choose(METHODS)?.to_string(),
        2 => u.choose(STRINGS)?.to_string(),
        3 => u.choose(&fixture::TOOLS)?.to_string(),
        4 => u.choose(&fixture::URIS)?.to_string(),
        _ => String::arbitrary_take(u)?,
    })
}

trait TakeString {
    fn arbitrary_take(u: &mut Unstructured) -> Result<String>;
}

impl TakeString for String {
    fn arbitrary_take(u: &mut Unstructured) -> Result<String> {
        let len = u.int_in_range(0..=24usize)?;
        let mut s = String::new();
        for _ in 0..len {
            s.push(u.arbitrary::<char>()?);
        }
        Ok(s)
    }
}

/// Any JSON value, at most `depth` levels deep.
pub fn value(u: &mut Unstructured, depth: u8) -> Result<Value> {
    let kinds = if depth == 0 { 5 } else { 7 };
    Ok(match u.int_in_range(0..=kinds)? {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => json!(u.int_in_range(-3i64..=60)?),
        3 => match u.int_in_range(0..=3u8)? {
            0 => json!(u.arbitrary::<i64>()?),
            1 => json!(u.arbitrary::<u64>()?),
            2 => json!(f64::from(u.int_in_range(-10i32..=10)?) / 2.0),
            _ => serde_json::Number::from_f64(u.arbitrary()?).map_or(Value::Null, Value::Number),
        },
        4 | 5 => Value::String(string(u)?),
        6 => {
            let n = u.int_in_range(0..=3usize)?;
            let mut items = Vec::with_capacity(n);
            for _ in 0..n {
                items.push(value(u, depth - 1)?);
            }
            Value::Array(items)
        }
        _ => Value::Object(object(u, depth - 1)?),
    })
}

/// An object of up to four entries, keys mostly the protocol's.
pub fn object(u: &mut Unstructured, depth: u8) -> Result<Map<String, Value>> {
    let n = u.int_in_range(0..=4usize)?;
    let mut map = Map::new();
    for _ in 0..n {
        let key = if u.ratio(3u8, 4)? { u.choose(KEYS)?.to_string() } else { string(u)? };
        map.insert(key, value(u, depth)?);
    }
    Ok(map)
}

/// The 2026-07-28 envelope (`params._meta`), sometimes broken.
pub fn envelope(u: &mut Unstructured) -> Result<Value> {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":
            if u.arbitrary()? { json!({"elicitation": {}}) } else { json!({}) },
        "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "0"}
    });
    if u.ratio(1u8, 6)? {
        let key = *u.choose(KEYS)?;
        meta[key] = value(u, 1)?;
    }
    if u.ratio(1u8, 8)? {
        meta["io.modelcontextprotocol/protocolVersion"] = json!(*u.choose(VERSIONS)?);
    }
    Ok(meta)
}

/// `params` for `method`: the shape the method takes, with arbitrary values inside.
pub fn params(u: &mut Unstructured, method: &str) -> Result<Value> {
    let mut params = match method {
        "initialize" => json!({
            "protocolVersion": *u.choose(VERSIONS)?,
            "capabilities": if u.arbitrary()? { json!({"elicitation": {}}) } else { json!({}) },
            "clientInfo": {"name": "fuzz", "version": "0"}
        }),
        "tools/call" => {
            let name = *u.choose(&fixture::TOOLS)?;
            let mut arguments = object(u, 2)?;
            if name == "notes" && u.ratio(3u8, 4)? {
                arguments.insert("action".into(), json!(*u.choose(&["add", "get", "list"])?));
                arguments.insert("data".into(), Value::Object(object(u, 2)?));
            }
            json!({"name": name, "arguments": arguments})
        }
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
            json!({"uri": *u.choose(&fixture::URIS)?})
        }
        "prompts/get" => json!({"name": fixture::PROMPT, "arguments": {"tag": string(u)?}}),
        "logging/setLevel" => json!({"level": *u.choose(&["debug", "error", "loud"])?}),
        "notifications/cancelled" => json!({"requestId": value(u, 0)?, "reason": "fuzz"}),
        "completion/complete" => json!({
            "ref": {"type": "ref/prompt", "name": fixture::PROMPT},
            "argument": {"name": "tag", "value": string(u)?}
        }),
        _ => Value::Object(object(u, 2)?),
    };
    if u.ratio(1u8, 8)? {
        let key = *u.choose(KEYS)?;
        params[key] = value(u, 2)?;
    }
    Ok(params)
}

/// A request id: mostly a small integer or string, sometimes one no id may be.
pub fn id(u: &mut Unstructured) -> Result<Value> {
    Ok(match u.int_in_range(0..=7u8)? {
        0..=3 => json!(u.int_in_range(0..=20u32)?),
        4 | 5 => json!(format!("r{}", u.int_in_range(0..=20u32)?)),
        6 => Value::Null,
        _ => value(u, 1)?,
    })
}

/// Which era a generated message is made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// 2025-03-26 to 2025-11-25.
    Session,
    /// 2026-07-28.
    Stateless,
}

/// The test suites' real messages and the specification's example messages of 2026-07-28
/// (`seeds/messages.jsonl`), by era.
pub fn real_messages(era: Era) -> &'static [Value] {
    static ALL: std::sync::OnceLock<[Vec<Value>; 2]> = std::sync::OnceLock::new();
    let all = ALL.get_or_init(|| {
        let mut eras = [Vec::new(), Vec::new()];
        for line in include_str!("../seeds/messages.jsonl").lines() {
            let Ok(value) = serde_json::from_str::<Value>(line) else { continue };
            let stateless = value["params"]["_meta"]
                .get("io.modelcontextprotocol/protocolVersion")
                .is_some();
            eras[usize::from(stateless)].push(value);
        }
        eras
    });
    &all[usize::from(era == Era::Stateless)]
}

/// A JSON-RPC message of `era`; `states` are `requestState`s answered earlier, for retries.
/// A quarter are real messages, one of their members sometimes replaced.
pub fn message(u: &mut Unstructured, era: Era, states: &[String]) -> Result<Value> {
    if u.ratio(1u8, 4)? {
        let mut real = u.choose(real_messages(era))?.clone();
        if u.ratio(1u8, 4)? {
            let key = *u.choose(KEYS)?;
            let replaced = value(u, 2)?;
            // A batch (an array) is kept whole.
            if let Some(message) = real.as_object_mut() {
                match message.get_mut("params").and_then(Value::as_object_mut) {
                    Some(params) => params.insert(key.to_owned(), replaced),
                    None => message.insert(key.to_owned(), replaced),
                };
            }
        }
        return Ok(real);
    }
    let method = *u.choose(METHODS)?;
    let mut params = params(u, method)?;
    if era == Era::Stateless
        && let Some(map) = params.as_object_mut() {
            map.insert("_meta".into(), envelope(u)?);
            if !states.is_empty() && u.ratio(1u8, 2)? {
                let state = u.choose(states)?.clone();
                map.insert("requestState".into(), Value::String(mutate(u, state)?));
                map.insert(
                    "inputResponses".into(),
                    json!({"user_name": {"action": "accept", "content": {"name": "Ada"}}}),
                );
            }
        }
    let notification = method.starts_with("notifications/");
    let mut message = json!({"jsonrpc": "2.0", "method": method, "params": params});
    if !notification || u.ratio(1u8, 8)? {
        message["id"] = id(u)?;
    }
    if u.ratio(1u8, 10)? {
        let key = *u.choose(&["jsonrpc", "id", "method", "params"])?;
        match message.as_object_mut() {
            Some(map) if u.arbitrary()? => {
                map.remove(key);
            }
            _ => message[key] = value(u, 1)?,
        }
    }
    Ok(message)
}

/// `text` kept (mostly), or changed in one place.
pub fn mutate(u: &mut Unstructured, mut text: String) -> Result<String> {
    if u.ratio(1u8, 2)? || text.is_empty() {
        return Ok(text);
    }
    let at = u.int_in_range(0..=text.len() - 1)?;
    let at = (0..=at).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
    match u.int_in_range(0..=2u8)? {
        0 => text.truncate(at),
        1 => text.insert(at, u.arbitrary()?),
        _ => {
            text.remove(at);
        }
    }
    Ok(text)
}
