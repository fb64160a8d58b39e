//! [`Hint`]: a follow-up call a tool suggests after answering.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::{ConfigurationError, Problem};

/// A suggested follow-up call: which tool and action, why, and optionally an example `data`.
///
/// Serialized flat, with `example` only when there is one.
///
/// ```
/// use serde_json::json;
/// use wymcp_core::Hint;
///
/// let hint = Hint::new("tasks", "get", "View the task you created")
///     .with_example(json!({"id": 42}).as_object().unwrap().clone());
/// assert_eq!(
///     serde_json::to_value(&hint).unwrap(),
///     json!({"tool": "tasks", "action": "get", "description": "View the task you created",
///            "example": {"id": 42}})
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hint {
    tool: String,
    action: String,
    description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    example: Option<Map<String, Value>>,
}

impl Hint {
    /// A hint naming a tool, an action and why to call it.
    pub fn new(
        tool: impl Into<String>,
        action: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        Hint {
            tool: tool.into(),
            action: action.into(),
            description: description.into(),
            example: None,
        }
    }

    /// Adds an example `data` payload.
    pub fn with_example(mut self, example: Map<String, Value>) -> Self {
        self.example = Some(example);
        self
    }

    /// The hint as an answer may carry it, by the rule refusals quote a caller's input by
    /// ([`crate::bound`]): a hint is caller-influenced text (a tool builds it from what it was
    /// sent). The tool and action names through [`echo`](crate::bound::echo), the description
    /// cut to `max_description` characters (as an application's error text is), the example
    /// through [`echo_json`](crate::bound::echo_json).
    ///
    /// ```
    /// use serde_json::json;
    /// use wymcp_core::Hint;
    ///
    /// let huge = "p".repeat(4_000_000);
    /// let hint = Hint::new("projects", "create", format!("Create {huge}"))
    ///     .with_example(json!({"name": huge}).as_object().unwrap().clone());
    /// let bounded = serde_json::to_value(hint.bounded(100)).unwrap();
    /// assert!(bounded.to_string().len() < 1_000);
    /// assert!(bounded["example"]["name"].as_str().unwrap().ends_with("…(+3999800 chars)"));
    /// ```
    #[must_use]
    pub fn bounded(&self, max_description: usize) -> Hint {
        use crate::bound::{echo, echo_members, echo_within};
        let example = self
            .example
            .as_ref()
            .map(|example| echo_members(example, 0));
        Hint {
            tool: echo(&self.tool),
            action: echo(&self.action),
            description: echo_within(&self.description, max_description),
            example,
        }
    }

    /// A hint from a JSON object with `tool`, `action`, `description` (strings) and an optional
    /// `example` (object); a missing field, a wrongly typed one or an unknown one is refused.
    ///
    /// ```
    /// use serde_json::json;
    /// use wymcp_core::Hint;
    ///
    /// let err = Hint::from_value(&json!({"tool": "t", "action": "get"})).unwrap_err();
    /// assert!(err.to_string().contains("description"));
    /// ```
    pub fn from_value(value: &Value) -> Result<Self, ConfigurationError> {
        let refuse = |text: String| ConfigurationError::new(Problem::Hint(text));
        let Some(map) = value.as_object() else {
            return Err(refuse(format!("a hint must be an object, got {value}")));
        };
        let unknown: Vec<&String> = map
            .keys()
            .filter(|k| !matches!(k.as_str(), "tool" | "action" | "description" | "example"))
            .collect();
        if !unknown.is_empty() {
            return Err(refuse(format!(
                "Hint has unknown field(s) {unknown:?}; known fields: tool, action, description, example"
            )));
        }
        let field = |name: &str| -> Result<String, ConfigurationError> {
            match map.get(name) {
                None => Err(refuse(format!(
                    "Hint is missing the required field :{name}"
                ))),
                Some(Value::String(s)) => Ok(s.clone()),
                Some(other) => Err(refuse(format!(
                    "Hint :{name} must be a string, got: {}",
                    crate::bound::echo_value(other)
                ))),
            }
        };
        let mut hint = Hint::new(field("tool")?, field("action")?, field("description")?);
        match map.get("example") {
            None | Some(Value::Null) => {}
            Some(Value::Object(example)) => hint.example = Some(example.clone()),
            Some(other) => {
                return Err(refuse(format!(
                    "Hint :example must be an object, got: {}",
                    crate::bound::echo_value(other)
                )));
            }
        }
        Ok(hint)
    }

    /// The tool to call.
    pub fn tool(&self) -> &str {
        &self.tool
    }
    /// The action to call.
    pub fn action(&self) -> &str {
        &self.action
    }
    /// Why to call it.
    pub fn description(&self) -> &str {
        &self.description
    }
    /// An example `data` payload.
    pub fn example(&self) -> Option<&Map<String, Value>> {
        self.example.as_ref()
    }
}
