//! The method table: every JSON-RPC method wymcp serves, in either era.

use serde_json::Value;

use super::extensions::{SKILLS_EXTENSION, TASKS_EXTENSION};

/// A method wymcp serves, parsed from the `method` string: one table for both eras, each
/// method knowing the era it is served in.
///
/// ```
/// use wymcp::protocol::Method;
///
/// assert_eq!(Method::parse("tools/call"), Some(Method::ToolsCall));
/// assert_eq!(Method::parse("resources/read"), Some(Method::ResourcesRead));
/// assert_eq!(Method::ResourceTemplatesList.as_str(), "resources/templates/list");
/// assert_eq!(Method::parse("tools/frobnicate"), None);
/// assert!(Method::Initialize.served_in_session() && !Method::Initialize.served_stateless());
/// assert!(Method::Discover.served_stateless() && !Method::Discover.served_in_session());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
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
    /// `server/discover` (2026-07-28).
    Discover,
    /// `subscriptions/listen` (2026-07-28): a long-lived stream of the change notifications
    /// the client opts in to.
    SubscriptionsListen,
    /// `skills/list` (the skills extension, 2026-07-28).
    SkillsList,
    /// `skills/get` (the skills extension, 2026-07-28).
    SkillsGet,
    /// `resources/directory/read` (the skills extension's `directoryRead`, 2026-07-28).
    ResourcesDirectoryRead,
    /// `tasks/get` (the tasks extension, 2026-07-28).
    TasksGet,
    /// `tasks/update` (the tasks extension, 2026-07-28).
    TasksUpdate,
    /// `tasks/cancel` (the tasks extension, 2026-07-28).
    TasksCancel,
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
            "server/discover" => Method::Discover,
            "subscriptions/listen" => Method::SubscriptionsListen,
            "skills/list" => Method::SkillsList,
            "skills/get" => Method::SkillsGet,
            "resources/directory/read" => Method::ResourcesDirectoryRead,
            "tasks/get" => Method::TasksGet,
            "tasks/update" => Method::TasksUpdate,
            "tasks/cancel" => Method::TasksCancel,
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
            Method::Discover => "server/discover",
            Method::SubscriptionsListen => "subscriptions/listen",
            Method::SkillsList => "skills/list",
            Method::SkillsGet => "skills/get",
            Method::ResourcesDirectoryRead => "resources/directory/read",
            Method::TasksGet => "tasks/get",
            Method::TasksUpdate => "tasks/update",
            Method::TasksCancel => "tasks/cancel",
        }
    }

    /// Served in a session (2025-03-26 to 2025-11-25). The extensions' methods are not: a
    /// session's capabilities have no `extensions` to declare them in.
    pub fn served_in_session(self) -> bool {
        !matches!(
            self,
            Method::Discover
                | Method::SubscriptionsListen
                | Method::SkillsList
                | Method::SkillsGet
                | Method::ResourcesDirectoryRead
                | Method::TasksGet
                | Method::TasksUpdate
                | Method::TasksCancel
        )
    }

    /// Served in the stateless era (2026-07-28), which removed `initialize`, `ping`,
    /// `logging/setLevel` and `resources/(un)subscribe`; its notifications are not requests.
    pub fn served_stateless(self) -> bool {
        !matches!(
            self,
            Method::Initialize
                | Method::Initialized
                | Method::Ping
                | Method::SetLevel
                | Method::Cancelled
                | Method::ResourcesSubscribe
                | Method::ResourcesUnsubscribe
        )
    }

    /// The `params` key the `Mcp-Name` header mirrors (2026-07-28), for the methods that need
    /// one.
    pub fn name_param(self) -> Option<&'static str> {
        match self {
            Method::ToolsCall | Method::PromptsGet => Some("name"),
            Method::ResourcesRead => Some("uri"),
            Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => Some("taskId"),
            _ => None,
        }
    }

    /// Whether a server declaring `capabilities` serves this method. `subscriptions/listen`
    /// needs something to deliver: a `listChanged` or `resources.subscribe` declared `true`,
    /// or the tasks extension (its status notifications).
    ///
    /// ```
    /// use serde_json::json;
    /// use wymcp::protocol::Method;
    ///
    /// let listen = Method::SubscriptionsListen;
    /// assert!(!listen.is_served_by(&json!({"tools": {}})));
    /// assert!(listen.is_served_by(&json!({"tools": {"listChanged": true}})));
    /// assert!(listen.is_served_by(&json!({"resources": {"subscribe": true}})));
    /// let tasks = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    /// assert!(listen.is_served_by(&tasks));
    /// assert!(!Method::PromptsGet.is_served_by(&json!({"tools": {}})));
    ///
    /// let skills = json!({"extensions": {"io.modelcontextprotocol/skills": {}}});
    /// assert!(Method::SkillsList.is_served_by(&skills));
    /// assert!(!Method::ResourcesDirectoryRead.is_served_by(&skills));
    /// ```
    pub fn is_served_by(self, capabilities: &Value) -> bool {
        let skills = &capabilities["extensions"][SKILLS_EXTENSION];
        let needs = match self {
            Method::SkillsList | Method::SkillsGet => return skills.is_object(),
            Method::ResourcesDirectoryRead => return skills["directoryRead"] == Value::Bool(true),
            Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => {
                return capabilities["extensions"][TASKS_EXTENSION].is_object();
            }
            Method::SubscriptionsListen => {
                let tasks = capabilities["extensions"][TASKS_EXTENSION].is_object();
                return tasks
                    || ["tools", "prompts", "resources"].iter().any(|kind| {
                        let declared = |flag: &str| capabilities[kind][flag] == Value::Bool(true);
                        declared("listChanged") || declared("subscribe")
                    });
            }
            Method::ToolsList | Method::ToolsCall => "tools",
            Method::ResourcesList
            | Method::ResourceTemplatesList
            | Method::ResourcesRead
            | Method::ResourcesSubscribe
            | Method::ResourcesUnsubscribe => "resources",
            Method::PromptsList | Method::PromptsGet => "prompts",
            Method::Complete => "completions",
            Method::SetLevel => "logging",
            _ => return true,
        };
        capabilities.get(needs).is_some()
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
