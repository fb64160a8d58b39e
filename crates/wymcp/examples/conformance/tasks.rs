//! The tasks extension's fixtures (`tasks-*` scenarios of 0.2.0-alpha.12): `greet` (never a
//! task), `slow_compute` (a task when the client declares the extension; sleeps `seconds`,
//! and ends as cancelled when cancelled), `failing_job` (always a task: a tool error after a
//! second), `protocol_error_job` (panics: the task fails), the input tools `confirm_delete`
//! and `multi_input` (tasks that park as `input_required` until `tasks/update` answers: one
//! question, then two at once), and `test_tool_with_task` (asks for a name in a multi
//! round-trip round, then hands off to a task whose result greets that name).

use std::time::Duration;

use serde_json::{Map, Value, json};
use wymcp::session::Elicitation;
use wymcp::task::{TaskStart, TaskSupport};
use wymcp::{CallError, CallOutput, CallResult, Context, PlainTool, ServerBuilder, ToolPolicy};

/// Registers the tools and their task support on `builder`.
pub(crate) fn register(mut builder: ServerBuilder) -> ServerBuilder {
    let tools = [
        (Job::Greet, TaskSupport::Forbidden),
        (Job::SlowCompute, TaskSupport::Optional),
        (Job::Failing, TaskSupport::Required),
        (Job::ProtocolError, TaskSupport::Optional),
        (Job::ConfirmDelete, TaskSupport::Optional),
        (Job::MultiInput, TaskSupport::Optional),
        (Job::InputThenTask, TaskSupport::Required),
    ];
    for (tool, support) in tools {
        let mut policy = ToolPolicy::new().task_support(support);
        if tool.name() == "test_tool_with_task" {
            policy = policy.task_start(TaskStart::OnHandOff);
        }
        builder = builder.plain_tool_with(tool, policy);
    }
    builder
}

#[derive(Clone, Copy)]
enum Job {
    Greet,
    SlowCompute,
    Failing,
    ProtocolError,
    ConfirmDelete,
    MultiInput,
    InputThenTask,
}

impl PlainTool for Job {
    fn name(&self) -> &str {
        match self {
            Job::Greet => "greet",
            Job::SlowCompute => "slow_compute",
            Job::Failing => "failing_job",
            Job::ProtocolError => "protocol_error_job",
            Job::ConfirmDelete => "confirm_delete",
            Job::MultiInput => "multi_input",
            Job::InputThenTask => "test_tool_with_task",
        }
    }

    fn description(&self) -> &str {
        match self {
            Job::Greet => "Greets by name, at once",
            Job::SlowCompute => "Sleeps for `seconds`, then answers; runs as a task when it can",
            Job::Failing => "Always runs as a task, and fails with a tool error after a second",
            Job::ProtocolError => "Runs as a task and faults (a protocol-level failure)",
            Job::ConfirmDelete => "Asks the user to confirm a deletion",
            Job::MultiInput => "Asks the user two questions at once",
            Job::InputThenTask => "Asks the user's name, then greets them from a task",
        }
    }

    fn input_schema(&self) -> Map<String, Value> {
        let schema = match self {
            Job::Greet => json!({"type": "object", "properties": {"name": {"type": "string"}}}),
            Job::SlowCompute => json!({"type": "object", "properties": {
                "seconds": {"type": "number", "minimum": 0, "maximum": 600},
                "label": {"type": "string"}
            }}),
            _ => json!({"type": "object", "properties": {}, "additionalProperties": true}),
        };
        schema.as_object().cloned().unwrap_or_default()
    }

    async fn run(&self, arguments: Map<String, Value>, ctx: Context) -> CallResult {
        match self {
            Job::Greet => {
                let name = arguments
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("you");
                Ok(CallOutput::text(format!("Hello, {name}!")))
            }
            Job::SlowCompute => {
                let seconds = arguments
                    .get("seconds")
                    .and_then(Value::as_f64)
                    .unwrap_or(1.0);
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_secs_f64(seconds)) => {}
                    () = ctx.cancellation().cancelled() => {
                        return Err(CallError::tool("cancelled"));
                    }
                }
                Ok(CallOutput::text(format!("Computed after {seconds} s")))
            }
            Job::Failing => {
                tokio::time::sleep(Duration::from_secs(1)).await;
                Err(CallError::tool("The job failed, as it always does"))
            }
            Job::ProtocolError => panic!("protocol_error_job faults on purpose"),
            Job::ConfirmDelete => {
                let answer = ctx.elicit(question("confirm")).await.map_err(failed)?;
                Ok(CallOutput::text(format!("answered: {answer}")))
            }
            Job::MultiInput => {
                let (name, confirm) = tokio::join!(
                    ctx.elicit(question("name")),
                    ctx.elicit(question("confirm"))
                );
                let (name, confirm) = (name.map_err(failed)?, confirm.map_err(failed)?);
                Ok(CallOutput::text(format!("answered: {name} and {confirm}")))
            }
            Job::InputThenTask => {
                let ask = Elicitation::form(
                    "What is your name?",
                    json!({"type": "object", "properties": {"name": {"type": "string"}}}),
                )
                .key("user_name");
                let answer = ctx.elicit(ask).await.map_err(failed)?;
                let name = answer["content"]["name"].as_str().unwrap_or("stranger");
                ctx.hand_off_to_task().await;
                tokio::time::sleep(Duration::from_millis(100)).await;
                Ok(CallOutput::text(format!("Hello, {name}, from a task")))
            }
        }
    }
}

/// A yes/no question under `key`.
fn question(key: &str) -> Elicitation {
    Elicitation::form(
        "Delete the file?",
        json!({"type": "object", "properties": {
            "confirm": {"type": "boolean"}, "name": {"type": "string"}
        }}),
    )
    .key(key)
}

fn failed(err: wymcp::session::ClientRequestError) -> CallError {
    CallError::tool(format!("Elicitation failed: {err}"))
}
