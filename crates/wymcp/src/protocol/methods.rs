//! The method table: every JSON-RPC method the session-era transport serves.

/// A method wymcp serves, parsed from the `method` string.
///
/// ```
/// use wymcp::protocol::Method;
///
/// assert_eq!(Method::parse("tools/call"), Some(Method::ToolsCall));
/// assert_eq!(Method::parse("resources/read"), Some(Method::ResourcesRead));
/// assert_eq!(Method::ResourceTemplatesList.as_str(), "resources/templates/list");
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
    /// `resources/list`.
    ResourcesList,
    /// `resources/templates/list`.
    ResourceTemplatesList,
    /// `resources/read`.
    ResourcesRead,
    /// `resources/subscribe`.
    ResourcesSubscribe,
    /// `resources/unsubscribe`.
    ResourcesUnsubscribe,
    /// `prompts/list`.
    PromptsList,
    /// `prompts/get`.
    PromptsGet,
    /// `completion/complete`.
    Complete,
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
            "resources/list" => Method::ResourcesList,
            "resources/templates/list" => Method::ResourceTemplatesList,
            "resources/read" => Method::ResourcesRead,
            "resources/subscribe" => Method::ResourcesSubscribe,
            "resources/unsubscribe" => Method::ResourcesUnsubscribe,
            "prompts/list" => Method::PromptsList,
            "prompts/get" => Method::PromptsGet,
            "completion/complete" => Method::Complete,
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
            Method::ResourcesList => "resources/list",
            Method::ResourceTemplatesList => "resources/templates/list",
            Method::ResourcesRead => "resources/read",
            Method::ResourcesSubscribe => "resources/subscribe",
            Method::ResourcesUnsubscribe => "resources/unsubscribe",
            Method::PromptsList => "prompts/list",
            Method::PromptsGet => "prompts/get",
            Method::Complete => "completion/complete",
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
