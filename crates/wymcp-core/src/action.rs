//! The authoring side of an action schema: [`ActionSchema`] (a builder) and [`Actions`] (a
//! tool's actions, in declaration order).
//!
//! Both produce the action-schema JSON object of the contract's vocabulary (`description`,
//! `properties`, `required`, `required_one_of`, `defaults`, `notes`, `related`, `examples`,
//! `scopes`).
//! Whichever way an action was written (this builder, a JSON literal through
//! [`Actions::from_value`], or the compile-time macro), it is validated by the one chain in
//! [`validate`](crate::validate), so every rule holds identically.

use serde_json::{Map, Value};

/// The nine keys of the action-schema vocabulary, in the order messages list them.
pub const ACTION_SCHEMA_KEYS: [&str; 9] = [
    "description",
    "properties",
    "required",
    "required_one_of",
    "defaults",
    "notes",
    "related",
    "examples",
    "scopes",
];

/// One action's schema, written with a builder.
///
/// ```
/// use serde_json::json;
/// use wymcp_core::ActionSchema;
///
/// let get = ActionSchema::new("Get a task by id or by title")
///     .property("id", json!({"type": "integer"}))
///     .property("title", json!({"type": "string"}))
///     .required_one_of([["id"], ["title"]])
///     .notes("Titles are matched exactly.");
/// assert_eq!(get.to_value()["required_one_of"], json!([["id"], ["title"]]));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ActionSchema {
    schema: Map<String, Value>,
}

impl ActionSchema {
    /// An action with its one-line description and no properties yet.
    pub fn new(description: impl Into<String>) -> Self {
        let mut schema = Map::new();
        schema.insert("description".into(), Value::String(description.into()));
        schema.insert("properties".into(), Value::Object(Map::new()));
        ActionSchema { schema }
    }

    /// Declares one property of the action's `data`, with its JSON Schema.
    pub fn property(mut self, name: impl Into<String>, schema: Value) -> Self {
        if let Some(Value::Object(props)) = self.schema.get_mut("properties") {
            props.insert(name.into(), schema);
        }
        self
    }

    /// Names properties that must be present (AND semantics).
    pub fn required<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.schema.insert("required".into(), strings(names));
        self
    }

    /// Groups of properties of which at least one group must be fully present (OR of ANDs).
    pub fn required_one_of<G, I, S>(mut self, groups: G) -> Self
    where
        G: IntoIterator<Item = I>,
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let groups = groups.into_iter().map(strings).collect();
        self.schema
            .insert("required_one_of".into(), Value::Array(groups));
        self
    }

    /// A default for a property the caller omits.
    pub fn default_value(mut self, name: impl Into<String>, value: Value) -> Self {
        let defaults = self
            .schema
            .entry("defaults")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(defaults) = defaults {
            defaults.insert(name.into(), value);
        }
        self
    }

    /// Long-form notes for the help tool (newlines allowed).
    pub fn notes(mut self, notes: impl Into<String>) -> Self {
        self.schema
            .insert("notes".into(), Value::String(notes.into()));
        self
    }

    /// Related action names, surfaced by the help tool.
    pub fn related<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.schema.insert("related".into(), strings(names));
        self
    }

    /// The OAuth scopes a caller must hold, all of them, to call (and, by default, to see)
    /// this action: checked after authentication and before the gates read `data`.
    ///
    /// ```
    /// use serde_json::json;
    /// use wymcp_core::ActionSchema;
    ///
    /// let create = ActionSchema::new("Create a task")
    ///     .property("title", json!({"type": "string"}))
    ///     .scopes(["tasks:write"]);
    /// assert_eq!(create.to_value()["scopes"], json!(["tasks:write"]));
    /// ```
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.schema.insert("scopes".into(), strings(scopes));
        self
    }

    /// An example `data` payload, surfaced by the help tool.
    pub fn example(mut self, example: Value) -> Self {
        let examples = self
            .schema
            .entry("examples")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(list) = examples {
            list.push(example);
        }
        self
    }

    /// The action-schema JSON object this builder wrote.
    pub fn to_value(&self) -> Value {
        Value::Object(self.schema.clone())
    }

    /// The action-schema JSON object this builder wrote.
    pub fn into_value(self) -> Value {
        Value::Object(self.schema)
    }
}

fn strings<I, S>(names: I) -> Value
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    Value::Array(names.into_iter().map(|s| Value::String(s.into())).collect())
}

/// A tool's actions in declaration order, each an action-schema JSON object not yet validated.
///
/// ```
/// use serde_json::json;
/// use wymcp_core::{ActionSchema, Actions};
///
/// let built = Actions::new()
///     .action("list", ActionSchema::new("List tasks"));
/// let literal = Actions::from_value(json!({
///     "list": {"description": "List tasks", "properties": {}}
/// }));
/// assert_eq!(built.len(), 1);
/// assert_eq!(literal.len(), 1);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Actions {
    entries: Vec<(String, Value)>,
    malformed: Option<Value>,
}

impl Actions {
    /// No actions yet.
    pub fn new() -> Self {
        Actions::default()
    }

    /// Adds an action written with the builder.
    pub fn action(mut self, name: impl Into<String>, schema: ActionSchema) -> Self {
        self.entries.push((name.into(), schema.into_value()));
        self
    }

    /// Adds an action given as a JSON action-schema object.
    pub fn action_value(mut self, name: impl Into<String>, schema: Value) -> Self {
        self.entries.push((name.into(), schema));
        self
    }

    /// Actions from a JSON object keyed by action name. A value that is not an object is kept
    /// and refused at validation.
    pub fn from_value(value: Value) -> Self {
        match value {
            Value::Object(map) => Actions {
                entries: map.into_iter().collect(),
                malformed: None,
            },
            other => Actions {
                entries: Vec::new(),
                malformed: Some(other),
            },
        }
    }

    /// How many actions are declared.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no action is declared.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The value given to [`from_value`](Self::from_value) when it was not an object.
    pub fn malformed(&self) -> Option<&Value> {
        self.malformed.as_ref()
    }

    /// The declared (name, schema) pairs, in declaration order.
    pub fn entries(&self) -> &[(String, Value)] {
        &self.entries
    }
}
