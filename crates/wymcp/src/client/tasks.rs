//! The tasks extension (`io.modelcontextprotocol/tasks`, MCP 2026-07-28) from the client's
//! side: a `tools/call` that declares the extension, so the server may answer a task handle
//! (`resultType: "task"`) instead of the result, and `tasks/get`, `tasks/update` and
//! `tasks/cancel` of such a task. Answers are returned as the server sent them (the wire
//! shapes are in `docs/tasks.md`).

use serde_json::{Map, Value, json};

use super::{Client, ClientError};
use crate::protocol::extensions::TASKS_EXTENSION;
use crate::protocol::stateless::CLIENT_CAPABILITIES_KEY;

impl Client {
    /// Calls the tool `name` with `arguments`, declaring the tasks extension in this one
    /// request's client capabilities, with `_meta.progressToken` set to `token`: the result
    /// as the server sent it, a tool result (`resultType: "complete"`) or a task handle
    /// (`resultType: "task"`, `taskId`, `status`, `ttlMs`, `pollIntervalMs`, ...) to follow
    /// with [`get_task`](Self::get_task). Input the server asks before it answers (multi
    /// round-trip rounds) is answered by the handlers, as for
    /// [`call_tool`](Self::call_tool).
    ///
    /// The extension is declared in the stateless era (MCP 2026-07-28) only; in a session
    /// the call is a plain one.
    ///
    /// ```no_run
    /// # async fn run(client: wymcp::client::Client) -> Result<(), wymcp::client::ClientError> {
    /// let answer = client.call_tool_with_tasks("report", serde_json::json!({}), "report-1").await?;
    /// if answer["resultType"] == "task" {
    ///     let id = answer["taskId"].as_str().unwrap_or_default();
    ///     let task = client.get_task(id).await?;
    ///     println!("{}", task["status"]);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn call_tool_with_tasks(
        &self,
        name: &str,
        arguments: Value,
        token: &str,
    ) -> Result<Value, ClientError> {
        let mut params = Map::new();
        params.insert("name".to_owned(), json!(name));
        if arguments.is_object() {
            params.insert("arguments".to_owned(), arguments);
        }
        params.insert(
            "_meta".to_owned(),
            json!({
                "progressToken": token,
                CLIENT_CAPABILITIES_KEY: self.capabilities_with_tasks(),
            }),
        );
        self.perform("tools/call", params, Some(name)).await
    }

    /// `tasks/get` of the task `id`: its status and, once it ended, its `result` or `error`;
    /// while it waits for input, its `inputRequests`.
    pub async fn get_task(&self, id: &str) -> Result<Value, ClientError> {
        self.task_request("tasks/get", id, Map::new()).await
    }

    /// `tasks/update` of the task `id`: `responses` answer its `inputRequests`, by key.
    pub async fn update_task(
        &self,
        id: &str,
        responses: Map<String, Value>,
    ) -> Result<Value, ClientError> {
        let mut params = Map::new();
        params.insert("inputResponses".to_owned(), Value::Object(responses));
        self.task_request("tasks/update", id, params).await
    }

    /// `tasks/cancel` of the task `id`.
    pub async fn cancel_task(&self, id: &str) -> Result<Value, ClientError> {
        self.task_request("tasks/cancel", id, Map::new()).await
    }

    /// One `tasks/*` request of the task `id` (its `Mcp-Name`), declaring the extension.
    async fn task_request(
        &self,
        method: &str,
        id: &str,
        mut params: Map<String, Value>,
    ) -> Result<Value, ClientError> {
        params.insert("taskId".to_owned(), json!(id));
        params.insert(
            "_meta".to_owned(),
            json!({CLIENT_CAPABILITIES_KEY: self.capabilities_with_tasks()}),
        );
        self.perform(method, params, Some(id)).await
    }

    /// The client's capabilities (its handlers'), with the tasks extension beside them.
    fn capabilities_with_tasks(&self) -> Value {
        let mut capabilities = self.shared.link.settings().capabilities.clone();
        let own = json!({"extensions": {TASKS_EXTENSION: {}}});
        if let Value::Object(own) = own {
            super::era::extend(&mut capabilities, own);
        }
        capabilities
    }
}
