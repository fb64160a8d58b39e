//! Serving the tasks extension: `tools/call` answered with a task handle, the task's call
//! run on, and `tasks/get`, `tasks/update`, `tasks/cancel`.

use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::clock::{now_ms, rfc3339};
use super::{TASKS_EXTENSION, TaskRecord, TaskStatus, TaskSupport, Tasks};
use crate::dispatch::CallToolResult;
use crate::protocol::{Method, ProtocolVersion, RpcError};
use crate::{Context, Server};

/// The most task calls one node runs at once; one more is refused, naming the limit.
pub(crate) const MAX_RUNNING_TASKS: usize = 1_000;
/// How long a cancelled task's call may take to notice its cancellation before it is dropped.
const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// What `tools/call` does with a call, given the tool's task support and the request.
pub(crate) enum Route {
    /// Run it and answer its result (the params handed back).
    Sync(Option<Value>),
    /// Answered already: a task handle, or a refusal.
    Answered(Result<Value, RpcError>),
}

/// Routes a `tools/call` of the stateless era.
pub(crate) fn route_call(server: &Server, params: Option<Value>, ctx: &Context) -> Route {
    let tasks = &server.features().tasks;
    let name = params
        .as_ref()
        .and_then(|p| p.get("name"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let Some(name) = name else {
        return Route::Sync(params);
    };
    match (tasks.support_of(&name), declares_tasks(ctx)) {
        (TaskSupport::Required, false) => Route::Answered(Err(missing_extension(ctx))),
        (TaskSupport::Optional | TaskSupport::Required, true) => {
            Route::Answered(start(server, name, params, ctx))
        }
        _ => Route::Sync(params),
    }
}

/// Serves `tasks/get`, `tasks/update` and `tasks/cancel`.
pub(crate) fn method(
    server: &Server,
    method: Method,
    params: Option<Value>,
    ctx: &Context,
) -> Result<Value, RpcError> {
    if !declares_tasks(ctx) {
        return Err(missing_extension(ctx));
    }
    let params = crate::paging::params_object(params)?;
    let id = match params.get("taskId") {
        Some(Value::String(id)) => id.as_str(),
        _ => {
            return Err(RpcError::invalid_params_reason(
                "Missing or invalid 'taskId' in params: expected a string",
            ));
        }
    };
    let tasks = &server.features().tasks;
    let principal = principal(ctx);
    match method {
        Method::TasksGet => tasks
            .find(id, principal.as_deref())
            .map(|t| detailed(tasks, &t)),
        Method::TasksCancel => tasks.cancel(id, principal.as_deref()).map(|()| json!({})),
        // No task of this server waits for input (a task's call cannot ask the client yet):
        // an update of a task that exists is acknowledged.
        _ => tasks.find(id, principal.as_deref()).map(|_| json!({})),
    }
}

/// Whether the request declares the tasks extension in its capabilities.
fn declares_tasks(ctx: &Context) -> bool {
    ctx.client_capabilities()
        .is_some_and(|caps| caps["extensions"][TASKS_EXTENSION].is_object())
}

/// The refusal of a request that needs the extension it did not declare: recorded on the
/// context, so the request is answered 400 `-32021` like any missing capability.
fn missing_extension(ctx: &Context) -> RpcError {
    ctx.require_extension(TASKS_EXTENSION);
    crate::protocol::stateless::missing_capability(json!({"extensions": {TASKS_EXTENSION: {}}}))
}

/// The subject of the request's identity, if the transport authenticated one.
fn principal(ctx: &Context) -> Option<String> {
    ctx.assigns()
        .get("identity")
        .and_then(|identity| identity["subject"].as_str())
        .map(str::to_owned)
}

fn internal(message: impl Into<String>) -> RpcError {
    RpcError::new(RpcError::INTERNAL_ERROR, message, None)
}

/// Creates the task, starts its call, and answers the `CreateTaskResult`.
fn start(
    server: &Server,
    tool: String,
    params: Option<Value>,
    ctx: &Context,
) -> Result<Value, RpcError> {
    let tasks = &server.features().tasks;
    let now = now_ms();
    let _ = tasks.store.remove_expired(now);
    let token = CancellationToken::new();
    let id = format!("{:032x}", rand::random::<u128>());
    {
        let mut running = tasks.lock_running();
        if running.len() >= MAX_RUNNING_TASKS {
            return Err(RpcError::new(
                RpcError::INTERNAL_ERROR,
                format!("Too many tasks running: at most {MAX_RUNNING_TASKS} run at once"),
                None,
            ));
        }
        running.insert(id.clone(), token.clone());
    }
    let record = TaskRecord {
        id: id.clone(),
        principal: principal(ctx),
        tool,
        status: TaskStatus::Working,
        created_at_ms: now,
        last_updated_at_ms: now,
        ttl_ms: u64::try_from(tasks.ttl.as_millis()).unwrap_or(u64::MAX),
        result: None,
        error: None,
    };
    tasks
        .store
        .put(record.clone())
        .map_err(|e| internal(e.to_string()))?;
    let mut handle = envelope(tasks, &record);
    handle.insert("resultType".into(), "task".into());
    spawn(
        server.clone(),
        id,
        params,
        call_context(ctx, token.clone()),
        token,
    );
    Ok(Value::Object(handle))
}

/// The context the task's call runs with: the request's revision, capabilities and identity,
/// and the task's own cancellation.
fn call_context(ctx: &Context, token: CancellationToken) -> Context {
    let mut builder = Context::builder()
        .protocol_version(ctx.protocol_version())
        .cancellation(token);
    if let Some(caps) = ctx.client_capabilities() {
        builder = builder.client_capabilities(caps.clone());
    }
    if let Some(info) = ctx.client_info() {
        builder = builder.client_info(info.clone());
    }
    if let Some(identity) = ctx.assigns().get("identity") {
        builder = builder.assign("identity", identity.clone());
    }
    builder.build()
}

/// Runs the task's call beside the requests. A cancel cancels the call's token (the tool sees
/// `ctx.cancellation()`); a call still running [`CANCEL_GRACE`] later is dropped.
fn spawn(
    server: Server,
    id: String,
    params: Option<Value>,
    ctx: Context,
    token: CancellationToken,
) {
    let version = ctx.protocol_version();
    tokio::spawn(async move {
        let call = AssertUnwindSafe(server.tools_call(params, ctx)).catch_unwind();
        let cancelled = async {
            token.cancelled().await;
            tokio::time::sleep(CANCEL_GRACE).await;
        };
        let outcome = tokio::select! {
            outcome = call => Some(outcome.map_err(|_| internal("The tool panicked"))),
            () = cancelled => None,
        };
        let tasks = &server.features().tasks;
        tasks.lock_running().remove(&id);
        if let Some(outcome) = outcome {
            tasks.finish(&id, version, outcome.and_then(|r| r));
        }
    });
}

/// The fields every task answer carries.
fn envelope(tasks: &Tasks, task: &TaskRecord) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("taskId".into(), task.id.clone().into());
    map.insert("status".into(), task.status.as_str().into());
    map.insert("createdAt".into(), rfc3339(task.created_at_ms).into());
    map.insert(
        "lastUpdatedAt".into(),
        rfc3339(task.last_updated_at_ms).into(),
    );
    map.insert("ttlMs".into(), task.ttl_ms.into());
    let poll = u64::try_from(tasks.poll_interval.as_millis()).unwrap_or(u64::MAX);
    map.insert("pollIntervalMs".into(), poll.max(1).into());
    map
}

/// `tasks/get`'s answer: the envelope, and the result or the error once there is one.
fn detailed(tasks: &Tasks, task: &TaskRecord) -> Value {
    let mut map = envelope(tasks, task);
    if let Some(result) = &task.result {
        map.insert("result".into(), result.clone());
    }
    if let Some(error) = &task.error {
        map.insert("error".into(), error.clone());
    }
    Value::Object(map)
}

impl Tasks {
    fn lock_running(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, CancellationToken>> {
        self.running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn lock_transitions(&self) -> std::sync::MutexGuard<'_, ()> {
        self.transitions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The task `id` as `principal` may see it: another principal's, an expired or an unknown
    /// task are all "not found" (`-32602`), so ids cannot be probed.
    fn find(&self, id: &str, principal: Option<&str>) -> Result<TaskRecord, RpcError> {
        let not_found = || {
            RpcError::invalid_params_reason(format!(
                "Unknown task {}: no task with this id exists for this caller",
                wymcp_core::bound::echo(id)
            ))
        };
        let task = self
            .store
            .get(id)
            .map_err(|e| internal(e.to_string()))?
            .ok_or_else(not_found)?;
        if task.is_expired(now_ms()) {
            let _ = self.store.remove(id);
            return Err(not_found());
        }
        if task.principal.as_deref() != principal {
            return Err(not_found());
        }
        Ok(task)
    }

    /// Cancels the task: a running one ends as `cancelled` and its call is aborted; a task
    /// already ended is left as it is (the same acknowledgement).
    fn cancel(&self, id: &str, principal: Option<&str>) -> Result<(), RpcError> {
        let _guard = self.lock_transitions();
        let mut task = self.find(id, principal)?;
        if task.status.is_terminal() {
            return Ok(());
        }
        task.status = TaskStatus::Cancelled;
        task.last_updated_at_ms = now_ms();
        self.store.put(task).map_err(|e| internal(e.to_string()))?;
        if let Some(token) = self.lock_running().remove(id) {
            token.cancel();
        }
        Ok(())
    }

    /// Records how the task's call ended, unless the task was cancelled meanwhile: a result
    /// (an `isError` one included) completes it; a fault (a panic, a protocol error) fails it.
    fn finish(
        &self,
        id: &str,
        version: ProtocolVersion,
        outcome: Result<CallToolResult, RpcError>,
    ) {
        let _guard = self.lock_transitions();
        let Ok(Some(mut task)) = self.store.get(id) else {
            return;
        };
        if task.status.is_terminal() {
            return;
        }
        match outcome {
            // A result that is an error without a classification is a fault (a panic or a
            // timeout inside dispatch), not the tool's own answer.
            Ok(result) if result.is_error() && result.error_kind().is_none() => {
                let data = result.into_value(version);
                task.status = TaskStatus::Failed;
                task.error = Some(json!({"code": RpcError::INTERNAL_ERROR,
                                          "message": "The tool faulted", "data": data}));
            }
            Ok(result) => {
                task.status = TaskStatus::Completed;
                task.result = Some(result.into_value(version));
            }
            Err(error) => {
                task.status = TaskStatus::Failed;
                task.error = Some(json!({"code": error.code(), "message": error.message(),
                                          "data": error.data()}));
            }
        }
        task.last_updated_at_ms = now_ms();
        if let Err(err) = self.store.put(task) {
            tracing::warn!(%err, "could not record a task's end");
        }
    }
}
