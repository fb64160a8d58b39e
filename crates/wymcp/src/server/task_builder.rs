//! The tasks extension's part of [`ServerBuilder`]: which tools run as tasks, when they
//! become one, where tasks are kept and for how long.

use std::sync::Arc;
use std::time::Duration;

use super::ServerBuilder;
use crate::task::{TaskResume, TaskStart, TaskStore, TaskSupport};

impl ServerBuilder {
    /// Whether tool `tool` runs as a task (the tasks extension, [`crate::task`]; MCP
    /// 2026-07-28): a client declaring the extension is answered a task handle; `build()`
    /// refuses a tool that does not exist.
    pub fn task_support(mut self, tool: impl Into<String>, support: TaskSupport) -> Self {
        self.tasks.support.insert(tool.into(), support);
        self
    }

    /// Where tasks are kept (default [`InMemoryTaskStore`](crate::task::InMemoryTaskStore)).
    pub fn task_store(mut self, store: impl TaskStore) -> Self {
        self.tasks.store = Arc::new(store);
        self
    }

    /// How long a task is kept after it was created (default
    /// [`DEFAULT_TASK_TTL`](crate::task::DEFAULT_TASK_TTL), one hour); then `tasks/get` says
    /// it does not exist.
    pub fn task_ttl(mut self, ttl: Duration) -> Self {
        self.tasks.ttl = ttl;
        self
    }

    /// Whether action `action` of action tool `tool` runs as a task, over the tool's own
    /// [`task_support`](Self::task_support) (an export that takes minutes beside reads that do
    /// not); `build()` refuses a tool or action that does not exist.
    ///
    /// ```
    /// use wymcp::task::TaskSupport;
    ///
    /// let builder = wymcp::Server::builder()
    ///     // ... .tool(Reports) ...
    ///     .task_support_for_action("reports", "export", TaskSupport::Required);
    /// # let _ = builder;
    /// ```
    pub fn task_support_for_action(
        mut self,
        tool: impl Into<String>,
        action: impl Into<String>,
        support: TaskSupport,
    ) -> Self {
        self.tasks
            .action_support
            .insert((tool.into(), action.into()), support);
        self
    }

    /// When a call of tool `tool` becomes a task (default [`TaskStart::Immediately`]);
    /// `build()` refuses a tool that does not exist.
    pub fn task_start(mut self, tool: impl Into<String>, start: TaskStart) -> Self {
        self.tasks.start.insert(tool.into(), start);
        self
    }

    /// What becomes of a task of tool `tool` whose node stopped before it ended (default
    /// [`TaskResume::Fail`]): with [`TaskResume::Rerun`] the node that finds it runs the call
    /// again from its arguments. A tool started [`TaskStart::OnHandOff`] is never rerun (its
    /// rounds before the hand-off are gone). `build()` refuses a tool that does not exist.
    pub fn task_resume(mut self, tool: impl Into<String>, resume: TaskResume) -> Self {
        self.tasks.resume.insert(tool.into(), resume);
        self
    }

    /// How often the node running a task renews its heartbeat and picks up what other nodes
    /// sharing the store recorded (default [`HEARTBEAT`](crate::task::HEARTBEAT), 5 s; at
    /// least 10 ms): a task whose heartbeat is three beats old is failed by the node that
    /// finds it. Every node of a deployment should use the same value.
    pub fn task_heartbeat(mut self, every: Duration) -> Self {
        self.tasks.heartbeat = every.max(Duration::from_millis(10));
        self
    }

    /// The most task calls this node runs at once (default
    /// [`DEFAULT_MAX_RUNNING`](crate::task::DEFAULT_MAX_RUNNING), 1,000; at least 1); one more
    /// is refused `-32603`, naming this setting.
    pub fn task_max_running(mut self, max: usize) -> Self {
        self.tasks.max_running = max.max(1);
        self
    }

    /// The most task calls this node runs at once for one principal, the subject of the
    /// caller's identity (default
    /// [`DEFAULT_MAX_RUNNING_PER_PRINCIPAL`](crate::task::DEFAULT_MAX_RUNNING_PER_PRINCIPAL),
    /// 100; at least 1): one caller cannot take every place. Without auth every caller is the
    /// same principal.
    pub fn task_max_running_per_principal(mut self, max: usize) -> Self {
        self.tasks.max_running_per_principal = max.max(1);
        self
    }
}
