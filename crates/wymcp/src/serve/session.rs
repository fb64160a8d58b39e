//! The session era (2025-03-26 to 2025-11-25): `initialize` and `ping` without a session, then
//! the session the transport names, the lifecycle gate, the envelope, and the request by its
//! method's handler (the method table's): the session's lifecycle here, the rest the
//! server's; the 2025-03-26 batches.

use std::sync::Arc;

use serde_json::{Value, json};

use super::call;
use super::{Answer, Caller, Core, Identity, Inbound, Outcome, Refusal, Related};
use crate::Context;
use crate::protocol::{
    Handler, Kind, Lifecycle, LogLevel, Method, ProtocolVersion, RpcError, failure, success,
};
use crate::server::extension::Answered;
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
    // Classified and checked in one pass over the envelope; a refusal of the check is
    // answered where the lifecycle puts it (after the session's, for a session's request).
    let (kind, valid) = Kind::of_checked(&message);
    let rid = kind.rejection_id();
    if let Kind::Request { id, method } = &kind {
        // A transport of one session (stdio) refuses a second `initialize` in the session.
        let starts = !(core.settings().one_session && session.is_some());
        match Method::parse(method).map(Method::handler) {
            Some(Handler::Lifecycle(Lifecycle::Initialize)) if starts => {
                refuse_invalid(valid, &rid)?;
                let params = message.get("params");
                let caller = super::quota::client_key(identity, client);
                return super::initialize::start(core, id.clone(), params, identity, caller).await;
            }
            Some(Handler::Lifecycle(Lifecycle::Ping)) => {
                refuse_invalid(valid, &rid)?;
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
    let message = Received {
        kind,
        valid,
        message,
    };
    in_session(core, record, requested, message, (related, caller)).await
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
        let (kind, valid) = Kind::of_checked(&item);
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
                    let item = Received {
                        kind,
                        valid,
                        message: item,
                    };
                    in_session(core, fresh, requested, item, with).await
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

/// A message as received, with its kind and its envelope's check ([`Kind::of_checked`]),
/// taken by value so a call's `params` move into the call.
struct Received {
    kind: Kind,
    valid: Result<(), String>,
    message: Value,
}

/// The refusal of a message whose envelope is invalid ([`Kind::of_checked`]).
fn refuse_invalid(valid: Result<(), String>, rid: &Value) -> Result<(), Refusal> {
    valid.map_err(|reason| Refusal::invalid(rid.clone(), reason))
}

/// Everything after session resolution: the version header, client answers, the lifecycle
/// gate, the envelope, then the method.
///
/// The message (with its kind and its envelope's check, [`Kind::of_checked`]) is taken by
/// value so a call's `params` move into the call instead of being copied; the record is only
/// cloned by the rare steps that save it.
async fn in_session(
    core: &Core,
    record: Arc<SessionRecord>,
    requested: Option<ProtocolVersion>,
    received: Received,
    (related, caller): (Related, Caller<'_>),
) -> Result<Outcome, Refusal> {
    let Received {
        kind,
        valid,
        message,
    } = received;
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
    refuse_invalid(valid, &rid)?;
    let params = take_params(message);
    match kind {
        Kind::Notification { .. } => {
            // The lifecycle's notifications; any other notification, and a request sent as a
            // notification, is accepted and ignored.
            if let Some(Handler::Lifecycle(step @ (Lifecycle::Initialized | Lifecycle::Cancel))) =
                method.map(Method::handler)
            {
                let step = lifecycle(core, &record, &handle, step, &rid, params.as_ref());
                // A notification has no answer.
                let _no_answer = step.await?;
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

/// The message's `params`, moved out as the message is taken apart (a removal from the map,
/// and then freeing the rest, cost more).
fn take_params(message: Value) -> Option<Value> {
    let Value::Object(members) = message else {
        return None;
    };
    members
        .into_iter()
        .find_map(|(key, value)| (key == "params").then_some(value))
}

/// A session's request, by its method's handler: the session's lifecycle here, a
/// `tools/call` as a call of its own, any other method answered inline by the server's one
/// dispatch (`Server::serve_request`).
async fn request(
    core: &Core,
    record: Arc<SessionRecord>,
    handle: SessionHandle,
    method: Method,
    id: Value,
    params: Option<Value>,
    (related, caller): (Related, Caller<'_>),
) -> Result<Outcome, Refusal> {
    visibility_follows(core, &handle, caller.identity);
    match method.handler() {
        Handler::Lifecycle(step) => {
            let answer = lifecycle(core, &record, &handle, step, &id, params.as_ref()).await?;
            Ok(reply(match answer {
                Ok(result) => success(id, result),
                Err(error) => failure(id, &error),
            }))
        }
        Handler::CallTool => Ok(Outcome::Call(call::in_session(
            core,
            record,
            handle,
            id,
            params,
            (related, caller),
        )?)),
        // Not served in a session (the table's era column): never here.
        Handler::Listen => Err(Refusal::method_not_found(id)),
        Handler::Serve(_) => {
            let ctx = request_context(core, &record, &handle, &id, caller);
            // Boxed: these methods' futures stay out of the future of every call this
            // function serves (+0.8 % per session-era call inline, callgrind against c6c408b).
            let result = Box::pin(core.server().serve_request(method, params, &ctx, None)).await;
            Ok(match result {
                Ok(Answered::Value(result)) => reply(success(id, result)),
                Ok(Answered::Call(result)) => Outcome::Message(Answer::Call {
                    id,
                    result,
                    version: record.version,
                }),
                Err(error) => Outcome::Message(Answer::failure(id, &error)),
            })
        }
    }
}

/// A step of the session's lifecycle (request `rid`, or a notification): its result, or the
/// error the request is answered (a log level that is none).
async fn lifecycle(
    core: &Core,
    record: &SessionRecord,
    handle: &SessionHandle,
    step: Lifecycle,
    rid: &Value,
    params: Option<&Value>,
) -> Result<Result<Value, RpcError>, Refusal> {
    match step {
        // A transport of one session: `initialize` again is refused here.
        Lifecycle::Initialize => Err(Refusal::invalid(
            rid.clone(),
            "The session is already initialized: this transport serves one session.",
        )),
        Lifecycle::Ping => Ok(Ok(json!({}))),
        Lifecycle::Cancel => {
            cancel(core, handle, params).await;
            Ok(Ok(json!({})))
        }
        Lifecycle::Initialized => {
            mark_initialized(core, record, rid).await?;
            Ok(Ok(json!({})))
        }
        Lifecycle::SetLevel => set_level(core, record, handle, rid, params).await,
    }
}

async fn mark_initialized(core: &Core, record: &SessionRecord, rid: &Value) -> Result<(), Refusal> {
    let mut record = record.clone();
    record.initialized = true;
    core.sessions().save(record, rid).await
}

/// `logging/setLevel`: the session's level, saved; a level that is none is `-32602`.
async fn set_level(
    core: &Core,
    record: &SessionRecord,
    handle: &SessionHandle,
    rid: &Value,
    params: Option<&Value>,
) -> Result<Result<Value, RpcError>, Refusal> {
    let raw = params.and_then(|p| p.get("level"));
    let Some(level) = raw.and_then(Value::as_str).and_then(LogLevel::parse) else {
        let shown = raw.map_or_else(|| "null".to_owned(), Value::to_string);
        return Ok(Err(RpcError::invalid_params_reason(format!(
            "Invalid log level: {}",
            wymcp_core::bound::echo(&shown)
        ))));
    };
    let mut record = record.clone();
    record.log_level = Some(level);
    core.sessions().save(record, rid).await?;
    handle.set_log_level(Some(level));
    Ok(Ok(json!({})))
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
