//! One tag of the document as an action tool.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use wymcp::tool::Failure;
use wymcp::{ActionResult, ActionTool, Actions, Context, Data};

use crate::call::{Api, reply_schema};
use crate::operation::Operation;

/// The operations of one tag (or the untagged ones) as one action-dispatched tool: one action
/// per operation, each call checked by wymcp's gates against the operation's schema before
/// the request is sent. Made by [`OpenApi`](crate::OpenApi); register it with
/// [`ServerBuilder::tool`](wymcp::ServerBuilder::tool).
#[derive(Debug)]
pub struct OpenApiTool {
    name: String,
    description: String,
    operations: Vec<Operation>,
    api: Arc<Api>,
}

impl OpenApiTool {
    pub(crate) fn new(
        name: String,
        description: String,
        operations: Vec<Operation>,
        api: Arc<Api>,
    ) -> Self {
        Self {
            name,
            description,
            operations,
            api,
        }
    }

    pub(crate) fn has_action(&self, action: &str) -> bool {
        self.operations.iter().any(|o| o.action == action)
    }

    pub(crate) fn push(&mut self, operation: Operation) {
        self.operations.push(operation);
    }
}

impl ActionTool for OpenApiTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn actions(&self) -> Actions {
        self.operations.iter().fold(Actions::new(), |actions, o| {
            actions.action_value(o.action.clone(), o.schema.clone())
        })
    }

    async fn run_action(&self, action: &str, data: Data, ctx: Context) -> ActionResult {
        match self.operations.iter().find(|o| o.action == action) {
            Some(operation) => {
                self.api
                    .call(operation, data.as_map(), ctx.identity())
                    .await
            }
            None => Err(Failure::msg(format!("no operation {action}"))),
        }
    }

    /// `{status, body}` (JSON answers) or `{status, content_type, text}`: the same for every
    /// action, so every real answer validates (the operations' own response schemas are in
    /// no way checked: an API that answers beside its document still answers).
    fn output_schema(&self) -> Option<Map<String, Value>> {
        Some(reply_schema())
    }

    /// MCP annotations are per tool: `readOnlyHint` when every operation is GET or HEAD,
    /// else `destructiveHint` when one is DELETE; `openWorldHint` always (a remote API).
    fn annotations(&self) -> Option<Map<String, Value>> {
        let safe = |o: &Operation| matches!(o.method, reqwest::Method::GET | reqwest::Method::HEAD);
        let annotations = if self.operations.iter().all(safe) {
            json!({"readOnlyHint": true, "openWorldHint": true})
        } else {
            let destructive = self
                .operations
                .iter()
                .any(|o| o.method == reqwest::Method::DELETE);
            json!({"readOnlyHint": false, "destructiveHint": destructive, "openWorldHint": true})
        };
        annotations.as_object().cloned()
    }
}
