//! What an upstream tells of its lists and resources, relayed downstream: its
//! `notifications/tools/list_changed`, `notifications/prompts/list_changed` and
//! `notifications/resources/list_changed` re-list what it names and replace what the gateway
//! serves of it in one step ([`Refresher`]), which tells the downstream clients; its
//! `notifications/resources/updated` is sent on to them (the sessions subscribed to the URI,
//! and the 2026-07-28 `subscriptions/listen` streams that asked).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use serde_json::Value;
use tokio::sync::Notify;
use wymcp::client::Notification;
use wymcp::live::{LiveTools, ToolChange};

use crate::gateway::{Served, upstream_tools};
use crate::passthrough;
use crate::upstream::Upstream;

/// Where an upstream's changes go: the server's tools, prompts and resources (through
/// `live`), and the wake-up of the upstream's refresh task.
#[derive(Debug, Clone)]
pub(crate) struct Changes {
    live: LiveTools,
    pending: Arc<Pending>,
}

/// The lists an upstream said changed, not refreshed yet: notifications that come while a
/// refresh runs make one more refresh of each list, not one each.
#[derive(Debug, Default)]
struct Pending {
    tools: AtomicBool,
    prompts: AtomicBool,
    resources: AtomicBool,
    wake: Notify,
}

impl Pending {
    fn mark(&self, list: &AtomicBool) {
        list.store(true, Ordering::SeqCst);
        self.wake.notify_one();
    }
}

impl Changes {
    pub(crate) fn new(live: LiveTools) -> Changes {
        Changes {
            live,
            pending: Arc::default(),
        }
    }

    /// Relays `note` when it is a list change or a resource update; answers whether it was
    /// one.
    pub(crate) fn relay(&self, upstream: &str, note: &Notification) -> bool {
        let pending = &self.pending;
        match note.method() {
            "notifications/tools/list_changed" => pending.mark(&pending.tools),
            "notifications/prompts/list_changed" => pending.mark(&pending.prompts),
            "notifications/resources/list_changed" => pending.mark(&pending.resources),
            "notifications/resources/updated" => {
                let uri = note
                    .params()
                    .and_then(|p| p.get("uri"))
                    .and_then(Value::as_str);
                let server = self.live.server();
                if server.is_none() {
                    tracing::debug!(target: "wymcp_gateway", %upstream, method = note.method(), "no server serves the gateway yet: not relayed");
                }
                if let (Some(uri), Some(server)) = (uri, server) {
                    let uri = uri.to_owned();
                    // Off the client's reader: the shared subscription store may be asked.
                    tokio::spawn(async move {
                        server.notify_resource_updated(&uri).await;
                    });
                }
            }
            _ => return false,
        }
        true
    }
}

/// What one upstream's refresh task needs: what it serves now of the upstream, and what
/// decides how new tools are served.
pub(crate) struct Refresher {
    pub(crate) upstream: Weak<Upstream>,
    pub(crate) changes: Changes,
    /// The names its tools are served under now.
    pub(crate) served: Vec<String>,
    /// Whether the upstream serves tasks: each tool made anew is served with the task
    /// support its definition declares, as at start.
    pub(crate) tasks: bool,
    /// The names its prompts are served under now.
    pub(crate) prompts: Vec<String>,
    /// The URIs of its resources served now.
    pub(crate) resources: Vec<String>,
    /// Its resource templates served now.
    pub(crate) templates: Vec<String>,
    /// The URIs of its skills' files: served as the skills', never as plain resources.
    pub(crate) skill_files: BTreeSet<String>,
}

impl Refresher {
    /// Waits for the upstream's `list_changed` notifications and refreshes the lists they
    /// name (prompts, then resources, then tools: one at a time), until the upstream is gone.
    pub(crate) async fn run(mut self) {
        let pending = Arc::clone(&self.changes.pending);
        loop {
            pending.wake.notified().await;
            let Some(upstream) = self.upstream.upgrade() else {
                return;
            };
            if pending.prompts.swap(false, Ordering::SeqCst)
                && let Err(why) = self.refresh_prompts(&upstream).await
            {
                tracing::warn!(target: "wymcp_gateway", upstream = %upstream.name(), %why, "prompts not refreshed after notifications/prompts/list_changed");
            }
            if pending.resources.swap(false, Ordering::SeqCst)
                && let Err(why) = self.refresh_resources(&upstream).await
            {
                tracing::warn!(target: "wymcp_gateway", upstream = %upstream.name(), %why, "resources not refreshed after notifications/resources/list_changed");
            }
            if pending.tools.swap(false, Ordering::SeqCst)
                && let Err(why) = self.refresh(&upstream).await
            {
                tracing::warn!(target: "wymcp_gateway", upstream = %upstream.name(), %why, "tools not refreshed after notifications/tools/list_changed");
            }
        }
    }

    /// The server the gateway is registered on.
    fn server(&self) -> Result<wymcp::Server, String> {
        self.changes
            .live
            .server()
            .ok_or_else(|| "no server serves the gateway".to_owned())
    }

    /// Re-lists the upstream's tools (paged, within its limits, as at start), makes them as
    /// at start and replaces what it served with them.
    async fn refresh(&mut self, upstream: &Arc<Upstream>) -> Result<(), String> {
        let tools = upstream.list_tools().await.map_err(|e| e.to_string())?;
        let server = self.server()?;
        // Taken: every name served but this upstream's own.
        let mut names: BTreeSet<String> = server
            .tool_names()
            .into_iter()
            .filter(|name| !self.served.contains(name))
            .collect();
        let mut notices = Vec::new();
        let made = upstream_tools(upstream, &tools, self.tasks, &mut names, &mut notices);
        for notice in notices {
            tracing::warn!(target: "wymcp_gateway", "{notice}");
        }
        let mut change = self.served.iter().fold(ToolChange::new(), |change, name| {
            change.remove(name.clone())
        });
        let mut served = Vec::with_capacity(made.len());
        // Each with its policy: its task support goes with it, whatever its name.
        for tool in made {
            change = match tool {
                Served::Actions(tool) => {
                    served.push(wymcp::ActionTool::name(&tool).to_owned());
                    let policy = tool.policy();
                    change.tool_with(tool, policy)
                }
                Served::Tool(tool) => {
                    served.push(wymcp::PlainTool::name(&tool).to_owned());
                    let policy = tool.policy();
                    change.plain_tool_with(tool, policy)
                }
                _ => change,
            };
        }
        self.changes
            .live
            .change(change)
            .map_err(|e| e.to_string())?;
        tracing::info!(target: "wymcp_gateway", upstream = %upstream.name(), tools = served.len(), "tools refreshed");
        self.served = served;
        Ok(())
    }

    /// Re-lists the upstream's prompts and replaces what it served of them (names another
    /// upstream took prefixed, as at start).
    async fn refresh_prompts(&mut self, upstream: &Arc<Upstream>) -> Result<(), String> {
        let listed = upstream.list_prompts().await.map_err(|e| e.to_string())?;
        let server = self.server()?;
        let mut names: BTreeSet<String> = server
            .prompt_names()
            .into_iter()
            .filter(|name| !self.prompts.contains(name))
            .collect();
        let mut notices = Vec::new();
        let made = passthrough::prompts(upstream, &listed, &mut names, &mut notices);
        for notice in notices {
            tracing::warn!(target: "wymcp_gateway", "{notice}");
        }
        let mut change = self.prompts.iter().fold(ToolChange::new(), |change, name| {
            change.remove_prompt(name.clone())
        });
        if self.prompts.is_empty() && made.is_empty() {
            return Ok(());
        }
        let mut served = Vec::with_capacity(made.len());
        for prompt in made {
            served.push(wymcp::Prompt::name(&prompt).to_owned());
            change = change.prompt(prompt);
        }
        self.changes
            .live
            .change(change)
            .map_err(|e| e.to_string())?;
        tracing::info!(target: "wymcp_gateway", upstream = %upstream.name(), prompts = served.len(), "prompts refreshed");
        self.prompts = served;
        Ok(())
    }

    /// Re-lists the upstream's resources and resource templates and replaces what it served
    /// of them (a URI another upstream serves left out, as at start).
    async fn refresh_resources(&mut self, upstream: &Arc<Upstream>) -> Result<(), String> {
        let (mut listed, templates) = upstream.list_resources().await.map_err(|e| e.to_string())?;
        let server = self.server()?;
        listed.retain(|resource| {
            let uri = resource.get("uri").and_then(Value::as_str);
            !uri.is_some_and(|uri| self.skill_files.contains(uri))
        });
        let mut uris: BTreeSet<String> = server
            .resource_uris()
            .into_iter()
            .filter(|uri| !self.resources.contains(uri) && !self.skill_files.contains(uri))
            .chain(
                server
                    .resource_template_uris()
                    .into_iter()
                    .filter(|template| !self.templates.contains(template)),
            )
            .collect();
        let mut notices = Vec::new();
        let resources = passthrough::resources(upstream, &listed, &mut uris, &mut notices);
        let made_templates = passthrough::templates(upstream, &templates, &mut uris, &mut notices);
        for notice in notices {
            tracing::warn!(target: "wymcp_gateway", "{notice}");
        }
        if self.resources.is_empty()
            && self.templates.is_empty()
            && resources.is_empty()
            && made_templates.is_empty()
        {
            return Ok(());
        }
        let mut change = ToolChange::new();
        for uri in &self.resources {
            change = change.remove_resource(uri.clone());
        }
        for template in &self.templates {
            change = change.remove_resource_template(template.clone());
        }
        let served: Vec<String> = resources.iter().map(|r| r.uri().to_owned()).collect();
        let served_templates: Vec<String> = made_templates
            .iter()
            .map(|t| t.uri_template().to_owned())
            .collect();
        for resource in resources {
            change = change.resource(resource);
        }
        for template in made_templates {
            change = change.resource_template(template);
        }
        self.changes
            .live
            .change(change)
            .map_err(|e| e.to_string())?;
        tracing::info!(target: "wymcp_gateway", upstream = %upstream.name(), resources = served.len(), templates = served_templates.len(), "resources refreshed");
        upstream.served_uris_changed(&served);
        self.resources = served;
        self.templates = served_templates;
        Ok(())
    }
}
