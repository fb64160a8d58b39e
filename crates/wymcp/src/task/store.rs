//! [`TaskStore`]: where tasks are kept, behind a trait; [`InMemoryTaskStore`] by default.

use std::collections::HashMap;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where a task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskStatus {
    /// The call is running.
    Working,
    /// The call waits for input from the client.
    InputRequired,
    /// The call ended; its result (perhaps `isError`) is kept.
    Completed,
    /// The call ended in a protocol-level error (a fault), kept as `error`.
    Failed,
    /// The client cancelled it.
    Cancelled,
}

impl TaskStatus {
    /// The wire value (`working`, `input_required`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// Whether the task ended (completed, failed or cancelled).
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// One task as a store keeps it: plain data, serializable for a durable store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskRecord {
    /// The unguessable id (`Mcp-Name` of `tasks/*`).
    pub id: String,
    /// The subject of the identity that created it (`None`: an unauthenticated caller).
    pub principal: Option<String>,
    /// The tool called.
    pub tool: String,
    /// Where it stands.
    pub status: TaskStatus,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_at_ms: u64,
    /// When its status last changed, in milliseconds since the Unix epoch.
    pub last_updated_at_ms: u64,
    /// How long after creation it is kept, in milliseconds.
    pub ttl_ms: u64,
    /// The tool's result, once completed.
    pub result: Option<Value>,
    /// The JSON-RPC error, once failed.
    pub error: Option<Value>,
}

impl TaskRecord {
    /// Whether the task's TTL is over at `now_ms`.
    pub fn is_expired(&self, now_ms: u64) -> bool {
        now_ms >= self.created_at_ms.saturating_add(self.ttl_ms)
    }
}

/// Why a store failed.
#[derive(Debug, thiserror::Error)]
#[error("task store: {0}")]
pub struct TaskStoreError(pub String);

/// Where tasks are kept. Implement it for a store shared by several nodes or one that outlives
/// a restart; the serving core serializes the transitions of the tasks its node runs.
pub trait TaskStore: Send + Sync + 'static {
    /// Stores `task`, replacing any with its id.
    fn put(&self, task: TaskRecord) -> Result<(), TaskStoreError>;
    /// The task `id`, if kept.
    fn get(&self, id: &str) -> Result<Option<TaskRecord>, TaskStoreError>;
    /// Forgets the task `id`.
    fn remove(&self, id: &str) -> Result<(), TaskStoreError>;
    /// Forgets every task whose TTL is over at `now_ms`; answers how many.
    fn remove_expired(&self, now_ms: u64) -> Result<usize, TaskStoreError>;
}

/// The default [`TaskStore`]: a map in this process (tasks end with it).
///
/// ```
/// use wymcp::task::{InMemoryTaskStore, TaskStore};
///
/// let store = InMemoryTaskStore::default();
/// assert!(store.get("no-such-task").unwrap().is_none());
/// ```
#[derive(Debug, Default)]
pub struct InMemoryTaskStore {
    tasks: Mutex<HashMap<String, TaskRecord>>,
}

impl InMemoryTaskStore {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, TaskRecord>> {
        // A panic while holding the lock leaves plain data behind: keep serving it.
        self.tasks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl TaskStore for InMemoryTaskStore {
    fn put(&self, task: TaskRecord) -> Result<(), TaskStoreError> {
        self.map().insert(task.id.clone(), task);
        Ok(())
    }

    fn get(&self, id: &str) -> Result<Option<TaskRecord>, TaskStoreError> {
        Ok(self.map().get(id).cloned())
    }

    fn remove(&self, id: &str) -> Result<(), TaskStoreError> {
        self.map().remove(id);
        Ok(())
    }

    fn remove_expired(&self, now_ms: u64) -> Result<usize, TaskStoreError> {
        let mut map = self.map();
        let before = map.len();
        map.retain(|_, task| !task.is_expired(now_ms));
        Ok(before - map.len())
    }
}
