//! `subscriptions/listen` (MCP 2026-07-28), transport-neutral: the notification filter a
//! stream honours, and the messages every stream carries, each tagged with the subscription id
//! (the listen request's JSON-RPC id) in `params._meta`: the acknowledgement first, then only
//! the kinds asked for, and the successful response that ends a stream the server closes.
//! Streamable HTTP frames them as SSE events, stdio as lines on stdout among other messages;
//! the stream itself, from its acknowledgement to its closing response, is one
//! [`Subscription`] for both.

use std::collections::VecDeque;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::broadcast;
use tokio::time::Interval;
use tokio_util::sync::CancellationToken;

use super::{Listen, results};
use crate::protocol::stateless::{CacheHints, SUBSCRIPTION_ID_KEY};
use crate::protocol::{RpcError, success};
use crate::resource::Change;
use crate::serve::{ClientSlot, Core, Listeners, Slot, counted_client};
use crate::server::extension::{Extension, Extensions};
use crate::{Context, Server};

/// What a stream delivers: the honoured part of the client's filter.
#[derive(Debug, Default)]
pub(crate) struct Filter {
    tools: bool,
    prompts: bool,
    resources: bool,
    uris: Vec<String>,
    /// The extensions' items the stream watches (the tasks extension's `taskIds`).
    watched: Vec<Watched>,
    /// The request that opened the stream: an item is read as its caller may read it.
    opener: Option<Context>,
}

/// The items of one extension a stream watches.
#[derive(Debug)]
struct Watched {
    extension: &'static dyn Extension,
    /// The filter's key that lists them.
    key: &'static str,
    ids: Vec<String>,
}

impl Filter {
    /// Reads `params.notifications`: an object whose known fields have their schema's types,
    /// its lists within `limits` (unknown fields are ignored, as a later revision may add
    /// kinds); the keys of the items `extensions` let a stream watch are known fields too.
    pub(crate) fn parse(
        params: Option<&Value>,
        limits: &crate::Limits,
        extensions: &Extensions,
    ) -> Result<Filter, RpcError> {
        let invalid = |what: &str| {
            RpcError::new(
                RpcError::INVALID_PARAMS,
                format!("Invalid params: params.notifications{what}"),
                None,
            )
        };
        let Some(filter) = params
            .and_then(|p| p.get("notifications"))
            .and_then(Value::as_object)
        else {
            return Err(invalid(" must be an object (the notification filter)"));
        };
        let flag = |key: &str| match filter.get(key) {
            None => Ok(false),
            Some(Value::Bool(on)) => Ok(*on),
            Some(_) => Err(invalid(&format!(".{key} must be a boolean"))),
        };
        let uris = strings(
            filter,
            ("resourceSubscriptions", "URIs"),
            (limits.max_listen_uris, "Limits::max_listen_uris"),
        )?;
        let mut watched = Vec::new();
        for extension in extensions.iter() {
            let Some(watch) = extension.watch_key(limits) else {
                continue;
            };
            let ids = strings(filter, (watch.key, watch.what), (watch.max, watch.setting))?;
            if !ids.is_empty() {
                let key = watch.key;
                watched.push(Watched {
                    extension,
                    key,
                    ids,
                });
            }
        }
        Ok(Filter {
            tools: flag("toolsListChanged")?,
            prompts: flag("promptsListChanged")?,
            resources: flag("resourcesListChanged")?,
            uris,
            watched,
            opener: None,
        })
    }

    /// The part of the request the server delivers to the caller of `ctx`: kinds its
    /// stateless-era capabilities declare, URIs it resolves (each once), and the items each
    /// extension lets this caller watch (each once; an extension may refuse the request, as
    /// the tasks extension refuses `-32021` the task ids of a client that does not declare it).
    pub(crate) async fn honoured(self, server: &Server, ctx: &Context) -> Result<Filter, RpcError> {
        let caps = server.stateless_capabilities();
        let declared = |kind: &str, flag: &str| caps[kind][flag] == Value::Bool(true);
        let mut uris: Vec<String> = Vec::new();
        if declared("resources", "subscribe") {
            let resources = &server.features().resources;
            for uri in self.uris {
                if resources.resolves(&uri) && !uris.contains(&uri) {
                    uris.push(uri);
                }
            }
        }
        let mut watched = Vec::with_capacity(self.watched.len());
        for items in self.watched {
            let ids = items.extension.watchable(server, items.ids, ctx).await?;
            if !ids.is_empty() {
                watched.push(Watched { ids, ..items });
            }
        }
        Ok(Filter {
            tools: self.tools && declared("tools", "listChanged"),
            prompts: self.prompts && declared("prompts", "listChanged"),
            resources: self.resources && declared("resources", "listChanged"),
            uris,
            watched,
            opener: Some(ctx.clone()),
        })
    }

    /// The filter as the acknowledgement states it: only what is honoured.
    fn to_value(&self) -> Value {
        let mut map = Map::new();
        for (key, on) in [
            ("toolsListChanged", self.tools),
            ("promptsListChanged", self.prompts),
            ("resourcesListChanged", self.resources),
        ] {
            if on {
                map.insert(key.into(), Value::Bool(true));
            }
        }
        if !self.uris.is_empty() {
            map.insert("resourceSubscriptions".into(), json!(self.uris));
        }
        for items in &self.watched {
            map.insert(items.key.into(), json!(items.ids));
        }
        Value::Object(map)
    }

    /// The notification `change` becomes on this stream, if it asked for it.
    fn wants(&self, change: &Change) -> Option<(&'static str, Map<String, Value>)> {
        let list = |method| Some((method, Map::new()));
        match change {
            Change::ToolsList if self.tools => list("notifications/tools/list_changed"),
            Change::PromptsList if self.prompts => list("notifications/prompts/list_changed"),
            Change::ResourcesList if self.resources => list("notifications/resources/list_changed"),
            Change::ResourceUpdated(uri) if self.uris.iter().any(|u| **u == **uri) => {
                let mut params = Map::new();
                params.insert("uri".into(), Value::from(&**uri));
                Some(("notifications/resources/updated", params))
            }
            _ => None,
        }
    }

    /// Everything this stream could have missed (after `Lagged`).
    pub(crate) fn everything(&self) -> Vec<Change> {
        let mut all = Vec::new();
        for (on, change) in [
            (self.tools, Change::ToolsList),
            (self.prompts, Change::PromptsList),
            (self.resources, Change::ResourcesList),
        ] {
            if on {
                all.push(change);
            }
        }
        all.extend(
            self.uris
                .iter()
                .map(|u| Change::ResourceUpdated(u.as_str().into())),
        );
        for items in &self.watched {
            all.extend(items.ids.iter().map(|id| Change::Item {
                extension: items.extension.id(),
                id: id.as_str().into(),
            }));
        }
        all
    }
}

impl Filter {
    /// The acknowledgement a stream opens with: the honoured filter, tagged.
    pub(crate) fn acknowledgement(&self, id: &Value) -> Value {
        tagged(
            "notifications/subscriptions/acknowledged",
            Map::from_iter([("notifications".to_owned(), self.to_value())]),
            id,
        )
    }

    /// The notification `change` becomes on the stream of subscription `id`, if it asked
    /// for it. An extension's item is told as its extension reads it for the stream's caller
    /// at this moment (a task as `tasks/get` answers it); an item gone is not announced.
    pub(crate) async fn notification(
        &self,
        server: &Server,
        change: &Change,
        id: &Value,
    ) -> Option<Value> {
        if let Change::Item {
            extension,
            id: item,
        } = change
        {
            let items = self
                .watched
                .iter()
                .find(|w| w.extension.id() == *extension)?;
            if !items.ids.iter().any(|i| **i == **item) {
                return None;
            }
            let opener = self.opener.as_ref()?;
            let (method, params) = items.extension.watched(server, item, opener).await?;
            return Some(tagged(method, params, id));
        }
        let (method, params) = self.wants(change)?;
        Some(tagged(method, params, id))
    }
}

impl Filter {
    /// What follows the acknowledgement: each watched item's state as it is now, so a client
    /// hears of a change it could otherwise have missed between its last read (`tasks/get`)
    /// and the stream opening (the stream subscribes to changes before it reads them).
    pub(crate) async fn current(&self, server: &Server, id: &Value) -> Vec<Value> {
        let mut now = Vec::new();
        for items in &self.watched {
            for item in &items.ids {
                let change = Change::Item {
                    extension: items.extension.id(),
                    id: item.as_str().into(),
                };
                if let Some(message) = self.notification(server, &change, id).await {
                    now.push(message);
                }
            }
        }
        now
    }
}

/// The list of strings under `key` of the filter (`what` names them in the refusal), at most
/// `max` of them (`setting` sets it).
fn strings(
    filter: &Map<String, Value>,
    (key, what): (&str, &str),
    (max, setting): (usize, &str),
) -> Result<Vec<String>, RpcError> {
    let invalid = |reason: String| {
        RpcError::new(
            RpcError::INVALID_PARAMS,
            format!("Invalid params: params.notifications.{key} {reason}"),
            None,
        )
    };
    match filter.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) if items.len() > max => Err(invalid(format!(
            "lists {} {what}; at most {max} are allowed ({setting})",
            items.len()
        ))),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| invalid("must be an array of strings".into())),
        Some(_) => Err(invalid("must be an array of strings".into())),
    }
}

/// A notification of subscription `id`: `params._meta` carries the id.
fn tagged(method: &str, mut params: Map<String, Value>, id: &Value) -> Value {
    params.insert("_meta".into(), json!({ SUBSCRIPTION_ID_KEY: id }));
    json!({ "jsonrpc": "2.0", "method": method, "params": params })
}

/// The successful `subscriptions/listen` response that ends stream `id` gracefully (the
/// server closed it), tagged like every message of the stream.
pub(crate) fn closing(server: &Server, hints: &CacheHints, id: &Value) -> Value {
    let result = results::complete(
        server,
        "subscriptions/listen",
        hints,
        json!({ "_meta": { SUBSCRIPTION_ID_KEY: id } }),
    );
    success(id.clone(), result)
}

/// Why a listen stream was not opened.
#[derive(Debug)]
pub(crate) enum Unopened {
    /// The filter is refused (`-32602`, naming what is wrong).
    Filter(RpcError),
    /// `max` streams are open already.
    TooMany {
        /// The limit that was reached.
        max: usize,
    },
    /// The caller (its principal, else its address) holds `max` streams already.
    TooManyForClient {
        /// The limit that was reached.
        max: usize,
    },
}

/// What a listen stream sends next.
#[derive(Debug)]
pub(crate) enum Frame {
    /// A message of the stream: the acknowledgement, a notification, or the closing response
    /// (the last one).
    Message(Value),
    /// Nothing happened for a keepalive period: a transport that needs one sends a sign of
    /// life (an SSE comment).
    KeepAlive,
}

/// One open `subscriptions/listen` stream, whatever carries it: the acknowledgement and the
/// watched items' current state first, then each change the filter asks for, until the
/// deployment closes its streams (the closing response ends it) or the transport drops it
/// (the client cancelled it or went away).
///
/// A stream that falls more than the hub's buffer behind (`Lagged`) cannot know what it
/// missed: it sends every notification it honours (the client re-fetches) and goes on. A
/// server that is gone ends the stream as a shutdown would.
pub(crate) struct Subscription {
    server: Server,
    id: Value,
    filter: Filter,
    hints: CacheHints,
    changes: broadcast::Receiver<Change>,
    stop: CancellationToken,
    keepalive: Option<Interval>,
    /// Messages to send before anything else is awaited.
    queued: VecDeque<Value>,
    ended: bool,
    _slot: Slot,
    /// The caller's place under its own cap (none when the caller is not known).
    _client_slot: Option<ClientSlot>,
}

impl Subscription {
    /// Opens the stream `listen` asks for, among the deployment's `listeners`: at most
    /// `max` open at once, at most `max_per_client` of them held by one caller (its principal, else
    /// its address; a caller the transport cannot tell apart is not counted); closed
    /// gracefully when `stop` is cancelled (at once when it already is); `keepalive`: how
    /// long the stream may stay silent before a [`Frame::KeepAlive`] (`None`: never).
    pub(crate) async fn open(
        core: &Core,
        listen: Listen,
        listeners: &Listeners,
        max: usize,
        max_per_client: usize,
        stop: CancellationToken,
        keepalive: Option<Duration>,
    ) -> Result<Subscription, Unopened> {
        let filter = listen.filter(core).await.map_err(Unopened::Filter)?;
        // The caller's own cap first: a client at it is told so, whatever the others hold.
        let caller = counted_client(listen.ctx.identity(), listen.ctx.origin().client);
        let client_slot = match caller {
            Some(caller) => match listeners.acquire_for(caller, max_per_client) {
                Some(slot) => Some(slot),
                None => {
                    tracing::warn!(
                        max = max_per_client,
                        "subscriptions/listen refused: the client's stream limit is reached"
                    );
                    return Err(Unopened::TooManyForClient {
                        max: max_per_client,
                    });
                }
            },
            None => None,
        };
        let Some(slot) = listeners.acquire(max) else {
            tracing::warn!(
                max,
                "subscriptions/listen refused: the stream limit is reached"
            );
            return Err(Unopened::TooMany { max });
        };
        let server = core.server().clone();
        // Subscribed before the acknowledgement is written: no change after it is missed.
        let changes = server.features().hub.changes();
        let id = listen.id;
        let mut queued = VecDeque::from([filter.acknowledgement(&id)]);
        queued.extend(filter.current(&server, &id).await);
        let keepalive = keepalive.map(|period| {
            let period = period.max(Duration::from_millis(1));
            let first = tokio::time::Instant::now() + period;
            let mut ticker = tokio::time::interval_at(first, period);
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            ticker
        });
        Ok(Subscription {
            server,
            id,
            filter,
            hints: core.settings().cache_hints.clone(),
            changes,
            stop,
            keepalive,
            queued,
            ended: false,
            _slot: slot,
            _client_slot: client_slot,
        })
    }

    /// The stream's next frame; `None` once its closing response was sent.
    pub(crate) async fn next(&mut self) -> Option<Frame> {
        loop {
            if let Some(message) = self.queued.pop_front() {
                return Some(Frame::Message(message));
            }
            if self.ended {
                return None;
            }
            let keepalive = tick(self.keepalive.as_mut());
            let received = tokio::select! {
                biased;
                () = self.stop.cancelled() => None,
                received = self.changes.recv() => Some(received),
                () = keepalive => return Some(Frame::KeepAlive),
            };
            match received {
                Some(Ok(change)) => {
                    let server = &self.server;
                    if let Some(message) = self.filter.notification(server, &change, &self.id).await
                    {
                        return Some(Frame::Message(message));
                    }
                }
                Some(Err(broadcast::error::RecvError::Lagged(missed))) => {
                    tracing::warn!(
                        missed,
                        "subscriptions/listen stream lagged: resending every kind it honours"
                    );
                    for change in self.filter.everything() {
                        let server = &self.server;
                        if let Some(message) =
                            self.filter.notification(server, &change, &self.id).await
                        {
                            self.queued.push_back(message);
                        }
                    }
                }
                // Closed by the deployment, or the server is gone: the closing response.
                None | Some(Err(broadcast::error::RecvError::Closed)) => {
                    self.ended = true;
                    let closing = closing(&self.server, &self.hints, &self.id);
                    self.queued.push_back(closing);
                }
            }
        }
    }
}

/// The next keepalive tick; never without a ticker.
async fn tick(ticker: Option<&mut Interval>) {
    match ticker {
        Some(ticker) => {
            ticker.tick().await;
        }
        None => std::future::pending().await,
    }
}
