//! Requests a tool makes of the client through its [`Context`](crate::Context): sampling
//! ([`Sampling`]), elicitation ([`Elicitation`]) and roots ([`ListRoots`]), and how they fail
//! ([`ClientRequestError`]). In a session each is a server→client request; in the stateless
//! era each is an input request of a multi round-trip request ([`crate::mrtr`]), under its
//! [`key`](Elicitation::key).

use std::time::Duration;

use serde_json::{Map, Value, json};

/// Default time to wait for a client's answer to `sampling/createMessage`.
pub const DEFAULT_SAMPLING_TIMEOUT: Duration = Duration::from_secs(30);
/// Default time to wait for a client's answer to `elicitation/create`.
pub const DEFAULT_ELICITATION_TIMEOUT: Duration = Duration::from_secs(120);
/// Default time to wait for a client's answer to `roots/list`.
pub const DEFAULT_ROOTS_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a server→client request got no result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientRequestError {
    /// The client answered with a JSON-RPC error (the error object, verbatim).
    #[error("the client answered with an error: {0}")]
    Client(Value),
    /// The client did not declare the capability, or the negotiated revision lacks it.
    #[error("not supported by the client or the negotiated revision")]
    NotSupported,
    /// The call belongs to no (live) session.
    #[error("no session")]
    NoSession,
    /// No stream is open to carry the request.
    #[error("no stream to send the request on")]
    NoStream,
    /// The stream carrying the request went away (write failed, or the session ended while
    /// waiting).
    #[error("the stream carrying the request is gone")]
    Disconnected,
    /// No answer within the timeout.
    #[error("no answer within the timeout")]
    Timeout,
    /// Stateless era: asking would make the call's `requestState` exceed its bound
    /// ([`ServerBuilder::request_state_max_size`](crate::ServerBuilder::request_state_max_size)).
    #[error("the requestState would take {size} bytes, over the {limit}-byte bound")]
    RequestStateTooLarge {
        /// The size the state would take.
        size: usize,
        /// The bound.
        limit: usize,
    },
}

/// A `sampling/createMessage` request: one user prompt, `maxTokens` (1024 unless set), any
/// other request params, and how long to wait (separate from the params).
///
/// ```
/// use std::time::Duration;
/// use serde_json::json;
/// use wymcp::session::Sampling;
///
/// let request = Sampling::prompt("Summarize this")
///     .max_tokens(500)
///     .param("temperature", json!(0.2))
///     .timeout(Duration::from_secs(5));
/// assert_eq!(request.params()["maxTokens"], 500);
/// assert_eq!(request.params()["messages"][0]["content"]["text"], "Summarize this");
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct Sampling {
    params: Map<String, Value>,
    timeout: Duration,
    key: Option<String>,
}

impl Sampling {
    /// A request whose only message is the user `prompt` as text.
    pub fn prompt(prompt: impl Into<String>) -> Self {
        let mut params = Map::new();
        params.insert(
            "messages".into(),
            json!([{"role": "user", "content": {"type": "text", "text": prompt.into()}}]),
        );
        params.insert("maxTokens".into(), json!(1024));
        Sampling {
            params,
            timeout: DEFAULT_SAMPLING_TIMEOUT,
            key: None,
        }
    }

    /// A request with these `messages` (MCP `SamplingMessage` objects).
    pub fn messages(messages: Vec<Value>) -> Self {
        let mut request = Sampling::prompt("");
        request
            .params
            .insert("messages".into(), Value::Array(messages));
        request
    }

    /// `maxTokens`.
    pub fn max_tokens(self, max: u32) -> Self {
        self.param("maxTokens", json!(max))
    }

    /// `systemPrompt`.
    pub fn system_prompt(self, text: impl Into<String>) -> Self {
        self.param("systemPrompt", Value::String(text.into()))
    }

    /// Any other request param (`temperature`, `modelPreferences`, `stopSequences`, ...).
    pub fn param(mut self, key: impl Into<String>, value: Value) -> Self {
        self.params.insert(key.into(), value);
        self
    }

    /// How long to wait for the answer (default [`DEFAULT_SAMPLING_TIMEOUT`]).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Stateless era: the request's key in `inputRequests` (unique within the call); without
    /// one, keys are given in order: `sampling-1`, `sampling-2`, …
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// The request's params.
    pub fn params(&self) -> &Map<String, Value> {
        &self.params
    }

    /// The key set with [`key`](Self::key).
    pub fn input_key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    pub(crate) fn into_parts(self) -> (Value, Duration) {
        (Value::Object(self.params), self.timeout)
    }
}

/// An `elicitation/create` request: form mode (a message and a flat `requestedSchema`,
/// 2025-06-18 and later) or URL mode (2025-11-25, the client must declare `elicitation.url`).
///
/// ```
/// use serde_json::json;
/// use wymcp::session::Elicitation;
///
/// let form = Elicitation::form("Which branch?", json!({
///     "type": "object",
///     "properties": {"branch": {"type": "string"}},
///     "required": ["branch"]
/// }));
/// assert_eq!(form.params()["message"], "Which branch?");
/// assert!(form.params().get("mode").is_none());
/// let url = Elicitation::url("Sign in", "https://example.com/login", "e-1");
/// assert_eq!(url.params()["mode"], "url");
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct Elicitation {
    params: Map<String, Value>,
    url_mode: bool,
    timeout: Duration,
    key: Option<String>,
}

impl Elicitation {
    /// Form mode: `message` and the `requestedSchema` the answer's `content` must follow.
    pub fn form(message: impl Into<String>, requested_schema: Value) -> Self {
        let mut params = Map::new();
        params.insert("message".into(), Value::String(message.into()));
        params.insert("requestedSchema".into(), requested_schema);
        Elicitation {
            params,
            url_mode: false,
            timeout: DEFAULT_ELICITATION_TIMEOUT,
            key: None,
        }
    }

    /// URL mode (2025-11-25): the client opens `url`; `elicitation_id` names the interaction.
    pub fn url(
        message: impl Into<String>,
        url: impl Into<String>,
        elicitation_id: impl Into<String>,
    ) -> Self {
        let mut params = Map::new();
        params.insert("mode".into(), json!("url"));
        params.insert("message".into(), Value::String(message.into()));
        params.insert("url".into(), Value::String(url.into()));
        params.insert("elicitationId".into(), Value::String(elicitation_id.into()));
        Elicitation {
            params,
            url_mode: true,
            timeout: DEFAULT_ELICITATION_TIMEOUT,
            key: None,
        }
    }

    /// How long to wait for the answer (default [`DEFAULT_ELICITATION_TIMEOUT`]).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Stateless era: the request's key in `inputRequests` (unique within the call); without
    /// one, keys are given in order: `elicitation-1`, `elicitation-2`, …
    ///
    /// ```
    /// use serde_json::json;
    /// use wymcp::session::Elicitation;
    ///
    /// let ask = Elicitation::form("What is your name?", json!({"type": "object"})).key("user_name");
    /// assert_eq!(ask.input_key(), Some("user_name"));
    /// ```
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// The request's params.
    pub fn params(&self) -> &Map<String, Value> {
        &self.params
    }

    /// The key set with [`key`](Self::key).
    pub fn input_key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    pub(crate) fn is_url_mode(&self) -> bool {
        self.url_mode
    }

    pub(crate) fn into_parts(self) -> (Value, Duration) {
        (Value::Object(self.params), self.timeout)
    }
}

/// A `roots/list` request: no params; a key (stateless era) and how long to wait (sessions).
///
/// ```
/// use wymcp::session::ListRoots;
///
/// let request = ListRoots::new().key("client_roots");
/// assert_eq!(request.input_key(), Some("client_roots"));
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct ListRoots {
    timeout: Duration,
    key: Option<String>,
}

impl Default for ListRoots {
    fn default() -> Self {
        ListRoots::new()
    }
}

impl ListRoots {
    /// A `roots/list` request.
    pub fn new() -> Self {
        ListRoots {
            timeout: DEFAULT_ROOTS_TIMEOUT,
            key: None,
        }
    }

    /// How long to wait for the answer (default [`DEFAULT_ROOTS_TIMEOUT`]).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Stateless era: the request's key in `inputRequests` (unique within the call); without
    /// one, keys are given in order: `roots-1`, `roots-2`, …
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// The key set with [`key`](Self::key).
    pub fn input_key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    pub(crate) fn into_parts(self) -> (Value, Duration) {
        (Value::Object(Map::new()), self.timeout)
    }
}
