//! The session era (2025-03-26 to 2025-11-25): `initialize` and `ping` without a session, then
//! the session the transport names, the lifecycle gate, the envelope, and the method table;
//! the 2025-03-26 batches.

use std::sync::Arc;

use serde_json::{Value, json};

use super::call;
use super::{Answer, Caller, Core, Identity, Inbound, Outcome, Refusal, Related};
use crate::Context;
use crate::protocol::{
    Kind, LogLevel, Method, ProtocolVersion, RpcError, failure, success, validate_envelope,
};
use crate::session::{SessionHandle, SessionRecord};

/// Serves one message of the session era.
pub(super) async fn serve(core: &Core, inbound: Inbound<'_>) -> Result<Outcome, Refusal> {
    let Inbound {
        message,
        session,
        identity,
        related,
        requested,
        client,
        loaded,
        ..
    } = inbound;
    let kind = Kind::of(&message);
    let rid = kind.rejection_id();
    if let Kind::Request { id, method } = &kind {
        // A transport of one session (stdio) refuses a second `initialize` in the method table.
        let starts = !(core.settings().one_session && session.is_some());
        match Method::parse(method) {
            Some(Method::Initialize) if starts => {
                validate(&message, &rid)?;
                let params = message.get("params");
                let caller = super::quota::client_key(identity, client);
                return super::initialize::start(core, id.clone(), params, identity, caller).await;
            }
            Some(Method::Ping) => {
                validate(&message, &rid)?;
                return Ok(reply(success(id.clone(), json!({}))));
            }
            _ => {}
        }
    }
    let Some(session) = session else {
        return Err(Refusal::no_session(rid));
    };
    let record = core
        .sessions()
        .resolve(session, identity, (&rid, Some(&message)), loaded)
        .await?;
    let caller = Caller { identity, client };
    in_session(core, record, requested, kind, message, (related, caller)).await
}

/// A 2025-03-26 batch of session `session`: each message served in turn against the session's
/// current record; answers the array of responses (`None` when there is none to send).
pub(super) async fn serve_batch(
    core: &Core,
    items: Vec<Value>,
    inbound: Inbound<'_>,
) -> Result<Option<Value>, Refusal> {
    let Some(session) = inbound.session else {
        return Err(Refusal::no_session(Value::Null));
    };
    let record = core
        .sessions()
        .resolve(
            session,
            inbound.identity,
            (&Value::Null, None),
            inbound.loaded,
        )
        .await?;
    check_batch(core, &record, items.len())?;
    let mut replies = Vec::new();
    for item in items {
        let kind = Kind::of(&item);
        let rid = kind.rejection_id();
        let outcome = if kind.method() == Some(Method::Initialize.as_str()) {
            Err(Refusal::invalid(
                rid,
                "initialize must not be part of a batch",
            ))
        } else {
            match core
                .sessions()
                .store()
                .load(&record.id, core.sessions().ttl())
                .await
            {
                Ok(Some(fresh)) => {
                    let requested = inbound.requested;
                    let caller = Caller {
                        identity: inbound.identity,
                        client: inbound.client,
                    };
                    let with = (Related::None, caller);
                    in_session(core, fresh, requested, kind, item, with).await
                }
                Ok(None) => return Err(Refusal::session_gone(Value::Null)),
                Err(err) => Err(Refusal::store(rid, &err)),
            }
        };
        match outcome {
            Ok(Outcome::Message(answer)) => replies.push(answer.into_value()),
            Ok(Outcome::Call(call)) => match call.finish().await {
                Some(Ok(answer)) => replies.push(answer.into_value()),
                Some(Err(refusal)) => replies.push(refusal.to_message()),
                None => {}
            },
            Ok(Outcome::Accepted | Outcome::Started { .. } | Outcome::Listen(_)) => {}
            // A session gone is told by the status alone when there is no id to answer.
            Err(refusal) if refusal.id.is_null() && refusal.class == super::Class::SessionGone => {}
            Err(refusal) => replies.push(refusal.to_message()),
        }
    }
    Ok((!replies.is_empty()).then_some(Value::Array(replies)))
}

/// A batch is served only by a revision that has batches, and only with 1 to
/// [`Limits::max_batch`](crate::Limits) messages.
fn check_batch(core: &Core, record: &SessionRecord, len: usize) -> Result<(), Refusal> {
    if !record.version.supports_batches() {
        return Err(Refusal::invalid(
            Value::Null,
            format!(
                "JSON-RPC batches are not supported by protocol version {}. Send one message per POST.",
                record.version
            ),
        ));
    }
    if len == 0 {
        return Err(Refusal::invalid(Value::Null, "Empty batch"));
    }
    let max = core.server().limits().max_batch;
    if len > max {
        return Err(Refusal::invalid(
            Value::Null,
            format!(
                "Batch of {len} messages refused: the limit is {max} per batch (Limits::max_batch). \
                 Send smaller batches."
            ),
        ));
    }
    Ok(())
}

fn reply(message: Value) -> Outcome {
    Outcome::Message(Answer::Message(message))
}

fn validate(message: &Value, rid: &Value) -> Result<(), Refusal> {
    validate_envelope(message).map_err(|reason| Refusal::invalid(rid.clone(), reason))
}

/// Everything after session resolution: the version header, client answers, the lifecycle
/// gate, the envelope, then the method.
///
/// The message is taken by value so a call's `params` move into the call instead of being
/// copied; the record is only cloned by the rare steps that save it.
async fn in_session(
    core: &Core,
    record: Arc<SessionRecord>,
    requested: Option<ProtocolVersion>,
    kind: Kind,
    mut message: Value,
    (related, caller): (Related, Caller<'_>),
) -> Result<Outcome, Refusal> {
    let rid = kind.rejection_id();
    core.check_version(&record, requested, &rid)?;
    let handle = core.sessions().handle(&record);
    if let Kind::Response { id } = &kind {
        take_answer(core, &handle, id, message).await;
        return Ok(Outcome::Accepted);
    }
    let method = kind.method().and_then(Method::parse);
    if !record.initialized && !method.is_some_and(Method::allowed_before_initialized) {
        return Err(Refusal::invalid(
            rid,
            "Session not yet initialized. Send notifications/initialized first.",
        ));
    }
    validate(&message, &rid)?;
    let params = message.as_object_mut().and_then(|m| m.remove("params"));
    match kind {
        Kind::Notification { .. } => {
            match method {
                Some(Method::Initialized) => mark_initialized(core, &record, &rid).await?,
                Some(Method::Cancelled) => cancel(core, &handle, params.as_ref()).await,
                // Unknown notifications, and requests sent as notifications, are accepted
                // and ignored.
                _ => {}
            }
            Ok(Outcome::Accepted)
        }
        Kind::Request { id, .. } => {
            let Some(method) = method.filter(|m| m.served_in_session()) else {
                return Err(Refusal::method_not_found(id));
            };
            request(core, record, handle, method, id, params, (related, caller)).await
        }
        Kind::Response { .. } | Kind::Unknown => Ok(Outcome::Accepted),
    }
}

/// The method table of a session's requests.
async fn request(
    core: &Core,
    record: Arc<SessionRecord>,
    handle: SessionHandle,
    method: Method,
    id: Value,
    params: Option<Value>,
    (related, caller): (Related, Caller<'_>),
) -> Result<Outcome, Refusal> {
    let identity = caller.identity;
    let done = |result: Value| Ok(reply(success(id.clone(), result)));
    visibility_follows(core, &handle, identity);
    match method {
        // A transport of one session: `initialize` again is refused here.
        Method::Initialize => Err(Refusal::invalid(
            id,
            "The session is already initialized: this transport serves one session.",
        )),
        Method::Ping | Method::Cancelled => {
            if method == Method::Cancelled {
                cancel(core, &handle, params.as_ref()).await;
            }
            done(json!({}))
        }
        Method::Initialized => {
            mark_initialized(core, &record, &id).await?;
            done(json!({}))
        }
        Method::ToolsList if !core.server().layers_wrap(method) => {
            let per_page = core.server().limits().tools_per_page;
            match handle.list_tools_page(identity, per_page, params.as_ref()) {
                Ok(result) => done(result),
                Err(error) => Ok(Outcome::Message(Answer::failure(id, &error))),
            }
        }
        Method::ToolsCall => Ok(Outcome::Call(call::in_session(
            core,
            record,
            handle,
            id,
            params,
            (related, caller),
        )?)),
        Method::SetLevel => set_level(core, &record, &handle, id, params.as_ref()).await,
        _ => {
            let ctx = request_context(core, &record, &handle, &id, caller);
            // Boxed: these methods' futures (with the layers' branch) stay out of the
            // future of every call this function serves (+0.8 % per session-era call inline,
            // callgrind against c6c408b).
            let result = Box::pin(serve_method(core, method, params, ctx)).await;
            Ok(match result {
                Ok(result) => reply(success(id, result)),
                Err(error) => Outcome::Message(Answer::failure(id, &error)),
            })
        }
    }
}

/// A request of the methods beyond tools (and `tools/list` when layers wrap it).
async fn serve_method(
    core: &Core,
    method: Method,
    params: Option<Value>,
    ctx: Context,
) -> Result<Value, crate::protocol::RpcError> {
    if method == Method::ToolsList {
        let per_page = core.server().limits().tools_per_page;
        let serve = move |params: Option<Value>, ctx: Context| async move {
            list_tools(&ctx, per_page, params.as_ref())
        };
        return core
            .server()
            .through_layers(method, params, ctx, serve)
            .await;
    }
    core.server().feature(method, params, ctx).await
}

/// `tools/list` as the context's session and caller see it.
fn list_tools(
    ctx: &Context,
    per_page: Option<usize>,
    params: Option<&Value>,
) -> Result<Value, crate::protocol::RpcError> {
    match ctx.session() {
        Some(handle) => handle.list_tools_page(ctx.identity(), per_page, params),
        None => Ok(Value::Null),
    }
}

async fn mark_initialized(core: &Core, record: &SessionRecord, rid: &Value) -> Result<(), Refusal> {
    let mut record = record.clone();
    record.initialized = true;
    core.sessions().save(record, rid).await
}

async fn set_level(
    core: &Core,
    record: &SessionRecord,
    handle: &SessionHandle,
    id: Value,
    params: Option<&Value>,
) -> Result<Outcome, Refusal> {
    let raw = params.and_then(|p| p.get("level"));
    let Some(level) = raw.and_then(Value::as_str).and_then(LogLevel::parse) else {
        let shown = raw.map_or_else(|| "null".to_owned(), Value::to_string);
        let error = RpcError::invalid_params_reason(format!(
            "Invalid log level: {}",
            wymcp_core::bound::echo(&shown)
        ));
        return Ok(reply(failure(id, &error)));
    };
    let mut record = record.clone();
    record.log_level = Some(level);
    core.sessions().save(record, &id).await?;
    handle.set_log_level(Some(level));
    Ok(reply(success(id, json!({}))))
}

/// The context of a request answered inline (resources, prompts, completion): the session,
/// its revision, client info and capabilities, a snapshot of its assigns, the transport it
/// came by.
fn request_context(
    core: &Core,
    record: &SessionRecord,
    handle: &SessionHandle,
    id: &Value,
    caller: Caller<'_>,
) -> Context {
    // The session id is the handle's (`Context::session_id` reads it there): no copy per request.
    debug_assert_eq!(handle.id(), record.id);
    let mut ctx = Context::builder()
        .request_id(id.clone())
        .protocol_version(record.version)
        .shared_client(
            record.client_info.clone(),
            record.client_capabilities.clone(),
        )
        .session(handle.clone())
        .origin(crate::context::Origin {
            transport: core.settings().transport,
            client: caller.client,
        });
    for (key, value) in &record.assigns {
        ctx = ctx.assign(key.clone(), value.clone());
    }
    if let Some(identity) = caller.identity {
        ctx = ctx.identity(identity.clone());
    }
    let user_state = core.server().features().user_state.as_ref();
    ctx.user_state(user_state).build()
}

/// A client's answer to the server request `id`: to the call waiting for it here, or to the
/// node whose id the request carries; unknown ids are ignored.
async fn take_answer(core: &Core, handle: &SessionHandle, id: &Value, mut message: Value) {
    let answer = match message.as_object_mut() {
        Some(m) => match (m.remove("result"), m.remove("error")) {
            (Some(result), _) => Ok(result),
            (None, Some(error)) => Err(error),
            (None, None) => Err(Value::Null),
        },
        None => Err(Value::Null),
    };
    if core.sessions().cluster().bus.is_some() && !handle.awaits(id) {
        core.sessions().route_answer(handle.id(), id, answer).await;
    } else {
        handle.deliver_response(id, answer);
    }
}

/// `notifications/cancelled`: cancels the named call if it runs on this session here, else
/// wherever it runs (when there are other nodes).
async fn cancel(core: &Core, handle: &SessionHandle, params: Option<&Value>) {
    let Some(request_id) = params.and_then(|p| p.get("requestId")) else {
        return;
    };
    if handle.cancel_call(request_id) {
        tracing::info!(request_id = %request_id, "MCP call cancelled by the client");
    } else if core.sessions().cluster().bus.is_some() {
        core.sessions()
            .cancel_elsewhere(handle.id(), request_id)
            .await;
    }
}

/// Tells the session its tools changed (`notifications/tools/list_changed`) when this
/// request's credentials hold other of the server's declared scopes than the session's last
/// request did (a step-up, or a narrower token): what it may call, so what it is shown, changed.
/// Per node: a session's first request on a node sets the node's reference silently.
fn visibility_follows(core: &Core, handle: &SessionHandle, identity: Option<&Identity>) {
    use std::hash::{Hash, Hasher};
    let declared = &core.server().features().declared_scopes;
    let Some(identity) = identity else { return };
    if declared.is_empty() {
        return;
    }
    let granted = identity.scopes();
    let mut hasher = std::hash::DefaultHasher::new();
    for scope in declared {
        granted.contains(&scope.as_str()).hash(&mut hasher);
    }
    // Never 0, the "nothing seen yet" of the handle.
    let fingerprint = hasher.finish() | 1;
    let before = handle.swap_seen_scopes(fingerprint);
    if before != 0 && before != fingerprint {
        let note = crate::resource::ServerNotification::new(
            "notifications/tools/list_changed",
            json!({}),
            Some(handle.id().to_owned()),
        );
        core.server().features().hub.send(note);
    }
}
