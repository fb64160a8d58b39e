//! [`Call`]: the one call runner. A request whose handler runs (a session's `tools/call`, any
//! stateless request) becomes a `Call`: its handler's future, its registration among the
//! running calls (so `notifications/cancelled` reaches it), the queue of its related messages,
//! and the shaping of its answer for its era. A transport drives it with [`Call::next`] and
//! frames what comes out: a JSON body, SSE events, lines.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, PoisonError};

use serde_json::Value;
use tokio_util::sync::{CancellationToken, DropGuard};

use tracing::Instrument as _;

use super::notes::{self, NoteReceiver};
use super::operation::Operation;
use super::{Answer, Core, Refusal, Related, SharedAssigns};
use crate::Context;
use crate::context::{ContextBuilder, Origin};
use crate::protocol::{failure, success};
use crate::server::extension::Answered;
use crate::session::{Delivery, Notifier};
use crate::session::{RunningCall, SessionHandle, SessionRecord};

/// What a finished call answers: its message, or (stateless era) a refusal its handler caused.
pub(crate) type Finished = Result<Answer, Refusal>;

type Run = Pin<Box<dyn Future<Output = Finished> + Send>>;

/// What a call produced next.
#[derive(Debug)]
pub(crate) enum Event {
    /// A related message (progress, a log message, a server→client request).
    Note(Value),
    /// The call's answer: the last event.
    Finished(Finished),
    /// The client cancelled the call: nothing more, no answer.
    Cancelled,
    /// The tool closed its stream (SEP-1699); the call goes on.
    Closed,
}

/// A running request. Dropping it drops the handler and unregisters the call.
pub(crate) struct Call {
    run: Run,
    notes: Option<NoteReceiver>,
    token: CancellationToken,
    /// The name of the request's own stream, when it has one.
    stream: Option<Arc<str>>,
    /// SSE polling: the tool may end the request's stream mid-call.
    closer: Option<CancellationToken>,
    /// Related messages to hand out before anything else.
    pending: VecDeque<Value>,
    /// The answer, once the queued messages before it are out.
    finished: Option<Finished>,
    /// The handler's future has completed (or the call was cancelled).
    done: bool,
    /// The next event is the first: the handler is polled before anything else (most calls
    /// finish on their first poll, and then no waiter is registered on the token or the queue
    /// only to be removed again).
    first: bool,
    _registration: Option<RunningCall>,
    /// The request's span and measurement, ended with the call's answer; boxed (only an
    /// observed call has one), so an unobserved call is no larger than before.
    operation: Option<Box<Operation>>,
    /// Stateless calls: the token is cancelled when the call is dropped (the client went away).
    _cancel_on_drop: Option<DropGuard>,
}

impl std::fmt::Debug for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Call")
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl Call {
    /// A call of `run`, its context's related messages attached to `related`.
    pub(crate) fn new(
        ctx: ContextBuilder,
        related: &Related,
        max_notes: usize,
        token: CancellationToken,
        registration: Option<RunningCall>,
        run: impl FnOnce(Context) -> Run,
    ) -> Self {
        let (ctx, notes, closer) = attach(ctx, related, max_notes);
        let cancel_on_drop = registration.is_none().then(|| token.clone().drop_guard());
        let stream = match related {
            Related::Stream { name, .. } => Some(name.clone()),
            Related::None => None,
        };
        Call {
            run: run(ctx.cancellation(token.clone()).build()),
            notes,
            token,
            stream,
            closer,
            pending: VecDeque::new(),
            finished: None,
            done: false,
            first: true,
            _registration: registration,
            operation: None,
            _cancel_on_drop: cancel_on_drop,
        }
    }

    /// The call as operation `operation`: its handler runs in the operation's span, which
    /// ends with its answer.
    pub(crate) fn observed(mut self, operation: Operation) -> Self {
        if !operation.is_open() {
            return self;
        }
        if !operation.span().is_disabled() {
            let run = std::mem::replace(&mut self.run, Box::pin(std::future::pending()));
            self.run = Box::pin(run.instrument(operation.span().clone()));
        }
        self.operation = Some(Box::new(operation));
        self
    }

    /// The call's next event. Related messages sent before the handler finished come before
    /// its answer; after [`Event::Finished`] or [`Event::Cancelled`] it waits forever.
    pub(crate) async fn next(&mut self) -> Event {
        let event = self.next_event().await;
        if let Some(operation) = self.operation.take() {
            match &event {
                Event::Finished(finished) => operation.finished(Some(finished)),
                Event::Cancelled => operation.finished(None),
                Event::Note(_) | Event::Closed => self.operation = Some(operation),
            }
        }
        event
    }

    async fn next_event(&mut self) -> Event {
        if let Some(note) = self.pending.pop_front() {
            return Event::Note(note);
        }
        if let Some(finished) = self.finished.take() {
            return Event::Finished(finished);
        }
        if self.done {
            return std::future::pending().await;
        }
        let watch_close = self.closer.clone();
        let closed = async {
            match &watch_close {
                Some(closer) => closer.cancelled().await,
                None => std::future::pending().await,
            }
        };
        if std::mem::take(&mut self.first) {
            tokio::select! {
                biased;
                // A cancellation that raced a call finished at once answers it anyway.
                finished = &mut self.run => self.on_finished(finished),
                () = self.token.cancelled() => self.on_cancelled(),
                Some(note) = next_note(&mut self.notes) => Event::Note(note),
                () = closed => Event::Closed,
            }
        } else {
            tokio::select! {
                biased;
                // A cancelled call gets no answer.
                () = self.token.cancelled() => self.on_cancelled(),
                () = closed => Event::Closed,
                Some(note) = next_note(&mut self.notes) => Event::Note(note),
                finished = &mut self.run => self.on_finished(finished),
            }
        }
    }

    /// Runs the call to its end, dropping its related messages: its answer, `None` when it
    /// was cancelled.
    pub(crate) async fn finish(mut self) -> Option<Finished> {
        loop {
            match self.next().await {
                Event::Finished(finished) => return Some(finished),
                Event::Cancelled => return None,
                Event::Note(_) | Event::Closed => {}
            }
        }
    }

    /// The name of the request's own stream (its key in event ids), when it has one.
    pub(crate) fn stream_name(&self) -> Option<Arc<str>> {
        self.stream.clone()
    }

    /// Whether the tool may close the request's stream mid-call (SSE polling, SEP-1699).
    pub(crate) fn is_polling(&self) -> bool {
        self.closer.is_some()
    }

    /// Whether the tool closed its stream (SEP-1699).
    pub(crate) fn is_closed(&self) -> bool {
        self.closer
            .as_ref()
            .is_some_and(CancellationToken::is_cancelled)
    }

    /// Stops watching the stream closer: the call's events go on after the tool closed its
    /// stream (they are logged for a client that resumes).
    pub(crate) fn detach(&mut self) {
        self.closer = None;
    }

    fn on_finished(&mut self, finished: Finished) -> Event {
        self.done = true;
        if let Some(notes) = &mut self.notes {
            while let Some(note) = notes.try_recv() {
                self.pending.push_back(note);
            }
        }
        match self.pending.pop_front() {
            Some(note) => {
                self.finished = Some(finished);
                Event::Note(note)
            }
            None => Event::Finished(finished),
        }
    }

    fn on_cancelled(&mut self) -> Event {
        self.done = true;
        self.pending.clear();
        Event::Cancelled
    }
}

/// The context's related messages go where `related` says: a queue the call hands out, or
/// (no stream of its own) the context's fallback, the session's standalone stream.
fn attach(
    mut ctx: ContextBuilder,
    related: &Related,
    max_notes: usize,
) -> (
    ContextBuilder,
    Option<NoteReceiver>,
    Option<CancellationToken>,
) {
    let Related::Stream { name, polling } = related else {
        return (ctx, None, None);
    };
    let (tx, rx) = notes::queue(max_notes);
    ctx = ctx.notifier(Notifier::for_stream(name.clone(), move |message: Value| {
        if tx.send(message) {
            Delivery::Sent
        } else {
            Delivery::Disconnected
        }
    }));
    let closer = polling.then(CancellationToken::new);
    if let Some(closer) = &closer {
        ctx = ctx.stream_closer(closer.clone());
    }
    (ctx, Some(rx), closer)
}

/// The call's next related message; never, when it has no queue.
async fn next_note(notes: &mut Option<NoteReceiver>) -> Option<Value> {
    match notes {
        Some(notes) => Some(notes.recv().await),
        None => std::future::pending().await,
    }
}

/// A session's `tools/call`: registered on the session, its context the session's, its
/// assigns written back to the record when it changed them.
pub(super) fn in_session(
    core: &Core,
    record: Arc<SessionRecord>,
    handle: SessionHandle,
    id: Value,
    params: Option<Value>,
    (related, caller): (Related, super::Caller<'_>),
) -> Result<Call, Refusal> {
    let max = core.server().limits().max_calls_per_session;
    let Some((registration, token)) = handle.start_call(&id, max) else {
        return Err(Refusal::too_many_calls(id, max));
    };
    let assigns = core.sessions().live().assigns(&record);
    let origin = Origin {
        transport: core.settings().transport,
        client: caller.client,
    };
    let mut ctx = session_context(&record, &handle, &id, params.as_ref(), assigns.clone())
        .origin(origin)
        .user_state(core.server().features().user_state.as_ref());
    if let Some(identity) = caller.identity {
        ctx = ctx.identity(identity.clone());
    }
    let max_notes = core.server().limits().max_queued_notes;
    let core = core.clone();
    Ok(Call::new(
        ctx,
        &related,
        max_notes,
        token,
        Some(registration),
        move |ctx| {
            Box::pin(async move {
                let server = core.server();
                // The table's handler of `tools/call`, called directly: the call's future
                // without the one dispatch's around it (`Server::serve_request`).
                let result = server.call_request(params, &ctx, None).await;
                ctx.complete();
                write_back(&core, &record, &assigns).await;
                Ok(match result {
                    Ok(Answered::Call(result)) => Answer::Call {
                        id,
                        result,
                        version: record.version,
                    },
                    Ok(Answered::Value(result)) => Answer::Message(success(id, result)),
                    Err(error) => Answer::Message(failure(id, &error)),
                })
            })
        },
    ))
}

/// The context of a `tools/call` in a session.
fn session_context(
    record: &SessionRecord,
    handle: &SessionHandle,
    id: &Value,
    params: Option<&Value>,
    assigns: SharedAssigns,
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
        .session(handle.clone());
    if let Some(progress) = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get("progressToken"))
    {
        ctx = ctx.progress_token(progress.clone());
    }
    ctx
}

/// Writes the assigns back, so the record stays the source of truth for other nodes. When the
/// assigns still equal what the request loaded with its record, the call changed nothing and
/// the store is not touched (the common case, and no store round trip).
async fn write_back(core: &Core, loaded: &SessionRecord, assigns: &SharedAssigns) {
    let snapshot = assigns
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    if loaded.assigns == snapshot {
        return;
    }
    let ttl = core.sessions().ttl();
    if let Ok(Some(fresh)) = core.sessions().store().load(&loaded.id, ttl).await
        && fresh.assigns != snapshot
    {
        let mut fresh = Arc::unwrap_or_clone(fresh);
        fresh.assigns = snapshot;
        if let Err(err) = core.sessions().store().save(fresh).await {
            tracing::warn!(%err, "could not save the session's assigns");
        }
    }
}
