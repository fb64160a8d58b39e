//! A call and the tasks extension ([`crate::task`]): handing a call off to a task, and the
//! context a task's call runs with. The context knows the extension only through
//! [`TaskLink`], which the extension implements (so `context` does not import `task`).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::channel::{Channel, ClientAsk, ClientChannel};
use super::{Asks, Context, Inner, ProgressState};
use crate::mrtr::{InputKind, Round};
use crate::session::ClientRequestError;

/// A task's call reaches its client through the task once it is one (`inputRequests`,
/// answered by `tasks/update`), and until then (a call that may hand off, still under its
/// request's round) the way its request did.
#[derive(Debug)]
struct TaskChannel {
    link: Arc<dyn TaskLink>,
    before: Channel,
}

impl ClientChannel for TaskChannel {
    fn ask<'a>(
        &'a self,
        ctx: &'a Context,
        ask: ClientAsk,
    ) -> BoxFuture<'a, Result<Value, ClientRequestError>> {
        if self.link.is_task() {
            self.link.ask(ask.kind, ask.key, ask.params, ask.timeout)
        } else {
            self.before.ask(ctx, ask)
        }
    }

    fn round(&self) -> Option<&Round> {
        self.before.round()
    }
}

/// What a call that is, or may become, a task gives its context.
pub(crate) trait TaskLink: Send + Sync + std::fmt::Debug {
    /// Whether the call runs as a task now.
    fn is_task(&self) -> bool;
    /// Continues the call as a task: `true` once it is one.
    fn hand_off(&self) -> BoxFuture<'_, bool>;
    /// Asks the client through the task (`inputRequests`, answered by `tasks/update`).
    fn ask(
        &self,
        kind: InputKind,
        key: Option<String>,
        params: Value,
        timeout: Duration,
    ) -> BoxFuture<'_, Result<Value, ClientRequestError>>;
}

impl Context {
    /// Continues the call as a task (the tasks extension, MCP 2026-07-28): the request is
    /// answered the task handle (`resultType: "task"`), and the code after this runs on as
    /// the task, its result kept for `tasks/get`. `true` once the call is a task.
    ///
    /// Only a tool registered with
    /// [`TaskStart::OnHandOff`](crate::task::TaskStart::OnHandOff), called by a client that
    /// declares the extension, hands off; anywhere else this answers `false` at once and the
    /// call goes on as a plain call. Input the code asked for before it (`ctx.elicit`, …) was
    /// gathered in multi round-trip rounds; input asked for after it parks the task as
    /// `input_required`.
    ///
    /// ```
    /// use wymcp::Context;
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// // A call outside the tasks extension has nothing to hand off to.
    /// assert!(!Context::default().hand_off_to_task().await);
    /// # });
    /// ```
    pub async fn hand_off_to_task(&self) -> bool {
        match &self.inner.task {
            Some(link) => link.hand_off().await,
            None => false,
        }
    }

    /// The context a task's call runs with: this request's, with the task's own cancellation
    /// (the request's end does not cancel the task) and `slot`.
    pub(crate) fn for_task(&self, token: CancellationToken, slot: Arc<dyn TaskLink>) -> Context {
        let inner = &self.inner;
        Context {
            inner: Arc::new(Inner {
                request: inner.request.clone(),
                caller: inner.caller.clone(),
                session: inner.session.clone(),
                cancellation: token,
                progress: Mutex::new(ProgressState::default()),
                asks: Asks::through(Channel::Shared(Arc::new(TaskChannel {
                    link: slot.clone(),
                    before: inner.asks.channel.clone(),
                }))),
                task: Some(slot),
                user_state: inner.user_state.clone(),
            }),
        }
    }

    /// Takes over the client capabilities `other` (a [`for_task`](Self::for_task) context)
    /// found missing, so this request is refused `-32021` for them.
    pub(crate) fn adopt_required(&self, other: &Context) {
        let found = other.required_capabilities();
        if found.is_some() {
            *self
                .inner
                .asks
                .required_capabilities
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = found;
        }
    }
}
