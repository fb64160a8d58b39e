//! [`ServerBuilder`]: tools in order, identity, instructions; `build()` validates everything.

use std::sync::Arc;
use std::time::Duration;

use wymcp_core::ConfigurationError;

use tower::{BoxError, Layer, Service};

use super::checks::{check_layers, check_task_tools, declared_scopes, register_tools};
use super::mount::{Own, Settings, mount_all};
use super::policy::ToolPolicy;
use crate::completion::registry::{CompletionRegistry, PendingCompletion};
use crate::completion::{Complete, CompletionRef};
use crate::middleware::{BoxOperation, Layers, Operation, Response, Stack, Wrap};
use crate::mrtr::Codec;
#[cfg(feature = "sealed-state")]
use crate::mrtr::RequestStateKeys;
use crate::mrtr::state::Carrier;
use crate::prompt::Prompt;
use crate::prompt::definition::DynPrompt;
use crate::prompt::registry::PromptRegistry;
use crate::resource::registry::ResourceRegistry;
use crate::resource::{Resource, ResourceTemplate};
use crate::server::features::Features;
use crate::server::{Server, ServerInfo};
use crate::tool::erased::{ActionAdapter, PlainAdapter};
use crate::tool::registered::RegisteredTool;
use crate::tool::typed::Typed;
use crate::tool::{ActionTool, PlainTool, TypedActionTool};

pub(crate) enum Pending {
    Action(Arc<dyn crate::tool::erased::DynActionTool>),
    Plain(Arc<dyn crate::tool::erased::DynPlainTool>),
}

/// Builds a [`Server`]. Nothing is validated until [`build`](Self::build), which validates
/// every tool and refuses the first problem with a [`ConfigurationError`].
///
/// ```
/// use wymcp::Server;
///
/// let server = Server::builder()
///     .name("tasks")
///     .version("1.2.0")
///     .title("Task tracker")
///     .instructions("Use `help {}` to see every tool.")
///     .build()
///     .unwrap();
/// assert_eq!(server.info().name, "tasks");
/// ```
#[must_use]
pub struct ServerBuilder {
    info: ServerInfo,
    instructions: Option<String>,
    tools: Vec<Pending>,
    resources: Vec<Resource>,
    templates: Vec<ResourceTemplate>,
    prompts: Vec<Arc<dyn DynPrompt>>,
    completions: Vec<PendingCompletion>,
    #[cfg(feature = "skills")]
    skills: Vec<crate::skill::Skill>,
    pub(super) tasks: crate::task::Tasks,
    pub(super) backends: crate::backend::Backends,
    pub(super) visibility: crate::tool::visibility::Visibility,
    page_size: Option<usize>,
    list_changed: bool,
    /// The handle the server's tools change through, when they may change.
    live: Option<super::LiveTools>,
    request_state: RequestStateConfig,
    limits: crate::Limits,
    layers: Layers,
    /// The servers mounted, with their prefixes, in the order mounted.
    mounts: Vec<(String, Server)>,
}

/// The `requestState` settings of multi round-trip requests.
#[derive(Debug)]
struct RequestStateConfig {
    #[cfg(feature = "sealed-state")]
    keys: Option<RequestStateKeys>,
    /// The in-process store's capacity (a build without `sealed-state`).
    #[cfg_attr(feature = "sealed-state", allow(dead_code))]
    capacity: usize,
    lifetime: Duration,
    max_size: usize,
}

impl RequestStateConfig {
    /// The server's codec: sealing with the configured keys (default one random key), or
    /// keeping states in a store of the configured capacity.
    fn codec(self) -> Codec {
        #[cfg(feature = "sealed-state")]
        let carrier = Carrier::Sealed(crate::mrtr::seal::Sealer::new(
            &self.keys.unwrap_or_else(RequestStateKeys::random),
        ));
        #[cfg(not(feature = "sealed-state"))]
        let carrier = Carrier::Kept(crate::mrtr::kept::Kept::new(self.capacity));
        Codec::new(carrier, self.lifetime, self.max_size)
    }
}

impl Default for ServerBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("info", &self.info)
            .field("tools", &self.tools.len())
            .field("resources", &self.resources)
            .field("templates", &self.templates)
            .field("prompts", &self.prompts.len())
            .field("completions", &self.completions.len())
            .field("mounts", &self.mounts.len())
            .finish()
    }
}

impl ServerBuilder {
    /// A builder named after the crate, version `0.0.0`, no tools.
    pub fn new() -> Self {
        ServerBuilder {
            info: ServerInfo {
                name: "wymcp-server".into(),
                version: "0.0.0".into(),
                title: None,
                description: None,
                website_url: None,
                icons: Vec::new(),
                repository: None,
                remotes: Vec::new(),
            },
            instructions: None,
            tools: Vec::new(),
            resources: Vec::new(),
            templates: Vec::new(),
            prompts: Vec::new(),
            completions: Vec::new(),
            #[cfg(feature = "skills")]
            skills: Vec::new(),
            tasks: crate::task::Tasks::default(),
            backends: crate::backend::Backends::default(),
            visibility: crate::tool::visibility::Visibility::default(),
            page_size: None,
            list_changed: false,
            live: None,
            request_state: RequestStateConfig {
                #[cfg(feature = "sealed-state")]
                keys: None,
                capacity: crate::mrtr::DEFAULT_CAPACITY,
                lifetime: crate::mrtr::DEFAULT_LIFETIME,
                max_size: crate::mrtr::DEFAULT_MAX_SIZE,
            },
            limits: crate::Limits::default(),
            layers: Layers::default(),
            mounts: Vec::new(),
        }
    }

    /// The server's programmatic name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.info.name = name.into();
        self
    }

    /// The server's version.
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.info.version = version.into();
        self
    }

    /// A display title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// A description of the server.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.info.description = Some(description.into());
        self
    }

    /// The server's website.
    pub fn website_url(mut self, url: impl Into<String>) -> Self {
        self.info.website_url = Some(url.into());
        self
    }

    /// An icon (an MCP `Icon` object: `src`, optional `mimeType`, `sizes`, `theme`).
    pub fn icon(mut self, icon: serde_json::Value) -> Self {
        self.info.icons.push(icon);
        self
    }

    /// Where the server's source lives, for the Server Card and `server.json`
    /// ([`crate::card`]).
    pub fn repository(mut self, repository: crate::card::Repository) -> Self {
        self.info.repository = Some(repository);
        self
    }

    /// A URL clients connect to, for the Server Card and `server.json` ([`crate::card`]);
    /// listed in the order added.
    pub fn remote(mut self, remote: crate::card::Remote) -> Self {
        self.info.remotes.push(remote);
        self
    }

    /// Instructions for the model, sent in `initialize` verbatim.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Adds an action-dispatched tool (listed in the order added), then its
    /// [companions](ActionTool::companions): the plain tools and prompts it brings.
    pub fn tool<T: ActionTool>(mut self, tool: T) -> Self {
        let companions = tool.companions();
        self.tools
            .push(Pending::Action(Arc::new(ActionAdapter(tool))));
        let plain = companions.plain_tools.into_iter().map(Pending::Plain);
        self.tools.extend(plain);
        self.prompts.extend(companions.prompts);
        self
    }

    /// Adds a tool whose actions are an [`ActionEnum`](crate::ActionEnum) (listed in the order
    /// added). It is served as an action-dispatched tool: the same validation, gates and help.
    pub fn typed_tool<T: TypedActionTool>(self, tool: T) -> Self {
        self.tool(Typed(tool))
    }

    /// Adds a plain tool (listed in the order added).
    pub fn plain_tool<T: PlainTool>(mut self, tool: T) -> Self {
        self.tools
            .push(Pending::Plain(Arc::new(PlainAdapter(tool))));
        self
    }

    /// [`tool`](Self::tool) with `policy`: the layers around its calls and its actions', and
    /// how its calls run as tasks (see [`ToolPolicy`]).
    pub fn tool_with<T: ActionTool>(self, tool: T, policy: ToolPolicy) -> Self {
        let name = tool.name().to_owned();
        self.tool(tool).with_policy(&name, policy)
    }

    /// [`typed_tool`](Self::typed_tool) with `policy` (see [`ToolPolicy`]).
    pub fn typed_tool_with<T: TypedActionTool>(self, tool: T, policy: ToolPolicy) -> Self {
        let name = tool.name().to_owned();
        self.typed_tool(tool).with_policy(&name, policy)
    }

    /// [`plain_tool`](Self::plain_tool) with `policy` (see [`ToolPolicy`]).
    pub fn plain_tool_with<T: PlainTool>(self, tool: T, policy: ToolPolicy) -> Self {
        let name = tool.name().to_owned();
        self.plain_tool(tool).with_policy(&name, policy)
    }

    fn with_policy(mut self, tool: &str, policy: ToolPolicy) -> Self {
        policy.apply(tool, &mut self.layers, &mut self.tasks);
        self
    }

    /// Adds a resource (listed in the order added); its URI must be a valid URI, unique.
    pub fn resource(mut self, resource: Resource) -> Self {
        self.resources.push(resource);
        self
    }

    /// Adds a resource template (listed in the order added); its URI template must be a valid
    /// RFC 6570 template, unique. `resources/read` tries templates in this order.
    pub fn resource_template(mut self, template: ResourceTemplate) -> Self {
        self.templates.push(template);
        self
    }

    /// Adds a prompt (listed in the order added); its name must be unique, its argument names
    /// unique.
    pub fn prompt<P: Prompt>(mut self, prompt: P) -> Self {
        self.prompts.push(Arc::new(prompt));
        self
    }

    /// Serves a skill (the skills extension, [`crate::skill`]): its files as `skill://`
    /// resources, listed by `skills/list` in the order added; `build()` refuses a skill that
    /// breaks the extension's rules. Needs the `skills` feature.
    #[cfg(feature = "skills")]
    pub fn skill(mut self, skill: crate::skill::Skill) -> Self {
        self.skills.push(skill);
        self
    }

    /// Serves every skill of `skills` (from [`Skill::load_all`](crate::skill::Skill::load_all),
    /// say), in order. Needs the `skills` feature.
    #[cfg(feature = "skills")]
    pub fn skills(mut self, skills: impl IntoIterator<Item = crate::skill::Skill>) -> Self {
        self.skills.extend(skills);
        self
    }

    /// Serves `server` inside this one (composition, `docs/composition.md`): its tools and
    /// prompts as `<prefix>_<name>` (as they are when `prefix` is `""`), its resources and
    /// resource templates under their own URIs, its completion providers on the renamed
    /// prompts and the same templates; listed after this server's own, mounts in the order
    /// added, `help` (this server's, which answers for every tool) last.
    ///
    /// Each mounted tool keeps its gates: its schemas, scopes and visibility, the mounted
    /// server's layers around its admitted calls (they see it by its own name), its task
    /// support and its [`tool_call_timeout`](crate::Limits::tool_call_timeout). Everything
    /// else is this server's: identity, instructions (the mounted server's are not sent),
    /// limits, layers (around the mounted server's), list paging, visibility of resources and
    /// prompts, and the capabilities, which cover what is mounted. `build()` refuses a prefix
    /// of other characters than ASCII letters, digits, `_`, `-` and `.`, and any tool name,
    /// prompt name, resource URI or template a mount would serve a second time, naming both.
    ///
    /// ```
    /// use serde_json::{Map, Value, json};
    /// use wymcp::{CallResult, Context, PlainTool, Server};
    ///
    /// struct Search;
    /// impl PlainTool for Search {
    ///     fn name(&self) -> &str { "search" }
    ///     fn description(&self) -> &str { "Search the notes" }
    ///     fn input_schema(&self) -> Map<String, Value> {
    ///         json!({"type": "object"}).as_object().cloned().unwrap_or_default()
    ///     }
    ///     async fn run(&self, _args: Map<String, Value>, _ctx: Context) -> CallResult {
    ///         Ok(wymcp::CallOutput::text("no notes"))
    ///     }
    /// }
    ///
    /// let notes = Server::builder().name("notes").plain_tool(Search).build()?;
    /// let server = Server::builder().mount("notes", notes.clone()).build()?;
    /// assert_eq!(server.tool_names(), ["notes_search", "help"]);
    ///
    /// let twice = Server::builder().mount("", notes.clone()).plain_tool(Search).build();
    /// assert_eq!(
    ///     twice.unwrap_err().to_string(),
    ///     r#"tool "search" is served twice: by this server, and by the server mounted at "" (its tool "search")"#
    /// );
    /// # Ok::<(), wymcp::ConfigurationError>(())
    /// ```
    pub fn mount(mut self, prefix: impl Into<String>, server: Server) -> Self {
        self.mounts.push((prefix.into(), server));
        self
    }

    /// Completes argument `argument` of prompt `prompt` with `provider`; `build()` refuses a
    /// prompt or argument that is not declared.
    pub fn prompt_completion(
        mut self,
        prompt: impl Into<String>,
        argument: impl Into<String>,
        provider: impl Complete,
    ) -> Self {
        self.completions.push(PendingCompletion {
            reference: CompletionRef::Prompt(prompt.into()),
            argument: argument.into(),
            provider: Arc::new(provider),
        });
        self
    }

    /// Completes variable `variable` of resource template `uri_template` (as declared) with
    /// `provider`; `build()` refuses a template or variable that does not exist.
    pub fn template_completion(
        mut self,
        uri_template: impl Into<String>,
        variable: impl Into<String>,
        provider: impl Complete,
    ) -> Self {
        self.completions.push(PendingCompletion {
            reference: CompletionRef::ResourceTemplate(uri_template.into()),
            argument: variable.into(),
            provider: Arc::new(provider),
        });
        self
    }

    /// What one client may make the serving core spend (see [`Limits`](crate::Limits);
    /// safe defaults unless set).
    ///
    /// ```
    /// use wymcp::{Limits, Server};
    ///
    /// let server = Server::builder().limits(Limits::default().max_batch(10)).build().unwrap();
    /// assert_eq!(server.limits().max_batch, 10);
    /// ```
    pub fn limits(mut self, limits: crate::Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Wraps every operation in `layer` (operation middleware, `docs/middleware.md`): every
    /// `tools/call` after the gates admitted it, before the tool's own code, and every other
    /// request the layers wrap (`tools/list`, the resources, prompts, completion and skills
    /// methods), on every transport and in both eras. Layers added first run first
    /// (outermost): server layers, then [`call_layer`](Self::call_layer)s, a tool's, an
    /// action's (a tool's and its actions' are its [`ToolPolicy`]'s). A layer's [`Refusal`](crate::middleware::Refusal) reaches the model as an
    /// `isError` result (a JSON-RPC error `-32000` for a method other than `tools/call`).
    /// `help` passes no layer.
    ///
    /// ```
    /// use std::time::Duration;
    /// use wymcp::Server;
    /// use wymcp::middleware::RateLimitLayer; // the `rate-limit` feature
    ///
    /// let server = Server::builder()
    ///     .layer(tower::limit::ConcurrencyLimitLayer::new(64))
    ///     .layer(RateLimitLayer::per_second(std::num::NonZeroU32::new(10).unwrap()))
    ///     .build()
    ///     .unwrap();
    /// # let _ = server;
    /// ```
    pub fn layer<L>(mut self, layer: L) -> Self
    where
        L: Layer<BoxOperation> + Send + Sync + 'static,
        L::Service: Service<Operation, Response = Response> + Clone + Send + Sync + 'static,
        <L::Service as Service<Operation>>::Error: Into<BoxError>,
        <L::Service as Service<Operation>>::Future: Send + 'static,
    {
        self.layers.server.push(Wrap::new(layer));
        self
    }

    /// Wraps every `tools/call` (and no other request) in `layer`, inside the server's layers
    /// (see [`layer`](Self::layer)): a budget for calling tools that listing them does not
    /// spend.
    ///
    /// ```
    /// use std::num::NonZeroU32;
    /// use wymcp::Server;
    /// use wymcp::middleware::RateLimitLayer; // the `rate-limit` feature
    ///
    /// let five = NonZeroU32::new(5).unwrap();
    /// let server = Server::builder().call_layer(RateLimitLayer::per_second(five)).build().unwrap();
    /// # let _ = server;
    /// ```
    pub fn call_layer<L>(mut self, layer: L) -> Self
    where
        L: Layer<BoxOperation> + Send + Sync + 'static,
        L::Service: Service<Operation, Response = Response> + Clone + Send + Sync + 'static,
        <L::Service as Service<Operation>>::Error: Into<BoxError>,
        <L::Service as Service<Operation>>::Future: Send + 'static,
    {
        self.layers.calls.push(Wrap::new(layer));
        self
    }

    /// How many items one page of `resources/list`, `resources/templates/list` and
    /// `prompts/list` holds (default 50; 0 reads as 1).
    pub fn page_size(mut self, size: usize) -> Self {
        self.page_size = Some(size);
        self
    }

    /// Declares `listChanged` for resources and prompts, so
    /// [`Server::notify_resources_list_changed`] and [`Server::notify_prompts_list_changed`]
    /// send; in the stateless era (2026-07-28) it also declares `tools.listChanged`, so
    /// `subscriptions/listen` streams get [`Server::notify_tools_list_changed`] (the session
    /// era always declares it). Default: not declared.
    pub fn list_changed(mut self, declared: bool) -> Self {
        self.list_changed = declared;
        self
    }

    /// Lets the server's tools change while it runs, through `handle`
    /// ([`LiveTools::change`](super::LiveTools::change)): the handle reaches the server once
    /// it is built. Without it (the default) the tools are fixed at `build()`, and a call
    /// reads them in place; with it, each call reads the tools of the moment (one lock taken
    /// to clone a reference).
    pub fn live_tools(mut self, handle: &super::LiveTools) -> Self {
        self.live = Some(handle.clone());
        self
    }

    /// The keys the stateless era's `requestState` (multi round-trip requests,
    /// [`crate::mrtr`]) is sealed with (feature `sealed-state`, which `http` enables): the
    /// first signs, every one verifies (rotation: put the new key first, keep the old one
    /// until its states expired). Every node serving the
    /// same clients needs the same keys. Default: one random key made by `build()`, so
    /// states are valid on this process only (a single node; a restart refuses them).
    ///
    /// ```
    /// use std::time::Duration;
    /// use wymcp::Server;
    /// use wymcp::mrtr::RequestStateKeys;
    ///
    /// let keys = RequestStateKeys::new(*b"0123456789abcdef0123456789abcdef")?;
    /// let server = Server::builder()
    ///     .request_state_keys(keys)
    ///     .request_state_lifetime(Duration::from_secs(300))
    ///     .request_state_max_size(16 * 1024)
    ///     .build()?;
    /// # let _ = server;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "sealed-state")]
    pub fn request_state_keys(mut self, keys: RequestStateKeys) -> Self {
        self.request_state.keys = Some(keys);
        self
    }

    /// How long a `requestState` stays valid (default [`crate::mrtr::DEFAULT_LIFETIME`], 10
    /// minutes); a retry after that is refused `-32602` (`invalid_request_state`).
    pub fn request_state_lifetime(mut self, lifetime: Duration) -> Self {
        self.request_state.lifetime = lifetime;
        self
    }

    /// The largest `requestState` issued, in bytes (default [`crate::mrtr::DEFAULT_MAX_SIZE`],
    /// 64 KiB): asking for input that would exceed it fails in the asking code
    /// (`ClientRequestError::RequestStateTooLarge`), and a longer state is refused unread.
    pub fn request_state_max_size(mut self, bytes: usize) -> Self {
        self.request_state.max_size = bytes;
        self
    }

    /// How many `requestState`s a build without the `sealed-state` feature keeps in the
    /// process (default [`crate::mrtr::DEFAULT_CAPACITY`], 256; at least 1). Such a build (a
    /// stdio-only one: one process, one client) keeps each state here and hands the client a
    /// random handle to it; past the capacity the oldest state is dropped, and a retry naming
    /// it is refused `-32602` (`invalid_request_state`, "…this server holds no such
    /// requestState (never issued, or dropped: it keeps the newest 256)"). The memory it
    /// takes is at most the capacity times [`request_state_max_size`](Self::request_state_max_size).
    /// A build with `sealed-state` (`http` enables it) keeps no state: the client carries it
    /// sealed, and this setting is unused.
    ///
    /// ```
    /// use wymcp::Server;
    ///
    /// let server = Server::builder().request_state_capacity(64).build()?;
    /// # let _ = server;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn request_state_capacity(mut self, states: usize) -> Self {
        self.request_state.capacity = states;
        self
    }

    /// Validates every tool (names, actions, schemas, output schemas), builds and stores each
    /// definition and validator, and appends the help tool last; validates every resource URI,
    /// resource template, prompt and completion provider.
    pub fn build(mut self) -> Result<Server, ConfigurationError> {
        let show_with_scope = self.visibility == crate::tool::visibility::Visibility::ShowWithScope;
        let mut tools = register_tools(self.tools, self.visibility)?;
        let own = Own {
            tools: &tools,
            resources: &self.resources,
            templates: &self.templates,
            prompts: &self.prompts,
        };
        let settings = Settings {
            layers: &mut self.layers,
            tasks: &mut self.tasks,
            limits: &mut self.limits,
        };
        let mounted = mount_all(self.mounts, &own, settings)?;
        tools.extend(mounted.tools);
        self.resources.extend(mounted.resources);
        self.templates.extend(mounted.templates);
        self.prompts.extend(mounted.prompts);
        self.completions.extend(mounted.completions);
        check_layers(&self.layers, &tools)?;
        check_task_tools(self.tasks.policies_mut(), &tools)?;
        tools.push(Arc::new(RegisteredTool::help()));
        // The skills' files are resources too.
        #[cfg(feature = "skills")]
        let (skills, skill_files) = crate::skill::registry::SkillRegistry::build(self.skills)?;
        #[cfg(not(feature = "skills"))]
        let skill_files = Vec::new();
        let resources = ResourceRegistry::build(
            self.resources.into_iter().chain(skill_files).collect(),
            self.templates,
            (&self.limits, show_with_scope),
            self.backends.subscriptions.clone(),
        )?;
        let prompts = PromptRegistry::build(self.prompts, show_with_scope)?;
        let completions = CompletionRegistry::build(self.completions, &prompts, &resources)?;
        // The tasks announce their status changes on the server's hub and relay.
        let (hub, relay) = (crate::resource::Hub::new(), Arc::default());
        let mut tasks = self.tasks;
        if let Some(store) = &self.backends.tasks {
            tasks.store = Arc::clone(store);
        }
        tasks.watch = crate::task::Watch::new(hub.change_sender(), Arc::clone(&relay));
        // The extensions this configuration serves, in the order their declarations list.
        let mut extensions = super::extension::Extensions::default();
        #[cfg(feature = "skills")]
        if !skills.is_empty() {
            extensions.register(&super::skills::SkillsExtension);
        }
        if tasks.policies().is_enabled() {
            extensions.register(&super::tasks::TasksExtension);
        }
        let features = Features {
            resources,
            prompts,
            completions,
            #[cfg(feature = "skills")]
            skills,
            tasks,
            extensions,
            hub,
            relay,
            user_state: self.backends.user_state.clone(),
            backends: self.backends,
            declared_scopes: declared_scopes(&tools),
            page_size: self.page_size.unwrap_or(crate::paging::DEFAULT_PAGE_SIZE),
            list_changed: self.list_changed,
            request_state: self.request_state.codec(),
            middleware: Stack::build(self.layers, &self.limits),
            limits: self.limits,
            ..Features::default()
        };
        let tools = crate::tool::table::Tools::new(tools);
        let Some(handle) = self.live else {
            let table = crate::tool::table::ToolTable::Fixed(tools);
            return Ok(Server::from_parts(
                self.info,
                self.instructions,
                table,
                features,
            ));
        };
        let live = Arc::new(std::sync::RwLock::new(Arc::new(tools)));
        let table = crate::tool::table::ToolTable::Live(live);
        let server = Server::from_parts(self.info, self.instructions, table, features);
        handle.attach(&server, self.visibility);
        Ok(server)
    }
}
