//! A task whose node stopped before it ended: taken over and run again by the node that finds
//! it, when its tool says its call is safe to repeat ([`TaskResume::Rerun`]); failed, naming
//! why, otherwise. Of several nodes finding it at once, the store's compare-and-set lets one
//! take it over; the others answer what that one recorded.

use std::sync::Arc;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::clock::now_ms;
use super::host::TaskHost;
use super::input::{TaskInput, TaskSlot};
use super::transitions::{not_found, store_failed};
use super::{ResumableCall, Running, TaskRecord, TaskResume, TaskStatus, Tasks};
use crate::Context;
use crate::protocol::{ProtocolVersion, RpcError};

impl Tasks {
    /// What becomes of `task`, left running by a node that stopped: run again here when its
    /// tool is rerun and `server` is given (the requests that read a task give it), failed
    /// otherwise. No lock taken: callers may hold the transitions lock already.
    pub(super) async fn orphaned(
        &self,
        task: TaskRecord,
        server: Option<&dyn TaskHost>,
    ) -> Result<TaskRecord, RpcError> {
        let call = task.call.clone();
        let (server, call) = match (server, call) {
            (Some(server), Some(call)) if self.resume_of(&task.tool) == TaskResume::Rerun => {
                (server, call)
            }
            _ => return self.fail_orphan(task).await,
        };
        let running = Running {
            token: CancellationToken::new(),
            input: Arc::new(TaskInput::new(task.id.clone(), server.downgrade())),
            principal: task.principal.clone(),
        };
        // At its running caps this node leaves the task for a later read (here or elsewhere).
        if self.admit(running.clone_handle()).is_err() {
            return Ok(task);
        }
        let (node, beat) = (task.node.clone(), task.heartbeat_ms);
        let mut taken = task;
        let now = now_ms();
        taken.status = TaskStatus::Working;
        taken.input_requests = None;
        taken.pending_answers = None;
        taken.node = Some(self.node.clone());
        taken.heartbeat_ms = now;
        taken.last_updated_at_ms = now;
        // The principal's cap counts every node's tasks: while it runs its share elsewhere, the
        // task waits, as at this node's own caps.
        let (max, fresh_since) = (self.max_running_per_principal, self.fresh_since(now));
        let won = self
            .store
            .replace_if_admitted(taken.clone(), (node.as_deref(), beat), max, fresh_since)
            .await;
        if !matches!(won, Ok(true)) {
            self.lock_running().remove(&taken.id);
            let kept = self.store.get(&taken.id).await.map_err(store_failed)?;
            return match (won, kept) {
                (Err(err), _) => Err(store_failed(err)),
                // Another node took it over (or it ended) first: what it recorded.
                (Ok(_), Some(kept)) => Ok(kept),
                (Ok(_), None) => Err(not_found(&taken.id)),
            };
        }
        tracing::info!(task = %taken.id, tool = %taken.tool, "task left by a stopped node: run again here");
        rerun(server, &taken, call, running);
        self.watch.changed(&taken.id);
        Ok(taken)
    }

    /// Fails a task its node left.
    pub(super) async fn fail_orphan(&self, mut task: TaskRecord) -> Result<TaskRecord, RpcError> {
        task.status = TaskStatus::Failed;
        task.input_requests = None;
        task.error = Some(json!({
            "code": RpcError::INTERNAL_ERROR,
            "message": "The node running this task stopped, or could not record its end, before the task \
                        ended; call the tool again",
        }));
        task.last_updated_at_ms = now_ms();
        self.store.put(task.clone()).await.map_err(store_failed)?;
        self.watch.changed(&task.id);
        Ok(task)
    }
}

impl Running {
    /// The same running call (its token and input), for the map of this node's calls.
    fn clone_handle(&self) -> Running {
        Running {
            token: self.token.clone(),
            input: self.input.clone(),
            principal: self.principal.clone(),
        }
    }
}

/// Runs `task`'s call again on this node, as its caller made it: the same params, the same
/// capabilities and identity, in a context of the tasks extension's era.
fn rerun(server: &dyn TaskHost, task: &TaskRecord, call: ResumableCall, running: Running) {
    let version = ProtocolVersion::V2026_07_28;
    let ctx = Context::builder()
        .protocol_version(version)
        .client_capabilities(call.client_capabilities)
        .user_state(server.user_state())
        .kept_identity(call.identity.as_ref());
    let slot = Arc::new(TaskSlot::running(running.input.clone()));
    let task_ctx = ctx.build().for_task(running.token.clone(), slot);
    let future = server.call(Some(call.params), task_ctx);
    super::serve::spawn(
        server.to_host(),
        task.id.clone(),
        future,
        version,
        running.token,
    );
}
