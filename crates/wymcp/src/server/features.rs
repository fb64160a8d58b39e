//! Resources, prompts and completion on [`Server`]: the registries, capabilities, the
//! transport-neutral serving of their methods (crate-private: serving is the transports' and
//! the testing kit's), and the server-initiated notifications.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::completion::registry::CompletionRegistry;
use crate::context::Context;
use crate::paging::{self, params_object};
use crate::prompt::registry::PromptRegistry;
use crate::protocol::{Method, ProtocolVersion, RpcError};
use crate::resource::Hub;
use crate::resource::registry::{ResourceRegistry, uri_param};
use crate::resource::subscriptions::Subscriber;
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

    /// Resource URIs in `resources/list` order.
    pub fn resource_uris(&self) -> Vec<&str> {
        self.features().resources.uris()
    }

    /// Resource templates in `resources/templates/list` order.
    pub fn resource_template_uris(&self) -> Vec<&str> {
        self.features().resources.template_uris()
    }

    /// Prompt names in `prompts/list` order.
    pub fn prompt_names(&self) -> Vec<&str> {
        self.features().prompts.names()
    }

    /// Serves a resources, prompts or completion request through the server's layers (when it
    /// has some: [`through_layers`](Self::through_layers)); any other method is "Method not
    /// found" (`-32601`). Absent or `null` params read as `{}`; params of another type are
    /// `-32602`.
    ///
    /// - `resources/list`, `resources/templates/list`, `prompts/list`: one page (see
    ///   [`ServerBuilder::page_size`](crate::ServerBuilder::page_size)), `nextCursor` when more
    ///   follow; an invalid cursor is `-32602`.
    /// - `resources/read`: a resource by exact URI, else the first template the URI matches. An
    ///   unknown URI is "resource not found" as the revision says: `-32002` with `data.uri` up
    ///   to 2025-11-25, `-32602` with `data.uri` from 2026-07-28 on.
    /// - `resources/subscribe`, `resources/unsubscribe`: for the context's session (subscribing
    ///   to a URI that resolves to nothing is "resource not found"); answer `{}`.
    /// - `prompts/get`: an unknown prompt, an undeclared argument, a missing required one or a
    ///   non-string value is `-32602` naming it.
    /// - `completion/complete`, for a prompt argument (`ref/prompt`) or a resource-template
    ///   variable (`ref/resource`, `uri` the template as listed): an unknown prompt, template,
    ///   argument or variable is `-32602`; one without a provider completes to no values.
    pub(crate) async fn feature(
        &self,
        method: Method,
        params: Option<Value>,
        ctx: Context,
    ) -> Result<Value, RpcError> {
        if !self.layers_wrap(method) {
            return self.serve_feature(method, params, ctx).await;
        }
        let server = self.clone();
        let serve =
            move |params, ctx| async move { server.serve_feature(method, params, ctx).await };
        self.through_layers(method, params, ctx, serve).await
    }

    /// Whether a layer wraps requests of `method`: a server layer wraps the requests the
    /// method table marks layered ([`Method::layered`]: the lists, reads, subscriptions, prompts
    /// and completion) and the methods of the extensions that say so
    /// ([`Extension::layered`](super::extension::Extension::layered): the skills methods);
    /// `tools/call` passes them too, after the gates (see `dispatch`). The protocol's own
    /// machinery (`initialize`, `ping`, `logging/setLevel`, notifications, `server/discover`,
    /// `subscriptions/listen`, `tasks/*`) passes no layer.
    pub(crate) fn layers_wrap(&self, method: Method) -> bool {
        let features = self.features();
        let stack = features.middleware.as_ref();
        stack.is_some_and(crate::middleware::Stack::wraps_methods)
            && (method.layered() || features.extensions.layered(method))
    }

    /// Serves a request of `method` (not `tools/call`): through the server's layers when
    /// they wrap it (its params then are an object, else `-32602` before any layer), `serve`
    /// answering after them on the params as the layers left them; else `serve` at once.
    pub(crate) async fn through_layers<F, Fut>(
        &self,
        method: Method,
        params: Option<Value>,
        ctx: Context,
        serve: F,
    ) -> Result<Value, RpcError>
    where
        F: FnOnce(Option<Value>, Context) -> Fut + Send + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        let stack = self.features().middleware.as_ref();
        let Some(stack) = stack.filter(|_| self.layers_wrap(method)) else {
            return serve(params, ctx).await;
        };
        let params = params_object(params)?;
        let serve: crate::middleware::Serve =
            Box::new(move |params, ctx| Box::pin(serve(Some(Value::Object(params)), ctx)));
        stack.serve_method(method, params, ctx, serve).await
    }

    /// [`feature`](Self::feature) past the layers.
    async fn serve_feature(
        &self,
        method: Method,
        params: Option<Value>,
        ctx: Context,
    ) -> Result<Value, RpcError> {
        let features = self.features();
        // The application's error texts (a resource's, a prompt's, a completion's) are bounded.
        let max = features.limits.max_error_text;
        if let Some(extension) = features.extensions.serving(method) {
            let answer = extension.serve(self, method, params, ctx).await;
            return answer.map_err(|error| error.bounded(max));
        }
        // Read only by the arm that runs: an unknown method is refused whatever its params.
        let object = move || params_object(params);
        let (resources, prompts) = (&features.resources, &features.prompts);
        let (size, version) = (features.page_size, ctx.protocol_version());
        let answer = match method {
            Method::ResourcesList => resources.list(&object()?, size, (version, ctx.identity())),
            Method::ResourceTemplatesList => {
                resources.list_templates(&object()?, size, (version, ctx.identity()))
            }
            Method::ResourcesRead => resources.read(uri_param(&object()?)?, ctx).await,
            Method::ResourcesSubscribe => {
                let params = object()?;
                let uri = uri_param(&params)?;
                resources.check_resolves(uri, version, ctx.identity())?;
                let subscriptions = &resources.subscriptions;
                subscriptions
                    .subscribe(uri, Subscriber::of(&ctx), &features.limits)
                    .await
                    .map_err(subscription_refused)?;
                // A reader whose contents live elsewhere subscribes there too.
                if let Some(reader) = resources.reader_of(uri)
                    && let Err(error) = reader.subscribed(uri, ctx.clone()).await
                {
                    let _ = subscriptions.unsubscribe(uri, Subscriber::of(&ctx)).await;
                    return Err(error.to_rpc_error(uri, version).bounded(max));
                }
                Ok(json!({}))
            }
            Method::ResourcesUnsubscribe => {
                let params = object()?;
                let uri = uri_param(&params)?;
                let subscriptions = &resources.subscriptions;
                subscriptions
                    .unsubscribe(uri, Subscriber::of(&ctx))
                    .await
                    .map_err(subscription_refused)?;
                if let Some(reader) = resources.reader_of(uri) {
                    reader.unsubscribed(uri, ctx.clone()).await;
                }
                Ok(json!({}))
            }
            Method::PromptsList => prompts.list(&object()?, size, (version, ctx.identity())),
            Method::PromptsGet => prompts.get(object()?, ctx).await,
            Method::Complete => {
                let completions = &features.completions;
                completions
                    .complete(object()?, prompts, resources, ctx)
                    .await
            }
            _ => Err(RpcError::method_not_found()),
        };
        answer.map_err(|error| error.bounded(max))
    }
}

/// A subscription a cap or the shared store refused: a cap is the client's to mend
/// (`-32602`, naming it); a store failure is the server's (`-32603`).
fn subscription_refused(refused: crate::resource::SubscriptionError) -> RpcError {
    match refused {
        crate::resource::SubscriptionError::Unavailable(reason) => {
            tracing::warn!(%reason, "MCP subscription store failed");
            RpcError::new(
                RpcError::INTERNAL_ERROR,
                "The subscription store is unavailable; try again.",
                None,
            )
        }
        cap => RpcError::invalid_params_reason(cap.to_string()),
    }
}
