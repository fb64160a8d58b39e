//! The task tracker's storage: an embedded SQLite database (a file, or memory for tests).
//!
//! The connection sits behind a `std::sync::Mutex`; every query runs on Tokio's blocking pool
//! (`spawn_blocking`), so no runtime worker waits on the disk. Each call holds the lock for one
//! short statement or transaction, never for a whole bulk import.

use std::fmt;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};
use serde::Serialize;
use serde_json::Value;

/// A task's status.
// The variants carry no doc comment: schemars would turn each into a `oneOf` branch with its
// own description, restating the names in every schema the status appears in (`search`'s
// `outputSchema` in `tools/list`, `update`'s data in `help`); without, the schema is an `enum`.
#[wymcp::data]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Status {
    // Still to do.
    Open,
    Done,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Open => "open",
            Status::Done => "done",
        }
    }
}

/// One item of a task's checklist.
#[wymcp::data]
#[derive(Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct ChecklistItem {
    /// What to do
    #[schemars(length(min = 1))]
    pub(crate) text: String,
    /// Whether it is done already
    #[serde(default)]
    pub(crate) done: bool,
}

/// A stored task, as the tools answer it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Task {
    /// The task's id.
    pub(crate) id: i64,
    /// The title.
    pub(crate) title: String,
    /// Free-form notes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) notes: Option<String>,
    /// Open or done.
    pub(crate) status: Status,
    /// 1 (urgent) to 5.
    pub(crate) priority: u8,
    /// When it is due (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) due: Option<String>,
    /// The project's name, when the task belongs to one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) project: Option<String>,
    /// Labels.
    pub(crate) tags: Vec<String>,
    /// Checklist items.
    pub(crate) checklist: Vec<ChecklistItem>,
    /// Whether it is open and past its due date.
    pub(crate) overdue: bool,
    /// When it was created (UTC, RFC 3339).
    pub(crate) created_at: String,
    /// When it was completed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) completed_at: Option<String>,
}

/// What a new task is made of.
#[derive(Debug, Clone, Default)]
pub(crate) struct NewTask {
    /// The title.
    pub(crate) title: String,
    /// Notes.
    pub(crate) notes: Option<String>,
    /// 1 (urgent) to 5.
    pub(crate) priority: u8,
    /// Due date-time (RFC 3339).
    pub(crate) due: Option<String>,
    /// The project's name.
    pub(crate) project: Option<String>,
    /// Labels.
    pub(crate) tags: Vec<String>,
    /// Checklist.
    pub(crate) checklist: Vec<ChecklistItem>,
}

/// What an update changes; `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub(crate) struct TaskPatch {
    /// New title.
    pub(crate) title: Option<String>,
    /// New notes.
    pub(crate) notes: Option<String>,
    /// New priority.
    pub(crate) priority: Option<u8>,
    /// New due date-time.
    pub(crate) due: Option<String>,
    /// New project (by name).
    pub(crate) project: Option<String>,
    /// New tags (replacing the old ones).
    pub(crate) tags: Option<Vec<String>>,
    /// New checklist (replacing the old one).
    pub(crate) checklist: Option<Vec<ChecklistItem>>,
    /// New status.
    pub(crate) status: Option<Status>,
}

/// Which tasks a listing returns.
#[derive(Debug, Clone, Default)]
pub(crate) struct TaskFilter {
    /// Only tasks with this status (`None`: any).
    pub(crate) status: Option<Status>,
    /// Only tasks of this project.
    pub(crate) project: Option<String>,
    /// Only tasks carrying this tag.
    pub(crate) tag: Option<String>,
    /// Only open tasks past their due date.
    pub(crate) overdue_only: bool,
    /// At most this many.
    pub(crate) limit: u32,
}

/// A project and how many open tasks it has.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Project {
    /// The project's id.
    pub(crate) id: i64,
    /// Its unique name.
    pub(crate) name: String,
    /// What it is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<String>,
    /// Whether it is archived.
    pub(crate) archived: bool,
    /// Open tasks in it.
    pub(crate) open_tasks: i64,
}

/// Why a store operation failed.
#[derive(Debug)]
pub(crate) enum StoreError {
    /// The database refused.
    Sqlite(rusqlite::Error),
    /// A task names a project that does not exist.
    UnknownProject(String),
    /// A project of that name exists already.
    DuplicateProject(String),
    /// The project is archived: no new tasks.
    ArchivedProject(String),
    /// The blocking task did not finish.
    Interrupted,
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Sqlite(e) => write!(f, "database error: {e}"),
            StoreError::UnknownProject(name) => write!(f, "project '{name}' does not exist"),
            StoreError::DuplicateProject(name) => write!(f, "project '{name}' exists already"),
            StoreError::ArchivedProject(name) => {
                write!(f, "project '{name}' is archived and takes no new tasks")
            }
            StoreError::Interrupted => f.write_str("the database task was interrupted"),
        }
    }
}

impl std::error::Error for StoreError {}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::Sqlite(e)
    }
}

/// Current UTC time, as SQLite writes it (RFC 3339, second precision).
const NOW: &str = "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS projects (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    description TEXT,
    archived    INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tasks (
    id           INTEGER PRIMARY KEY,
    title        TEXT NOT NULL,
    notes        TEXT,
    status       TEXT NOT NULL DEFAULT 'open',
    priority     INTEGER NOT NULL DEFAULT 3,
    due          TEXT,
    project_id   INTEGER REFERENCES projects(id),
    tags         TEXT NOT NULL DEFAULT '[]',
    checklist    TEXT NOT NULL DEFAULT '[]',
    created_at   TEXT NOT NULL,
    completed_at TEXT
);
CREATE INDEX IF NOT EXISTS tasks_title ON tasks(title);
";

/// The columns every task query selects, in `task_from_row`'s order.
const TASK_COLUMNS: &str = "t.id, t.title, t.notes, t.status, t.priority, t.due, p.name, t.tags, \
     t.checklist, t.created_at, t.completed_at, \
     (t.status = 'open' AND t.due IS NOT NULL AND julianday(t.due) < julianday('now'))";

/// The task tracker's database. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Store {
    conn: Arc<Mutex<Connection>>,
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Store")
    }
}

impl Store {
    /// Opens (creating when needed) the database file at `path`.
    pub(crate) fn open(path: &Path) -> Result<Store, StoreError> {
        Store::init(Connection::open(path)?)
    }

    /// A fresh database in memory (for tests).
    #[allow(dead_code)] // used by crates/wymcp/tests/example_tasks.rs
    pub(crate) fn open_in_memory() -> Result<Store, StoreError> {
        Store::init(Connection::open_in_memory()?)
    }

    fn init(conn: Connection) -> Result<Store, StoreError> {
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.execute_batch("PRAGMA foreign_keys = ON;")?;
        // WAL keeps readers and the writer apart in a file database (memory ignores it).
        let _: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        conn.execute_batch(SCHEMA)?;
        Ok(Store {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    /// Runs `f` with the connection on the blocking pool. A transaction that writes begins
    /// `IMMEDIATE` (taking the write lock first, waiting up to the busy timeout for it): begun
    /// deferred, one that reads before it writes fails at once with "database is locked" when
    /// another process sharing the file (a second node, `--redis`) wrote in between.
    async fn with<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let conn = Arc::clone(&self.conn);
        tokio::task::spawn_blocking(move || {
            let mut conn = conn.lock().unwrap_or_else(PoisonError::into_inner);
            f(&mut conn)
        })
        .await
        .map_err(|_| StoreError::Interrupted)?
    }

    /// Creates a task.
    pub(crate) async fn create_task(&self, new: NewTask) -> Result<Task, StoreError> {
        self.with(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let id = insert_task(&tx, &new)?;
            let task = task_by_id(&tx, id)?.ok_or(StoreError::Interrupted)?;
            tx.commit()?;
            Ok(task)
        })
        .await
    }

    /// Creates several tasks in one transaction (all or none).
    pub(crate) async fn create_tasks(&self, batch: Vec<NewTask>) -> Result<Vec<i64>, StoreError> {
        self.with(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let mut ids = Vec::with_capacity(batch.len());
            for new in &batch {
                ids.push(insert_task(&tx, new)?);
            }
            tx.commit()?;
            Ok(ids)
        })
        .await
    }

    /// The task with this id.
    pub(crate) async fn task(&self, id: i64) -> Result<Option<Task>, StoreError> {
        self.with(move |conn| task_by_id(conn, id)).await
    }

    /// The most recent task with exactly this title (case-insensitive).
    pub(crate) async fn task_by_title(&self, title: String) -> Result<Option<Task>, StoreError> {
        self.with(move |conn| {
            let sql = format!(
                "SELECT {TASK_COLUMNS} FROM tasks t LEFT JOIN projects p ON p.id = t.project_id \
                 WHERE t.title = ?1 COLLATE NOCASE ORDER BY t.id DESC LIMIT 1"
            );
            Ok(conn
                .query_row(&sql, params![title], task_from_row)
                .optional()?)
        })
        .await
    }

    /// Tasks matching `filter`: most urgent first (priority, then due date, then id).
    pub(crate) async fn list_tasks(&self, filter: TaskFilter) -> Result<Vec<Task>, StoreError> {
        self.with(move |conn| {
            let sql = format!(
                "SELECT {TASK_COLUMNS} FROM tasks t LEFT JOIN projects p ON p.id = t.project_id \
                 WHERE (?1 IS NULL OR t.status = ?1) \
                   AND (?2 IS NULL OR p.name = ?2) \
                   AND (?3 IS NULL OR EXISTS (SELECT 1 FROM json_each(t.tags) WHERE value = ?3)) \
                   AND (?4 = 0 OR (t.status = 'open' AND t.due IS NOT NULL \
                                   AND julianday(t.due) < julianday('now'))) \
                 ORDER BY t.priority, t.due IS NULL, julianday(t.due), t.id LIMIT ?5"
            );
            let mut stmt = conn.prepare(&sql)?;
            let rows = stmt.query_map(
                params![
                    filter.status.map(Status::as_str),
                    filter.project,
                    filter.tag,
                    filter.overdue_only,
                    filter.limit,
                ],
                task_from_row,
            )?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }

    /// Tasks whose title, notes or tags contain `query` (case-insensitive).
    pub(crate) async fn search(
        &self,
        query: String,
        include_done: bool,
        limit: u32,
    ) -> Result<Vec<Task>, StoreError> {
        self.with(move |conn| {
            let sql = format!(
                "SELECT {TASK_COLUMNS} FROM tasks t LEFT JOIN projects p ON p.id = t.project_id \
                 WHERE (t.title LIKE ?1 ESCAPE '\\' OR coalesce(t.notes, '') LIKE ?1 ESCAPE '\\' \
                        OR t.tags LIKE ?1 ESCAPE '\\') \
                   AND (?2 OR t.status = 'open') \
                 ORDER BY t.status = 'done', t.priority, t.id LIMIT ?3"
            );
            let escaped = query
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_");
            let mut stmt = conn.prepare(&sql)?;
            let rows = stmt.query_map(
                params![format!("%{escaped}%"), include_done, limit],
                task_from_row,
            )?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }

    /// Applies `patch` to a task; `None` when there is no such task.
    pub(crate) async fn update_task(
        &self,
        id: i64,
        patch: TaskPatch,
    ) -> Result<Option<Task>, StoreError> {
        self.with(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            if task_by_id(&tx, id)?.is_none() {
                return Ok(None);
            }
            let project_id = match &patch.project {
                Some(name) => Some(project_for_task(&tx, name)?),
                None => None,
            };
            let tags = patch.tags.as_ref().map(json_text);
            let checklist = patch.checklist.as_ref().map(json_text);
            tx.execute(
                &format!(
                    "UPDATE tasks SET \
                       title = coalesce(?2, title), notes = coalesce(?3, notes), \
                       priority = coalesce(?4, priority), due = coalesce(?5, due), \
                       project_id = coalesce(?6, project_id), tags = coalesce(?7, tags), \
                       checklist = coalesce(?8, checklist), status = coalesce(?9, status), \
                       completed_at = CASE WHEN ?9 = 'done' THEN coalesce(completed_at, {NOW}) \
                                           WHEN ?9 = 'open' THEN NULL ELSE completed_at END \
                     WHERE id = ?1"
                ),
                params![
                    id,
                    patch.title,
                    patch.notes,
                    patch.priority,
                    patch.due,
                    project_id,
                    tags,
                    checklist,
                    patch.status.map(Status::as_str),
                ],
            )?;
            let task = task_by_id(&tx, id)?;
            tx.commit()?;
            Ok(task)
        })
        .await
    }

    /// Deletes a task; answers whether it existed.
    pub(crate) async fn delete_task(&self, id: i64) -> Result<bool, StoreError> {
        self.with(move |conn| Ok(conn.execute("DELETE FROM tasks WHERE id = ?1", params![id])? > 0))
            .await
    }

    /// How many open tasks are past their due date. A single indexed count: quick enough to run
    /// inline (it is what `action_context` reports on every `tasks` reply).
    pub(crate) fn overdue_count(&self) -> Result<i64, StoreError> {
        let conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(conn.query_row(
            "SELECT count(*) FROM tasks WHERE status = 'open' AND due IS NOT NULL \
             AND julianday(due) < julianday('now')",
            [],
            |r| r.get(0),
        )?)
    }

    /// Creates a project.
    pub(crate) async fn create_project(
        &self,
        name: String,
        description: Option<String>,
    ) -> Result<Project, StoreError> {
        self.with(move |conn| {
            let exists: bool = conn.query_row(
                "SELECT count(*) > 0 FROM projects WHERE name = ?1",
                params![name],
                |r| r.get(0),
            )?;
            if exists {
                return Err(StoreError::DuplicateProject(name));
            }
            conn.execute(
                &format!(
                    "INSERT INTO projects (name, description, created_at) VALUES (?1, ?2, {NOW})"
                ),
                params![name, description],
            )?;
            project_by_name(conn, &name)?.ok_or(StoreError::Interrupted)
        })
        .await
    }

    /// Every project (archived ones only when asked), by name.
    pub(crate) async fn list_projects(
        &self,
        include_archived: bool,
    ) -> Result<Vec<Project>, StoreError> {
        self.with(move |conn| {
            let mut stmt = conn.prepare(&format!(
                "{PROJECT_SELECT} WHERE (?1 OR p.archived = 0) ORDER BY p.name"
            ))?;
            let rows = stmt.query_map(params![include_archived], project_from_row)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }

    /// The project of this name.
    pub(crate) async fn project(&self, name: String) -> Result<Option<Project>, StoreError> {
        self.with(move |conn| project_by_name(conn, &name)).await
    }

    /// Archives a project; `None` when there is no such project.
    pub(crate) async fn archive_project(
        &self,
        name: String,
    ) -> Result<Option<Project>, StoreError> {
        self.with(move |conn| {
            conn.execute(
                "UPDATE projects SET archived = 1 WHERE name = ?1",
                params![name],
            )?;
            project_by_name(conn, &name)
        })
        .await
    }
}

const PROJECT_SELECT: &str = "SELECT p.id, p.name, p.description, p.archived, \
     (SELECT count(*) FROM tasks t WHERE t.project_id = p.id AND t.status = 'open') FROM projects p";

fn project_from_row(row: &Row<'_>) -> rusqlite::Result<Project> {
    Ok(Project {
        id: row.get(0)?,
        name: row.get(1)?,
        description: row.get(2)?,
        archived: row.get(3)?,
        open_tasks: row.get(4)?,
    })
}

fn project_by_name(conn: &Connection, name: &str) -> Result<Option<Project>, StoreError> {
    Ok(conn
        .query_row(
            &format!("{PROJECT_SELECT} WHERE p.name = ?1"),
            params![name],
            project_from_row,
        )
        .optional()?)
}

/// The id of the project a task may be filed under.
fn project_for_task(conn: &Connection, name: &str) -> Result<i64, StoreError> {
    let found: Option<(i64, bool)> = conn
        .query_row(
            "SELECT id, archived FROM projects WHERE name = ?1",
            params![name],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    match found {
        None => Err(StoreError::UnknownProject(name.to_owned())),
        Some((_, true)) => Err(StoreError::ArchivedProject(name.to_owned())),
        Some((id, false)) => Ok(id),
    }
}

fn insert_task(conn: &Connection, new: &NewTask) -> Result<i64, StoreError> {
    let project_id = match &new.project {
        Some(name) => Some(project_for_task(conn, name)?),
        None => None,
    };
    conn.execute(
        &format!(
            "INSERT INTO tasks (title, notes, priority, due, project_id, tags, checklist, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, {NOW})"
        ),
        params![
            new.title,
            new.notes,
            new.priority,
            new.due,
            project_id,
            json_text(&new.tags),
            json_text(&new.checklist),
        ],
    )?;
    Ok(conn.last_insert_rowid())
}

fn task_by_id(conn: &Connection, id: i64) -> Result<Option<Task>, StoreError> {
    let sql = format!(
        "SELECT {TASK_COLUMNS} FROM tasks t LEFT JOIN projects p ON p.id = t.project_id \
         WHERE t.id = ?1"
    );
    Ok(conn
        .query_row(&sql, params![id], task_from_row)
        .optional()?)
}

fn task_from_row(row: &Row<'_>) -> rusqlite::Result<Task> {
    let status: String = row.get(3)?;
    let tags: String = row.get(7)?;
    let checklist: String = row.get(8)?;
    Ok(Task {
        id: row.get(0)?,
        title: row.get(1)?,
        notes: row.get(2)?,
        status: if status == "done" {
            Status::Done
        } else {
            Status::Open
        },
        priority: row.get(4)?,
        due: row.get(5)?,
        project: row.get(6)?,
        // Written by this module as JSON; a hand-edited row degrades to empty, never panics.
        tags: serde_json::from_str(&tags).unwrap_or_default(),
        checklist: serde_json::from_str(&checklist).unwrap_or_default(),
        created_at: row.get(9)?,
        completed_at: row.get(10)?,
        overdue: row.get(11)?,
    })
}

fn json_text<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| Value::Array(Vec::new()).to_string())
}
