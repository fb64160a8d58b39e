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

/// What a method needs the server to declare before it is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Needs {
    /// Nothing: the protocol's own machinery.
    Nothing,
    /// The capability of this key (`tools`, `resources`, ...).
    Capability(&'static str),
    /// The extension of this identifier, declared under `capabilities.extensions`.
    Extension(&'static str),
    /// The skills extension with `directoryRead` declared `true`.
    SkillsDirectoryRead,
    /// Something to deliver: a `listChanged` or `resources.subscribe` declared `true`, or the
    /// tasks extension (its status notifications).
    Notifications,
}

/// What serves a method: the method table's handler column, one handler per method for both
/// eras. The serving core answers the session's lifecycle and opens listen streams itself;
/// every other method is the server's, served in either era by the one dispatch
/// (`Server::serve_method`, `server/methods.rs`) with the request's context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Handler {
    /// A step of the session's lifecycle, answered by the serving core with the session's
    /// record (`serve/session.rs`).
    Lifecycle(Lifecycle),
    /// `subscriptions/listen`: admitted by the serving core, its stream framed by the
    /// transport (`serve/stateless/listen.rs`).
    Listen,
    /// `tools/call`: a call of its own (registered so it can be cancelled, its related
    /// messages on the request's stream), served by `Server::call_tool`.
    CallTool,
    /// A request the server answers with a value, through the layers when they wrap it.
    Serve(Serve),
}

/// The session's lifecycle: the handlers the serving core runs itself (session era).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lifecycle {
    /// `initialize`: starts a session (`serve/initialize.rs`).
    Initialize,
    /// `ping`: `{}`.
    Ping,
    /// `notifications/initialized`: the lifecycle gate opens.
    Initialized,
    /// `notifications/cancelled`: the named call is cancelled.
    Cancel,
    /// `logging/setLevel`: the session's log level.
    SetLevel,
}

/// The server's handlers of the requests it answers with a value (`server/methods.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Serve {
    /// `server/discover`: the versions, capabilities and instructions.
    Discover,
    /// `tools/list`: the tools as the caller sees them.
    ListTools,
    /// `resources/list`.
    ListResources,
    /// `resources/templates/list`.
    ListResourceTemplates,
    /// `resources/read`.
    ReadResource,
    /// `resources/subscribe`.
    Subscribe,
    /// `resources/unsubscribe`.
    Unsubscribe,
    /// `prompts/list`.
    ListPrompts,
    /// `prompts/get`.
    GetPrompt,
    /// `completion/complete`.
    Complete,
    /// A method of an extension, served by the extension that registers it
    /// (`server/extension.rs`).
    Extension,
}

/// One row of the method table.
#[derive(Debug, Clone, Copy)]
struct Entry {
    method: Method,
    name: &'static str,
    handler: Handler,
    /// Served in a session (2025-03-26 to 2025-11-25).
    session: bool,
    /// Served in the stateless era (2026-07-28).
    stateless: bool,
    needs: Needs,
    /// Whether the server's layers wrap it (besides `tools/call`, which passes them after the
    /// gates): the lists, reads, subscriptions, prompts and completion. The extensions'
    /// methods say so when they register (the skills extension's are wrapped).
    layered: bool,
    /// The `params` key the `Mcp-Name` header mirrors (2026-07-28).
    name_param: Option<&'static str>,
    /// Allowed while a session is still initializing.
    before_initialized: bool,
}

/// `session`, `stateless`, `layered`, `before_initialized`, as the rows read them.
const S: bool = true;
const N: bool = false;

// One argument per column, so that the table below reads as a table, one row a line.
#[allow(clippy::too_many_arguments)]
const fn row(
    method: Method,
    name: &'static str,
    handler: Handler,
    (session, stateless): (bool, bool),
    needs: Needs,
    layered: bool,
    name_param: Option<&'static str>,
    before_initialized: bool,
) -> Entry {
    Entry {
        method,
        name,
        handler,
        session,
        stateless,
        needs,
        layered,
        name_param,
        before_initialized,
    }
}

use Handler::{CallTool, Lifecycle as Core, Listen, Serve as Server};
use Lifecycle::{Cancel, Initialize, Initialized, Ping, SetLevel};
use Needs::{Capability as Cap, Extension as Ext, Nothing};
use Serve::{
    Complete, Discover, Extension, GetPrompt, ListPrompts, ListResourceTemplates, ListResources,
    ListTools, ReadResource, Subscribe, Unsubscribe,
};

/// The method table, one row per [`Method`] in declaration order: its wire name, its handler,
/// the eras that serve it, what the server must declare, whether layers wrap it, the param
/// `Mcp-Name` mirrors, and whether a session still initializing may send it (`eras` is
/// `(session, stateless)`). Every question about a method reads its row; `tests` check the
/// rows follow the enum.
#[rustfmt::skip]
const TABLE: [Entry; 23] = [
    //  method                          name                            handler                          eras    needs                    layered name_param  before_init
    row(Method::Initialize,             "initialize",                   Core(Initialize),                (S, N), Nothing,                      N, None,           S),
    row(Method::Initialized,            "notifications/initialized",    Core(Initialized),               (S, N), Nothing,                      N, None,           S),
    row(Method::Ping,                   "ping",                         Core(Ping),                      (S, N), Nothing,                      N, None,           S),
    row(Method::ToolsList,              "tools/list",                   Server(ListTools),               (S, S), Cap("tools"),                 S, None,           S),
    row(Method::ToolsCall,              "tools/call",                   CallTool,                        (S, S), Cap("tools"),                 N, Some("name"),   S),
    row(Method::SetLevel,               "logging/setLevel",             Core(SetLevel),                  (S, N), Cap("logging"),               N, None,           N),
    row(Method::Cancelled,              "notifications/cancelled",      Core(Cancel),                    (S, N), Nothing,                      N, None,           N),
    row(Method::ResourcesList,          "resources/list",               Server(ListResources),           (S, S), Cap("resources"),             S, None,           N),
    row(Method::ResourceTemplatesList,  "resources/templates/list",     Server(ListResourceTemplates),   (S, S), Cap("resources"),             S, None,           N),
    row(Method::ResourcesRead,          "resources/read",               Server(ReadResource),            (S, S), Cap("resources"),             S, Some("uri"),    N),
    row(Method::ResourcesSubscribe,     "resources/subscribe",          Server(Subscribe),               (S, N), Cap("resources"),             S, None,           N),
    row(Method::ResourcesUnsubscribe,   "resources/unsubscribe",        Server(Unsubscribe),             (S, N), Cap("resources"),             S, None,           N),
    row(Method::PromptsList,            "prompts/list",                 Server(ListPrompts),             (S, S), Cap("prompts"),               S, None,           N),
    row(Method::PromptsGet,             "prompts/get",                  Server(GetPrompt),               (S, S), Cap("prompts"),               S, Some("name"),   N),
    row(Method::Complete,               "completion/complete",          Server(Complete),                (S, S), Cap("completions"),           S, None,           N),
    row(Method::Discover,               "server/discover",              Server(Discover),                (N, S), Nothing,                      N, None,           N),
    row(Method::SubscriptionsListen,    "subscriptions/listen",         Listen,                          (N, S), Needs::Notifications,         N, None,           N),
    row(Method::SkillsList,             "skills/list",                  Server(Extension),               (N, S), Ext(SKILLS_EXTENSION),        N, None,           N),
    row(Method::SkillsGet,              "skills/get",                   Server(Extension),               (N, S), Ext(SKILLS_EXTENSION),        N, None,           N),
    row(Method::ResourcesDirectoryRead, "resources/directory/read",     Server(Extension),               (N, S), Needs::SkillsDirectoryRead,   N, None,           N),
    row(Method::TasksGet,               "tasks/get",                    Server(Extension),               (N, S), Ext(TASKS_EXTENSION),         N, Some("taskId"), N),
    row(Method::TasksUpdate,            "tasks/update",                 Server(Extension),               (N, S), Ext(TASKS_EXTENSION),         N, Some("taskId"), N),
    row(Method::TasksCancel,            "tasks/cancel",                 Server(Extension),               (N, S), Ext(TASKS_EXTENSION),         N, Some("taskId"), N),
];

impl Method {
    /// The method's row of the table.
    fn entry(self) -> &'static Entry {
        let entry = &TABLE[self as usize];
        debug_assert_eq!(entry.method, self, "the table follows the enum");
        entry
    }

    /// The method named `name`, if served. (A match, not a scan of the table: every request
    /// parses its method.)
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

    /// The method's handler, in either era.
    pub(crate) fn handler(self) -> Handler {
        self.entry().handler
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        self.entry().name
    }

    /// Served in a session (2025-03-26 to 2025-11-25). The extensions' methods are not: a
    /// session's capabilities have no `extensions` to declare them in.
    pub fn served_in_session(self) -> bool {
        self.entry().session
    }

    /// Served in the stateless era (2026-07-28), which removed `initialize`, `ping`,
    /// `logging/setLevel` and `resources/(un)subscribe`; its notifications are not requests.
    pub fn served_stateless(self) -> bool {
        self.entry().stateless
    }

    /// The `params` key the `Mcp-Name` header mirrors (2026-07-28), for the methods that need
    /// one.
    pub fn name_param(self) -> Option<&'static str> {
        self.entry().name_param
    }

    /// Whether the server's layers wrap this method (besides `tools/call`, which passes them
    /// after the gates; an extension's methods say so when the extension registers).
    pub(crate) fn layered(self) -> bool {
        self.entry().layered
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
        let extension = |id: &str| &capabilities["extensions"][id];
        match self.entry().needs {
            Needs::Nothing => true,
            Needs::Capability(key) => capabilities.get(key).is_some(),
            Needs::Extension(id) => extension(id).is_object(),
            Needs::SkillsDirectoryRead => {
                extension(SKILLS_EXTENSION)["directoryRead"] == Value::Bool(true)
            }
            Needs::Notifications => {
                extension(TASKS_EXTENSION).is_object()
                    || ["tools", "prompts", "resources"].iter().any(|kind| {
                        let declared = |flag: &str| capabilities[kind][flag] == Value::Bool(true);
                        declared("listChanged") || declared("subscribe")
                    })
            }
        }
    }

    /// Allowed while the session is still initializing (clients such as mcp-remote send
    /// `tools/list`/`tools/call` concurrently with `notifications/initialized`).
    pub fn allowed_before_initialized(self) -> bool {
        self.entry().before_initialized
    }
}

#[cfg(test)]
mod tests {
    use super::{Method, TABLE};

    #[test]
    fn the_table_has_one_row_per_method_in_order_and_parse_agrees() {
        for (index, entry) in TABLE.iter().enumerate() {
            assert_eq!(entry.method as usize, index, "{}", entry.name);
            assert_eq!(Method::parse(entry.name), Some(entry.method));
            assert_eq!(entry.method.as_str(), entry.name);
            assert!(entry.session || entry.stateless, "{} is served", entry.name);
        }
    }
}
