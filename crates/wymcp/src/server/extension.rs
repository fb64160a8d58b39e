//! Protocol extensions (the tasks extension, the skills extension, and what comes after them):
//! what each adds to a server, registered when the server is built, so the serving core serves
//! them without naming any.
//!
//! An [`Extension`] declares itself in the stateless era's `capabilities.extensions`, serves
//! its own methods, may take a `tools/call` before the tool runs (the tasks extension answers
//! a task handle), and may add items a `subscriptions/listen` stream watches (the tasks
//! extension's `taskIds`). The server keeps them in [`Extensions`], in registration order; the
//! core asks the registry, never an extension by name.

use futures_util::future::BoxFuture;
use serde_json::{Map, Value};

use crate::context::Context;
use crate::mrtr::Round;
use crate::protocol::{Handler, Method, RpcError, Serve};
use crate::server::Server;
use crate::tool::CallToolResult;

/// What answered a request: a `tools/call`'s typed result (written without a `Value` tree),
/// or any other result (an `input_required` round, a task handle, a method's result).
pub(crate) enum Answered {
    /// A `tools/call` that completed.
    Call(CallToolResult),
    /// Any other result.
    Value(Value),
}

/// A future an extension answers a request with; it borrows the request's context.
pub(crate) type Answering<'a> = BoxFuture<'a, Result<Answered, RpcError>>;

/// Items of an extension a `subscriptions/listen` stream may watch: the filter's key that
/// lists them and the limit on how many one stream lists.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WatchKey {
    /// The key under `params.notifications` (`taskIds`).
    pub(crate) key: &'static str,
    /// What the items are, for refusals ("task ids").
    pub(crate) what: &'static str,
    /// The most one stream may list.
    pub(crate) max: usize,
    /// The setting that sets `max`, for refusals (`Limits::max_listen_task_ids`).
    pub(crate) setting: &'static str,
}

/// An extension of the protocol, as the server serves it. Registered by the
/// [`ServerBuilder`](crate::ServerBuilder) when the server is configured to serve it; every
/// method takes the server, whose features hold the extension's state.
pub(crate) trait Extension: Send + Sync + std::fmt::Debug + 'static {
    /// The extension's identifier, the key of its declaration under
    /// `capabilities.extensions` (`io.modelcontextprotocol/tasks`).
    fn id(&self) -> &'static str;

    /// What the stateless era's capabilities declare for it.
    fn declaration(&self) -> Value;

    /// The methods it serves.
    fn methods(&self) -> &'static [Method];

    /// Whether the server's layers wrap its methods as they wrap the resources' and prompts'.
    fn layered(&self) -> bool {
        false
    }

    /// Serves one of its [`methods`](Self::methods).
    fn serve<'a>(
        &'a self,
        server: &'a Server,
        method: Method,
        params: Option<Value>,
        ctx: Context,
    ) -> BoxFuture<'a, Result<Value, RpcError>>;

    /// Takes a stateless-era `tools/call` before it runs, answering it itself, or hands its
    /// params back (the default). Called on every such call: cheap and allocation-free for a
    /// call it does not take.
    fn take_call<'a>(
        &'a self,
        server: &'a Server,
        params: Option<Value>,
        ctx: &'a Context,
        round: Option<&'a Round>,
    ) -> Result<Answering<'a>, Option<Value>> {
        let _ = (server, ctx, round);
        Err(params)
    }

    /// The items a listen stream may watch, if the extension has any.
    fn watch_key(&self, limits: &crate::Limits) -> Option<WatchKey> {
        let _ = limits;
        None
    }

    /// Of the items `ids` a listen stream asks to watch, those the caller of `ctx` may watch
    /// (each once), or the refusal of the request.
    fn watchable<'a>(
        &'a self,
        server: &'a Server,
        ids: Vec<String>,
        ctx: &'a Context,
    ) -> BoxFuture<'a, Result<Vec<String>, RpcError>> {
        let _ = (server, ids, ctx);
        Box::pin(async { Ok(Vec::new()) })
    }

    /// The notification (method and params) a stream watching item `id` gets when it
    /// changed, as the caller of `opener` (the request that opened the stream) may read it;
    /// `None` when there is nothing to tell (the item
    /// is gone).
    fn watched<'a>(
        &'a self,
        server: &'a Server,
        id: &'a str,
        opener: &'a Context,
    ) -> BoxFuture<'a, Option<(&'static str, Map<String, Value>)>> {
        let _ = (server, id, opener);
        Box::pin(async { None })
    }
}

/// The extensions a server serves, in registration order.
#[derive(Debug, Default)]
pub(crate) struct Extensions {
    registered: Vec<&'static dyn Extension>,
}

impl Extensions {
    /// Registers `extension` (once: a second registration of the same id is ignored). Its
    /// methods' rows in the method table name the extensions' handler
    /// ([`Serve::Extension`]), which serves them by this registry.
    pub(crate) fn register(&mut self, extension: &'static dyn Extension) {
        debug_assert!(
            extension
                .methods()
                .iter()
                .all(|m| m.handler() == Handler::Serve(Serve::Extension)),
            "the method table hands {}'s methods to their extension",
            extension.id()
        );
        if !self.registered.iter().any(|e| e.id() == extension.id()) {
            self.registered.push(extension);
        }
    }

    /// Every registered extension, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &'static dyn Extension> + '_ {
        self.registered.iter().copied()
    }

    /// The extension serving `method`.
    pub(crate) fn serving(&self, method: Method) -> Option<&'static dyn Extension> {
        self.iter().find(|e| e.methods().contains(&method))
    }

    /// Whether the server's layers wrap `method` as one of an extension's.
    pub(crate) fn layered(&self, method: Method) -> bool {
        self.serving(method).is_some_and(|e| e.layered())
    }

    /// The declarations under the stateless era's `capabilities.extensions`.
    pub(crate) fn declarations(&self) -> Map<String, Value> {
        self.iter()
            .map(|e| (e.id().to_owned(), e.declaration()))
            .collect()
    }

    /// Offers a stateless-era `tools/call` to each extension in turn: the first to take it
    /// answers it; the params come back when none does.
    pub(crate) fn take_call<'a>(
        &self,
        server: &'a Server,
        mut params: Option<Value>,
        ctx: &'a Context,
        round: Option<&'a Round>,
    ) -> Result<Answering<'a>, Option<Value>> {
        for extension in self.iter() {
            match extension.take_call(server, params, ctx, round) {
                Ok(answering) => return Ok(answering),
                Err(back) => params = back,
            }
        }
        Err(params)
    }
}
