//! Admission of a stateless request: the JSON-RPC envelope, the method, the `_meta` envelope
//! and the revision, each refused with its own code; then the request's context and its
//! multi round-trip input round.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::context::ContextBuilder;
use crate::mrtr::{self, Round};
use crate::protocol::modern::{
    self, CLIENT_CAPABILITIES_KEY, Envelope, ModernMethod, PROTOCOL_VERSION_KEY,
};
use crate::protocol::{ProtocolVersion, RpcError, failure, validate_envelope};
use crate::{Context, Server};

/// Whether a request's body names the stateless era by itself (stdio has no header layer):
/// its `_meta` carries one of the envelope's required keys (whatever the value, so an
/// unsupported revision is told so, and a half envelope is told what it misses), or its
/// method exists only in this era (`server/discover`, `subscriptions/listen`).
pub(crate) fn names_era(method: &str, message: &Value) -> bool {
    let meta = message
        .get("params")
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object);
    let marked = meta.is_some_and(|m| {
        m.contains_key(PROTOCOL_VERSION_KEY) || m.contains_key(CLIENT_CAPABILITIES_KEY)
    });
    marked || matches!(method, "server/discover" | "subscriptions/listen")
}

/// Why a stateless request is refused, in the order the checks run. Each knows its JSON-RPC
/// error; a transport adds what it has on top (Streamable HTTP: the status).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Refusal {
    /// Not a valid JSON-RPC request: `-32600`, `data.error` saying why.
    InvalidRequest { id: Value, reason: String },
    /// A method this era does not serve (removed, unknown, or for a capability the server
    /// does not declare): `-32601`, the method not echoed.
    MethodNotFound { id: Value },
    /// `_meta` missing, or without `protocolVersion` / `clientCapabilities`: `-32602`.
    Envelope { id: Value, error: RpcError },
    /// A revision not served: `-32022` with `data.supported` and `data.requested`.
    UnsupportedVersion { id: Value, error: RpcError },
    /// A bad `requestState` or `inputResponses`: `-32602` with `data.reason` (a handler's
    /// error, not an envelope one).
    InputRound { id: Value, error: RpcError },
}

impl Refusal {
    /// The id the refusal carries: the request's.
    pub(crate) fn id(&self) -> &Value {
        match self {
            Refusal::InvalidRequest { id, .. }
            | Refusal::MethodNotFound { id }
            | Refusal::Envelope { id, .. }
            | Refusal::UnsupportedVersion { id, .. }
            | Refusal::InputRound { id, .. } => id,
        }
    }

    /// The JSON-RPC error object.
    pub(crate) fn error(&self) -> RpcError {
        match self {
            Refusal::InvalidRequest { reason, .. } => RpcError::new(
                RpcError::INVALID_REQUEST,
                "Invalid Request",
                Some(json!({ "error": reason })),
            ),
            Refusal::MethodNotFound { .. } => {
                RpcError::new(RpcError::METHOD_NOT_FOUND, "Method not found", None)
            }
            Refusal::Envelope { error, .. }
            | Refusal::UnsupportedVersion { error, .. }
            | Refusal::InputRound { error, .. } => error.clone(),
        }
    }

    /// The whole JSON-RPC error response.
    pub(crate) fn to_message(&self) -> Value {
        failure(self.id().clone(), &self.error())
    }
}

/// A request admitted so far: a valid JSON-RPC request for a method this era serves, with a
/// well-formed `_meta` envelope. Its revision is checked next ([`Incoming::version`]).
#[derive(Debug)]
pub(crate) struct Incoming {
    pub(crate) id: Value,
    pub(crate) name: String,
    pub(crate) method: ModernMethod,
    pub(crate) params: Option<Value>,
    pub(crate) envelope: Envelope,
}

/// Checks a request (`id`, method `name`) of the stateless era: its JSON-RPC envelope, its
/// method, its `_meta` envelope.
pub(crate) fn admit(
    server: &Server,
    id: Value,
    name: String,
    message: &Value,
) -> Result<Incoming, Refusal> {
    if let Err(reason) = validate_envelope(message) {
        return Err(Refusal::InvalidRequest { id, reason });
    }
    let Some(method) =
        ModernMethod::parse(&name).filter(|m| m.is_served_by(&modern::capabilities(server)))
    else {
        return Err(Refusal::MethodNotFound { id });
    };
    let params = message.get("params").cloned();
    let envelope = match Envelope::parse(params.as_ref()) {
        Ok(envelope) => envelope,
        Err(error) => return Err(Refusal::Envelope { id, error }),
    };
    Ok(Incoming {
        id,
        name,
        method,
        params,
        envelope,
    })
}

impl Incoming {
    /// The requested revision, when it is one this era serves.
    pub(crate) fn version(&self) -> Result<ProtocolVersion, Refusal> {
        self.envelope
            .version()
            .map_err(|error| Refusal::UnsupportedVersion {
                id: self.id.clone(),
                error,
            })
    }

    /// The request's context (what `_meta` says) and, for `tools/call`, `prompts/get` and
    /// `resources/read`, its input round (`inputResponses`, the verified `requestState`,
    /// bound to `principal` when the transport authenticated one).
    pub(crate) fn prepare(
        self,
        server: &Server,
        version: ProtocolVersion,
        principal: Option<&str>,
    ) -> Result<Prepared, Refusal> {
        let mut ctx = Context::builder()
            .request_id(self.id.clone())
            .protocol_version(version)
            .client_capabilities(self.envelope.client_capabilities().clone());
        if let Some(info) = self.envelope.client_info() {
            ctx = ctx.client_info(info.clone());
        }
        if let Some(token) = self.envelope.progress_token() {
            ctx = ctx.progress_token(token.clone());
        }
        if let Some(level) = self.envelope.log_level() {
            ctx = ctx.log_level(level);
        }
        let round = match mrtr::round_for(server, &self.name, self.params.as_ref(), principal) {
            Ok(round) => round.map(Arc::new),
            Err(error) => {
                return Err(Refusal::InputRound { id: self.id, error });
            }
        };
        if let Some(round) = &round {
            ctx = ctx.input_round(round.clone());
        }
        Ok(Prepared {
            id: self.id,
            name: self.name,
            method: self.method,
            params: self.params,
            ctx,
            round,
        })
    }
}

/// A request ready to run: the transport adds what it owns to `ctx` (where notifications go,
/// the cancellation token, the identity) and builds it.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub(crate) id: Value,
    pub(crate) name: String,
    pub(crate) method: ModernMethod,
    pub(crate) params: Option<Value>,
    pub(crate) ctx: ContextBuilder,
    pub(crate) round: Option<Arc<Round>>,
}
