//! What an upstream tells of its lists and resources, relayed downstream: its
//! `notifications/tools/list_changed` re-lists its tools and replaces what the gateway serves
//! of them ([`refresh`]); its prompts' and resources' `list_changed` and its
//! `notifications/resources/updated` are sent on to the downstream clients (the sessions
//! subscribed to the URI, and the 2026-07-28 `subscriptions/listen` streams that asked).

use std::collections::BTreeSet;
use std::sync::{Arc, Weak};

use serde_json::Value;
use tokio::sync::Notify;
use wymcp::client::Notification;
use wymcp::live::{LiveTools, ToolChange};

use crate::gateway::{Served, upstream_tools};
use crate::upstream::Upstream;

/// Where an upstream's changes go: the server's tools (through `live`), and the wake-up of
/// the upstream's refresh task.
#[derive(Debug, Clone)]
pub(crate) struct Changes {
    live: LiveTools,
    /// Notified on each `notifications/tools/list_changed`: notifications that come while a
    /// refresh runs make one more refresh, not one each.
    tools: Arc<Notify>,
}

impl Changes {
    pub(crate) fn new(live: LiveTools) -> Changes {
        Changes {
            live,
            tools: Arc::new(Notify::new()),
        }
    }

    /// Relays `note` when it is a list change or a resource update; answers whether it was
    /// one.
    pub(crate) fn relay(&self, upstream: &str, note: &Notification) -> bool {
        let server = || {
            let server = self.live.server();
            if server.is_none() {
                tracing::debug!(target: "wymcp_gateway", %upstream, method = note.method(), "no server serves the gateway yet: not relayed");
            }
            server
        };
        match note.method() {
            "notifications/tools/list_changed" => self.tools.notify_one(),
            "notifications/prompts/list_changed" => {
                if let Some(server) = server() {
                    server.notify_prompts_list_changed();
                }
            }
            "notifications/resources/list_changed" => {
                if let Some(server) = server() {
                    server.notify_resources_list_changed();
                }
            }
            "notifications/resources/updated" => {
                let uri = note
                    .params()
                    .and_then(|p| p.get("uri"))
                    .and_then(Value::as_str);
                if let (Some(uri), Some(server)) = (uri, server()) {
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

/// What one upstream's refresh task needs: the tools it serves now, and what decides how
/// new ones are served.
pub(crate) struct Refresher {
    pub(crate) upstream: Weak<Upstream>,
    pub(crate) changes: Changes,
    /// The names its tools are served under now.
    pub(crate) served: Vec<String>,
    /// The names served at start: a tool named so keeps the policy it was registered with
    /// (its task support), a new name is served without tasks.
    pub(crate) at_start: BTreeSet<String>,
    /// Whether the upstream serves tasks.
    pub(crate) tasks: bool,
}

impl Refresher {
    /// Waits for the upstream's `list_changed` and refreshes, until the upstream is gone.
    pub(crate) async fn run(mut self) {
        loop {
            self.changes.tools.notified().await;
            let Some(upstream) = self.upstream.upgrade() else {
                return;
            };
            if let Err(why) = self.refresh(&upstream).await {
                tracing::warn!(target: "wymcp_gateway", upstream = %upstream.name(), %why, "tools not refreshed after notifications/tools/list_changed");
            }
        }
    }

    /// Re-lists the upstream's tools (paged, within its limits, as at start), makes them as
    /// at start and replaces what it served with them.
    async fn refresh(&mut self, upstream: &Arc<Upstream>) -> Result<(), String> {
        let tools = upstream.list_tools().await.map_err(|e| e.to_string())?;
        let Some(server) = self.changes.live.server() else {
            return Err("no server serves the gateway".to_owned());
        };
        // Taken: every name served but this upstream's own.
        let mut names: BTreeSet<String> = server
            .tool_names()
            .into_iter()
            .filter(|name| !self.served.contains(name))
            .collect();
        let mut notices = Vec::new();
        let (at_start, tasks) = (&self.at_start, self.tasks);
        let made = upstream_tools(
            upstream,
            &tools,
            |name| tasks && at_start.contains(name),
            &mut names,
            &mut notices,
        );
        for notice in notices {
            tracing::warn!(target: "wymcp_gateway", "{notice}");
        }
        let mut change = self.served.iter().fold(ToolChange::new(), |change, name| {
            change.remove(name.clone())
        });
        let mut served = Vec::with_capacity(made.len());
        for tool in made {
            change = match tool {
                Served::Actions(tool) => {
                    served.push(wymcp::ActionTool::name(&tool).to_owned());
                    change.tool(tool)
                }
                Served::Tool(tool) => {
                    served.push(wymcp::PlainTool::name(&tool).to_owned());
                    change.plain_tool(tool)
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
}
