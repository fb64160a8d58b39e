//! The serving core: one inbound JSON-RPC message, with what its transport knows about it
//! ([`Inbound`]), in; what to send back ([`Outcome`], or a [`Refusal`]) out. Both eras, every
//! transport: the session era (2025-03-26 to 2025-11-25: [`session`]) and the stateless era
//! (2026-07-28: [`stateless`]) share the method table ([`Method`](crate::protocol::Method),
//! whose handler column both eras dispatch by: `Server::call_request` serves `tools/call`,
//! `Server::serve_request` every other method but the session's lifecycle and
//! `subscriptions/listen`), one call runner ([`Call`]), one registry of running calls, one cancellation path and one
//! queue of related messages.
//!
//! A transport only frames: it reads bytes and headers, decides which era a message claims,
//! hands it over with its facts (the session it names, the caller's identity, whether it can
//! carry related messages on a stream of the request's own), and writes what comes back as
//! JSON, SSE or lines.

mod answer;
mod budget;
mod call;
mod client_values;
mod cluster;
// Public through `transport::http` only: a build without `http` keeps them crate-internal.
#[cfg_attr(not(feature = "http"), allow(unreachable_pub))]
mod hooks;
#[cfg_attr(not(feature = "http"), allow(unreachable_pub))]
mod initialize;
mod lease;
mod live;
#[cfg(feature = "otel")]
mod metrics;
mod notes;
mod operation;
mod quota;
mod refusal;
mod serving;
pub(crate) mod session;
mod sessions;
pub(crate) mod stateless;
mod stream_queue;
mod streams;
#[cfg(feature = "otel")]
mod trace_context;

use std::sync::Arc;

use serde_json::Value;

use crate::protocol::ProtocolVersion;

#[cfg_attr(not(feature = "http"), allow(unreachable_pub))]
pub(crate) use crate::context::Identity;
pub(crate) use answer::Answer;
pub(crate) use call::{Call, Event};
pub(crate) use cluster::Cluster;
#[cfg_attr(not(feature = "http"), allow(unreachable_pub))]
pub use hooks::{EndReason, SessionHooks, SessionStart};
pub(crate) use lease::{Lease, watch_lease};
pub(crate) use live::SharedAssigns;
pub(crate) use quota::{ClientCounts, ClientSlot, counted_client};
pub(crate) use refusal::{Class, Refusal, invalid_request};
pub(crate) use serving::{Core, Settings};
pub(crate) use sessions::{Loaded, SessionsConfig};
pub(crate) use stateless::{Listen, RoutingHeaders};
pub(crate) use stream_queue::{StreamReceiver, StreamSender, stream_queue};
pub(crate) use streams::{Listeners, Slot, StreamEvent};

/// What a transport names of what it serves: the server, the caller's identity, its own kind
/// (operation middleware sees it), the Server Card's media type, and a panic's message (an
/// auth hook that panicked). A transport reaches them through the core, never their modules.
pub(crate) use crate::Server;
pub(crate) use crate::card::SERVER_CARD_MEDIA_TYPE;
pub(crate) use crate::context::TransportKind;
pub(crate) use crate::dispatch::fault::Fault;

/// What a transport names of the sessions: the backends it is configured with and hands to
/// its [`Sessions`](sessions::Sessions), and the live session it gives its user. A transport
/// reaches them through the core, never `crate::session` itself.
pub(crate) use crate::session::{
    Bus, EventLog, InMemoryEventLog, InMemorySessionStore, LoggedEvent, SessionHandle,
    SessionRecord, SessionStore, StoreError, Work, node_id,
};

/// The era a message claims, as its transport read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    /// A session's message (2025-03-26 to 2025-11-25).
    Session,
    /// MCP 2026-07-28: no session.
    Stateless,
}

impl Era {
    /// The one rule that decides a message's era, on every transport: the stateless era when
    /// the transport's version header names a stateless revision (`header_names_stateless`;
    /// stdio has no headers) or the body claims it by itself (its `_meta` carries the
    /// envelope's `protocolVersion` or `clientCapabilities`, or it requests `server/discover`
    /// or `subscriptions/listen`); else the session era.
    pub(crate) fn of(header_names_stateless: bool, message: &serde_json::Value) -> Era {
        if header_names_stateless || stateless::claimed_in_body(message) {
            Era::Stateless
        } else {
            Era::Session
        }
    }
}

/// Where a request's related messages (progress, log messages, server→client requests) can
/// travel besides its answer.
#[derive(Debug, Clone)]
pub(crate) enum Related {
    /// Nowhere of the request's own: the session's standalone stream takes them (session era),
    /// or nothing does.
    None,
    /// A stream the transport opens for this request (an SSE response, stdout): the call
    /// queues them, and [`Call::next`] hands them out before its answer. `name` appears in
    /// server→client request ids; `polling` lets the tool close the stream mid-call (SEP-1699).
    Stream { name: Arc<str>, polling: bool },
}

/// Who sent a message, as its transport knows them: the identity it authenticated, and the
/// client's address (HTTP; behind a trusted proxy the forwarded one). A call's context carries
/// both, so the budgets that count per caller count the client when there is no identity.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Caller<'a> {
    pub(crate) identity: Option<&'a Identity>,
    pub(crate) client: Option<std::net::IpAddr>,
}

/// One inbound message and what its transport knows about it.
pub(crate) struct Inbound<'a> {
    /// One JSON-RPC message (a batch is [`Core::serve_batch`]'s).
    pub(crate) message: Value,
    pub(crate) era: Era,
    /// The session the transport names (Streamable HTTP: `Mcp-Session-Id`; stdio: its one
    /// session, once initialized).
    pub(crate) session: Option<&'a str>,
    /// The caller, when the transport authenticated one.
    pub(crate) identity: Option<&'a Identity>,
    pub(crate) related: Related,
    /// Session era: the revision the transport's version header names (HTTP).
    pub(crate) requested: Option<ProtocolVersion>,
    /// The request's headers, when its transport has them (Streamable HTTP; none on stdio):
    /// the stateless era checks its routing headers against the body; a request span takes
    /// its parent from `traceparent` when the body propagates none.
    pub(crate) headers: Option<&'a dyn RoutingHeaders>,
    /// The client's address, when the transport knows it (HTTP): sessions are counted per
    /// address when there is no identity.
    pub(crate) client: Option<std::net::IpAddr>,
    /// Session era: the named session's record, when the transport loaded it ahead
    /// ([`Core::load`]).
    pub(crate) loaded: Option<Loaded>,
    /// Stateless era: the message as received, when the transport keeps it (Streamable HTTP
    /// keeps the body it read): a call's input round reads what its state is bound to from it
    /// only if it issues a state, instead of writing every call's arguments out beforehand.
    pub(crate) raw: Option<bytes::Bytes>,
}

/// What serving one message produced.
pub(crate) enum Outcome {
    /// Nothing to send: a notification, or a client's answer to a server request.
    Accepted,
    /// One JSON-RPC message to send now.
    Message(Answer),
    /// `initialize` started session `session`; `message` is its answer.
    Started { session: String, message: Value },
    /// A request whose handler runs: its related messages and its answer come from the call.
    Call(Call),
    /// An admitted `subscriptions/listen` request: the transport opens its stream.
    Listen(Listen),
}

#[cfg(test)]
mod era_tests {
    use serde_json::json;

    use super::Era;

    #[test]
    fn one_rule_decides_the_era_on_every_transport() {
        let plain = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
        assert_eq!(Era::of(false, &plain), Era::Session);
        // The version header alone (Streamable HTTP).
        assert_eq!(Era::of(true, &plain), Era::Stateless);
        // Either key of the envelope, whatever its value, on any message.
        for key in [
            "io.modelcontextprotocol/protocolVersion",
            "io.modelcontextprotocol/clientCapabilities",
        ] {
            let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                "params": {"_meta": {key: "1999-01-01"}}});
            assert_eq!(Era::of(false, &request), Era::Stateless, "{key}");
            let notification = json!({"jsonrpc": "2.0", "method": "notifications/x",
                "params": {"_meta": {key: {}}}});
            assert_eq!(Era::of(false, &notification), Era::Stateless, "{key}");
        }
        // A method of this era only, as a request; not as a notification.
        for method in ["server/discover", "subscriptions/listen"] {
            let request = json!({"jsonrpc": "2.0", "id": "a", "method": method});
            assert_eq!(Era::of(false, &request), Era::Stateless, "{method}");
            let notification = json!({"jsonrpc": "2.0", "method": method});
            assert_eq!(Era::of(false, &notification), Era::Session, "{method}");
        }
        // Other `_meta` keys claim nothing.
        let other = json!({"jsonrpc": "2.0", "id": 1, "method": "ping",
            "params": {"_meta": {"progressToken": 1}}});
        assert_eq!(Era::of(false, &other), Era::Session);
    }
}
