//! [`Operation`]: one inbound message as OpenTelemetry's MCP semantic conventions see it (the
//! GenAI conventions' `mcp.md`): a `tracing` span named `{mcp.method.name} {target}` whose
//! fields carry the conventions' attribute names, opened where the serving core takes the
//! message ([`Core::serve`](super::Core::serve)) and closed when its answer is known (a call's
//! when it finishes, [`Call::next`](super::Call::next)). An OpenTelemetry layer
//! (`tracing-opentelemetry`) exports it as a `SERVER` span; with the `otel` feature it also
//! takes its remote parent from the message ([`trace_context`](super::trace_context)) and the
//! operation is measured ([`metrics`](super::metrics)).
//!
//! Cost when nobody listens: the span is DEBUG (as the tool events are), so without a
//! subscriber, or under an `info` filter, [`Operation::start`] is the span's cached interest
//! check and nothing else: the message is not looked at, no field is written, no clock read.
//! With `otel`, the same unless a meter provider is installed (then a clock read and the
//! labels per message: [`metrics`](super::metrics)).
//!
//! Every value quoting the client is bounded as refusals bound it (200 characters); no
//! payload (arguments, results, a resource's contents) and no header but `traceparent` is read.

use std::borrow::Cow;

use serde_json::Value;
use tracing::Span;
use tracing::field::Empty;
use wymcp_core::bound::echo;

use super::call::Finished;
use super::{Answer, Core, Era, Inbound, Outcome, Refusal};
use crate::context::TransportKind;
use crate::protocol::stateless::PROTOCOL_VERSION_KEY;
use crate::protocol::{Method, ProtocolVersion, RpcError};
use crate::tool::{CallToolResult, Content, ErrorKind};

/// `error.type` of a request the client cancelled, or dropped (its connection closed) before
/// its answer.
const CANCELLED: &str = "cancelled";

/// One inbound message's span (and, with `otel`, its measurement), from its arrival to its
/// answer. Dropped unanswered (a cancelled or abandoned call), it ends as `cancelled`.
pub(crate) struct Operation {
    span: Span,
    #[cfg(feature = "otel")]
    measure: Option<super::metrics::Measure>,
    open: bool,
}

impl Operation {
    /// The operation of `inbound` as `core` serves it.
    #[inline]
    pub(crate) fn start(core: &Core, inbound: &Inbound<'_>) -> Operation {
        // Named apart from `AuditLayer`'s `mcp.server.operation` (a layer's span, inside this one).
        let span = tracing::debug_span!(
            "mcp.server.request",
            otel.name = Empty,
            otel.kind = "server",
            otel.status_code = Empty,
            otel.status_description = Empty,
            mcp.method.name = Empty,
            mcp.session.id = Empty,
            mcp.protocol.version = Empty,
            jsonrpc.request.id = Empty,
            gen_ai.operation.name = Empty,
            gen_ai.tool.name = Empty,
            gen_ai.prompt.name = Empty,
            mcp.resource.uri = Empty,
            error.type = Empty,
            rpc.response.status_code = Empty,
            network.transport = Empty,
            network.protocol.name = Empty,
            wymcp.era = Empty,
            wymcp.action = Empty,
            wymcp.refusal = Empty,
        );
        let mut operation = Operation {
            span,
            #[cfg(feature = "otel")]
            measure: None,
            // Opened by `describe`: an operation nobody observes ends without a look at its
            // outcome.
            open: false,
        };
        if operation.is_observed() {
            operation.describe(core, inbound);
        }
        operation
    }

    /// Whether anything records this operation: a subscriber took its span, or (`otel`) a
    /// meter provider is installed.
    fn is_observed(&self) -> bool {
        #[cfg(feature = "otel")]
        if super::metrics::enabled() {
            return true;
        }
        !self.span.is_disabled()
    }

    /// Whether the operation is observed and not yet ended.
    pub(crate) fn is_open(&self) -> bool {
        self.open
    }

    /// The span the message is served in.
    pub(crate) fn span(&self) -> &Span {
        &self.span
    }

    /// The attributes known on arrival; `otel`: the remote parent, the measurement's start.
    #[cold]
    #[inline(never)]
    fn describe(&mut self, core: &Core, inbound: &Inbound<'_>) {
        let message = &inbound.message;
        // A client's answer to a server request is no operation of the server's.
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            return;
        };
        self.open = true;
        let facts = Facts::of(core, inbound, method);
        let span = &self.span;
        if !span.is_disabled() {
            facts.record(span, message, inbound.session);
            #[cfg(feature = "otel")]
            super::trace_context::adopt(span, message, inbound.headers);
        }
        #[cfg(feature = "otel")]
        {
            self.measure = super::metrics::Measure::start(&facts);
        }
    }

    /// What serving the message produced, unless it is a call (whose answer comes later:
    /// [`Operation::finished`]).
    pub(crate) fn served(self, served: &Result<Outcome, Refusal>) {
        if !self.open {
            return;
        }
        match served {
            Ok(Outcome::Message(answer)) => self.answered(answer),
            Ok(Outcome::Started { session, message }) => self.started(session, message),
            Ok(Outcome::Accepted | Outcome::Listen(_) | Outcome::Call(_)) => self.ended(None),
            Err(refusal) => self.refused(&refusal.error),
        }
    }

    /// A call's end: its answer, or `None` when the client cancelled it.
    pub(crate) fn finished(self, finished: Option<&Finished>) {
        if !self.open {
            return;
        }
        match finished {
            Some(Ok(answer)) => self.answered(answer),
            Some(Err(refusal)) => self.refused(&refusal.error),
            None => self.ended(Some(Ended::error(CANCELLED))),
        }
    }

    fn answered(self, answer: &Answer) {
        match answer {
            Answer::Call {
                result, version, ..
            } => {
                // A session's revision, where no header said it (stdio).
                if !self.span.is_disabled() {
                    self.span.record("mcp.protocol.version", version.as_str());
                }
                self.tool(result);
            }
            Answer::Stateless { result, .. } => self.tool(result),
            Answer::Message(message) => match message.get("error") {
                Some(error) => self.ended(Some(Ended::rpc_value(error, None))),
                None => self.ended(Some(Ended::success())),
            },
            Answer::ScopeRefused { message, .. } => {
                let error = message.get("error").unwrap_or(&Value::Null);
                self.ended(Some(Ended::rpc_value(error, Some("insufficient_scope"))));
            }
        }
    }

    /// A `tools/call` result: an `isError` one is `tool_error` (the conventions' value), and a
    /// gate's or a layer's refusal names its gate in `wymcp.refusal`.
    fn tool(self, result: &CallToolResult) {
        if !result.is_error {
            return self.ended(Some(Ended::tool(None)));
        }
        let refusal = match result.error_kind {
            Some(ErrorKind::Dispatch) => Some(refusal_name(&result.content)),
            _ => None,
        };
        let mut ended = Ended::tool(refusal);
        ended.error_type = Some(Cow::Borrowed("tool_error"));
        self.ended(Some(ended));
    }

    fn refused(self, error: &RpcError) {
        let refusal = error
            .data()
            .and_then(|d| d.get("errorType"))
            .and_then(Value::as_str);
        let ended = Ended::rpc(error.code(), error.message(), refusal.map(echo));
        self.ended(Some(ended));
    }

    /// `initialize` started `session`: the span names it and the revision agreed.
    fn started(self, session: &str, message: &Value) {
        let version = message
            .pointer("/result/protocolVersion")
            .and_then(Value::as_str)
            .and_then(|v| v.parse::<ProtocolVersion>().ok());
        if !self.span.is_disabled() {
            self.span.record("mcp.session.id", echo(session));
            if let Some(version) = version {
                self.span.record("mcp.protocol.version", version.as_str());
            }
        }
        #[cfg(feature = "otel")]
        if let Some(measure) = &self.measure {
            measure.session_started(session, version);
        }
        self.ended(Some(Ended::success()));
    }

    /// Writes the outcome on the span and (`otel`) records the measurement; `None` when there
    /// is nothing to say (a notification, a listen stream opened).
    fn ended(mut self, ended: Option<Ended>) {
        self.close(ended.as_ref());
    }

    fn close(&mut self, ended: Option<&Ended>) {
        if !std::mem::take(&mut self.open) {
            return;
        }
        if let Some(ended) = ended
            && !self.span.is_disabled()
        {
            ended.record(&self.span);
        }
        #[cfg(feature = "otel")]
        if let Some(measure) = self.measure.take() {
            measure.finish(ended);
        }
    }
}

impl Drop for Operation {
    fn drop(&mut self) {
        if self.open {
            self.close(Some(&Ended::error(CANCELLED)));
        }
    }
}

/// What is known of a message on arrival, as the conventions name it.
pub(crate) struct Facts<'m> {
    /// The method: its wire name when served, else the client's text (bounded), as
    /// `mcp.method.name`; `known` when the server serves it.
    pub(crate) method: &'m str,
    pub(crate) known: Option<Method>,
    /// `tools/call`'s tool or `prompts/get`'s prompt, as sent.
    pub(crate) target: Option<&'m str>,
    /// `tools/call`'s `arguments.action`, as sent.
    pub(crate) action: Option<&'m str>,
    pub(crate) version: Option<ProtocolVersion>,
    pub(crate) transport: TransportKind,
    pub(crate) era: Era,
}

impl<'m> Facts<'m> {
    fn of(core: &Core, inbound: &'m Inbound<'_>, method: &'m str) -> Self {
        let known = Method::parse(method);
        let params = inbound.message.get("params");
        let name = || params.and_then(|p| p.get("name")).and_then(Value::as_str);
        let (target, action) = match known {
            Some(Method::ToolsCall) => {
                let action = params
                    .and_then(|p| p.pointer("/arguments/action"))
                    .and_then(Value::as_str);
                (name(), action)
            }
            Some(Method::PromptsGet) => (name(), None),
            _ => (None, None),
        };
        let version = match inbound.era {
            Era::Session => inbound.requested,
            Era::Stateless => params
                .and_then(|p| p.get("_meta"))
                .and_then(|m| m.get(PROTOCOL_VERSION_KEY))
                .and_then(Value::as_str)
                .and_then(|v| v.parse().ok()),
        };
        Facts {
            method,
            known,
            target,
            action,
            version,
            transport: core.settings().transport,
            era: inbound.era,
        }
    }

    /// `mcp.method.name` for a span: the wire name of a method served, else the client's
    /// text bounded.
    fn method_name(&self) -> Cow<'static, str> {
        match self.known {
            Some(method) => method.as_str().into(),
            None => echo(self.method).into(),
        }
    }

    fn record(&self, span: &Span, message: &Value, session: Option<&str>) {
        let method = self.method_name();
        let target = self.target.map(echo);
        let name = match &target {
            Some(target) => format!("{method} {target}"),
            None => method.to_string(),
        };
        span.record("otel.name", name);
        span.record("mcp.method.name", &*method);
        match self.known {
            Some(Method::ToolsCall) => {
                span.record("gen_ai.operation.name", "execute_tool");
                span.record("gen_ai.tool.name", target.as_deref());
                span.record("wymcp.action", self.action.map(echo));
            }
            Some(Method::PromptsGet) => {
                span.record("gen_ai.prompt.name", target.as_deref());
            }
            Some(
                Method::ResourcesRead | Method::ResourcesSubscribe | Method::ResourcesUnsubscribe,
            ) => {
                let uri = message.pointer("/params/uri").and_then(Value::as_str);
                span.record("mcp.resource.uri", uri.map(echo));
            }
            _ => {}
        }
        match message.get("id") {
            Some(Value::String(id)) => span.record("jsonrpc.request.id", echo(id)),
            Some(id @ Value::Number(_)) => span.record("jsonrpc.request.id", id.to_string()),
            _ => span,
        };
        span.record("mcp.session.id", session.map(echo));
        span.record(
            "mcp.protocol.version",
            self.version.map(ProtocolVersion::as_str),
        );
        span.record("network.transport", network_transport(self.transport));
        if self.transport == TransportKind::Http {
            span.record("network.protocol.name", "http");
        }
        span.record("wymcp.era", era_name(self.era));
    }
}

/// `network.transport`: `tcp` for Streamable HTTP, `pipe` for stdio (the conventions' values).
pub(crate) fn network_transport(transport: TransportKind) -> Option<&'static str> {
    match transport {
        TransportKind::Http => Some("tcp"),
        TransportKind::Stdio => Some("pipe"),
        TransportKind::Direct => None,
    }
}

/// `wymcp.era`: `session` (2025-03-26 to 2025-11-25) or `stateless` (2026-07-28).
pub(crate) fn era_name(era: Era) -> &'static str {
    match era {
        Era::Session => "session",
        Era::Stateless => "stateless",
    }
}

/// How an operation ended, as the conventions record it.
#[derive(Debug, Default)]
pub(crate) struct Ended {
    /// `error.type`: the JSON-RPC error code as text, `tool_error`, or `cancelled`.
    pub(crate) error_type: Option<Cow<'static, str>>,
    /// The same code as text when the answer is a JSON-RPC error.
    pub(crate) code: Option<String>,
    /// The error's message (bounded): the span's status description.
    pub(crate) description: Option<String>,
    /// `wymcp.refusal`: the gate (or layer) that refused, by its error name.
    pub(crate) refusal: Option<String>,
    /// A `tools/call` answered with a result (its tool was found): the metrics label the
    /// tool only then (feature `otel`).
    #[cfg_attr(not(feature = "otel"), allow(dead_code))]
    pub(crate) tool_answered: bool,
}

impl Ended {
    fn success() -> Self {
        Ended::default()
    }

    fn error(error_type: &'static str) -> Self {
        Ended {
            error_type: Some(Cow::Borrowed(error_type)),
            ..Ended::default()
        }
    }

    fn tool(refusal: Option<String>) -> Self {
        Ended {
            refusal,
            tool_answered: true,
            ..Ended::default()
        }
    }

    fn rpc(code: i64, message: &str, refusal: Option<String>) -> Self {
        let code = code.to_string();
        Ended {
            error_type: Some(Cow::Owned(code.clone())),
            code: Some(code),
            description: Some(echo(message)),
            refusal,
            tool_answered: false,
        }
    }

    fn rpc_value(error: &Value, refusal: Option<&str>) -> Self {
        let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
        let message = error.get("message").and_then(Value::as_str).unwrap_or("");
        let named = error
            .pointer("/data/errorType")
            .and_then(Value::as_str)
            .or(refusal);
        Ended::rpc(code, message, named.map(echo))
    }

    fn record(&self, span: &Span) {
        if let Some(error_type) = self.error_type.as_deref() {
            span.record("error.type", error_type);
            span.record("otel.status_code", "ERROR");
            span.record("otel.status_description", self.description.as_deref());
        }
        span.record("rpc.response.status_code", self.code.as_deref());
        span.record("wymcp.refusal", self.refusal.as_deref());
    }
}

/// The name a refusal result gives itself: a gate's `error`, a layer's `errorType` (read only
/// from a refused call's first content item; `_OTHER` when it has neither).
fn refusal_name(content: &[Content]) -> String {
    #[derive(serde::Deserialize)]
    struct Named<'a> {
        #[serde(borrow)]
        error: Option<&'a str>,
        #[serde(rename = "errorType", borrow)]
        error_type: Option<&'a str>,
    }
    let Some(Content::Text { text, .. }) = content.first() else {
        return "_OTHER".to_owned();
    };
    match serde_json::from_str::<Named<'_>>(text) {
        Ok(Named {
            error: Some(name), ..
        })
        | Ok(Named {
            error_type: Some(name),
            ..
        }) => echo(name),
        _ => "_OTHER".to_owned(),
    }
}

#[cfg(all(test, feature = "otel"))]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::serve::Core;

    /// The unit tests install no meter provider and no global subscriber: with `otel` on, an
    /// operation nobody observes is not described (no labels, no clock read), as without it.
    #[tokio::test]
    async fn with_no_meter_provider_and_no_subscriber_a_call_is_not_described() {
        let server = crate::Server::builder()
            .name("quiet")
            .build()
            .expect("a server of no tools builds");
        let core = Core::direct(server, "test");
        let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "help", "arguments": {}}});
        let inbound = Inbound {
            message,
            era: Era::Session,
            session: None,
            identity: None,
            related: super::super::Related::None,
            requested: None,
            headers: None,
            client: None,
            loaded: None,
            raw: None,
        };
        let operation = Operation::start(&core, &inbound);
        assert!(operation.span().is_disabled());
        assert!(!super::super::metrics::enabled());
        assert!(!operation.is_open());
        assert!(operation.measure.is_none());
    }
}
