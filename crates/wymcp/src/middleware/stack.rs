//! The layers a server was built with, composed once: server layers around a split that
//! sends calls to the call layers (around a router of tool stacks, each tool's layers around
//! a router of action stacks, each action's layers around the handler) and every other
//! operation to its handler. Built at `build()`, so a layer's state (a semaphore, a bucket)
//! is one per attachment point, shared by every operation through it.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{Map, Value};
use tower::util::BoxCloneSyncService;
use tower::{BoxError, Layer, Service, ServiceExt};

use super::operation::{Serve, Target};
use super::route::{Handler, Route, Split};
use super::{Operation, Refusal, Response};
use crate::Limits;
use crate::context::Context;
use crate::dispatch::{AfterGates, Called};
use crate::protocol::{Method, RpcError};
use crate::tool::registered::RegisteredTool;

/// An operation service, boxed: what every layer attached with
/// [`ServerBuilder::layer`](crate::ServerBuilder::layer) wraps.
pub type BoxOperation = BoxCloneSyncService<Operation, Response, BoxError>;

/// One attached layer, erased: it wraps a service.
#[derive(Clone)]
pub(crate) struct Wrap(Arc<dyn Fn(BoxOperation) -> BoxOperation + Send + Sync>);

impl Wrap {
    /// Erases `layer`; its service's errors become [`BoxError`]s (answered by [`refusal_of`]).
    pub(crate) fn new<L>(layer: L) -> Self
    where
        L: Layer<BoxOperation> + Send + Sync + 'static,
        L::Service: Service<Operation, Response = Response> + Clone + Send + Sync + 'static,
        <L::Service as Service<Operation>>::Error: Into<BoxError>,
        <L::Service as Service<Operation>>::Future: Send + 'static,
    {
        Wrap(Arc::new(move |inner| {
            BoxCloneSyncService::new(layer.layer(inner).map_err(Into::into))
        }))
    }
}

/// The layers as configured, by attachment point, each list in the order added.
#[derive(Clone, Default)]
pub(crate) struct Layers {
    /// Around every operation.
    pub(crate) server: Vec<Wrap>,
    /// Around every `tools/call`.
    pub(crate) calls: Vec<Wrap>,
    pub(crate) tools: Vec<(String, Wrap)>,
    pub(crate) actions: Vec<(String, String, Wrap)>,
}

impl Layers {
    pub(crate) fn is_empty(&self) -> bool {
        self.server.is_empty() && self.calls.is_empty() && self.calls_unrouted()
    }

    /// No tool or action has a layer of its own: no router in between.
    fn calls_unrouted(&self) -> bool {
        self.tools.is_empty() && self.actions.is_empty()
    }
}

/// The composed stack of a server with at least one layer.
#[derive(Clone)]
pub(crate) struct Stack {
    service: BoxOperation,
    /// Whether a layer wraps the methods other than `tools/call` (a server layer does);
    /// without one they run as before, no service in between.
    wraps_methods: bool,
}

impl std::fmt::Debug for Stack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stack").finish_non_exhaustive()
    }
}

impl Stack {
    /// The stack of `layers` around the handlers; `None` when there is no layer (a server
    /// without layers runs every operation as before, no service in between).
    pub(crate) fn build(layers: Layers, limits: &Limits) -> Option<Stack> {
        if layers.is_empty() {
            return None;
        }
        let bare = Handler {
            limits: Arc::new(limits.clone()),
        };
        let handler = BoxOperation::new(bare.clone());
        let routed = if layers.calls_unrouted() {
            handler.clone()
        } else {
            route_tools(&layers, &handler)
        };
        let calls = wrap(routed, layers.calls.iter());
        if layers.server.is_empty() {
            // Only calls pass layers: no split in between.
            return Some(Stack {
                service: calls,
                wraps_methods: false,
            });
        }
        let layered_calls = !(layers.calls.is_empty() && layers.calls_unrouted());
        let split = BoxOperation::new(Split {
            calls: layered_calls.then_some(calls),
            handler: bare,
        });
        Some(Stack {
            service: wrap(split, layers.server.iter()),
            wraps_methods: true,
        })
    }

    /// Whether requests other than `tools/call` pass layers.
    pub(crate) fn wraps_methods(&self) -> bool {
        self.wraps_methods
    }

    /// Serves a request of `method` (not `tools/call`) through the layers: `serve` answers it
    /// after them, on the params as they left the layers. A layer's error is answered as the
    /// JSON-RPC error of its refusal.
    pub(crate) fn serve_method(
        &self,
        method: Method,
        params: Map<String, Value>,
        ctx: Context,
        serve: Serve,
    ) -> BoxFuture<'static, Result<Value, RpcError>> {
        let operation = Operation::request(method, params, ctx, serve);
        let version = operation.protocol_version();
        let call = self.service.clone().oneshot(operation);
        Box::pin(async move {
            match call.await {
                Ok(Response::Method(answer)) => answer,
                // A layer answered with a call's result: served as one would be.
                Ok(Response::Call(result)) => Ok(result.into_value(version)),
                Err(error) => {
                    Err(refusal_of(error, method.as_str()).into_rpc_error(method.as_str()))
                }
            }
        })
    }
}

/// The router of tool stacks: each tool with layers of its own (or with actions that have)
/// gets its stack; the rest go on to `handler`.
fn route_tools(layers: &Layers, handler: &BoxOperation) -> BoxOperation {
    let mut tools: HashMap<String, BoxOperation> = HashMap::new();
    let mut names: Vec<&str> = layers.tools.iter().map(|(t, _)| t.as_str()).collect();
    names.extend(layers.actions.iter().map(|(t, _, _)| t.as_str()));
    for name in names {
        if tools.contains_key(name) {
            continue;
        }
        let actions: HashMap<String, BoxOperation> = layers
            .actions
            .iter()
            .filter(|(t, _, _)| t == name)
            .map(|(_, a, _)| {
                let wraps = layers
                    .actions
                    .iter()
                    .filter(|(t, b, _)| t == name && b == a);
                (a.clone(), wrap(handler.clone(), wraps.map(|(_, _, w)| w)))
            })
            .collect();
        let routed = BoxOperation::new(Route::actions(actions, handler.clone()));
        let wraps = layers.tools.iter().filter(|(t, _)| t == name);
        tools.insert(name.to_owned(), wrap(routed, wraps.map(|(_, w)| w)));
    }
    BoxOperation::new(Route::tools(tools, handler.clone()))
}

impl AfterGates for Stack {
    /// Runs the admitted call through the stack; a layer's error becomes its refusal's result.
    fn run(
        &self,
        tool: Arc<RegisteredTool>,
        action: Option<&str>,
        data: Map<String, Value>,
        ctx: Context,
    ) -> BoxFuture<'static, Called> {
        let operation = Operation::call(tool.clone(), action, data, ctx);
        let (action, failed) = match &operation.target {
            Target::Call { action, failed, .. } => (*action, Some(failed.clone())),
            Target::Method(_) => (None, None),
        };
        let call = self.service.clone().oneshot(operation);
        Box::pin(async move {
            let error = match call.await {
                // A request the tool failed: its error, whatever result the layers passed on.
                Ok(Response::Call(result)) => match failed.and_then(|f| f.take()) {
                    Some(error) => return Err(error),
                    None => return Ok(result),
                },
                Ok(Response::Method(_)) => {
                    BoxError::from("a layer answered a tools/call with another method's response")
                }
                Err(error) => error,
            };
            let action = action.and_then(|i| tool.action_name(i));
            Ok(refusal_of(error, &tool.name).into_result(&tool.name, action))
        })
    }
}

/// `inner` wrapped by `wraps`, the first added outermost (it sees the call first).
fn wrap<'a>(inner: BoxOperation, wraps: impl DoubleEndedIterator<Item = &'a Wrap>) -> BoxOperation {
    wraps.rev().fold(inner, |service, w| (w.0)(service))
}

/// What a layer's error answers: its [`Refusal`], tower's own errors in the same dialect;
/// `what` (the tool, or the method) names the operation in the log.
#[cold]
#[inline(never)]
fn refusal_of(error: BoxError, what: &str) -> Refusal {
    // Downcast, justified: tower's contract hands a layer's error back as a `BoxError`; the
    // layers this crate ships return a `Refusal` through it, which is read back here.
    match error.downcast::<Refusal>() {
        Ok(refusal) => *refusal,
        Err(error) if error.is::<tower::timeout::error::Elapsed>() => Refusal::new(
            "timeout",
            "The call ran longer than a layer's timeout and was aborted. Ask for less work \
             per call, or retry later.",
        ),
        Err(error) if error.is::<tower::load_shed::error::Overloaded>() => Refusal::new(
            "overloaded",
            "The server is at its limit of concurrent calls for this operation. Retry shortly.",
        ),
        Err(error) => {
            tracing::warn!(name: "wymcp.middleware.error", operation = what, error = %error);
            Refusal::new(
                "middleware_error",
                format!(
                    "A layer refused the call: {}",
                    wymcp_core::bound::echo(&error.to_string())
                ),
            )
        }
    }
}
