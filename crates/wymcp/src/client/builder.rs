//! [`ClientBuilder`]: where a client connects, with what headers, speaking which revisions,
//! and the limits on what a server can make it hold.

use std::time::Duration;

use crate::protocol::ProtocolVersion;

use super::{Client, ClientError};

/// The default [`ClientBuilder::timeout`]: 30 seconds.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// The default [`ClientBuilder::max_answer_bytes`]: 16 MiB.
pub const DEFAULT_MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;
/// The default [`ClientBuilder::max_event_bytes`]: 4 MiB.
pub const DEFAULT_MAX_EVENT_BYTES: usize = 4 * 1024 * 1024;
/// The default [`ClientBuilder::max_notifications`]: 1024.
pub const DEFAULT_MAX_NOTIFICATIONS: usize = 1024;
/// The default [`ClientBuilder::max_pages`]: 100.
pub const DEFAULT_MAX_PAGES: usize = 100;

/// What a [`Client`] is built with; [`Client::builder`] starts one.
///
/// ```no_run
/// use std::time::Duration;
/// use wymcp::client::Client;
///
/// # async fn run() -> Result<(), wymcp::client::ClientError> {
/// let client = Client::builder("http://127.0.0.1:8080/mcp")
///     .bearer_token("s3cret")
///     .header("x-tenant", "acme")
///     .timeout(Duration::from_secs(10))
///     .max_answer_bytes(1 << 20)
///     .connect()
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
#[must_use = "a builder does nothing until `connect`"]
pub struct ClientBuilder {
    pub(crate) url: String,
    /// Name, value, and whether the value is a secret (kept out of `Debug`).
    pub(crate) headers: Vec<(String, String, bool)>,
    pub(crate) settings: Settings,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(name, value, secret)| (name.as_str(), if *secret { "<secret>" } else { value }))
            .collect();
        f.debug_struct("ClientBuilder")
            .field("url", &self.url)
            .field("headers", &headers)
            .field("settings", &self.settings)
            .finish()
    }
}

/// The settings a connected client keeps.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) timeout: Duration,
    pub(crate) max_answer_bytes: usize,
    pub(crate) max_event_bytes: usize,
    pub(crate) max_notifications: usize,
    pub(crate) max_pages: usize,
    /// Newest first.
    pub(crate) versions: Vec<ProtocolVersion>,
    pub(crate) name: String,
    pub(crate) version: String,
}

impl ClientBuilder {
    pub(crate) fn new(url: impl Into<String>) -> Self {
        ClientBuilder {
            url: url.into(),
            headers: Vec::new(),
            settings: Settings {
                timeout: DEFAULT_TIMEOUT,
                max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES,
                max_event_bytes: DEFAULT_MAX_EVENT_BYTES,
                max_notifications: DEFAULT_MAX_NOTIFICATIONS,
                max_pages: DEFAULT_MAX_PAGES,
                versions: ProtocolVersion::ALL.into_iter().rev().collect(),
                name: "wymcp-client".to_owned(),
                version: env!("CARGO_PKG_VERSION").to_owned(),
            },
        }
    }

    /// A header sent on every request (checked at [`connect`](Self::connect): an invalid one
    /// is [`ClientError::InvalidHeader`]).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into(), false));
        self
    }

    /// `Authorization: Bearer <token>` on every request (kept out of `Debug` output: the
    /// builder's and the HTTP library's, where the value is marked sensitive).
    pub fn bearer_token(mut self, token: impl AsRef<str>) -> Self {
        let value = format!("Bearer {}", token.as_ref());
        self.headers.push(("authorization".to_owned(), value, true));
        self
    }

    /// The time each request may take, from sending it to reading its answer (the handshake's
    /// requests included); past it the call fails with [`ClientError::Timeout`]. Default
    /// [`DEFAULT_TIMEOUT`].
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.settings.timeout = timeout;
        self
    }

    /// The most bytes of one answer's body the client reads (for an SSE answer, the stream up
    /// to the response); more is refused with [`Limit::AnswerBytes`](super::Limit::AnswerBytes).
    /// Default [`DEFAULT_MAX_ANSWER_BYTES`].
    pub fn max_answer_bytes(mut self, bytes: usize) -> Self {
        self.settings.max_answer_bytes = bytes;
        self
    }

    /// The most bytes of one SSE event the client holds; more is refused with
    /// [`Limit::EventBytes`](super::Limit::EventBytes). Default [`DEFAULT_MAX_EVENT_BYTES`].
    pub fn max_event_bytes(mut self, bytes: usize) -> Self {
        self.settings.max_event_bytes = bytes;
        self
    }

    /// The most notifications queued until [`Client::drain_notifications`]; later ones are
    /// dropped and counted ([`Client::dropped_notifications`]), the calls they came with still
    /// answered. Default [`DEFAULT_MAX_NOTIFICATIONS`].
    pub fn max_notifications(mut self, max: usize) -> Self {
        self.settings.max_notifications = max;
        self
    }

    /// The most pages one listing ([`Client::list_tools`]) follows; a server with more is
    /// refused with [`Limit::Pages`](super::Limit::Pages). Default [`DEFAULT_MAX_PAGES`].
    pub fn max_pages(mut self, max: usize) -> Self {
        self.settings.max_pages = max;
        self
    }

    /// The revisions the client may speak (default: every one wymcp speaks). With a stateless
    /// one (2026-07-28) the client asks `server/discover` first; without, it goes straight to
    /// `initialize` with the newest session-era one given.
    ///
    /// ```
    /// use wymcp::ProtocolVersion;
    /// use wymcp::client::Client;
    ///
    /// // Pinned to the session era, whatever the server offers.
    /// let builder = Client::builder("http://127.0.0.1:8080/mcp").versions(ProtocolVersion::SESSION_ERA);
    /// ```
    pub fn versions(mut self, versions: impl IntoIterator<Item = ProtocolVersion>) -> Self {
        let mut versions: Vec<ProtocolVersion> = versions.into_iter().collect();
        versions.sort_unstable_by(|a, b| b.cmp(a));
        versions.dedup();
        self.settings.versions = versions;
        self
    }

    /// The `clientInfo` sent (default `wymcp-client` and wymcp's version).
    pub fn client_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.settings.name = name.into();
        self.settings.version = version.into();
        self
    }

    /// Connects: negotiates the era and, in the session era, opens the session.
    pub async fn connect(self) -> Result<Client, ClientError> {
        Client::connect(self).await
    }
}

#[cfg(test)]
mod tests {
    use super::ClientBuilder;

    #[test]
    fn a_bearer_token_stays_out_of_debug_output() {
        let builder = ClientBuilder::new("http://127.0.0.1:1/mcp")
            .bearer_token("s3cret")
            .header("x-tenant", "acme");
        let shown = format!("{builder:?}");
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(
            shown.contains("acme") && shown.contains("<secret>"),
            "{shown}"
        );
    }
}
