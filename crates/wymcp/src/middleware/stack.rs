//! The layers a server was built with, composed once: server layers around a router of tool
//! stacks, each tool's layers around a router of action stacks, each action's layers around
//! the handler. Built at `build()`, so a layer's state (a semaphore, a bucket) is one per
//! attachment point, shared by every call through it.

use std::collections::HashMap;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use futures_util::future::BoxFuture;
use serde_json::{Map, Value};
use tower::util::BoxCloneSyncService;
use tower::{BoxError, Layer, Service, ServiceExt};

use super::{Operation, Refusal};
use crate::Limits;
use crate::context::Context;
use crate::dispatch::{self, AfterGates, CallToolResult};
use crate::tool::registered::RegisteredTool;

/// An operation service, boxed: what every layer attached with
/// [`ServerBuilder::layer`](crate::ServerBuilder::layer) wraps.
pub type BoxOperation = BoxCloneSyncService<Operation, CallToolResult, BoxError>;

/// One attached layer, erased: it wraps a service.
#[derive(Clone)]
pub(crate) struct Wrap(Arc<dyn Fn(BoxOperation) -> BoxOperation + Send + Sync>);

impl Wrap {
    /// Erases `layer`; its service's errors become [`BoxError`]s (answered by [`refused`]).
    pub(crate) fn new<L>(layer: L) -> Self
    where
        L: Layer<BoxOperation> + Send + Sync + 'static,
        L::Service: Service<Operation, Response = CallToolResult> + Clone + Send + Sync + 'static,
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
    pub(crate) server: Vec<Wrap>,
    pub(crate) tools: Vec<(String, Wrap)>,
    pub(crate) actions: Vec<(String, String, Wrap)>,
}

impl Layers {
    pub(crate) fn is_empty(&self) -> bool {
        self.server.is_empty() && self.tools.is_empty() && self.actions.is_empty()
    }
}

/// The composed stack of a server with at least one layer.
#[derive(Clone)]
pub(crate) struct Stack {
    service: BoxOperation,
}

impl std::fmt::Debug for Stack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stack").finish_non_exhaustive()
    }
}

impl Stack {
    /// The stack of `layers` around the handler; `None` when there is no layer (a server
    /// without layers runs the call as before, no service in between).
    pub(crate) fn build(layers: Layers, limits: &Limits) -> Option<Stack> {
        if layers.is_empty() {
            return None;
        }
        let handler = BoxOperation::new(Handler {
            limits: Arc::new(limits.clone()),
        });
        // Server layers only: no router in between.
        if layers.tools.is_empty() && layers.actions.is_empty() {
            return Some(Stack {
                service: wrap(handler, layers.server.iter()),
            });
        }
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
        let routed = BoxOperation::new(Route::tools(tools, handler));
        Some(Stack {
            service: wrap(routed, layers.server.iter()),
        })
    }
}

impl AfterGates for Stack {
    /// Runs the admitted call through the stack; a layer's error becomes its refusal's result.
    fn run(
        &self,
        tool: Arc<RegisteredTool>,
        action: Option<&str>,
        data: Map<String, Value>,
        ctx: Context,
    ) -> BoxFuture<'static, CallToolResult> {
        let operation = Operation::new(tool.clone(), action, data, ctx);
        let action = operation.action;
        let call = self.service.clone().oneshot(operation);
        Box::pin(async move {
            match call.await {
                Ok(result) => result,
                Err(error) => {
                    let action = action.and_then(|i| tool.action_name(i));
                    refused(error, &tool.name, action)
                }
            }
        })
    }
}

/// `inner` wrapped by `wraps`, the first added outermost (it sees the call first).
fn wrap<'a>(inner: BoxOperation, wraps: impl DoubleEndedIterator<Item = &'a Wrap>) -> BoxOperation {
    wraps.rev().fold(inner, |service, w| (w.0)(service))
}

/// What a layer's error answers: its [`Refusal`], tower's own errors in the same dialect.
#[cold]
#[inline(never)]
fn refused(error: BoxError, tool: &str, action: Option<&str>) -> CallToolResult {
    let refusal = match error.downcast::<Refusal>() {
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
            tracing::warn!(name: "wymcp.middleware.error", tool_name = tool, error = %error);
            Refusal::new(
                "middleware_error",
                format!(
                    "A layer refused the call: {}",
                    wymcp_core::bound::echo(&error.to_string())
                ),
            )
        }
    };
    refusal.into_result(tool, action)
}

/// Picks the next service by the operation's tool (or action); what has no stack of its own
/// goes on to `fallback`.
#[derive(Clone)]
struct Route {
    by_tool: bool,
    stacks: Arc<HashMap<String, BoxOperation>>,
    fallback: BoxOperation,
}

impl Route {
    fn tools(stacks: HashMap<String, BoxOperation>, fallback: BoxOperation) -> Self {
        Route {
            by_tool: true,
            stacks: Arc::new(stacks),
            fallback,
        }
    }

    fn actions(stacks: HashMap<String, BoxOperation>, fallback: BoxOperation) -> Self {
        Route {
            by_tool: false,
            stacks: Arc::new(stacks),
            fallback,
        }
    }
}

impl Service<Operation> for Route {
    type Response = CallToolResult;
    type Error = BoxError;
    type Future = tower::util::Oneshot<BoxOperation, Operation>;

    /// Always ready: the chosen stack is driven to readiness in `call` (a clone per call,
    /// as axum's router does).
    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, operation: Operation) -> Self::Future {
        let key = if self.by_tool {
            Some(operation.tool())
        } else {
            operation.action()
        };
        let next = key
            .and_then(|k| self.stacks.get(k))
            .unwrap_or(&self.fallback);
        next.clone().oneshot(operation)
    }
}

/// The innermost service: the tool's own code on the admitted data, its result shaped.
#[derive(Clone)]
struct Handler {
    limits: Arc<Limits>,
}

impl Service<Operation> for Handler {
    type Response = CallToolResult;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<CallToolResult, BoxError>>;

    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, operation: Operation) -> Self::Future {
        let limits = self.limits.clone();
        Box::pin(async move {
            let Operation {
                tool,
                action,
                data,
                ctx,
                ..
            } = operation;
            let action = action.and_then(|i| tool.action_name(i));
            Ok(dispatch::run_admitted(&tool, action, data, ctx, &limits).await)
        })
    }
}
