//! The one dispatch: a request of any method the server serves, in either era, run by the
//! handler the method table names for it ([`Method::handler`]). The session era and the
//! stateless era both come here with the request's context; what only an era has (the
//! session's lifecycle, a listen stream) is the serving core's, by the same table.

use serde_json::{Value, json};

use crate::context::Context;
use crate::mrtr::{self, Round};
use crate::paging::params_object;
use crate::protocol::{Handler, Method, RpcError, Serve};
use crate::resource::registry::uri_param;
use crate::resource::subscriptions::Subscriber;
use crate::server::Server;
use crate::server::extension::Answered;

impl Server {
    /// Serves a request of `method` with the handler the method table names for it, under
    /// `round` when the request has one (2026-07-28: `tools/call`, `prompts/get` and
    /// `resources/read` answer `input_required` when they wait for input nobody gave yet).
    /// Absent or `null` params read as `{}`; params of another type are `-32602`. The
    /// handlers of the serving core's own (the session's lifecycle, `subscriptions/listen`)
    /// are not the server's: "Method not found" (`-32601`) here.
    ///
    /// The transports serve a `tools/call` by [`call_request`](Self::call_request), the
    /// handler the table names for it, without this function's future around it: one layer
    /// less to move and poll on every call (issue 41's regression, callgrind).
    pub(crate) async fn serve_request(
        &self,
        method: Method,
        params: Option<Value>,
        ctx: &Context,
        round: Option<&Round>,
    ) -> Result<Answered, RpcError> {
        match method.handler() {
            Handler::CallTool => self.call_request(params, ctx, round).await,
            Handler::Serve(handler) => {
                // Boxed: these methods' futures (with the layers' branch) stay out of the
                // future of every call this function serves.
                let answer = Box::pin(self.serve_value(handler, method, params, ctx.clone()));
                mrtr::run(round, answer).await.map(Answered::Value)
            }
            Handler::Lifecycle(_) | Handler::Listen => Err(RpcError::method_not_found()),
        }
    }

    /// `tools/call`: offered first to the server's extensions, which are the stateless era's
    /// (only its capabilities declare them: the tasks extension takes the calls it runs as
    /// tasks), then the tool, its result kept typed. Without a round (the session era) the
    /// tool's future is awaited here, not through the round's driver.
    pub(crate) async fn call_request(
        &self,
        params: Option<Value>,
        ctx: &Context,
        round: Option<&Round>,
    ) -> Result<Answered, RpcError> {
        let params = if ctx.protocol_version().is_stateless() {
            match self
                .features()
                .extensions
                .take_call(self, params, ctx, round)
            {
                Err(params) => params,
                // Boxed by the extension: its paths' futures stay out of every plain call's.
                Ok(answering) => return answering.await,
            }
        } else {
            params
        };
        let Some(round) = round else {
            return self
                .tools_call(params, ctx.clone())
                .await
                .map(Answered::Call);
        };
        let call = self.tools_call(params, ctx.clone());
        Ok(match mrtr::run_typed(Some(round), call).await? {
            Ok(result) => Answered::Call(result),
            Err(input_required) => Answered::Value(input_required),
        })
    }

    /// A request answered with a value, through the server's layers when they wrap `method`
    /// ([`through_layers`](Self::through_layers)).
    async fn serve_value(
        &self,
        handler: Serve,
        method: Method,
        params: Option<Value>,
        ctx: Context,
    ) -> Result<Value, RpcError> {
        if !self.layers_wrap(method) {
            return self.answer(handler, method, params, ctx).await;
        }
        let server = self.clone();
        let serve =
            move |params, ctx| async move { server.answer(handler, method, params, ctx).await };
        self.through_layers(method, params, ctx, serve).await
    }

    /// Whether a layer wraps requests of `method`: a server layer wraps the requests the
    /// method table marks layered ([`Method::layered`]: `tools/list`, the resources' and
    /// prompts' methods, completion) and the methods of the extensions that say so
    /// ([`Extension::layered`](super::extension::Extension::layered): the skills methods);
    /// `tools/call` passes them too, after the gates (see `dispatch`). The protocol's own
    /// machinery (`initialize`, `ping`, `logging/setLevel`, notifications, `server/discover`,
    /// `subscriptions/listen`, `tasks/*`) passes no layer.
    fn layers_wrap(&self, method: Method) -> bool {
        let features = self.features();
        let stack = features.middleware.as_ref();
        stack.is_some_and(crate::middleware::Stack::wraps_methods)
            && (method.layered() || features.extensions.layered(method))
    }

    /// Serves a request of `method` (not `tools/call`): through the server's layers when
    /// they wrap it (its params then are an object, else `-32602` before any layer), `serve`
    /// answering after them on the params as the layers left them; else `serve` at once.
    async fn through_layers<F, Fut>(
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

    /// The handlers of the requests answered with a value, past the layers. The
    /// application's error texts (a resource's, a prompt's, a completion's, an extension's)
    /// are bounded ([`Limits::max_error_text`](crate::Limits)).
    ///
    /// - `server/discover`: the versions, the capabilities and the instructions.
    /// - `tools/list`: the tools the caller may call, its session's (runtime tools included)
    ///   when it has one; no pagination.
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
    /// - An extension's method: the extension that registered it serves it.
    async fn answer(
        &self,
        handler: Serve,
        method: Method,
        params: Option<Value>,
        ctx: Context,
    ) -> Result<Value, RpcError> {
        let features = self.features();
        let max = features.limits.max_error_text;
        let (resources, prompts) = (&features.resources, &features.prompts);
        let (size, version) = (features.page_size, ctx.protocol_version());
        let answer = match handler {
            Serve::Discover => Ok(self.discover()),
            Serve::ListTools => match ctx.session() {
                Some(session) => {
                    let per_page = features.limits.tools_per_page;
                    session.list_tools_page(ctx.identity(), per_page, params.as_ref())
                }
                None => self.list_tools_page(version, ctx.identity(), params.as_ref()),
            },
            Serve::ListResources => {
                resources.list(&params_object(params)?, size, (version, ctx.identity()))
            }
            Serve::ListResourceTemplates => {
                resources.list_templates(&params_object(params)?, size, (version, ctx.identity()))
            }
            Serve::ReadResource => {
                resources
                    .read(uri_param(&params_object(params)?)?, ctx)
                    .await
            }
            Serve::Subscribe => {
                let params = params_object(params)?;
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
            Serve::Unsubscribe => {
                let params = params_object(params)?;
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
            Serve::ListPrompts => {
                prompts.list(&params_object(params)?, size, (version, ctx.identity()))
            }
            Serve::GetPrompt => prompts.get(params_object(params)?, ctx).await,
            Serve::Complete => {
                let completions = &features.completions;
                completions
                    .complete(params_object(params)?, prompts, resources, ctx)
                    .await
            }
            Serve::Extension => match features.extensions.serving(method) {
                Some(extension) => extension.serve(self, method, params, ctx).await,
                None => Err(RpcError::method_not_found()),
            },
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
