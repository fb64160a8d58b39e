//! The services inside the layers: the split between calls and other methods, the routers
//! by tool and by action, and the handler at the end.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError};
use std::task::{Context as TaskContext, Poll};

use futures_util::future::{BoxFuture, Either};
use tower::{BoxError, Service, ServiceExt};

use super::operation::Target;
use super::{BoxOperation, Operation, Response};
use crate::Limits;
use crate::dispatch;

/// Sends a `tools/call` on to the call layers (straight to the handler when there are none:
/// no boxed hop for a server with server layers only), any other operation to its handler.
#[derive(Clone)]
pub(super) struct Split {
    pub(super) calls: Option<BoxOperation>,
    pub(super) handler: Handler,
}

impl Service<Operation> for Split {
    type Response = Response;
    type Error = BoxError;
    type Future = Either<
        tower::util::Oneshot<BoxOperation, Operation>,
        BoxFuture<'static, Result<Response, BoxError>>,
    >;

    /// Always ready: the call layers are driven to readiness in `call`.
    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, operation: Operation) -> Self::Future {
        match &self.calls {
            Some(calls) if operation.is_call() => Either::Left(calls.clone().oneshot(operation)),
            _ => Either::Right(self.handler.call(operation)),
        }
    }
}

/// Picks the next service by the operation's tool (or action); what has no stack of its own
/// goes on to `fallback`.
#[derive(Clone)]
pub(super) struct Route {
    by_tool: bool,
    stacks: Arc<HashMap<String, BoxOperation>>,
    fallback: BoxOperation,
}

impl Route {
    pub(super) fn tools(stacks: HashMap<String, BoxOperation>, fallback: BoxOperation) -> Self {
        Route {
            by_tool: true,
            stacks: Arc::new(stacks),
            fallback,
        }
    }

    pub(super) fn actions(stacks: HashMap<String, BoxOperation>, fallback: BoxOperation) -> Self {
        Route {
            by_tool: false,
            stacks: Arc::new(stacks),
            fallback,
        }
    }
}

impl Service<Operation> for Route {
    type Response = Response;
    type Error = BoxError;
    type Future = tower::util::Oneshot<BoxOperation, Operation>;

    /// Always ready: the chosen stack is driven to readiness in `call` (a clone per call,
    /// as axum's router does).
    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, operation: Operation) -> Self::Future {
        let key = if self.by_tool {
            operation.tool()
        } else {
            operation.action()
        };
        let next = key
            .and_then(|k| self.stacks.get(k))
            .unwrap_or(&self.fallback);
        next.clone().oneshot(operation)
    }
}

/// The innermost service: a call's tool code on the admitted data, its result shaped; any
/// other operation's own handler on its params.
#[derive(Clone)]
pub(super) struct Handler {
    pub(super) limits: Arc<Limits>,
}

impl Service<Operation> for Handler {
    type Response = Response;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Response, BoxError>>;

    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, operation: Operation) -> Self::Future {
        let limits = self.limits.clone();
        Box::pin(async move {
            let Operation {
                target, data, ctx, ..
            } = operation;
            match target {
                Target::Call {
                    tool,
                    action,
                    failed,
                } => {
                    let action = action.and_then(|i| tool.action_name(i));
                    let called = dispatch::run_admitted(&tool, action, data, ctx, &limits).await;
                    Ok(failed.response(called))
                }
                Target::Method(serve) => {
                    let serve = serve.into_inner().unwrap_or_else(PoisonError::into_inner);
                    let serve = serve.ok_or("the operation's handler ran already")?;
                    Ok(Response::Method(serve(data, ctx).await))
                }
            }
        })
    }
}
