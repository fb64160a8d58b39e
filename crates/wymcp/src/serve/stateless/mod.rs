//! The stateless era (MCP 2026-07-28), served the same way by every transport: a request's
//! admission (the JSON-RPC envelope, the method, the `_meta` envelope, the routing headers
//! where the transport has them, the revision), its context, its handler under a multi
//! round-trip input round ([`crate::mrtr`]), and its answer shaped for the era
//! (`resultType`, `_meta` serverInfo, cache hints, `-32021`).
//!
//! `subscriptions/listen` shares its filter and its messages ([`listen`]); each transport
//! frames the stream its own way (SSE events, tagged lines on stdout).
//!
//! The order of the checks, and what each refusal is on the wire:
//!
//! | Check | JSON-RPC | HTTP |
//! |---|---|---|
//! | the JSON-RPC envelope | `-32600` | 400 |
//! | a method this era serves, for a capability the server declares | `-32601` | 404 |
//! | `_meta` with `protocolVersion` and `clientCapabilities` | `-32602` | 400 |
//! | (HTTP: `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`) | `-32020` | 400 |
//! | the revision served | `-32022` | 400 |
//! | (HTTP: `Mcp-Param-*`) | `-32020` | 400 |
//! | `requestState`, `inputResponses` | `-32602` | 200 |
//! | a client capability the handler needed, undeclared | `-32021` | 400 |

mod admit;
pub(crate) mod listen;
mod results;
mod wire;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{Call, Core, Inbound, Outcome, Refusal, Related};
use crate::context::{Context, Origin};
use crate::protocol::{Handler, RpcError};
use crate::session::Work;

pub(crate) use admit::claimed_in_body;
use admit::{Prepared, admit};
use results::answer;
pub(crate) use wire::{StatelessCall, meta};

/// The request headers a transport has (Streamable HTTP's), by lower-case name: the era
/// checks `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` against the body.
pub(crate) trait RoutingHeaders: Sync {
    /// The single value of header `name`, as text.
    fn get(&self, name: &str) -> Option<&str>;
}

/// An admitted `subscriptions/listen` request: the transport opens its stream.
#[derive(Debug)]
pub(crate) struct Listen {
    /// The request's id: the subscription id every message of the stream carries.
    pub(crate) id: Value,
    pub(crate) params: Option<Value>,
    /// The request's context: its caller and capabilities.
    pub(crate) ctx: Context,
}

impl Listen {
    /// The part of the request's filter the server honours, or why the filter is refused.
    pub(crate) async fn filter(&self, core: &Core) -> Result<listen::Filter, RpcError> {
        let server = core.server();
        listen::Filter::parse(
            self.params.as_ref(),
            server.limits(),
            &server.features().extensions,
        )?
        .honoured(server, &self.ctx)
        .await
    }
}

/// Serves one message of the stateless era.
pub(super) async fn serve(core: &Core, inbound: Inbound<'_>) -> Result<Outcome, Refusal> {
    let Inbound {
        message,
        identity,
        related,
        headers,
        client,
        raw,
        ..
    } = inbound;
    // Classified by its members where they are, so none is copied: a request's move into
    // the call.
    let Value::Object(message) = message else {
        return Err(not_one_request());
    };
    match (message.get("method"), message.get("id")) {
        (Some(Value::String(_)), Some(_)) => {}
        // Notifications need no answer; this era has no server requests to answer.
        (Some(Value::String(_)), None) => return Ok(Outcome::Accepted),
        _ => return Err(not_one_request()),
    }
    let server = core.server();
    let incoming = admit(server, message)?;
    if let Some(headers) = headers {
        incoming.check_headers(headers)?;
    }
    let version = incoming.version()?;
    if let Some(headers) = headers {
        incoming.check_param_headers(server, headers)?;
    }
    let principal = identity.map(crate::Identity::principal);
    let mut prepared = incoming.prepare(server, version, principal, raw.as_ref())?;
    if let Some(identity) = identity {
        prepared.ctx = prepared
            .ctx
            .assign("identity", identity.to_value())
            .identity(identity.clone());
    }
    let transport = core.settings().transport;
    prepared.ctx = prepared.ctx.origin(Origin { transport, client });
    if prepared.method.handler() == Handler::Listen {
        let (id, params, ctx) = (prepared.id, prepared.params, prepared.ctx.build());
        return Ok(Outcome::Listen(Listen { id, params, ctx }));
    }
    Ok(Outcome::Call(call(core, prepared, &related)?))
}

/// A response, or a message that is neither a request nor a notification.
fn not_one_request() -> Refusal {
    Refusal::invalid(
        Value::Null,
        "MCP 2026-07-28 takes one JSON-RPC request per POST",
    )
}

/// A stateless request's handler as a call; registered where requests can be cancelled by id.
fn call(core: &Core, prepared: Prepared, related: &Related) -> Result<Call, Refusal> {
    let Prepared {
        id,
        name,
        method,
        params,
        ctx,
        round,
    } = prepared;
    let (registration, token) = match core.requests() {
        Some(requests) => {
            let max = core.server().limits().max_calls_per_session;
            let Some((registration, token)) = requests.start_within(&id, Work::Call, max) else {
                return Err(Refusal::too_many_calls(id, max));
            };
            (Some(registration), token)
        }
        None => (None, CancellationToken::new()),
    };
    let max_notes = core.server().limits().max_queued_notes;
    let core = core.clone();
    Ok(Call::new(
        ctx,
        related,
        max_notes,
        token,
        registration,
        move |ctx| {
            Box::pin(async move {
                let server = core.server();
                let round = round.as_deref();
                // A `tools/call` by its handler directly, the call's future not inside the one
                // dispatch's; every other method through it, boxed (its future stays out of
                // every call's).
                let result = if method.handler() == Handler::CallTool {
                    server.call_request(params, &ctx, round).await
                } else {
                    Box::pin(server.serve_request(method, params, &ctx, round)).await
                };
                ctx.complete();
                answer(&core, &ctx, &name, id, result)
            })
        },
    ))
}
