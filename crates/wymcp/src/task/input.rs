//! A task's requests to the client. Inside a task, [`Context::elicit`](crate::Context::elicit),
//! [`sample`](crate::Context::sample) and [`list_roots`](crate::Context::list_roots) park the
//! task as `input_required`: the request is shown under `inputRequests` of `tasks/get`, keyed
//! by an id unique over the task's lifetime, and the tool's code waits, live, until
//! `tasks/update` brings the answer (or the request's timeout passes). Requests awaited together
//! are shown together and may be answered one at a time.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::oneshot;

use futures_util::future::BoxFuture;

use super::host::WeakHost;
use crate::context::TaskLink;
use crate::mrtr::InputKind;
use crate::session::ClientRequestError;

/// Where a call stands with the tasks extension, shared by its [`Context`](crate::Context)
/// and the serving core: whether its code asked to hand off, and its task once it is one.
#[derive(Debug, Default)]
pub(crate) struct TaskSlot {
    hand_off: AtomicBool,
    input: OnceLock<Arc<TaskInput>>,
}

impl TaskSlot {
    /// A slot for a call that is a task from the start.
    pub(crate) fn running(input: Arc<TaskInput>) -> Self {
        let slot = TaskSlot::default();
        let _ = slot.input.set(input);
        slot
    }

    /// Makes the call a task (after its code asked to hand off).
    pub(crate) fn become_task(&self, input: Arc<TaskInput>) {
        let _ = self.input.set(input);
    }

    /// Whether the call's code waits in [`hand_off`](Self::hand_off).
    pub(crate) fn hand_off_requested(&self) -> bool {
        self.hand_off.load(Ordering::Acquire)
    }

    /// Asks to continue as a task: pending until the serving core made the task (the driver
    /// sees the request once this poll returns and moves the call into the task), then `true`.
    pub(crate) async fn hand_off(&self) -> bool {
        if self.input.get().is_some() {
            return true;
        }
        self.hand_off.store(true, Ordering::Release);
        std::future::poll_fn(|_| {
            if self.input.get().is_some() {
                std::task::Poll::Ready(true)
            } else {
                // The driver moves the call into the task right after this poll and polls it
                // again there: no waker is needed.
                std::task::Poll::Pending
            }
        })
        .await
    }
}

impl TaskLink for TaskSlot {
    fn is_task(&self) -> bool {
        self.input.get().is_some()
    }

    fn hand_off(&self) -> BoxFuture<'_, bool> {
        Box::pin(TaskSlot::hand_off(self))
    }

    fn ask(
        &self,
        kind: InputKind,
        key: Option<String>,
        params: Value,
        timeout: Duration,
    ) -> BoxFuture<'_, Result<Value, ClientRequestError>> {
        Box::pin(async move {
            match self.input.get() {
                Some(input) => input.ask(kind, key, params, timeout).await,
                // Asked only once the call is a task (`Context::task`).
                None => Err(ClientRequestError::NotSupported),
            }
        })
    }
}

/// The input requests of one running task.
pub(crate) struct TaskInput {
    id: String,
    /// Not kept alive by this: the server holds this input ([`Tasks::running`](super::Tasks)).
    server: WeakHost,
    asking: Mutex<Asking>,
}

impl std::fmt::Debug for TaskInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskInput")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct Asking {
    /// The requests waiting for an answer, by key.
    pending: BTreeMap<String, Pending>,
    /// Every key issued over the task's lifetime (never issued twice).
    issued: HashSet<String>,
}

struct Pending {
    kind: InputKind,
    /// `{"method": …, "params": …}`, as `inputRequests` shows it.
    request: Value,
    answer: oneshot::Sender<Value>,
}

impl TaskInput {
    pub(crate) fn new(id: String, server: WeakHost) -> Self {
        TaskInput {
            id,
            server,
            asking: Mutex::new(Asking::default()),
        }
    }

    /// The task's id.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    fn lock(&self) -> MutexGuard<'_, Asking> {
        self.asking.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Asks the client (through `tasks/get`) and waits for the answer `tasks/update` brings.
    pub(crate) async fn ask(
        &self,
        kind: InputKind,
        key: Option<String>,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, ClientRequestError> {
        let (key, answer) = {
            let mut asking = self.lock();
            let key = asking.mint(kind, key);
            let (tx, rx) = oneshot::channel();
            let request = json!({"method": kind.method(), "params": params});
            let pending = Pending {
                kind,
                request,
                answer: tx,
            };
            asking.pending.insert(key.clone(), pending);
            (key, rx)
        };
        self.show().await;
        match tokio::time::timeout(timeout, answer).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(_)) => Err(ClientRequestError::Disconnected),
            Err(_) => {
                self.lock().pending.remove(&key);
                self.show().await;
                Err(ClientRequestError::Timeout)
            }
        }
    }

    /// Records what the task waits on, where `tasks/get` reads it (nothing once the server
    /// is gone).
    async fn show(&self) {
        if let Some(server) = self.server.upgrade() {
            server.tasks().show_input(&self.id).await;
        }
    }

    /// The requests still waiting, as `inputRequests` (`None` when there are none).
    pub(crate) fn outstanding(&self) -> Option<Map<String, Value>> {
        let asking = self.lock();
        (!asking.pending.is_empty()).then(|| {
            asking
                .pending
                .iter()
                .map(|(key, p)| (key.clone(), p.request.clone()))
                .collect()
        })
    }

    /// Hands each answer to the request of its key, when that request waits and the answer
    /// has its kind's shape; other keys (never issued, answered already) and misshapen
    /// answers are ignored, so the request stays outstanding.
    pub(crate) fn answer(&self, responses: &Map<String, Value>) {
        let mut asking = self.lock();
        for (key, response) in responses {
            let fits = asking
                .pending
                .get(key)
                .is_some_and(|p| p.kind.accepts(response));
            if !fits {
                continue;
            }
            if let Some(pending) = asking.pending.remove(key) {
                let _ = pending.answer.send(response.clone());
            }
        }
    }
}

impl Asking {
    /// The request's key: the author's when not issued yet, else the first free `<name>-<n>`.
    fn mint(&mut self, kind: InputKind, key: Option<String>) -> String {
        if let Some(key) = &key
            && self.issued.insert(key.clone())
        {
            return key.clone();
        }
        let base = key.unwrap_or_else(|| kind.prefix().to_owned());
        let key = (1..)
            .map(|n| format!("{base}-{n}"))
            .find(|candidate| !self.issued.contains(candidate))
            .unwrap_or(base);
        self.issued.insert(key.clone());
        key
    }
}
