//! Admission of a stateless request: the JSON-RPC envelope, the method, the `_meta` envelope,
//! the routing headers where the transport has them, and the revision, each refused with its
//! own code; then the request's context and its multi round-trip input round.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::RoutingHeaders;
use crate::context::ContextBuilder;
use crate::mrtr::{self, Round};
use crate::protocol::stateless::{
    self as stateless, CLIENT_CAPABILITIES_KEY, Envelope, PROTOCOL_VERSION_KEY, header_mismatch,
};
use crate::protocol::{Members, Method, ProtocolVersion, rejection_id, validate_members};
use crate::serve::{Class, Refusal};
use crate::{Context, Server};

use crate::protocol::headers::{
    METHOD as METHOD_HEADER, NAME as NAME_HEADER, PROTOCOL_VERSION as VERSION_HEADER,
};

/// Whether a message's body claims the stateless era by itself: its `_meta` carries one of
/// the envelope's required keys (whatever the value, so an unsupported revision is told so,
/// and a half envelope is told what it misses), or it is a request of a method that exists
/// only in this era (`server/discover`, `subscriptions/listen`). The body's half of
/// [`Era::of`](crate::serve::Era::of).
pub(crate) fn claimed_in_body(message: &Value) -> bool {
    // One pass over the envelope's members (every message of either era is read here).
    let Some(members) = message.as_object().map(Members::of) else {
        return false;
    };
    let meta = members
        .params
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object);
    let marked = meta.is_some_and(|m| {
        m.contains_key(PROTOCOL_VERSION_KEY) || m.contains_key(CLIENT_CAPABILITIES_KEY)
    });
    marked
        || members.id.is_some()
            && matches!(
                members.method.and_then(Value::as_str),
                Some("server/discover" | "subscriptions/listen")
            )
}

/// A request admitted so far: a valid JSON-RPC request for a method this era serves, with a
/// well-formed `_meta` envelope. Its revision is checked next ([`Incoming::version`]).
#[derive(Debug)]
pub(crate) struct Incoming {
    pub(crate) id: Value,
    pub(crate) name: String,
    pub(crate) method: Method,
    pub(crate) params: Option<Value>,
    pub(crate) envelope: Envelope,
}

/// Checks a request of the stateless era (a message with a string `method` and an `id`): its
/// JSON-RPC envelope, its method, its `_meta` envelope. Its members move out of it: nothing
/// of a call's is copied.
pub(crate) fn admit(server: &Server, message: Map<String, Value>) -> Result<Incoming, Refusal> {
    if let Err(reason) = validate_members(&message) {
        // The refusal carries the id only when it is one (a string or an integer): an object
        // or a boolean sent as the id is never echoed back (found by fuzzing).
        return Err(Refusal::invalid(rejection_id(message.get("id")), reason));
    }
    // One pass moves the members out (the envelope's check above read them in place).
    let (mut id, mut name, mut params) = (Value::Null, String::new(), None);
    for (key, value) in message {
        match (key.as_str(), value) {
            ("id", value) => id = value,
            ("method", Value::String(method)) => name = method,
            ("params", value) => params = Some(value),
            _ => {}
        }
    }
    let Some(method) = Method::parse(&name)
        .filter(|m| m.served_stateless() && m.is_served_by(server.stateless_capabilities()))
    else {
        return Err(Refusal::method_not_found(id));
    };
    let envelope = match Envelope::parse(params.as_mut()) {
        Ok(envelope) => envelope,
        Err(error) => return Err(Refusal::new(Class::Invalid, id, error)),
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
            .map_err(|error| Refusal::new(Class::Invalid, self.id.clone(), error))
    }

    /// `MCP-Protocol-Version` equal to the envelope's revision, then `Mcp-Method` and
    /// `Mcp-Name` equal to the body: values trimmed, compared case-sensitively (`-32020`).
    pub(crate) fn check_headers(&self, headers: &dyn RoutingHeaders) -> Result<(), Refusal> {
        let expect = |key: &str, shown: &str, body: &str| -> Result<(), Refusal> {
            let sent = headers.get(key).map(str::trim);
            if sent == Some(body) {
                Ok(())
            } else {
                let error = header_mismatch(shown, sent, body);
                Err(Refusal::new(Class::Invalid, self.id.clone(), error))
            }
        };
        expect(
            VERSION_HEADER,
            "MCP-Protocol-Version",
            self.envelope.requested(),
        )?;
        expect(METHOD_HEADER, "Mcp-Method", &self.name)?;
        if let Some(key) = self.method.name_param()
            && let Some(body) = self
                .params
                .as_ref()
                .and_then(|p| p.get(key))
                .and_then(Value::as_str)
        {
            expect(NAME_HEADER, "Mcp-Name", body)?;
        }
        Ok(())
    }

    /// For `tools/call`, `Mcp-Param-<Suffix>` for every argument whose schema property carries
    /// `"x-mcp-header": "<Suffix>"`: present exactly when the argument is, and equal to it once
    /// decoded (a string as is, any other value as its JSON text).
    pub(crate) fn check_param_headers(
        &self,
        server: &Server,
        headers: &dyn RoutingHeaders,
    ) -> Result<(), Refusal> {
        let params = self.params.as_ref();
        if self.method != Method::ToolsCall {
            return Ok(());
        }
        let Some(name) = params.and_then(|p| p.get("name")).and_then(Value::as_str) else {
            return Ok(());
        };
        server.with_registered_tool(name, |tool| {
            let Some(tool) = tool else {
                return Ok(());
            };
            self.check_header_params(tool, params, headers)
        })
    }

    /// The `Mcp-Param-*` headers of `tool`'s call match its arguments.
    fn check_header_params(
        &self,
        tool: &crate::tool::registered::RegisteredTool,
        params: Option<&Value>,
        headers: &dyn RoutingHeaders,
    ) -> Result<(), Refusal> {
        let arguments = params.and_then(|p| p.get("arguments"));
        for param in tool.definition.header_params() {
            let sent = headers.get(&param.lookup).map(str::trim);
            let body = arguments
                .and_then(|a| a.get(&param.argument))
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                });
            let matches = match (sent, &body) {
                (None, None) => true,
                (Some(sent), Some(body)) => {
                    stateless::decode_param_header(sent).is_some_and(|decoded| decoded == *body)
                }
                _ => false,
            };
            if !matches {
                let shown = body.as_deref().unwrap_or("<absent>");
                let error = header_mismatch(&param.header, sent, shown);
                return Err(Refusal::new(Class::Invalid, self.id.clone(), error));
            }
        }
        Ok(())
    }

    /// The request's context (what `_meta` says) and, for `tools/call`, `prompts/get` and
    /// `resources/read`, its input round (`inputResponses`, the verified `requestState`,
    /// bound to `principal` when the transport authenticated one).
    pub(crate) fn prepare(
        self,
        server: &Server,
        version: ProtocolVersion,
        principal: Option<&str>,
        raw: Option<&bytes::Bytes>,
    ) -> Result<Prepared, Refusal> {
        let log_level = self.envelope.log_level();
        let (capabilities, info, progress) = self.envelope.into_client();
        let mut ctx = Context::builder()
            .request_id(self.id.clone())
            .protocol_version(version)
            .client_capabilities(capabilities)
            .user_state(server.features().user_state.as_ref());
        if let Some(info) = info {
            ctx = ctx.client_info(info);
        }
        if let Some(token) = progress {
            ctx = ctx.progress_token(token);
        }
        if let Some(level) = log_level {
            ctx = ctx.log_level(level);
        }
        let round = match mrtr::round_for(
            &server.features().request_state,
            &self.name,
            self.params.as_ref(),
            principal,
            raw,
        ) {
            Ok(round) => round.map(Arc::new),
            Err(error) => return Err(Refusal::new(Class::Handler, self.id, error)),
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
    pub(crate) method: Method,
    pub(crate) params: Option<Value>,
    pub(crate) ctx: ContextBuilder,
    pub(crate) round: Option<Arc<Round>>,
}
