//! How a task's status changes: found (or not) for a caller, cancelled, parked on input and
//! resumed, ended, and failed when the node running it stopped. The transitions of one node's
//! tasks are serialized, so a cancel racing an end or an answer leaves one outcome.

use super::host::TaskHost;
use std::collections::HashMap;
use std::sync::MutexGuard;

use serde_json::{Map, Value, json};

use super::clock::now_ms;
use super::input::TaskInput;
use super::{Running, TaskRecord, TaskStatus, Tasks};
use crate::mrtr::InputKind;
use crate::protocol::{ProtocolVersion, RpcError};
use crate::tool::CallToolResult;

/// A running task whose heartbeat is older than this many heartbeats, on a node that does not
/// run it, was left by a node that stopped.
const MISSED_HEARTBEATS: u32 = 3;

pub(super) fn internal(message: impl Into<String>) -> RpcError {
    RpcError::new(RpcError::INTERNAL_ERROR, message, None)
}

pub(super) fn store_failed(err: super::TaskStoreError) -> RpcError {
    internal(err.to_string())
}

/// The answer for a task `id` this caller may not see: the same whether it never existed,
/// expired or is another principal's, so ids cannot be probed.
pub(super) fn not_found(id: &str) -> RpcError {
    RpcError::invalid_params_reason(format!(
        "Unknown task {}: no task with this id exists for this caller",
        wymcp_core::bound::echo(id)
    ))
}

impl Tasks {
    pub(super) fn lock_running(&self) -> MutexGuard<'_, HashMap<String, Running>> {
        self.running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Counts `running` among this node's tasks, unless that would pass the node's cap or its
    /// principal's share: then the refusal names the limit and its setting.
    pub(super) fn admit(&self, running: Running) -> Result<(), RpcError> {
        let id = running.input.id().to_owned();
        let mut all = self.lock_running();
        if all.len() >= self.max_running {
            return Err(internal(format!(
                "Too many tasks running: at most {} run at once (ServerBuilder::task_max_running)",
                self.max_running
            )));
        }
        let mine = all
            .values()
            .filter(|r| r.principal == running.principal)
            .count();
        if mine >= self.max_running_per_principal {
            return Err(internal(format!(
                "Too many tasks running for this caller: at most {} at once \
                 (ServerBuilder::task_max_running_per_principal); wait for one to end",
                self.max_running_per_principal
            )));
        }
        all.insert(id, running);
        Ok(())
    }

    /// The task `id` as `principal` may see it: another principal's, an expired or an unknown
    /// task are all "not found" (`-32602`), so ids cannot be probed. A task left running by a
    /// node that stopped is run again first when its tool says so and `resume` gives the
    /// server to run it on ([`Tasks::orphaned`]), failed otherwise.
    pub(crate) async fn find(
        &self,
        id: &str,
        principal: Option<&str>,
        resume: Option<&dyn TaskHost>,
    ) -> Result<TaskRecord, RpcError> {
        let not_found = || not_found(id);
        let mut task = self
            .store
            .get(id)
            .await
            .map_err(store_failed)?
            .ok_or_else(not_found)?;
        let now = now_ms();
        if task.is_expired(now) {
            let _ = self.store.remove(id).await;
            return Err(not_found());
        }
        if task.principal.as_deref() != principal {
            return Err(not_found());
        }
        if self.is_orphan(&task, now) {
            task = self.orphaned(task, resume).await?;
        }
        Ok(task)
    }

    /// The oldest heartbeat, at `now` (ms), of a task still counted as running: one whose
    /// node renews it (older is a task whose node stopped).
    pub(super) fn fresh_since(&self, now: u64) -> u64 {
        let stale =
            u64::try_from((self.heartbeat * MISSED_HEARTBEATS).as_millis()).unwrap_or(u64::MAX);
        now.saturating_sub(stale)
    }

    /// Whether `task` is still running on a node that stopped: not here, and its heartbeat
    /// missed [`MISSED_HEARTBEATS`] renewals.
    fn is_orphan(&self, task: &TaskRecord, now: u64) -> bool {
        !task.status.is_terminal()
            && !self.lock_running().contains_key(&task.id)
            && task.heartbeat_ms < self.fresh_since(now)
    }

    /// Cancels the task: a running one ends as `cancelled` and its call is aborted; a task
    /// already ended is left as it is (the same acknowledgement).
    pub(super) async fn cancel(&self, id: &str, principal: Option<&str>) -> Result<(), RpcError> {
        let _guard = self.transitions.lock().await;
        let mut task = self.find(id, principal, None).await?;
        if task.status.is_terminal() {
            return Ok(());
        }
        task.status = TaskStatus::Cancelled;
        task.input_requests = None;
        task.last_updated_at_ms = now_ms();
        self.store.put(task).await.map_err(store_failed)?;
        self.watch.changed(id);
        if let Some(running) = self.lock_running().remove(id) {
            running.token.cancel();
        }
        Ok(())
    }

    /// `tasks/update`: hands the answers to the requests the task waits on, and shows what is
    /// still outstanding before acknowledging (so the next `tasks/get` sees it). For a task
    /// another node runs, the answers that fit an outstanding request are moved into the record
    /// (the running node delivers them at its next heartbeat). Answers for a task that ended
    /// are ignored.
    pub(super) async fn update(
        &self,
        (id, principal): (&str, Option<&str>),
        responses: &Map<String, Value>,
        server: &dyn TaskHost,
    ) -> Result<(), RpcError> {
        let _guard = self.transitions.lock().await;
        let mut task = self.find(id, principal, Some(server)).await?;
        if task.status.is_terminal() {
            return Ok(());
        }
        let input = self.lock_running().get(id).map(|r| r.input.clone());
        if let Some(input) = input {
            input.answer(responses);
            return self.record_input(task, &input).await;
        }
        if !record_answers(&mut task, responses) {
            return Ok(());
        }
        task.last_updated_at_ms = now_ms();
        self.store.put(task).await.map_err(store_failed)?;
        self.watch.changed(id);
        Ok(())
    }

    /// Shows the task's outstanding requests (after its code asked, or a request timed out).
    pub(crate) async fn show_input(&self, id: &str) {
        let _guard = self.transitions.lock().await;
        let input = self.lock_running().get(id).map(|r| r.input.clone());
        let Some(input) = input else {
            return;
        };
        let task = match self.store.get(id).await {
            Ok(Some(task)) if !task.status.is_terminal() => task,
            _ => return,
        };
        if let Err(err) = self.record_input(task, &input).await {
            tracing::warn!(error = %err.message(), "could not record a task's input requests");
        }
    }

    /// Delivers the answers other nodes recorded on `task`, then records what `input` still
    /// waits on: `input_required` while anything, `working` otherwise; renews the heartbeat.
    async fn record_input(&self, mut task: TaskRecord, input: &TaskInput) -> Result<(), RpcError> {
        if let Some(answers) = task.pending_answers.take() {
            input.answer(&answers);
        }
        let outstanding = input.outstanding();
        let status = match outstanding {
            Some(_) => TaskStatus::InputRequired,
            None => TaskStatus::Working,
        };
        let changed = status != task.status || outstanding != task.input_requests;
        task.status = status;
        task.input_requests = outstanding;
        let now = now_ms();
        task.last_updated_at_ms = now;
        task.heartbeat_ms = now;
        self.store.put(task).await.map_err(store_failed)?;
        if changed {
            self.watch.changed(input.id());
        }
        Ok(())
    }

    /// Renews the heartbeat of a task this node runs, and delivers the answers another node
    /// recorded for it; `false` once the task ended (cancelled, perhaps on another node).
    pub(super) async fn beat(&self, id: &str) -> bool {
        let _guard = self.transitions.lock().await;
        let mut task = match self.store.get(id).await {
            Ok(Some(task)) if !task.status.is_terminal() => task,
            Ok(_) => return false,
            Err(err) => {
                tracing::warn!(%err, "could not renew a task's heartbeat");
                return true;
            }
        };
        let input = self.lock_running().get(id).map(|r| r.input.clone());
        let renewed = match input {
            Some(input) => self.record_input(task, &input).await,
            None => {
                task.heartbeat_ms = now_ms();
                self.store.put(task).await.map_err(store_failed)
            }
        };
        if let Err(err) = renewed {
            tracing::warn!(error = %err.message(), "could not renew a task's heartbeat");
        }
        true
    }

    /// Records how the task's call ended, unless the task was cancelled meanwhile: a result
    /// (an `isError` one included) completes it; a fault (a panic, a protocol error) fails it.
    ///
    /// A store refusing the record (Redis full or unreachable) does not lose the result: the
    /// write is tried again, backing off up to 2 s between tries, for [`END_RECORD_RETRY`]
    /// (the task counted running on this node meanwhile, so this node does not take it for
    /// one whose node stopped). If it is still refused, the task is recorded failed, naming
    /// why, when the store takes that smaller record; and the failure is logged either way.
    pub(super) async fn finish(
        &self,
        id: &str,
        version: ProtocolVersion,
        outcome: Result<CallToolResult, RpcError>,
    ) {
        let end = match outcome {
            // A result that is an error without a classification is a fault (a panic or a
            // timeout inside dispatch), not the tool's own answer.
            Ok(result) if result.is_error() && result.error_kind().is_none() => {
                let data = result.into_value(version);
                End::Failed(json!({"code": RpcError::INTERNAL_ERROR,
                                   "message": "The tool faulted", "data": data}))
            }
            Ok(result) => End::Completed(result.into_value(version)),
            Err(error) => End::Failed(json!({"code": error.code(), "message": error.message(),
                                             "data": error.data()})),
        };
        let deadline = tokio::time::Instant::now() + END_RECORD_RETRY;
        let mut pause = std::time::Duration::from_millis(50);
        let refused = loop {
            let err = match self.record_end(id, &end).await {
                Ok(()) => return,
                Err(err) => err,
            };
            if tokio::time::Instant::now() + pause > deadline {
                break err;
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(std::time::Duration::from_secs(2));
        };
        tracing::error!(task = %id, %refused, "the task store refused a task's end for {END_RECORD_RETRY:?}: its result is lost");
        let failure = End::Failed(json!({
            "code": RpcError::INTERNAL_ERROR,
            "message": format!("The task ended, but the task store refused its result ({refused}); call the tool again"),
        }));
        if let Err(err) = self.record_end(id, &failure).await {
            tracing::error!(task = %id, %err, "could not record that a task's result is lost");
        }
    }

    /// Writes `end` into the task `id`, unless it is gone or ended already.
    async fn record_end(&self, id: &str, end: &End) -> Result<(), super::TaskStoreError> {
        let _guard = self.transitions.lock().await;
        let mut task = match self.store.get(id).await? {
            Some(task) if !task.status.is_terminal() => task,
            _ => return Ok(()),
        };
        match end {
            End::Completed(result) => {
                task.status = TaskStatus::Completed;
                task.result = Some(result.clone());
            }
            End::Failed(error) => {
                task.status = TaskStatus::Failed;
                task.error = Some(error.clone());
            }
        }
        task.input_requests = None;
        task.pending_answers = None;
        task.last_updated_at_ms = now_ms();
        self.store.put(task).await?;
        self.watch.changed(id);
        Ok(())
    }
}

/// How long a node tries to record a task's end while the store refuses it (Redis full or
/// unreachable), before recording the task failed.
const END_RECORD_RETRY: std::time::Duration = std::time::Duration::from_secs(30);

/// How a task's call ended: its result, or the JSON-RPC error it failed with.
enum End {
    Completed(Value),
    Failed(Value),
}

/// Moves the `responses` that answer an outstanding request of `task` (its key, its kind's
/// shape) from its `inputRequests` into its pending answers, so every node shows at once what
/// is still asked; `false` when none did.
fn record_answers(task: &mut TaskRecord, responses: &Map<String, Value>) -> bool {
    let Some(outstanding) = task.input_requests.as_mut() else {
        return false;
    };
    let mut taken = Map::new();
    for (key, response) in responses {
        let kind = outstanding
            .get(key)
            .and_then(|request| request["method"].as_str())
            .and_then(InputKind::of_method);
        if kind.is_some_and(|kind| kind.accepts(response)) {
            outstanding.remove(key);
            taken.insert(key.clone(), response.clone());
        }
    }
    if taken.is_empty() {
        return false;
    }
    if outstanding.is_empty() {
        task.input_requests = None;
        task.status = TaskStatus::Working;
    }
    task.pending_answers
        .get_or_insert_with(Map::new)
        .extend(taken);
    true
}
