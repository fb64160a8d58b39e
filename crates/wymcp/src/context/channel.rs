//! [`ClientChannel`]: how a call reaches its client with a request of its own (sampling,
//! elicitation, roots), one implementation per way of reaching it:
//!
//! - [`SessionRequest`]: a server→client request of the call's session, on the call's stream
//!   (or the session's standalone one), answered by the client's response;
//! - [`Round`](crate::mrtr::Round): an input request of a stateless multi round-trip request,
//!   answered `input_required` and given on the client's retry;
//! - the task's input requests (`context::task`'s `TaskChannel`), answered by `tasks/update`;
//! - [`Unreachable`]: nobody to ask (a call outside any session or round, a test's context).
//!
//! The serving core picks the channel when it builds the call's [`Context`]
//! ([`ContextBuilder::build`](super::ContextBuilder::build), and
//! [`Context::for_task`](super::Context::for_task) when the call runs as a task); the
//! context's `sample`, `elicit` and `list_roots` describe what they ask as a [`ClientAsk`] and
//! hand it to the channel, whatever it is.
//!
//! A channel owns its id space (a session mints its own request ids; a round and a task key
//! their requests), its wait (the ask's `timeout`) and its clean-up: the future a channel
//! answers may be dropped at any point (the call cancelled, or ended), and the channel then
//! forgets the request. A gateway relaying requests between two peers is one more
//! implementation of this trait.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::Context;
use crate::mrtr::{Asked, InputKind, Round};
use crate::protocol::ProtocolVersion;
use crate::session::{ClientRequestError, Delivery, SessionHandle};

/// One request a call makes of its client.
#[derive(Debug)]
pub(crate) struct ClientAsk {
    /// What is asked (its method).
    pub(crate) kind: InputKind,
    /// The request's key in `inputRequests` (stateless rounds and tasks); `None`: given in
    /// order.
    pub(crate) key: Option<String>,
    /// The request's params.
    pub(crate) params: Value,
    /// How long to wait for the answer (a session's round trip and a task's input).
    pub(crate) timeout: Duration,
    /// What the client must have declared for it.
    pub(crate) needs: Needs,
}

/// The client capability a request needs, and the revisions that carry it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Needs {
    /// The capability's key (`sampling`, `elicitation`, `roots`).
    pub(crate) capability: &'static str,
    /// A key it must have inside (`url` for URL-mode elicitation).
    pub(crate) sub: Option<&'static str>,
    /// Whether a session of a revision carries the request at all.
    pub(crate) carried_by: fn(ProtocolVersion) -> bool,
}

/// A way of reaching the client: asks it `ask` for the call `ctx`, answering the client's
/// result verbatim.
pub(crate) trait ClientChannel: Send + Sync + std::fmt::Debug {
    /// Asks the client, and waits for its answer (or forever: a round's request is answered
    /// on the retry, by a new run of the call; its driver drops this one).
    fn ask<'a>(
        &'a self,
        ctx: &'a Context,
        ask: ClientAsk,
    ) -> BoxFuture<'a, Result<Value, ClientRequestError>>;

    /// The multi round-trip round the channel asks through, where it has one: the tool's own
    /// request state is carried from round to round in it.
    fn round(&self) -> Option<&Round> {
        None
    }
}

/// The channel a context holds: shared, or one of the stateless ways (no allocation for a
/// session's call).
#[derive(Clone)]
pub(crate) enum Channel {
    /// A way with state of its own (a round, a task).
    Shared(Arc<dyn ClientChannel>),
    /// A way without (a session's request, nobody).
    Fixed(&'static dyn ClientChannel),
}

impl Channel {
    /// The way a call with a `session` and an input `round` (either, both, none) reaches its
    /// client: the round when the call has one (the stateless era), else the session.
    pub(crate) fn pick(session: Option<&SessionHandle>, round: Option<Arc<Round>>) -> Channel {
        match (round, session) {
            (Some(round), _) => Channel::Shared(round),
            (None, Some(_)) => Channel::Fixed(&SessionRequest),
            (None, None) => Channel::Fixed(&Unreachable),
        }
    }
}

impl std::ops::Deref for Channel {
    type Target = dyn ClientChannel;

    fn deref(&self) -> &Self::Target {
        match self {
            Channel::Shared(channel) => channel.as_ref(),
            Channel::Fixed(channel) => *channel,
        }
    }
}

impl std::fmt::Debug for Channel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

/// Nobody to ask: the call has neither a session nor a round.
#[derive(Debug)]
pub(crate) struct Unreachable;

impl ClientChannel for Unreachable {
    fn ask<'a>(
        &'a self,
        _: &'a Context,
        _: ClientAsk,
    ) -> BoxFuture<'a, Result<Value, ClientRequestError>> {
        Box::pin(std::future::ready(Err(ClientRequestError::NoSession)))
    }
}

/// A server→client request of the call's session: refused unless the session's revision
/// carries it and the client declared the capability at `initialize`; sent on the call's
/// stream (else the session's standalone one) under an id the session mints, and forgotten
/// however the wait ends (answered, timed out, the call dropped).
#[derive(Debug)]
pub(crate) struct SessionRequest;

impl ClientChannel for SessionRequest {
    fn ask<'a>(
        &'a self,
        ctx: &'a Context,
        ask: ClientAsk,
    ) -> BoxFuture<'a, Result<Value, ClientRequestError>> {
        Box::pin(async move {
            let Some(session) = ctx.session() else {
                return Err(ClientRequestError::NoSession);
            };
            let ClientAsk {
                kind,
                params,
                timeout,
                needs,
                ..
            } = ask;
            if !(needs.carried_by)(ctx.protocol_version())
                || !ctx.declares(needs.capability, needs.sub)
            {
                return Err(ClientRequestError::NotSupported);
            }
            let (id, answer) = session.begin_request(&ctx.stream_name());
            let _pending = Pending { session, id: &id };
            let message = serde_json::json!({
                "jsonrpc": "2.0",
                "id": id,
                "method": kind.method(),
                "params": params,
            });
            match ctx.send(message) {
                Delivery::Sent => {}
                Delivery::NoStream => return Err(ClientRequestError::NoStream),
                Delivery::Disconnected => return Err(ClientRequestError::Disconnected),
            }
            match tokio::time::timeout(timeout, answer).await {
                Ok(Ok(Ok(result))) => Ok(result),
                Ok(Ok(Err(error))) => Err(ClientRequestError::Client(error)),
                Ok(Err(_)) => Err(ClientRequestError::Disconnected),
                Err(_) => Err(ClientRequestError::Timeout),
            }
        })
    }
}

/// Forgets a session's pending request when the wait for it ends, however it ends.
struct Pending<'a> {
    session: &'a SessionHandle,
    id: &'a str,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        self.session.forget_request(self.id);
    }
}

/// An input request of a stateless multi round-trip request: its answer when the client gave
/// it with this retry, else recorded for the round's `input_required` and pending until the
/// round's driver drops the call.
impl ClientChannel for Round {
    fn ask<'a>(
        &'a self,
        _: &'a Context,
        ask: ClientAsk,
    ) -> BoxFuture<'a, Result<Value, ClientRequestError>> {
        let asked = Round::ask(self, ask.kind, ask.key, ask.params);
        Box::pin(async move {
            match asked {
                Asked::Answered(answer) => Ok(answer),
                Asked::TooLarge(e) => Err(ClientRequestError::RequestStateTooLarge {
                    size: e.size,
                    limit: e.limit,
                }),
                Asked::Recorded => std::future::pending().await,
            }
        })
    }

    fn round(&self) -> Option<&Round> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use crate::Context;
    use crate::protocol::ProtocolVersion;
    use crate::session::Notifier;
    use crate::session::{ClientRequestError, Elicitation, ListRoots, SessionHandle};

    fn session(version: ProtocolVersion) -> SessionHandle {
        SessionHandle::live("s-1", Arc::from(Vec::new()), version, None, None)
    }

    #[tokio::test]
    async fn a_call_without_session_or_round_has_nobody_to_ask() {
        let ctx = Context::default();
        let answer = ctx.list_roots(ListRoots::new()).await;
        assert_eq!(answer, Err(ClientRequestError::NoSession));
    }

    #[tokio::test]
    async fn a_session_request_needs_the_revision_and_the_capability() {
        let url = || Elicitation::url("Sign in", "https://example.test/login", "e-1");
        let form = || Elicitation::form("Name?", json!({"type": "object"}));
        // 2025-06-18 carries form elicitation, not URL mode (2025-11-25).
        let ctx = Context::builder()
            .protocol_version(ProtocolVersion::V2025_06_18)
            .client_capabilities(json!({"elicitation": {"url": {}}}))
            .session(session(ProtocolVersion::V2025_06_18))
            .build();
        assert_eq!(
            ctx.elicit(url()).await,
            Err(ClientRequestError::NotSupported)
        );
        // Carried and declared, but the session has no stream to send it on.
        assert_eq!(ctx.elicit(form()).await, Err(ClientRequestError::NoStream));
        // Undeclared: refused before anything is sent.
        let ctx = Context::builder()
            .protocol_version(ProtocolVersion::V2025_11_25)
            .client_capabilities(json!({}))
            .session(session(ProtocolVersion::V2025_11_25))
            .build();
        assert_eq!(
            ctx.elicit(form()).await,
            Err(ClientRequestError::NotSupported)
        );
    }

    #[tokio::test]
    async fn a_session_request_goes_out_on_the_calls_stream_with_a_minted_id() {
        let (sent, mut outbox) = tokio::sync::mpsc::unbounded_channel();
        let ctx = Context::builder()
            .protocol_version(ProtocolVersion::V2025_11_25)
            .client_capabilities(json!({"roots": {}}))
            .session(session(ProtocolVersion::V2025_11_25))
            .notifier(Notifier::new(move |message| {
                let _ = sent.send(message);
            }))
            .build();
        let ask = ListRoots::new().timeout(std::time::Duration::from_millis(50));
        assert_eq!(ctx.list_roots(ask).await, Err(ClientRequestError::Timeout));
        let message = outbox.try_recv().expect("the request was sent");
        assert_eq!(message["method"], "roots/list");
        assert_eq!(message["jsonrpc"], "2.0");
        assert!(message["id"].is_string(), "{message}");
    }
}
