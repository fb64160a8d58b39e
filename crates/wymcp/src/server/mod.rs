//! [`Server`]: the validated tool set and server identity, built once by [`ServerBuilder`].

mod builder;
mod checks;
pub(crate) mod extension;
mod features;
mod live_tools;
mod methods;
mod mount;
pub(crate) mod notify;
mod policy;
mod principals;
mod shared;
#[cfg(feature = "skills")]
mod skills;
mod task_builder;
mod tasks;

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::context::Context;
use crate::context::Identity;
use crate::dispatch::{self, CallToolResult};
use crate::protocol::{ProtocolVersion, RpcError};
use crate::tool::SessionTool;
use crate::tool::registered::RegisteredTool;
use crate::tool::table::{Configured, ToolTable, Tools};

pub use crate::card::info::ServerInfo;
pub use builder::ServerBuilder;
pub use live_tools::{LiveTools, ToolChange, ToolChangeError};
pub use policy::ToolPolicy;

/// A built MCP server: every tool validated, every definition and validator built once.
///
/// Cheap to clone. Transports serve it; tests call it through [`crate::testing`].
///
/// ```
/// use serde_json::json;
/// use wymcp::testing::call_tool;
/// use wymcp::{Context, ProtocolVersion, Server};
///
/// # tokio_test_block_on(async {
/// let server = Server::builder().name("demo").version("1.0.0").build().unwrap();
/// let tools = server.list_tools(ProtocolVersion::V2025_11_25);
/// assert_eq!(tools["tools"][0]["name"], "help");
///
/// let result = call_tool(&server, "help", Some(json!({})), Context::default())
///     .await
///     .unwrap();
/// assert!(!result.is_error());
/// assert_eq!(result.json().unwrap()["tools"][0]["tool"], "help");
/// # });
/// # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct Server {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    info: ServerInfo,
    instructions: Option<String>,
    /// Shared with every live session (its runtime tools are merged over them); fixed
    /// unless the server was built with [`ServerBuilder::live_tools`].
    tools: ToolTable,
    features: features::Features,
}

impl Server {
    /// Starts building a server.
    pub fn builder() -> ServerBuilder {
        ServerBuilder::new()
    }

    pub(crate) fn from_parts(
        info: ServerInfo,
        instructions: Option<String>,
        tools: ToolTable,
        features: features::Features,
    ) -> Self {
        Server {
            inner: Arc::new(Inner {
                info,
                instructions,
                tools,
                features,
            }),
        }
    }

    pub(crate) fn features(&self) -> &features::Features {
        &self.inner.features
    }

    /// The stores the deployments serving this server use ([`ServerBuilder::backends`]).
    pub(crate) fn backends(&self) -> &crate::backend::Backends {
        &self.inner.features.backends
    }

    /// The operation middleware, when the server has layers.
    fn after_gates(&self) -> Option<&dyn dispatch::AfterGates> {
        let stack = self.inner.features.middleware.as_ref()?;
        Some(stack)
    }

    /// What one client may make the serving core spend.
    pub fn limits(&self) -> &crate::Limits {
        &self.inner.features.limits
    }

    /// The server's identity.
    pub fn info(&self) -> &ServerInfo {
        &self.inner.info
    }

    /// The Server Card (SEP-2127) generated from the builder's identity, as the HTTP transport
    /// serves it at `<endpoint>/server-card` (see [`crate::card`]).
    pub fn server_card(&self) -> Value {
        crate::card::document::server_card(&self.inner.info)
    }

    /// The MCP registry's `server.json` (schema 2025-12-11) for this server and `packages`,
    /// or why the registry would refuse it: a name that is not reverse-DNS
    /// `namespace/server`, a missing or over-100-character description, a version range, or
    /// neither a package nor a remote (see [`crate::card`]).
    pub fn server_json(
        &self,
        packages: &[crate::card::Package],
    ) -> Result<Value, crate::card::RegistryError> {
        crate::card::registry::server_json(&self.inner.info, packages)
    }

    /// The `instructions` sent in `initialize`, verbatim.
    pub fn instructions(&self) -> Option<&str> {
        self.inner.instructions.as_deref()
    }

    /// Runs `f` on the configured tools as they are now (a live server's current snapshot).
    fn with_tools<R>(&self, f: impl FnOnce(&Tools) -> R) -> R {
        match &self.inner.tools {
            ToolTable::Fixed(tools) => f(tools),
            ToolTable::Live(live) => f(&ToolTable::load_live(live)),
        }
    }

    /// The configured tools in order, help last.
    pub(crate) fn registered(&self) -> Arc<[Arc<RegisteredTool>]> {
        self.with_tools(|tools| Arc::clone(&tools.list))
    }

    /// What a live session reads the configured tools from.
    pub(crate) fn configured(&self) -> Configured {
        self.inner.tools.configured()
    }

    /// Runs `f` on the configured tool `name` (runtime tools are a session's, not the
    /// server's), `None` when there is none.
    pub(crate) fn with_registered_tool<R>(
        &self,
        name: &str,
        f: impl FnOnce(Option<&RegisteredTool>) -> R,
    ) -> R {
        self.with_tools(|tools| f(tools.get(name).map(|t| &**t)))
    }

    /// Every OAuth scope a tool, action, resource, resource template or prompt declares,
    /// sorted and once each: what the
    /// protected-resource metadata publishes as `scopes_supported`.
    ///
    /// ```
    /// use serde_json::json;
    /// use wymcp::{ActionResult, ActionSchema, ActionTool, Actions, Context, Data, Reply, Server};
    ///
    /// struct Tasks;
    /// impl ActionTool for Tasks {
    ///     fn name(&self) -> &str { "tasks" }
    ///     fn description(&self) -> &str { "Tasks" }
    ///     fn actions(&self) -> Actions {
    ///         Actions::new()
    ///             .action("list", ActionSchema::new("List tasks").scopes(["tasks:read"]))
    ///             .action("create", ActionSchema::new("Create a task").scopes(["tasks:write"]))
    ///     }
    ///     async fn run_action(&self, _action: &str, _data: Data, _ctx: Context) -> ActionResult {
    ///         Ok(Reply::new(json!({})))
    ///     }
    /// }
    /// let server = Server::builder().tool(Tasks).build().unwrap();
    /// assert_eq!(server.declared_scopes(), ["tasks:read", "tasks:write"]);
    /// ```
    pub fn declared_scopes(&self) -> Vec<String> {
        let features = self.features();
        let tools = self.registered();
        let scopes: std::collections::BTreeSet<String> = tools
            .iter()
            .flat_map(|tool| tool.declared_scopes())
            .cloned()
            .chain(features.resources.declared_scopes())
            .chain(features.prompts.declared_scopes())
            .collect();
        scopes.into_iter().collect()
    }

    /// Tool names in `tools/list` order (help last).
    pub fn tool_names(&self) -> Vec<String> {
        self.with_tools(|tools| tools.list.iter().map(|t| t.name.clone()).collect())
    }

    /// The `tools/list` result for a session of `version`: stored definitions, `title` and
    /// `outputSchema` left out for 2025-03-26. No pagination.
    pub fn list_tools(&self, version: ProtocolVersion) -> Value {
        let tools: Vec<Value> = self.with_tools(|tools| {
            tools
                .list
                .iter()
                .map(|t| t.definition.for_version(version).clone())
                .collect()
        });
        json!({ "tools": tools })
    }

    /// The `tools/list` result as `identity` sees it: only what it may call (an action tool
    /// lists the actions whose scopes it holds; a tool with none is left out).
    pub fn list_tools_for(&self, version: ProtocolVersion, identity: Option<&Identity>) -> Value {
        self.with_tools(|tools| crate::tool::visibility::list(&tools.list, version, identity))
    }

    /// `tools/list` for a request's `params` as `identity` sees it, paged when
    /// [`Limits::tools_per_page`](crate::Limits::tools_per_page) is set (a bad `cursor` is
    /// `-32602`); the full list, `params` ignored, when it is not.
    pub(crate) fn list_tools_page(
        &self,
        version: ProtocolVersion,
        identity: Option<&Identity>,
        params: Option<&Value>,
    ) -> Result<Value, RpcError> {
        let per_page = self.limits().tools_per_page;
        self.with_tools(|tools| {
            crate::tool::visibility::list_page(&tools.list, version, identity, per_page, params)
        })
    }

    /// Calls a tool by name. `arguments` absent or `null` reads as `{}`. When the context
    /// belongs to a session, the session's tool list (runtime tools included) is served.
    /// Tests reach it through [`crate::testing::call_tool`]; transports through `tools_call`.
    ///
    /// Everything inside the arguments is the gates' to refuse (an `isError` result); only an
    /// unknown tool or arguments that are not an object are protocol errors (`-32602`), and
    /// the error a tool fails its request with ([`crate::CallError::protocol`]).
    pub(crate) async fn call_tool(
        &self,
        name: &str,
        arguments: Option<Value>,
        ctx: Context,
    ) -> Result<CallToolResult, RpcError> {
        let arguments = match arguments {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(map)) => map,
            Some(_) => {
                return Err(RpcError::invalid_params_reason(
                    "Invalid 'arguments' in params: expected an object",
                ));
            }
        };
        // In a session with runtime tools, the session's merged list (runtime tools first,
        // shadowing configured ones) is the one served: a runtime tool is found by the
        // session's index, `help` answers from the merged list. Any other name is a configured
        // tool: found by the index, as outside a session, so a call's cost does not grow with
        // the catalogue nor with the session's runtime tools (a scan of the list cost about
        // 5.5k instructions per call among 1,000 tools; a copy of the merged list, 4.2k among
        // 100 runtime tools: docs/performance.md).
        let session_tool = ctx.session().map(|s| s.session_tool(name));
        match session_tool {
            Some(SessionTool::Runtime(tool)) => {
                let stack = self.after_gates();
                // The list is `help`'s alone, and a runtime tool is never `help`.
                let result = dispatch::call(&[], &tool, arguments, ctx, self.limits(), stack);
                return result.await;
            }
            Some(SessionTool::Help(merged)) => {
                let Some(tool) = merged.iter().find(|t| t.name == name).cloned() else {
                    return Err(RpcError::unknown_tool(name));
                };
                let stack = self.after_gates();
                let result = dispatch::call(&merged, &tool, arguments, ctx, self.limits(), stack);
                return result.await;
            }
            Some(SessionTool::Configured) | None => {}
        }
        // A fixed table is read in place; a live one from the snapshot taken now.
        let snapshot;
        let table = match &self.inner.tools {
            ToolTable::Fixed(tools) => tools,
            ToolTable::Live(live) => {
                snapshot = ToolTable::load_live(live);
                &*snapshot
            }
        };
        let Some(&i) = table.index.get(name) else {
            return Err(RpcError::unknown_tool(name));
        };
        let tool = &table.list[i];
        let stack = self.after_gates();
        let tools = &table.list;
        dispatch::call(tools, tool, arguments, ctx, self.limits(), stack).await
    }

    /// Serves a `tools/call` request's `params` (`name`, `arguments`) as a transport receives
    /// them; the result stays typed, so the HTTP transport serializes it straight into the
    /// answer.
    pub(crate) async fn tools_call(
        &self,
        params: Option<Value>,
        ctx: Context,
    ) -> Result<CallToolResult, RpcError> {
        let params = match params {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(map)) => map,
            Some(_) => return Err(RpcError::invalid_params_reason("params must be an object")),
        };
        // `name` and `arguments` moved out in one pass over the members (two removals from the
        // map, and then freeing it, cost about 0.7k instructions per call).
        let (mut name, mut arguments) = (None, None);
        for (key, value) in params {
            match key.as_str() {
                "name" => name = Some(value),
                "arguments" => arguments = Some(value),
                _ => {}
            }
        }
        let name = match name {
            Some(Value::String(name)) => name,
            _ => {
                return Err(RpcError::invalid_params_reason(
                    "Missing or invalid 'name' in params",
                ));
            }
        };
        let call = self.call_tool(&name, arguments, ctx);
        let mut call = std::pin::pin!(call);
        // Most calls finish on their first poll: they never start a timer.
        if let std::task::Poll::Ready(result) = futures_util::poll!(call.as_mut()) {
            return result;
        }
        // The serving core's calls run under their timeout (the transports' runtimes have
        // timers; `call_tool` itself needs none, for runtimes built without them).
        let Some(timeout) = self.limits().timeout_for(&name) else {
            return call.await;
        };
        match tokio::time::timeout(timeout, call).await {
            Ok(result) => result,
            Err(_) => Ok(dispatch::timed_out(&name, timeout, "Limits::call_timeout")),
        }
    }
}
