//! Test fixtures shared by the definition and tools/list tests: an action tool whose every
//! describing callback returns what it was given.

#![allow(dead_code)] // each test file uses the setters it needs

use serde_json::{Map, Value, json};
use wymcp::{ActionResult, ActionTool, Actions, Context, Data, Reply};

/// An action tool whose every describing callback returns what it was given.
pub(crate) struct Spec {
    name: String,
    description: String,
    actions: Actions,
    title: Option<String>,
    annotations: Option<Map<String, Value>>,
    output: Option<Map<String, Value>>,
}

impl Spec {
    pub(crate) fn new(name: &str, actions: Actions) -> Self {
        Spec {
            name: name.to_owned(),
            description: format!("The {name} tool"),
            actions,
            title: None,
            annotations: None,
            output: None,
        }
    }
    pub(crate) fn description(mut self, description: &str) -> Self {
        self.description = description.to_owned();
        self
    }
    pub(crate) fn title(mut self, title: &str) -> Self {
        self.title = Some(title.to_owned());
        self
    }
    pub(crate) fn annotations(mut self, annotations: Value) -> Self {
        self.annotations = Some(object(annotations));
        self
    }
    pub(crate) fn output(mut self, schema: Value) -> Self {
        self.output = Some(object(schema));
        self
    }
}

impl ActionTool for Spec {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn actions(&self) -> Actions {
        self.actions.clone()
    }
    async fn run_action(&self, action: &str, _data: Data, _ctx: Context) -> ActionResult {
        Ok(Reply::new(json!({ "ran": action })))
    }
    fn title(&self) -> Option<String> {
        self.title.clone()
    }
    fn annotations(&self) -> Option<Map<String, Value>> {
        self.annotations.clone()
    }
    fn output_schema(&self) -> Option<Map<String, Value>> {
        self.output.clone()
    }
}

/// A JSON object literal as a map.
pub(crate) fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("expected a JSON object, got {other}"),
    }
}
