//! `subscriptions/listen` (MCP 2026-07-28): [`Subscriptions`], what a listen stream asks the
//! server for, and [`Subscription`], a stream open. Its notifications are delivered as the
//! session era's are (the observer, else the queue); a stream that ends is opened again.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use reqwest::header::HeaderMap;
use serde_json::{Map, Value, json};
use tokio::task::JoinHandle;

use super::era::Era;
use super::http::{Connection, Routed};
use super::link::Link;
use super::sse::{Event, SseReader};
use super::{ClientError, Malformed, Shared};

/// The method, and what its failures are named as.
const LISTEN: &str = "subscriptions/listen";
/// The first message of a listen stream.
const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";
/// The most doublings of the delay between failed attempts to reopen a stream (32 times the
/// first delay at most).
const MAX_DOUBLINGS: u32 = 5;

/// What a `subscriptions/listen` stream asks for ([`Client::listen`](super::Client::listen)):
/// the lists whose changes it tells, and the resources whose updates it tells. The server
/// honours what it declares (its acknowledgement says what,
/// [`Subscription::honoured`]).
///
/// ```
/// use wymcp::client::Subscriptions;
///
/// let asked = Subscriptions::new()
///     .tools_list_changed()
///     .prompts_list_changed()
///     .resource("file:///notes.txt");
/// # let _ = asked;
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Subscriptions {
    tools: bool,
    prompts: bool,
    resources: bool,
    uris: Vec<String>,
}

impl Subscriptions {
    /// Asks for nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// `notifications/tools/list_changed` (`toolsListChanged`).
    pub fn tools_list_changed(mut self) -> Self {
        self.tools = true;
        self
    }

    /// `notifications/prompts/list_changed` (`promptsListChanged`).
    pub fn prompts_list_changed(mut self) -> Self {
        self.prompts = true;
        self
    }

    /// `notifications/resources/list_changed` (`resourcesListChanged`).
    pub fn resources_list_changed(mut self) -> Self {
        self.resources = true;
        self
    }

    /// `notifications/resources/updated` for `uri` (one of `resourceSubscriptions`; a URI
    /// given twice is asked for once).
    pub fn resource(mut self, uri: impl Into<String>) -> Self {
        let uri = uri.into();
        if !self.uris.contains(&uri) {
            self.uris.push(uri);
        }
        self
    }

    /// The request's `params`: the filter under `notifications`.
    fn params(&self) -> Map<String, Value> {
        let mut filter = Map::new();
        for (key, on) in [
            ("toolsListChanged", self.tools),
            ("promptsListChanged", self.prompts),
            ("resourcesListChanged", self.resources),
        ] {
            if on {
                filter.insert(key.to_owned(), Value::Bool(true));
            }
        }
        if !self.uris.is_empty() {
            filter.insert("resourceSubscriptions".to_owned(), json!(self.uris));
        }
        Map::from_iter([("notifications".to_owned(), Value::Object(filter))])
    }
}

/// A `subscriptions/listen` stream open ([`Client::listen`](super::Client::listen)), read in
/// a task and opened again when it ends; dropping it ends the stream.
#[derive(Debug)]
pub struct Subscription {
    honoured: Value,
    task: JoinHandle<()>,
}

impl Subscription {
    /// What the server honours of what was asked, as its acknowledgement stated it (the
    /// `notifications` filter of `notifications/subscriptions/acknowledged`, e.g.
    /// `{"toolsListChanged": true, "resourceSubscriptions": ["file:///notes.txt"]}`).
    pub fn honoured(&self) -> &Value {
        &self.honoured
    }

    /// Whether the stream is still followed: `false` once it could not be opened again
    /// ([`ClientBuilder::max_reconnects`](super::ClientBuilder::max_reconnects) failures in a
    /// row, or a refusal).
    pub fn is_listening(&self) -> bool {
        !self.task.is_finished()
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Opens the stream `asked` describes, waiting (under the timeout) for its acknowledgement;
/// then reads it in a task.
pub(crate) async fn open(
    shared: &Arc<Shared>,
    asked: Subscriptions,
) -> Result<Subscription, ClientError> {
    let unavailable = |reason| ClientError::Unavailable {
        method: LISTEN.to_owned(),
        reason,
    };
    let Link::Http(conn) = &shared.link else {
        return Err(unavailable(
            "a listen stream is opened over Streamable HTTP only",
        ));
    };
    if !matches!(shared.era, Era::Stateless { .. }) {
        return Err(unavailable(
            "the session era delivers notifications on the session's GET stream",
        ));
    }
    let params = asked.params();
    let (stream, honoured) = Stream::open_timed(shared, conn, &params).await?;
    let task = tokio::spawn(follow(Arc::clone(shared), params, stream));
    Ok(Subscription { honoured, task })
}

/// One stream, acknowledged: the request's id (the subscription's) and what is left to read.
struct Stream {
    id: i64,
    response: reqwest::Response,
    reader: SseReader,
}

/// How a stream's reading ended.
enum End {
    /// The server ended it with the response to the listen request.
    Closed,
    /// The connection ended or dropped first.
    Dropped,
}

impl Stream {
    /// [`open`](Self::open) under the client's timeout.
    async fn open_timed(
        shared: &Shared,
        conn: &Connection,
        params: &Map<String, Value>,
    ) -> Result<(Stream, Value), ClientError> {
        let after = conn.settings.timeout;
        tokio::time::timeout(after, Stream::open(shared, conn, params))
            .await
            .map_err(|_| ClientError::Timeout {
                method: LISTEN.to_owned(),
                after,
            })?
    }

    /// POSTs the listen request and reads up to its acknowledgement: the stream, and the
    /// filter the server honours. What the server sends before the acknowledgement is
    /// delivered as any notification; the response in its place is its refusal.
    async fn open(
        shared: &Shared,
        conn: &Connection,
        params: &Map<String, Value>,
    ) -> Result<(Stream, Value), ClientError> {
        let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
        let body = shared.era.body(Some(id), LISTEN, params, &Map::new())?;
        let headers: HeaderMap = shared.era.headers(LISTEN, None)?;
        let response = conn.post_stream(LISTEN, id, &body, &headers).await?;
        let mut stream = Stream {
            id,
            response,
            reader: SseReader::new(conn.settings.max_event_bytes),
        };
        let mut honoured: Option<Value> = None;
        let mut events = Vec::new();
        while honoured.is_none() {
            let chunk = match stream.response.chunk().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => return Err(malformed(Malformed::StreamEnded)),
                Err(err) => {
                    return Err(ClientError::Transport {
                        method: LISTEN.to_owned(),
                        source: super::TransportError::new(err),
                    });
                }
            };
            stream.reader.feed(&chunk, |event| {
                events.push(event);
                true
            });
            for event in events.drain(..) {
                let Event::Data(data) = event else {
                    conn.notes.count_dropped();
                    continue;
                };
                if honoured.is_none()
                    && let Ok(message) = serde_json::from_slice::<Value>(&data)
                    && message["method"] == ACKNOWLEDGED
                {
                    honoured = Some(message["params"]["notifications"].clone());
                    continue;
                }
                if let End::Closed = stream.deliver(conn, data)?
                    && honoured.is_none()
                {
                    return Err(malformed(Malformed::StreamEnded));
                }
            }
        }
        Ok((stream, honoured.unwrap_or_default()))
    }

    /// Routes one event's data: a notification to the observer or the queue; the response to
    /// the listen request ends the stream ([`End::Closed`]), its error answered as such;
    /// anything else is dropped.
    fn deliver(&self, conn: &Connection, data: Vec<u8>) -> Result<End, ClientError> {
        match conn.route(data, Some(self.id), None) {
            Routed::Answer(message) => {
                super::http::response_to(LISTEN, self.id, message)?;
                Ok(End::Closed)
            }
            Routed::NotJson => {
                tracing::warn!("an event of a listen stream is not JSON: dropped");
                Ok(End::Dropped)
            }
            Routed::Request(_) => {
                tracing::debug!("a request on a listen stream: dropped (none is expected)");
                Ok(End::Dropped)
            }
            Routed::Done => Ok(End::Dropped),
        }
    }

    /// Reads the stream to its end: each notification delivered, an event over
    /// [`max_event_bytes`](super::ClientBuilder::max_event_bytes) dropped unheld and counted.
    async fn read(&mut self, conn: &Connection) -> End {
        let mut events = Vec::new();
        loop {
            let chunk = match self.response.chunk().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) | Err(_) => return End::Dropped,
            };
            self.reader.feed(&chunk, |event| {
                events.push(event);
                true
            });
            for event in events.drain(..) {
                let Event::Data(data) = event else {
                    tracing::warn!(
                        max = conn.settings.max_event_bytes,
                        "an event of a listen stream over one SSE event's size \
                         (ClientBuilder::max_event_bytes): dropped"
                    );
                    conn.notes.count_dropped();
                    continue;
                };
                if let Ok(End::Closed) | Err(_) = self.deliver(conn, data) {
                    return End::Closed;
                }
            }
        }
    }
}

/// Reads `stream`, and opens it again each time it ends: after the server's `retry` (else
/// [`reconnect_delay`](super::ClientBuilder::reconnect_delay)), each failed attempt waiting
/// twice as long as the last (at most [`MAX_DOUBLINGS`] times), until
/// [`max_reconnects`](super::ClientBuilder::max_reconnects) failures in a row or a refusal.
async fn follow(shared: Arc<Shared>, params: Map<String, Value>, mut stream: Stream) {
    let Link::Http(conn) = &shared.link else {
        return;
    };
    loop {
        let end = stream.read(conn).await;
        tracing::debug!(
            closed = matches!(end, End::Closed),
            "a listen stream ended: reopening"
        );
        let first = stream
            .reader
            .retry()
            .unwrap_or(conn.settings.reconnect_delay);
        let mut failures = 0usize;
        stream = loop {
            let doublings = u32::try_from(failures)
                .unwrap_or(u32::MAX)
                .min(MAX_DOUBLINGS);
            tokio::time::sleep(first.saturating_mul(1 << doublings)).await;
            match Stream::open_timed(&shared, conn, &params).await {
                Ok((next, _)) => break next,
                Err(err) if refused(&err) => {
                    tracing::warn!(error = %err, "a listen stream was refused when reopened: it ends");
                    return;
                }
                Err(err) => {
                    failures += 1;
                    if failures > conn.settings.max_reconnects {
                        tracing::warn!(
                            error = %err,
                            max = conn.settings.max_reconnects,
                            "a listen stream could not be reopened (ClientBuilder::max_reconnects): \
                             its notifications no longer arrive"
                        );
                        return;
                    }
                }
            }
        };
    }
}

/// A refusal no retry changes: a JSON-RPC error, or an HTTP 4xx other than 408 and 429.
fn refused(err: &ClientError) -> bool {
    match err {
        ClientError::Rpc { .. } => true,
        _ => err
            .status()
            .is_some_and(|status| (400..500).contains(&status) && !matches!(status, 408 | 429)),
    }
}

fn malformed(what: Malformed) -> ClientError {
    ClientError::Malformed {
        method: LISTEN.to_owned(),
        what,
    }
}
