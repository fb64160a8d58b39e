//! A live session's tool list ([`SessionTools`]): the tools registered on it at runtime, the
//! server's configured tools they shadow, `help`; and the [`SessionHandle`] methods that
//! register, remove and list them.
//!
//! The list lives here, with the tool API, rather than in `crate::session`: the session holds
//! it as a [`ToolList`], so that a session (which a tool's `Context` reaches) does not depend on
//! the tools it serves.

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::Value;
use wymcp_core::{ConfigurationError, Problem};

use crate::protocol::{LogLevel, ProtocolVersion};
use crate::session::{Notifier, SessionHandle, ToolList};
use crate::tool::erased::{ActionAdapter, PlainAdapter};
use crate::tool::registered::{HELP, RegisteredTool};
use crate::tool::table::Configured;
use crate::tool::typed::Typed;
use crate::tool::{ActionTool, PlainTool, TypedActionTool};

/// A live session's tool list: runtime tools (newest first) over the configured ones.
pub(crate) struct SessionTools {
    /// The server's configured tools, help last (read anew each time: a live server's
    /// change).
    configured: Configured,
    /// The session's revision: what `tools/list` serves is its definitions.
    version: ProtocolVersion,
    state: Mutex<ToolState>,
}

#[derive(Default)]
struct ToolState {
    runtime: Vec<Arc<RegisteredTool>>,
    /// The runtime tools by name: a call finds its tool without a scan of them.
    by_name: HashMap<String, Arc<RegisteredTool>>,
    dirty: bool,
}

/// Where a call in a live session finds its tool.
pub(crate) enum SessionTool {
    /// In the server's configured tools: the session registered none of that name.
    Configured,
    /// A tool the session registered at runtime.
    Runtime(Arc<RegisteredTool>),
    /// `help` in a session with runtime tools: it answers from the merged list.
    Help(Vec<Arc<RegisteredTool>>),
}

impl ToolList for SessionTools {
    fn is_dirty(&self) -> bool {
        self.lock().dirty
    }
}

impl SessionTools {
    fn lock(&self) -> MutexGuard<'_, ToolState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Puts `tool` first, replacing a runtime tool of its name; answers whether the list
    /// just became dirty.
    fn install(&self, tool: RegisteredTool) -> bool {
        let tool = Arc::new(tool);
        let mut state = self.lock();
        let before = self.served(&state, &tool.name);
        if state.by_name.remove(&tool.name).is_some() {
            state.runtime.retain(|t| t.name != tool.name);
        }
        state.by_name.insert(tool.name.clone(), Arc::clone(&tool));
        let name = tool.name.clone();
        state.runtime.insert(0, tool);
        let changed = self.served(&state, &name) != before;
        Self::mark(&mut state, changed)
    }

    /// Removes the runtime tool `name`: answers whether there was one, and whether the list
    /// just became dirty.
    fn remove(&self, name: &str) -> (bool, bool) {
        let mut state = self.lock();
        let before = self.served(&state, name);
        if state.by_name.remove(name).is_none() {
            return (false, false);
        }
        state.runtime.retain(|t| t.name != name);
        let changed = self.served(&state, name) != before;
        (true, Self::mark(&mut state, changed))
    }

    /// Marks the list dirty when the served set changed; answers whether this is the
    /// clean→dirty edge.
    fn mark(state: &mut ToolState, changed: bool) -> bool {
        if !changed || state.dirty {
            return false;
        }
        state.dirty = true;
        true
    }

    /// What `tools/list` would serve under `name`: the runtime tool's definition, else the
    /// configured one's. Registering or removing a tool changes that entry alone, so comparing
    /// it is comparing the served set (without building it: a registration's cost does not
    /// grow with the session's runtime tools).
    fn served(&self, state: &ToolState, name: &str) -> Option<Value> {
        let definition = |t: &RegisteredTool| t.definition.for_version(self.version).clone();
        match state.by_name.get(name) {
            Some(tool) => Some(definition(tool)),
            None => self
                .configured
                .list()
                .iter()
                .find(|t| t.name == name)
                .map(|t| definition(t)),
        }
    }
}

impl SessionHandle {
    /// A live session whose tool list starts as the server's `configured` tools.
    pub(crate) fn live(
        id: impl Into<String>,
        configured: impl Into<Configured>,
        version: ProtocolVersion,
        log_level: Option<LogLevel>,
        standalone: Option<Notifier>,
    ) -> Self {
        let tools = SessionTools {
            configured: configured.into(),
            version,
            state: Mutex::default(),
        };
        SessionHandle::with_tools(id.into(), version, log_level, standalone, Box::new(tools))
    }

    /// The session's list as the tool API made it.
    ///
    /// Downcast, justified: this is where the type-level cycle tool → context → session →
    /// tool is cut. A tool's handler takes a `Context`, the context reaches its live session,
    /// and the session's list holds the tools; the session keeps the list as a `dyn ToolList`
    /// so that `session` does not import `tool`, and this module, the list's only maker
    /// ([`live`](Self::live) is the one constructor of a live handle), reads it back. The
    /// `expect` states that invariant; no input reaches it.
    fn tools(&self) -> &SessionTools {
        let list: &dyn Any = self.tool_list();
        list.downcast_ref()
            .expect("a live session's tool list is the SessionTools it was made with (live)")
    }

    /// Registers an action tool on this session, validated here as the builder validates
    /// configured tools; it replaces a runtime tool of the same name and shadows a configured
    /// one. A refused tool leaves the session's list unchanged.
    pub fn register_tool<T: ActionTool>(&self, tool: T) -> Result<(), ConfigurationError> {
        reserved(tool.name())?;
        self.install(RegisteredTool::action(Arc::new(ActionAdapter(tool)))?);
        Ok(())
    }

    /// Registers a plain tool on this session (see [`register_tool`](Self::register_tool)).
    pub fn register_plain_tool<T: PlainTool>(&self, tool: T) -> Result<(), ConfigurationError> {
        reserved(tool.name())?;
        self.install(RegisteredTool::plain(Arc::new(PlainAdapter(tool)))?);
        Ok(())
    }

    /// Registers a typed action tool on this session (see [`register_tool`](Self::register_tool)).
    pub fn register_typed_tool<T: TypedActionTool>(
        &self,
        tool: T,
    ) -> Result<(), ConfigurationError> {
        self.register_tool(Typed(tool))
    }

    /// Removes a runtime tool; configured tools cannot be removed. Answers whether a runtime
    /// tool of that name was there (an unknown name changes nothing).
    pub fn unregister_tool(&self, name: &str) -> bool {
        let (removed, edge) = self.tools().remove(name);
        if edge {
            self.send_list_changed();
        }
        removed
    }

    fn install(&self, tool: RegisteredTool) {
        if self.tools().install(tool) {
            self.send_list_changed();
        }
    }

    /// The session's tool names in `tools/list` order, without clearing the dirty flag.
    pub fn tool_names(&self) -> Vec<String> {
        let tools = self.tools();
        merge(&tools.configured.list(), &tools.lock())
            .iter()
            .map(|t| t.name.clone())
            .collect()
    }

    /// Where a call of `name` finds its tool: a runtime tool of that name (by its index: no
    /// copy of the list per call, whatever the session registered), `help` with the merged
    /// list when the session registered any, else the server's configured tools (the common
    /// case).
    pub(crate) fn session_tool(&self, name: &str) -> SessionTool {
        let tools = self.tools();
        let state = tools.lock();
        if state.runtime.is_empty() {
            return SessionTool::Configured;
        }
        if name == HELP {
            return SessionTool::Help(merge(&tools.configured.list(), &state));
        }
        match state.by_name.get(name) {
            Some(tool) => SessionTool::Runtime(Arc::clone(tool)),
            None => SessionTool::Configured,
        }
    }

    /// Serves `tools/list`: the merged list for the session's revision; clears the dirty flag
    /// (read and clear are one step).
    pub fn list_tools(&self) -> Value {
        self.list_tools_for(None)
    }

    /// [`list_tools`](Self::list_tools) as `identity` sees it: only what it may call.
    pub fn list_tools_for(&self, identity: Option<&crate::context::Identity>) -> Value {
        let tools = self.tools();
        let mut state = tools.lock();
        state.dirty = false;
        let merged = merge(&tools.configured.list(), &state);
        crate::tool::visibility::list(&merged, tools.version, identity)
    }

    /// [`list_tools_for`](Self::list_tools_for) for a request's `params`, paged by
    /// `per_page` ([`Limits::tools_per_page`](crate::Limits::tools_per_page)). A session
    /// without runtime tools pages its server's list itself (no copy of it per page).
    pub(crate) fn list_tools_page(
        &self,
        identity: Option<&crate::context::Identity>,
        per_page: Option<usize>,
        params: Option<&Value>,
    ) -> Result<Value, crate::protocol::RpcError> {
        let tools = self.tools();
        let mut state = tools.lock();
        state.dirty = false;
        let version = tools.version;
        let configured = tools.configured.list();
        if state.runtime.is_empty() {
            return crate::tool::visibility::list_page(
                &configured,
                version,
                identity,
                per_page,
                params,
            );
        }
        let merged = merge(&configured, &state);
        crate::tool::visibility::list_page(&merged, version, identity, per_page, params)
    }

    /// Whether the tool list changed since `tools/list` was last served.
    pub fn is_tool_list_dirty(&self) -> bool {
        self.tool_list().is_dirty()
    }
}

fn reserved(name: &str) -> Result<(), ConfigurationError> {
    if name == HELP {
        return Err(
            ConfigurationError::new(Problem::ReservedAtRuntime(name.to_owned())).in_tool(name),
        );
    }
    Ok(())
}

/// Runtime tools (newest first), then configured tools not shadowed, then help.
fn merge(configured: &[Arc<RegisteredTool>], state: &ToolState) -> Vec<Arc<RegisteredTool>> {
    let mut tools: Vec<Arc<RegisteredTool>> = state.runtime.clone();
    // Shadowed: by the index, not a scan of the runtime tools per configured one.
    tools.extend(
        configured
            .iter()
            .filter(|tool| !state.by_name.contains_key(&tool.name))
            .cloned(),
    );
    tools
}
