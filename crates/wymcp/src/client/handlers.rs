//! The handlers a user installs for the server's requests (`sampling/createMessage`,
//! `elicitation/create`, `roots/list`), the capabilities they declare, and the answer to a
//! request: the handler's, or `-32601` when none is installed.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::notifications::Observer;
use crate::protocol::RpcError;

/// What a handler's future answers.
type Answer = Pin<Box<dyn Future<Output = Result<Value, RpcError>> + Send>>;
/// A handler: the request's params in, its result (or a JSON-RPC error) out.
pub(crate) type Handler = Arc<dyn Fn(Value) -> Answer + Send + Sync>;

/// Boxes a user's async function as a [`Handler`].
pub(crate) fn handler<F, Fut>(f: F) -> Handler
where
    F: Fn(Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
{
    Arc::new(move |params| Box::pin(f(params)))
}

/// What a handler runs for: the progress token of the client's request, when known, and the
/// key of the server's request in an `input_required` result's `inputRequests`.
#[derive(Debug, Clone)]
struct Origin {
    token: Option<Value>,
    key: Option<String>,
}

tokio::task_local! {
    /// What the handler running on this task runs for.
    static ORIGIN: Origin;
}

/// Inside a handler installed with [`on_sampling`](super::ClientBuilder::on_sampling),
/// [`on_elicitation`](super::ClientBuilder::on_elicitation) or
/// [`on_roots`](super::ClientBuilder::on_roots): the `_meta.progressToken` of this client's
/// request the server's request was made for, when the transport tells which request that is
/// and the request carried a token ([`Client::call_tool_with_progress`](super::Client::call_tool_with_progress)).
/// The transport tells over Streamable HTTP in a session (the server's request arrived on that
/// request's response stream) and in the stateless era (it came in that request's
/// `input_required` result); over stdio and on the session's GET stream nothing ties a
/// server's request to one of the client's, and this is `None`, as it is outside a handler.
///
/// A client relaying its server's requests to whoever caused them (a gateway) keys its calls
/// by the token it gives each.
///
/// ```
/// assert_eq!(wymcp::client::related_progress_token(), None);
/// ```
pub fn related_progress_token() -> Option<Value> {
    ORIGIN
        .try_with(|origin| origin.token.clone())
        .ok()
        .flatten()
}

/// Inside a handler installed with [`on_sampling`](super::ClientBuilder::on_sampling),
/// [`on_elicitation`](super::ClientBuilder::on_elicitation) or
/// [`on_roots`](super::ClientBuilder::on_roots), run for an `input_required` result (MCP
/// 2026-07-28): the server's key of the request in `inputRequests` (`"user_name"`), under
/// which the answer goes back in `inputResponses`. `None` for a server's request in a session
/// (it has an id, not a key), as it is outside a handler.
///
/// A client relaying its server's requests to a stateless client of its own (a gateway) asks
/// under the same key, so that its client sees the server's keys.
///
/// ```
/// assert_eq!(wymcp::client::related_input_key(), None);
/// ```
pub fn related_input_key() -> Option<String> {
    ORIGIN.try_with(|origin| origin.key.clone()).ok().flatten()
}

/// The methods a server may ask of its client, and the capability each declares.
pub(crate) const SAMPLING: &str = "sampling/createMessage";
pub(crate) const ELICITATION: &str = "elicitation/create";
pub(crate) const ROOTS: &str = "roots/list";

/// The observer of streams the server closed before their answer
/// ([`ClientBuilder::on_stream_closed`](super::ClientBuilder::on_stream_closed)): the request's
/// progress token in.
pub(crate) type ClosedObserver = Arc<dyn Fn(Option<&Value>) + Send + Sync>;

/// The installed handlers.
#[derive(Clone, Default)]
pub(crate) struct Handlers {
    pub(crate) sampling: Option<Handler>,
    pub(crate) elicitation: Option<Handler>,
    pub(crate) roots: Option<Handler>,
    /// The observer of the server's notifications, when installed.
    pub(crate) notification: Option<Observer>,
    /// The observer of response streams closed before their answer, when installed.
    pub(crate) stream_closed: Option<ClosedObserver>,
}

impl std::fmt::Debug for Handlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handlers")
            .field("sampling", &self.sampling.is_some())
            .field("elicitation", &self.elicitation.is_some())
            .field("roots", &self.roots.is_some())
            .field("notification", &self.notification.is_some())
            .field("stream_closed", &self.stream_closed.is_some())
            .finish()
    }
}

impl Handlers {
    /// The client's `capabilities`: one member per installed handler.
    pub(crate) fn capabilities(&self) -> Value {
        let mut caps = Map::new();
        if self.sampling.is_some() {
            caps.insert("sampling".to_owned(), json!({}));
        }
        if self.elicitation.is_some() {
            caps.insert("elicitation".to_owned(), json!({}));
        }
        if self.roots.is_some() {
            caps.insert("roots".to_owned(), json!({"listChanged": false}));
        }
        Value::Object(caps)
    }

    fn for_method(&self, method: &str) -> Option<&Handler> {
        match method {
            SAMPLING => self.sampling.as_ref(),
            ELICITATION => self.elicitation.as_ref(),
            ROOTS => self.roots.as_ref(),
            _ => None,
        }
    }

    /// The handler of `method` run on `params` for the client's request whose progress token
    /// is `related` (see [`related_progress_token`]), under the input request's `key` when an
    /// `input_required` result asked (see [`related_input_key`]): its result or error,
    /// `-32601` when no handler is installed.
    pub(crate) async fn run(
        &self,
        method: &str,
        params: Value,
        related: Option<Value>,
        key: Option<String>,
    ) -> Result<Value, RpcError> {
        match self.for_method(method) {
            Some(handler) => {
                let origin = Origin {
                    token: related,
                    key,
                };
                // The handler called inside the scope too: its synchronous part sees it.
                ORIGIN.scope(origin, async { handler(params).await }).await
            }
            None => Err(RpcError::new(
                RpcError::METHOD_NOT_FOUND,
                format!("Method not found: {method} (no handler installed in this client)"),
                None,
            )),
        }
    }

    /// The JSON-RPC response to the server's `request` (a message with an `id` and a
    /// `method`), made for the client's request whose progress token is `related`: the
    /// handler's result or error, `-32601` when no handler is installed.
    pub(crate) async fn answer(&self, mut request: Value, related: Option<Value>) -> Value {
        let id = request
            .get_mut("id")
            .map(Value::take)
            .unwrap_or(Value::Null);
        let method = request
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let params = request
            .get_mut("params")
            .map(Value::take)
            .unwrap_or_else(|| json!({}));
        let outcome = self.run(&method, params, related, None).await;
        match outcome {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
        }
    }
}

/// Whether `message` is a request of the server (an `id` and a `method`).
pub(crate) fn is_request(message: &Value) -> bool {
    message.get("id").is_some() && message.get("method").is_some()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Handlers, handler};

    #[tokio::test]
    async fn an_installed_handler_answers_and_a_missing_one_is_method_not_found() {
        let handlers = Handlers {
            roots: Some(handler(|_| async { Ok(json!({"roots": []})) })),
            ..Handlers::default()
        };
        assert_eq!(
            handlers.capabilities(),
            json!({"roots": {"listChanged": false}})
        );
        let answered = handlers
            .answer(
                json!({"jsonrpc": "2.0", "id": 7, "method": "roots/list"}),
                None,
            )
            .await;
        assert_eq!(
            answered,
            json!({"jsonrpc": "2.0", "id": 7, "result": {"roots": []}})
        );
        let refused = handlers
            .answer(
                json!({"jsonrpc": "2.0", "id": "s", "method": "sampling/createMessage"}),
                None,
            )
            .await;
        assert_eq!(refused["id"], "s");
        assert_eq!(refused["error"]["code"], -32601);
    }
}
