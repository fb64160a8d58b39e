//! The server the hostile-client suites attack: one action tool whose actions a hostile client
//! can make expensive (a large `tags` array, a long error text, a panic, a long or CPU-bound
//! call, progress events), a failing resource template and a failing prompt whose errors
//! quote what they were sent. Shared by `hostile_serving.rs` and `hostile_stdio.rs`.

#![allow(dead_code, clippy::unwrap_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use wymcp::Prompt;
use wymcp::ResourceTemplate;
use wymcp::prompt::{GetPromptResult, PromptArgument, PromptArguments, PromptError};
use wymcp::resource::{ReadResource, ResourceContents, ResourceError, Variables};
use wymcp::tool::Failure;
use wymcp::{
    ActionResult, ActionSchema, ActionTool, Actions, Context, Data, Limits, Reply, Server,
};

/// The tool. `release` ends every `spin` call (they run on blocking threads until it is set).
pub(crate) struct Work {
    pub(crate) release: Arc<AtomicBool>,
}

impl ActionTool for Work {
    fn name(&self) -> &str {
        "work"
    }

    fn description(&self) -> &str {
        "Actions a hostile client can make expensive"
    }

    fn actions(&self) -> Actions {
        let text = || json!({"type": "string"});
        Actions::new()
            .action(
                "tag",
                ActionSchema::new("Tags a project")
                    .property("project", text())
                    .property(
                        "tags",
                        json!({"type": "array", "items": {"type": "string"}}),
                    ),
            )
            .action(
                "fail",
                ActionSchema::new("Fails quoting its text").property("text", text()),
            )
            .action(
                "crash",
                ActionSchema::new("Panics with its text").property("text", text()),
            )
            .action(
                "sleep",
                ActionSchema::new("Sleeps")
                    .property("ms", json!({"type": "integer", "minimum": 0}))
                    .required(["ms"]),
            )
            .action(
                "spin",
                ActionSchema::new("Busy on a blocking thread until released"),
            )
            .action(
                "progress",
                ActionSchema::new("Reports progress")
                    .property("steps", json!({"type": "integer", "minimum": 0})),
            )
    }

    async fn run_action(&self, action: &str, data: Data, ctx: Context) -> ActionResult {
        let field = |key: &str| data.get(key).cloned().unwrap_or(Value::Null);
        let text = field("text").as_str().unwrap_or_default().to_owned();
        match action {
            "fail" => Err(Failure::msg(format!("Project '{text}' not found"))),
            "crash" => panic!("{text}"),
            "sleep" => {
                let ms = field("ms").as_u64().unwrap_or(0);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                Ok(Reply::new(json!({"slept_ms": ms})))
            }
            "spin" => {
                let release = self.release.clone();
                let spins = ctx
                    .run_blocking(move || {
                        let mut spins = 0_u64;
                        while !release.load(Ordering::Acquire) {
                            spins = spins.wrapping_add(1);
                            std::hint::spin_loop();
                        }
                        spins
                    })
                    .await;
                Ok(Reply::new(json!({"spun": spins > 0})))
            }
            "progress" => {
                let steps = field("steps").as_u64().unwrap_or(1);
                for step in 0..steps {
                    ctx.progress(step as f64, Some(steps as f64), Some(&"x".repeat(1000)));
                }
                Ok(Reply::new(json!({"steps": steps})))
            }
            _ => Ok(Reply::new(json!({"tagged": field("project")}))),
        }
    }
}

/// A template whose every read fails, quoting the id it was asked for.
struct Failing;

impl ReadResource for Failing {
    async fn read(
        &self,
        _uri: &str,
        vars: Variables,
        _ctx: Context,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        let id = vars.get("id").unwrap_or_default();
        Err(ResourceError::Failed(format!("no record {id}")))
    }
}

/// A prompt that refuses any `hours`, quoting it.
struct Plan;

impl Prompt for Plan {
    fn name(&self) -> &str {
        "plan_my_day"
    }

    fn arguments(&self) -> Vec<PromptArgument> {
        vec![PromptArgument::required("hours")]
    }

    async fn get(
        &self,
        args: PromptArguments,
        _ctx: Context,
    ) -> Result<GetPromptResult, PromptError> {
        Err(PromptError::InvalidArguments(format!(
            "hours must be a number, not {}",
            args["hours"]
        )))
    }
}

/// The fixture with `limits`; `release` ends the `spin` calls.
pub(crate) fn server(limits: Limits, release: Arc<AtomicBool>) -> Server {
    Server::builder()
        .name("hostile")
        .limits(limits)
        .tool(Work { release })
        .resource_template(ResourceTemplate::new("rec://{id}", "record", Failing))
        .prompt(Plan)
        .build()
        .unwrap()
}

/// A `tools/call` of `work` in the session era.
pub(crate) fn call(id: u64, action: &str, data: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "work", "arguments": {"action": action, "data": data}}})
}

/// The JSON payload of a tool result's first text content.
pub(crate) fn payload(result: &Value) -> Value {
    let text = result["content"][0]["text"].as_str().unwrap();
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}
