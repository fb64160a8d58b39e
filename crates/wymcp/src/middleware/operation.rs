//! [`Operation`]: one MCP operation as a `tower::Service` request, with what a policy needs.

use std::net::IpAddr;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::context::{Context, TransportKind};
use crate::protocol::ProtocolVersion;
use crate::tool::registered::RegisteredTool;

/// One MCP operation on its way to its handler: a `tools/call` whose arguments the gates
/// admitted. Layers see it (and may change its data) before the handler runs.
///
/// ```
/// use wymcp::middleware::{Operation, Refusal};
///
/// // A policy reads the operation, refuses or passes it on.
/// fn allowed(op: &Operation) -> Result<(), Refusal> {
///     if op.action() == Some("delete") && op.principal().is_none() {
///         return Err(Refusal::new("forbidden", "Sign in to delete."));
///     }
///     Ok(())
/// }
/// # let _ = allowed;
/// ```
#[derive(Debug)]
pub struct Operation {
    pub(crate) tool: Arc<RegisteredTool>,
    /// The action's position among the tool's (no copy of its name per call).
    pub(crate) action: Option<usize>,
    pub(crate) data: Map<String, Value>,
    pub(crate) principal: Option<String>,
    pub(crate) ctx: Context,
}

impl Operation {
    /// An admitted call of `tool` (`action` for an action tool), its validated `data`.
    pub(crate) fn new(
        tool: Arc<RegisteredTool>,
        action: Option<&str>,
        data: Map<String, Value>,
        ctx: Context,
    ) -> Self {
        Operation {
            action: action.and_then(|name| tool.action_index(name)),
            tool,
            data,
            principal: ctx.principal(),
            ctx,
        }
    }

    /// The JSON-RPC method: `"tools/call"`.
    pub fn method(&self) -> &'static str {
        "tools/call"
    }

    /// The tool's name.
    pub fn tool(&self) -> &str {
        &self.tool.name
    }

    /// The action, for an action-dispatched tool.
    pub fn action(&self) -> Option<&str> {
        self.tool.action_name(self.action?)
    }

    /// The validated data: an action's `data`, a plain tool's arguments.
    pub fn data(&self) -> &Map<String, Value> {
        &self.data
    }

    /// The data, to change before the handler sees it (it is not validated again).
    pub fn data_mut(&mut self) -> &mut Map<String, Value> {
        &mut self.data
    }

    /// The authenticated caller's subject, when the transport authenticated one.
    pub fn principal(&self) -> Option<&str> {
        self.principal.as_deref()
    }

    /// The session, in the session era.
    pub fn session_id(&self) -> Option<&str> {
        self.ctx.session_id()
    }

    /// The protocol revision the call is served in (its era).
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.ctx.protocol_version()
    }

    /// The transport the call arrived on.
    pub fn transport(&self) -> TransportKind {
        self.ctx.origin().transport
    }

    /// The client's address, when the transport knows it (HTTP in the 2026-07-28 era).
    pub fn client_address(&self) -> Option<IpAddr> {
        self.ctx.origin().client
    }

    /// The call's context, as its handler will see it.
    pub fn context(&self) -> &Context {
        &self.ctx
    }
}
