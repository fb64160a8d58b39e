//! The server every node of the scale-out tests serves: progress, a call asking the client
//! (elicitation and sampling), one running until cancelled, one announcing a resource change,
//! and that resource.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::{Map, Value, json};
use wymcp::Resource;
use wymcp::backend::Backends;
use wymcp::mrtr::RequestStateKeys;
use wymcp::session::{Elicitation, Sampling};
use wymcp::task::{TaskResume, TaskSupport};
use wymcp::{
    CallError, CallOutput, CallResult, Context, PlainTool, Server, ServerBuilder, ToolPolicy,
};

pub(crate) const README: &str = "test://readme";

fn object(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

struct Steps;

impl PlainTool for Steps {
    fn name(&self) -> &str {
        "steps"
    }
    fn description(&self) -> &str {
        "Sends progress"
    }
    fn input_schema(&self) -> Map<String, Value> {
        object(json!({"type": "object"}))
    }
    async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
        ctx.progress(1.0, Some(2.0), Some("half way"));
        ctx.progress(2.0, Some(2.0), None);
        Ok(CallOutput::json(json!({"steps": 2})))
    }
}

struct Ask;

impl PlainTool for Ask {
    fn name(&self) -> &str {
        "ask"
    }
    fn description(&self) -> &str {
        "Asks the user's name, then a summary"
    }
    fn input_schema(&self) -> Map<String, Value> {
        object(json!({"type": "object"}))
    }
    async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let form = Elicitation::form(
            "What is your name?",
            json!({"type": "object", "properties": {"name": {"type": "string"}}}),
        )
        .key("name");
        let failed = |e: wymcp::session::ClientRequestError| CallError::tool(e.to_string());
        let name = ctx.elicit(form).await.map_err(failed)?;
        let sampling = Sampling::prompt("Summarize").max_tokens(20).key("summary");
        let summary = ctx.sample(sampling).await.map_err(failed)?;
        Ok(CallOutput::json(json!({
            "name": name["content"]["name"],
            "summary": summary["content"]["text"],
        })))
    }
}

struct Slow;

impl PlainTool for Slow {
    fn name(&self) -> &str {
        "slow"
    }
    fn description(&self) -> &str {
        "Runs until cancelled"
    }
    fn input_schema(&self) -> Map<String, Value> {
        object(json!({"type": "object"}))
    }
    async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
        ctx.progress(1.0, None, Some("started"));
        std::future::pending::<()>().await;
        Ok(CallOutput::text("never"))
    }
}

/// Naps `ms` milliseconds, then answers: safe to run again (a task of it is rerun).
struct Nap;

impl PlainTool for Nap {
    fn name(&self) -> &str {
        "nap"
    }
    fn description(&self) -> &str {
        "Naps ms milliseconds"
    }
    fn input_schema(&self) -> Map<String, Value> {
        object(json!({"type": "object", "properties": {"ms": {"type": "integer"}}}))
    }
    async fn run(&self, arguments: Map<String, Value>, _ctx: Context) -> CallResult {
        let ms = arguments.get("ms").and_then(Value::as_u64).unwrap_or(0);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        Ok(CallOutput::json(json!({"napped": ms})))
    }
}

/// Announces that the readme changed, from whichever node runs it.
struct Touch(Arc<OnceLock<Server>>);

impl PlainTool for Touch {
    fn name(&self) -> &str {
        "touch"
    }
    fn description(&self) -> &str {
        "Says the readme changed"
    }
    fn input_schema(&self) -> Map<String, Value> {
        object(json!({"type": "object"}))
    }
    async fn run(&self, _arguments: Map<String, Value>, _ctx: Context) -> CallResult {
        if let Some(server) = self.0.get() {
            server.notify_resource_updated(README).await;
        }
        Ok(CallOutput::json(json!({"touched": README})))
    }
}

/// A node's server: every node builds its own, as separate processes would.
pub(crate) fn server(keys: Option<RequestStateKeys>) -> Server {
    build(keys, false, |builder| builder)
}

/// A node's sessions, their events and the bus on `redis`.
pub(crate) fn on_redis(redis: &wymcp_redis::Redis) -> Backends {
    Backends::new()
        .sessions(redis.session_store())
        .events(redis.event_log())
        .bus(redis.bus())
}

/// [`server`] as a node of a deployment on `redis`: its sessions, events and bus there.
pub(crate) fn node_server(redis: &wymcp_redis::Redis) -> Server {
    build(None, false, |builder| builder.backends(on_redis(redis)))
}

/// The same server as a node of a deployment on `redis` runs it: the stateless era's keys
/// shared, the sessions, events, bus and subscriptions kept in Redis.
pub(crate) fn shared_server(keys: RequestStateKeys, redis: &wymcp_redis::Redis) -> Server {
    build(Some(keys), false, |builder| {
        builder.backends(on_redis(redis).subscriptions(redis.subscription_store()))
    })
}

/// The same server with its sessions, events, bus and tasks kept in `redis`: `steps` (ends at once), `slow` (never ends),
/// `ask` (waits for the client's answers) and `nap` (rerun when its node stops) run as tasks
/// for a client declaring the extension; heartbeats every 200 ms, so a task of a stopped node
/// is failed, or rerun, within a second.
pub(crate) fn tasks_server(keys: Option<RequestStateKeys>, redis: &wymcp_redis::Redis) -> Server {
    build(keys, true, |builder| {
        with_tasks(builder, on_redis(redis).tasks(redis.task_store()))
    })
}

/// [`tasks_server`] running at most `per_principal` tasks for one principal, on all nodes.
pub(crate) fn tasks_server_capped(redis: &wymcp_redis::Redis, per_principal: usize) -> Server {
    build(None, true, |builder| {
        with_tasks(builder, Backends::new().tasks(redis.task_store()))
            .task_max_running_per_principal(per_principal)
    })
}

fn with_tasks(builder: ServerBuilder, backends: Backends) -> ServerBuilder {
    let rerun = ToolPolicy::new()
        .task_support(TaskSupport::Optional)
        .task_resume(TaskResume::Rerun);
    builder
        .plain_tool_with(Nap, rerun)
        .backends(backends)
        .task_heartbeat(Duration::from_millis(200))
}

/// The node's server: `steps`, `ask` and `slow` run as tasks when `tasks` says so.
fn build(
    keys: Option<RequestStateKeys>,
    tasks: bool,
    more: impl FnOnce(ServerBuilder) -> ServerBuilder,
) -> Server {
    let me = Arc::new(OnceLock::new());
    let policy = || match tasks {
        true => ToolPolicy::new().task_support(TaskSupport::Optional),
        false => ToolPolicy::new(),
    };
    let mut builder = Server::builder()
        .name("nodes")
        .version("1.0.0")
        .list_changed(true)
        .plain_tool_with(Steps, policy())
        .plain_tool_with(Ask, policy())
        .plain_tool_with(Slow, policy())
        .plain_tool(Touch(me.clone()))
        .resource(Resource::text(README, "readme", "Read me first."));
    if let Some(keys) = keys {
        builder = builder.request_state_keys(keys);
    }
    let server = more(builder).build().expect("the fixture builds");
    let _ = me.set(server.clone());
    server
}

/// The node's server as `more` completes it (no request-state keys).
pub(crate) fn server_with(more: impl FnOnce(ServerBuilder) -> ServerBuilder) -> Server {
    build(None, false, more)
}

/// The node's server with `limits` (no request-state keys).
pub(crate) fn server_with_limits(limits: wymcp::Limits) -> Server {
    build(None, false, |builder| builder.limits(limits))
}
