//! A call that becomes a task when its code says so ([`TaskStart::OnHandOff`]): it runs as a
//! plain call under its multi round-trip round, and the poll in which its code waits in
//! [`Context::hand_off_to_task`] moves it, still running, into a new task.
//!
//! [`TaskStart::OnHandOff`]: super::TaskStart::OnHandOff

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::Running;
use super::host::TaskHost;
use super::input::{TaskInput, TaskSlot};
use super::serve::{TaskFuture, adopt, new_id};
use crate::Context;
use crate::mrtr::Round;
use crate::protocol::RpcError;
use crate::tool::CallToolResult;

/// How a call that may hand off ended its request.
pub(crate) enum HandedOff {
    /// It ended without handing off: its result.
    Complete(Result<CallToolResult, RpcError>),
    /// Its code waits for input nobody gave yet: the round's `InputRequiredResult`.
    InputRequired(Value),
    /// It handed off: the `CreateTaskResult` (or why the task could not be made).
    Task(Result<Value, RpcError>),
}

/// Runs `tools/call` of `tool` until it completes, asks for input, or hands off.
pub(super) async fn call_with_hand_off(
    server: &dyn TaskHost,
    tool: String,
    params: Option<Value>,
    ctx: &Context,
    round: Option<&Round>,
) -> HandedOff {
    let token = CancellationToken::new();
    let slot = Arc::new(TaskSlot::default());
    let task_ctx = ctx.for_task(token.clone(), slot.clone());
    let mut call: TaskFuture = server.call(params, task_ctx.clone());
    let driven = drive(round, &slot, ctx.cancellation(), &token, &mut call).await;
    ctx.adopt_required(&task_ctx);
    match driven {
        Driven::Complete(result) => HandedOff::Complete(result),
        Driven::InputRequired => match round.map(Round::input_required) {
            Some(Ok(input_required)) => HandedOff::InputRequired(input_required),
            Some(Err(error)) => HandedOff::Complete(Err(error)),
            None => HandedOff::Complete(Err(super::transitions::internal(
                "The call asked for input outside a multi round-trip request",
            ))),
        },
        Driven::HandOff => {
            let input = Arc::new(TaskInput::new(new_id(), server.downgrade()));
            slot.become_task(input.clone());
            let principal = super::serve::owner(ctx);
            let running = Running {
                token,
                input,
                principal,
            };
            HandedOff::Task(adopt(server, (tool, None), ctx, running, call).await)
        }
    }
}

enum Driven<T> {
    Complete(T),
    InputRequired,
    HandOff,
}

/// Polls `call` until it completes, or a poll leaves it waiting for input `round` recorded
/// (input first: the call runs again on the retry, so a hand-off in that poll is undone too),
/// or waiting in its hand-off. Until then the request's cancellation cancels the call.
async fn drive<F: Future + Unpin>(
    round: Option<&Round>,
    slot: &TaskSlot,
    request: &CancellationToken,
    token: &CancellationToken,
    call: &mut F,
) -> Driven<F::Output> {
    let mut request_cancelled = pin!(request.cancelled());
    let mut forwarded = false;
    std::future::poll_fn(|cx| {
        if !forwarded && request_cancelled.as_mut().poll(cx).is_ready() {
            forwarded = true;
            token.cancel();
        }
        if let Some(round) = round {
            round.register(cx.waker());
        }
        match std::pin::Pin::new(&mut *call).poll(cx) {
            Poll::Ready(output) => Poll::Ready(Driven::Complete(output)),
            Poll::Pending if round.is_some_and(Round::has_requests) => {
                Poll::Ready(Driven::InputRequired)
            }
            Poll::Pending if slot.hand_off_requested() => Poll::Ready(Driven::HandOff),
            Poll::Pending => Poll::Pending,
        }
    })
    .await
}
