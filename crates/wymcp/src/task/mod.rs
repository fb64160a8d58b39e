//! The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663, MCP 2026-07-28): a tool
//! declared to support tasks, called by a client that declares the extension in its request's
//! capabilities, answers at once with a task handle (`resultType: "task"`) and runs on; the
//! client polls `tasks/get` for its status and, once done, its result, and may `tasks/cancel`
//! it.
//!
//! Task ids are 128 random bits; each task is bound to the principal of the identity that
//! created it, or without one to the creating client's address (another caller is told the
//! task does not exist), and kept for its TTL, then
//! forgotten. Tasks are kept in a [`TaskStore`] ([`InMemoryTaskStore`] unless set).
//!
//! ```
//! use std::time::Duration;
//! use wymcp::Server;
//! use wymcp::task::TaskSupport;
//! use wymcp::ToolPolicy;
//!
//! // Which tools run as tasks is each tool's policy, where it is registered:
//! let runs_as_task = ToolPolicy::new().task_support(TaskSupport::Optional);
//! let server = Server::builder()
//!     // ... .plain_tool_with(Report, runs_as_task) ...
//!     .task_ttl(Duration::from_secs(600))
//!     .build()?;
//! # let _ = server;
//! # Ok::<(), wymcp::ConfigurationError>(())
//! ```

mod clock;
pub(crate) mod hand_off;
pub(crate) mod host;
pub(crate) mod input;
mod policies;
mod resume;
#[cfg(feature = "otel")]
mod running;
pub(crate) mod serve;
pub(crate) mod store;
mod transitions;
mod watch;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use input::TaskInput;
pub(crate) use policies::{TaskPolicies, ToolTasks};
pub use store::TaskStatus;
pub(crate) use store::{InMemoryTaskStore, ResumableCall, TaskRecord, TaskStore, TaskStoreError};
pub(crate) use watch::Watch;

pub use crate::protocol::extensions::TASKS_EXTENSION;
/// How long a task is kept after it was created, unless set: one hour.
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(3600);
/// The most task calls one node runs at once, unless set.
pub const DEFAULT_MAX_RUNNING: usize = 1_000;
/// The most task calls one node runs at once for one principal (an unauthenticated caller is
/// counted by its client's address; over stdio, the one client), unless set.
pub const DEFAULT_MAX_RUNNING_PER_PRINCIPAL: usize = 100;
/// How often a client is told to poll `tasks/get`: every half second.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(500);
/// How often the node running a task renews its heartbeat in the store (unless
/// [`ServerBuilder::task_heartbeat`](crate::ServerBuilder::task_heartbeat) sets it). A node
/// sharing the store finds a task whose heartbeat is three beats old, and that it does not
/// run, left by a node that stopped: `tasks/get` reports it `failed`, naming that, or runs it
/// again when its tool is [`TaskResume::Rerun`]. At each beat
/// the running node also picks up what other nodes recorded: a cancel, answers to its input
/// requests.
pub const HEARTBEAT: Duration = Duration::from_secs(5);

/// Whether a tool runs as a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TaskSupport {
    /// Never: every call answers its result (the default).
    #[default]
    Forbidden,
    /// When the client declares the extension; otherwise the call answers its result.
    Optional,
    /// Always: a client that does not declare the extension is refused `-32021`.
    Required,
}

/// When a task-supporting call, from a client that declares the extension, becomes a task.
///
/// ```
/// use wymcp::ToolPolicy;
/// use wymcp::task::{TaskStart, TaskSupport};
///
/// // `deploy` first asks the user which environment (multi round-trip, answered at once),
/// // then calls `ctx.hand_off_to_task().await` and runs on as a task (docs/tasks.md has
/// // the whole tool): registered with `.plain_tool_with(Deploy, policy)`.
/// let policy = ToolPolicy::new()
///     .task_support(TaskSupport::Required)
///     .task_start(TaskStart::OnHandOff);
/// # let _ = policy;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TaskStart {
    /// As it is called: the call answers its task handle at once (the default).
    #[default]
    Immediately,
    /// When its code calls [`Context::hand_off_to_task`](crate::Context::hand_off_to_task):
    /// until then it is a plain call (its input requests are multi round-trip rounds, answered
    /// `input_required`); the request that reaches the hand-off is answered the task handle,
    /// and the same code runs on as the task. A call that never hands off answers its result.
    OnHandOff,
}

/// What becomes of a task whose node stopped before it ended (nodes sharing a task store).
///
/// ```
/// use wymcp::ToolPolicy;
/// use wymcp::task::{TaskResume, TaskSupport};
///
/// // `reindex` rebuilds the search index from the database: running it twice is harmless.
/// // Registered with `.plain_tool_with(Reindex, policy)`.
/// let policy = ToolPolicy::new()
///     .task_support(TaskSupport::Optional)
///     .task_resume(TaskResume::Rerun);
/// # let _ = policy;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TaskResume {
    /// It is reported `failed`, naming why (the default).
    #[default]
    Fail,
    /// Its call is run again, from the start, by the node that finds it: for a tool whose
    /// call is safe to repeat (idempotent, or picking up its own progress where it keeps
    /// it). The call's params and its caller are kept in the task record for this.
    Rerun,
}

/// A task this node runs: its call's cancellation, its input requests, who created it.
pub(crate) struct Running {
    pub(crate) token: CancellationToken,
    pub(crate) input: Arc<TaskInput>,
    pub(crate) principal: Option<String>,
}

/// The tasks of one server: which tools support them, the store, the calls running here.
pub(crate) struct Tasks {
    /// Which tools run as tasks, and how: set at build, and changed with the tools of a
    /// server built with live tools (`ToolChange::tool_with`).
    policies: RwLock<TaskPolicies>,
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) ttl: Duration,
    pub(crate) poll_interval: Duration,
    /// The most task calls this node runs at once, in all and per principal.
    pub(crate) max_running: usize,
    pub(crate) max_running_per_principal: usize,
    /// How often a running task's heartbeat is renewed.
    pub(crate) heartbeat: Duration,
    /// This server's node id in task records (random per build).
    pub(crate) node: String,
    /// The calls this node runs, by task id: cancelling one ends its call.
    pub(crate) running: Mutex<HashMap<String, Running>>,
    /// When this node last swept the store of expired tasks (ms since the epoch).
    pub(crate) swept_at_ms: std::sync::atomic::AtomicU64,
    /// Serializes the status transitions of this node's tasks (a cancel racing a finish or an
    /// answer); held across the store's round trips.
    pub(crate) transitions: tokio::sync::Mutex<()>,
    /// Where status changes are announced (`notifications/tasks` on listen streams).
    pub(crate) watch: Watch,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("policies", &self.policies)
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

impl Default for Tasks {
    fn default() -> Self {
        Tasks {
            policies: RwLock::default(),
            store: Arc::new(InMemoryTaskStore::default()),
            ttl: DEFAULT_TASK_TTL,
            poll_interval: DEFAULT_POLL_INTERVAL,
            max_running: DEFAULT_MAX_RUNNING,
            max_running_per_principal: DEFAULT_MAX_RUNNING_PER_PRINCIPAL,
            heartbeat: HEARTBEAT,
            node: format!("{:016x}", u64::from_ne_bytes(crate::random::bytes())),
            running: Mutex::new(HashMap::new()),
            swept_at_ms: std::sync::atomic::AtomicU64::new(0),
            transitions: tokio::sync::Mutex::new(()),
            watch: Watch::default(),
        }
    }
}

impl Tasks {
    /// Which tools run as tasks now.
    pub(crate) fn policies(&self) -> RwLockReadGuard<'_, TaskPolicies> {
        self.policies.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Which tools run as tasks, while the server is built.
    pub(crate) fn policies_mut(&mut self) -> &mut TaskPolicies {
        self.policies
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Makes `tasks` the whole task settings of each tool named (tools added while the
    /// server runs), in one step.
    pub(crate) fn replace_policies(&self, tools: Vec<(String, ToolTasks)>) {
        if tools.is_empty() {
            return;
        }
        let mut policies = self
            .policies
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        for (tool, tasks) in tools {
            policies.replace(&tool, tasks);
        }
    }

    pub(crate) fn resume_of(&self, tool: &str) -> TaskResume {
        self.policies().resume_of(tool)
    }
}
