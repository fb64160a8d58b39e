//! Cancelling a running call, the way each path can: `notifications/cancelled` (the session
//! era, and stdio at 2026-07-28) or hanging up (HTTP at 2026-07-28).

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{CANCEL_WAIT, Client, Path, Wire};
use crate::matrix_kit::era;
use crate::matrix_kit::schema;

/// A `slow` call running, its first progress notification read.
pub(crate) struct Started {
    /// The call's request id.
    pub(crate) id: Value,
    /// The first message its answer carried.
    pub(crate) first: Value,
}

/// What cancelling a [`Started`] call did.
#[derive(Debug)]
pub(crate) struct Cancellation {
    /// The HTTP status of the `notifications/cancelled` POST.
    pub(crate) status: Option<u16>,
    /// Whether the tool's token was cancelled once the notification was acknowledged
    /// (HTTP: its POST answered; stdio: the next request answered).
    pub(crate) by_notification: bool,
    /// What the call's answer still carried (HTTP session: its SSE stream, read to its end;
    /// stdio: the messages before the next request's answer; HTTP stateless: nothing, the
    /// client hangs up instead).
    pub(crate) after: Vec<Value>,
    /// Whether the tool's token was cancelled in the end.
    pub(crate) tool_saw_it: bool,
}

impl Client {
    /// Starts a `slow` call with a progress token and reads its first message.
    pub(crate) async fn start_slow(&mut self) -> Started {
        let id = self.take_id();
        let extras = self.extras(Some(json!("slow-1")));
        let params = json!({"name": "slow", "arguments": {}});
        let body = era::request(self.path, id.clone(), "tools/call", params, &extras);
        let (status, _, _) = self.send(&body).await;
        assert!(
            status.is_none_or(|s| s == 200),
            "{:?}: {status:?}",
            self.path
        );
        let first = self
            .next()
            .await
            .unwrap_or_else(|| panic!("{:?}: slow said nothing", self.path));
        schema::check_message(self.path, &first);
        Started { id, first }
    }

    /// Cancels `started` with `notifications/cancelled`, then (HTTP session) reads what its
    /// stream still carries, (stdio) sends `probe` and reads until its answer, or (HTTP
    /// stateless) hangs up; then waits for the tool to see its cancellation.
    pub(crate) async fn cancel(&mut self, started: &Started, probe: &str) -> Cancellation {
        let token = self.slow_token().await;
        let params = json!({"requestId": started.id, "reason": "the user gave up"});
        let status = self.notify("notifications/cancelled", params).await;
        let mut after = Vec::new();
        let by_notification;
        match self.path {
            Path::HttpSession => {
                by_notification = token.is_cancelled();
                while let Some(message) = self.next().await {
                    after.push(message);
                }
            }
            Path::HttpStateless => {
                by_notification = token.is_cancelled();
                if let Wire::Http(http) = &mut self.wire {
                    http.hang_up();
                }
            }
            Path::StdioSession | Path::StdioStateless => {
                let id = self.take_id();
                let body =
                    era::request(self.path, id.clone(), probe, json!({}), &self.extras(None));
                self.send(&body).await;
                loop {
                    let message = self.next().await.expect("stdout ended");
                    if message["id"] == id && message.get("method").is_none() {
                        break;
                    }
                    after.push(message);
                }
                by_notification = token.is_cancelled();
            }
        }
        let tool_saw_it = tokio::time::timeout(CANCEL_WAIT, token.cancelled())
            .await
            .is_ok();
        Cancellation {
            status,
            by_notification,
            after,
            tool_saw_it,
        }
    }

    /// The `slow` call's cancellation token (it runs by now: its progress was read).
    async fn slow_token(&mut self) -> CancellationToken {
        let seen = tokio::time::timeout(CANCEL_WAIT, self.slow.wait_for(Option::is_some))
            .await
            .expect("the slow tool runs")
            .expect("the server is alive");
        seen.clone().expect("a token")
    }
}
