//! [`ToolList`]: a live session's tool list, as the session sees it.

use std::any::Any;

/// A live session's tool list: the session owns it for its lifetime and tells a stream that
/// attaches while the list is dirty.
///
/// What the list holds (the runtime tools, the configured ones they shadow, `help`) and how it
/// changes belong to the tool API (`crate::tool::runtime`, which reads its own list back
/// through [`Any`]). The session sees the list only through this trait because a tool's
/// `Context` reaches its live session: a session that named the tool types would close the
/// cycle tool → context → session → tool.
pub(crate) trait ToolList: Any + Send + Sync {
    /// Whether the list changed since `tools/list` was last served.
    fn is_dirty(&self) -> bool;
}
