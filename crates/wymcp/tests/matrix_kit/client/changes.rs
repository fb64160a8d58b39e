//! Changes no request asked for, heard where each path hears them: in the session era on the
//! session's own stream (its GET stream over HTTP, stdout on stdio), at 2026-07-28 on a
//! `subscriptions/listen` stream (its POST's SSE over HTTP, stdout on stdio), acknowledged
//! first and every message tagged with the stream's id.

use serde_json::{Value, json};

use super::{Client, Wire};
use crate::http_harness::Sse;
use crate::matrix_kit::{era, schema};

/// The key of a listen stream's id in the `_meta` of each message it carries.
pub(crate) const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// An open stream of changes.
pub(crate) struct Watch {
    /// The `subscriptions/listen` request's id (2026-07-28).
    listen: Option<Value>,
    /// The acknowledgement that opened a listen stream, its id already checked.
    pub(crate) acknowledged: Option<Value>,
    /// HTTP: the stream's own response; stdio: `None`, the changes come on stdout.
    sse: Option<Sse>,
}

impl Client {
    /// Opens a stream of tool-list changes: the GET stream (HTTP session), a
    /// `subscriptions/listen` asking for `toolsListChanged` (2026-07-28), or nothing to open
    /// (stdio session: stdout is the session's stream).
    pub(crate) async fn watch_tools(&mut self) -> Watch {
        if !self.path.stateless() {
            let sse = match &self.wire {
                Wire::Http(http) => Some(http.open_get().await),
                Wire::Stdio(_) => None,
            };
            return Watch {
                listen: None,
                acknowledged: None,
                sse,
            };
        }
        let id = self.take_id();
        let params = json!({"notifications": {"toolsListChanged": true}});
        let body = era::request(
            self.path,
            id.clone(),
            "subscriptions/listen",
            params,
            &self.extras(None),
        );
        let (status, _, _) = self.send(&body).await;
        assert!(
            status.is_none_or(|s| s == 200),
            "{:?}: listen {status:?}",
            self.path
        );
        let sse = match &mut self.wire {
            Wire::Http(http) => Some(http.take_stream()),
            Wire::Stdio(_) => None,
        };
        let mut watch = Watch {
            listen: Some(id),
            acknowledged: None,
            sse,
        };
        let ack = self.next_change(&mut watch).await;
        watch.acknowledged = Some(ack);
        watch
    }

    /// The next message `watch` carries, checked against its era's schema; at 2026-07-28 its
    /// `_meta` tag, the stream's id, checked and removed (with `_meta` when nothing else is
    /// left there).
    pub(crate) async fn next_change(&mut self, watch: &mut Watch) -> Value {
        let message = match &mut watch.sse {
            Some(sse) => sse.message().await,
            None => self.next().await,
        };
        let Some(mut message) = message else {
            panic!("{:?}: the change stream ended", self.path);
        };
        schema::check_message(self.path, &message);
        if let Some(id) = &watch.listen {
            let meta = &mut message["params"]["_meta"];
            let tag = meta.as_object_mut().and_then(|m| m.remove(SUBSCRIPTION_ID));
            assert_eq!(tag.as_ref(), Some(id), "{:?}: the stream's tag", self.path);
            let emptied = meta.as_object().is_some_and(serde_json::Map::is_empty);
            if let (true, Some(params)) = (emptied, message["params"].as_object_mut()) {
                params.remove("_meta");
            }
        }
        message
    }

    /// Closes `watch`: a listen stream on stdio is cancelled (`notifications/cancelled`, which
    /// answers nothing); an HTTP stream is hung up.
    pub(crate) async fn unwatch(&mut self, watch: Watch) {
        if let (Some(id), Wire::Stdio(_)) = (&watch.listen, &self.wire) {
            let params = json!({"requestId": id});
            let status = self.notify("notifications/cancelled", params).await;
            assert_eq!(status, None);
        }
        drop(watch.sse);
    }

    /// Tells every client the tools changed (`Server::notify_tools_list_changed`); answers
    /// whether a transport took the notification.
    pub(crate) fn change_tools(&self) -> bool {
        self.server.notify_tools_list_changed()
    }
}
