//! The method table: every JSON-RPC method the session-era transport serves.

/// A method wymcp serves, parsed from the `method` string.
///
/// ```
/// use wymcp::protocol::Method;
///
/// assert_eq!(Method::parse("tools/call"), Some(Method::ToolsCall));
/// assert_eq!(Method::parse("tools/frobnicate"), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// `initialize`.
    Initialize,
    /// `notifications/initialized`.
    Initialized,
    /// `ping`.
    Ping,
    /// `tools/list`.
    ToolsList,
    /// `tools/call`.
    ToolsCall,
    /// `logging/setLevel`.
    SetLevel,
    /// `notifications/cancelled`.
    Cancelled,
}

impl Method {
    /// The method named `name`, if served.
    pub fn parse(name: &str) -> Option<Method> {
        Some(match name {
            "initialize" => Method::Initialize,
            "notifications/initialized" => Method::Initialized,
            "ping" => Method::Ping,
            "tools/list" => Method::ToolsList,
            "tools/call" => Method::ToolsCall,
            "logging/setLevel" => Method::SetLevel,
            "notifications/cancelled" => Method::Cancelled,
            _ => return None,
        })
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Initialize => "initialize",
            Method::Initialized => "notifications/initialized",
            Method::Ping => "ping",
            Method::ToolsList => "tools/list",
            Method::ToolsCall => "tools/call",
            Method::SetLevel => "logging/setLevel",
            Method::Cancelled => "notifications/cancelled",
        }
    }

    /// Allowed while the session is still initializing (clients such as mcp-remote send
    /// `tools/list`/`tools/call` concurrently with `notifications/initialized`).
    pub fn allowed_before_initialized(self) -> bool {
        matches!(
            self,
            Method::Initialize
                | Method::Initialized
                | Method::Ping
                | Method::ToolsList
                | Method::ToolsCall
        )
    }
}
