//! The refusals the matrix server must give: each gate of the `tasks` tool (an `isError`
//! result) and the JSON-RPC errors of tools and prompts, alike on every path; and the
//! refusals of what is not one request, worded per transport.

use serde_json::{Value, json};

use super::Path;

/// A `tasks` call one gate refuses.
pub(crate) struct GateCase {
    pub(crate) label: &'static str,
    pub(crate) arguments: Value,
    /// The JSON of the result's one text item.
    pub(crate) payload: Value,
}

/// A request refused with a JSON-RPC error.
pub(crate) struct RpcCase {
    pub(crate) label: &'static str,
    pub(crate) method: &'static str,
    pub(crate) params: Value,
    /// The HTTP status it is answered with.
    pub(crate) status: u16,
    pub(crate) error: Value,
}

/// The `input_schema` every data gate of `tasks create` publishes.
fn create_schema() -> Value {
    json!({"defaults": {}, "required": ["title"], "properties": {
        "priority": {"type": "integer", "minimum": 1, "maximum": 5},
        "title": {"type": "string", "minLength": 1}}})
}

/// The `actions` of the missing and unknown action refusals.
fn create_choice() -> Value {
    json!([{"name": "create", "description": "Create a task",
        "signature": "create(title: string, priority?: integer)"}])
}

fn gate(label: &'static str, arguments: Value, payload: Value) -> GateCase {
    GateCase {
        label,
        arguments,
        payload,
    }
}

/// Every gate of an action tool, in the gates' order.
pub(crate) fn gates() -> Vec<GateCase> {
    let argument_help = "help {tool: \"tasks\"}";
    let action_help = "help {tool: \"tasks\", action: \"create\"}";
    vec![
        gate(
            "unknown_arguments",
            json!({"action": "create", "verbose": true}),
            json!({
            "error": "unknown_arguments",
            "message": "Unknown argument(s): verbose. Valid arguments: action, data.",
            "unknown": ["verbose"], "unknown_count": 1,
            "valid_arguments": ["action", "data"], "help": argument_help}),
        ),
        gate(
            "invalid_argument_type",
            json!({"action": 42}),
            json!({
            "error": "invalid_argument_type",
            "message": "Argument 'action' must be a JSON string.",
            "argument": "action", "expected": "string", "help": argument_help}),
        ),
        gate(
            "missing_action",
            json!({"data": {"title": "x"}}),
            json!({
            "error": "missing_action",
            "message": "Missing required 'action' argument for tool 'tasks'. Valid actions: create.",
            "valid_actions": ["create"], "actions": create_choice(), "help": argument_help}),
        ),
        gate(
            "unknown_action",
            json!({"action": "fetch"}),
            json!({
            "error": "unknown_action",
            "message": "Unknown action 'fetch' for tool 'tasks'. Valid actions: create.",
            "valid_actions": ["create"], "actions": create_choice(), "help": argument_help}),
        ),
        gate(
            "missing_required_fields",
            json!({"action": "create", "data": {}}),
            json!({
            "error": "missing_required_fields", "action": "create",
            "message": "Required fields missing: title", "missing": ["title"],
            "schemas": [{"path": "/title", "schema": {"type": "string", "minLength": 1}}],
            "input_schema": create_schema(), "help": action_help}),
        ),
        gate(
            "unknown_params",
            json!({"action": "create", "data": {"title": "a", "colour": "red"}}),
            json!({
                "error": "unknown_params", "action": "create",
                "message": "Unknown parameter(s) for action 'create': /colour. \
                            These are rejected rather than silently ignored.",
                "unknown": ["/colour"], "unknown_count": 1,
                "allowed": {"": ["priority", "title"]},
                "input_schema": create_schema(), "help": action_help}),
        ),
        gate(
            "invalid_values",
            json!({"action": "create", "data": {"title": "", "priority": 9}}),
            json!({
                "error": "invalid_values", "action": "create",
                "message": "Invalid value(s) for action 'create': /priority, /title.",
                "invalid": [{"path": "/priority", "problems": ["must be <= 5"]},
                            {"path": "/title", "problems": ["length must be >= 1"]}],
                "invalid_count": 2,
                "schemas": [
                    {"path": "/priority", "schema": {"type": "integer", "minimum": 1, "maximum": 5}},
                    {"path": "/title", "schema": {"type": "string", "minLength": 1}}],
                "input_schema": create_schema(), "help": action_help}),
        ),
    ]
}

fn rpc(
    label: &'static str,
    method: &'static str,
    params: Value,
    status: u16,
    error: Value,
) -> RpcCase {
    RpcCase {
        label,
        method,
        params,
        status,
        error,
    }
}

/// The JSON-RPC refusals both eras give alike: an unknown method (HTTP 404), invalid params
/// (HTTP 200, like every error a handler answers).
pub(crate) fn rpc_cases() -> Vec<RpcCase> {
    let invalid = |message: &str, data: Value| {
        let mut error = json!({"code": -32602, "message": message});
        if !data.is_null() {
            error["data"] = data;
        }
        error
    };
    vec![
        rpc(
            "unknown method",
            "tools/frobnicate",
            json!({}),
            404,
            json!({"code": -32601, "message": "Method not found"}),
        ),
        rpc(
            "unknown tool",
            "tools/call",
            json!({"name": "nope", "arguments": {}}),
            200,
            invalid("Unknown tool: nope", Value::Null),
        ),
        rpc(
            "tools/call without a name",
            "tools/call",
            json!({"arguments": {}}),
            200,
            invalid(
                "Invalid params",
                json!({"reason": "Missing or invalid 'name' in params"}),
            ),
        ),
        rpc(
            "prompt without its argument",
            "prompts/get",
            json!({"name": "greeting", "arguments": {}}),
            200,
            invalid(
                "Missing required argument 'name' for prompt greeting",
                json!({"argument": "name", "prompt": "greeting"}),
            ),
        ),
        rpc(
            "unknown prompt",
            "prompts/get",
            json!({"name": "nope", "arguments": {}}),
            200,
            invalid(
                "Unknown prompt: nope. Available prompts: greeting",
                json!({"prompt": "nope"}),
            ),
        ),
        rpc(
            "prompt refusing its arguments",
            "prompts/get",
            json!({"name": "greeting", "arguments": {"name": "Ada", "tone": "rude"}}),
            200,
            invalid(
                "Invalid arguments for prompt greeting: tone must be polite",
                json!({"prompt": "greeting"}),
            ),
        ),
    ]
}

/// A text that is not one JSON-RPC request, and the error answering it on one path.
pub(crate) struct FramingCase {
    pub(crate) label: &'static str,
    pub(crate) text: String,
    /// The id of the answer (`null` when none could be read).
    pub(crate) id: Value,
    pub(crate) error: Value,
}

/// A refusal worded with `message` the code's name and the reason in `data` (`structured`:
/// HTTP, and the stateless era's own checks on stdio too) or with the reason in `message`
/// (stdio's framing, and its session era).
fn worded(structured: bool, code: i64, name: &str, data: Value, reason: &str) -> Value {
    match structured {
        true => json!({"code": code, "message": name, "data": data}),
        false => json!({"code": code, "message": reason}),
    }
}

/// What is not one JSON-RPC request, derived from `request` (a valid request on `path`): a
/// parse error and a batch (2025-11-25 and 2026-07-28 take none), refused by the transport's
/// framing; JSON-RPC 1.0, refused by each era's serving.
pub(crate) fn framing_cases(path: Path, request: &Value) -> Vec<FramingCase> {
    let batch = match (path.http(), path.stateless()) {
        (true, false) => {
            "JSON-RPC batches are not supported by protocol version 2025-11-25. \
                          Send one message per POST."
        }
        (true, true) => "MCP 2026-07-28 takes one JSON-RPC request per POST",
        (false, _) => "JSON-RPC batches are not supported on stdio. Send one message per line.",
    };
    let version = "\"jsonrpc\" must be the string \"2.0\"";
    let mut old = request.clone();
    old["jsonrpc"] = json!("1.0");
    vec![
        FramingCase {
            label: "not JSON",
            text: "{not json".to_owned(),
            id: Value::Null,
            error: worded(
                path.http(),
                -32700,
                "Parse error",
                json!({"reason": "Malformed JSON"}),
                "Parse error: malformed JSON",
            ),
        },
        FramingCase {
            label: "a batch",
            text: json!([request]).to_string(),
            id: Value::Null,
            error: worded(
                path.http(),
                -32600,
                "Invalid Request",
                json!({"error": batch}),
                batch,
            ),
        },
        FramingCase {
            label: "JSON-RPC 1.0",
            text: old.to_string(),
            id: request["id"].clone(),
            // Refused by the serving core: worded alike on every path.
            error: json!({"code": -32600, "message": "Invalid Request", "data": {"error": version}}),
        },
    ]
}
