//! The task tracker's resources and prompt: one resource per project
//! (`tasks://projects/{name}`), and "plan my day".

use serde_json::json;
use wymcp::prompt::{
    GetPromptResult, Prompt, PromptArgument, PromptArguments, PromptError, PromptMessage,
};
use wymcp::resource::{ReadResource, ResourceContents, ResourceError, ResourceTemplate, Variables};
use wymcp::{Content, Context};

use crate::store::{Status, Store, TaskFilter};

/// The URI template of a project's resource.
pub(crate) const PROJECT_URI: &str = "tasks://projects/{name}";

/// Reads a project and its open tasks as JSON.
pub(crate) struct ProjectReader {
    /// Where the projects live.
    pub(crate) store: Store,
}

/// The resource template: one resource per project.
pub(crate) fn project_template(store: Store) -> ResourceTemplate {
    ResourceTemplate::new(PROJECT_URI, "project", ProjectReader { store })
        .title("A project and its open tasks")
        .description(
            "Read tasks://projects/<name> for a project and its open tasks, most urgent first",
        )
        .mime_type("application/json")
}

impl ReadResource for ProjectReader {
    async fn read(
        &self,
        uri: &str,
        vars: Variables,
        _ctx: Context,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        let name = vars
            .get("name")
            .ok_or_else(|| ResourceError::Invalid("the URI names no project".into()))?
            .to_owned();
        let project = self
            .store
            .project(name.clone())
            .await
            .map_err(|e| ResourceError::Failed(e.to_string()))?
            .ok_or(ResourceError::NotFound)?;
        let tasks = self
            .store
            .list_tasks(TaskFilter {
                status: Some(Status::Open),
                project: Some(name),
                limit: 100,
                ..TaskFilter::default()
            })
            .await
            .map_err(|e| ResourceError::Failed(e.to_string()))?;
        let body = json!({"project": project, "open_tasks": tasks});
        Ok(vec![
            ResourceContents::text(uri, body.to_string()).with_mime_type("application/json"),
        ])
    }
}

/// The "plan my day" prompt: today's open tasks, overdue first, and how to plan them.
pub(crate) struct PlanMyDay {
    /// Where the tasks live.
    pub(crate) store: Store,
}

impl Prompt for PlanMyDay {
    fn name(&self) -> &str {
        "plan_my_day"
    }

    fn title(&self) -> Option<String> {
        Some("Plan my day".into())
    }

    fn description(&self) -> Option<String> {
        Some("Turn the open tasks into a plan for today, overdue and urgent ones first".into())
    }

    fn arguments(&self) -> Vec<PromptArgument> {
        vec![
            PromptArgument::optional("project").description("Only plan this project's tasks"),
            PromptArgument::optional("hours").description("Hours available today (default 8)"),
        ]
    }

    async fn get(
        &self,
        args: PromptArguments,
        _ctx: Context,
    ) -> Result<GetPromptResult, PromptError> {
        let hours = match args.get("hours") {
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
            project: args.get("project").cloned(),
            overdue_only,
            limit: 50,
            ..TaskFilter::default()
        };
        let failed = |e: crate::store::StoreError| PromptError::Failed(e.to_string());
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
