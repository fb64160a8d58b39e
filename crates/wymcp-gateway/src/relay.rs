//! [`Relay`]: what an upstream sends about the calls forwarded to it, carried to the downstream
//! caller of each call, and the caller's answers back.
//!
//! Every `tools/call` forwarded upstream carries a progress token of its own
//! (`wymcp-gateway-<n>`, unique per upstream), and is held in the relay's map of calls in
//! flight, token to the downstream call's [`Context`], while it runs. What the upstream sends
//! is matched to a call by one rule:
//!
//! 1. the token the message names: `params.progressToken` of `notifications/progress`; the
//!    related request the transport tells ([`wymcp::client::related_progress_token`]: the
//!    upstream's request or log message came on the call's response stream over Streamable
//!    HTTP, or in its `input_required` result in the stateless era);
//! 2. else, when the transport tells nothing (stdio, the session's GET stream), the one call
//!    in flight on that upstream, when exactly one is;
//! 3. else nobody: a request is answered with a JSON-RPC error saying why (no call in
//!    flight, or several and nothing tells which), a notification is dropped (logged at
//!    debug).
//!
//! The matched call's context asks its own client ([`Context::sample`], [`Context::elicit`],
//! [`Context::list_roots`]) within the upstream's timeout, reports progress
//! ([`Context::progress`]) and logs ([`Context::log_as`], at the downstream's level).
//!
//! In the stateless era (the upstream's requests came in an `input_required` result) each is
//! asked under the upstream's own key ([`wymcp::client::related_input_key`]): a stateless
//! downstream gets the gateway's `input_required` with the upstream's keys, and its retry
//! runs the forwarded call again from the start, the answers under those keys going back to
//! the upstream in its own rounds. The requests of one upstream round are asked together
//! (the client answers them concurrently), so the downstream gets them in one round too.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;
use wymcp::client::Notification;
use wymcp::protocol::LogLevel;
use wymcp::session::{ClientRequestError, Elicitation, ListRoots, Sampling};
use wymcp::{Context, RpcError};

/// The prefix of the progress tokens the gateway gives the calls it forwards.
const TOKEN_PREFIX: &str = "wymcp-gateway-";

/// What an upstream asks of its client, relayed to the downstream one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ask {
    /// `sampling/createMessage`.
    Sampling,
    /// `elicitation/create`.
    Elicitation,
    /// `roots/list`.
    Roots,
}

impl Ask {
    fn method(self) -> &'static str {
        match self {
            Ask::Sampling => "sampling/createMessage",
            Ask::Elicitation => "elicitation/create",
            Ask::Roots => "roots/list",
        }
    }

    fn capability(self) -> &'static str {
        match self {
            Ask::Sampling => "sampling",
            Ask::Elicitation => "elicitation",
            Ask::Roots => "roots",
        }
    }
}

/// A call in flight: the downstream call's context, and the token cancelled when the call
/// ends (a relayed request still waiting then stops).
#[derive(Debug, Clone)]
struct InFlight {
    ctx: Context,
    ended: CancellationToken,
}

/// The calls in flight on one upstream, and the relaying of what the upstream sends about
/// them. Shared by the upstream's client handlers (installed at each connect) and its calls.
#[derive(Debug)]
pub(crate) struct Relay {
    upstream: String,
    /// How long a relayed request waits for the downstream's answer.
    timeout: Duration,
    next: AtomicU64,
    calls: Mutex<BTreeMap<String, InFlight>>,
}

/// A call held in flight; dropping it (the call answered, failed or dropped) forgets it.
#[derive(Debug)]
pub(crate) struct Forwarded {
    relay: Arc<Relay>,
    token: String,
}

impl Forwarded {
    /// The progress token the forwarded call carries.
    pub(crate) fn token(&self) -> &str {
        &self.token
    }
}

impl Drop for Forwarded {
    fn drop(&mut self) {
        let gone = self.relay.lock().remove(&self.token);
        if let Some(call) = gone {
            call.ended.cancel();
        }
    }
}

impl Relay {
    pub(crate) fn new(upstream: &str, timeout: Duration) -> Arc<Relay> {
        Arc::new(Relay {
            upstream: upstream.to_owned(),
            timeout,
            next: AtomicU64::new(1),
            calls: Mutex::new(BTreeMap::new()),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, InFlight>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Holds the downstream call `ctx` in flight under a new progress token.
    pub(crate) fn begin(self: &Arc<Self>, ctx: &Context) -> Forwarded {
        let token = format!(
            "{TOKEN_PREFIX}{}",
            self.next.fetch_add(1, Ordering::Relaxed)
        );
        self.lock().insert(
            token.clone(),
            InFlight {
                ctx: ctx.clone(),
                ended: CancellationToken::new(),
            },
        );
        Forwarded {
            relay: Arc::clone(self),
            token,
        }
    }

    /// The call a message is for, by the module's rule; `Err` says why there is none.
    fn target(&self, related: Option<&Value>) -> Result<InFlight, String> {
        let calls = self.lock();
        if let Some(token) = related {
            let found = token.as_str().and_then(|t| calls.get(t));
            return found.cloned().ok_or_else(|| {
                format!(
                    "the gateway's call it was made for (progress token {token}) is no longer in flight on upstream {}",
                    self.upstream
                )
            });
        }
        let mut all = calls.values();
        match (all.next(), all.next()) {
            (Some(only), None) => Ok(only.clone()),
            (None, _) => Err(format!(
                "no call of the gateway is in flight on upstream {}: no downstream client to ask",
                self.upstream
            )),
            (Some(_), Some(_)) => Err(format!(
                "{} calls of the gateway are in flight on upstream {} and nothing in the request tells which one it was made for",
                calls.len(),
                self.upstream
            )),
        }
    }

    /// Relays the upstream's request `ask` (its `params`) to the downstream client of the call
    /// it was made for: the downstream's answer, or a JSON-RPC error saying why there is none.
    pub(crate) async fn ask(&self, ask: Ask, params: Value) -> Result<Value, RpcError> {
        let related = wymcp::client::related_progress_token();
        let call = self.target(related.as_ref()).map_err(|why| {
            RpcError::new(
                RpcError::INTERNAL_ERROR,
                format!("{} not relayed: {why}", ask.method()),
                None,
            )
        })?;
        // Asked in an `input_required` result (the stateless era): the downstream is asked
        // under the upstream's key, so that a stateless downstream sees it and answers under it.
        let key = wymcp::client::related_input_key();
        let asked = async {
            match ask {
                Ask::Sampling => {
                    let request = sampling(params, self.timeout);
                    let request = match key {
                        Some(key) => request.key(key),
                        None => request,
                    };
                    call.ctx.sample(request).await
                }
                Ask::Elicitation => match elicitation(params, self.timeout) {
                    Some(request) => {
                        let request = match key {
                            Some(key) => request.key(key),
                            None => request,
                        };
                        call.ctx.elicit(request).await
                    }
                    None => Err(ClientRequestError::Client(serde_json::json!({
                        "code": RpcError::INVALID_PARAMS,
                        "message": ELICITATION_INCOMPLETE,
                    }))),
                },
                Ask::Roots => {
                    let request = ListRoots::new().timeout(self.timeout);
                    let request = match key {
                        Some(key) => request.key(key),
                        None => request,
                    };
                    call.ctx.list_roots(request).await
                }
            }
        };
        let answered = tokio::select! {
            answered = asked => answered,
            () = call.ended.cancelled() => {
                return Err(RpcError::new(
                    RpcError::INTERNAL_ERROR,
                    format!("{} not relayed: the downstream call it was made for ended", ask.method()),
                    None,
                ));
            }
        };
        answered.map_err(|error| refusal(ask, &error))
    }

    /// Relays one notification of the upstream: progress to the call whose token it names, a
    /// log message to the call the rule finds; anything else is left to the caller.
    pub(crate) fn notify(&self, note: &Notification) {
        let params = note.params().cloned().unwrap_or(Value::Null);
        match note.method() {
            "notifications/progress" => {
                let Some(call) = params
                    .get("progressToken")
                    .and_then(Value::as_str)
                    .and_then(|token| self.lock().get(token).cloned())
                else {
                    tracing::debug!(target: "wymcp_gateway", upstream = %self.upstream, "progress for no call in flight: dropped");
                    return;
                };
                let Some(progress) = params.get("progress").and_then(Value::as_f64) else {
                    return;
                };
                let total = params.get("total").and_then(Value::as_f64);
                let message = params.get("message").and_then(Value::as_str);
                call.ctx.progress(progress, total, message);
            }
            "notifications/message" => {
                let call = match self.target(note.related_progress_token()) {
                    Ok(call) => call,
                    Err(why) => {
                        tracing::debug!(target: "wymcp_gateway", upstream = %self.upstream, %why, "log message not relayed");
                        return;
                    }
                };
                let Some(level) = params
                    .get("level")
                    .and_then(Value::as_str)
                    .and_then(LogLevel::parse)
                else {
                    return;
                };
                let data = params.get("data").cloned().unwrap_or(Value::Null);
                match params.get("logger").and_then(Value::as_str) {
                    Some(logger) => call.ctx.log_as(level, logger, data),
                    None => call.ctx.log(level, data),
                };
            }
            _ => {}
        }
    }
}

impl Relay {
    /// The upstream ended the response stream of the call whose progress token is `related`
    /// before answering it (SEP-1699 polling; the client resumes it): the downstream call's
    /// own stream is ended too ([`Context::close_sse_stream`]), so that its client resumes on
    /// the gateway as it would on the upstream. Nothing happens where the downstream call has
    /// no stream to close (JSON, stdio, SSE polling off), or no call is found.
    pub(crate) fn stream_closed(&self, related: Option<&Value>) {
        match self.target(related) {
            Ok(call) => {
                call.ctx.close_sse_stream();
            }
            Err(why) => {
                tracing::debug!(target: "wymcp_gateway", upstream = %self.upstream, %why, "stream close not relayed");
            }
        }
    }
}

/// The upstream refused a forwarded call for the client capabilities `required` (`-32021`,
/// its `data.requiredCapabilities`), which the call declared as the downstream's own: the
/// downstream call `ctx` is asked for each kind among them it did not declare, and refuses it
/// unasked. In the stateless era that refusal is recorded, and the downstream call is
/// answered `-32021` naming the same capabilities, as the upstream asked directly would have;
/// in a session the call fails with the upstream's error. A kind the downstream declares is
/// not asked (nothing is sent to it).
pub(crate) async fn require(ctx: &Context, required: &Value) {
    let declared = |kind: &str, sub: Option<&str>| {
        ctx.client_capabilities()
            .and_then(|caps| caps.get(kind))
            .is_some_and(|found| sub.is_none_or(|sub| found.get(sub).is_some()))
    };
    let needs = |kind: &str| required.get(kind);
    if needs("sampling").is_some() && !declared("sampling", None) {
        let _ = ctx.sample(Sampling::prompt("")).await;
    }
    if let Some(elicitation) = needs("elicitation") {
        let url = elicitation.get("url").is_some();
        if !declared("elicitation", None) || (url && !declared("elicitation", Some("url"))) {
            let ask = match url {
                true => Elicitation::url("", "", ""),
                false => Elicitation::form("", Value::Object(Map::new())),
            };
            let _ = ctx.elicit(ask).await;
        }
    }
    if needs("roots").is_some() && !declared("roots", None) {
        let _ = ctx.list_roots(ListRoots::new()).await;
    }
}

/// Why an upstream's `elicitation/create` is not relayed: what either mode needs is missing.
pub(crate) const ELICITATION_INCOMPLETE: &str = "elicitation/create needs a message, and a requestedSchema (form mode) or a url and an elicitationId (url mode)";

/// The downstream `sampling/createMessage` of the upstream's `params`: its messages and every
/// other param as sent.
pub(crate) fn sampling(params: Value, timeout: Duration) -> Sampling {
    let mut params = match params {
        Value::Object(params) => params,
        _ => Map::new(),
    };
    let messages = match params.remove("messages") {
        Some(Value::Array(messages)) => messages,
        _ => Vec::new(),
    };
    params
        .into_iter()
        .fold(Sampling::messages(messages), |request, (key, value)| {
            request.param(key, value)
        })
        .timeout(timeout)
}

/// The downstream `elicitation/create` of the upstream's `params`: URL mode when it says so,
/// else form mode; `None` when what the mode needs is missing.
pub(crate) fn elicitation(params: Value, timeout: Duration) -> Option<Elicitation> {
    let text = |key: &str| params.get(key).and_then(Value::as_str);
    let message = text("message")?;
    let request = if text("mode") == Some("url") {
        Elicitation::url(message, text("url")?, text("elicitationId")?)
    } else {
        Elicitation::form(message, params.get("requestedSchema")?.clone())
    };
    Some(request.timeout(timeout))
}

/// The JSON-RPC error the upstream gets when the downstream gave no answer: the downstream's
/// own error as it sent it, else why there was none.
fn refusal(ask: Ask, error: &ClientRequestError) -> RpcError {
    let why = match error {
        ClientRequestError::Client(sent) => {
            return RpcError::new(
                sent.get("code")
                    .and_then(Value::as_i64)
                    .unwrap_or(RpcError::INTERNAL_ERROR),
                sent.get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("the downstream client answered an error"),
                sent.get("data").cloned(),
            );
        }
        ClientRequestError::NotSupported => {
            return RpcError::new(
                RpcError::METHOD_NOT_FOUND,
                format!(
                    "{} not relayed: the downstream client did not declare {} (or its protocol revision lacks it)",
                    ask.method(),
                    ask.capability()
                ),
                None,
            );
        }
        ClientRequestError::Timeout => {
            "the downstream client did not answer within the timeout".to_owned()
        }
        other => format!("the downstream client cannot be reached: {other}"),
    };
    RpcError::new(
        RpcError::INTERNAL_ERROR,
        format!("{} not relayed: {why}", ask.method()),
        None,
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::time::Duration;

    use serde_json::json;
    use wymcp::{Context, RpcError};

    use super::{Ask, Relay};

    #[tokio::test]
    async fn a_request_with_no_call_in_flight_or_several_is_refused_saying_why() {
        let relay = Relay::new("up", Duration::from_secs(1));
        let none = relay.ask(Ask::Roots, json!({})).await.unwrap_err();
        assert_eq!(none.code(), RpcError::INTERNAL_ERROR);
        assert_eq!(
            none.message(),
            "roots/list not relayed: no call of the gateway is in flight on upstream up: no downstream client to ask"
        );
        let first = relay.begin(&Context::default());
        let second = relay.begin(&Context::default());
        let several = relay.ask(Ask::Roots, json!({})).await.unwrap_err();
        assert_eq!(
            several.message(),
            "roots/list not relayed: 2 calls of the gateway are in flight on upstream up and nothing in the request tells which one it was made for"
        );
        drop(second);
        // The one call left has nobody to ask (a context outside any session).
        let one = relay
            .ask(Ask::Sampling, json!({"messages": []}))
            .await
            .unwrap_err();
        assert_eq!(
            one.message(),
            "sampling/createMessage not relayed: the downstream client cannot be reached: no session"
        );
        assert!(first.token().starts_with("wymcp-gateway-"));
    }
}
