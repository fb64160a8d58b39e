//! The tasks extension's part of [`ServerBuilder`]: how long tasks are kept, how many run.
//! Where they are kept is [`Backends::tasks`](crate::backend::Backends::tasks); which tools
//! run as tasks, and when they become one, is each tool's [`ToolPolicy`](crate::ToolPolicy),
//! given where it is registered.

use std::time::Duration;

use super::ServerBuilder;

impl ServerBuilder {
    /// How long a task is kept after it was created (default
    /// [`DEFAULT_TASK_TTL`](crate::task::DEFAULT_TASK_TTL), one hour); then `tasks/get` says
    /// it does not exist.
    pub fn task_ttl(mut self, ttl: Duration) -> Self {
        self.tasks.ttl = ttl;
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
    /// 100; at least 1): one caller cannot take every place. Without auth a caller is its
    /// client's address (IPv6 by its /64; behind a trusted proxy the forwarded one).
    pub fn task_max_running_per_principal(mut self, max: usize) -> Self {
        self.tasks.max_running_per_principal = max.max(1);
        self
    }
}
