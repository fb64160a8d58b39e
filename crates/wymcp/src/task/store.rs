//! [`TaskStore`]: where tasks are kept, behind a trait; [`InMemoryTaskStore`] by default.

use std::collections::HashMap;
use std::sync::Mutex;

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

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
    /// Whom it belongs to: the principal of the identity that created it; without one,
    /// `anonymous@<address>` of the creating client (`None`: an unauthenticated caller whose
    /// address the transport does not know, stdio's one client).
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
    /// While `input_required`: the requests the call waits on, by key (each an
    /// `{"method": …, "params": …}` object), as `tasks/get` shows them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<Map<String, Value>>,
    /// Answers `tasks/update` brought to a node that does not run the task, for the node
    /// running it to hand over at its next heartbeat (only keys outstanding then are kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_answers: Option<Map<String, Value>>,
    /// The node running the call (`None`: a node without an id), so another node sharing the
    /// store can tell a task whose node stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// When the running node last said it still runs the call, in milliseconds since the Unix
    /// epoch (renewed every [`HEARTBEAT`](crate::task::HEARTBEAT), or as configured, while it
    /// runs).
    #[serde(default)]
    pub heartbeat_ms: u64,
    /// The call as it was made, kept for a tool whose tasks are run again when their node
    /// stops ([`TaskResume::Rerun`](crate::task::TaskResume::Rerun)); `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<ResumableCall>,
}

/// What a node needs to run a task's call again: the `tools/call` params and who asked, with
/// what capabilities.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ResumableCall {
    /// The `tools/call` params (`name`, `arguments`).
    pub params: Value,
    /// The client's capabilities of the request that created the task.
    pub client_capabilities: Value,
    /// The caller's identity (`{"subject": …, "claims": {…}}`), when authenticated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<Value>,
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
/// a restart (`wymcp-redis` has one); the serving core serializes the transitions of the tasks
/// its node runs. Each method is one round trip to the store.
///
/// ```
/// use futures_util::future::BoxFuture;
/// use wymcp::backend::{InMemoryTaskStore, TaskRecord, TaskStore, TaskStoreError};
///
/// /// Counts the tasks it is asked to keep.
/// #[derive(Default)]
/// struct Counting {
///     inner: InMemoryTaskStore,
///     puts: std::sync::atomic::AtomicUsize,
/// }
///
/// impl TaskStore for Counting {
///     fn put(&self, task: TaskRecord) -> BoxFuture<'_, Result<(), TaskStoreError>> {
///         self.puts.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
///         self.inner.put(task)
///     }
///     fn get<'a>(&'a self, id: &'a str)
///         -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
///         self.inner.get(id)
///     }
///     fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), TaskStoreError>> {
///         self.inner.remove(id)
///     }
///     fn remove_expired(&self, now_ms: u64) -> BoxFuture<'_, Result<usize, TaskStoreError>> {
///         self.inner.remove_expired(now_ms)
///     }
/// }
/// ```
pub trait TaskStore: Send + Sync + 'static {
    /// Stores `task`, replacing any with its id.
    fn put(&self, task: TaskRecord) -> BoxFuture<'_, Result<(), TaskStoreError>>;
    /// The task `id`, if kept.
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>>;
    /// Forgets the task `id`.
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), TaskStoreError>>;
    /// Forgets every task whose TTL is over at `now_ms`; answers how many (a store that
    /// expires records by itself answers 0).
    fn remove_expired(&self, now_ms: u64) -> BoxFuture<'_, Result<usize, TaskStoreError>>;

    /// Stores the new running `task` unless its principal already runs `max` tasks on any
    /// node sharing this store, counting the tasks whose heartbeat is at `fresh_since_ms` or
    /// later (a task whose node stopped stops counting); answers whether it stored. For
    /// [`ServerBuilder::task_max_running_per_principal`](crate::ServerBuilder::task_max_running_per_principal)
    /// over every node.
    ///
    /// The default stores and answers `true`: a store of one process leaves the count to the
    /// node, which counts its own tasks in any case. A store several processes share
    /// overrides it (`wymcp-redis` does, counting in one script).
    fn put_admitted(
        &self,
        task: TaskRecord,
        max: usize,
        fresh_since_ms: u64,
    ) -> BoxFuture<'_, Result<bool, TaskStoreError>> {
        let _ = (max, fresh_since_ms);
        Box::pin(async move { self.put(task).await.map(|()| true) })
    }

    /// Stores `task` only if the record kept under its id still has `node` and
    /// `heartbeat_ms` (what the caller read): a compare-and-set, so that of several nodes
    /// finding the same task left by a stopped node, one takes it over. Answers whether it
    /// stored.
    ///
    /// The default reads, then writes: atomic only for a store one process uses. A store
    /// several processes share overrides it (`wymcp-redis` does, with a script).
    fn replace_if<'a>(
        &'a self,
        task: TaskRecord,
        node: Option<&'a str>,
        heartbeat_ms: u64,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        Box::pin(async move {
            let kept = self.get(&task.id).await?;
            if !kept.is_some_and(|k| k.node.as_deref() == node && k.heartbeat_ms == heartbeat_ms) {
                return Ok(false);
            }
            self.put(task).await.map(|()| true)
        })
    }

    /// [`replace_if`](Self::replace_if) for a task taken over to run again: stored only while
    /// the kept record has `node` and `heartbeat_ms`, and only if the task's principal runs
    /// fewer than `max` other tasks on the nodes sharing this store (counted as
    /// [`put_admitted`](Self::put_admitted) counts). Answers whether it stored; a task left at
    /// the cap stays as it was, for a later read to take over.
    ///
    /// The default is [`replace_if`](Self::replace_if): a store of one process leaves the count
    /// to the node. A store several processes share overrides it (`wymcp-redis` does, in one
    /// script).
    fn replace_if_admitted<'a>(
        &'a self,
        task: TaskRecord,
        (node, heartbeat_ms): (Option<&'a str>, u64),
        max: usize,
        fresh_since_ms: u64,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        let _ = (max, fresh_since_ms);
        self.replace_if(task, node, heartbeat_ms)
    }
}

/// A shared store is a store: several servers (nodes of one process, a test) can hold one.
impl<T: TaskStore + ?Sized> TaskStore for std::sync::Arc<T> {
    fn put(&self, task: TaskRecord) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        (**self).put(task)
    }
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        (**self).get(id)
    }
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        (**self).remove(id)
    }
    fn remove_expired(&self, now_ms: u64) -> BoxFuture<'_, Result<usize, TaskStoreError>> {
        (**self).remove_expired(now_ms)
    }
    fn put_admitted(
        &self,
        task: TaskRecord,
        max: usize,
        fresh_since_ms: u64,
    ) -> BoxFuture<'_, Result<bool, TaskStoreError>> {
        (**self).put_admitted(task, max, fresh_since_ms)
    }
    fn replace_if<'a>(
        &'a self,
        task: TaskRecord,
        node: Option<&'a str>,
        heartbeat_ms: u64,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        (**self).replace_if(task, node, heartbeat_ms)
    }
    fn replace_if_admitted<'a>(
        &'a self,
        task: TaskRecord,
        read: (Option<&'a str>, u64),
        max: usize,
        fresh_since_ms: u64,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        (**self).replace_if_admitted(task, read, max, fresh_since_ms)
    }
}

/// How many tasks an [`InMemoryTaskStore`] keeps, unless set.
pub const DEFAULT_MAX_TASKS: usize = 100_000;

/// The default [`TaskStore`]: a map in this process (tasks end with it), of at most
/// [`DEFAULT_MAX_TASKS`] tasks unless [`with_max_tasks`](Self::with_max_tasks) says otherwise:
/// when full (expired tasks removed first), a new task is refused, naming the bound.
///
/// ```
/// use wymcp::backend::{InMemoryTaskStore, TaskStore};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let store = InMemoryTaskStore::default();
/// assert!(store.get("no-such-task").await.unwrap().is_none());
/// # });
/// ```
#[derive(Debug)]
pub struct InMemoryTaskStore {
    tasks: Mutex<HashMap<String, TaskRecord>>,
    max: usize,
}

impl Default for InMemoryTaskStore {
    fn default() -> Self {
        InMemoryTaskStore::with_max_tasks(DEFAULT_MAX_TASKS)
    }
}

impl InMemoryTaskStore {
    /// A store keeping at most `max` tasks (at least 1).
    pub fn with_max_tasks(max: usize) -> Self {
        InMemoryTaskStore {
            tasks: Mutex::new(HashMap::new()),
            max: max.max(1),
        }
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, TaskRecord>> {
        // A panic while holding the lock leaves plain data behind: keep serving it.
        self.tasks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl TaskStore for InMemoryTaskStore {
    fn put(&self, task: TaskRecord) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        let mut map = self.map();
        if map.len() >= self.max && !map.contains_key(&task.id) {
            let now = super::clock::now_ms();
            map.retain(|_, task| !task.is_expired(now));
        }
        let outcome = if map.len() >= self.max && !map.contains_key(&task.id) {
            Err(TaskStoreError(format!(
                "the in-memory task store holds its most, {} tasks \
                 (InMemoryTaskStore::with_max_tasks); try again once some have expired",
                self.max
            )))
        } else {
            map.insert(task.id.clone(), task);
            Ok(())
        };
        Box::pin(std::future::ready(outcome))
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        let task = self.map().get(id).cloned();
        Box::pin(std::future::ready(Ok(task)))
    }

    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        self.map().remove(id);
        Box::pin(std::future::ready(Ok(())))
    }

    fn remove_expired(&self, now_ms: u64) -> BoxFuture<'_, Result<usize, TaskStoreError>> {
        let mut map = self.map();
        let before = map.len();
        map.retain(|_, task| !task.is_expired(now_ms));
        let removed = before - map.len();
        Box::pin(std::future::ready(Ok(removed)))
    }

    /// Atomic: compared and stored under the map's lock.
    fn replace_if<'a>(
        &'a self,
        task: TaskRecord,
        node: Option<&'a str>,
        heartbeat_ms: u64,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        let mut map = self.map();
        let same = map
            .get(&task.id)
            .is_some_and(|k| k.node.as_deref() == node && k.heartbeat_ms == heartbeat_ms);
        if same {
            map.insert(task.id.clone(), task);
        }
        Box::pin(std::future::ready(Ok(same)))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::{InMemoryTaskStore, TaskRecord, TaskStatus, TaskStore};

    fn task(id: &str, created_at_ms: u64, ttl_ms: u64) -> TaskRecord {
        TaskRecord {
            id: id.to_owned(),
            principal: None,
            tool: "t".to_owned(),
            status: TaskStatus::Working,
            created_at_ms,
            last_updated_at_ms: created_at_ms,
            ttl_ms,
            result: None,
            error: None,
            input_requests: None,
            pending_answers: None,
            node: None,
            heartbeat_ms: created_at_ms,
            call: None,
        }
    }

    #[tokio::test]
    async fn a_full_store_refuses_a_new_task_naming_its_bound_after_dropping_expired_ones() {
        let now = crate::task::clock::now_ms();
        let store = InMemoryTaskStore::with_max_tasks(2);
        store.put(task("old", 0, 1)).await.unwrap();
        store.put(task("a", now, 60_000)).await.unwrap();
        // Full, but "old" expired long ago: it makes room.
        store.put(task("b", now, 60_000)).await.unwrap();
        assert!(store.get("old").await.unwrap().is_none());
        let refused = store.put(task("c", now, 60_000)).await.unwrap_err();
        assert_eq!(
            refused.to_string(),
            "task store: the in-memory task store holds its most, 2 tasks \
             (InMemoryTaskStore::with_max_tasks); try again once some have expired"
        );
        // A task already kept is still updated.
        store.put(task("a", now, 60_000)).await.unwrap();
    }

    #[tokio::test]
    async fn replace_if_replaces_only_what_the_caller_read() {
        let now = crate::task::clock::now_ms();
        let store = InMemoryTaskStore::default();
        let mut left = task("t", now, 60_000);
        left.node = Some("a".into());
        assert!(
            !store
                .replace_if(left.clone(), Some("a"), now)
                .await
                .unwrap()
        );
        store.put(left.clone()).await.unwrap();
        let mut mine = left.clone();
        mine.node = Some("b".into());
        mine.heartbeat_ms = now + 1;
        assert!(
            !store
                .replace_if(mine.clone(), Some("a"), now - 1)
                .await
                .unwrap()
        );
        assert!(
            store
                .replace_if(mine.clone(), Some("a"), now)
                .await
                .unwrap()
        );
        // The second taker read the same record: too late.
        let mut theirs = left;
        theirs.node = Some("c".into());
        assert!(!store.replace_if(theirs, Some("a"), now).await.unwrap());
        assert_eq!(store.get("t").await.unwrap().unwrap(), mine);
    }
}
