//! The stateless era's server requests (MCP 2026-07-28): a result of `resultType`
//! `input_required` carries the server's sampling, elicitation and roots requests in
//! `inputRequests`; the handlers answer each, and the request is sent again with the answers in
//! `inputResponses` and the server's `requestState`, until a result of another type. The
//! requests of one round are answered concurrently, each handler told its key
//! ([`related_input_key`](super::related_input_key)).

use futures_util::future::join_all;
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
    // The server asked for this request's input: its progress token is the related one.
    let related = params
        .get("_meta")
        .and_then(|meta| meta.get("progressToken"))
        .cloned();
    let mut asked = Vec::with_capacity(requests.len());
    for (key, request) in requests {
        let Some(request_method) = request.get("method").and_then(Value::as_str) else {
            return Err(shape());
        };
        let request_params = request
            .get("params")
            .cloned()
            .unwrap_or_else(|| Value::Object(Map::new()));
        asked.push((key, request_method, request_params));
    }
    // Every request of the round at once, as the server asked them together (a handler that
    // relays them to a client of its own asks that one all of them in one round too).
    let answers = join_all(asked.iter().map(|(key, request_method, request_params)| {
        let key = Some((*key).clone());
        handlers.run(request_method, request_params.clone(), related.clone(), key)
    }))
    .await;
    let mut responses = Map::new();
    for ((key, request_method, _), answer) in asked.into_iter().zip(answers) {
        match answer {
            Ok(answer) => {
                responses.insert(key.clone(), answer);
            }
            Err(error) => {
                return Err(ClientError::InputNotAnswered {
                    method: method.to_owned(),
                    key: key.clone(),
                    request: request_method.to_owned(),
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
