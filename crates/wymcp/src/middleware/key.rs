//! [`Per`]: whom a built-in policy counts a call against.

use super::Operation;

/// Whom a built-in policy (rate limit, concurrency limit) counts a call against.
///
/// The caller is the authenticated principal; without one, the client: its address over HTTP
/// (both eras; behind a trusted proxy the forwarded one), else its session (an HTTP service
/// mounted without [`HttpServer`](crate::transport::http::HttpServer) knows no address), the
/// one client of stdio.
///
/// ```
/// use wymcp::middleware::Per;
///
/// assert_ne!(Per::Caller, Per::CallerAndTool);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Per {
    /// One budget per caller, over every tool the layer wraps.
    #[default]
    Caller,
    /// One budget per caller and tool (and per method, for the methods other than
    /// `tools/call`).
    CallerAndTool,
    /// One budget per caller, tool and action.
    CallerAndAction,
    /// One budget shared by every caller.
    Everyone,
}

impl Per {
    /// The key of `operation`'s budget.
    pub(crate) fn key(self, operation: &Operation) -> String {
        let mut key = match self {
            Per::Everyone => String::from("*"),
            _ => caller(operation),
        };
        if matches!(self, Per::CallerAndTool | Per::CallerAndAction) {
            key.push('\u{0}');
            // Another method than `tools/call` stands for its own tool.
            key.push_str(operation.tool().unwrap_or(operation.method()));
        }
        if self == Per::CallerAndAction {
            key.push('\u{0}');
            key.push_str(operation.action().unwrap_or_default());
        }
        key
    }

    /// Whom the budget is, in a refusal's words.
    pub(crate) fn whom(self) -> &'static str {
        match self {
            Per::Caller => "each caller",
            Per::CallerAndTool => "each caller on this tool",
            Per::CallerAndAction => "each caller on this action",
            Per::Everyone => "all callers together",
        }
    }
}

/// The caller: principal, else client address, else session, else the transport's one client.
fn caller(operation: &Operation) -> String {
    if let Some(principal) = operation.principal() {
        return format!("principal:{principal}");
    }
    if let Some(address) = operation.client_address() {
        // Counted as the session quota counts it: IPv6 by its /64, IPv4-mapped as IPv4.
        return format!("client:{}", crate::context::network(address));
    }
    if let Some(session) = operation.session_id() {
        return format!("session:{session}");
    }
    format!("transport:{}", operation.transport().as_str())
}
