//! [`LiveTools`]: the handle through which a server's tools change while it runs, and
//! [`ToolChange`], one change made through it.

use std::collections::HashSet;
use std::sync::{Arc, OnceLock, PoisonError, Weak};

use wymcp_core::{ConfigurationError, Problem};

use super::builder::Pending;
use super::policy::ToolPolicy;
use super::{Inner, Server};
use crate::prompt::Prompt;
use crate::prompt::definition::DynPrompt;
use crate::resource::{Resource, ResourceTemplate};
use crate::task::ToolTasks;
use crate::tool::erased::{ActionAdapter, PlainAdapter};
use crate::tool::registered::{HELP, RegisteredTool};
use crate::tool::table::{ToolTable, Tools};
use crate::tool::typed::Typed;
use crate::tool::visibility::Visibility;
use crate::tool::{ActionTool, PlainTool, TypedActionTool};

/// A handle to the tools of the server built with it
/// ([`ServerBuilder::live_tools`](crate::ServerBuilder::live_tools)): [`change`](Self::change)
/// removes and adds tools while the server runs, and every client is told
/// (`notifications/tools/list_changed`, as [`Server::notify_tools_list_changed`] sends it).
///
/// A call that started before a change finishes with the tools it started with; the next
/// `tools/list` and `tools/call` see the change. A tool added is validated as `build()`
/// validates one; the policies given by name at build ([`ToolPolicy`]: its layers, its task
/// support) apply to a tool of that name added later, unless the change gives the tool a
/// policy of its own ([`ToolChange::tool_with`]: its task settings replace the name's). The
/// handle holds no strong reference to the server.
///
/// ```
/// use serde_json::{Map, Value};
/// use wymcp::live::{LiveTools, ToolChange};
/// use wymcp::{CallOutput, CallResult, Context, PlainTool, Server};
///
/// struct Echo(&'static str);
/// impl PlainTool for Echo {
///     fn name(&self) -> &str { self.0 }
///     fn description(&self) -> &str { "Echoes" }
///     fn input_schema(&self) -> Map<String, Value> {
///         Map::from_iter([("type".to_owned(), Value::from("object"))])
///     }
///     async fn run(&self, arguments: Map<String, Value>, _: Context) -> CallResult {
///         Ok(CallOutput::json(Value::Object(arguments)))
///     }
/// }
///
/// let live = LiveTools::new();
/// let server = Server::builder().plain_tool(Echo("a")).live_tools(&live).build().unwrap();
/// live.change(ToolChange::new().remove("a").plain_tool(Echo("b"))).unwrap();
/// assert_eq!(server.tool_names(), ["b", "help"]);
/// ```
#[derive(Debug, Clone, Default)]
pub struct LiveTools {
    attached: Arc<OnceLock<Attached>>,
}

#[derive(Debug)]
struct Attached {
    server: Weak<Inner>,
    visibility: Visibility,
}

/// Why a [`ToolChange`] was not made (the server's tools are then as they were).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolChangeError {
    /// No server was built with the handle, or it was dropped.
    #[error("no running server was built with these live tools (ServerBuilder::live_tools)")]
    NoServer,
    /// A tool added is refused, as `build()` would refuse it, or its name is taken.
    #[error(transparent)]
    Refused(#[from] ConfigurationError),
    /// A tool added with a policy that has layers: a server's layers are set when it is
    /// built ([`ToolPolicy::layer`], [`ToolPolicy::action_layer`]).
    #[error(
        "tool {0}: a tool added while the server runs takes no layers of its own (ToolPolicy::layer, ToolPolicy::action_layer): give them at build"
    )]
    Layers(String),
}

/// One change of a server's tools: the names removed, then the tools added (in order,
/// before `help`); made whole or not at all by [`LiveTools::change`]. The prompts, resources
/// and resource templates served beside them change the same way, in the same step
/// ([`prompt`](Self::prompt), [`resource`](Self::resource),
/// [`resource_template`](Self::resource_template) and their `remove_*`).
#[derive(Default)]
pub struct ToolChange {
    remove: Vec<String>,
    add: Vec<(Pending, Option<ToolPolicy>)>,
    prompts: (Vec<String>, Vec<Arc<dyn DynPrompt>>),
    resources: (Vec<String>, Vec<Resource>),
    templates: (Vec<String>, Vec<ResourceTemplate>),
}

impl std::fmt::Debug for ToolChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolChange")
            .field("remove", &self.remove)
            .field("add", &self.add.len())
            .field("remove_prompts", &self.prompts.0)
            .field("add_prompts", &self.prompts.1.len())
            .field("remove_resources", &self.resources.0)
            .field("add_resources", &self.resources.1.len())
            .field("remove_templates", &self.templates.0)
            .field("add_templates", &self.templates.1.len())
            .finish()
    }
}

impl ToolChange {
    /// An empty change.
    pub fn new() -> Self {
        ToolChange::default()
    }

    /// Removes the tool `name` (a name the server does not serve changes nothing; `help`
    /// stays).
    pub fn remove(mut self, name: impl Into<String>) -> Self {
        self.remove.push(name.into());
        self
    }

    /// Adds an action tool.
    pub fn tool<T: ActionTool>(mut self, tool: T) -> Self {
        self.add
            .push((Pending::Action(Arc::new(ActionAdapter(tool))), None));
        self
    }

    /// Adds an action tool with `policy`'s task settings (its task support, its actions',
    /// its task start and resume), which replace those its name had, as
    /// [`ServerBuilder::tool_with`](crate::ServerBuilder::tool_with) gives them at build. A
    /// policy with layers is refused ([`ToolChangeError::Layers`]).
    ///
    /// ```
    /// # use serde_json::json;
    /// use wymcp::live::{LiveTools, ToolChange};
    /// use wymcp::task::TaskSupport;
    /// use wymcp::{ActionResult, ActionSchema, ActionTool, Actions, Context, Data, Reply, Server, ToolPolicy};
    ///
    /// struct Reports;
    /// impl ActionTool for Reports {
    ///     fn name(&self) -> &str { "reports" }
    ///     fn description(&self) -> &str { "Reports" }
    ///     fn actions(&self) -> Actions {
    ///         Actions::new().action("export", ActionSchema::new("Export every report"))
    ///     }
    ///     async fn run_action(&self, _: &str, _: Data, _: Context) -> ActionResult {
    ///         Ok(Reply::new(json!({})))
    ///     }
    /// }
    ///
    /// let live = LiveTools::new();
    /// let _server = Server::builder().live_tools(&live).build().unwrap();
    /// let runs_as_task = ToolPolicy::new().task_support(TaskSupport::Optional);
    /// live.change(ToolChange::new().tool_with(Reports, runs_as_task)).unwrap();
    /// ```
    pub fn tool_with<T: ActionTool>(mut self, tool: T, policy: ToolPolicy) -> Self {
        self.add
            .push((Pending::Action(Arc::new(ActionAdapter(tool))), Some(policy)));
        self
    }

    /// Adds a typed action tool.
    pub fn typed_tool<T: TypedActionTool>(self, tool: T) -> Self {
        self.tool(Typed(tool))
    }

    /// Adds a typed action tool with `policy` (see [`tool_with`](Self::tool_with)).
    pub fn typed_tool_with<T: TypedActionTool>(self, tool: T, policy: ToolPolicy) -> Self {
        self.tool_with(Typed(tool), policy)
    }

    /// Adds a plain tool.
    pub fn plain_tool<T: PlainTool>(mut self, tool: T) -> Self {
        self.add
            .push((Pending::Plain(Arc::new(PlainAdapter(tool))), None));
        self
    }

    /// Adds a plain tool with `policy` (see [`tool_with`](Self::tool_with)).
    pub fn plain_tool_with<T: PlainTool>(mut self, tool: T, policy: ToolPolicy) -> Self {
        self.add
            .push((Pending::Plain(Arc::new(PlainAdapter(tool))), Some(policy)));
        self
    }

    /// Removes the prompt `name` (a name the server does not serve changes nothing).
    pub fn remove_prompt(mut self, name: impl Into<String>) -> Self {
        self.prompts.0.push(name.into());
        self
    }

    /// Adds a prompt, validated as [`ServerBuilder::prompt`](crate::ServerBuilder::prompt)'s.
    pub fn prompt<P: Prompt>(mut self, prompt: P) -> Self {
        self.prompts.1.push(Arc::new(prompt));
        self
    }

    /// Removes the resource at `uri` (a URI the server does not serve changes nothing); its
    /// subscribers stay subscribed.
    pub fn remove_resource(mut self, uri: impl Into<String>) -> Self {
        self.resources.0.push(uri.into());
        self
    }

    /// Adds a resource, validated as
    /// [`ServerBuilder::resource`](crate::ServerBuilder::resource)'s.
    pub fn resource(mut self, resource: Resource) -> Self {
        self.resources.1.push(resource);
        self
    }

    /// Removes the resource template declared as `template`.
    pub fn remove_resource_template(mut self, template: impl Into<String>) -> Self {
        self.templates.0.push(template.into());
        self
    }

    /// Adds a resource template, validated as
    /// [`ServerBuilder::resource_template`](crate::ServerBuilder::resource_template)'s.
    pub fn resource_template(mut self, template: ResourceTemplate) -> Self {
        self.templates.1.push(template);
        self
    }

    fn changes_tools(&self) -> bool {
        !self.remove.is_empty() || !self.add.is_empty()
    }

    fn changes_prompts(&self) -> bool {
        !self.prompts.0.is_empty() || !self.prompts.1.is_empty()
    }

    fn changes_resources(&self) -> bool {
        let (resources, templates) = (&self.resources, &self.templates);
        !resources.0.is_empty()
            || !resources.1.is_empty()
            || !templates.0.is_empty()
            || !templates.1.is_empty()
    }
}

impl LiveTools {
    /// A handle to give [`ServerBuilder::live_tools`](crate::ServerBuilder::live_tools).
    pub fn new() -> Self {
        LiveTools::default()
    }

    /// Called by `build()`: the handle now reaches `server`.
    pub(super) fn attach(&self, server: &Server, visibility: Visibility) {
        let attached = Attached {
            server: Arc::downgrade(&server.inner),
            visibility,
        };
        if self.attached.set(attached).is_err() {
            tracing::warn!(
                "LiveTools given to a second ServerBuilder: it changes the first server's tools only"
            );
        }
    }

    /// The server built with the handle, while it runs.
    pub fn server(&self) -> Option<Server> {
        let inner = self.attached.get()?.server.upgrade()?;
        Some(Server { inner })
    }

    /// Makes `change` (all of it, or nothing when a tool, prompt, resource or template added
    /// is refused) and tells every client what changed: the tools (also when the change is
    /// empty), the prompts, the resources (`notifications/<list>/list_changed`, as
    /// [`Server::notify_prompts_list_changed`] sends them).
    pub fn change(&self, change: ToolChange) -> Result<(), ToolChangeError> {
        let attached = self.attached.get().ok_or(ToolChangeError::NoServer)?;
        let server = self.server().ok_or(ToolChangeError::NoServer)?;
        let ToolTable::Live(live) = &server.inner.tools else {
            return Err(ToolChangeError::NoServer);
        };
        let (tools, prompts, resources) = (
            change.changes_tools(),
            change.changes_prompts(),
            change.changes_resources(),
        );
        let features = server.features();
        // Checked before anything is swapped in: a refusal changes nothing.
        let (remove, add) = change.prompts;
        let prompts_swap = features.prompts.replace(&remove, add)?;
        let (remove, add) = change.resources;
        let (remove_templates, add_templates) = change.templates;
        let resources_swap = features
            .resources
            .replace((&remove, add), (&remove_templates, add_templates))?;
        let mut added = Vec::with_capacity(change.add.len());
        let mut policies = Vec::new();
        for (pending, policy) in change.add {
            let mut tool = match pending {
                Pending::Action(t) => RegisteredTool::action(t)?,
                Pending::Plain(t) => RegisteredTool::plain(t)?,
            };
            tool.visibility = attached.visibility;
            if let Some(policy) = policy {
                let tasks = policy
                    .into_tasks()
                    .ok_or_else(|| ToolChangeError::Layers(tool.name.clone()))?;
                check_task_actions(&tool, &tasks)?;
                policies.push((tool.name.clone(), tasks));
            }
            added.push(Arc::new(tool));
        }
        {
            let mut current = live.write().unwrap_or_else(PoisonError::into_inner);
            let removed: HashSet<&str> = change
                .remove
                .iter()
                .map(String::as_str)
                .filter(|n| *n != HELP)
                .collect();
            let mut list: Vec<Arc<RegisteredTool>> = current
                .list
                .iter()
                .filter(|t| !removed.contains(t.name.as_str()))
                .cloned()
                .collect();
            // Help stays last.
            let help = list.pop();
            let mut names: HashSet<String> = list.iter().map(|t| t.name.clone()).collect();
            for tool in added {
                if !names.insert(tool.name.clone()) {
                    return Err(
                        ConfigurationError::new(Problem::DuplicateTool(tool.name.clone())).into(),
                    );
                }
                list.push(tool);
            }
            list.extend(help);
            // The tools and their task settings change together, under the table's lock.
            features.tasks.replace_policies(policies);
            *current = Arc::new(Tools::new(list));
        }
        prompts_swap();
        resources_swap();
        if tools || !(prompts || resources) {
            server.notify_tools_list_changed();
        }
        if prompts {
            server.notify_prompts_list_changed();
        }
        if resources {
            server.notify_resources_list_changed();
        }
        Ok(())
    }
}

/// Every action `tasks` gives a task support of its own is one of `tool`'s, as `build()`
/// checks a policy's.
fn check_task_actions(tool: &RegisteredTool, tasks: &ToolTasks) -> Result<(), ConfigurationError> {
    match tasks
        .actions
        .iter()
        .find(|(action, _)| !tool.has_action(action))
    {
        Some((action, _)) => Err(ConfigurationError::new(Problem::InvalidTaskTool(format!(
            "{} (action {action})",
            tool.name
        )))),
        None => Ok(()),
    }
}
