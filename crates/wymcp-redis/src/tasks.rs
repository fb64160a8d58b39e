//! [`RedisTaskStore`]: the tasks extension's tasks in Redis, so a task outlives the node that
//! runs it and any node answers `tasks/get`.

use std::sync::LazyLock;

use futures_util::future::BoxFuture;
use redis::AsyncCommands as _;
use redis::Script;
use redis::aio::ConnectionManager;
use wymcp::task::{TaskRecord, TaskStore, TaskStoreError};

use crate::connection::Keys;

/// KEYS: the task. ARGV: the node read (`""`: none), the heartbeat read, the new record, its
/// time left in ms. 1 when the kept record still had that node and heartbeat (and is
/// replaced), 0 otherwise: one node of several takes over a task its node left.
static REPLACE_IF: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local kept = redis.call('GET', KEYS[1]) \
         if not kept then return 0 end \
         local task = cjson.decode(kept) \
         local node = task['node'] \
         if node == nil or node == cjson.null then node = '' end \
         if node ~= ARGV[1] or tonumber(task['heartbeat_ms']) ~= tonumber(ARGV[2]) then \
           return 0 end \
         redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4]) \
         return 1",
    )
});

/// Tasks as JSON strings (`<prefix>:task:<id>`), each expiring with its TTL (`SET … PX`, the
/// time left until `created_at_ms + ttl_ms`), so Redis forgets them by itself. Every method is
/// one round trip. Put it on the server with
/// [`ServerBuilder::task_store`](wymcp::ServerBuilder::task_store):
///
/// ```no_run
/// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
/// let redis = wymcp_redis::Redis::connect("redis://127.0.0.1:6379/").await?;
/// let server = wymcp::Server::builder()
///     // ... .plain_tool(Report).task_support("report", TaskSupport::Optional) ...
///     .task_store(redis.task_store())
///     .build()?;
/// # let _ = server; Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisTaskStore {
    conn: ConnectionManager,
    keys: Keys,
}

impl std::fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTaskStore").finish_non_exhaustive()
    }
}

fn failed(err: impl std::fmt::Display) -> TaskStoreError {
    TaskStoreError(format!("redis: {err}"))
}

/// Now, in milliseconds since the Unix epoch.
fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl RedisTaskStore {
    pub(crate) fn new(conn: ConnectionManager, keys: Keys) -> Self {
        RedisTaskStore { conn, keys }
    }
}

impl TaskStore for RedisTaskStore {
    fn put(&self, task: TaskRecord) -> BoxFuture<'_, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let key = self.keys.task(&task.id);
            let left = task
                .created_at_ms
                .saturating_add(task.ttl_ms)
                .saturating_sub(now_ms());
            if left == 0 {
                let _: () = conn.del(&key).await.map_err(failed)?;
                return Ok(());
            }
            let json = serde_json::to_vec(&task).map_err(failed)?;
            let _: () = conn.pset_ex(&key, json, left).await.map_err(failed)?;
            Ok(())
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let json: Option<Vec<u8>> = conn.get(self.keys.task(id)).await.map_err(failed)?;
            json.map(|json| serde_json::from_slice(&json).map_err(failed))
                .transpose()
        })
    }

    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let _: () = conn.del(self.keys.task(id)).await.map_err(failed)?;
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
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let left = task
                .created_at_ms
                .saturating_add(task.ttl_ms)
                .saturating_sub(now_ms());
            if left == 0 {
                return Ok(false);
            }
            let json = serde_json::to_vec(&task).map_err(failed)?;
            let replaced: i64 = REPLACE_IF
                .key(self.keys.task(&task.id))
                .arg(node.unwrap_or(""))
                .arg(heartbeat_ms)
                .arg(json)
                .arg(left)
                .invoke_async(&mut conn)
                .await
                .map_err(failed)?;
            Ok(replaced == 1)
        })
    }

    /// Redis expires tasks by itself: nothing to remove.
    fn remove_expired(&self, _now_ms: u64) -> BoxFuture<'_, Result<usize, TaskStoreError>> {
        Box::pin(std::future::ready(Ok(0)))
    }
}
