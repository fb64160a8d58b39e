//! [`ToolPolicy`]: what the server applies to one tool, given where the tool is registered.

use tower::{BoxError, Layer, Service};

use crate::middleware::{BoxOperation, Layers, Operation, Response, Wrap};
use crate::task::{TaskResume, TaskStart, TaskSupport, Tasks, ToolTasks};

/// What the server applies to one tool beside its definition: the layers around its calls
/// and around its actions' calls, and how its calls run as tasks (the tasks extension). Given
/// where the tool is registered ([`ServerBuilder::tool_with`](crate::ServerBuilder::tool_with),
/// [`plain_tool_with`](crate::ServerBuilder::plain_tool_with),
/// [`typed_tool_with`](crate::ServerBuilder::typed_tool_with)), so it names no tool; `build()`
/// refuses an action the tool does not have.
///
/// ```
/// use std::time::Duration;
/// use serde_json::json;
/// use wymcp::task::{TaskStart, TaskSupport};
/// use wymcp::{ActionResult, ActionSchema, ActionTool, Actions, Context, Data, Reply, Server, ToolPolicy};
///
/// struct Reports;
///
/// impl ActionTool for Reports {
///     fn name(&self) -> &str { "reports" }
///     fn description(&self) -> &str { "Reports" }
///     fn actions(&self) -> Actions {
///         Actions::new()
///             .action("list", ActionSchema::new("List the reports"))
///             .action("export", ActionSchema::new("Export every report (minutes)"))
///     }
///     async fn run_action(&self, _action: &str, _data: Data, _ctx: Context) -> ActionResult {
///         Ok(Reply::new(json!({})))
///     }
/// }
///
/// let server = Server::builder()
///     .tool_with(
///         Reports,
///         ToolPolicy::new()
///             .layer(tower::limit::ConcurrencyLimitLayer::new(8))
///             .action_layer("export", tower::timeout::TimeoutLayer::new(Duration::from_secs(600)))
///             .action_task_support("export", TaskSupport::Required)
///             .task_start(TaskStart::Immediately),
///     )
///     .build()
///     .unwrap();
/// # let _ = server;
/// ```
#[derive(Default)]
#[must_use]
pub struct ToolPolicy {
    layers: Vec<Wrap>,
    action_layers: Vec<(String, Wrap)>,
    tasks: ToolTasks,
}

impl std::fmt::Debug for ToolPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let actions: Vec<&str> = self.action_layers.iter().map(|(a, _)| a.as_str()).collect();
        f.debug_struct("ToolPolicy")
            .field("layers", &self.layers.len())
            .field("action_layers", &actions)
            .field("tasks", &self.tasks)
            .finish()
    }
}

impl ToolPolicy {
    /// No layer, no task support: what a tool registered without a policy gets.
    pub fn new() -> Self {
        ToolPolicy::default()
    }

    /// Wraps the tool's calls in `layer`, inside the server's and the call layers
    /// ([`ServerBuilder::layer`](crate::ServerBuilder::layer)); layers added first run first.
    pub fn layer<L>(mut self, layer: L) -> Self
    where
        L: Layer<BoxOperation> + Send + Sync + 'static,
        L::Service: Service<Operation, Response = Response> + Clone + Send + Sync + 'static,
        <L::Service as Service<Operation>>::Error: Into<BoxError>,
        <L::Service as Service<Operation>>::Future: Send + 'static,
    {
        self.layers.push(Wrap::new(layer));
        self
    }

    /// Wraps the calls of the tool's action `action` in `layer`, inside the tool's layers.
    pub fn action_layer<L>(mut self, action: impl Into<String>, layer: L) -> Self
    where
        L: Layer<BoxOperation> + Send + Sync + 'static,
        L::Service: Service<Operation, Response = Response> + Clone + Send + Sync + 'static,
        <L::Service as Service<Operation>>::Error: Into<BoxError>,
        <L::Service as Service<Operation>>::Future: Send + 'static,
    {
        self.action_layers.push((action.into(), Wrap::new(layer)));
        self
    }

    /// Whether the tool's calls run as tasks ([`crate::task`]; MCP 2026-07-28): a client
    /// declaring the extension is answered a task handle.
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        self.tasks.support = Some(support);
        self
    }

    /// Whether the calls of action `action` run as tasks, over the tool's own
    /// [`task_support`](Self::task_support) (an export that takes minutes beside reads that
    /// do not).
    pub fn action_task_support(mut self, action: impl Into<String>, support: TaskSupport) -> Self {
        self.tasks.actions.push((action.into(), support));
        self
    }

    /// When a call becomes a task (default [`TaskStart::Immediately`]).
    pub fn task_start(mut self, start: TaskStart) -> Self {
        self.tasks.start = Some(start);
        self
    }

    /// What becomes of a task whose node stopped before it ended (default
    /// [`TaskResume::Fail`]): with [`TaskResume::Rerun`] the node that finds it runs the call
    /// again from its arguments. A tool started [`TaskStart::OnHandOff`] is never rerun (its
    /// rounds before the hand-off are gone).
    pub fn task_resume(mut self, resume: TaskResume) -> Self {
        self.tasks.resume = Some(resume);
        self
    }

    /// Attaches the policy to tool `tool`.
    pub(super) fn apply(self, tool: &str, layers: &mut Layers, tasks: &mut Tasks) {
        for wrap in self.layers {
            layers.tools.push((tool.to_owned(), wrap));
        }
        for (action, wrap) in self.action_layers {
            layers.actions.push((tool.to_owned(), action, wrap));
        }
        tasks.policies_mut().set(tool, self.tasks);
    }

    /// The policy's task settings, for a tool added while the server runs; `None` when it
    /// has layers (a server's layers are set at build).
    pub(crate) fn into_tasks(self) -> Option<ToolTasks> {
        (self.layers.is_empty() && self.action_layers.is_empty()).then_some(self.tasks)
    }
}
