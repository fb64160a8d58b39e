//! The stateless era's server requests (MCP 2026-07-28): a result of `resultType`
//! `input_required` carries the server's sampling, elicitation and roots requests in
//! `inputRequests`; the handlers answer each, and the request is sent again with the answers in
//! `inputResponses` and the server's `requestState`, until a result of another type.

use serde_json::{Map, Value};

use super::handlers::Handlers;
use super::{ClientError, Malformed};

/// Whether `result` asks for input.
pub(crate) fn is_input_required(result: &Value) -> bool {
    result.get("resultType").and_then(Value::as_str) == Some("input_required")
}

/// The params of the next round: `params` with the handlers' answers to `result`'s
/// `inputRequests` in `inputResponses` and its `requestState` (the previous round's removed
/// when it gave none).
pub(crate) async fn next_round(
    handlers: &Handlers,
    method: &str,
    result: &Value,
    mut params: Map<String, Value>,
) -> Result<Map<String, Value>, ClientError> {
    let shape = || ClientError::Malformed {
        method: method.to_owned(),
        what: Malformed::ResultShape,
    };
    let requests = match result.get("inputRequests") {
        None => &Map::new(),
        Some(Value::Object(requests)) => requests,
        Some(_) => return Err(shape()),
    };
    let mut responses = Map::new();
    // The server asked for this request's input: its progress token is the related one.
    let related = params
        .get("_meta")
        .and_then(|meta| meta.get("progressToken"))
        .cloned();
    for (key, request) in requests {
        let Some(asked) = request.get("method").and_then(Value::as_str) else {
            return Err(shape());
        };
        let asked_params = request
            .get("params")
            .cloned()
            .unwrap_or_else(|| Value::Object(Map::new()));
        match handlers.run(asked, asked_params, related.clone()).await {
            Ok(answer) => {
                responses.insert(key.clone(), answer);
            }
            Err(error) => {
                return Err(ClientError::InputNotAnswered {
                    method: method.to_owned(),
                    key: key.clone(),
                    request: asked.to_owned(),
                    error: Box::new(error),
                });
            }
        }
    }
    params.insert("inputResponses".to_owned(), Value::Object(responses));
    match result.get("requestState") {
        Some(Value::String(state)) => {
            params.insert("requestState".to_owned(), Value::String(state.clone()));
        }
        None => {
            params.remove("requestState");
        }
        Some(_) => return Err(shape()),
    }
    Ok(params)
}
