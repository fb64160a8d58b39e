//! Multi round-trip requests (MRTR, SEP-2322): how [`Context::elicit`],
//! [`Context::sample`] and [`Context::list_roots`] reach the client in the stateless era
//! (MCP 2026-07-28), where the server cannot send it a request.
//!
//! The same tool code serves both eras. In a session, those methods send a server→client
//! request and wait for its answer. In the stateless era, a `tools/call`, `prompts/get` or
//! `resources/read` whose code awaits an answer nobody gave yet is answered
//! `{"resultType": "input_required", "inputRequests": {…}, "requestState": "…"}`; the client
//! retries the same request with `inputResponses` (key → the client's result) and the echoed
//! `requestState`, and the code runs again from the start, this time getting the answers.
//!
//! * **Re-run on retry.** The call's future is dropped once a poll leaves it waiting for input
//!   only; every request made in that poll is asked in one round (`tokio::join!` of an
//!   elicitation, a sampling and a roots request asks all three at once). Code before an
//!   `elicit` runs again on each retry: keep it idempotent, or carry its outcome in
//!   [`Context::set_request_state`].
//! * **Keys.** An author-chosen key (`Elicitation::form(..).key("user_name")`), else one
//!   given in order per kind: `elicitation-1`, `sampling-1`, `roots-1`, …
//! * **The state** carries every answer gathered so far (round 3 still sees round 1's), the
//!   keys asked, the tool's own value, the issue time, and what it is bound to: the method, the
//!   tool/prompt name or resource URI, a digest of the arguments and of the authenticated
//!   principal. A state presented with another method, target, arguments or principal is
//!   refused. It expires after [`DEFAULT_LIFETIME`] and is at most [`DEFAULT_MAX_SIZE`] bytes
//!   unless configured; a request whose state would exceed the bound fails in the code that
//!   asked ([`ClientRequestError::RequestStateTooLarge`](crate::session::ClientRequestError)).
//! * **How it travels** depends on the build. With the `sealed-state` feature (which `http`
//!   enables) the client carries it sealed: encrypted and authenticated (XChaCha20-Poly1305, a
//!   random nonce per state, the cipher key derived with HKDF-SHA256) with the
//!   `RequestStateKeys` configured on `ServerBuilder::request_state_keys` (default: one random
//!   key per `build()`, so valid on this process only), so any node holding the keys reads
//!   it and the client can neither read nor change it. Without it (a stdio-only build: one
//!   process serves the one client on its pipe) the state stays in the process and the
//!   client carries an opaque random handle (`k1.` and 22 characters); the process keeps at
//!   most [`DEFAULT_CAPACITY`] states unless configured
//!   ([`ServerBuilder::request_state_capacity`](crate::ServerBuilder::request_state_capacity)),
//!   dropping the oldest past it.
//! * **Refusals.** A tampered, expired, foreign, unknown or dropped state is JSON-RPC `-32602` with
//!   `data.reason: "invalid_request_state"` ([`INVALID_REQUEST_STATE`]); an
//!   `inputResponses` that is not an object is `-32602` with
//!   [`INVALID_INPUT_RESPONSES`]. Both travel with HTTP 200, like every handler error.
//! * **Bad answers are asked again.** A missing key, or an answer of the wrong shape (a number
//!   where an `ElicitResult` belongs), is asked again in a new `input_required`; keys nobody
//!   asked are ignored. Without a `requestState`, any offered key may answer the request of
//!   that key; with one, only the keys that state asked.
//! * **Capabilities.** Only kinds the request's `clientCapabilities` declare are asked; an
//!   undeclared kind fails with `ClientRequestError::NotSupported` and the call is answered
//!   `-32021` with `data.requiredCapabilities`, unless the code checked
//!   [`Context::client_declares`] first.
//!
//! See `docs/multi-round-trip.md` for the whole walk-through.
//!
//! [`Context::elicit`]: crate::Context::elicit
//! [`Context::sample`]: crate::Context::sample
//! [`Context::list_roots`]: crate::Context::list_roots
//! [`Context::set_request_state`]: crate::Context::set_request_state
//! [`Context::client_declares`]: crate::Context::client_declares

mod drive;
pub(crate) mod kept;
mod retry;
mod round;
#[cfg(feature = "sealed-state")]
pub(crate) mod seal;
pub(crate) mod state;

use std::future::Future;

use serde_json::Value;

use crate::protocol::RpcError;

pub(crate) use retry::round_for;
pub(crate) use round::{Asked, InputKind, Round};
#[cfg(feature = "sealed-state")]
pub use seal::{KeyError, MIN_KEY_LEN, RequestStateKeys};
pub(crate) use state::Codec;
pub use state::{DEFAULT_CAPACITY, DEFAULT_LIFETIME, DEFAULT_MAX_SIZE};

/// `data.reason` of the `-32602` answering a tampered, expired or foreign `requestState`.
pub const INVALID_REQUEST_STATE: &str = "invalid_request_state";
/// `data.reason` of the `-32602` answering an `inputResponses` that is not an object.
pub const INVALID_INPUT_RESPONSES: &str = "invalid_input_responses";

/// The methods that may answer `input_required`; every other (the list methods included)
/// never does.
///
/// ```
/// use wymcp::mrtr::supports;
///
/// assert!(supports("tools/call"));
/// assert!(supports("prompts/get"));
/// assert!(supports("resources/read"));
/// assert!(!supports("tools/list"));
/// ```
pub fn supports(method: &str) -> bool {
    supported(method).is_some()
}

/// The method's name as a constant, when its requests have a round.
fn supported(method: &str) -> Option<&'static str> {
    ["tools/call", "prompts/get", "resources/read"]
        .into_iter()
        .find(|m| *m == method)
}

/// Runs a handler's future under `round` (when the method has one): its result, or the
/// round's `InputRequiredResult` when it waits for input nobody gave yet.
pub(crate) async fn run<F>(round: Option<&Round>, call: F) -> Result<Value, RpcError>
where
    F: Future<Output = Result<Value, RpcError>>,
{
    Ok(run_typed(round, call)
        .await?
        .unwrap_or_else(|input_required| input_required))
}

/// [`run`] for a handler whose result is typed: `Ok(result)`, or `Err` with the round's
/// `InputRequiredResult` when the call waits for input.
pub(crate) async fn run_typed<F, T>(
    round: Option<&Round>,
    call: F,
) -> Result<Result<T, Value>, RpcError>
where
    F: Future<Output = Result<T, RpcError>>,
{
    let Some(round) = round else {
        return call.await.map(Ok);
    };
    match drive::drive(round, call).await {
        drive::Driven::Complete(result) => result.map(Ok),
        drive::Driven::InputRequired => round.input_required().map(Err),
    }
}
