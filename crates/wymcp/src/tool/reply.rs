//! The return vocabulary of an action: [`Reply`] (ok, ok with hint context) and [`Failure`]
//! (error, error with hint context), and the action's input, [`Data`].

use std::error::Error as StdError;
use std::fmt;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::protocol::RpcError;

/// What an action returns: `Ok(Reply)` or `Err(Failure)`.
pub type ActionResult = Result<Reply, Failure>;

/// A successful answer: the response sent as JSON, and optionally a hint context the framework
/// hands to [`ActionTool::hints`](crate::ActionTool::hints).
///
/// ```
/// use serde_json::json;
/// use wymcp::Reply;
///
/// let reply = Reply::new(json!({"id": 42, "title": "Write docs"}))
///     .with_hint_context(json!({"id": 42}));
/// assert_eq!(reply.value()["id"], 42);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    value: Value,
    hint_context: Option<Value>,
}

impl Reply {
    /// A reply carrying `value` (`{ok, response}`).
    pub fn new(value: impl Into<Value>) -> Self {
        Reply {
            value: value.into(),
            hint_context: None,
        }
    }

    /// A reply carrying any serializable value.
    pub fn json<T: Serialize + ?Sized>(value: &T) -> Result<Self, Failure> {
        Ok(Reply::new(serde_json::to_value(value)?))
    }

    /// Asks for hints: the framework calls `hints(action, hint_context)` and adds them
    /// (`{ok, response, hint_context}`).
    pub fn with_hint_context(mut self, hint_context: impl Into<Value>) -> Self {
        self.hint_context = Some(hint_context.into());
        self
    }

    /// The response.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The hint context, when hints were asked for.
    pub fn hint_context(&self) -> Option<&Value> {
        self.hint_context.as_ref()
    }

    pub(crate) fn into_parts(self) -> (Value, Option<Value>) {
        (self.value, self.hint_context)
    }
}

/// Why an action failed: any error type, kept so that
/// [`ActionTool::handle_error`](crate::ActionTool::handle_error) can downcast it.
pub struct ActionError(Box<dyn StdError + Send + Sync>);

impl ActionError {
    /// An error carrying only a message.
    pub fn msg(message: impl fmt::Display) -> Self {
        ActionError(message.to_string().into())
    }

    /// The error, when it is an `E`.
    pub fn downcast_ref<E: StdError + 'static>(&self) -> Option<&E> {
        // Downcast, justified: this is the user's own error, erased so an action may fail
        // with any type; reading it back is the point of this method.
        self.0.downcast_ref::<E>()
    }

    /// The underlying error.
    pub fn inner(&self) -> &(dyn StdError + Send + Sync + 'static) {
        &*self.0
    }
}

impl fmt::Debug for ActionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for ActionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl<E: StdError + Send + Sync + 'static> From<E> for ActionError {
    fn from(error: E) -> Self {
        ActionError(Box::new(error))
    }
}

/// A failed answer: the reason (rendered by `handle_error`) and optionally a hint context.
///
/// Any error converts with `?`; [`Failure::msg`] makes one from text.
///
/// ```
/// use serde_json::json;
/// use wymcp::tool::Failure;
///
/// let failure = Failure::msg("Task 99 not found").with_hint_context(json!({"id": 99}));
/// assert_eq!(failure.reason().to_string(), "Task 99 not found");
/// ```
#[derive(Debug)]
pub struct Failure {
    reason: ActionError,
    hint_context: Option<Value>,
    /// The JSON-RPC error the request fails with, in place of an `isError` result.
    protocol: Option<Box<RpcError>>,
}

impl Failure {
    /// A failure with any reason (`{error, reason}`).
    pub fn new(reason: impl Into<ActionError>) -> Self {
        Failure {
            reason: reason.into(),
            hint_context: None,
            protocol: None,
        }
    }

    /// The action fails with the JSON-RPC error `error`, not with a tool result: as
    /// [`CallError::protocol`](crate::CallError::protocol) for a plain tool (a plain
    /// request is answered with it; a call running as a task ends the task `failed` with it).
    ///
    /// ```
    /// use wymcp::RpcError;
    /// use wymcp::tool::Failure;
    ///
    /// let failure = Failure::protocol(RpcError::new(-32050, "Quota exhausted", None));
    /// assert_eq!(failure.reason().to_string(), "Quota exhausted");
    /// ```
    pub fn protocol(error: RpcError) -> Self {
        Failure {
            reason: ActionError::msg(error.message()),
            hint_context: None,
            protocol: Some(Box::new(error)),
        }
    }

    /// A failure whose reason is only a message.
    pub fn msg(message: impl fmt::Display) -> Self {
        Failure::new(ActionError::msg(message))
    }

    /// Asks for hints and context in the error body (`{error, reason, hint_context}`).
    pub fn with_hint_context(mut self, hint_context: impl Into<Value>) -> Self {
        self.hint_context = Some(hint_context.into());
        self
    }

    /// The reason.
    pub fn reason(&self) -> &ActionError {
        &self.reason
    }

    /// The hint context, when hints were asked for.
    pub fn hint_context(&self) -> Option<&Value> {
        self.hint_context.as_ref()
    }

    pub(crate) fn into_parts(self) -> (ActionError, Option<Value>) {
        (self.reason, self.hint_context)
    }

    /// The JSON-RPC error, when made with [`Failure::protocol`]; else the failure itself.
    pub(crate) fn into_protocol(self) -> Result<RpcError, Self> {
        match self.protocol {
            Some(error) => Ok(*error),
            None => Err(self),
        }
    }
}

impl<E: StdError + Send + Sync + 'static> From<E> for Failure {
    fn from(error: E) -> Self {
        Failure::new(error)
    }
}

/// An action's `data`: a JSON object that passed every gate, defaults applied.
///
/// ```
/// use serde::Deserialize;
/// use serde_json::json;
/// use wymcp::Data;
///
/// #[derive(Deserialize)]
/// struct Create { title: String, priority: Option<u8> }
///
/// let data = Data::from_value(json!({"title": "Write docs"})).unwrap();
/// let input: Create = data.parse().unwrap();
/// assert_eq!(input.title, "Write docs");
/// assert_eq!(data["title"], "Write docs");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Data(Value);

impl Data {
    /// Data from a JSON object; `None` for anything else.
    pub fn from_value(value: Value) -> Option<Self> {
        value.is_object().then_some(Data(value))
    }

    pub(crate) fn from_map(map: Map<String, Value>) -> Self {
        Data(Value::Object(map))
    }

    /// Deserializes the data into your own type.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, DataError> {
        T::deserialize(&self.0).map_err(DataError)
    }

    /// The data as a JSON object.
    pub fn as_map(&self) -> &Map<String, Value> {
        match &self.0 {
            Value::Object(map) => map,
            _ => unreachable!("Data holds an object by construction"),
        }
    }

    /// The data as a JSON value (always an object).
    pub fn into_value(self) -> Value {
        self.0
    }
}

impl std::ops::Deref for Data {
    type Target = Map<String, Value>;
    fn deref(&self) -> &Self::Target {
        self.as_map()
    }
}

/// The data did not deserialize into the requested type.
#[derive(Debug, thiserror::Error)]
#[error("data does not match the expected shape: {0}")]
pub struct DataError(#[source] serde_json::Error);
