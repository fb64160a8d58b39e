//! The task tracker's resources and prompt: one resource per project
//! (`tasks://projects/{name}`, a `#[wymcp::resources]` template), and "plan my day" (a
//! `#[wymcp::prompts]` method: it reads the store).

use serde_json::json;
use wymcp::Content;
use wymcp::ResourceTemplate;
use wymcp::prompt::{GetPromptResult, PromptError, PromptMessage};
use wymcp::resource::ResourceError;

use crate::store::{Status, Store, StoreError, TaskFilter};

/// The projects, one resource each: a project and its open tasks, as JSON.
#[derive(Clone)]
pub(crate) struct Projects {
    /// Where the projects live.
    pub(crate) store: Store,
}

#[wymcp::resources]
impl Projects {
    /// Read tasks://projects/{name} for a project and its open tasks, most urgent first
    #[wymcp(template = "tasks://projects/{name}", mime_type = "application/json")]
    async fn project(&self, name: String) -> Result<String, ResourceError> {
        let failed = |e: StoreError| ResourceError::Failed(e.to_string());
        let project = self.store.project(name.clone()).await.map_err(failed)?;
        let project = project.ok_or(ResourceError::NotFound)?;
        let open = TaskFilter {
            status: Some(Status::Open),
            project: Some(name),
            limit: 100,
            ..TaskFilter::default()
        };
        let tasks = self.store.list_tasks(open).await.map_err(failed)?;
        Ok(json!({"project": project, "open_tasks": tasks}).to_string())
    }
}

/// The resource template: one resource per project.
pub(crate) fn project_template(store: Store) -> ResourceTemplate {
    Projects { store }
        .project_resource()
        .title("A project and its open tasks")
}

/// The "plan my day" prompt's state: where the tasks live.
#[derive(Clone)]
pub(crate) struct Planner {
    /// Where the tasks live.
    pub(crate) store: Store,
}

#[wymcp::prompts]
impl Planner {
    /// Turn the open tasks into a plan for today, overdue and urgent ones first
    #[wymcp(title = "Plan my day")]
    async fn plan_my_day(
        &self,
        /// Only plan this project's tasks
        project: Option<String>,
        /// Hours available today (default 8)
        hours: Option<String>,
    ) -> Result<GetPromptResult, PromptError> {
        let hours = match hours {
            None => 8.0,
            Some(h) => h
                .parse::<f64>()
                .ok()
                .filter(|h| (0.5..=24.0).contains(h))
                .ok_or_else(|| {
                    PromptError::InvalidArguments(format!(
                        "hours: {h:?} is not a number of hours from 0.5 to 24"
                    ))
                })?,
        };
        let filter = |overdue_only| TaskFilter {
            status: Some(Status::Open),
            project: project.clone(),
            overdue_only,
            limit: 50,
            ..TaskFilter::default()
        };
        let failed = |e: StoreError| PromptError::Failed(e.to_string());
        let overdue = self.store.list_tasks(filter(true)).await.map_err(failed)?;
        let open = self.store.list_tasks(filter(false)).await.map_err(failed)?;
        let listing = serde_json::to_string_pretty(&json!({"overdue": overdue, "open": open}))
            .unwrap_or_default();
        let text = format!(
            "Plan my day: I have {hours} hours. Here are my open tasks (JSON, most urgent \
             first; `overdue` lists those past their due date):\n\n{listing}\n\n\
             Propose an ordered plan that fits the time: overdue tasks first, then by priority \
             (1 is urgent) and due date. Give each item a time estimate, say what to postpone, \
             and offer to mark tasks done with the `tasks` tool (action `complete`)."
        );
        Ok(
            GetPromptResult::new(vec![PromptMessage::user(Content::text(text))])
                .description("Today's plan from the open tasks"),
        )
    }
}
