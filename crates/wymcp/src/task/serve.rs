//! Serving the tasks extension: `tools/call` answered with a task handle, the task's call
//! run on, and `tasks/get`, `tasks/update`, `tasks/cancel`.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::clock::{now_ms, rfc3339};
use super::hand_off::{HandedOff, call_with_hand_off};
use super::host::{Host, TaskHost};
use super::input::{TaskInput, TaskSlot};
use super::transitions::internal;
use super::{
    ResumableCall, Running, TASKS_EXTENSION, TaskRecord, TaskResume, TaskStart, TaskStatus,
    TaskSupport, Tasks,
};
use crate::Context;
use crate::mrtr::INVALID_INPUT_RESPONSES;
use crate::protocol::{Method, RpcError};
use crate::tool::CallToolResult;

/// How long a cancelled task's call may take to notice its cancellation before it is dropped.
const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// A task's call, as it runs on beside the requests.
pub(super) type TaskFuture = BoxFuture<'static, Result<CallToolResult, RpcError>>;

/// What `tools/call` does with a call, given the tool's task support and the request.
pub(crate) enum Route {
    /// Run it and answer its result (the params handed back).
    Sync(Option<Value>),
    /// A task's business: [`run_task_call`] answers it.
    Task(TaskCall),
}

/// A `tools/call` the tasks extension answers: the tool, the params, and how.
pub(crate) struct TaskCall {
    tool: String,
    params: Option<Value>,
    how: How,
}

enum How {
    /// The tool requires a task and the client did not declare the extension.
    Refused,
    /// A task at once.
    Immediately,
    /// A plain call until its code hands off ([`TaskStart::OnHandOff`]).
    OnHandOff,
}

/// Routes a `tools/call` of the stateless era. Synchronous, and allocation-free for a tool
/// without task support: every call of the era passes here.
pub(crate) fn route_call(server: &dyn TaskHost, params: Option<Value>, ctx: &Context) -> Route {
    let tasks = server.tasks().policies();
    if tasks.is_empty() {
        return Route::Sync(params);
    }
    let name = params
        .as_ref()
        .and_then(|p| p.get("name"))
        .and_then(Value::as_str);
    let Some(name) = name else {
        return Route::Sync(params);
    };
    let action = params
        .as_ref()
        .and_then(|p| p.get("arguments"))
        .and_then(|a| a.get("action"))
        .and_then(Value::as_str);
    let how = match (tasks.support_of(name, action), declares_tasks(ctx)) {
        (TaskSupport::Required, false) => How::Refused,
        (TaskSupport::Optional | TaskSupport::Required, true) => match tasks.start_of(name) {
            TaskStart::OnHandOff => How::OnHandOff,
            _ => How::Immediately,
        },
        _ => return Route::Sync(params),
    };
    let tool = name.to_owned();
    Route::Task(TaskCall { tool, params, how })
}

/// Answers a `tools/call` [`route_call`] gave the tasks extension.
pub(crate) async fn run_task_call(
    server: &dyn TaskHost,
    call: TaskCall,
    ctx: &Context,
    round: Option<&crate::mrtr::Round>,
) -> HandedOff {
    let TaskCall { tool, params, how } = call;
    match how {
        How::Refused => HandedOff::Task(Err(missing_extension(ctx))),
        How::Immediately => HandedOff::Task(start(server, tool, params, ctx).await),
        How::OnHandOff => call_with_hand_off(server, tool, params, ctx, round).await,
    }
}

/// Serves `tasks/get`, `tasks/update` and `tasks/cancel`.
pub(crate) async fn method(
    server: &dyn TaskHost,
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
    let tasks = &server.tasks();
    let principal = owner(ctx);
    let principal = principal.as_deref();
    match method {
        Method::TasksGet => tasks.detailed_for(server, id, principal).await,
        Method::TasksCancel => tasks.cancel(id, principal).await.map(|()| json!({})),
        _ => {
            let responses = input_responses(&params)?;
            tasks
                .update((id, principal), responses, server)
                .await
                .map(|()| json!({}))
        }
    }
}

impl Tasks {
    /// Task `id` as `tasks/get` answers it to `principal` (a `DetailedTask`), or "not found".
    pub(crate) async fn detailed_for(
        &self,
        server: &dyn TaskHost,
        id: &str,
        principal: Option<&str>,
    ) -> Result<Value, RpcError> {
        Ok(detailed(
            self,
            &self.find(id, principal, Some(server)).await?,
        ))
    }
}

/// `tasks/update`'s `inputResponses`: an object (absent: none).
fn input_responses(params: &Map<String, Value>) -> Result<&Map<String, Value>, RpcError> {
    static NONE: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    match params.get("inputResponses") {
        None => Ok(NONE.get_or_init(Map::new)),
        Some(Value::Object(responses)) => Ok(responses),
        Some(_) => Err(RpcError::new(
            RpcError::INVALID_PARAMS,
            "'inputResponses' must be an object mapping each input request's key to its answer",
            Some(json!({"reason": INVALID_INPUT_RESPONSES})),
        )),
    }
}

/// Whom a task belongs to and is counted against: the caller's principal; without one, its
/// client's address (counted as the session quota counts it: IPv6 by its /64), so one
/// anonymous client at its cap does not take another's places (issue 48, N14), and an
/// anonymous task is read back from the address that made it; `None` only where the
/// transport knows no address (stdio, whose one client is the one anonymous caller).
pub(crate) fn owner(ctx: &Context) -> Option<String> {
    ctx.principal().or_else(|| {
        let address = ctx.origin().client?;
        Some(format!("anonymous@{}", crate::context::network(address)))
    })
}

/// Whether the request declares the tasks extension in its capabilities.
pub(crate) fn declares_tasks(ctx: &Context) -> bool {
    ctx.client_capabilities()
        .is_some_and(|caps| caps["extensions"][TASKS_EXTENSION].is_object())
}

/// The refusal of a request that needs the extension it did not declare: recorded on the
/// context, so the request is answered 400 `-32021` like any missing capability.
pub(crate) fn missing_extension(ctx: &Context) -> RpcError {
    ctx.require_extension(TASKS_EXTENSION);
    crate::protocol::stateless::missing_capability(json!({"extensions": {TASKS_EXTENSION: {}}}))
}

/// Creates the task and starts its call: the `CreateTaskResult`.
async fn start(
    server: &dyn TaskHost,
    tool: String,
    params: Option<Value>,
    ctx: &Context,
) -> Result<Value, RpcError> {
    let resumable = (server.tasks().resume_of(&tool) == TaskResume::Rerun).then(|| ResumableCall {
        params: params.clone().unwrap_or_else(|| json!({})),
        client_capabilities: ctx
            .client_capabilities()
            .cloned()
            .unwrap_or_else(|| json!({})),
        identity: ctx.identity().map(|identity| identity.to_value()),
    });
    let token = CancellationToken::new();
    let id = new_id();
    let input = Arc::new(TaskInput::new(id.clone(), server.downgrade()));
    let slot = Arc::new(TaskSlot::running(input.clone()));
    let task_ctx = ctx.for_task(token.clone(), slot);
    let call = server.call(params, task_ctx);
    let principal = owner(ctx);
    let running = Running {
        token,
        input,
        principal,
    };
    adopt(server, (tool, resumable), ctx, running, call).await
}

/// 128 random bits, in hex.
pub(super) fn new_id() -> String {
    format!("{:032x}", u128::from_ne_bytes(crate::random::bytes()))
}

/// Makes `call` (whose context carries `running`'s token and input) the task's call: records
/// the task (with the call as made, when its tool is rerun), runs the call on beside the
/// requests, answers the `CreateTaskResult`.
pub(super) async fn adopt(
    server: &dyn TaskHost,
    (tool, resumable): (String, Option<ResumableCall>),
    ctx: &Context,
    running: Running,
    call: TaskFuture,
) -> Result<Value, RpcError> {
    let tasks = &server.tasks();
    let now = now_ms();
    // At most one sweep a second: a full in-memory store sweeps on its own before refusing.
    let last = tasks.swept_at_ms.load(std::sync::atomic::Ordering::Relaxed);
    if now.saturating_sub(last) >= 1_000 {
        tasks
            .swept_at_ms
            .store(now, std::sync::atomic::Ordering::Relaxed);
        let _ = tasks.store.remove_expired(now).await;
    }
    let id = running.input.id().to_owned();
    let token = running.token.clone();
    tasks.admit(running)?;
    let record = TaskRecord {
        id: id.clone(),
        principal: owner(ctx),
        tool,
        status: TaskStatus::Working,
        created_at_ms: now,
        last_updated_at_ms: now,
        ttl_ms: u64::try_from(tasks.ttl.as_millis()).unwrap_or(u64::MAX),
        result: None,
        error: None,
        input_requests: None,
        pending_answers: None,
        node: Some(tasks.node.clone()),
        heartbeat_ms: now,
        call: resumable,
    };
    let (max, fresh_since) = (tasks.max_running_per_principal, tasks.fresh_since(now));
    match tasks
        .store
        .put_admitted(record.clone(), max, fresh_since)
        .await
    {
        Ok(true) => {}
        Ok(false) => {
            tasks.lock_running().remove(&id);
            return Err(internal(format!(
                "Too many tasks running for this caller: at most {max} at once on all nodes \
                 (ServerBuilder::task_max_running_per_principal); wait for one to end"
            )));
        }
        Err(err) => {
            tasks.lock_running().remove(&id);
            return Err(internal(err.to_string()));
        }
    }
    let mut handle = envelope(tasks, &record);
    handle.insert("resultType".into(), "task".into());
    spawn(server.to_host(), id, call, ctx.protocol_version(), token);
    Ok(Value::Object(handle))
}

/// Runs the task's call beside the requests, renewing its heartbeat. A cancel (here, or seen
/// at a heartbeat when another node recorded it) cancels the call's token (the tool sees
/// `ctx.cancellation()`); a call still running [`CANCEL_GRACE`] later is dropped.
pub(super) fn spawn(
    server: Host,
    id: String,
    call: TaskFuture,
    version: crate::protocol::ProtocolVersion,
    token: CancellationToken,
) {
    tokio::spawn(async move {
        let run = RunningHere { server, id };
        let (server, id) = (&run.server, &run.id);
        #[cfg(feature = "otel")]
        let _running = super::running::Running::start();
        let call = AssertUnwindSafe(call).catch_unwind();
        let cancelled = async {
            token.cancelled().await;
            tokio::time::sleep(CANCEL_GRACE).await;
        };
        let tasks = &server.tasks();
        let beats = async {
            let mut every = tokio::time::interval(tasks.heartbeat);
            every.tick().await;
            loop {
                every.tick().await;
                if !tasks.beat(id).await {
                    break;
                }
            }
            // The task ended (cancelled): the call's end or the grace decides.
            token.cancel();
            std::future::pending::<()>().await;
        };
        let outcome = tokio::select! {
            outcome = call => Some(outcome.map_err(|_| internal("The tool panicked"))),
            () = cancelled => None,
            () = beats => None,
        };
        // Counted running until its end is recorded (tried again while the store refuses
        // it), so that this node does not take it meanwhile for one whose node stopped.
        if let Some(outcome) = outcome {
            tasks.finish(id, version, outcome.and_then(|r| r)).await;
        }
        // `run` dropped: the task is no longer counted running here.
    });
}

/// A task's call as this node runs it: while this lives, the task is counted among this
/// node's running ones ([`Tasks::running`]). Dropped when its run ends, or unfinished, when the
/// runtime running it shut down first: then the task is no longer counted running here, so it
/// does not hold its caller's place, and a later read finds it left by a stopped node (failed,
/// or run again) instead of `working` for ever (issue 48).
struct RunningHere {
    server: Host,
    id: String,
}

impl Drop for RunningHere {
    fn drop(&mut self) {
        self.server.tasks().lock_running().remove(&self.id);
    }
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

/// `tasks/get`'s answer: the envelope, and the requests it waits on, its result or its error.
fn detailed(tasks: &Tasks, task: &TaskRecord) -> Value {
    let mut map = envelope(tasks, task);
    if let (TaskStatus::InputRequired, Some(requests)) = (task.status, &task.input_requests) {
        map.insert("inputRequests".into(), Value::Object(requests.clone()));
    }
    if let Some(result) = &task.result {
        map.insert("result".into(), result.clone());
    }
    if let Some(error) = &task.error {
        map.insert("error".into(), error.clone());
    }
    Value::Object(map)
}
