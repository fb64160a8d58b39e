//! [`State`]: what every request of one Streamable HTTP service shares (the serving core, the
//! settings, the event log, the open streams), and the session's standalone stream it gives
//! the core. The routes read it; the service makes it.

use std::sync::{Arc, Weak};

use serde_json::Value;

use super::auth::Authenticate;
use super::cluster::Elsewhere;
use super::config::HttpConfig;
use super::events::EventLog;
use super::streams::{GET_STREAM, Listeners, StreamEvent, Streams};
use crate::serve::{Core, EndReason};
use crate::session::StoreError;
use crate::{Delivery, Notifier};

/// Shared by every request of one service.
pub(crate) struct State {
    /// The serving core: sessions, both eras' method tables, the call runner.
    pub(crate) core: Core,
    pub(crate) config: HttpConfig,
    pub(crate) events: Arc<dyn EventLog>,
    pub(crate) auth: Option<Arc<dyn Authenticate>>,
    pub(crate) auth_module: &'static str,
    /// The open SSE streams of sessions.
    pub(crate) streams: Arc<Streams>,
    /// The open `subscriptions/listen` streams (2026-07-28).
    pub(crate) listeners: Listeners,
    /// How an event reaches a stream another node holds (`None`: no bus, no other node).
    pub(crate) elsewhere: Option<Elsewhere>,
}

impl State {
    /// Ends a session everywhere: record, live things, streams, events; then the end hook.
    pub(crate) async fn end_session(&self, id: &str) -> Result<bool, StoreError> {
        let found = self.core.end_session(id).await?;
        self.streams.end_session(id);
        self.events.remove_session(id).await?;
        if found {
            self.core.ended(id, EndReason::Deleted).await;
        }
        Ok(found)
    }
}

/// A session's standalone stream is its GET stream: a message for it is delivered to the
/// attached stream, which logs it as it writes it; with other nodes, a GET stream not held
/// here gets it logged and sent on the bus.
pub(super) fn get_stream(
    streams: Weak<Streams>,
    elsewhere: Option<Elsewhere>,
) -> crate::serve::Standalone {
    Box::new(move |session: &str| {
        let (streams, session) = (streams.clone(), session.to_owned());
        let elsewhere = elsewhere.clone();
        Notifier::with_delivery(GET_STREAM, move |message: Value| {
            let Some(streams) = streams.upgrade() else {
                return Delivery::NoStream;
            };
            let data = message.to_string();
            match (
                streams.deliver(&session, StreamEvent { id: None, data }),
                &elsewhere,
            ) {
                (Delivery::NoStream, Some(elsewhere)) => {
                    elsewhere.log_and_send(&session, GET_STREAM, message.to_string());
                    Delivery::Sent
                }
                (delivery, _) => delivery,
            }
        })
    })
}
