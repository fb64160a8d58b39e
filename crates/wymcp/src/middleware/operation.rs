//! [`Operation`]: one MCP operation as a `tower::Service` request, with what a policy needs.

use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::future::BoxFuture;
use serde_json::{Map, Value};

use crate::context::{Context, TransportKind};
use crate::protocol::{Method, ProtocolVersion, RpcError};
use crate::tool::registered::RegisteredTool;

/// One MCP operation on its way to its handler: a `tools/call` whose arguments the gates
/// admitted, or another request the server's layers wrap (`tools/list`, the resources,
/// prompts and completion methods, the skills methods). Layers see it (and may change its
/// data) before the handler runs.
///
/// ```
/// use wymcp::middleware::{Operation, Refusal};
///
/// // A policy reads the operation, refuses or passes it on.
/// fn allowed(op: &Operation) -> Result<(), Refusal> {
///     if op.action() == Some("delete") && op.principal().is_none() {
///         return Err(Refusal::new("forbidden", "Sign in to delete."));
///     }
///     if op.method() == "resources/read" && op.name().is_some_and(|uri| uri.starts_with("secret:")) {
///         return Err(Refusal::new("forbidden", "Secrets are not for models."));
///     }
///     Ok(())
/// }
/// # let _ = allowed;
/// ```
pub struct Operation {
    pub(crate) method: Method,
    pub(crate) target: Target,
    pub(crate) data: Map<String, Value>,
    pub(crate) principal: Option<String>,
    pub(crate) ctx: Context,
}

/// What an operation reaches at the end of the layers.
pub(crate) enum Target {
    /// An admitted call of `tool`; `action` is the action's position among the tool's (no
    /// copy of its name per call).
    Call {
        tool: Arc<RegisteredTool>,
        action: Option<usize>,
        /// Where the handler leaves the JSON-RPC error the tool failed the request with.
        failed: FailedRequest,
    },
    /// Another method, served by the transport's own handler on the (possibly changed)
    /// params. Taken by the innermost service; in a mutex so that `&Operation` is `Sync` (a
    /// layer may hold one across an await).
    Method(Mutex<Option<Serve>>),
}

/// Where the handler leaves the JSON-RPC error a tool failed its request with
/// ([`CallError::protocol`](crate::CallError::protocol)), for the stack to answer once the
/// layers are done: they see the call's `isError` result, as for any other tool error. Only a
/// server with layers makes one (a call without layers answers the error directly).
#[derive(Clone, Default)]
pub(crate) struct FailedRequest(Arc<Mutex<Option<RpcError>>>);

impl FailedRequest {
    /// The layers' response to `called`: its result, or for a failed request the `isError`
    /// result they see, the error itself left here.
    pub(crate) fn response(&self, called: crate::dispatch::Called) -> super::Response {
        match called {
            Ok(result) => super::Response::Call(result),
            Err(error) => {
                let shown = crate::dispatch::failed_result(&error);
                *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(error);
                super::Response::Call(shown)
            }
        }
    }

    /// The error the handler left, if the tool failed the request.
    pub(crate) fn take(&self) -> Option<RpcError> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

/// The handler of a non-call operation: params and context in, the method's answer out.
pub(crate) type Serve = Box<
    dyn FnOnce(Map<String, Value>, Context) -> BoxFuture<'static, Result<Value, RpcError>> + Send,
>;

impl Operation {
    /// An admitted call of `tool` (`action` for an action tool), its validated `data`.
    pub(crate) fn call(
        tool: Arc<RegisteredTool>,
        action: Option<&str>,
        data: Map<String, Value>,
        ctx: Context,
    ) -> Self {
        Operation {
            method: Method::ToolsCall,
            target: Target::Call {
                action: action.and_then(|name| tool.action_index(name)),
                tool,
                failed: FailedRequest::default(),
            },
            data,
            principal: ctx.principal(),
            ctx,
        }
    }

    /// A request of `method` with `params`, which `serve` answers after the layers.
    pub(crate) fn request(
        method: Method,
        params: Map<String, Value>,
        ctx: Context,
        serve: Serve,
    ) -> Self {
        Operation {
            method,
            target: Target::Method(Mutex::new(Some(serve))),
            data: params,
            principal: ctx.principal(),
            ctx,
        }
    }

    /// The JSON-RPC method: `"tools/call"`, `"resources/read"`, `"tools/list"`, …
    pub fn method(&self) -> &'static str {
        self.method.as_str()
    }

    /// Where the handler of this call leaves the error a tool failed the request with (a new
    /// place for another method, which has none).
    pub(crate) fn failed_request(&self) -> FailedRequest {
        match &self.target {
            Target::Call { failed, .. } => failed.clone(),
            Target::Method(_) => FailedRequest::default(),
        }
    }

    /// Whether the operation is a `tools/call`.
    pub fn is_call(&self) -> bool {
        matches!(self.target, Target::Call { .. })
    }

    /// The tool's name, for a `tools/call`.
    pub fn tool(&self) -> Option<&str> {
        match &self.target {
            Target::Call { tool, .. } => Some(&tool.name),
            Target::Method(_) => None,
        }
    }

    /// The action, for a call of an action-dispatched tool.
    pub fn action(&self) -> Option<&str> {
        match &self.target {
            Target::Call { tool, action, .. } => tool.action_name((*action)?),
            Target::Method(_) => None,
        }
    }

    /// What the operation names, as the 2026-07-28 `Mcp-Name` header does: the tool of a
    /// `tools/call`, the `uri` of `resources/read`, `resources/subscribe` and
    /// `resources/unsubscribe`, the `name` of `prompts/get` and `skills/get`; `None` for the
    /// lists and `completion/complete`.
    pub fn name(&self) -> Option<&str> {
        let key = match self.method {
            Method::ToolsCall => return self.tool(),
            Method::ResourcesRead | Method::ResourcesSubscribe | Method::ResourcesUnsubscribe => {
                "uri"
            }
            Method::PromptsGet | Method::SkillsGet => "name",
            _ => return None,
        };
        self.data.get(key)?.as_str()
    }

    /// The validated data (an action's `data`, a plain tool's arguments) of a call; the
    /// `params` of another method.
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

    /// The protocol revision the operation is served in (its era).
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.ctx.protocol_version()
    }

    /// The transport the operation arrived on.
    pub fn transport(&self) -> TransportKind {
        self.ctx.origin().transport
    }

    /// The client's address, when the transport knows it (HTTP behind [`HttpServer`](crate::transport::http::HttpServer), both eras; behind a trusted
    /// proxy the forwarded one).
    pub fn client_address(&self) -> Option<IpAddr> {
        self.ctx.origin().client
    }

    /// The operation's context, as its handler will see it.
    pub fn context(&self) -> &Context {
        &self.ctx
    }
}

impl std::fmt::Debug for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Operation")
            .field("method", &self.method())
            .field("tool", &self.tool())
            .field("action", &self.action())
            .field("data", &self.data)
            .field("principal", &self.principal)
            .finish_non_exhaustive()
    }
}
