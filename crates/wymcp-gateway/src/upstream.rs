//! [`Upstream`]: one connected upstream MCP server: its client, the timeout of each call, and
//! the restart with backoff of a connection that ended.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Weak};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::Mutex;
use tokio::time::Instant;
use wymcp::Context;
use wymcp::ProtocolVersion;
use wymcp::client::{Client, ClientBuilder, Subscription, Subscriptions, ToolInfo, ToolResult};
use wymcp::protocol::LogLevel;
use wymcp::protocol::stateless::{CLIENT_CAPABILITIES_KEY, MISSING_REQUIRED_CLIENT_CAPABILITY};

use crate::changes::Changes;
use crate::config::{Era, Target, UpstreamConfig};
use crate::error::UpstreamError;
use crate::relay::{self, Ask, Relay};
use crate::skills::{self, Skills};

/// What an upstream offers, listed at start.
#[derive(Debug, Default)]
pub(crate) struct Catalogue {
    pub(crate) tools: Vec<ToolInfo>,
    pub(crate) resources: Vec<Value>,
    pub(crate) templates: Vec<Value>,
    pub(crate) prompts: Vec<Value>,
    /// Whether it declares `completions`.
    pub(crate) completions: bool,
    /// Whether it serves tasks: it speaks the stateless era and declares the tasks
    /// extension (`io.modelcontextprotocol/tasks`).
    pub(crate) tasks: bool,
    /// Its skills, read, when it declares the skills extension.
    pub(crate) skills: Skills,
}

/// The connection's state.
enum Conn {
    /// Connected.
    Up(Arc<Client>),
    /// Down since a failure; the next attempt is due at `next`, the one after that `backoff`
    /// later.
    Down {
        reason: String,
        next: Instant,
        backoff: Duration,
    },
}

/// One upstream, connected at start and reconnected (a stdio one restarted) with backoff
/// when its connection ends.
pub(crate) struct Upstream {
    config: UpstreamConfig,
    conn: Mutex<Conn>,
    /// The calls in flight, and what the upstream sends about them relayed downstream.
    relay: Arc<Relay>,
    /// Where its list changes and resource updates go.
    changes: Changes,
    /// The URIs subscribed upstream, each with the downstream sessions subscribed to it
    /// (`None`: a client without a session): unsubscribed upstream when the last leaves.
    subscribed: std::sync::Mutex<BTreeMap<String, BTreeSet<Option<String>>>>,
    /// The URIs of its resources the gateway serves: a 2026-07-28 upstream's listen stream
    /// names them all, so that every downstream watching one (a session subscribed, a listen
    /// stream naming it) gets its updates.
    served_uris: std::sync::Mutex<BTreeSet<String>>,
    /// Its `subscriptions/listen` stream (2026-07-28), replaced by one naming the URIs of the
    /// moment each time they change and after each reconnect; opened one at a time.
    listening: Mutex<Option<Subscription>>,
    /// Itself, for the tasks that reopen its listen stream.
    me: Weak<Upstream>,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream")
            .field("name", &self.config.name)
            .finish_non_exhaustive()
    }
}

impl Upstream {
    /// Connects to the upstream (spawns it, for stdio) and lists its tools, and its
    /// resources, templates and prompts when it declares them.
    pub(crate) async fn start(
        config: UpstreamConfig,
        changes: Changes,
    ) -> Result<(Arc<Upstream>, Catalogue), UpstreamError> {
        let relay = Relay::new(&config.name, config.timeout);
        let client = connect(&config, &relay, &changes).await?;
        let failed = |e| UpstreamError::client(&config.name, e);
        let tools = client.list_tools().await.map_err(failed)?;
        let declares = |capability: &str| client.server_capabilities().get(capability).is_some();
        let mut catalogue = Catalogue {
            tools,
            ..Catalogue::default()
        };
        if declares("resources") {
            catalogue.resources = client.list_resources().await.map_err(failed)?;
            catalogue.templates = client.list_resource_templates().await.map_err(failed)?;
        }
        if declares("prompts") {
            catalogue.prompts = client.list_prompts().await.map_err(failed)?;
        }
        catalogue.completions = declares("completions");
        catalogue.tasks = client.protocol_version().is_stateless()
            && client
                .server_capabilities()
                .get("extensions")
                .and_then(|extensions| extensions.get(wymcp::task::TASKS_EXTENSION))
                .is_some();
        if skills::declared(&client) {
            catalogue.skills = skills::read(&client).await.map_err(failed)?;
        }
        let served_uris = catalogue
            .resources
            .iter()
            .filter_map(|resource| resource.get("uri")?.as_str().map(str::to_owned))
            .collect();
        let upstream = Arc::new_cyclic(|me| Upstream {
            config,
            conn: Mutex::new(Conn::Up(client)),
            relay,
            changes,
            subscribed: std::sync::Mutex::default(),
            served_uris: std::sync::Mutex::new(served_uris),
            listening: Mutex::new(None),
            me: me.clone(),
        });
        // Open before the gateway serves: a change the upstream makes from then on is told.
        upstream.listen().await;
        Ok((upstream, catalogue))
    }

    /// Opens the upstream's `subscriptions/listen` stream when it speaks 2026-07-28 (its
    /// only way to tell its changes): the list changes it declares, and the updates of
    /// every URI it serves through the gateway or a downstream session subscribed to. The
    /// new stream replaces the old once acknowledged; a refusal is logged.
    async fn listen(&self) {
        let mut listening = self.listening.lock().await;
        let client = match &*self.conn.lock().await {
            Conn::Up(client) => Arc::clone(client),
            Conn::Down { .. } => return, // the reconnect opens it again
        };
        if !client.protocol_version().is_stateless() {
            return;
        }
        let capabilities = client.server_capabilities();
        let declares = |kind: &str, flag: &str| capabilities[kind][flag] == Value::Bool(true);
        let mut asked = Subscriptions::new();
        let mut any = false;
        for (kind, ask) in [
            (
                "tools",
                Subscriptions::tools_list_changed as fn(Subscriptions) -> Subscriptions,
            ),
            ("prompts", Subscriptions::prompts_list_changed),
            ("resources", Subscriptions::resources_list_changed),
        ] {
            if declares(kind, "listChanged") {
                asked = ask(asked);
                any = true;
            }
        }
        if declares("resources", "subscribe") {
            let mut uris = self.lock_served_uris().clone();
            uris.extend(self.lock_subscribed().keys().cloned());
            any |= !uris.is_empty();
            for uri in uris {
                asked = asked.resource(uri);
            }
        }
        if !any {
            return;
        }
        match client.listen(asked).await {
            Ok(subscription) => *listening = Some(subscription),
            Err(error) => {
                tracing::warn!(target: "wymcp_gateway", upstream = %self.name(), %error, "subscriptions/listen refused: its changes are not relayed");
            }
        }
    }

    /// [`listen`](Self::listen) again, off the caller's task (the URIs changed, or the
    /// connection).
    fn relisten(&self) {
        if let Some(me) = self.me.upgrade() {
            tokio::spawn(async move { me.listen().await });
        }
    }

    /// The URIs of its resources the gateway serves now (after a refresh): its listen
    /// stream is opened again naming them.
    pub(crate) fn served_uris_changed(&self, uris: &[String]) {
        let uris: BTreeSet<String> = uris.iter().cloned().collect();
        let changed = *self.lock_served_uris() != uris;
        if changed {
            *self.lock_served_uris() = uris;
            self.relisten();
        }
    }

    fn lock_served_uris(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.served_uris
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn name(&self) -> &str {
        &self.config.name
    }

    pub(crate) fn config(&self) -> &UpstreamConfig {
        &self.config
    }

    pub(crate) fn changes(&self) -> &Changes {
        &self.changes
    }

    /// Every tool the upstream lists now (paged, within its limits, as at start).
    pub(crate) async fn list_tools(&self) -> Result<Vec<ToolInfo>, UpstreamError> {
        let ctx = Context::default();
        self.with_client(&ctx, |client| async move { client.list_tools().await })
            .await
    }

    /// Every prompt the upstream lists now (paged, as at start).
    pub(crate) async fn list_prompts(&self) -> Result<Vec<Value>, UpstreamError> {
        let ctx = Context::default();
        self.with_client(&ctx, |client| async move { client.list_prompts().await })
            .await
    }

    /// Every resource and resource template the upstream lists now (paged, as at start).
    pub(crate) async fn list_resources(&self) -> Result<(Vec<Value>, Vec<Value>), UpstreamError> {
        let ctx = Context::default();
        self.with_client(&ctx, |client| async move {
            let resources = client.list_resources().await?;
            let templates = client.list_resource_templates().await?;
            Ok((resources, templates))
        })
        .await
    }

    /// The downstream session of `ctx` subscribed to `uri`: subscribed upstream when it is
    /// the first (an upstream that does not declare `resources.subscribe` is not asked).
    pub(crate) async fn subscribe(&self, uri: &str, ctx: &Context) -> Result<(), UpstreamError> {
        let session = ctx.session_id().map(str::to_owned);
        let first = {
            let mut subscribed = self.lock_subscribed();
            let sessions = subscribed.entry(uri.to_owned()).or_default();
            let first = sessions.is_empty();
            sessions.insert(session.clone());
            first
        };
        if !first {
            return Ok(());
        }
        let outcome = self
            .with_client(ctx, |client| async move {
                match declares_subscribe(&client) {
                    true => client.subscribe(uri).await,
                    false => Ok(()),
                }
            })
            .await;
        match &outcome {
            Err(_) => {
                self.forget_subscriber(uri, &session);
            }
            // A 2026-07-28 upstream's listen stream names the URIs it serves; another is
            // added to it (a template's URI).
            Ok(()) if !self.lock_served_uris().contains(uri) => self.relisten(),
            Ok(()) => {}
        }
        outcome
    }

    /// The downstream session of `ctx` unsubscribed from `uri`: unsubscribed upstream when
    /// it was the last.
    pub(crate) async fn unsubscribe(&self, uri: &str, ctx: &Context) {
        let session = ctx.session_id().map(str::to_owned);
        if !self.forget_subscriber(uri, &session) {
            return;
        }
        if !self.lock_served_uris().contains(uri) {
            self.relisten();
        }
        let outcome = self
            .with_client(ctx, |client| async move {
                match declares_subscribe(&client) {
                    true => client.unsubscribe(uri).await,
                    false => Ok(()),
                }
            })
            .await;
        if let Err(error) = outcome {
            tracing::debug!(target: "wymcp_gateway", upstream = %self.name(), %uri, %error, "resources/unsubscribe not forwarded");
        }
    }

    /// Drops `session`'s subscription to `uri`; whether it was the last.
    fn forget_subscriber(&self, uri: &str, session: &Option<String>) -> bool {
        let mut subscribed = self.lock_subscribed();
        let Some(sessions) = subscribed.get_mut(uri) else {
            return false;
        };
        if !sessions.remove(session) || !sessions.is_empty() {
            return false;
        }
        subscribed.remove(uri);
        true
    }

    fn lock_subscribed(
        &self,
    ) -> std::sync::MutexGuard<'_, BTreeMap<String, BTreeSet<Option<String>>>> {
        self.subscribed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Calls the upstream tool `tool` with `arguments`: within the upstream's timeout,
    /// cancelled upstream when the downstream caller cancels (`ctx`). The call carries a
    /// progress token of its own while it is in flight: the upstream's progress, log messages
    /// and requests for it are relayed to `ctx` ([`Relay`]).
    pub(crate) async fn call_tool(
        &self,
        tool: &str,
        arguments: Value,
        ctx: &Context,
    ) -> Result<ToolResult, UpstreamError> {
        let params = json!({"name": tool, "arguments": arguments});
        self.forward("tools/call", params, ctx)
            .await
            .map(ToolResult::from_raw)
    }

    /// [`call_tool`](Self::call_tool) declaring the tasks extension: the upstream's answer as
    /// it sent it, a tool result or a task handle (`resultType: "task"`).
    pub(crate) async fn call_tool_with_tasks(
        &self,
        tool: &str,
        arguments: Value,
        ctx: &Context,
    ) -> Result<Value, UpstreamError> {
        let forwarded = self.relay.begin(ctx);
        let token = forwarded.token();
        self.with_client(ctx, |client| async move {
            client.call_tool_with_tasks(tool, arguments, token).await
        })
        .await
    }

    /// `tasks/get` of the upstream's task `id`, as [`call_tool`](Self::call_tool).
    pub(crate) async fn get_task(&self, id: &str, ctx: &Context) -> Result<Value, UpstreamError> {
        self.with_client(ctx, |client| async move { client.get_task(id).await })
            .await
    }

    /// `tasks/update` of the upstream's task `id` with `responses`.
    pub(crate) async fn update_task(
        &self,
        id: &str,
        responses: serde_json::Map<String, Value>,
        ctx: &Context,
    ) -> Result<Value, UpstreamError> {
        self.with_client(ctx, |client| async move {
            client.update_task(id, responses).await
        })
        .await
    }

    /// `tasks/cancel` of the upstream's task `id`.
    pub(crate) async fn cancel_task(
        &self,
        id: &str,
        ctx: &Context,
    ) -> Result<Value, UpstreamError> {
        self.with_client(ctx, |client| async move { client.cancel_task(id).await })
            .await
    }

    /// `resources/read` of `uri` upstream, as [`call_tool`](Self::call_tool).
    pub(crate) async fn read_resource(
        &self,
        uri: &str,
        ctx: &Context,
    ) -> Result<Value, UpstreamError> {
        self.forward("resources/read", json!({"uri": uri}), ctx)
            .await
    }

    /// `prompts/get` of `name` upstream, as [`call_tool`](Self::call_tool).
    pub(crate) async fn get_prompt(
        &self,
        name: &str,
        arguments: Value,
        ctx: &Context,
    ) -> Result<Value, UpstreamError> {
        let params = json!({"name": name, "arguments": arguments});
        self.forward("prompts/get", params, ctx).await
    }

    /// The downstream call `ctx` forwarded upstream as `method` with `params`, held in flight
    /// in the relay under a progress token of its own. In the stateless era it declares the
    /// downstream's sampling, elicitation and roots capabilities, not the gateway's: the
    /// upstream asks only for the input the downstream can give, as it would asked directly;
    /// its `-32021` naming a capability the downstream lacks is the downstream's too
    /// ([`relay::require`]).
    async fn forward(
        &self,
        method: &str,
        mut params: Value,
        ctx: &Context,
    ) -> Result<Value, UpstreamError> {
        let forwarded = self.relay.begin(ctx);
        let token = forwarded.token();
        let outcome = self
            .with_client(ctx, |client| async move {
                let mut meta = Map::new();
                meta.insert("progressToken".to_owned(), json!(token));
                if client.protocol_version().is_stateless() {
                    meta.insert(
                        CLIENT_CAPABILITIES_KEY.to_owned(),
                        relayed_capabilities(ctx.client_capabilities()),
                    );
                }
                params["_meta"] = Value::Object(meta);
                client.request(method, params).await
            })
            .await;
        if let Err(error) = &outcome
            && error.rpc_code() == Some(MISSING_REQUIRED_CLIENT_CAPABILITY)
            && let Some(required) = error.rpc_data().and_then(|d| d.get("requiredCapabilities"))
        {
            relay::require(ctx, required).await;
        }
        outcome
    }

    /// `completion/complete` upstream, as [`call_tool`](Self::call_tool): the result's
    /// `completion`.
    pub(crate) async fn complete(
        &self,
        reference: Value,
        argument: &str,
        value: &str,
        ctx: &Context,
    ) -> Result<Value, UpstreamError> {
        self.with_client(ctx, |client| async move {
            client.complete(reference, argument, value).await
        })
        .await
    }

    /// Runs `request` on the connected client (reconnecting first when the connection
    /// ended); a failure that ends the connection marks it down.
    async fn with_client<F, Fut, T>(&self, ctx: &Context, request: F) -> Result<T, UpstreamError>
    where
        F: FnOnce(Arc<Client>) -> Fut,
        Fut: std::future::Future<Output = Result<T, wymcp::client::ClientError>>,
    {
        let client = self.client().await?;
        let call = request(Arc::clone(&client));
        // Dropping the call's future (cancelled downstream) sends `notifications/cancelled`.
        let outcome = tokio::select! {
            outcome = call => outcome,
            () = ctx.cancellation().cancelled() => {
                return Err(UpstreamError::Cancelled { upstream: self.name().to_owned() });
            }
        };
        match outcome {
            Ok(result) => Ok(result),
            Err(error) => {
                let error = UpstreamError::client(self.name(), error);
                if error.ends_connection() {
                    self.went_down(&client, error.reason()).await;
                }
                Err(error)
            }
        }
    }

    /// The connected client; reconnects a connection that ended when its next attempt is
    /// due (waiting for it when it is due within the timeout).
    async fn client(&self) -> Result<Arc<Client>, UpstreamError> {
        let mut conn = self.conn.lock().await;
        let (reason, next, backoff) = match &*conn {
            Conn::Up(client) => return Ok(Arc::clone(client)),
            Conn::Down {
                reason,
                next,
                backoff,
            } => (reason.clone(), *next, *backoff),
        };
        let now = Instant::now();
        if next > now {
            let wait = next - now;
            if wait > self.config.timeout {
                return Err(UpstreamError::Down {
                    upstream: self.name().to_owned(),
                    reason,
                    retry_in: wait,
                });
            }
            tokio::time::sleep(wait).await;
        }
        tracing::info!(target: "wymcp_gateway", upstream = %self.name(), "reconnecting");
        match connect(&self.config, &self.relay, &self.changes).await {
            Ok(client) => {
                *conn = Conn::Up(Arc::clone(&client));
                self.resubscribe(&client);
                // The old connection's listen stream ended with it.
                self.relisten();
                Ok(client)
            }
            Err(error) => {
                let retry_in = backoff;
                *conn = Conn::Down {
                    reason: error.reason(),
                    next: Instant::now() + backoff,
                    backoff: (backoff * 2).min(self.config.restart_backoff.1),
                };
                tracing::warn!(target: "wymcp_gateway", upstream = %self.name(), %error, "reconnect failed");
                Err(UpstreamError::Down {
                    upstream: self.name().to_owned(),
                    reason: error.reason(),
                    retry_in,
                })
            }
        }
    }

    /// Subscribes the new connection `client` (a stdio upstream restarted, an HTTP session
    /// initialized again) to every URI downstream sessions still subscribe to: the old
    /// connection's subscriptions ended with it. Off the caller's task; a refusal is logged.
    fn resubscribe(&self, client: &Arc<Client>) {
        let uris: Vec<String> = self.lock_subscribed().keys().cloned().collect();
        if uris.is_empty() || !declares_subscribe(client) {
            return;
        }
        let (client, name) = (Arc::clone(client), self.name().to_owned());
        tokio::spawn(async move {
            for uri in uris {
                if let Err(error) = client.subscribe(&uri).await {
                    tracing::warn!(target: "wymcp_gateway", upstream = %name, %uri, %error, "resources/subscribe not renewed after the reconnect");
                }
            }
        });
    }

    /// Marks the connection `client` down (unless another call already replaced it): the
    /// next call reconnects after the first backoff.
    async fn went_down(&self, client: &Arc<Client>, reason: String) {
        let mut conn = self.conn.lock().await;
        if let Conn::Up(current) = &*conn
            && Arc::ptr_eq(current, client)
        {
            tracing::warn!(target: "wymcp_gateway", upstream = %self.name(), %reason, "connection ended");
            let (first, max) = self.config.restart_backoff;
            *conn = Conn::Down {
                reason,
                next: Instant::now() + first,
                backoff: (first * 2).min(max),
            };
        }
    }
}

/// Whether the upstream declares `resources.subscribe`.
fn declares_subscribe(client: &Client) -> bool {
    // `resources/subscribe` is a session-era method: a stateless (2026-07-28) upstream
    // serves no subscription to forward (its changes come on `subscriptions/listen`), so the
    // downstream's subscription is kept here alone, as before the relay.
    if client.protocol_version().is_stateless() {
        return false;
    }
    let capabilities = client.server_capabilities();
    let subscribe = capabilities
        .get("resources")
        .and_then(|r| r.get("subscribe"));
    subscribe.and_then(Value::as_bool) == Some(true)
}

/// A client of the upstream `config` names, connected: the upstream's sampling, elicitation
/// and roots requests and its notifications relayed by `relay`, its log messages asked for
/// at every level (the downstream's own level filters them).
async fn connect(
    config: &UpstreamConfig,
    relay: &Arc<Relay>,
    changes: &Changes,
) -> Result<Arc<Client>, UpstreamError> {
    let builder: ClientBuilder = match &config.target {
        Target::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut builder = Client::stdio(command).args(args.iter().cloned());
            for (name, value) in env {
                builder = builder.env(name, value);
            }
            if let Some(cwd) = cwd {
                builder = builder.current_dir(cwd);
            }
            builder
        }
        Target::Http { url, headers } => {
            let mut builder = Client::builder(url);
            for (name, value) in headers {
                builder = builder.header(name, value);
            }
            if config.era == Era::Session {
                builder = builder.versions(ProtocolVersion::SESSION_ERA);
            }
            builder
        }
    };
    let handler = |ask: Ask| {
        let relay = Arc::clone(relay);
        move |params: Value| {
            let relay = Arc::clone(&relay);
            async move { relay.ask(ask, params).await }
        }
    };
    let client = builder
        .client_info("wymcp-gateway", env!("CARGO_PKG_VERSION"))
        .timeout(config.timeout)
        .max_answer_bytes(config.max_answer_bytes)
        .max_line_bytes(config.max_answer_bytes)
        .on_sampling(handler(Ask::Sampling))
        .on_elicitation(handler(Ask::Elicitation))
        .on_roots(handler(Ask::Roots))
        .on_stream_closed({
            // The upstream ended a call's stream to resume it later (SEP-1699 polling): the
            // downstream caller's stream ends too, and resumes on the gateway.
            let relay = Arc::clone(relay);
            move |token| relay.stream_closed(token)
        })
        .on_notification({
            // Inline, on the client's reader: a call's progress and log messages reach its
            // downstream caller before its answer does.
            // Its list changes and resource updates go to the server's clients.
            let (relay, changes, name) = (Arc::clone(relay), changes.clone(), config.name.clone());
            move |note| {
                if !changes.relay(&name, note) {
                    relay.notify(note);
                }
            }
        })
        .connect()
        .await
        .map_err(|e| UpstreamError::client(&config.name, e))?;
    if client.server_capabilities().get("logging").is_some()
        && let Err(error) = client.set_logging_level(LogLevel::Debug).await
    {
        tracing::warn!(target: "wymcp_gateway", upstream = %config.name, %error, "logging/setLevel refused: its log messages may not all be relayed");
    }
    Ok(Arc::new(client))
}

/// The capabilities a forwarded request declares upstream: those of the downstream's
/// (`capabilities`) that the relay answers (sampling, elicitation, roots), as it declared
/// them; none when it declared none.
fn relayed_capabilities(capabilities: Option<&Value>) -> Value {
    let relayed = ["sampling", "elicitation", "roots"]
        .into_iter()
        .filter_map(|kind| Some((kind.to_owned(), capabilities?.get(kind)?.clone())))
        .collect();
    Value::Object(relayed)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::relayed_capabilities;

    #[test]
    fn only_the_relayed_kinds_of_the_downstream_are_declared_upstream() {
        let downstream = json!({
            "sampling": {"tools": {}},
            "elicitation": {"form": {}, "url": {}},
            "experimental": {"x": {}},
            "tasks": {}
        });
        assert_eq!(
            relayed_capabilities(Some(&downstream)),
            json!({"sampling": {"tools": {}}, "elicitation": {"form": {}, "url": {}}})
        );
        assert_eq!(relayed_capabilities(None), json!({}));
    }
}
