//! [`Companions`]: the plain tools and prompts an action tool brings with it, registered beside
//! it by [`ServerBuilder::tool`](crate::ServerBuilder::tool).

use std::sync::Arc;

use crate::prompt::Prompt;
use crate::prompt::definition::DynPrompt;
use crate::tool::PlainTool;
use crate::tool::erased::{DynPlainTool, PlainAdapter};

/// The plain tools and prompts served with an action tool, returned by
/// [`ActionTool::companions`](crate::ActionTool::companions): `.tool(t)` registers `t`, then
/// each of these, in order, as `.plain_tool(...)` and `.prompt(...)` would. A `#[wymcp::tool]`
/// block's `#[wymcp(plain)]` and `#[wymcp(prompt)]` methods are its companions.
///
/// ```
/// use wymcp::{ActionTool, Actions, ActionResult, Context, Data, Reply, Server};
/// use wymcp::tool::Companions;
/// # use wymcp::{CallResult, PlainTool};
/// # use serde_json::{Map, Value};
/// # struct Count;
/// # impl PlainTool for Count {
/// #     fn name(&self) -> &str { "count" }
/// #     fn description(&self) -> &str { "Count the notes" }
/// #     fn input_schema(&self) -> Map<String, Value> {
/// #         serde_json::json!({"type": "object"}).as_object().cloned().unwrap()
/// #     }
/// #     async fn run(&self, _: Map<String, Value>, _: Context) -> CallResult {
/// #         Ok(wymcp::CallOutput::text("0"))
/// #     }
/// # }
///
/// struct Notes;
///
/// impl ActionTool for Notes {
///     fn name(&self) -> &str { "notes" }
///     fn description(&self) -> &str { "Keep short notes" }
///     fn actions(&self) -> Actions {
///         wymcp::actions!({"list": {"description": "List the notes", "properties": {}}})
///     }
///     async fn run_action(&self, _: &str, _: Data, _: Context) -> ActionResult {
///         Ok(Reply::new(serde_json::json!([])))
///     }
///     fn companions(&self) -> Companions {
///         Companions::new().plain_tool(Count)
///     }
/// }
///
/// let server = Server::builder().tool(Notes).build().unwrap();
/// assert_eq!(server.tool_names(), ["notes", "count", "help"]);
/// ```
#[derive(Default)]
#[must_use]
pub struct Companions {
    pub(crate) plain_tools: Vec<Arc<dyn DynPlainTool>>,
    pub(crate) prompts: Vec<Arc<dyn DynPrompt>>,
}

impl Companions {
    /// None.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a plain tool, served after the action tool (and the plain tools added before).
    pub fn plain_tool<T: PlainTool>(mut self, tool: T) -> Self {
        self.plain_tools.push(Arc::new(PlainAdapter(tool)));
        self
    }

    /// Adds a prompt, listed after those registered before the action tool.
    pub fn prompt<P: Prompt>(mut self, prompt: P) -> Self {
        self.prompts.push(Arc::new(prompt));
        self
    }
}

impl std::fmt::Debug for Companions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tools: Vec<&str> = self.plain_tools.iter().map(|t| t.name()).collect();
        let prompts: Vec<&str> = self.prompts.iter().map(|p| p.name()).collect();
        f.debug_struct("Companions")
            .field("plain_tools", &tools)
            .field("prompts", &prompts)
            .finish()
    }
}
