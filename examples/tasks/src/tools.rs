//! The task tracker's tools, one of each kind wymcp offers:
//!
//! * `tasks`: a typed action tool (`TypedActionTool` + `#[derive(ActionEnum)]`): the structs
//!   below are the schema;
//! * `projects`: an action tool whose actions are a JSON literal (`wymcp::actions!`), checked
//!   while the crate compiles;
//! * `search`: a plain tool (`#[wymcp::plain_tool]`): its parameters are the input schema,
//!   the struct it returns the output schema;
//!
//! plus a resource per project and the "plan my day" prompt (`resources.rs`).
//!
//! [`server`] assembles them; `main.rs` serves it and the tests call it in-process.

use serde_json::{Map, Value, json};
use wymcp::tool::Failure;
use wymcp::{
    ActionEnum, ActionResult, ActionTool, Actions, ConfigurationError, Context, Data, Hint, Reply,
    Server, ServerBuilder, TypedActionTool,
};

use wymcp::Prompt as _;
use wymcp::session::{ClientRequestError, Elicitation};

use crate::resources::{Planner, project_template};
use crate::store::{ChecklistItem, NewTask, Status, Store, StoreError, TaskFilter, TaskPatch};

/// The instructions sent to the model in `initialize`.
pub(crate) const INSTRUCTIONS: &str = "A task tracker. `tasks` creates, finds, updates and completes \
tasks; `projects` groups them; `search` finds tasks by text. Call `help {}` for every tool, \
`help {tool: \"tasks\", action: \"create\"}` for one action in full.";

/// Builds the task tracker's server over `store`.
// The tests build through it; `main.rs` goes through `builder`, to add its policies.
#[allow(dead_code)]
pub(crate) fn server(store: Store) -> Result<Server, ConfigurationError> {
    builder(store).build()
}

/// The task tracker's server over `store`, before `build()` (`main.rs` adds the command
/// line's policies).
pub(crate) fn builder(store: Store) -> ServerBuilder {
    Server::builder()
        .name("wymcp-tasks")
        .version(env!("CARGO_PKG_VERSION"))
        .title("Task tracker (wymcp example)")
        .instructions(INSTRUCTIONS)
        .typed_tool(TasksTool {
            store: store.clone(),
        })
        .tool(ProjectsTool {
            store: store.clone(),
        })
        .plain_tool(SearchTool {
            store: store.clone(),
        })
        // The resource and the prompt show tasks, as `tasks list` does: the same scope.
        .resource_template(project_template(store.clone()).scopes(["tasks:read"]))
        .prompt(
            Planner { store }
                .plan_my_day_prompt()
                .with_scopes(["tasks:read"]),
        )
}

// ---------------------------------------------------------------------------------------------
// tasks: typed actions
// ---------------------------------------------------------------------------------------------

fn three() -> u8 {
    3
}

fn twenty() -> u32 {
    20
}

/// Create a task.
#[wymcp::data]
#[derive(Debug)]
pub(crate) struct CreateTask {
    /// What to do, in a few words
    #[schemars(length(min = 1, max = 200))]
    pub(crate) title: String,
    /// Details, links, context
    pub(crate) notes: Option<String>,
    /// 1 (urgent) to 5 (some day)
    #[serde(default = "three")]
    #[schemars(range(min = 1, max = 5))]
    pub(crate) priority: u8,
    /// When it is due: an RFC 3339 date-time such as 2026-12-01T17:00:00Z
    #[schemars(extend("format" = "date-time"))]
    pub(crate) due: Option<String>,
    /// The name of the project to file it under (see `projects list`)
    pub(crate) project: Option<String>,
    /// Labels, such as "home" or "errand"
    #[serde(default)]
    pub(crate) tags: Vec<String>,
    /// Steps, each with its own done flag
    #[serde(default)]
    pub(crate) checklist: Vec<ChecklistItem>,
}

/// Find one task.
#[wymcp::data]
#[derive(Debug)]
pub(crate) struct GetTask {
    /// The task's id
    #[schemars(range(min = 1))]
    pub(crate) id: Option<u32>,
    /// The task's exact title (case-insensitive; the newest match wins)
    #[schemars(length(min = 1))]
    pub(crate) title: Option<String>,
}

/// Which tasks to list, by status.
#[wymcp::data]
#[derive(Debug, Default, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub(crate) enum StatusFilter {
    /// Open tasks only.
    #[default]
    Open,
    /// Done tasks only.
    Done,
    /// Every task.
    All,
}

/// List tasks.
#[wymcp::data]
#[derive(Debug)]
pub(crate) struct ListTasks {
    /// open, done or all
    #[serde(default)]
    pub(crate) status: StatusFilter,
    /// Only tasks of this project
    pub(crate) project: Option<String>,
    /// Only tasks carrying this tag
    pub(crate) tag: Option<String>,
    /// Only open tasks past their due date
    #[serde(default)]
    pub(crate) overdue: bool,
    /// At most this many tasks
    #[serde(default = "twenty")]
    #[schemars(range(min = 1, max = 100))]
    pub(crate) limit: u32,
}

/// Change a task.
#[wymcp::data]
#[derive(Debug)]
pub(crate) struct UpdateTask {
    /// The task's id
    #[schemars(range(min = 1))]
    pub(crate) id: u32,
    /// New title
    #[schemars(length(min = 1, max = 200))]
    pub(crate) title: Option<String>,
    /// New notes
    pub(crate) notes: Option<String>,
    /// New priority, 1 (urgent) to 5
    #[schemars(range(min = 1, max = 5))]
    pub(crate) priority: Option<u8>,
    /// New due date-time (RFC 3339)
    #[schemars(extend("format" = "date-time"))]
    pub(crate) due: Option<String>,
    /// Move it to this project
    pub(crate) project: Option<String>,
    /// Replace the tags
    pub(crate) tags: Option<Vec<String>>,
    /// Replace the checklist
    pub(crate) checklist: Option<Vec<ChecklistItem>>,
    /// Reopen (open) or close (done) it
    pub(crate) status: Option<Status>,
}

/// A task by id.
#[wymcp::data]
#[derive(Debug)]
pub(crate) struct TaskId {
    /// The task's id
    #[schemars(range(min = 1))]
    pub(crate) id: u32,
}

/// One task of a bulk import.
#[wymcp::data]
#[derive(Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct ImportItem {
    /// What to do
    #[schemars(length(min = 1, max = 200))]
    pub(crate) title: String,
    /// 1 (urgent) to 5
    #[serde(default = "three")]
    #[schemars(range(min = 1, max = 5))]
    pub(crate) priority: u8,
    /// When it is due (RFC 3339)
    #[schemars(extend("format" = "date-time"))]
    pub(crate) due: Option<String>,
    /// Labels
    #[serde(default)]
    pub(crate) tags: Vec<String>,
}

/// Import many tasks at once.
#[wymcp::data]
#[derive(Debug)]
pub(crate) struct ImportTasks {
    /// The tasks, 1 to 1000
    #[schemars(length(min = 1, max = 1000))]
    pub(crate) tasks: Vec<ImportItem>,
    /// File every imported task under this project
    pub(crate) project: Option<String>,
}

/// The `tasks` tool's actions.
#[derive(Debug, ActionEnum)]
pub(crate) enum TaskAction {
    /// Create a task
    ///
    /// Only the title is required; priority defaults to 3. Answers the stored task with its id.
    #[wymcp(related = ["update", "complete"], scopes = ["tasks:write"])]
    #[wymcp(example = {"title": "Renew passport", "due": "2026-12-01T17:00:00Z", "tags": ["admin"],
                       "checklist": [{"text": "Take photos"}, {"text": "Fill in the form"}]})]
    Create(CreateTask),
    /// Get one task by id or by exact title
    #[wymcp(required_one_of = [["id"], ["title"]], scopes = ["tasks:read"])]
    #[wymcp(example = {"id": 1})]
    #[wymcp(example = {"title": "Renew passport"})]
    Get(GetTask),
    /// List tasks, most urgent first
    #[wymcp(related = ["get"], scopes = ["tasks:read"])]
    List(ListTasks),
    /// Change a task's fields; omitted fields stay as they are
    #[wymcp(scopes = ["tasks:write"])]
    Update(UpdateTask),
    /// Mark a task done
    #[wymcp(scopes = ["tasks:write"])]
    Complete(TaskId),
    /// Delete a task for good
    ///
    /// When the client supports elicitation, the user is asked to confirm first.
    #[wymcp(scopes = ["tasks:write"])]
    Delete(TaskId),
    /// Import many tasks in one call, reporting progress
    ///
    /// Tasks are written in batches of 50; a client that sent a progress token receives
    /// `notifications/progress` after each batch.
    #[wymcp(scopes = ["tasks:write"])]
    Import(ImportTasks),
}

/// Tasks written per transaction by `import` (and per progress notification).
const IMPORT_BATCH: usize = 50;

/// The `tasks` tool.
pub(crate) struct TasksTool {
    /// Where the tasks live.
    pub(crate) store: Store,
}

fn not_found(what: String) -> Failure {
    Failure::msg(format!("No task {what}")).with_hint_context(json!({"not_found": true}))
}

/// A store error as a failure, with a hint context when the model can repair it.
fn store_failure(error: StoreError) -> Failure {
    let context = match &error {
        StoreError::UnknownProject(name) => Some(json!({"missing_project": name})),
        _ => None,
    };
    let failure = Failure::new(error);
    match context {
        Some(context) => failure.with_hint_context(context),
        None => failure,
    }
}

impl TypedActionTool for TasksTool {
    type Action = TaskAction;

    fn name(&self) -> &str {
        "tasks"
    }

    fn description(&self) -> &str {
        // The fields are not listed here: the action summaries below it say what each action
        // does, `help` and the refusals what each needs (issue 47: the catalogue a model reads).
        "Create, find, change and complete tasks."
    }

    fn title(&self) -> Option<String> {
        Some("Tasks".into())
    }

    async fn run(&self, action: TaskAction, ctx: Context) -> ActionResult {
        let store = &self.store;
        match action {
            TaskAction::Create(c) => {
                let task = store
                    .create_task(NewTask {
                        title: c.title,
                        notes: c.notes,
                        priority: c.priority,
                        due: c.due,
                        project: c.project,
                        tags: c.tags,
                        checklist: c.checklist,
                    })
                    .await
                    .map_err(store_failure)?;
                Ok(Reply::json(&task)?.with_hint_context(json!({"id": task.id})))
            }
            TaskAction::Get(g) => {
                let found = match (g.id, g.title) {
                    (Some(id), _) => store
                        .task(i64::from(id))
                        .await
                        .map_err(store_failure)?
                        .ok_or_else(|| not_found(format!("with id {id}")))?,
                    (None, Some(title)) => store
                        .task_by_title(title.clone())
                        .await
                        .map_err(store_failure)?
                        .ok_or_else(|| not_found(format!("titled {title:?}")))?,
                    // Unreachable: required_one_of refuses a call carrying neither.
                    (None, None) => return Err(Failure::msg("Give an id or a title")),
                };
                Ok(Reply::json(&found)?)
            }
            TaskAction::List(l) => {
                let status = match l.status {
                    StatusFilter::Open => Some(Status::Open),
                    StatusFilter::Done => Some(Status::Done),
                    StatusFilter::All => None,
                };
                let tasks = store
                    .list_tasks(TaskFilter {
                        status,
                        project: l.project,
                        tag: l.tag,
                        overdue_only: l.overdue,
                        limit: l.limit,
                    })
                    .await
                    .map_err(store_failure)?;
                Ok(Reply::new(json!({"count": tasks.len(), "tasks": tasks})))
            }
            TaskAction::Update(u) => {
                let patch = TaskPatch {
                    title: u.title,
                    notes: u.notes,
                    priority: u.priority,
                    due: u.due,
                    project: u.project,
                    tags: u.tags,
                    checklist: u.checklist,
                    status: u.status,
                };
                let task = store
                    .update_task(i64::from(u.id), patch)
                    .await
                    .map_err(store_failure)?
                    .ok_or_else(|| not_found(format!("with id {}", u.id)))?;
                Ok(Reply::json(&task)?)
            }
            TaskAction::Complete(TaskId { id }) => {
                let patch = TaskPatch {
                    status: Some(Status::Done),
                    ..TaskPatch::default()
                };
                let task = store
                    .update_task(i64::from(id), patch)
                    .await
                    .map_err(store_failure)?
                    .ok_or_else(|| not_found(format!("with id {id}")))?;
                Ok(Reply::json(&task)?)
            }
            TaskAction::Delete(TaskId { id }) => delete(store, i64::from(id), &ctx).await,
            TaskAction::Import(i) => import(store, i, &ctx).await,
        }
    }

    fn hints(&self, action: &str, hint_context: &Value) -> Vec<Hint> {
        let example = |pairs: Value| pairs.as_object().cloned().unwrap_or_default();
        if let Some(name) = hint_context.get("missing_project").and_then(Value::as_str) {
            return vec![
                Hint::new("projects", "create", "Create the project first, then retry")
                    .with_example(example(json!({"name": name}))),
                Hint::new("projects", "list", "See the projects that exist"),
            ];
        }
        if hint_context.get("not_found").is_some() {
            return vec![
                Hint::new("tasks", "list", "List tasks to find the right id"),
                Hint::new("tasks", "get", "Or look it up by its exact title")
                    .with_example(example(json!({"title": "Renew passport"}))),
            ];
        }
        match (action, hint_context.get("id").and_then(Value::as_i64)) {
            ("create", Some(id)) => vec![
                Hint::new("tasks", "update", "Add a due date, tags or a checklist")
                    .with_example(example(json!({"id": id, "priority": 1}))),
                Hint::new("tasks", "complete", "Mark it done when it is finished")
                    .with_example(example(json!({"id": id}))),
            ],
            _ => Vec::new(),
        }
    }

    fn action_context(&self, _action: &str, _ctx: &Context) -> Option<Map<String, Value>> {
        let overdue = self.store.overdue_count().ok()?;
        if overdue == 0 {
            return None;
        }
        let mut context = Map::new();
        context.insert("overdue_tasks".into(), json!(overdue));
        context.insert(
            "tip".into(),
            json!(format!(
                "{overdue} open task(s) are past due: see them with tasks {{\"action\": \"list\", \
                 \"data\": {{\"overdue\": true}}}}"
            )),
        );
        Some(context)
    }
}

/// `delete`: asks the user to confirm (elicitation) when the client can ask, then deletes.
async fn delete(store: &Store, id: i64, ctx: &Context) -> ActionResult {
    let task = store
        .task(id)
        .await
        .map_err(store_failure)?
        .ok_or_else(|| not_found(format!("with id {id}")))?;
    let question = Elicitation::form(
        format!("Delete task {id} \"{}\" for good?", task.title),
        json!({
            "type": "object",
            "properties": {
                "confirm": {"type": "boolean", "title": "Delete it",
                            "description": "Yes: the task is deleted and cannot be restored"}
            },
            "required": ["confirm"]
        }),
    );
    match ctx.elicit(question).await {
        Ok(answer) => {
            let confirmed =
                answer["action"] == "accept" && answer["content"]["confirm"] == Value::Bool(true);
            if !confirmed {
                return Ok(Reply::new(json!({
                    "deleted": false,
                    "id": id,
                    "reason": "the user did not confirm the deletion",
                })));
            }
        }
        // The client cannot ask its user (no elicitation capability, or no session at all):
        // the model's explicit call is the confirmation.
        Err(ClientRequestError::NotSupported | ClientRequestError::NoSession) => {}
        Err(error) => {
            return Err(Failure::msg(format!(
                "Could not ask the user to confirm the deletion ({error}); the task is kept"
            )));
        }
    }
    if store.delete_task(id).await.map_err(store_failure)? {
        Ok(Reply::new(json!({"deleted": true, "id": id})))
    } else {
        Err(not_found(format!("with id {id}")))
    }
}

/// `import`: batches of [`IMPORT_BATCH`] tasks, one transaction each, progress after each.
async fn import(store: &Store, input: ImportTasks, ctx: &Context) -> ActionResult {
    let total = input.tasks.len();
    let mut ids = Vec::with_capacity(total);
    let mut items = input.tasks.into_iter().peekable();
    while items.peek().is_some() {
        if ctx.is_cancelled() {
            return Err(Failure::msg(format!(
                "Import cancelled after {} of {total} tasks",
                ids.len()
            )));
        }
        let batch: Vec<NewTask> = items
            .by_ref()
            .take(IMPORT_BATCH)
            .map(|item| NewTask {
                title: item.title,
                priority: item.priority,
                due: item.due,
                project: input.project.clone(),
                tags: item.tags,
                ..NewTask::default()
            })
            .collect();
        match store.create_tasks(batch).await {
            Ok(created) => ids.extend(created),
            Err(error) if ids.is_empty() => return Err(store_failure(error)),
            Err(error) => {
                return Err(Failure::msg(format!(
                    "Imported {} of {total} tasks, then: {error}",
                    ids.len()
                )));
            }
        }
        ctx.progress(
            ids.len() as f64,
            Some(total as f64),
            Some(&format!("Imported {} of {total} tasks", ids.len())),
        );
    }
    Ok(Reply::new(json!({"imported": ids.len(), "ids": ids})))
}

// ---------------------------------------------------------------------------------------------
// projects: literal actions, validated at compile time
// ---------------------------------------------------------------------------------------------

/// The `projects` tool.
pub(crate) struct ProjectsTool {
    /// Where the projects live.
    pub(crate) store: Store,
}

impl ActionTool for ProjectsTool {
    fn name(&self) -> &str {
        "projects"
    }

    fn description(&self) -> &str {
        "Group tasks into projects: create, list and archive them."
    }

    fn actions(&self) -> Actions {
        wymcp::actions!({
            "create": {
                "description": "Create a project",
                "properties": {
                    "name": {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]{0,63}$",
                             "description": "A short slug: lowercase letters, digits and dashes"},
                    "description": {"type": "string", "maxLength": 500,
                                    "description": "What the project is about"}
                },
                "required": ["name"],
                "examples": [{"name": "home", "description": "Chores and repairs"}],
                "related": ["list"],
                "scopes": ["tasks:write"]
            },
            "list": {
                "description": "List projects with their open task counts",
                "properties": {
                    "include_archived": {"type": "boolean",
                                         "description": "Also list archived projects"}
                },
                "defaults": {"include_archived": false},
                "scopes": ["tasks:read"]
            },
            "archive": {
                "description": "Archive a project: it keeps its tasks but takes no new ones",
                "properties": {
                    "name": {"type": "string", "description": "The project's name"}
                },
                "required": ["name"],
                "scopes": ["tasks:write"]
            }
        })
    }

    async fn run_action(&self, action: &str, data: Data, _ctx: Context) -> ActionResult {
        let text = |key: &str| data.get(key).and_then(Value::as_str).map(str::to_owned);
        match action {
            "create" => {
                let name = text("name").unwrap_or_default();
                let project = self.store.create_project(name, text("description")).await?;
                Ok(Reply::json(&project)?)
            }
            "list" => {
                let archived = data
                    .get("include_archived")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                let projects = self.store.list_projects(archived).await?;
                Ok(Reply::new(json!({"projects": projects})))
            }
            "archive" => {
                let name = text("name").unwrap_or_default();
                match self.store.archive_project(name.clone()).await? {
                    Some(project) => Ok(Reply::json(&project)?),
                    None => Err(Failure::msg(format!("No project named '{name}'"))),
                }
            }
            other => Err(Failure::msg(format!("unknown action {other}"))),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// search: a plain tool with an output schema
// ---------------------------------------------------------------------------------------------

/// One task `search` found.
#[wymcp::data]
pub(crate) struct Found {
    id: i64,
    title: String,
    status: Status,
    priority: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    due: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    project: Option<String>,
}

/// What `search` answers.
// Its schema is `search`'s `outputSchema`; the doc line above is its description.
#[wymcp::data]
pub(crate) struct SearchResults {
    query: String,
    count: u32,
    results: Vec<Found>,
}

/// The `search` tool.
pub(crate) struct SearchTool {
    /// Where the tasks live.
    pub(crate) store: Store,
}

#[wymcp::plain_tool]
impl SearchTool {
    /// Find tasks whose title, notes or tags contain some text.
    async fn search(
        &self,
        /// Text to look for (case-insensitive)
        #[wymcp(minLength = 1, maxLength = 200)]
        query: String,
        /// Also search done tasks (default false)
        include_done: Option<bool>,
        /// At most this many results (default 10)
        #[wymcp(minimum = 1, maximum = 50)]
        limit: Option<u32>,
    ) -> Result<SearchResults, Failure> {
        let (include_done, limit) = (include_done.unwrap_or(false), limit.unwrap_or(10));
        let tasks = self.store.search(query.clone(), include_done, limit).await;
        let tasks = tasks.map_err(|e| Failure::msg(format!("Search failed: {e}")))?;
        let results: Vec<Found> = tasks
            .into_iter()
            .map(|t| Found {
                id: t.id,
                title: t.title,
                status: t.status,
                priority: t.priority,
                due: t.due,
                project: t.project,
            })
            .collect();
        let count = u32::try_from(results.len()).unwrap_or(u32::MAX);
        Ok(SearchResults {
            query,
            count,
            results,
        })
    }

    fn scopes(&self) -> Vec<String> {
        vec!["tasks:read".to_owned()]
    }

    fn annotations(&self) -> Option<Map<String, Value>> {
        json!({"readOnlyHint": true, "openWorldHint": false})
            .as_object()
            .cloned()
    }
}
