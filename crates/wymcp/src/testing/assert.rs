//! Assertions on a [`ToolResult`]: success, a gate's refusal, a tool's error, a fault, a hint.

use serde_json::Value;

use super::{GateError, Outcome, ToolResult};

fn describe(result: &ToolResult) -> String {
    let body = result
        .text()
        .map(str::to_owned)
        .unwrap_or_else(|| format!("{:?}", result.content()));
    format!("{:?}: {body}", result.outcome())
}

/// Asserts the call succeeded and returns its reply: the first text item as JSON, or as a JSON
/// string when it is not JSON.
///
/// # Panics
///
/// When the result is an error; the message quotes it.
#[track_caller]
pub fn assert_ok(result: &ToolResult) -> Value {
    if result.is_error() {
        panic!("expected success, got {}", describe(result));
    }
    match (result.json(), result.text()) {
        (Some(json), _) => json.clone(),
        (None, Some(text)) => Value::String(text.to_owned()),
        (None, None) => Value::Null,
    }
}

/// Asserts a gate refused the call with `error` (`"missing_required_fields"`,
/// `"invalid_values"`, `"unknown_params"`, ...) and returns the refusal.
///
/// # Panics
///
/// When the call succeeded, failed another way, or was refused with another error.
#[track_caller]
pub fn assert_gate_error(result: &ToolResult, error: &str) -> GateError {
    match result.gate_error() {
        Some(gate) if gate.error == error => gate,
        Some(gate) => panic!(
            "expected gate error {error:?}, got gate error {:?}: {}",
            gate.error, gate.payload
        ),
        None => panic!("expected gate error {error:?}, got {}", describe(result)),
    }
}

/// Asserts the tool ran and answered an error; returns the text the caller reads (for a
/// failure with a hint context, the JSON body's `error`).
///
/// # Panics
///
/// When the call succeeded, was refused by a gate, or faulted.
#[track_caller]
pub fn assert_tool_error(result: &ToolResult) -> String {
    if result.outcome() != Outcome::ToolError {
        panic!("expected a tool error, got {}", describe(result));
    }
    match result
        .json()
        .and_then(|j| j.get("error"))
        .and_then(Value::as_str)
    {
        Some(error) => error.to_owned(),
        None => result.text().unwrap_or_default().to_owned(),
    }
}

/// Asserts the tool panicked and the framework contained it; returns the fault body
/// (`{"errorType": "tool_fault", ...}`).
///
/// # Panics
///
/// When the call did not fault.
#[track_caller]
pub fn assert_fault(result: &ToolResult) -> Value {
    if result.outcome() != Outcome::Fault {
        panic!("expected a contained fault, got {}", describe(result));
    }
    result.json().cloned().unwrap_or(Value::Null)
}

/// Asserts the result carries a hint pointing at `tool`'s `action`; returns the hint.
///
/// # Panics
///
/// When no hint points there; the message lists the hints.
#[track_caller]
pub fn assert_hint(result: &ToolResult, tool: &str, action: &str) -> Value {
    let hints = result.hints();
    hints
        .iter()
        .find(|h| h["tool"] == tool && h["action"] == action)
        .cloned()
        .unwrap_or_else(|| {
            panic!(
                "expected a hint to {tool} {action}, got hints {hints:?} in {}",
                describe(result)
            )
        })
}
