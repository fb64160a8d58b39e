//! [`Redis`]: one reconnecting connection to Redis and the settings its parts share.

use std::sync::Arc;
use std::time::Duration;
use wymcp::backend::Backends;

use redis::AsyncCommands as _;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use wymcp::mrtr::RequestStateKeys;

use crate::{
    RedisBus, RedisEventLog, RedisRateLimits, RedisSessionStore, RedisSubscriptions,
    RedisTaskStore, RedisUserState,
};

/// How long a Redis command may take before the request using it is answered 503 (default).
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long connecting may take (default).
const CONNECTION_TIMEOUT: Duration = Duration::from_secs(2);
/// The default bound of a session's event log.
const DEFAULT_MAX_EVENTS: usize = 1_000;
/// The default lifetime of a session's event log after its last event.
const DEFAULT_EVENTS_TTL: Duration = Duration::from_secs(3_600);

/// The key names of one deployment.
#[derive(Debug, Clone)]
pub(crate) struct Keys(Arc<str>);

/// `<prefix><middle><id>`, in one allocation (the session keys are made on every request).
fn key(prefix: &str, middle: &str, id: &str) -> String {
    let mut key = String::with_capacity(prefix.len() + middle.len() + id.len());
    key.push_str(prefix);
    key.push_str(middle);
    key.push_str(id);
    key
}

impl Keys {
    pub(crate) fn session(&self, id: &str) -> String {
        key(&self.0, ":session:", id)
    }
    pub(crate) fn session_prefix(&self) -> String {
        format!("{}:session:", self.0)
    }
    pub(crate) fn sessions(&self) -> String {
        key(&self.0, ":sessions", "")
    }
    /// A client's live sessions (id → creation time), for the per-client quota.
    pub(crate) fn client_prefix(&self) -> String {
        format!("{}:client:", self.0)
    }
    /// Session id → the client it is counted against.
    pub(crate) fn session_clients(&self) -> String {
        format!("{}:session-clients", self.0)
    }
    pub(crate) fn events(&self, session: &str) -> String {
        format!("{}:events:{session}", self.0)
    }
    /// The bytes of `data` a session's event stream holds, kept beside it.
    pub(crate) fn event_bytes(&self, session: &str) -> String {
        format!("{}:event-bytes:{session}", self.0)
    }
    pub(crate) fn everyone(&self) -> String {
        format!("{}:bus:all", self.0)
    }
    pub(crate) fn node(&self, node: &str) -> String {
        format!("{}:bus:node:{node}", self.0)
    }
    /// A running call's lease (expires unless renewed).
    pub(crate) fn call(&self, session: &str, stream: &str) -> String {
        format!("{}:call:{session}:{stream}", self.0)
    }
    /// The mark that a call ran on that stream (outlives the lease: a lapsed lease with the
    /// mark left is a call whose node stopped).
    pub(crate) fn call_mark(&self, session: &str, stream: &str) -> String {
        format!("{}:call-mark:{session}:{stream}", self.0)
    }
    /// A principal's user state.
    pub(crate) fn user(&self, principal: &str) -> String {
        key(&self.0, ":user:", principal)
    }
    /// A principal's running tasks (task id → heartbeat ms).
    pub(crate) fn running_tasks(&self, principal: &str) -> String {
        key(&self.0, ":running:", principal)
    }
    /// A principal's kept tasks (task id → expiry ms), for its bound of stored tasks.
    pub(crate) fn tasks_of(&self, principal: &str) -> String {
        key(&self.0, ":tasks-of:", principal)
    }
    /// Every kept task (task id → expiry ms), for the store's bound.
    pub(crate) fn stored_tasks(&self) -> String {
        key(&self.0, ":tasks", "")
    }
    /// A task of the tasks extension.
    pub(crate) fn task(&self, id: &str) -> String {
        key(&self.0, ":task:", id)
    }
    /// The URIs a session is subscribed to.
    pub(crate) fn subscriptions_of(&self, session: &str) -> String {
        key(&self.0, ":subs:", session)
    }
    /// The sessions subscribed to a URI.
    pub(crate) fn subscribers(&self, uri: &str) -> String {
        key(&self.0, ":subscribers:", uri)
    }
    /// How many subscriptions all sessions hold.
    pub(crate) fn subscription_total(&self) -> String {
        key(&self.0, ":subscriptions", "")
    }
    /// The prefix of the buckets of the rate limit `name`.
    pub(crate) fn rate_limit(&self, name: &str) -> String {
        format!("{}:rate:{name}:", self.0)
    }
    fn request_state_key(&self) -> String {
        format!("{}:request-state-key", self.0)
    }
}

/// One Redis deployment as wymcp uses it: a connection that reconnects by itself (commands
/// fail after the response timeout, 2 s by default, while Redis is unreachable, and succeed
/// again once it is back), the key prefix, and the bounds of the event log. Cheap to clone.
#[derive(Clone)]
pub struct Redis {
    pub(crate) client: redis::Client,
    pub(crate) conn: ConnectionManager,
    pub(crate) keys: Keys,
    max_events: usize,
    max_event_bytes: usize,
    events_ttl: Duration,
    max_decoded_bytes: usize,
}

/// How to connect to Redis: [`Redis::builder`].
#[derive(Debug, Clone)]
#[must_use]
pub struct RedisBuilder {
    url: String,
    response_timeout: Duration,
    connection_timeout: Duration,
    root_certificate: Option<Vec<u8>>,
}

impl RedisBuilder {
    /// How long one command may take (2 s by default): while Redis does not answer, a request
    /// needing it is answered 503 after this long, never later.
    pub fn response_timeout(mut self, timeout: Duration) -> Self {
        self.response_timeout = timeout;
        self
    }

    /// How long (re)connecting may take (2 s by default).
    pub fn connection_timeout(mut self, timeout: Duration) -> Self {
        self.connection_timeout = timeout;
        self
    }

    /// Trusts the certificate authority `pem` (PEM) for a `rediss://` URL, instead of the
    /// system's roots: a Redis whose certificate a private authority signed.
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
    /// let ca = std::fs::read("/etc/redis/tls/ca.crt")?;
    /// let redis = wymcp_redis::Redis::builder("rediss://:secret@redis.internal:6380/")
    ///     .tls_root_certificate(ca)
    ///     .connect()
    ///     .await?;
    /// # let _ = redis; Ok(()) }
    /// ```
    pub fn tls_root_certificate(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.root_certificate = Some(pem.into());
        self
    }

    /// Connects; fails when Redis cannot be reached now, and refuses a Redis Cluster (see
    /// [`Redis::connect`]).
    pub async fn connect(self) -> Result<Redis, crate::Error> {
        let client = match self.root_certificate {
            Some(root_cert) => redis::Client::build_with_tls(
                self.url.as_str(),
                redis::TlsCertificates {
                    client_tls: None,
                    root_cert: Some(root_cert),
                },
            )?,
            None => redis::Client::open(self.url.as_str())?,
        };
        let config = ConnectionManagerConfig::new()
            .set_response_timeout(Some(self.response_timeout))
            .set_connection_timeout(Some(self.connection_timeout))
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_millis(500));
        let mut conn = ConnectionManager::new_with_config(client.clone(), config).await?;
        refuse_cluster(&mut conn).await?;
        Ok(Redis {
            client,
            conn,
            keys: Keys("wymcp".into()),
            max_events: DEFAULT_MAX_EVENTS,
            max_event_bytes: wymcp::limits::DEFAULT_MAX_LOGGED_BYTES,
            events_ttl: DEFAULT_EVENTS_TTL,
            max_decoded_bytes: crate::store::DEFAULT_MAX_DECODED_BYTES,
        })
    }
}

/// Fails when the server runs in cluster mode (`INFO cluster` says `cluster_enabled:1`): the
/// scripts here touch several keys that a cluster would spread over slots and nodes. `INFO`
/// failing (a wrong password) fails the connection too.
async fn refuse_cluster(conn: &mut ConnectionManager) -> Result<(), crate::Error> {
    let info: String = redis::cmd("INFO").arg("cluster").query_async(conn).await?;
    if info.lines().any(|line| line.trim() == "cluster_enabled:1") {
        return Err(redis::RedisError::from((
            redis::ErrorKind::Client,
            "Redis Cluster is not supported",
            "this server runs with cluster-enabled yes; wymcp-redis needs a standalone Redis \
             (one primary, redis:// or rediss://, with or without a password)"
                .to_owned(),
        )));
    }
    Ok(())
}

impl std::fmt::Debug for Redis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redis")
            .field("prefix", &self.keys.0)
            .field("max_events", &self.max_events)
            .field("max_event_bytes", &self.max_event_bytes)
            .field("events_ttl", &self.events_ttl)
            .field("max_decoded_bytes", &self.max_decoded_bytes)
            .finish_non_exhaustive()
    }
}

impl Redis {
    /// Connects to `url` (`redis://host:port/db`; `rediss://` for TLS, the server's
    /// certificate checked against the system's roots or
    /// [`RedisBuilder::tls_root_certificate`]; a password as `redis://:password@host/` or
    /// `redis://user:password@host/`) with the default timeouts (2 s per command, 2 s to
    /// connect); fails when Redis cannot be reached now (a node does not start without its
    /// store), and refuses a Redis Cluster ("Redis Cluster is not supported": the scripts
    /// here need every key on one server). [`Redis::builder`] sets the timeouts.
    pub async fn connect(url: &str) -> Result<Redis, crate::Error> {
        Redis::builder(url).connect().await
    }

    /// A connection to `url` to configure:
    ///
    /// ```no_run
    /// # async fn f() -> Result<(), wymcp_redis::Error> {
    /// use std::time::Duration;
    /// let redis = wymcp_redis::Redis::builder("redis://10.0.0.5:6379/")
    ///     .response_timeout(Duration::from_millis(500))
    ///     .connect()
    ///     .await?;
    /// # let _ = redis; Ok(()) }
    /// ```
    pub fn builder(url: &str) -> RedisBuilder {
        RedisBuilder {
            url: url.to_owned(),
            response_timeout: RESPONSE_TIMEOUT,
            connection_timeout: CONNECTION_TIMEOUT,
            root_certificate: None,
        }
    }

    /// Puts every key under `prefix` instead of `wymcp` (several deployments on one Redis).
    pub fn prefix(mut self, prefix: &str) -> Self {
        self.keys = Keys(prefix.into());
        self
    }

    /// Keeps at most `max` events per session in the event log (oldest dropped first;
    /// 1,000 by default): a `Last-Event-ID` older than that is not resumed.
    pub fn max_events(mut self, max: usize) -> Self {
        self.max_events = max.max(1);
        self
    }

    /// Keeps at most `bytes` of event data per session in the event log (oldest dropped
    /// first; 1 MiB by default, as `Limits::max_logged_bytes` bounds the in-memory log): a
    /// `Last-Event-ID` older than that is not resumed. An event larger than the bound is kept
    /// alone, as the newest.
    pub fn max_event_bytes(mut self, bytes: usize) -> Self {
        self.max_event_bytes = bytes;
        self
    }

    /// Forgets a session's event log `ttl` after its last event (an hour by default).
    pub fn events_ttl(mut self, ttl: Duration) -> Self {
        self.events_ttl = ttl;
        self
    }

    /// Every store on this Redis in one value, for
    /// [`ServerBuilder::backends`](wymcp::ServerBuilder::backends): sessions, their SSE
    /// events, the bus, tasks, per-principal user state and resource subscriptions. Any node
    /// built with it serves any request of any session on the same Redis. (A shared rate
    /// limit is a layer's own: [`rate_limits`](Self::rate_limits).)
    pub fn backends(&self) -> Backends {
        Backends::new()
            .sessions(self.session_store())
            .events(self.event_log())
            .bus(self.bus())
            .tasks(self.task_store())
            .user_state(self.user_state())
            .subscriptions(self.subscription_store())
    }

    /// Keeps at most `bytes` of session records decoded on this node (64 MiB by default): a
    /// record as Redis holds it and as decoded, weighed as its text plus its client
    /// capabilities' and info's [`json_weight`](wymcp::limits::json_weight). Past it the cache
    /// starts over (the next load of each session decodes it again); a record heavier than
    /// the bound is decoded for each load and not kept. At most 20,000 records are kept too.
    pub fn max_decoded_bytes(mut self, bytes: usize) -> Self {
        self.max_decoded_bytes = bytes;
        self
    }

    /// The session store on this Redis.
    pub fn session_store(&self) -> RedisSessionStore {
        RedisSessionStore::new(self.conn.clone(), self.keys.clone(), self.max_decoded_bytes)
    }

    /// The SSE event log on this Redis (Redis Streams, bounded by
    /// [`max_events`](Self::max_events) and [`max_event_bytes`](Self::max_event_bytes)).
    pub fn event_log(&self) -> RedisEventLog {
        RedisEventLog::new(
            self.conn.clone(),
            self.keys.clone(),
            self.max_events,
            self.max_event_bytes,
            self.events_ttl,
        )
    }

    /// The tasks extension's task store on this Redis: a task outlives its node, and any node
    /// answers `tasks/get` for it ([`RedisTaskStore`]).
    pub fn task_store(&self) -> RedisTaskStore {
        RedisTaskStore::new(self.conn.clone(), self.keys.clone())
    }

    /// Per-principal user state on this Redis ([`RedisUserState`]), for
    /// [`Backends::user_state`].
    pub fn user_state(&self) -> RedisUserState {
        RedisUserState::new(self.conn.clone(), self.keys.clone())
    }

    /// The `resources/subscribe` subscriptions on this Redis ([`RedisSubscriptions`]), for
    /// [`Backends::subscriptions`].
    pub fn subscription_store(&self) -> RedisSubscriptions {
        RedisSubscriptions::new(self.conn.clone(), self.keys.clone())
    }

    /// The buckets of the rate limit `name` on this Redis ([`RedisRateLimits`]), for
    /// [`RateLimitLayer::shared`](wymcp::middleware::RateLimitLayer::shared): give each
    /// rate-limit layer its own name, the same on every node.
    pub fn rate_limits(&self, name: &str) -> RedisRateLimits {
        RedisRateLimits::new(self.conn.clone(), self.keys.rate_limit(name))
    }

    /// The bus between nodes on this Redis (pub/sub).
    pub fn bus(&self) -> RedisBus {
        RedisBus::new(self.client.clone(), self.conn.clone(), self.keys.clone())
    }

    /// The requestState keys every node shares (the stateless era's multi round-trip
    /// requests, sealed by one node, are opened by any): 32 random bytes, made by the first
    /// node to ask and kept in Redis (anyone who can read Redis can read them, as they can
    /// read the sessions).
    pub async fn request_state_keys(&self) -> Result<RequestStateKeys, crate::Error> {
        let mut conn = self.conn.clone();
        let key = self.keys.request_state_key();
        let mut fresh = [0u8; 32];
        getrandom::fill(&mut fresh).map_err(|err| {
            redis::RedisError::from((
                redis::ErrorKind::Client,
                "the operating system gave no random bytes for the requestState key",
                err.to_string(),
            ))
        })?;
        let _: bool = conn.set_nx(&key, fresh.as_slice()).await?;
        let stored: Vec<u8> = conn.get(&key).await?;
        RequestStateKeys::new(stored).map_err(|err| {
            redis::RedisError::from((
                redis::ErrorKind::Client,
                "the stored requestState key is refused",
                err.to_string(),
            ))
        })
    }
}
