//! One stateless call's input round: the answers known to it (carried by the incoming state, or
//! offered in `inputResponses`), the input requests its code made and nobody answered yet,
//! and the tool's own value; issued as the next `requestState` when the call must ask.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::task::Waker;

use futures_util::task::AtomicWaker;
use serde_json::{Map, Value, json};

use super::retry::Target;
use super::state::{Codec, Payload, TooLarge, now_ms};
use crate::protocol::RpcError;

/// The kinds of input a call can ask the client for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InputKind {
    /// `elicitation/create`.
    Elicitation,
    /// `sampling/createMessage`.
    Sampling,
    /// `roots/list`.
    Roots,
}

impl InputKind {
    /// The embedded request's method.
    pub(crate) fn method(self) -> &'static str {
        match self {
            InputKind::Elicitation => "elicitation/create",
            InputKind::Sampling => "sampling/createMessage",
            InputKind::Roots => "roots/list",
        }
    }

    /// The kind whose embedded request has `method`.
    pub(crate) fn of_method(method: &str) -> Option<InputKind> {
        [
            InputKind::Elicitation,
            InputKind::Sampling,
            InputKind::Roots,
        ]
        .into_iter()
        .find(|kind| kind.method() == method)
    }

    /// The prefix of the keys given in order (`elicitation-1`, `sampling-1`, `roots-1`).
    pub(crate) fn prefix(self) -> &'static str {
        match self {
            InputKind::Elicitation => "elicitation",
            InputKind::Sampling => "sampling",
            InputKind::Roots => "roots",
        }
    }

    fn index(self) -> usize {
        self as usize
    }

    /// Whether `answer` has the shape of this kind's result (`ElicitResult`,
    /// `CreateMessageResult`, `ListRootsResult`); anything else is asked again.
    pub(crate) fn accepts(self, answer: &Value) -> bool {
        let Some(answer) = answer.as_object() else {
            return false;
        };
        match self {
            InputKind::Elicitation => {
                matches!(
                    answer.get("action").and_then(Value::as_str),
                    Some("accept" | "decline" | "cancel")
                ) && answer.get("content").is_none_or(Value::is_object)
            }
            InputKind::Sampling => {
                answer.get("role").is_some_and(Value::is_string)
                    && answer
                        .get("content")
                        .is_some_and(|c| c.is_object() || c.is_array())
            }
            InputKind::Roots => answer.get("roots").is_some_and(Value::is_array),
        }
    }
}

/// What a state is bound to: the method, its target, a digest of its arguments and of the
/// authenticated principal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Binding {
    pub(crate) method: String,
    pub(crate) target: String,
    pub(crate) arguments: String,
    pub(crate) principal: Option<String>,
}

/// A request as a state would be bound to it, before its digests are taken.
#[derive(Debug)]
pub(crate) struct BoundRequest {
    method: &'static str,
    target: Target,
    principal: Option<String>,
}

impl BoundRequest {
    pub(crate) fn new(method: &'static str, target: Target, principal: Option<String>) -> Self {
        BoundRequest {
            method,
            target,
            principal,
        }
    }

    /// The binding: the method, the target, and digests of the arguments and the principal.
    pub(crate) fn bind(&self) -> Binding {
        use super::retry::digest;
        let (target, arguments) = self.target.digested(self.method);
        Binding {
            method: self.method.to_owned(),
            target,
            arguments,
            principal: self
                .principal
                .as_ref()
                .map(|p| digest(&Value::String(p.clone()))),
        }
    }
}

impl Binding {
    /// Whether an opened state was issued for this very request.
    pub(crate) fn matches(&self, payload: &Payload) -> bool {
        payload.m == self.method
            && payload.t == self.target
            && payload.a == self.arguments
            && payload.p == self.principal
    }
}

/// What became of one input request.
#[derive(Debug)]
pub(crate) enum Asked {
    /// The client's answer, verbatim.
    Answered(Value),
    /// Recorded for this round's `input_required`: the caller stays pending.
    Recorded,
    /// Asking would make the next state exceed the bound.
    TooLarge(TooLarge),
}

#[derive(Debug, Default)]
struct State {
    /// Answers the incoming state carried (trusted: checked when first accepted).
    carried: Map<String, Value>,
    /// Answers offered in `inputResponses`, not yet checked against a request.
    offered: Map<String, Value>,
    /// Offered answers a request of the right kind took in this run.
    gathered: Map<String, Value>,
    /// Requests nobody answered, in the order made: key, `{method, params}`.
    asked: Vec<(String, Value)>,
    /// How many requests of each kind were made in this run (order-based keys).
    counters: [usize; 3],
    /// The tool's own value.
    tool_state: Option<Value>,
    /// The round that issued the incoming state (0 without one).
    round: u32,
}

/// One call's input round (shared by its [`Context`](crate::Context) and the driver).
#[derive(Debug)]
pub(crate) struct Round {
    codec: Codec,
    request: BoundRequest,
    /// The request's binding, taken when a state is opened or first issued.
    binding: std::sync::OnceLock<Binding>,
    state: Mutex<State>,
    waker: AtomicWaker,
}

impl Round {
    /// A round for `request`: `opened` is its verified incoming state (if any) with the
    /// binding it was checked against; `responses` its `inputResponses`. With a state, only the keys it asked are
    /// taken; without one, any key may answer the request of that key.
    pub(crate) fn new(
        codec: Codec,
        request: BoundRequest,
        opened: Option<(Payload, Binding)>,
        responses: Map<String, Value>,
    ) -> Self {
        let mut state = State::default();
        let binding = std::sync::OnceLock::new();
        match opened {
            Some((payload, bound)) => {
                let _ = binding.set(bound);
                state.offered = responses
                    .into_iter()
                    .filter(|(key, _)| payload.ask.contains(key))
                    .collect();
                state.carried = payload.ans;
                state.tool_state = payload.s;
                state.round = payload.r;
            }
            None => state.offered = responses,
        }
        Round {
            codec,
            request,
            binding,
            state: Mutex::new(state),
            waker: AtomicWaker::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every write below leaves the state whole: recover it after a panic elsewhere.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One input request of `kind` under `key` (or the next order-based key): its answer
    /// when known, else recorded for this round.
    pub(crate) fn ask(&self, kind: InputKind, key: Option<String>, params: Value) -> Asked {
        let mut state = self.lock();
        let counter = &mut state.counters[kind.index()];
        *counter += 1;
        let key = key.unwrap_or_else(|| format!("{}-{}", kind.prefix(), *counter));
        if let Some(answer) = state.carried.get(&key) {
            return Asked::Answered(answer.clone());
        }
        if let Some(answer) = state.gathered.get(&key) {
            return Asked::Answered(answer.clone());
        }
        if let Some(answer) = state.offered.remove(&key) {
            if kind.accepts(&answer) {
                state.gathered.insert(key, answer.clone());
                return Asked::Answered(answer);
            }
            // A malformed answer never completes the request: it is asked again.
        }
        if state.asked.iter().any(|(k, _)| *k == key) {
            return Asked::Recorded;
        }
        let request = json!({ "method": kind.method(), "params": params });
        state.asked.push((key, request));
        if let Err(too_large) = self.check_size(&state, None) {
            state.asked.pop();
            return Asked::TooLarge(too_large);
        }
        drop(state);
        self.waker.wake();
        Asked::Recorded
    }

    /// The tool's own value: the one it set in this run, else the incoming state's.
    pub(crate) fn tool_state(&self) -> Option<Value> {
        self.lock().tool_state.clone()
    }

    /// Sets the tool's own value, unless the next state would exceed the bound.
    pub(crate) fn set_tool_state(&self, value: Value) -> Result<(), TooLarge> {
        let mut state = self.lock();
        self.check_size(&state, Some(&value))?;
        state.tool_state = Some(value);
        Ok(())
    }

    /// Whether the run made requests nobody answered.
    pub(crate) fn has_requests(&self) -> bool {
        !self.lock().asked.is_empty()
    }

    /// Wakes the driver polling with this waker when a request is recorded.
    pub(crate) fn register(&self, waker: &Waker) {
        self.waker.register(waker);
    }

    fn payload(&self, state: &State, tool_state: Option<&Value>, now: u64) -> Payload {
        let mut answers = state.carried.clone();
        for (key, answer) in &state.gathered {
            answers.insert(key.clone(), answer.clone());
        }
        let binding = self.binding.get_or_init(|| self.request.bind());
        Payload {
            m: binding.method.clone(),
            t: binding.target.clone(),
            a: binding.arguments.clone(),
            p: binding.principal.clone(),
            iat: now,
            exp: self.codec.expiry(now),
            r: state.round.saturating_add(1),
            ans: answers,
            ask: state.asked.iter().map(|(k, _)| k.clone()).collect(),
            s: tool_state.or(state.tool_state.as_ref()).cloned(),
        }
    }

    fn check_size(&self, state: &State, tool_state: Option<&Value>) -> Result<(), TooLarge> {
        // The timestamps are the widest they will be (13 digits until the year 2286).
        let payload = self.payload(state, tool_state, 9_999_999_999_999);
        let json_len = serde_json::to_vec(&payload).map_or(usize::MAX, |v| v.len());
        let size = self.codec.size_of(json_len);
        let limit = self.codec.max_size();
        if size > limit {
            return Err(TooLarge { size, limit });
        }
        Ok(())
    }

    /// The `InputRequiredResult` of this round: every request made and not answered, and the
    /// state (sealed, or a handle to it) carrying every answer so far, the keys asked and the tool's value.
    pub(crate) fn input_required(&self) -> Result<Value, RpcError> {
        let state = self.lock();
        let payload = self.payload(&state, None, now_ms());
        let issued = self.codec.issue(&payload).map_err(|e| {
            RpcError::new(
                RpcError::INTERNAL_ERROR,
                format!("Internal error: {e}"),
                None,
            )
        })?;
        let requests: Map<String, Value> = state.asked.iter().cloned().collect();
        Ok(json!({
            "resultType": "input_required",
            "inputRequests": requests,
            "requestState": issued,
        }))
    }
}
