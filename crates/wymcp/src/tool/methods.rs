//! Action methods: what `#[wymcp::tool]` on an `impl` block needs at run time. The attribute
//! turns each `async fn` into an action and implements [`ActionTool`](crate::ActionTool) for
//! the type, so a tool written this way is served, gated and helped exactly like one whose
//! actions are literals.
//!
//! The return vocabulary is [`IntoActionResult`]; a method whose data is one struct takes it
//! as [`Params`].

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::tool::{ActionResult, CallError, CallOutput, CallResult, Data, Failure, Reply};

/// What an action method may return: anything that becomes a [`Reply`] or a [`Failure`].
///
/// * [`Reply`] and [`ActionResult`] (`Result<Reply, Failure>`): as a literal action's
///   `run_action` returns them, hint contexts included;
/// * [`serde_json::Value`]: the reply;
/// * `Result<T, E>` for any `T: Serialize` and any error `E` that converts into a
///   [`Failure`] (every `std::error::Error`, and `Failure` itself): `Ok` is serialized as the
///   reply, `Err` answered as the action's error.
///
/// ```
/// use serde::Serialize;
/// use wymcp::tool::{Failure, IntoActionResult};
///
/// #[derive(Serialize)]
/// struct Note { id: u32, text: String }
///
/// let found: Result<Note, Failure> = Ok(Note { id: 1, text: "milk".into() });
/// let reply = found.into_action_result().unwrap();
/// assert_eq!(reply.value()["text"], "milk");
///
/// let missing: Result<Note, Failure> = Err(Failure::msg("no note 9"));
/// assert_eq!(missing.into_action_result().unwrap_err().reason().to_string(), "no note 9");
/// ```
#[diagnostic::on_unimplemented(
    message = "an action method cannot return `{Self}`",
    label = "return a `T: Serialize` itself, a `wymcp::Reply`, a `serde_json::Value`, or a `Result<T, E>` whose `T` is `Serialize` and whose `E` converts into `wymcp::tool::Failure` (any std error, or `Failure::msg(\"...\")`)"
)]
pub trait IntoActionResult {
    /// The action's answer.
    fn into_action_result(self) -> ActionResult;
}

impl IntoActionResult for Reply {
    fn into_action_result(self) -> ActionResult {
        Ok(self)
    }
}

impl IntoActionResult for Value {
    fn into_action_result(self) -> ActionResult {
        Ok(Reply::new(self))
    }
}

impl<E: Into<Failure>> IntoActionResult for Result<Reply, E> {
    fn into_action_result(self) -> ActionResult {
        self.map_err(Into::into)
    }
}

impl<T: Serialize, E: Into<Failure>> IntoActionResult for Result<T, E> {
    fn into_action_result(self) -> ActionResult {
        match self {
            Ok(value) => Reply::json(&value),
            Err(error) => Err(error.into()),
        }
    }
}

/// What a `#[wymcp::plain_tool]` method may return: a [`CallResult`] as a
/// [`PlainTool`](crate::PlainTool)'s `run` returns it, or `Result<T, E>` for any
/// `T: Serialize` (served as JSON text and `structuredContent`) and any error `E` that converts
/// into a [`Failure`] (answered as a tool error with the error's text).
///
/// ```
/// use wymcp::tool::{Failure, IntoCallResult};
///
/// let counted: Result<serde_json::Value, Failure> = Ok(serde_json::json!({"count": 2}));
/// let output = counted.into_call_result().unwrap();
/// assert_eq!(output.content().len(), 1);
/// let refused: Result<serde_json::Value, Failure> = Err(Failure::msg("no notes"));
/// assert_eq!(refused.into_call_result().unwrap_err().to_string(), "no notes");
/// ```
#[diagnostic::on_unimplemented(
    message = "a plain tool's method cannot return `{Self}`",
    label = "return a `T: Serialize` itself, a `Result<T, E>` whose `T` is `Serialize` and whose `E` converts into `wymcp::tool::Failure`, or a `wymcp::CallResult`"
)]
pub trait IntoCallResult {
    /// The tool's answer.
    fn into_call_result(self) -> CallResult;
}

impl IntoCallResult for CallResult {
    fn into_call_result(self) -> CallResult {
        self
    }
}

impl<T: Serialize, E: Into<Failure>> IntoCallResult for Result<T, E> {
    fn into_call_result(self) -> CallResult {
        match self {
            Ok(value) => serde_json::to_value(value)
                .map(CallOutput::json)
                .map_err(|error| CallError::tool(error.to_string())),
            Err(error) => Err(CallError::tool(error.into().reason().to_string())),
        }
    }
}

/// An action method's data as one struct: write `Params(note): Params<AddNote>` as the
/// method's parameter, `AddNote` deriving `Deserialize` and `JsonSchema` (or
/// `#[wymcp::data]`), and the struct's fields are the action's properties, exactly as for a
/// variant of an [`ActionEnum`](crate::ActionEnum).
///
/// ```
/// use wymcp::tool::Params;
///
/// let Params(text) = Params("milk");
/// assert_eq!(text, "milk");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Params<T>(pub T);

/// What the attribute's generated code calls; not public API.
pub(crate) mod support {
    use super::*;
    use crate::tool::derived::{action_schema, denull, root_schema, tidy, tidy_output};
    use crate::tool::typed::support::extras;

    /// An action whose properties the attribute derived from the method's parameters. The
    /// schema was validated at compile time with `{}` standing in for each parameter whose
    /// type only schemars knows; `runtime` replaces the stand-ins (`build()` validates the
    /// result, like any action).
    pub fn method_action(schema_json: &str, runtime: Vec<(&str, Value)>) -> Value {
        let mut action = extras(schema_json);
        if let Some(Value::Object(properties)) = action.get_mut("properties") {
            for (name, schema) in runtime {
                properties.insert(name.to_owned(), schema);
            }
        }
        Value::Object(action)
    }

    /// The property schema of a parameter of type `T`: schemars' schema, inlined and tidied
    /// as for typed actions, with the attribute's keywords (`overlay_json`) written over it.
    pub fn property_schema<T: JsonSchema>(overlay_json: &str) -> Value {
        schema_of::<T>(overlay_json, tidy)
    }

    /// `T`'s schema inlined, its `null`s and numeric formats tidied by `tidy`, its title gone,
    /// `overlay_json`'s keywords written over it.
    fn schema_of<T: JsonSchema>(overlay_json: &str, tidy: fn(&mut Value, &mut bool)) -> Value {
        let mut schema = root_schema::<T>();
        denull(&mut schema);
        let mut refs = false;
        tidy(&mut schema, &mut refs);
        if let Value::Object(map) = &mut schema {
            map.remove("title");
            if refs || map.contains_key("$defs") {
                // Kept as is: the value gate cannot build a $ref it cannot resolve, so build()
                // refuses it, naming the action and the property.
                map.remove("$defs");
            }
            for (key, value) in extras(overlay_json) {
                map.insert(key, value);
            }
        }
        schema
    }

    /// An action whose data is the struct `T` (`Params<T>`).
    pub fn params_action<T: JsonSchema>(extras_json: &str, method: &str, type_name: &str) -> Value {
        let owner = format!("method `{method}`");
        Value::Object(action_schema(
            extras(extras_json),
            root_schema::<T>(),
            &owner,
            type_name,
        ))
    }

    /// The data of a call the gates admitted, as a map the parameters are taken from.
    pub fn data_map(data: Data) -> Map<String, Value> {
        match data.into_value() {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    /// Takes the parameter `name` out of admitted data (absent is `null`: an `Option` is
    /// `None`). A value the parameter's type refuses is a [`Failure`], never a panic.
    pub fn arg<T: DeserializeOwned>(
        data: &mut Map<String, Value>,
        name: &str,
    ) -> Result<T, Failure> {
        let value = data.remove(name).unwrap_or(Value::Null);
        T::deserialize(value).map_err(|error| {
            mismatch(name, &error);
            Failure::new(error)
        })
    }

    /// The data of a `Params<T>` method.
    pub fn params<T: DeserializeOwned>(data: Map<String, Value>) -> Result<Params<T>, Failure> {
        T::deserialize(Value::Object(data))
            .map(Params)
            .map_err(|error| {
                mismatch("data", &error);
                Failure::new(error)
            })
    }

    /// The gates admitted data the parameter's type refuses: the schema and the type disagree
    /// (a custom `Deserialize`, a schemars attribute).
    fn mismatch(name: &str, error: &serde_json::Error) {
        tracing::error!(
            name: "wymcp.methods.mismatch",
            parameter = name,
            error = %error,
            "admitted data did not deserialize into the action method's parameter"
        );
    }

    /// A plain tool's input schema: the one validated at compile time, with the schemas of the
    /// runtime-typed properties in place of their `{}` stand-ins.
    pub fn plain_input_schema(
        schema_json: &str,
        runtime: Vec<(&str, Value)>,
    ) -> Map<String, Value> {
        match method_action(schema_json, runtime) {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    /// A plain tool's output schema: `T`'s, inlined, when it describes an object (MCP's
    /// `structuredContent` is one); none for any other `T` (a list, a string), whose answers
    /// are served as text only.
    pub fn plain_output_schema<T: JsonSchema>() -> Option<Map<String, Value>> {
        // Tidied as an output: the values come from `T`, so its integer widths say nothing.
        match schema_of::<T>("{}", tidy_output) {
            Value::Object(map) if map.get("type") == Some(&Value::from("object")) => Some(map),
            _ => None,
        }
    }

    /// Takes a plain tool's argument `name` (absent is `null`: an `Option` is `None`).
    pub fn plain_arg<T: DeserializeOwned>(
        arguments: &mut Map<String, Value>,
        name: &str,
    ) -> Result<T, CallError> {
        arg(arguments, name).map_err(|failure| CallError::tool(failure.reason().to_string()))
    }

    /// The answer of a plain tool's method.
    pub fn plain_answer<R: IntoCallResult>(result: R) -> CallResult {
        result.into_call_result()
    }

    /// The answer of an action method, whatever [`IntoActionResult`] it returned.
    pub fn answer<R: IntoActionResult>(result: R) -> ActionResult {
        result.into_action_result()
    }
}
