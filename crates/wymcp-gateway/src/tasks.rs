//! Task-augmented calls through the gateway (the tasks extension, `io.modelcontextprotocol/tasks`).
//!
//! The downstream's task is the gateway's own: an upstream that serves tasks has its tools (in
//! `actions` mode, its actions) served with task support ([`support_of`]) and
//! [`TaskStart::OnHandOff`], so wymcp's task machinery
//! answers `tasks/get`, `tasks/update` and `tasks/cancel` from the gateway's task store (in
//! Redis with `--redis`, any node answering). Underneath, the forwarded call declares the
//! extension upstream ([`call`]):
//!
//! * the upstream answers a result (a tool that never runs as a task): that result, the call
//!   never handed off, so the downstream gets it at once;
//! * it asks for input first (multi round-trip rounds): relayed as for any call, so the
//!   downstream answers rounds of the gateway's call;
//! * it answers a task handle: the gateway's call hands off
//!   ([`Context::hand_off_to_task`]), so the downstream gets the gateway's task handle, and
//!   follows the upstream's task ([`follow`]) until it ends: its input requests asked in the
//!   gateway's task under the upstream's keys and answered upstream with `tasks/update`, the
//!   gateway's cancel sent upstream as `tasks/cancel`, its result the gateway task's result,
//!   its failure (`failed`, a JSON-RPC error) the gateway task's, as the upstream sent it.
//!
//! An upstream's `-32021` refusal (a tool that runs only as a task, called by a client that
//! did not declare the extension) is the downstream request's refusal too ([`relay_required`]).
//!
//! [`TaskStart::OnHandOff`]: wymcp::task::TaskStart::OnHandOff

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::time::Instant;
use wymcp::client::{ToolInfo, ToolResult};
use wymcp::session::{ClientRequestError, ListRoots};
use wymcp::task::{DEFAULT_TASK_TTL, TASKS_EXTENSION, TaskSupport};
use wymcp::{CallError, CallOutput, CallResult, Context, RpcError};

use crate::error::UpstreamError;
use crate::relay;
use crate::upstream::Upstream;

/// The JSON-RPC code of a missing required client capability (SEP-2575).
const MISSING_CAPABILITY: i64 = -32021;
/// The upstream's task is polled at its `pollIntervalMs`, at least this often.
const MAX_POLL: Duration = Duration::from_secs(1);
/// ... and at most this often.
const MIN_POLL: Duration = Duration::from_millis(20);

/// Whether the downstream request declares the tasks extension.
pub(crate) fn declares_tasks(ctx: &Context) -> bool {
    ctx.client_capabilities()
        .and_then(|capabilities| capabilities.get("extensions"))
        .and_then(|extensions| extensions.get(TASKS_EXTENSION))
        .is_some()
}

/// When the upstream refused the call `-32021` for extensions the request did not declare,
/// the downstream request is refused the same way, naming the same extensions.
pub(crate) fn relay_required(error: &UpstreamError, ctx: &Context) {
    let Some(refused) = error.rpc_error() else {
        return;
    };
    if refused.code() != MISSING_CAPABILITY {
        return;
    }
    let extensions = refused
        .data()
        .and_then(|data| data.get("requiredCapabilities"))
        .and_then(|required| required.get("extensions"))
        .and_then(Value::as_object);
    for id in extensions.into_iter().flat_map(Map::keys) {
        ctx.require_extension(id);
    }
}

/// The tool result `result` of the upstream, as this gateway's tool answers it: its content
/// and `structuredContent`; its `isError` answer is this tool's error, with its text.
pub(crate) fn output(result: ToolResult) -> CallResult {
    if result.is_error() {
        return Err(CallError::tool(result.text()));
    }
    // Taken from the answer, not copied.
    let (content, mut raw) = result.into_parts();
    let mut output = CallOutput::new(content);
    if let Some(structured) = raw.get_mut("structuredContent").map(Value::take) {
        output = output.with_structured(structured);
    }
    Ok(output)
}

/// The task support of the upstream tool `tool` as its definition declares it
/// (`execution.taskSupport`, as MCP 2025-11-25 defines it): `"forbidden"` is `Forbidden`,
/// `"required"` `Required` (the gateway refuses a request without the extension `-32021`
/// itself); anything else `Optional`, since a 2026-07-28 tool definition does not say which
/// tools run as tasks (SEP-2663 leaves that to the server), so the upstream decides.
pub(crate) fn support_of(tool: &ToolInfo) -> TaskSupport {
    let declared = tool
        .raw()
        .get("execution")
        .and_then(|execution| execution.get("taskSupport"))
        .and_then(Value::as_str);
    match declared {
        Some("forbidden") => TaskSupport::Forbidden,
        Some("required") => TaskSupport::Required,
        _ => TaskSupport::Optional,
    }
}

/// Calls `tool` of `upstream` declaring the tasks extension, for a downstream request that
/// declares it (see the module's documentation): the upstream's tool result (an `isError`
/// one included), or why there is none.
pub(crate) async fn call(
    upstream: &Upstream,
    tool: &str,
    arguments: Value,
    ctx: &Context,
) -> Result<ToolResult, CallError> {
    let answer = upstream
        .call_tool_with_tasks(tool, arguments, ctx)
        .await
        .map_err(|error| {
            relay_required(&error, ctx);
            CallError::tool(error.to_string())
        })?;
    if answer.get("resultType").and_then(Value::as_str) != Some("task") {
        return Ok(ToolResult::from_raw(answer));
    }
    let Some(id) = answer.get("taskId").and_then(Value::as_str) else {
        return Err(CallError::tool(format!(
            "upstream {}: a task handle without a taskId",
            upstream.name()
        )));
    };
    let ttl = answer
        .get("ttlMs")
        .and_then(Value::as_u64)
        .map_or(DEFAULT_TASK_TTL, Duration::from_millis);
    // From here the downstream holds the gateway's task handle (a call that cannot hand
    // off follows the upstream's task to its end all the same).
    ctx.hand_off_to_task().await;
    let outcome = follow(upstream, id, poll_interval(&answer), ttl, ctx).await;
    // Cancelled downstream (whatever `follow` was doing then): cancelled upstream.
    if ctx.cancellation().is_cancelled() {
        cancel(upstream, id).await;
    }
    outcome
}

/// How long to wait before polling the upstream task again, by its `pollIntervalMs`.
fn poll_interval(task: &Value) -> Duration {
    task.get("pollIntervalMs")
        .and_then(Value::as_u64)
        .map_or(MAX_POLL, Duration::from_millis)
        .clamp(MIN_POLL, MAX_POLL)
}

/// Follows the upstream's task `id` until it ends, at most for its `ttl`: its input requests
/// asked in the gateway's call (each key once) and answered upstream as they come; it stops
/// when the gateway's call is cancelled (the caller cancels upstream).
async fn follow(
    upstream: &Upstream,
    id: &str,
    mut poll: Duration,
    ttl: Duration,
    ctx: &Context,
) -> Result<ToolResult, CallError> {
    let failed = |error: UpstreamError| CallError::tool(error.to_string());
    let deadline = Instant::now() + ttl;
    let mut asked = BTreeSet::new();
    // The input requests being asked, each in a task of its own (aborted when this ends).
    let mut answers = tokio::task::JoinSet::new();
    // The first look at once: the task may already wait for input, or have ended.
    let mut wait = Duration::ZERO;
    loop {
        let sleep = tokio::time::sleep_until((Instant::now() + wait).min(deadline));
        tokio::select! {
            () = ctx.cancellation().cancelled() => {
                return Err(CallError::tool(format!(
                    "upstream {}: task {id} cancelled",
                    upstream.name()
                )));
            }
            Some(joined) = answers.join_next(), if !answers.is_empty() => {
                let Ok((key, answer)) = joined else {
                    continue; // the ask's task panicked: its key stays unanswered
                };
                let answer: Result<Value, ClientRequestError> = answer;
                match answer {
                    Ok(answer) => {
                        let mut responses = Map::new();
                        responses.insert(key, answer);
                        upstream.update_task(id, responses, ctx).await.map_err(failed)?;
                    }
                    Err(error) => {
                        cancel(upstream, id).await;
                        return Err(CallError::tool(format!(
                            "upstream {}: task {id}: input request {key} not answered: {error}",
                            upstream.name()
                        )));
                    }
                }
            }
            () = sleep => {
                if Instant::now() >= deadline {
                    cancel(upstream, id).await;
                    return Err(CallError::tool(format!(
                        "upstream {}: task {id} did not end within its ttlMs ({} ms)",
                        upstream.name(),
                        ttl.as_millis()
                    )));
                }
            }
        }
        let task = upstream.get_task(id, ctx).await.map_err(failed)?;
        poll = task
            .get("pollIntervalMs")
            .map_or(poll, |_| poll_interval(&task));
        wait = poll;
        match task.get("status").and_then(Value::as_str) {
            Some("completed") => {
                let result = task.get("result").cloned().unwrap_or(Value::Null);
                return Ok(ToolResult::from_raw(result));
            }
            Some("failed") => return Err(failed_upstream(upstream.name(), id, task.get("error"))),
            Some("cancelled") => {
                return Err(CallError::tool(format!(
                    "upstream {}: task {id} was cancelled upstream",
                    upstream.name()
                )));
            }
            Some("input_required") => {
                let requests = task.get("inputRequests").and_then(Value::as_object);
                for (key, request) in requests.into_iter().flatten() {
                    if asked.insert(key.clone()) {
                        let (ctx, key, request) = (ctx.clone(), key.clone(), request.clone());
                        let timeout = upstream.config().timeout;
                        answers.spawn(async move {
                            let answer = ask(&ctx, &key, &request, timeout).await;
                            (key, answer)
                        });
                    }
                }
            }
            _ => {}
        }
    }
}

/// The gateway's task fails as the upstream's failed: with the upstream's JSON-RPC error,
/// its `code`, `message` and `data` as the upstream sent them ([`CallError::protocol`]). An
/// error without an integer `code` or a string `message` (not a JSON-RPC error) fails it
/// `-32603`, naming the upstream and carrying what it sent in `data`.
fn failed_upstream(upstream: &str, id: &str, error: Option<&Value>) -> CallError {
    let error = error.cloned().unwrap_or(Value::Null);
    tracing::debug!(target: "wymcp_gateway", %upstream, task = %id, %error, "the upstream's task failed: the gateway's task fails");
    let code = error.get("code").and_then(Value::as_i64);
    let message = error.get("message").and_then(Value::as_str);
    let failed = match (code, message) {
        (Some(code), Some(message)) => {
            let data = error.get("data").filter(|data| !data.is_null()).cloned();
            RpcError::new(code, message, data)
        }
        _ => RpcError::new(
            RpcError::INTERNAL_ERROR,
            format!("upstream {upstream}: task {id} failed without a JSON-RPC error"),
            Some(error),
        ),
    };
    CallError::protocol(failed)
}

/// Sends `tasks/cancel` of the task `id` upstream, whatever became of the downstream's call;
/// a refusal is logged.
async fn cancel(upstream: &Upstream, id: &str) {
    if let Err(error) = upstream.cancel_task(id, &Context::default()).await {
        tracing::debug!(target: "wymcp_gateway", upstream = %upstream.name(), task = %id, %error, "tasks/cancel upstream refused");
    }
}

/// Asks the downstream client the upstream task's input request `request` (its `method` and
/// `params`) under the upstream's `key`: in the gateway's task, it shows in `inputRequests`
/// of the gateway's `tasks/get` until `tasks/update` answers it, at most for `timeout` (the
/// upstream's, as for the requests [`crate::relay`] relays).
async fn ask(
    ctx: &Context,
    key: &str,
    request: &Value,
    timeout: Duration,
) -> Result<Value, ClientRequestError> {
    let params = request
        .get("params")
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()));
    let not_asked = |why: &str| {
        ClientRequestError::Client(serde_json::json!({
            "code": RpcError::INVALID_PARAMS,
            "message": why,
        }))
    };
    // The same readings of the upstream's params as the requests `crate::relay` relays.
    match request.get("method").and_then(Value::as_str) {
        Some("elicitation/create") => match relay::elicitation(params, timeout) {
            Some(elicitation) => ctx.elicit(elicitation.key(key)).await,
            None => Err(not_asked(relay::ELICITATION_INCOMPLETE)),
        },
        Some("sampling/createMessage") => {
            ctx.sample(relay::sampling(params, timeout).key(key)).await
        }
        Some("roots/list") => {
            ctx.list_roots(ListRoots::new().key(key).timeout(timeout))
                .await
        }
        _ => Err(not_asked("not an input request the gateway relays")),
    }
}
