//! A server's tools replaced while it serves: [`LiveTools`], given to
//! [`ServerBuilder::live_tools`](crate::ServerBuilder::live_tools), swaps a set of tools in one
//! step ([`ToolChange`]), checked as `build()` checks them ([`ToolChangeError`]), and tells
//! every client `notifications/tools/list_changed`. A server built without it keeps the tools
//! of its `build()` for its life. The gateway uses it when an upstream's tools change.

pub use crate::server::{LiveTools, ToolChange, ToolChangeError};
