//! The transport-neutral part of serving one JSON-RPC message inside a session: the
//! lifecycle gate, envelope validation, the method table, client answers to server requests.
//! Transports add their own framing (HTTP status codes and SSE, stdio lines).

use std::sync::Mutex;

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::SessionHandle;
use super::store::{SessionRecord, SessionStore, StoreError, new_session_id};
use crate::Context;
use crate::context::ContextBuilder;
use crate::protocol::{
    Kind, LogLevel, Method, ProtocolVersion, RpcError, failure, negotiate, success,
    validate_envelope,
};

/// What handling one message in a session produced.
#[derive(Debug)]
pub(crate) enum Step {
    /// A JSON-RPC answer to send now.
    Reply(Value),
    /// Accepted: a notification or a client answer; nothing to send.
    Accepted,
    /// A `tools/call` the transport runs (it owns how the answer travels).
    Call { id: Value, params: Option<Value> },
    /// `initialize` inside a session: the transport starts a session.
    Initialize { id: Value, params: Option<Value> },
}

/// A message refused before it reached a method.
#[derive(Debug)]
pub(crate) enum Rejected {
    /// An invalid request (HTTP 400): lifecycle gate, envelope.
    Invalid { id: Value, message: String },
    /// An unknown request method.
    MethodNotFound { id: Value },
    /// The session is gone.
    Gone { id: Value },
    /// The session store failed.
    Store { id: Value, error: StoreError },
}

impl Rejected {
    /// The refusal as a JSON-RPC error response (for transports without status codes).
    pub(crate) fn to_response(&self) -> Value {
        match self {
            Rejected::Invalid { id, message } => failure(
                id.clone(),
                &RpcError::new(RpcError::INVALID_REQUEST, message.clone(), None),
            ),
            Rejected::MethodNotFound { id } => failure(
                id.clone(),
                &RpcError::new(RpcError::METHOD_NOT_FOUND, "Method not found", None),
            ),
            Rejected::Gone { id } => failure(
                id.clone(),
                &RpcError::new(RpcError::INVALID_REQUEST, "Session not found", None),
            ),
            Rejected::Store { id, .. } => failure(
                id.clone(),
                &RpcError::new(
                    RpcError::INTERNAL_ERROR,
                    "Internal error",
                    Some(json!({ "reason": "session store unavailable" })),
                ),
            ),
        }
    }
}

/// Serves messages of live sessions against a store (each session's running calls are its
/// handle's).
pub(crate) struct Engine<'a> {
    pub(crate) store: &'a dyn SessionStore,
}

impl Engine<'_> {
    /// Everything after session resolution (and, over HTTP, the version header): client
    /// answers, the lifecycle gate, the envelope, then the method.
    ///
    /// The message is taken by value so a call's `params` move into [`Step::Call`] instead of
    /// being copied; the record is only cloned by the rare steps that save it.
    pub(crate) async fn in_session(
        &self,
        record: &SessionRecord,
        handle: &SessionHandle,
        kind: Kind,
        mut message: Value,
    ) -> Result<Step, Rejected> {
        let rid = kind.rejection_id();
        if let Kind::Response { id } = &kind {
            let answer = match message.as_object_mut() {
                Some(m) => match (m.remove("result"), m.remove("error")) {
                    (Some(result), _) => Ok(result),
                    (None, Some(error)) => Err(error),
                    (None, None) => Err(Value::Null),
                },
                None => Err(Value::Null),
            };
            // Unknown ids are ignored.
            handle.deliver_response(id, answer);
            return Ok(Step::Accepted);
        }
        let method = kind.method().and_then(Method::parse);
        if !record.initialized && !method.is_some_and(Method::allowed_before_initialized) {
            return Err(Rejected::Invalid {
                id: rid,
                message: "Session not yet initialized. Send notifications/initialized first."
                    .to_owned(),
            });
        }
        validate_envelope(&message).map_err(|reason| Rejected::Invalid {
            id: rid.clone(),
            message: reason.to_string(),
        })?;
        let params = message.as_object_mut().and_then(|m| m.remove("params"));
        match kind {
            Kind::Notification { .. } => {
                match method {
                    Some(Method::Initialized) => self.mark_initialized(record, &rid).await?,
                    Some(Method::Cancelled) => cancel(handle, params.as_ref()),
                    // Unknown notifications, and requests sent as notifications, are accepted
                    // and ignored.
                    _ => {}
                }
                Ok(Step::Accepted)
            }
            Kind::Request { id, .. } => {
                let Some(method) = method else {
                    return Err(Rejected::MethodNotFound { id });
                };
                match method {
                    Method::Initialize => Ok(Step::Initialize { id, params }),
                    Method::Ping => Ok(Step::Reply(success(id, json!({})))),
                    Method::Initialized => {
                        self.mark_initialized(record, &rid).await?;
                        Ok(Step::Reply(success(id, json!({}))))
                    }
                    Method::Cancelled => {
                        cancel(handle, params.as_ref());
                        Ok(Step::Reply(success(id, json!({}))))
                    }
                    Method::ToolsList => Ok(Step::Reply(success(id, handle.list_tools()))),
                    Method::ToolsCall => Ok(Step::Call { id, params }),
                    Method::SetLevel => self.set_level(record, handle, id, params.as_ref()).await,
                    Method::ResourcesList
                    | Method::ResourceTemplatesList
                    | Method::ResourcesRead
                    | Method::ResourcesSubscribe
                    | Method::ResourcesUnsubscribe
                    | Method::PromptsList
                    | Method::PromptsGet
                    | Method::Complete => {
                        let ctx = request_context(record, handle, &id);
                        let result = feature(handle.server(), method, params, ctx).await;
                        Ok(Step::Reply(match result {
                            Ok(result) => success(id, result),
                            Err(error) => failure(id, &error),
                        }))
                    }
                }
            }
            Kind::Response { .. } | Kind::Unknown => Ok(Step::Accepted),
        }
    }

    async fn mark_initialized(&self, record: &SessionRecord, rid: &Value) -> Result<(), Rejected> {
        let mut record = record.clone();
        record.initialized = true;
        self.save(record, rid).await
    }

    async fn save(&self, record: SessionRecord, rid: &Value) -> Result<(), Rejected> {
        match self.store.save(record).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(Rejected::Gone { id: rid.clone() }),
            Err(error) => Err(Rejected::Store {
                id: rid.clone(),
                error,
            }),
        }
    }

    async fn set_level(
        &self,
        record: &SessionRecord,
        handle: &SessionHandle,
        id: Value,
        params: Option<&Value>,
    ) -> Result<Step, Rejected> {
        let raw = params.and_then(|p| p.get("level"));
        let Some(level) = raw.and_then(Value::as_str).and_then(LogLevel::parse) else {
            let shown = raw.map_or_else(|| "null".to_owned(), Value::to_string);
            let error = RpcError::invalid_params_reason(format!(
                "Invalid log level: {}",
                wymcp_core::bound::echo(&shown)
            ));
            return Ok(Step::Reply(failure(id, &error)));
        };
        let mut record = record.clone();
        record.log_level = Some(level);
        self.save(record, &id).await?;
        handle.set_log_level(Some(level));
        Ok(Step::Reply(success(id, json!({}))))
    }
}

/// Serves a resources, prompts or completion request with the server's handler.
async fn feature(
    server: &crate::Server,
    method: Method,
    params: Option<Value>,
    ctx: Context,
) -> Result<Value, RpcError> {
    match method {
        Method::ResourcesList => server.handle_resources_list(params, ctx).await,
        Method::ResourceTemplatesList => server.handle_resource_templates_list(params, ctx).await,
        Method::ResourcesRead => server.handle_resources_read(params, ctx).await,
        Method::ResourcesSubscribe => server.handle_resources_subscribe(params, ctx).await,
        Method::ResourcesUnsubscribe => server.handle_resources_unsubscribe(params, ctx).await,
        Method::PromptsList => server.handle_prompts_list(params, ctx).await,
        Method::PromptsGet => server.handle_prompts_get(params, ctx).await,
        Method::Complete => server.handle_completion_complete(params, ctx).await,
        _ => Err(RpcError::new(
            RpcError::METHOD_NOT_FOUND,
            "Method not found",
            None,
        )),
    }
}

/// The context of a request answered inline (resources, prompts, completion): the session,
/// its revision, client info and capabilities, a snapshot of its assigns.
fn request_context(record: &SessionRecord, handle: &SessionHandle, id: &Value) -> Context {
    // The session id is the handle's (`Context::session_id` reads it there): no copy per request.
    debug_assert_eq!(handle.id(), record.id);
    let mut ctx = Context::builder()
        .request_id(id.clone())
        .protocol_version(record.version)
        .shared_client(
            record.client_info.clone(),
            record.client_capabilities.clone(),
        )
        .session(handle.clone());
    for (key, value) in &record.assigns {
        ctx = ctx.assign(key.clone(), value.clone());
    }
    ctx.build()
}

/// Whether an assign key is framework-internal (`wymcp`, `wymcp_*`): such keys from upstream
/// code (auth, hooks) never reach a tool's assigns.
pub(crate) fn is_internal_assign(key: &str) -> bool {
    key == "wymcp" || key.starts_with("wymcp_")
}

/// A new session's record from `initialize`'s params: negotiated revision, client
/// capabilities and info (`{}` when absent or not objects), not yet initialized.
pub(crate) fn new_record(
    params: Option<&Value>,
    assigns: Map<String, Value>,
    subject: Option<String>,
) -> SessionRecord {
    let version: ProtocolVersion = negotiate(params.and_then(|p| p.get("protocolVersion")));
    let field = |name: &str| {
        params
            .and_then(|p| p.get(name))
            .filter(|v| v.is_object())
            .cloned()
            .unwrap_or_else(|| json!({}))
            .into()
    };
    SessionRecord {
        id: new_session_id(),
        version,
        client_capabilities: field("capabilities"),
        client_info: field("clientInfo"),
        initialized: false,
        log_level: None,
        assigns,
        subject,
    }
}

/// The context of a `tools/call` in a session, before the transport adds its notifier.
pub(crate) fn call_context(
    record: &SessionRecord,
    handle: &SessionHandle,
    id: &Value,
    params: Option<&Value>,
    assigns: std::sync::Arc<Mutex<Map<String, Value>>>,
    token: CancellationToken,
) -> ContextBuilder {
    // The session id is the handle's (`Context::session_id` reads it there): no copy per call.
    debug_assert_eq!(handle.id(), record.id);
    let mut ctx = Context::builder()
        .request_id(id.clone())
        .protocol_version(record.version)
        .shared_assigns(assigns)
        .shared_client(
            record.client_info.clone(),
            record.client_capabilities.clone(),
        )
        .cancellation(token)
        .session(handle.clone());
    if let Some(progress) = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get("progressToken"))
    {
        ctx = ctx.progress_token(progress.clone());
    }
    ctx
}

/// `notifications/cancelled`: cancels the named call if it runs on this session.
fn cancel(handle: &SessionHandle, params: Option<&Value>) {
    if let Some(request_id) = params.and_then(|p| p.get("requestId"))
        && handle.cancel_call(request_id)
    {
        tracing::info!(request_id = %request_id, "MCP call cancelled by the client");
    }
}
