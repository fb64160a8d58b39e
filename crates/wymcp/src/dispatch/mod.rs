//! `tools/call` once the tool is found: the gates, the tool's own code, the result, and the
//! boundary that contains a panic anywhere inside.

mod choices;
pub(crate) mod fault;
pub(crate) mod gates;
mod help;
pub(crate) mod refusal;
mod schemas;

use std::sync::Arc;
use std::time::Instant;

use futures_util::FutureExt;
use serde_json::{Map, Value};

use crate::Limits;
use crate::context::Context;
use crate::protocol::RpcError;

use crate::tool::erased::DynActionTool;
use crate::tool::registered::{Kind, RegisteredTool};
use crate::tool::{CallError, Content, ErrorKind};

pub(crate) use crate::tool::CallToolResult;
pub(crate) use crate::tool::call_result::WireResult;

/// What runs an admitted call when the server has operation middleware: its layers, then
/// [`run_admitted`]. Implemented by `middleware::Stack`; `dispatch` knows no layer.
pub(crate) trait AfterGates: Send + Sync {
    fn run(
        &self,
        tool: Arc<RegisteredTool>,
        action: Option<&str>,
        data: Map<String, Value>,
        ctx: Context,
    ) -> futures_util::future::BoxFuture<'static, Called>;
}

/// A call's answer once the tool is found: its result, or the JSON-RPC error the tool failed
/// the request with ([`CallError::protocol`], [`Failure::protocol`](crate::tool::Failure)),
/// which is answered instead of a result.
pub(crate) type Called = Result<CallToolResult, RpcError>;

/// The `isError` result a request failed with [`CallError::protocol`] is seen as by the
/// operation middleware (its layers see a call's result; the request is answered with
/// `error` itself).
#[cold]
#[inline(never)]
pub(crate) fn failed_result(error: &RpcError) -> CallToolResult {
    CallToolResult {
        content: vec![Content::text(error.message())],
        is_error: true,
        structured: None,
        error_kind: Some(ErrorKind::Tool),
        scopes_needed: None,
    }
}

/// What a tool's run produced, before the output schema and the revision shape it.
pub(crate) enum Outcome {
    Ok {
        content: Vec<Content>,
        /// The candidate for `structuredContent`.
        structured: Option<Value>,
    },
    Err {
        content: Vec<Content>,
        kind: ErrorKind,
    },
    /// The scope gate refused: the caller lacks `scopes`.
    Forbidden {
        content: Vec<Content>,
        scopes: Vec<String>,
    },
    /// The tool failed the request with a JSON-RPC error (`CallError::protocol`,
    /// `Failure::protocol`).
    Failed(RpcError),
}

impl Outcome {
    #[cold]
    #[inline(never)]
    pub(crate) fn refused(refusal: &refusal::Refusal<'_>) -> Self {
        if let refusal::Refusal::InsufficientScope { required, .. } = refusal {
            return Outcome::Forbidden {
                content: vec![Content::json(&refusal.payload())],
                scopes: required.to_vec(),
            };
        }
        Outcome::Err {
            content: vec![Content::json(&refusal.payload())],
            kind: ErrorKind::Dispatch,
        }
    }

    fn from_call_error(error: CallError, limits: &Limits) -> Self {
        let error = match error.into_protocol() {
            Ok(failed) => return Outcome::Failed(failed),
            Err(error) => error,
        };
        Outcome::Err {
            content: vec![Content::text(limits.error_text(error.message().to_owned()))],
            kind: error.kind(),
        }
    }
}

/// Calls a registered tool with raw arguments and answers whatever happens inside: the gates,
/// then the operation middleware (`stack`, when the server has layers), then the tool.
pub(crate) async fn call(
    tools: &[Arc<RegisteredTool>],
    tool: &Arc<RegisteredTool>,
    arguments: Map<String, Value>,
    ctx: Context,
    limits: &Limits,
    stack: Option<&dyn AfterGates>,
) -> Called {
    // Without a subscriber (or with every level off) no clock is read and nothing is allocated.
    let trace = tracing::level_enabled!(tracing::Level::ERROR)
        .then(|| CallTrace::start(tool, &arguments, &ctx));
    let run = run(tools, tool, arguments, ctx.clone(), limits, stack);
    let result = match std::panic::AssertUnwindSafe(run).catch_unwind().await {
        Ok(result) => result,
        Err(payload) => return Ok(faulted(tool, &ctx, trace.as_ref(), payload.as_ref())),
    };
    if let Some(trace) = &trace {
        match &result {
            Ok(result) => trace.stop(tool, &ctx, result.is_error, result.error_kind),
            Err(_) => trace.stop(tool, &ctx, true, Some(ErrorKind::Tool)),
        }
    }
    result
}

/// A call's telemetry: when it started and its action name (bounded). Its events are emitted
/// out of line: the call's own code stays compact.
struct CallTrace {
    started: Instant,
    action: Option<String>,
}

impl CallTrace {
    #[inline(never)]
    fn start(tool: &RegisteredTool, arguments: &Map<String, Value>, ctx: &Context) -> Self {
        let action = arguments
            .get("action")
            .and_then(Value::as_str)
            .map(wymcp_core::bound::echo);
        tracing::debug!(
            name: "wymcp.tool.start",
            tool_name = %tool.name,
            action = action.as_deref(),
            session_id = ctx.session_id(),
        );
        CallTrace {
            started: Instant::now(),
            action,
        }
    }

    fn elapsed_ns(&self) -> u64 {
        self.started.elapsed().as_nanos() as u64
    }

    #[inline(never)]
    fn stop(
        &self,
        tool: &RegisteredTool,
        ctx: &Context,
        is_error: bool,
        error_kind: Option<ErrorKind>,
    ) {
        tracing::debug!(
            name: "wymcp.tool.stop",
            tool_name = %tool.name,
            action = self.action.as_deref(),
            session_id = ctx.session_id(),
            duration_ns = self.elapsed_ns(),
            is_error,
            error_kind = error_kind.map(ErrorKind::as_str),
        );
        if is_error {
            tracing::info!(
                name: "wymcp.tool.refused",
                tool_name = %tool.name,
                action = self.action.as_deref(),
                session_id = ctx.session_id(),
                error_kind = error_kind.map(ErrorKind::as_str),
                "tool call answered with an error"
            );
        }
    }
}

/// A panic inside the tool, contained: the `tool_fault` result and its error event.
#[cold]
#[inline(never)]
fn faulted(
    tool: &RegisteredTool,
    ctx: &Context,
    trace: Option<&CallTrace>,
    payload: &(dyn std::any::Any + Send),
) -> CallToolResult {
    let fault = fault::Fault::from_panic(payload);
    if let Some(trace) = trace {
        tracing::error!(
            name: "wymcp.tool.error",
            tool_name = %tool.name,
            action = trace.action.as_deref(),
            session_id = ctx.session_id(),
            request_id = ctx.request_id().map(|id| wymcp_core::bound::echo(&id.to_string())),
            duration_ns = trace.elapsed_ns(),
            exception = "panic",
            error = %fault.bounded_message().escape_debug(),
            crash_reason = %fault.logged_message(),
            "tool {} faulted", tool.name
        );
    }
    CallToolResult {
        content: vec![Content::json(&fault.body(&tool.name))],
        is_error: true,
        structured: None,
        error_kind: None,
        scopes_needed: None,
    }
}

/// The answer to a call that ran longer than its timeout (and was aborted); `setting` names
/// where the timeout was configured.
#[cold]
#[inline(never)]
pub(crate) fn timed_out(tool: &str, timeout: std::time::Duration, setting: &str) -> CallToolResult {
    tracing::warn!(
        name: "wymcp.tool.timeout",
        tool_name = tool,
        timeout_ms = timeout.as_millis() as u64,
        "tool call aborted at its timeout"
    );
    let body = serde_json::json!({
        "errorType": "timeout",
        "tool": tool,
        "timeout_ms": timeout.as_millis() as u64,
        "message": format!(
            "The call ran longer than its limit of {} ms ({setting}) and was aborted. \
             Ask for less work per call, or retry later.",
            timeout.as_millis()
        ),
    });
    CallToolResult {
        content: vec![Content::json(&body)],
        is_error: true,
        structured: None,
        error_kind: None,
        scopes_needed: None,
    }
}

/// The tool's `run`: gates, then the layers (when there are any), then the tool's own code.
/// `help` is the server's own answer: no layer sees it.
async fn run(
    tools: &[Arc<RegisteredTool>],
    tool: &Arc<RegisteredTool>,
    mut arguments: Map<String, Value>,
    ctx: Context,
    limits: &Limits,
    stack: Option<&dyn AfterGates>,
) -> Called {
    match &tool.kind {
        Kind::Action {
            tool: inner,
            actions,
        } => {
            let identity = ctx.identity();
            let admitted =
                gates::admit_action(&tool.name, actions, &mut arguments, identity, limits);
            let (action, data) = match admitted {
                Ok(admitted) => admitted,
                Err(refusal) => return finish(tool, Outcome::refused(&refusal)),
            };
            if let Some(stack) = stack {
                return stack
                    .run(tool.clone(), Some(action.name()), data, ctx)
                    .await;
            }
            finish(
                tool,
                run_action(inner.as_ref(), action.name(), data, ctx, limits).await,
            )
        }
        Kind::Plain {
            input,
            digest,
            scopes,
            ..
        } => {
            let admitted = gates::admit_plain(
                &tool.name,
                input,
                digest,
                scopes,
                arguments,
                ctx.identity(),
                limits,
            );
            let arguments = match admitted {
                Ok(arguments) => arguments,
                Err(refusal) => return finish(tool, Outcome::refused(&refusal)),
            };
            if let Some(stack) = stack {
                return stack.run(tool.clone(), None, arguments, ctx).await;
            }
            run_admitted(tool, None, arguments, ctx, limits).await
        }
        Kind::Help => finish(tool, help::answer(tools, &arguments, &ctx, limits)),
    }
}

/// An admitted call's handler: the tool's own code on the validated `data`, its result
/// shaped (the innermost service of the operation middleware).
pub(crate) async fn run_admitted(
    tool: &RegisteredTool,
    action: Option<&str>,
    data: Map<String, Value>,
    ctx: Context,
    limits: &Limits,
) -> Called {
    let outcome = match &tool.kind {
        Kind::Action { tool: inner, .. } => {
            let action = action.unwrap_or_default();
            run_action(inner.as_ref(), action, data, ctx, limits).await
        }
        Kind::Plain { tool: inner, .. } => match inner.run(data, ctx).await {
            Ok(output) => {
                let structured = output
                    .structured
                    .or_else(|| single_json_object(&output.content));
                Outcome::Ok {
                    content: output.content,
                    structured,
                }
            }
            Err(error) => Outcome::from_call_error(error, limits),
        },
        // Not reached: help is answered before the layers.
        Kind::Help => help::answer(&[], &data, &ctx, limits),
    };
    finish(tool, outcome)
}

/// The structured candidate of plain content: one text item holding a JSON object.
fn single_json_object(content: &[Content]) -> Option<Value> {
    match content {
        [Content::Text { text, .. }] => serde_json::from_str::<Value>(text)
            .ok()
            .filter(Value::is_object),
        _ => None,
    }
}

/// Runs an admitted action and maps its return vocabulary.
async fn run_action(
    tool: &dyn DynActionTool,
    action: &str,
    data: Map<String, Value>,
    ctx: Context,
    limits: &Limits,
) -> Outcome {
    let data = crate::tool::Data::from_map(data);
    match tool.run_action(action, data, ctx.clone()).await {
        Ok(reply) => {
            let (value, hint_context) = reply.into_parts();
            let mut extra = Map::new();
            if let Some(hc) = hint_context {
                let hints = tool.hints(action, &hc);
                insert_hints(&mut extra, &hints, limits);
            }
            if let Some(context) = tool.action_context(action, &ctx) {
                extra.insert("context".into(), Value::Object(context));
            }
            let response = merge(value, extra);
            Outcome::Ok {
                content: vec![Content::json(&response)],
                structured: Some(response),
            }
        }
        Err(failure) => failed(tool, action, failure, &ctx, limits),
    }
}

/// The tool's own failure, as the tool's error handler and hints word it.
#[cold]
#[inline(never)]
fn failed(
    tool: &dyn DynActionTool,
    action: &str,
    failure: crate::tool::Failure,
    ctx: &Context,
    limits: &Limits,
) -> Outcome {
    let failure = match failure.into_protocol() {
        Ok(failed) => return Outcome::Failed(failed),
        Err(failure) => failure,
    };
    let (reason, hint_context) = failure.into_parts();
    let message = limits.error_text(tool.handle_error(&reason));
    let Some(hc) = hint_context else {
        return Outcome::Err {
            content: vec![Content::text(message)],
            kind: ErrorKind::Tool,
        };
    };
    let mut body = Map::new();
    body.insert("error".into(), Value::String(message));
    let hints = tool.hints(action, &hc);
    insert_hints(&mut body, &hints, limits);
    if let Some(context) = tool.action_context(action, ctx) {
        body.insert("context".into(), Value::Object(context));
    }
    Outcome::Err {
        content: vec![Content::json(&Value::Object(body))],
        kind: ErrorKind::Tool,
    }
}

/// Adds `hints` to an answer's body, bounded: caller-influenced text, as a refusal's quotes
/// are. At most [`Limits::max_hints`] (the rest counted in `hints_omitted`), each through
/// [`Hint::bounded`](wymcp_core::Hint::bounded) (its description by
/// [`Limits::max_error_text`]), so no answer's size follows its input's.
fn insert_hints(body: &mut Map<String, Value>, hints: &[wymcp_core::Hint], limits: &Limits) {
    if hints.is_empty() {
        return;
    }
    let kept: Vec<wymcp_core::Hint> = hints
        .iter()
        .take(limits.max_hints)
        .map(|hint| hint.bounded(limits.max_error_text))
        .collect();
    let value = serde_json::to_value(kept).unwrap_or_else(|_| Value::Array(Vec::new()));
    body.insert("hints".into(), value);
    if hints.len() > limits.max_hints {
        body.insert(
            "hints_omitted".into(),
            Value::from(hints.len() - limits.max_hints),
        );
    }
}

/// Adds `hints` / `context` to a response. A response that is not an object is kept under
/// `"result"` when there is something to add.
fn merge(value: Value, extra: Map<String, Value>) -> Value {
    if extra.is_empty() {
        return value;
    }
    let mut object = match value {
        Value::Object(map) => map,
        other => {
            let mut map = Map::new();
            map.insert("result".into(), other);
            map
        }
    };
    object.extend(extra);
    Value::Object(object)
}

/// Attaches validated structured content and builds the result; a request the tool failed
/// is its JSON-RPC error.
fn finish(tool: &RegisteredTool, outcome: Outcome) -> Called {
    Ok(match outcome {
        Outcome::Forbidden { content, scopes } => CallToolResult {
            content,
            is_error: true,
            structured: None,
            error_kind: Some(ErrorKind::Dispatch),
            scopes_needed: Some(scopes),
        },
        Outcome::Failed(error) => return Err(error),
        Outcome::Err { content, kind } => CallToolResult {
            content,
            is_error: true,
            structured: None,
            error_kind: Some(kind),
            scopes_needed: None,
        },
        Outcome::Ok {
            content,
            structured,
        } => {
            let structured = match (&tool.output, structured) {
                (Some(gate), Some(candidate)) if candidate.is_object() => {
                    if gate.is_valid(&candidate) {
                        Some(candidate)
                    } else {
                        tracing::warn!(
                            tool_name = %tool.name,
                            "Tool {} output_schema validation failed; structuredContent omitted",
                            tool.name
                        );
                        None
                    }
                }
                (Some(_), _) => {
                    tracing::warn!(
                        tool_name = %tool.name,
                        "Tool {} declares an output schema but its result is not a JSON object; structuredContent omitted",
                        tool.name
                    );
                    None
                }
                (None, _) => None,
            };
            CallToolResult {
                content,
                is_error: false,
                structured,
                error_kind: None,
                scopes_needed: None,
            }
        }
    })
}
