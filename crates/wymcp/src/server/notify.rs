//! The notifications a [`Server`] emits outside any request, to the sessions and listen
//! streams of this node and, when its transport has a [`Bus`], of every other node serving
//! the same sessions.

use serde_json::json;
use tokio::sync::broadcast;

use crate::resource::{Change, ServerNotification, SubscriptionError};
use crate::server::Server;
use crate::session::Notice;

impl Server {
    /// Hands `notice` to the deployments relaying it to the other nodes (those with a bus).
    fn relay(&self, notice: Notice) {
        self.features().relay.publish(notice);
    }

    /// The notices this server publishes for the other nodes, from now on (a deployment with
    /// a bus relays them).
    pub(crate) fn notices(&self) -> broadcast::Receiver<Notice> {
        self.features().relay.subscribe()
    }

    /// A notification another node's server emitted, emitted by this server to the sessions
    /// and listen streams of this node (and not relayed again).
    pub(crate) fn notify_here(&self, notice: &Notice) {
        match notice {
            Notice::ResourceUpdated { uri } => {
                self.notify_resource_updated_here(uri);
            }
            Notice::ToolsListChanged => {
                self.notify_tools_list_changed_here();
            }
            Notice::PromptsListChanged => {
                self.notify_prompts_list_changed_here();
            }
            Notice::ResourcesListChanged => {
                self.notify_resources_list_changed_here();
            }
            Notice::TaskChanged { task_id } => {
                self.features().hub.change(Change::Item {
                    extension: crate::task::TASKS_EXTENSION,
                    id: task_id.as_str().into(),
                });
            }
        }
    }

    /// A receiver of the notifications the server emits to sessions outside any request
    /// (`notifications/resources/updated`, `notifications/{resources,prompts,tools}/list_changed`);
    /// the transport delivers each to its session (or to every session when it names none).
    /// `subscriptions/listen` streams (2026-07-28) are fed from the same hub.
    pub fn notifications(&self) -> broadcast::Receiver<ServerNotification> {
        self.features().hub.subscribe()
    }

    /// Emits `notifications/resources/updated` for `uri` to every session subscribed to it
    /// and to every `subscriptions/listen` stream (2026-07-28) whose `resourceSubscriptions`
    /// names it, on every node; answers how many notifications were handed to a transport
    /// (one per session, plus one when listen streams were open to take it). With a
    /// [subscription store](crate::backend::Backends::subscriptions), this node asks it for
    /// the subscribed sessions and sends to each once, wherever its stream is held; a store
    /// that fails is logged, and its sessions are not counted.
    ///
    /// ```
    /// use serde_json::json;
    /// use wymcp::Resource;
    /// use wymcp::testing::TestClient;
    /// use wymcp::Server;
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let server = Server::builder().resource(Resource::text("test://w", "w", "v1")).build().unwrap();
    /// let mut rx = server.notifications();
    /// let client = TestClient::new(server.clone());
    /// let watch = Some(json!({"uri": "test://w"}));
    /// client.request("resources/subscribe", watch).await.unwrap();
    /// assert_eq!(server.notify_resource_updated("test://w").await, 1);
    /// let sent = rx.recv().await.unwrap();
    /// assert_eq!(sent.session_id.as_deref(), client.session_id());
    /// assert_eq!(sent.message["params"]["uri"], "test://w");
    /// # });
    /// ```
    pub async fn notify_resource_updated(&self, uri: &str) -> usize {
        self.relay(Notice::ResourceUpdated {
            uri: uri.to_owned(),
        });
        let here = self.notify_resource_updated_here(uri);
        here + self.notify_shared_subscribers(uri).await
    }

    /// [`notify_resource_updated`](Self::notify_resource_updated) on this node only, to the
    /// sessions subscribed in this process and the listen streams (the shared store's
    /// sessions are notified by the node where the change was emitted).
    pub(crate) fn notify_resource_updated_here(&self, uri: &str) -> usize {
        let features = self.features();
        let sessions = features
            .resources
            .subscriptions
            .subscribers_here(uri)
            .into_iter()
            .filter(|session| {
                features
                    .hub
                    .send(ServerNotification::resource_updated(uri, session.clone()))
            })
            .count();
        // The stateless era: every listen stream whose `resourceSubscriptions` names `uri`.
        let listeners = !features.resources.is_empty()
            && features.hub.change(Change::ResourceUpdated(uri.into()));
        sessions + usize::from(listeners)
    }

    /// `notifications/resources/updated` for `uri` to the sessions the shared subscription
    /// store lists, if the server has one; how many were handed to a transport.
    async fn notify_shared_subscribers(&self, uri: &str) -> usize {
        let features = self.features();
        let Some(store) = features.resources.subscriptions.shared() else {
            return 0;
        };
        match store.subscribers(uri).await {
            Ok(sessions) => sessions
                .into_iter()
                .filter(|session| {
                    let to = Some(session.clone());
                    features
                        .hub
                        .send(ServerNotification::resource_updated(uri, to))
                })
                .count(),
            Err(err) => {
                tracing::warn!(%err, "MCP resource subscribers not notified");
                0
            }
        }
    }

    /// The URIs `session_id` is subscribed to (`None`: a call with no session's): those held
    /// in this process, and those of the shared subscription store when the server has one
    /// and the session has an id.
    pub async fn subscriptions(
        &self,
        session_id: Option<&str>,
    ) -> Result<Vec<String>, SubscriptionError> {
        self.features().resources.subscriptions.of(session_id).await
    }

    /// Drops every subscription of a session that ended, here and in the shared subscription
    /// store (the transports call it). A reader whose contents live elsewhere is told of each
    /// one as of an unsubscribe ([`ReadResource::unsubscribed`](crate::resource::ReadResource::unsubscribed)).
    pub async fn forget_session(&self, session_id: Option<&str>) {
        self.forget_session_here(session_id);
        if let Some(id) = session_id {
            let shared = self
                .features()
                .resources
                .subscriptions
                .forget_shared(id)
                .await;
            self.unsubscribe_readers(session_id, shared);
        }
    }

    /// [`forget_session`](Self::forget_session) in this process only (every node that hears
    /// of a session's end does it; the node that ended it also clears the shared store).
    pub(crate) fn forget_session_here(&self, session_id: Option<&str>) {
        let dropped = self
            .features()
            .resources
            .subscriptions
            .forget_here(&session_id.map(str::to_owned));
        self.unsubscribe_readers(session_id, dropped);
    }

    /// Tells the reader of each of `uris` (a resource's or template's whose contents live
    /// elsewhere) that `session_id` no longer subscribes to it, off the caller's task.
    fn unsubscribe_readers(&self, session_id: Option<&str>, uris: Vec<String>) {
        if uris.is_empty() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let resources = &self.features().resources;
        for uri in uris {
            let Some(reader) = resources.reader_of(&uri) else {
                continue;
            };
            let mut ctx = crate::Context::builder();
            if let Some(id) = session_id {
                ctx = ctx.session_id(id);
            }
            let ctx = ctx.build();
            runtime.spawn(async move { reader.unsubscribed(&uri, ctx).await });
        }
    }

    /// Emits `notifications/resources/list_changed` to every session and to every
    /// `subscriptions/listen` stream (2026-07-28) that asked for it. Sent only when the
    /// server declares `listChanged` ([`ServerBuilder::list_changed`](crate::ServerBuilder::list_changed))
    /// and has resources; answers whether it was handed to a transport.
    pub fn notify_resources_list_changed(&self) -> bool {
        self.relay(Notice::ResourcesListChanged);
        self.notify_resources_list_changed_here()
    }

    pub(crate) fn notify_resources_list_changed_here(&self) -> bool {
        let features = self.features();
        features.list_changed
            && !features.resources.is_empty()
            && self.broadcast_list_changed("resources", Change::ResourcesList)
    }

    /// Emits `notifications/prompts/list_changed` to every session and listen stream that asked
    /// for it, under the same conditions
    /// as [`notify_resources_list_changed`](Self::notify_resources_list_changed).
    pub fn notify_prompts_list_changed(&self) -> bool {
        self.relay(Notice::PromptsListChanged);
        self.notify_prompts_list_changed_here()
    }

    pub(crate) fn notify_prompts_list_changed_here(&self) -> bool {
        let features = self.features();
        features.list_changed
            && !features.prompts.is_empty()
            && self.broadcast_list_changed("prompts", Change::PromptsList)
    }

    /// Emits `notifications/tools/list_changed` to every client: to every session (its GET
    /// stream over HTTP, stdout on stdio; the session era always declares `tools.listChanged`)
    /// and, when the server
    /// declares `listChanged` ([`ServerBuilder::list_changed`](crate::ServerBuilder::list_changed)),
    /// on every `subscriptions/listen` stream (2026-07-28) that asked for `toolsListChanged`.
    /// Call it when the tools every client sees changed (what a tool lists depends on state
    /// that changed at runtime, say); tools registered on one session
    /// ([`SessionHandle::register_tool`](crate::session::SessionHandle::register_tool)) notify
    /// that session by themselves. Answers whether a transport took it.
    ///
    /// ```
    /// use wymcp::Server;
    ///
    /// let server = Server::builder().list_changed(true).build().unwrap();
    /// let mut sessions = server.notifications();
    /// assert!(server.notify_tools_list_changed());
    /// let sent = sessions.try_recv().unwrap();
    /// assert_eq!(sent.method(), "notifications/tools/list_changed");
    /// assert_eq!(sent.session_id, None); // every session
    /// ```
    pub fn notify_tools_list_changed(&self) -> bool {
        self.relay(Notice::ToolsListChanged);
        self.notify_tools_list_changed_here()
    }

    pub(crate) fn notify_tools_list_changed_here(&self) -> bool {
        let features = self.features();
        let sessions = features.hub.send(ServerNotification::new(
            "notifications/tools/list_changed",
            json!({}),
            None,
        ));
        let listeners = features.list_changed && features.hub.change(Change::ToolsList);
        sessions || listeners
    }

    /// Sends `notifications/<list>/list_changed` to every session and `change` to every listen
    /// stream; answers whether either was taken.
    fn broadcast_list_changed(&self, list: &str, change: Change) -> bool {
        let hub = &self.features().hub;
        let sessions = hub.send(ServerNotification::new(
            &format!("notifications/{list}/list_changed"),
            json!({}),
            None,
        ));
        hub.change(change) || sessions
    }
}
