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

    /// A handle on this server that does not keep it alive: for what the server itself holds
    /// (a running task's input requests, kept in [`Tasks::running`]), so that the server and
    /// its running tasks do not keep each other alive when both are dropped unfinished, as
    /// when the runtime running the tasks ends first (issue 48: the `task_states` fuzz
    /// target, building a server per run, leaked each one).
    fn downgrade(&self) -> WeakHost;
}

/// An owned [`TaskHost`].
pub(crate) type Host = Arc<dyn TaskHost>;

/// A [`TaskHost`] held without keeping it alive ([`TaskHost::downgrade`]).
pub(crate) struct WeakHost(Box<dyn Fn() -> Option<Host> + Send + Sync>);

impl WeakHost {
    /// A handle that `upgrade` turns into the server while anything else holds it.
    pub(crate) fn new(upgrade: impl Fn() -> Option<Host> + Send + Sync + 'static) -> Self {
        WeakHost(Box::new(upgrade))
    }

    /// The server, unless it was dropped.
    pub(crate) fn upgrade(&self) -> Option<Host> {
        (self.0)()
    }
}
