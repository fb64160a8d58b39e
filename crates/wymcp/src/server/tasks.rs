//! The tasks extension as the server serves it: the server as the tasks' host ([`TaskHost`]:
//! its tasks, its per-principal state, a task's `tools/call`), and the extension registered
//! in its [`Extensions`](super::extension::Extensions): the `tasks/*` methods, the
//! `tools/call` that answers a task handle, and the `taskIds` a listen stream watches.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{Map, Value, json};

use super::Server;
use super::extension::{Answered, Answering, Extension, WatchKey};
use crate::context::Context;
use crate::mrtr::Round;
use crate::protocol::{Method, RpcError};
use crate::task::hand_off::HandedOff;
use crate::task::host::{Host, TaskHost, WeakHost};
use crate::task::serve::{Route, declares_tasks, missing_extension, route_call, run_task_call};
use crate::task::{TASKS_EXTENSION, Tasks};
use crate::tool::CallToolResult;
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

    fn downgrade(&self) -> WeakHost {
        let inner = Arc::downgrade(&self.inner);
        WeakHost::new(move || {
            inner
                .upgrade()
                .map(|inner| Arc::new(Server { inner }) as Host)
        })
    }
}

/// The tasks extension (`io.modelcontextprotocol/tasks`), registered when a tool runs as a
/// task.
#[derive(Debug)]
pub(crate) struct TasksExtension;

impl Extension for TasksExtension {
    fn id(&self) -> &'static str {
        TASKS_EXTENSION
    }

    fn declaration(&self) -> Value {
        json!({})
    }

    fn methods(&self) -> &'static [Method] {
        &[Method::TasksGet, Method::TasksUpdate, Method::TasksCancel]
    }

    fn serve<'a>(
        &'a self,
        server: &'a Server,
        method: Method,
        params: Option<Value>,
        ctx: Context,
    ) -> BoxFuture<'a, Result<Value, RpcError>> {
        Box::pin(async move { crate::task::serve::method(server, method, params, &ctx).await })
    }

    fn take_call<'a>(
        &'a self,
        server: &'a Server,
        params: Option<Value>,
        ctx: &'a Context,
        round: Option<&'a Round>,
    ) -> Result<Answering<'a>, Option<Value>> {
        let call = match route_call(server, params, ctx) {
            Route::Sync(params) => return Err(params),
            Route::Task(call) => call,
        };
        Ok(Box::pin(async move {
            match run_task_call(server, call, ctx, round).await {
                HandedOff::Complete(result) => result.map(Answered::Call),
                HandedOff::InputRequired(value) => Ok(Answered::Value(value)),
                HandedOff::Task(handle) => handle.map(Answered::Value),
            }
        }))
    }

    fn watch_key(&self, limits: &crate::Limits) -> Option<WatchKey> {
        Some(WatchKey {
            key: "taskIds",
            what: "task ids",
            max: limits.max_listen_task_ids,
            setting: "Limits::max_listen_task_ids",
        })
    }

    /// The tasks the caller may see, each once; a client that does not declare the
    /// extension is refused `-32021`, as the extension says.
    fn watchable<'a>(
        &'a self,
        server: &'a Server,
        ids: Vec<String>,
        ctx: &'a Context,
    ) -> BoxFuture<'a, Result<Vec<String>, RpcError>> {
        Box::pin(async move {
            if !declares_tasks(ctx) {
                return Err(missing_extension(ctx));
            }
            let principal = crate::task::serve::owner(ctx);
            let tasks = &server.features().tasks;
            let mut visible: Vec<String> = Vec::new();
            for id in ids {
                let found = tasks.find(&id, principal.as_deref(), Some(server)).await;
                if found.is_ok() && !visible.contains(&id) {
                    visible.push(id);
                }
            }
            Ok(visible)
        })
    }

    /// `notifications/tasks`: the task as `tasks/get` answers the stream's opener at this moment (a
    /// task gone, expired, is not announced).
    fn watched<'a>(
        &'a self,
        server: &'a Server,
        id: &'a str,
        opener: &'a Context,
    ) -> BoxFuture<'a, Option<(&'static str, Map<String, Value>)>> {
        Box::pin(async move {
            let tasks = &server.features().tasks;
            let owner = crate::task::serve::owner(opener);
            match tasks.detailed_for(server, id, owner.as_deref()).await {
                Ok(Value::Object(params)) => Some(("notifications/tasks", params)),
                _ => None,
            }
        })
    }
}
