//! JSON-RPC 2.0 messages: classification, envelope validation and response envelopes.

use serde_json::{Map, Value};

use super::RpcError;

/// What kind of JSON-RPC message a parsed body is.
///
/// Classification is looser than validity: a recognisable malformed request (say
/// `"jsonrpc": "1.0"`) is still a [`Kind::Request`], so its rejection can carry its id.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    /// `method` is a string and an `id` key is present (any value).
    Request {
        /// The id, verbatim.
        id: Value,
        /// The method.
        method: String,
    },
    /// `method` is a string and there is no `id` key.
    Notification {
        /// The method.
        method: String,
    },
    /// An `id` key and a `result` or `error` key: a client's answer to a server request.
    Response {
        /// The id, verbatim.
        id: Value,
    },
    /// Anything else.
    Unknown,
}

impl Kind {
    /// Classifies a parsed body.
    pub(crate) fn of(body: &Value) -> Kind {
        body.as_object()
            .map_or(Kind::Unknown, |obj| Members::of(obj).kind())
    }

    /// Classifies a parsed body and checks its envelope ([`Members::check`]) in one pass
    /// over its members: the session era reads both of every message.
    pub(crate) fn of_checked(body: &Value) -> (Kind, Result<(), String>) {
        match body.as_object() {
            Some(obj) => {
                let members = Members::of(obj);
                (members.kind(), members.check())
            }
            None => (Kind::Unknown, Err(NOT_AN_OBJECT.to_owned())),
        }
    }

    /// The id a rejection of this message carries: the request's id, `null` for every other
    /// kind (an id on a non-request was minted by the server; echoing it would read as a second
    /// answer to a call the client still awaits).
    pub(crate) fn rejection_id(&self) -> Value {
        match self {
            // An id that is not a string or an integer (a float such as 2^64, which JSON
            // numbers cannot carry exactly here, an object, null) is answered with `null`:
            // never echoed back changed.
            Kind::Request { id, .. } => rejection_id(Some(id)),
            _ => Value::Null,
        }
    }

    /// The method, for requests and notifications.
    pub(crate) fn method(&self) -> Option<&str> {
        match self {
            Kind::Request { method, .. } | Kind::Notification { method } => Some(method),
            _ => None,
        }
    }
}

/// The refusal of a message that is not a JSON object.
const NOT_AN_OBJECT: &str = "a JSON-RPC message must be a JSON object";

/// [`Members::check`] of a message known to be an object.
pub(crate) fn validate_members(obj: &Map<String, Value>) -> Result<(), String> {
    Members::of(obj).check()
}

/// The envelope's members of a message, read in one pass over its object: a lookup per
/// member (the classification's two, the check's four, the era's) cost more than the pass
/// (about 1k instructions per session-era call; docs/performance.md).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Members<'a> {
    pub(crate) jsonrpc: Option<&'a Value>,
    pub(crate) id: Option<&'a Value>,
    pub(crate) method: Option<&'a Value>,
    pub(crate) params: Option<&'a Value>,
    pub(crate) result: Option<&'a Value>,
    pub(crate) error: Option<&'a Value>,
}

impl<'a> Members<'a> {
    /// The members of `obj` the envelope names; any other is skipped.
    pub(crate) fn of(obj: &'a Map<String, Value>) -> Members<'a> {
        let mut members = Members::default();
        for (key, value) in obj {
            let slot = match key.as_str() {
                "jsonrpc" => &mut members.jsonrpc,
                "id" => &mut members.id,
                "method" => &mut members.method,
                "params" => &mut members.params,
                "result" => &mut members.result,
                "error" => &mut members.error,
                _ => continue,
            };
            *slot = Some(value);
        }
        members
    }

    /// The message's [`Kind`].
    pub(crate) fn kind(&self) -> Kind {
        match (self.method, self.id) {
            (Some(Value::String(method)), Some(id)) => Kind::Request {
                id: id.clone(),
                method: method.clone(),
            },
            (Some(Value::String(method)), None) => Kind::Notification {
                method: method.clone(),
            },
            (None, Some(id)) if self.result.is_some() || self.error.is_some() => {
                Kind::Response { id: id.clone() }
            }
            _ => Kind::Unknown,
        }
    }

    /// Checks the message's JSON-RPC envelope: `"jsonrpc": "2.0"`; a request's id a string or
    /// an integer; `params`, when present, an object; a response carrying exactly one of
    /// `result` (an object) and `error` (an object with an integer `code` and a string
    /// `message`). Method-specific params are not checked here. The error is a
    /// human-readable reason.
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.jsonrpc.and_then(Value::as_str) != Some("2.0") {
            return Err("\"jsonrpc\" must be the string \"2.0\"".to_owned());
        }
        if let Some(method) = self.method {
            if !method.is_string() {
                return Err("\"method\" must be a string".to_owned());
            }
            if let Some(params) = self.params
                && !params.is_object()
            {
                return Err("\"params\" must be an object".to_owned());
            }
            return match self.id {
                None => Ok(()),
                Some(id) if valid_id(id) => Ok(()),
                // MCP: unlike base JSON-RPC, a request id must not be null.
                Some(Value::Null) => Err(
                    "\"id\" must not be null: a request id is a string or an integer".to_owned(),
                ),
                Some(_) => Err("\"id\" must be a string or an integer".to_owned()),
            };
        }
        match self.id {
            Some(id) if valid_id(id) => {}
            Some(_) => return Err("\"id\" must be a string or an integer".to_owned()),
            None => {
                return Err(
                    "a message needs \"method\", or \"id\" with \"result\" or \"error\"".to_owned(),
                );
            }
        }
        match (self.result, self.error) {
            (Some(Value::Object(_)), None) => Ok(()),
            (None, Some(Value::Object(err)))
                if err.get("code").is_some_and(Value::is_i64)
                    && err.get("message").is_some_and(Value::is_string) =>
            {
                Ok(())
            }
            (None, Some(_)) => Err(
                "\"error\" must be an object with an integer \"code\" and a string \"message\""
                    .to_owned(),
            ),
            (Some(_), None) => Err("\"result\" must be an object".to_owned()),
            (Some(_), Some(_)) => {
                Err("a response carries \"result\" or \"error\", not both".to_owned())
            }
            (None, None) => {
                Err("a message needs \"method\", or \"id\" with \"result\" or \"error\"".to_owned())
            }
        }
    }
}

/// The id a refusal of a request with `id` carries: the id when it is a string or an integer,
/// else `null` (an id is never echoed back changed).
pub(crate) fn rejection_id(id: Option<&Value>) -> Value {
    match id {
        Some(id) if valid_id(id) => id.clone(),
        _ => Value::Null,
    }
}

fn valid_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

/// A success envelope: `{"jsonrpc":"2.0","id":…,"result":…}`.
pub(crate) fn success(id: Value, result: Value) -> Value {
    envelope(id, "result", result)
}

/// An error envelope: `{"jsonrpc":"2.0","id":…,"error":{…}}`.
pub(crate) fn failure(id: Value, error: &RpcError) -> Value {
    let mut err = Map::new();
    err.insert("code".to_owned(), Value::from(error.code()));
    err.insert("message".to_owned(), Value::from(error.message()));
    if let Some(data) = error.data() {
        err.insert("data".to_owned(), data.clone());
    }
    envelope(id, "error", Value::Object(err))
}

/// The bytes of [`success`]`(id, result)`, written straight from the parts: no envelope map is
/// built and dropped. The keys come in the order a `Value` map writes them (sorted), so the
/// bytes are identical. For a `result` that serializes infallibly (a `Value`, a wire view).
pub(crate) fn success_bytes<T: serde::Serialize + ?Sized>(id: &Value, result: &T) -> Vec<u8> {
    serde_json::to_vec(&Success::new(id, result)).unwrap_or_default()
}

/// [`success_bytes`] as a line of text (the stdio transport writes strings).
pub(crate) fn success_text<T: serde::Serialize + ?Sized>(id: &Value, result: &T) -> String {
    serde_json::to_string(&Success::new(id, result)).unwrap_or_default()
}

/// A success envelope over borrowed parts, its fields in a `Value` map's (sorted) order.
#[derive(serde::Serialize)]
struct Success<'a, T: ?Sized> {
    id: &'a Value,
    jsonrpc: &'static str,
    result: &'a T,
}

impl<'a, T: ?Sized> Success<'a, T> {
    fn new(id: &'a Value, result: &'a T) -> Self {
        Success {
            id,
            jsonrpc: "2.0",
            result,
        }
    }
}

/// `{"jsonrpc":"2.0","id":…,<key>:…}`, built by moving `id` and `body` in (`json!` would
/// serialize a deep copy of each).
fn envelope(id: Value, key: &str, body: Value) -> Value {
    let mut envelope = Map::new();
    envelope.insert("jsonrpc".to_owned(), Value::String("2.0".to_owned()));
    envelope.insert("id".to_owned(), id);
    envelope.insert(key.to_owned(), body);
    Value::Object(envelope)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_are_classified_loosely_and_validated_strictly() {
        let kind = |v: Value| Kind::of(&v);
        assert!(matches!(
            kind(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})),
            Kind::Request { .. }
        ));
        assert!(matches!(
            kind(json!({"jsonrpc": "2.0", "method": "x"})),
            Kind::Notification { .. }
        ));
        assert!(matches!(
            kind(json!({"jsonrpc": "2.0", "id": 1, "result": {}})),
            Kind::Response { .. }
        ));
        assert!(matches!(kind(json!([1])), Kind::Unknown));
        assert!(
            Kind::of_checked(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
                .1
                .is_ok()
        );
        assert!(
            Kind::of_checked(&json!({"jsonrpc": "1.0", "id": 1, "method": "ping"}))
                .1
                .is_err()
        );
        assert!(
            Kind::of_checked(&json!({"jsonrpc": "2.0", "id": 42}))
                .1
                .is_err()
        );
    }

    #[test]
    fn success_bytes_equal_the_envelope_value_bytes() {
        for id in [json!(7), json!("req-1"), json!(null)] {
            let result = json!({"content": [{"type": "text", "text": "x"}], "isError": false});
            assert_eq!(
                success_text(&id, &result).into_bytes(),
                success_bytes(&id, &result)
            );
            assert_eq!(
                success_bytes(&id, &result),
                serde_json::to_vec(&success(id, result)).expect("serializes")
            );
        }
    }
}
