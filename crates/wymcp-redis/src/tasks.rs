//! [`RedisTaskStore`]: the tasks extension's tasks in Redis, so a task outlives the node that
//! runs it and any node answers `tasks/get`.

use std::sync::LazyLock;

use futures_util::future::BoxFuture;
use redis::AsyncCommands as _;
use redis::Script;
use redis::aio::ConnectionManager;
use wymcp::backend::{TaskRecord, TaskStore, TaskStoreError};

use crate::connection::Keys;

/// What every script writing a running task ends with. KEYS[2]: its principal's running
/// tasks (task id → heartbeat ms). `id`, `beat`, `left`: the task's id, heartbeat and time left.
/// The set lives as long as its longest-lived task.
const COUNT_RUNNING: &str = "redis.call('ZADD', KEYS[2], beat, id) \
     if redis.call('PTTL', KEYS[2]) < tonumber(left) then redis.call('PEXPIRE', KEYS[2], left) end";

/// How a script taking over a task begins: it goes on only while the kept record (KEYS[1]) has
/// the node read (ARGV[1], `""`: none) and the heartbeat read (ARGV[2]); else it answers 0.
const READ_UNCHANGED: &str = "local kept = redis.call('GET', KEYS[1]) \
     if not kept then return 0 end \
     local task = cjson.decode(kept) \
     local node = task['node'] \
     if node == nil or node == cjson.null then node = '' end \
     if node ~= ARGV[1] or tonumber(task['heartbeat_ms']) ~= tonumber(ARGV[2]) then \
       return 0 end";

/// How a script admitting a running task under its principal's cap begins: the principal's
/// tasks whose heartbeat is older than `fresh` stop counting (their nodes stopped); then, unless
/// task `id` is counted already, it answers 0 when `max` are.
const UNDER_CAP: &str = "redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. fresh) \
     if not redis.call('ZSCORE', KEYS[2], id) \
       and redis.call('ZCARD', KEYS[2]) >= tonumber(max) then return 0 end";

/// KEYS: the task, its principal's running tasks. ARGV: the node read (`""`: none), the
/// heartbeat read, the new record, its time left in ms, the task's id, its new heartbeat. 1
/// when the kept record still had that node and heartbeat (and is replaced, the task counted
/// running under its new heartbeat), 0 otherwise: one node of several takes over a task its
/// node left.
static REPLACE_IF: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        "{READ_UNCHANGED} \
         redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4]) \
         local id, beat, left = ARGV[5], ARGV[6], ARGV[4] \
         {COUNT_RUNNING} \
         return 1"
    ))
});

/// `REPLACE_IF` under the principal's cap. ARGV: `REPLACE_IF`'s, then the cap and the oldest
/// heartbeat still counted. 0 when the record was read stale or the principal runs the cap
/// already elsewhere (the kept record untouched: a later read takes the task over).
static REPLACE_IF_ADMITTED: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        "{READ_UNCHANGED} \
         local id, max, fresh = ARGV[5], ARGV[7], ARGV[8] \
         {UNDER_CAP} \
         redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4]) \
         local beat, left = ARGV[6], ARGV[4] \
         {COUNT_RUNNING} \
         return 1"
    ))
});

/// KEYS: the task, its principal's running tasks. ARGV: the record, its time left in ms, the
/// task's id, its heartbeat, whether it runs (`1`) or ended (`0`). The record is stored; a
/// running task is counted under its heartbeat, an ended one no more.
static PUT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        "redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) \
         local id, beat, left = ARGV[3], ARGV[4], ARGV[2] \
         if ARGV[5] == '1' then {COUNT_RUNNING} else redis.call('ZREM', KEYS[2], id) end \
         return 1"
    ))
});

/// KEYS: the task, its principal's running tasks, its principal's stored tasks, every stored
/// task (the last two: task id → expiry ms). ARGV: the record, its time left in ms, the task's
/// id, its heartbeat, the principal's cap of running tasks, the oldest heartbeat still
/// counted, now (ms), the task's expiry (ms), the most tasks kept for one principal, the most
/// kept in all. The record is written first, so that a full Redis refuses the script there
/// (`OOM`) rather than answering a cap; then the bounds are checked (the expired tasks dropped
/// from the counts first) and the record taken back on a refusal. 1 when stored and counted;
/// 0 when the principal runs its cap already (its tasks whose heartbeat is older are dropped
/// from the count first: their nodes stopped); -1 when the principal keeps its most tasks; -2
/// when the store keeps its most.
static PUT_ADMITTED: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        "redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) \
         local id, max, fresh = ARGV[3], ARGV[5], ARGV[6] \
         redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[7]) \
         redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', ARGV[7]) \
         if redis.call('ZCARD', KEYS[4]) >= tonumber(ARGV[10]) then \
           redis.call('DEL', KEYS[1]) return -2 end \
         if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[9]) then \
           redis.call('DEL', KEYS[1]) return -1 end \
         redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. fresh) \
         if not redis.call('ZSCORE', KEYS[2], id) \
           and redis.call('ZCARD', KEYS[2]) >= tonumber(max) then \
           redis.call('DEL', KEYS[1]) return 0 end \
         redis.call('ZADD', KEYS[3], ARGV[8], id) \
         redis.call('ZADD', KEYS[4], ARGV[8], id) \
         local beat, left = ARGV[4], ARGV[2] \
         for _, kept in ipairs({{KEYS[3], KEYS[4]}}) do \
           if redis.call('PTTL', kept) < tonumber(left) then \
             redis.call('PEXPIRE', kept, left) end end \
         {COUNT_RUNNING} \
         return 1"
    ))
});

/// How many tasks one principal keeps in Redis at most (running or ended, until each task's
/// TTL ends), unless set: [`RedisTaskStore::max_tasks_per_principal`].
const DEFAULT_MAX_TASKS_PER_PRINCIPAL: usize = 10_000;

/// How many tasks the store keeps in Redis at most, over every principal, unless set:
/// [`RedisTaskStore::max_tasks`] (as many as `InMemoryTaskStore` keeps by default).
const DEFAULT_MAX_TASKS: usize = wymcp::backend::DEFAULT_MAX_TASKS;

/// Tasks as JSON strings (`<prefix>:task:<id>`), each expiring with its TTL (`SET … PX`, the
/// time left until `created_at_ms + ttl_ms`), so Redis forgets them by itself; the running
/// tasks of each principal (`<prefix>:running:<subject>`, task id → heartbeat) so that
/// [`task_max_running_per_principal`](wymcp::ServerBuilder::task_max_running_per_principal)
/// counts every node's. Every method is one round trip. Put it on the server with
/// [`Backends::tasks`](wymcp::backend::Backends::tasks):
///
/// ```no_run
/// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
/// let redis = wymcp_redis::Redis::connect("redis://127.0.0.1:6379/").await?;
/// let server = wymcp::Server::builder()
///     // ... .plain_tool_with(Report, ToolPolicy::new().task_support(TaskSupport::Optional)) ...
///     .backends(wymcp::backend::Backends::new().tasks(redis.task_store()))
///     .build()?;
/// # let _ = server; Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisTaskStore {
    conn: ConnectionManager,
    keys: Keys,
    max_tasks: usize,
    max_tasks_per_principal: usize,
}

impl std::fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTaskStore").finish_non_exhaustive()
    }
}

fn failed(err: redis::RedisError) -> TaskStoreError {
    TaskStoreError(crate::failure::describe(&err))
}

fn unreadable(err: serde_json::Error) -> TaskStoreError {
    TaskStoreError(format!("task record in Redis: {err}"))
}

/// Now, in milliseconds since the Unix epoch.
fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The time `task` has left before it expires, in ms (0: none).
fn time_left(task: &TaskRecord) -> u64 {
    task.created_at_ms
        .saturating_add(task.ttl_ms)
        .saturating_sub(now_ms())
}

impl RedisTaskStore {
    pub(crate) fn new(conn: ConnectionManager, keys: Keys) -> Self {
        RedisTaskStore {
            conn,
            keys,
            max_tasks: DEFAULT_MAX_TASKS,
            max_tasks_per_principal: DEFAULT_MAX_TASKS_PER_PRINCIPAL,
        }
    }

    /// Keeps at most `max` tasks in Redis over every principal (100,000 by default, as
    /// many as `InMemoryTaskStore` keeps; at least 1): a task is kept, running or ended, until its TTL ends, and a new
    /// one past the bound is refused, naming it.
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), wymcp_redis::Error> {
    /// let redis = wymcp_redis::Redis::connect("redis://127.0.0.1:6379/").await?;
    /// let tasks = redis.task_store().max_tasks(50_000).max_tasks_per_principal(500);
    /// # let _ = tasks; Ok(()) }
    /// ```
    #[must_use]
    pub fn max_tasks(mut self, max: usize) -> Self {
        self.max_tasks = max.max(1);
        self
    }

    /// Keeps at most `max` tasks in Redis for one principal
    /// (10,000 by default; at least 1), every unauthenticated
    /// caller's being one principal's: a new task past the bound is refused, naming it, until
    /// some of the principal's tasks reach the end of their TTL.
    #[must_use]
    pub fn max_tasks_per_principal(mut self, max: usize) -> Self {
        self.max_tasks_per_principal = max.max(1);
        self
    }

    /// The key of the running tasks of `task`'s principal (an unauthenticated caller's is its
    /// address's, `anonymous@<address>`, as on a node).
    /// Replaces the kept `task` while it has the node and heartbeat `read`, and, given a
    /// `cap` (the most running tasks, the oldest heartbeat counted), only under its principal's
    /// cap over every node.
    async fn take_over(
        &self,
        task: TaskRecord,
        (node, heartbeat_ms): (Option<&str>, u64),
        cap: Option<(usize, u64)>,
    ) -> Result<bool, TaskStoreError> {
        let mut conn = self.conn.clone();
        let left = time_left(&task);
        if left == 0 {
            return Ok(false);
        }
        let json = serde_json::to_vec(&task).map_err(unreadable)?;
        let script = if cap.is_some() {
            &*REPLACE_IF_ADMITTED
        } else {
            &*REPLACE_IF
        };
        let mut invocation = script.key(self.keys.task(&task.id));
        invocation
            .key(self.running_of(&task))
            .arg(node.unwrap_or(""))
            .arg(heartbeat_ms)
            .arg(json)
            .arg(left)
            .arg(&task.id)
            .arg(task.heartbeat_ms);
        if let Some((max, fresh_since_ms)) = cap {
            invocation.arg(max).arg(fresh_since_ms);
        }
        let replaced: i64 = invocation.invoke_async(&mut conn).await.map_err(failed)?;
        Ok(replaced == 1)
    }

    fn running_of(&self, task: &TaskRecord) -> String {
        self.keys
            .running_tasks(task.principal.as_deref().unwrap_or(""))
    }
}

impl TaskStore for RedisTaskStore {
    fn put(&self, task: TaskRecord) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let (key, running) = (self.keys.task(&task.id), self.running_of(&task));
            let left = time_left(&task);
            if left == 0 {
                let _: () = redis::pipe()
                    .del(&key)
                    .ignore()
                    .zrem(&running, &task.id)
                    .ignore()
                    .zrem(self.keys.stored_tasks(), &task.id)
                    .ignore()
                    .query_async(&mut conn)
                    .await
                    .map_err(failed)?;
                return Ok(());
            }
            let json = serde_json::to_vec(&task).map_err(unreadable)?;
            let runs = if task.status.is_terminal() { "0" } else { "1" };
            let _: i64 = PUT
                .key(key)
                .key(running)
                .arg(json)
                .arg(left)
                .arg(&task.id)
                .arg(task.heartbeat_ms)
                .arg(runs)
                .invoke_async(&mut conn)
                .await
                .map_err(failed)?;
            Ok(())
        })
    }

    /// One round trip: a script counts the principal's running tasks whose heartbeat is fresh,
    /// and stores the task under the cap.
    fn put_admitted(
        &self,
        task: TaskRecord,
        max: usize,
        fresh_since_ms: u64,
    ) -> BoxFuture<'_, Result<bool, TaskStoreError>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let left = time_left(&task);
            if left == 0 {
                return Ok(false);
            }
            let json = serde_json::to_vec(&task).map_err(unreadable)?;
            let principal = task.principal.as_deref().unwrap_or("");
            let stored: i64 = PUT_ADMITTED
                .key(self.keys.task(&task.id))
                .key(self.running_of(&task))
                .key(self.keys.tasks_of(principal))
                .key(self.keys.stored_tasks())
                .arg(json)
                .arg(left)
                .arg(&task.id)
                .arg(task.heartbeat_ms)
                .arg(max)
                .arg(fresh_since_ms)
                .arg(now_ms())
                .arg(task.created_at_ms.saturating_add(task.ttl_ms))
                .arg(self.max_tasks_per_principal)
                .arg(self.max_tasks)
                .invoke_async(&mut conn)
                .await
                .map_err(failed)?;
            match stored {
                1 => Ok(true),
                -1 => Err(TaskStoreError(format!(
                    "this caller keeps its most tasks in Redis, {} \
                     (RedisTaskStore::max_tasks_per_principal); try again once some have expired",
                    self.max_tasks_per_principal
                ))),
                -2 => Err(TaskStoreError(format!(
                    "the Redis task store keeps its most tasks, {} (RedisTaskStore::max_tasks); \
                     try again once some have expired",
                    self.max_tasks
                ))),
                _ => Ok(false),
            }
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let json: Option<Vec<u8>> = conn.get(self.keys.task(id)).await.map_err(failed)?;
            json.map(|json| serde_json::from_slice(&json).map_err(unreadable))
                .transpose()
        })
    }

    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let _: () = redis::pipe()
                .del(self.keys.task(id))
                .ignore()
                .zrem(self.keys.stored_tasks(), id)
                .ignore()
                .query_async(&mut conn)
                .await
                .map_err(failed)?;
            Ok(())
        })
    }

    /// One round trip: a script compares the kept record's node and heartbeat, and replaces it.
    fn replace_if<'a>(
        &'a self,
        task: TaskRecord,
        node: Option<&'a str>,
        heartbeat_ms: u64,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        Box::pin(self.take_over(task, (node, heartbeat_ms), None))
    }

    /// One round trip: the script of `replace_if` with `put_admitted`'s count.
    fn replace_if_admitted<'a>(
        &'a self,
        task: TaskRecord,
        read: (Option<&'a str>, u64),
        max: usize,
        fresh_since_ms: u64,
    ) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        Box::pin(self.take_over(task, read, Some((max, fresh_since_ms))))
    }

    /// Redis expires tasks by itself: nothing to remove.
    fn remove_expired(&self, _now_ms: u64) -> BoxFuture<'_, Result<usize, TaskStoreError>> {
        Box::pin(std::future::ready(Ok(0)))
    }
}
