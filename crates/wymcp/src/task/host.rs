//! [`TaskHost`]: what the tasks extension needs of the server that serves it. The server
//! holds its tasks and implements this; the tasks reach the server only through it, so
//! `task` stays below `server` in the crate's import graph (docs/architecture.md).

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::Tasks;
use crate::context::Context;
use crate::protocol::RpcError;
use crate::tool::CallToolResult;
use crate::user_state::UserStateStore;

/// The server a task runs on, as the tasks extension sees it.
pub(crate) trait TaskHost: Send + Sync + 'static {
    /// The server's tasks: their store, settings, and the calls running on this node.
    fn tasks(&self) -> &Tasks;

    /// The server's per-principal state, when it has one (a rerun's context carries it).
    fn user_state(&self) -> Option<&Arc<dyn UserStateStore>>;

    /// A `tools/call` request's `params` served under `ctx`, as a future that owns what it
    /// needs: a task's call, run or run again.
    fn call(
        &self,
        params: Option<Value>,
        ctx: Context,
    ) -> BoxFuture<'static, Result<CallToolResult, RpcError>>;

    /// An owned handle on this server, for what outlives the request (a task's run).
    fn to_host(&self) -> Host;
}

/// An owned [`TaskHost`].
pub(crate) type Host = Arc<dyn TaskHost>;
