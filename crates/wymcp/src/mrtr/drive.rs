//! The driver: polls a stateless call's future and, once a poll leaves it pending with input
//! requests recorded, drops it and answers `input_required` with every request that poll made.

use std::future::Future;
use std::pin::pin;
use std::task::Poll;

use super::round::Round;

/// How a driven call ended.
#[derive(Debug)]
pub(crate) enum Driven<T> {
    /// The call completed with this output.
    Complete(T),
    /// The call is waiting for input: answer the round's `input_required`.
    InputRequired,
}

/// Runs `call` to completion, unless it waits for input `round` recorded: then the call is
/// dropped (it runs again, from the start, on the client's retry).
///
/// Every request made in one poll is collected before the check, so requests awaited together
/// (`tokio::join!`) are asked in one round.
pub(crate) async fn drive<F: Future>(round: &Round, call: F) -> Driven<F::Output> {
    let mut call = pin!(call);
    std::future::poll_fn(|cx| {
        round.register(cx.waker());
        match call.as_mut().poll(cx) {
            Poll::Ready(output) => Poll::Ready(Driven::Complete(output)),
            Poll::Pending if round.has_requests() => Poll::Ready(Driven::InputRequired),
            Poll::Pending => Poll::Pending,
        }
    })
    .await
}
