//! Every message the matrix reads, checked against its era's official schema (2025-11-25 for
//! the session paths, 2026-07-28 for the stateless ones): responses by their method's result
//! definition, errors, notifications and the server's requests.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use jsonschema::Validator;
use serde_json::Value;
use wymcp::ProtocolVersion;

use super::Path;
use crate::mcp_schema;

type Cache = Mutex<HashMap<(ProtocolVersion, &'static str), Arc<Validator>>>;

/// The validator of `definition` in `version`'s schema, built once per test binary.
fn validator(version: ProtocolVersion, definition: &'static str) -> Arc<Validator> {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Cache::default);
    let mut cache = cache.lock().unwrap_or_else(PoisonError::into_inner);
    cache
        .entry((version, definition))
        .or_insert_with(|| Arc::new(mcp_schema::validator(version, definition)))
        .clone()
}

fn assert_valid(path: Path, definition: &'static str, value: &Value) {
    let version = match path.stateless() {
        true => ProtocolVersion::V2026_07_28,
        false => ProtocolVersion::V2025_11_25,
    };
    let found = mcp_schema::problems(&validator(version, definition), value);
    assert!(
        found.is_empty(),
        "{path:?}: not a valid {version} {definition}: {found:?}\n{value}"
    );
}

/// The session era's result definition of `method`.
fn session_result(method: &str) -> &'static str {
    match method {
        "initialize" => "InitializeResult",
        "ping" | "logging/setLevel" | "resources/subscribe" => "EmptyResult",
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        "resources/list" => "ListResourcesResult",
        "resources/read" => "ReadResourceResult",
        "resources/templates/list" => "ListResourceTemplatesResult",
        "prompts/list" => "ListPromptsResult",
        "prompts/get" => "GetPromptResult",
        "completion/complete" => "CompleteResult",
        other => panic!("the matrix checks no session-era result of {other}"),
    }
}

/// The stateless era's response definition of `method`.
fn stateless_response(method: &str) -> &'static str {
    match method {
        "server/discover" => "DiscoverResultResponse",
        "tools/list" => "ListToolsResultResponse",
        "tools/call" => "CallToolResultResponse",
        "resources/list" => "ListResourcesResultResponse",
        "resources/read" => "ReadResourceResultResponse",
        "resources/templates/list" => "ListResourceTemplatesResultResponse",
        "prompts/list" => "ListPromptsResultResponse",
        "prompts/get" => "GetPromptResultResponse",
        "completion/complete" => "CompleteResultResponse",
        other => panic!("the matrix checks no 2026-07-28 result of {other}"),
    }
}

/// Checks the response to `method`.
pub(crate) fn check_response(path: Path, method: &str, response: &Value) {
    if response.get("error").is_some() {
        return assert_valid(path, "JSONRPCErrorResponse", response);
    }
    match path.stateless() {
        true => assert_valid(path, stateless_response(method), response),
        false => {
            assert_valid(path, "JSONRPCResultResponse", response);
            assert_valid(path, session_result(method), &response["result"]);
        }
    }
}

/// Checks a notification, or (session era) a request of the server.
pub(crate) fn check_message(path: Path, message: &Value) {
    let definition = match message["method"].as_str().unwrap_or_default() {
        "notifications/progress" => "ProgressNotification",
        "notifications/message" => "LoggingMessageNotification",
        "elicitation/create" => "ElicitRequest",
        "sampling/createMessage" => "CreateMessageRequest",
        other => panic!("{path:?}: the matrix expects no {other}: {message}"),
    };
    assert_valid(path, definition, message);
}

/// Checks a 2026-07-28 `input_required` result.
pub(crate) fn check_input_required(path: Path, result: &Value) {
    assert_valid(path, "InputRequiredResult", result);
}
