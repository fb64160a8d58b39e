//! The server as the tasks extension's host ([`TaskHost`]): its tasks, its per-principal
//! state, and a task's `tools/call`.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::Server;
use crate::context::Context;
use crate::dispatch::CallToolResult;
use crate::protocol::RpcError;
use crate::task::Tasks;
use crate::task::host::{Host, TaskHost};
use crate::user_state::UserStateStore;

impl TaskHost for Server {
    fn tasks(&self) -> &Tasks {
        &self.features().tasks
    }

    fn user_state(&self) -> Option<&Arc<dyn UserStateStore>> {
        self.features().user_state.as_ref()
    }

    fn call(
        &self,
        params: Option<Value>,
        ctx: Context,
    ) -> BoxFuture<'static, Result<CallToolResult, RpcError>> {
        let server = self.clone();
        Box::pin(async move { server.tools_call(params, ctx).await })
    }

    fn to_host(&self) -> Host {
        Arc::new(self.clone())
    }
}
