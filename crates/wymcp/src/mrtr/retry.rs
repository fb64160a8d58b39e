//! A request's side of a round: `inputResponses` and `requestState` read from `params`, the
//! request's binding (method, target, argument digest, principal), the incoming state opened
//! and checked against it.

use bytes::Bytes;
use serde_json::{Map, Value, json};

use super::round::{BoundRequest, Round};
use super::state::{Codec, OpenError, now_ms};
use super::{INVALID_INPUT_RESPONSES, INVALID_REQUEST_STATE, supported};
use crate::protocol::RpcError;

/// The round of a request of `method` (`tools/call`, `prompts/get`, `resources/read`), by
/// `principal` (the authenticated identity's subject, when there is one); `None` for methods
/// that never answer `input_required`.
///
/// A `requestState` that does not verify, has expired, or was issued for another request is
/// `-32602` with `data.reason: "invalid_request_state"`; an `inputResponses` that is not an
/// object is `-32602` with `data.reason: "invalid_input_responses"`.
///
/// `raw` is the request's message as the transport received it, when the transport keeps it:
/// the request a state is bound to is then read from it again only when a state is issued
/// (most calls never ask for input), instead of its arguments' canonical text being written
/// for every call before the call consumes them.
pub(crate) fn round_for(
    codec: &Codec,
    method: &str,
    params: Option<&Value>,
    principal: Option<&str>,
    raw: Option<&Bytes>,
) -> Result<Option<Round>, RpcError> {
    let Some(method) = supported(method) else {
        return Ok(None);
    };
    let responses = match params.and_then(|p| p.get("inputResponses")) {
        None => Map::new(),
        Some(Value::Object(map)) => map.clone(),
        Some(_) => return Err(invalid_input_responses()),
    };
    let state = params.and_then(|p| p.get("requestState"));
    // Without a state to check now, and with the message kept, the target is read when a
    // state is first issued; else now, while the params are here.
    let target = match (state, raw) {
        (None, Some(raw)) => Target::Later(raw.clone()),
        _ => Target::of(method, params),
    };
    let request = BoundRequest::new(method, target, principal.map(str::to_owned));
    let opened = match state {
        None => None,
        Some(Value::String(token)) => {
            let payload = codec.open(token, now_ms()).map_err(invalid_request_state)?;
            let binding = request.bind();
            if !binding.matches(&payload) {
                return Err(invalid_request_state(OpenError::OtherRequest));
            }
            Some((payload, binding))
        }
        Some(_) => return Err(invalid_request_state(OpenError::Malformed)),
    };
    Ok(Some(Round::new(codec.clone(), request, opened, responses)))
}

/// What a request's state is bound to besides its method and principal: its target (the
/// tool or prompt name, the resource URI) and its arguments' canonical JSON text.
#[derive(Debug)]
pub(crate) enum Target {
    /// Read from the params.
    Read { name: String, arguments: Vec<u8> },
    /// To be read from the request's message, kept as received, when a state is first issued.
    Later(Bytes),
}

impl Target {
    /// The target of a request of `method` with `params`, read now.
    pub(crate) fn of(method: &str, params: Option<&Value>) -> Target {
        let (name, arguments) = read(method, params);
        Target::Read { name, arguments }
    }

    /// The target's name and a digest of its arguments. A kept message is read again: it
    /// parsed once already, so it parses the same (one that would not reads as no target and
    /// no arguments, which no state of a real request matches).
    pub(crate) fn digested(&self, method: &str) -> (String, String) {
        match self {
            Target::Read { name, arguments } => (name.clone(), digest_text(arguments)),
            Target::Later(raw) => {
                let message = serde_json::from_slice::<Value>(raw).unwrap_or_default();
                let (name, arguments) = read(method, message.get("params"));
                (name, digest_text(&arguments))
            }
        }
    }
}

/// A request's target (`uri` for `resources/read`, else `name`) and its arguments' canonical
/// text (`{}` when it has none).
fn read(method: &str, params: Option<&Value>) -> (String, Vec<u8>) {
    let target_key = if method == "resources/read" {
        "uri"
    } else {
        "name"
    };
    let name = params
        .and_then(|p| p.get(target_key))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    // Room for a typical call's arguments: the text is written without regrowing.
    let mut arguments = Vec::with_capacity(256);
    match params.and_then(|p| p.get("arguments")) {
        None | Some(Value::Null) => arguments.extend_from_slice(b"{}"),
        Some(given) => canonical(given, &mut arguments),
    }
    (name, arguments)
}

/// The digest of `value`'s canonical JSON (object keys sorted at every depth;
/// [`Codec::digest`]): the same arguments give the same digest whatever order the client
/// wrote them in.
pub(crate) fn digest(value: &Value) -> String {
    let mut text = Vec::new();
    canonical(value, &mut text);
    digest_text(&text)
}

/// The digest of a canonical JSON text (see [`digest`]).
pub(crate) fn digest_text(text: &[u8]) -> String {
    Codec::digest(text)
}

/// Appends `value`'s canonical JSON (object keys sorted at every depth, compact) to `out`.
fn canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        // serde_json's map iterates in key order unless its `preserve_order` feature is on
        // somewhere in the build: then (only) the keys are sorted here.
        Value::Object(map) if map.keys().is_sorted() => {
            canonical_entries(map.iter(), out);
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            canonical_entries(entries.into_iter(), out);
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical(item, out);
            }
            out.push(b']');
        }
        scalar => write_json(scalar, out),
    }
}

fn canonical_entries<'a>(
    entries: impl Iterator<Item = (&'a String, &'a Value)>,
    out: &mut Vec<u8>,
) {
    out.push(b'{');
    for (i, (key, value)) in entries.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_json(key, out);
        out.push(b':');
        canonical(value, out);
    }
    out.push(b'}');
}

/// Appends `value`'s compact JSON to `out` (serde_json's own writing, no intermediate string).
fn write_json<T: serde::Serialize + ?Sized>(value: &T, out: &mut Vec<u8>) {
    // Writing JSON into a `Vec` cannot fail.
    let _ = serde_json::to_writer(&mut *out, value);
}

/// `-32602` "Invalid requestState: …" with `data.reason: "invalid_request_state"`.
fn invalid_request_state(why: OpenError) -> RpcError {
    RpcError::new(
        RpcError::INVALID_PARAMS,
        format!("Invalid requestState: {why}"),
        Some(json!({ "reason": INVALID_REQUEST_STATE })),
    )
}

/// `-32602` for an `inputResponses` that is not an object.
fn invalid_input_responses() -> RpcError {
    RpcError::new(
        RpcError::INVALID_PARAMS,
        "Invalid inputResponses: expected an object mapping input keys to results",
        Some(json!({ "reason": INVALID_INPUT_RESPONSES })),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_ignores_key_order_but_not_values() {
        let a = serde_json::from_str::<Value>(r#"{"b":1,"a":{"y":[1,2],"x":"s"}}"#).unwrap();
        let b = serde_json::from_str::<Value>(r#"{"a":{"x":"s","y":[1,2]},"b":1}"#).unwrap();
        let c = serde_json::from_str::<Value>(r#"{"a":{"x":"s","y":[2,1]},"b":1}"#).unwrap();
        assert_eq!(digest(&a), digest(&b));
        assert_ne!(digest(&a), digest(&c));
    }

    #[test]
    fn a_kept_message_binds_as_its_params_do() {
        let raw = r#"{"id": 1, "params": {"arguments": {"b": [1, 2], "a": {"y": "s", "x": 1}},
            "name": "greet"}, "method": "tools/call", "jsonrpc": "2.0"}"#;
        let message: Value = serde_json::from_str(raw).unwrap();
        let later = Target::Later(Bytes::from(raw)).digested("tools/call");
        let now = Target::of("tools/call", message.get("params")).digested("tools/call");
        assert_eq!(later, now);
        assert_eq!(later.0, "greet");
        let other = json!({"name": "greet", "arguments": {"b": [2, 1]}});
        assert_ne!(
            Target::of("tools/call", Some(&other)).digested("tools/call"),
            now
        );
    }

    #[test]
    fn list_methods_have_no_round() {
        let codec = Codec::default();
        let params = json!({"inputResponses": 5});
        assert!(
            round_for(&codec, "tools/list", Some(&params), None, None)
                .unwrap()
                .is_none()
        );
        let err = round_for(&codec, "tools/call", Some(&params), None, None).unwrap_err();
        assert_eq!(err.code(), RpcError::INVALID_PARAMS);
        let err = round_for(
            &codec,
            "tools/call",
            Some(&json!({"requestState": 1})),
            None,
            None,
        )
        .unwrap_err();
        assert_eq!(err.data().unwrap()["reason"], "invalid_request_state");
    }
}
