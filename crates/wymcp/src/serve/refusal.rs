//! [`Refusal`]: a message the serving core refused, with the JSON-RPC error it is answered with
//! and the class a transport with statuses maps to one (Streamable HTTP: 400, 404, 500, 503).

use serde_json::{Value, json};

use crate::protocol::{RpcError, failure};
use crate::session::{StoreError, StoreErrorKind};

/// What kind of refusal it is: every transport writes the same JSON-RPC error; Streamable HTTP
/// also answers the class's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// The message is invalid where it stands (HTTP 400).
    Invalid,
    /// The method is not served (HTTP 404).
    MethodNotFound,
    /// The message needs a session and names none (HTTP 400: the `Mcp-Session-Id` header is
    /// missing).
    NoSession,
    /// The session does not exist (any more), or is another caller's (HTTP 404).
    SessionGone,
    /// The session store failed (HTTP 503: the request can be retried).
    Store,
    /// A limit is reached: try again later (HTTP 503).
    Unavailable,
    /// The handler's own error, answered as any result is (HTTP 200).
    Handler,
}

/// A message the serving core refused.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Refusal {
    /// The id the answer carries (`null` unless the message was a request).
    pub(crate) id: Value,
    pub(crate) error: RpcError,
    pub(crate) class: Class,
}

impl Refusal {
    pub(crate) fn new(class: Class, id: Value, error: RpcError) -> Self {
        Refusal { id, error, class }
    }

    /// `-32600` "Invalid Request", `data.error` saying why.
    pub(crate) fn invalid(id: Value, reason: impl Into<String>) -> Self {
        Refusal::new(Class::Invalid, id, invalid_request(reason))
    }

    /// `-32601` "Method not found" (the method is not echoed).
    pub(crate) fn method_not_found(id: Value) -> Self {
        let error = RpcError::new(RpcError::METHOD_NOT_FOUND, "Method not found", None);
        Refusal::new(Class::MethodNotFound, id, error)
    }

    /// `-32600`: the message needs a session and names none.
    pub(crate) fn no_session(id: Value) -> Self {
        let error = invalid_request("Session not initialized. Send initialize first.");
        Refusal::new(Class::NoSession, id, error)
    }

    /// `-32001` "Session terminated": the session is gone, or another caller's.
    pub(crate) fn session_gone(id: Value) -> Self {
        let error = RpcError::new(-32001, "Session terminated", None);
        Refusal::new(Class::SessionGone, id, error)
    }

    /// A session (or stdio connection) running its most calls already.
    pub(crate) fn too_many_calls(id: Value, max: usize) -> Self {
        Refusal::new(
            Class::Unavailable,
            id,
            RpcError::new(
                RpcError::SERVER_BUSY,
                format!(
                    "Too many calls running: the limit is {max} at once \
                     (Limits::max_calls_per_session). Wait for one to finish, then retry."
                ),
                None,
            ),
        )
    }

    /// `-32603` with `data.reason` "session store full" when the store refuses writes for
    /// want of room ([`StoreErrorKind::Full`]), else "session store unavailable" (the error
    /// is logged here).
    pub(crate) fn store(id: Value, err: &StoreError) -> Self {
        tracing::error!(%err, "MCP session store failed");
        let reason = match err.kind() {
            StoreErrorKind::Full => "session store full",
            _ => "session store unavailable",
        };
        let error = RpcError::new(
            RpcError::INTERNAL_ERROR,
            "Internal error",
            Some(json!({ "reason": reason })),
        );
        Refusal::new(Class::Store, id, error)
    }

    /// The whole JSON-RPC error response.
    pub(crate) fn to_message(&self) -> Value {
        failure(self.id.clone(), &self.error)
    }
}

/// `-32600` "Invalid Request" with `data.error` = `reason`: every invalid message, every
/// transport.
pub(crate) fn invalid_request(reason: impl Into<String>) -> RpcError {
    RpcError::new(
        RpcError::INVALID_REQUEST,
        "Invalid Request",
        Some(json!({ "error": reason.into() })),
    )
}
