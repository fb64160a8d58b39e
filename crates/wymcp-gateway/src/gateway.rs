//! [`Gateway`]: the upstreams connected, their tools made into wymcp tools, registered on a
//! [`ServerBuilder`].

use std::collections::BTreeSet;
use std::sync::Arc;

use wymcp::client::ToolInfo;
use wymcp::live::LiveTools;
use wymcp::{ActionTool as _, ServerBuilder};

use crate::actions::{self, UpstreamActions};
use crate::changes::{Changes, Refresher};
use crate::completion::{Completed, Forward, ForwardCompletion};
use crate::config::{Expose, GatewayConfig, UpstreamConfig};
use crate::openapi::OpenApiUpstream;
use crate::passthrough;
use crate::report::Notice;
use crate::tools::UpstreamTool;
use crate::upstream::{Catalogue, Upstream};

/// The name wymcp reserves for its help tool.
const HELP: &str = "help";

/// One tool, resource, template or prompt the gateway serves.
pub(crate) enum Served {
    Actions(UpstreamActions),
    Tool(UpstreamTool),
    Resource(wymcp::Resource),
    Template(wymcp::ResourceTemplate),
    Prompt(passthrough::ForwardPrompt),
    Completion(ForwardCompletion),
    Api(wymcp_openapi::OpenApiTool),
    Skill(wymcp::skill::Skill),
}

impl std::fmt::Debug for Served {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Served::Actions(tool) => f.debug_tuple("Actions").field(tool).finish(),
            Served::Tool(tool) => f.debug_tuple("Tool").field(tool).finish(),
            Served::Resource(r) => f.debug_tuple("Resource").field(&r.uri()).finish(),
            Served::Template(t) => f.debug_tuple("Template").field(&t.uri_template()).finish(),
            Served::Prompt(p) => f.debug_tuple("Prompt").field(p).finish(),
            Served::Completion(c) => f.debug_tuple("Completion").field(c).finish(),
            Served::Api(tool) => f.debug_tuple("Api").field(&tool.name()).finish(),
            Served::Skill(skill) => f.debug_tuple("Skill").field(skill).finish(),
        }
    }
}

/// Upstream MCP servers, connected, their tools ready to serve through wymcp: register them
/// on a [`ServerBuilder`] with [`register`](Self::register), beside tools of your own, limits,
/// middleware and auth.
///
/// An upstream that cannot be started, or whose tools cannot be listed, is left out and
/// reported ([`notices`](Self::notices)); the others are served.
///
/// ```no_run
/// use wymcp_gateway::{Gateway, GatewayConfig};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let config = GatewayConfig::from_file("mcp.json")?;
/// let gateway = Gateway::start(config).await;
/// for notice in gateway.notices() {
///     eprintln!("{notice}");
/// }
/// let server = gateway.register(wymcp::Server::builder().name("gateway")).build()?;
/// # let _ = server; Ok(()) }
/// ```
#[derive(Debug)]
pub struct Gateway {
    served: Vec<Served>,
    notices: Vec<Notice>,
    upstreams: Vec<String>,
    /// The tools of the server the gateway is registered on, replaced when an upstream's
    /// change.
    live: LiveTools,
}

impl Gateway {
    /// Connects every upstream of `config` (at once), lists their tools and makes the tools
    /// the gateway serves.
    pub async fn start(config: GatewayConfig) -> Gateway {
        let live = LiveTools::new();
        let mut set = tokio::task::JoinSet::new();
        for (index, upstream) in config.upstreams().iter().cloned().enumerate() {
            let changes = Changes::new(live.clone());
            set.spawn(async move {
                let name = upstream.name.clone();
                (index, name, Upstream::start(upstream, changes).await)
            });
        }
        let mut started = Vec::new();
        let mut notices = Vec::new();
        while let Some(joined) = set.join_next().await {
            match joined {
                Ok((index, _, Ok(ok))) => started.push((index, ok)),
                Ok((_, name, Err(error))) => notices.push(Notice::upstream_only(
                    &name,
                    format!("not served: {}", error.reason()),
                )),
                Err(panicked) => {
                    tracing::error!(target: "wymcp_gateway", %panicked, "an upstream's start panicked")
                }
            }
        }
        started.sort_by_key(|(index, _)| *index);
        let mut gateway = Gateway {
            served: Vec::new(),
            notices,
            upstreams: Vec::new(),
            live,
        };
        let mut names = BTreeSet::from([HELP.to_owned()]);
        let (mut uris, mut prompts) = (BTreeSet::new(), BTreeSet::new());
        for (_, (upstream, mut catalogue)) in started {
            gateway.upstreams.push(upstream.name().to_owned());
            let mut refresher = gateway.serve(&upstream, &catalogue, &mut names);
            let notices = &mut gateway.notices;
            let served = &mut gateway.served;
            // Its skills first, at their URIs (a URI another upstream took leaves the skill
            // out); their files are the skills', never passed through as plain resources.
            let skills = std::mem::take(&mut catalogue.skills);
            for left_out in skills.left_out {
                notices.push(Notice::upstream_only(upstream.name(), left_out));
            }
            refresher.skill_files = skills.files.iter().cloned().collect();
            for skill in skills.served {
                if let Some(taken) = skill.uris.iter().find(|uri| uris.contains(*uri)) {
                    notices.push(Notice::upstream_only(
                        upstream.name(),
                        format!(
                            "skill {}: left out: another upstream serves {taken}",
                            skill.uris[0]
                        ),
                    ));
                    continue;
                }
                uris.extend(skill.uris);
                served.push(Served::Skill(skill.skill));
            }
            catalogue.resources.retain(|resource| {
                let uri = resource.get("uri").and_then(serde_json::Value::as_str);
                !uri.is_some_and(|uri| skills.files.contains(uri))
            });
            for resource in
                passthrough::resources(&upstream, &catalogue.resources, &mut uris, notices)
            {
                refresher.resources.push(resource.uri().to_owned());
                served.push(Served::Resource(resource));
            }
            let mut completions = Vec::new();
            for template in
                passthrough::templates(&upstream, &catalogue.templates, &mut uris, notices)
            {
                if catalogue.completions {
                    if let Ok(parsed) = wymcp::resource::UriTemplate::parse(template.uri_template())
                    {
                        for variable in parsed.variables() {
                            completions.push(ForwardCompletion::template(
                                &upstream,
                                template.uri_template(),
                                variable,
                            ));
                        }
                    }
                }
                refresher.templates.push(template.uri_template().to_owned());
                served.push(Served::Template(template));
            }
            for prompt in passthrough::prompts(&upstream, &catalogue.prompts, &mut prompts, notices)
            {
                if catalogue.completions {
                    use wymcp::Prompt as _;
                    for argument in prompt.arguments() {
                        completions.push(ForwardCompletion::prompt(
                            &upstream,
                            prompt.name(),
                            prompt.upstream_name(),
                            argument.name(),
                        ));
                    }
                }
                refresher
                    .prompts
                    .push(wymcp::Prompt::name(&prompt).to_owned());
                served.push(Served::Prompt(prompt));
            }
            served.extend(completions.into_iter().map(Served::Completion));
            // Its `list_changed` notifications refresh what it serves while the server runs.
            tokio::spawn(refresher.run());
        }
        for api in config.apis() {
            gateway.serve_api(api, &mut names).await;
        }
        gateway
    }

    /// Loads one OpenAPI upstream and makes its tools (one per tag); an operation not served
    /// and a tool whose name is taken are reported.
    async fn serve_api(&mut self, api: &OpenApiUpstream, names: &mut BTreeSet<String>) {
        let loaded = match api.load().await {
            Ok(loaded) => loaded,
            Err(reason) => {
                self.notices.push(Notice::upstream_only(
                    api.name(),
                    format!("not served: {reason}"),
                ));
                return;
            }
        };
        for skipped in loaded.skipped() {
            self.notices.push(Notice::new(
                api.name(),
                skipped.operation(),
                format!("left out: {}", skipped.reason()),
            ));
        }
        self.upstreams.push(api.name().to_owned());
        for tool in loaded.into_tools() {
            if names.insert(tool.name().to_owned()) {
                self.served.push(Served::Api(tool));
            } else {
                let name = tool.name().to_owned();
                self.notices.push(Notice::new(
                    api.name(),
                    &name,
                    format!("left out: the name {name:?} is taken by another tool"),
                ));
            }
        }
    }

    /// Registers the gateway's tools on `builder`. The server built from it follows the
    /// upstreams' changes: an upstream's `notifications/tools/list_changed` replaces its tools
    /// ([`LiveTools`]), and its list changes and resource updates are sent on to the clients
    /// (the server declares `listChanged`).
    pub fn register(self, builder: ServerBuilder) -> ServerBuilder {
        let mut builder = builder.live_tools(&self.live).list_changed(true);
        for served in self.served {
            builder = match served {
                Served::Actions(tool) => {
                    let policy = tool.policy();
                    builder.tool_with(tool, policy)
                }
                Served::Tool(tool) => {
                    let policy = tool.policy();
                    builder.plain_tool_with(tool, policy)
                }
                Served::Resource(resource) => builder.resource(resource),
                Served::Template(template) => builder.resource_template(template),
                Served::Prompt(prompt) => builder.prompt(prompt),
                Served::Completion(completion) => {
                    let provider = Forward::from(&completion);
                    match completion.completed {
                        Completed::Prompt(prompt) => {
                            builder.prompt_completion(prompt, completion.argument, provider)
                        }
                        Completed::Template(template) => {
                            builder.template_completion(template, completion.argument, provider)
                        }
                    }
                }
                Served::Api(tool) => builder.tool(tool),
                Served::Skill(skill) => builder.skill(skill),
            };
        }
        builder
    }

    /// What the start-up reports: upstreams not served, tools left out or served with a
    /// widened schema, and why.
    pub fn notices(&self) -> &[Notice] {
        &self.notices
    }

    /// The upstreams connected, in the configuration's order.
    pub fn upstreams(&self) -> &[String] {
        &self.upstreams
    }

    /// Makes the tools of one upstream; `names` holds the names taken. Answers what refreshes
    /// them (and the rest the upstream serves, filled in by the caller) on its changes.
    fn serve(
        &mut self,
        upstream: &Arc<Upstream>,
        catalogue: &Catalogue,
        names: &mut BTreeSet<String>,
    ) -> Refresher {
        let tasks = catalogue.tasks;
        let made = upstream_tools(upstream, &catalogue.tools, tasks, names, &mut self.notices);
        let served: Vec<String> = made
            .iter()
            .filter_map(|served| match served {
                Served::Actions(tool) => Some(tool.name().to_owned()),
                Served::Tool(tool) => Some(wymcp::PlainTool::name(tool).to_owned()),
                _ => None,
            })
            .collect();
        self.served.extend(made);
        Refresher {
            upstream: Arc::downgrade(upstream),
            changes: upstream.changes().clone(),
            served,
            tasks,
            prompts: Vec::new(),
            resources: Vec::new(),
            templates: Vec::new(),
            skill_files: BTreeSet::new(),
        }
    }
}

/// The tools made of one upstream's `tools`, served as its configuration says; `names` holds
/// the names taken (and takes theirs), `notices` says what was left out or widened and why.
/// `tasks` tells whether the upstream serves tasks: each tool (action) is then served with
/// the task support its definition declares (`crate::tasks::support_of`).
pub(crate) fn upstream_tools(
    upstream: &Arc<Upstream>,
    tools: &[ToolInfo],
    tasks: bool,
    names: &mut BTreeSet<String>,
    notices: &mut Vec<Notice>,
) -> Vec<Served> {
    let config = upstream.config().clone();
    let mut served = Vec::new();
    match config.expose {
        Expose::Tools => {
            for tool in tools {
                let prefix = config.effective_prefix();
                let name = if prefix.is_empty() {
                    tool.name().to_owned()
                } else {
                    format!("{prefix}_{}", tool.name())
                };
                if !claim(&config, &name, tool.name(), names, notices) {
                    continue;
                }
                let fallback = config.fallback;
                if let Some(made) =
                    UpstreamTool::new(name, tool, upstream, fallback, tasks, notices)
                {
                    served.push(Served::Tool(made));
                }
            }
        }
        // `#[non_exhaustive]` is for other crates; every mode is handled here.
        Expose::Actions => {
            serve_actions(upstream, tools, tasks, names, &config, notices, &mut served)
        }
    }
    served
}

fn serve_actions(
    upstream: &Arc<Upstream>,
    tools: &[ToolInfo],
    tasks: bool,
    names: &mut BTreeSet<String>,
    config: &UpstreamConfig,
    notices: &mut Vec<Notice>,
    served: &mut Vec<Served>,
) {
    let default = match config.effective_prefix() {
        "" => config.name.clone(),
        prefix => prefix.to_owned(),
    };
    // (tool name, actions), the default tool first.
    let mut groups: Vec<(String, Vec<actions::Action>)> = vec![(default.clone(), Vec::new())];
    for (group, _) in &config.groups {
        groups.push((group.clone(), Vec::new()));
    }
    for tool in tools {
        let Some(action) = actions::action(
            &config.name,
            tool,
            config.scopes.get(tool.name()),
            config.fallback,
            notices,
        ) else {
            continue;
        };
        let group = config
            .groups
            .iter()
            .position(|(_, patterns)| patterns.iter().any(|p| matches(p, tool.name())))
            .map_or(0, |i| i + 1);
        groups[group].1.push(action);
    }
    for (name, actions) in groups {
        if actions.is_empty() {
            continue;
        }
        let first = actions[0].name.clone();
        if !claim(config, &name, &first, names, notices) {
            continue;
        }
        served.push(Served::Actions(UpstreamActions::new(
            name,
            actions,
            Arc::clone(upstream),
            tasks,
        )));
    }
}

/// Takes `name` for a served tool, or reports why it cannot be (not a tool name wymcp
/// serves, or taken by another tool).
fn claim(
    config: &UpstreamConfig,
    name: &str,
    tool: &str,
    names: &mut BTreeSet<String>,
    notices: &mut Vec<Notice>,
) -> bool {
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if !valid {
        notices.push(Notice::new(
            &config.name,
            tool,
            format!(
                "left out: {name:?} is not a tool name (letters, digits, _ . - only); set a prefix"
            ),
        ));
        return false;
    }
    if !names.insert(name.to_owned()) {
        notices.push(Notice::new(
            &config.name,
            tool,
            format!("left out: the name {name:?} is taken by another tool; set a prefix"),
        ));
        return false;
    }
    true
}

/// Whether `name` matches `pattern`, where `*` matches any run of characters.
fn matches(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let Some(first) = parts.next() else {
        return pattern == name;
    };
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn patterns_match_with_stars() {
        assert!(matches("read_*", "read_file"));
        assert!(matches("*_file", "read_file"));
        assert!(matches("*", "anything"));
        assert!(matches("a*b*c", "aXbYc"));
        assert!(matches("exact", "exact"));
        assert!(!matches("exact", "exactly"));
        assert!(!matches("read_*", "write_file"));
        assert!(!matches("a*bc", "abc_"));
    }
}
