//! What a tool asks of the client through its [`Context`]: sampling, elicitation and roots
//! (server→client requests in a session, multi round-trip input requests in the stateless
//! era), the capabilities the client declared, and the tool's own request state.

use std::sync::PoisonError;

use serde_json::{Map, Value};

use super::Context;
use super::channel::{ClientAsk, Needs};
use crate::mrtr::InputKind;
use crate::protocol::ProtocolVersion;
use crate::session::{ClientRequestError, Elicitation, ListRoots, Sampling};

impl Context {
    /// Asks the client's model for a completion (`sampling/createMessage`) and waits for the
    /// answer: the client's result, verbatim. Needs the client's `sampling` capability.
    ///
    /// In a session this is a server→client request. In the stateless era it is an input
    /// request of a multi round-trip request ([`crate::mrtr`]): the call is answered
    /// `input_required` and runs again from the start on the client's retry, when this
    /// returns the answer. Code before it may run more than once.
    pub async fn sample(&self, request: Sampling) -> Result<Value, ClientRequestError> {
        let key = request.input_key().map(str::to_owned);
        let (params, timeout) = request.into_parts();
        let needs = Needs {
            capability: "sampling",
            sub: None,
            carried_by: |_| true,
        };
        self.ask_client(ClientAsk {
            kind: InputKind::Sampling,
            key,
            params,
            timeout,
            needs,
        })
        .await
    }

    /// Asks the user for input (`elicitation/create`) and waits for the answer: the client's
    /// result verbatim (`{"action":"accept"|"decline"|"cancel","content"?:{…}}`). Form mode
    /// needs 2025-06-18 or later and the client's `elicitation` capability; URL mode needs
    /// 2025-11-25 and `elicitation.url`.
    ///
    /// In a session this is a server→client request. In the stateless era it is an input
    /// request of a multi round-trip request ([`crate::mrtr`]) under the request's
    /// [`key`](Elicitation::key): the call is answered `input_required` and runs again from
    /// the start on the client's retry, when this returns the answer. Side effects before it
    /// must be idempotent, or carried in [`set_request_state`](Self::set_request_state).
    ///
    /// ```
    /// use serde_json::{Map, Value, json};
    /// use wymcp::session::Elicitation;
    /// use wymcp::{CallOutput, CallResult, Context, PlainTool};
    ///
    /// struct Greet;
    ///
    /// impl PlainTool for Greet {
    ///     fn name(&self) -> &str { "greet" }
    ///     fn description(&self) -> &str { "Greets the user by name" }
    ///     fn input_schema(&self) -> Map<String, Value> {
    ///         json!({"type": "object"}).as_object().cloned().unwrap_or_default()
    ///     }
    ///     async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
    ///         let ask = Elicitation::form("What is your name?", json!({
    ///             "type": "object",
    ///             "properties": {"name": {"type": "string"}},
    ///             "required": ["name"]
    ///         }))
    ///         .key("user_name");
    ///         // Same code in both eras: a server→client request in a session, an input
    ///         // request (`input_required`, then a retry) in the stateless era.
    ///         let answer = ctx.elicit(ask).await.unwrap_or_default();
    ///         let name = answer["content"]["name"].as_str().unwrap_or("stranger");
    ///         Ok(CallOutput::text(format!("Hello, {name}!")))
    ///     }
    /// }
    /// ```
    pub async fn elicit(&self, request: Elicitation) -> Result<Value, ClientRequestError> {
        let needs = if request.is_url_mode() {
            Needs {
                capability: "elicitation",
                sub: Some("url"),
                carried_by: ProtocolVersion::supports_url_elicitation,
            }
        } else {
            Needs {
                capability: "elicitation",
                sub: None,
                carried_by: ProtocolVersion::supports_elicitation,
            }
        };
        let key = request.input_key().map(str::to_owned);
        let (params, timeout) = request.into_parts();
        self.ask_client(ClientAsk {
            kind: InputKind::Elicitation,
            key,
            params,
            timeout,
            needs,
        })
        .await
    }

    /// Asks the client for its roots (`roots/list`) and waits for the answer: the client's
    /// result verbatim (`{"roots": [{"uri": …, "name"?: …}]}`). Needs the client's `roots`
    /// capability. A server→client request in a session; an input request of a multi
    /// round-trip request in the stateless era, like [`elicit`](Self::elicit).
    ///
    /// ```
    /// use wymcp::Context;
    /// use wymcp::session::{ClientRequestError, ListRoots};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// // A context outside any session (and outside the stateless era) has nobody to ask.
    /// let ctx = Context::default();
    /// let answer = ctx.list_roots(ListRoots::new().key("client_roots")).await;
    /// assert_eq!(answer, Err(ClientRequestError::NoSession));
    /// # });
    /// ```
    pub async fn list_roots(&self, request: ListRoots) -> Result<Value, ClientRequestError> {
        let key = request.input_key().map(str::to_owned);
        let (params, timeout) = request.into_parts();
        let needs = Needs {
            capability: "roots",
            sub: None,
            carried_by: |_| true,
        };
        self.ask_client(ClientAsk {
            kind: InputKind::Roots,
            key,
            params,
            timeout,
            needs,
        })
        .await
    }

    /// Whether the client declared `capability` (`"elicitation"`, `"sampling"`, `"roots"`,
    /// …): in a session, at `initialize`; in the stateless era, in this request's
    /// `clientCapabilities`. Check it before asking for what the call can do without: asking
    /// for an undeclared kind in the stateless era answers the call `-32021`.
    ///
    /// ```
    /// use serde_json::json;
    /// use wymcp::Context;
    ///
    /// let ctx = Context::builder().client_capabilities(json!({"sampling": {}})).build();
    /// assert!(ctx.client_declares("sampling"));
    /// assert!(!ctx.client_declares("elicitation"));
    /// ```
    pub fn client_declares(&self, capability: &str) -> bool {
        self.declares(capability, None)
    }

    /// The tool's own value carried from round to round of a multi round-trip request: what
    /// [`set_request_state`](Self::set_request_state) set in this run or, on a retry, in
    /// the run that asked. `None` on a first run.
    pub fn request_state(&self) -> Option<Value> {
        match self.inner.asks.channel.round() {
            Some(round) => round.tool_state(),
            None => self
                .inner
                .asks
                .request_state
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
        }
    }

    /// Sets the tool's own value: in the stateless era it is sealed into the `requestState`
    /// of the next `input_required`, so a retry can read it back with
    /// [`request_state`](Self::request_state) instead of redoing work. Outside (a session)
    /// it is kept for this call, which is never re-run. Refused when the state would exceed
    /// its bound.
    ///
    /// ```
    /// use serde_json::json;
    /// use wymcp::Context;
    ///
    /// let ctx = Context::default();
    /// assert_eq!(ctx.request_state(), None);
    /// ctx.set_request_state(json!({"draft": 42})).unwrap();
    /// assert_eq!(ctx.request_state(), Some(json!({"draft": 42})));
    /// ```
    pub fn set_request_state(&self, value: Value) -> Result<(), ClientRequestError> {
        match self.inner.asks.channel.round() {
            Some(round) => {
                round
                    .set_tool_state(value)
                    .map_err(|e| ClientRequestError::RequestStateTooLarge {
                        size: e.size,
                        limit: e.limit,
                    })
            }
            None => {
                *self
                    .inner
                    .asks
                    .request_state
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = Some(value);
                Ok(())
            }
        }
    }

    /// Stateless era: records that the call needs `required` (a `ClientCapabilities` object)
    /// the request did not declare; answers whether it is missing.
    fn missing_in_stateless(&self, capability: &str, sub: Option<&str>) -> bool {
        if !self.inner.request.protocol_version.is_stateless() || self.declares(capability, sub) {
            return false;
        }
        // Every capability the call asked for is named, not only the last one.
        let mut required = self
            .inner
            .asks
            .required_capabilities
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let all = required.get_or_insert_with(|| Value::Object(Map::new()));
        if let Some(all) = all.as_object_mut() {
            let entry = all
                .entry(capability)
                .or_insert_with(|| Value::Object(Map::new()));
            if let (Some(sub), Some(entry)) = (sub, entry.as_object_mut()) {
                entry.insert(sub.to_owned(), Value::Object(Map::new()));
            }
        }
        true
    }

    /// Stateless era (MCP 2026-07-28): records that the request needs the extension `id`,
    /// which it did not declare, so that it is answered `-32021` (missing required client
    /// capability) with `data.requiredCapabilities` naming `{"extensions": {id: {}}}`,
    /// whatever the call returns. A gateway relays an upstream's refusal with it. In a
    /// session it changes nothing.
    ///
    /// ```
    /// use wymcp::Context;
    ///
    /// let ctx = Context::default();
    /// ctx.require_extension("io.modelcontextprotocol/tasks");
    /// ```
    pub fn require_extension(&self, id: &str) {
        let mut required = self
            .inner
            .asks
            .required_capabilities
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let all = required.get_or_insert_with(|| Value::Object(Map::new()));
        if let Some(all) = all.as_object_mut() {
            let extensions = all
                .entry("extensions")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(extensions) = extensions.as_object_mut() {
                extensions.insert(id.to_owned(), Value::Object(Map::new()));
            }
        }
    }

    /// The client capabilities the call asked for but the stateless request did not declare
    /// (a `ClientCapabilities` object), if any.
    pub(crate) fn required_capabilities(&self) -> Option<Value> {
        self.inner
            .asks
            .required_capabilities
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Asks the client through the call's channel. In the stateless era a capability the
    /// request did not declare is refused here and recorded, so the call is answered `-32021`
    /// naming it (every one the call asked for, not only the last).
    async fn ask_client(&self, ask: ClientAsk) -> Result<Value, ClientRequestError> {
        if self.missing_in_stateless(ask.needs.capability, ask.needs.sub) {
            return Err(ClientRequestError::NotSupported);
        }
        self.inner.asks.channel.ask(self, ask).await
    }

    /// Whether the client declared `capability` (and its `sub` key), by key presence.
    pub(super) fn declares(&self, capability: &str, sub: Option<&str>) -> bool {
        let Some(found) = self
            .inner
            .caller
            .client_capabilities
            .as_ref()
            .and_then(|c| c.get(capability))
        else {
            return false;
        };
        sub.is_none_or(|sub| found.get(sub).is_some())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Context;
    use crate::ProtocolVersion;
    use crate::session::{Elicitation, Sampling};

    #[tokio::test]
    async fn a_stateless_call_names_every_capability_it_lacked() {
        let ctx = Context::builder()
            .protocol_version(ProtocolVersion::V2026_07_28)
            .client_capabilities(json!({}))
            .build();
        assert!(ctx.sample(Sampling::prompt("hi")).await.is_err());
        let form = Elicitation::form("name?", json!({"type": "object"}));
        assert!(ctx.elicit(form).await.is_err());
        assert_eq!(
            ctx.required_capabilities(),
            Some(json!({"sampling": {}, "elicitation": {}}))
        );
    }
}
