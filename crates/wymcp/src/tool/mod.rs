//! What a tool's code works with beyond the two kinds of tool ([`ActionTool`]: one tool name,
//! many actions; [`PlainTool`]: one input schema, one run,
//! both at the crate root): the typed result of a call, a plain tool's error kinds, an action's
//! data errors and failures, the companions a tool registers, the conversions of a handler's
//! return value, and the bounded echo refusals quote with.

pub(crate) mod action;
pub(crate) mod call_result;
mod companions;

pub(crate) mod definition;
pub(crate) mod derived;
pub(crate) mod erased;
pub(crate) mod methods;
pub(crate) mod plain;
pub(crate) mod registered;
pub(crate) mod reply;
mod runtime;
pub(crate) mod table;
pub(crate) mod typed;
pub(crate) mod visibility;

pub use call_result::CallToolResult;
pub use companions::Companions;
pub use methods::{IntoActionResult, IntoCallResult, Params};
pub use plain::ErrorKind;
pub use reply::{DataError, Failure};
pub use wymcp_core::{Callback, Problem, bound};

// The crate root's, named here for the crate's own paths.
pub(crate) use crate::protocol::content::Content;
pub(crate) use action::ActionTool;
pub(crate) use plain::{CallError, CallOutput, CallResult, PlainTool};
pub(crate) use reply::{ActionError, ActionResult, Data, Reply};
pub(crate) use runtime::SessionTool;
pub(crate) use typed::TypedActionTool;
