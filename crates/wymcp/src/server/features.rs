//! Resources, prompts and completion on [`Server`]: the registries, the capabilities (and the
//! `server/discover` result that declares them), and what the server holds beside its tools.
//! Their methods are served by the one dispatch (`methods.rs`).

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::completion::registry::CompletionRegistry;
use crate::paging;
use crate::prompt::registry::PromptRegistry;
use crate::protocol::ProtocolVersion;
use crate::protocol::stateless::supported_versions;
use crate::resource::Hub;
use crate::resource::registry::ResourceRegistry;
use crate::server::Server;

/// Everything beyond tools a server serves, validated at `build()`.
#[derive(Debug)]
pub(crate) struct Features {
    pub(crate) resources: ResourceRegistry,
    pub(crate) prompts: PromptRegistry,
    pub(crate) completions: CompletionRegistry,
    /// The skills extension's skills (their files are in `resources`).
    #[cfg(feature = "skills")]
    pub(crate) skills: crate::skill::registry::SkillRegistry,
    /// The tasks extension: the tools that run as tasks, the store, the running calls.
    pub(crate) tasks: crate::task::Tasks,
    /// The extensions served (tasks, skills), as the serving core reaches them.
    pub(crate) extensions: super::extension::Extensions,
    pub(crate) page_size: usize,
    pub(crate) list_changed: bool,
    pub(crate) hub: Hub,
    /// Seals and opens the stateless era's `requestState` (multi round-trip requests).
    pub(crate) request_state: crate::mrtr::Codec,
    /// What one client may make the serving core spend.
    pub(crate) limits: crate::Limits,
    /// The capabilities the stateless era declares (made on first use).
    pub(crate) stateless_capabilities: std::sync::OnceLock<Value>,
    /// The operation middleware, composed; `None` when no layer is configured.
    pub(crate) middleware: Option<crate::middleware::Stack>,
    /// Where notifications go besides this node (a transport with a bus installs it).
    pub(crate) relay: Arc<crate::session::Relay>,
    /// Every scope the server's tools declare, sorted: what a session's visible tools depend
    /// on (empty: visibility never changes).
    pub(crate) declared_scopes: Vec<String>,
    /// Per-principal state ([`crate::Context::user_state`]); `None`: not configured.
    pub(crate) user_state: Option<Arc<dyn crate::user_state::UserStateStore>>,
    /// The stores the deployments serving this server use (sessions, events, bus).
    pub(crate) backends: crate::backend::Backends,
}

impl Default for Features {
    fn default() -> Self {
        Features {
            resources: ResourceRegistry::default(),
            prompts: PromptRegistry::default(),
            completions: CompletionRegistry::default(),
            #[cfg(feature = "skills")]
            skills: crate::skill::registry::SkillRegistry::default(),
            tasks: crate::task::Tasks::default(),
            extensions: super::extension::Extensions::default(),
            page_size: paging::DEFAULT_PAGE_SIZE,
            list_changed: false,
            hub: Hub::new(),
            request_state: crate::mrtr::Codec::default(),
            limits: crate::Limits::default(),
            stateless_capabilities: std::sync::OnceLock::new(),
            middleware: None,
            relay: Arc::default(),
            user_state: None,
            backends: crate::backend::Backends::default(),
            declared_scopes: Vec::new(),
        }
    }
}

impl Server {
    /// The server's `capabilities` at `version`: what `initialize` answers a session of a
    /// session-era revision, and what `server/discover` (and the stateless era's method check)
    /// reads at 2026-07-28. The one place they are made.
    ///
    /// - `tools` and `logging` always; `resources` (`subscribe`, `listChanged`), `prompts`
    ///   (`listChanged`) and `completions` only when the server has resources, prompts or
    ///   completion providers.
    /// - `listChanged`: a session's tool list changes with the tools registered on it, so a
    ///   session's `tools.listChanged` is always `true`, and its resources' and prompts' say
    ///   whether the server declared [`list_changed`](crate::ServerBuilder::list_changed). The
    ///   stateless era has no per-session tools and tells changes only on
    ///   `subscriptions/listen`: it declares `listChanged` (as `true`) only when the server
    ///   does.
    /// - `extensions` (skills, tasks): the stateless era's only.
    ///
    /// ```
    /// use wymcp::Resource;
    /// use wymcp::{ProtocolVersion, Server};
    ///
    /// let bare = Server::builder().build().unwrap();
    /// let caps = bare.capabilities(ProtocolVersion::V2025_11_25);
    /// assert_eq!(caps["tools"]["listChanged"], true);
    /// assert!(caps.get("resources").is_none());
    /// let caps = bare.capabilities(ProtocolVersion::V2026_07_28);
    /// assert!(caps["tools"].get("listChanged").is_none());
    ///
    /// let with = Server::builder().resource(Resource::text("test://a", "a", "A")).build().unwrap();
    /// let caps = with.capabilities(ProtocolVersion::V2025_11_25);
    /// assert_eq!(caps["resources"]["subscribe"], true);
    /// ```
    pub fn capabilities(&self, version: ProtocolVersion) -> Value {
        let features = self.features();
        let declared = features.list_changed;
        let stateless = version.is_stateless();
        // `{"listChanged": changes}`, or `{}` where the stateless era declares no changes.
        let listing = |changes: bool| {
            let mut capability = Map::new();
            if !stateless || declared {
                capability.insert("listChanged".into(), Value::Bool(changes));
            }
            capability
        };
        let mut caps = Map::new();
        caps.insert("tools".into(), Value::Object(listing(true)));
        caps.insert("logging".into(), json!({}));
        if !features.resources.is_empty() {
            let mut resources = Map::new();
            resources.insert("subscribe".into(), Value::Bool(true));
            resources.extend(listing(declared));
            caps.insert("resources".into(), Value::Object(resources));
        }
        if !features.prompts.is_empty() {
            caps.insert("prompts".into(), Value::Object(listing(declared)));
        }
        if !features.completions.is_empty() {
            caps.insert("completions".into(), json!({}));
        }
        if stateless {
            let extensions = features.extensions.declarations();
            if !extensions.is_empty() {
                caps.insert("extensions".into(), Value::Object(extensions));
            }
        }
        Value::Object(caps)
    }

    /// The capabilities of the stateless era ([`capabilities`](Self::capabilities) at
    /// 2026-07-28), which every stateless request's method check reads: a server's
    /// capabilities never change once built, so they are made on first use.
    pub(crate) fn stateless_capabilities(&self) -> &Value {
        self.features()
            .stateless_capabilities
            .get_or_init(|| self.capabilities(ProtocolVersion::V2026_07_28))
    }

    /// The `server/discover` result (2026-07-28), before the era's shaping: the revisions
    /// served, the capabilities, the instructions.
    pub(crate) fn discover(&self) -> Value {
        let mut result = Map::new();
        result.insert("supportedVersions".into(), json!(supported_versions()));
        let capabilities = self.stateless_capabilities().clone();
        result.insert("capabilities".into(), capabilities);
        if let Some(instructions) = self.instructions() {
            result.insert("instructions".into(), json!(instructions));
        }
        Value::Object(result)
    }

    /// Resource URIs in `resources/list` order.
    pub fn resource_uris(&self) -> Vec<String> {
        self.features().resources.uris()
    }

    /// Resource templates in `resources/templates/list` order.
    pub fn resource_template_uris(&self) -> Vec<String> {
        self.features().resources.template_uris()
    }

    /// Prompt names in `prompts/list` order.
    pub fn prompt_names(&self) -> Vec<String> {
        self.features().prompts.names()
    }
}

#[cfg(test)]
mod tests {
    use crate::Server;

    #[test]
    fn list_changed_is_declared_at_2026_07_28_only_when_the_server_declares_it() {
        let plain = Server::builder().build().expect("builds");
        let capabilities = plain.stateless_capabilities();
        assert!(capabilities["tools"].get("listChanged").is_none());
        let declared = Server::builder()
            .list_changed(true)
            .build()
            .expect("builds");
        assert_eq!(
            declared.stateless_capabilities()["tools"]["listChanged"],
            true
        );
    }
}
