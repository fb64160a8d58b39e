//! [`Origin`]: where a call came from (its transport, the client's address), as the serving
//! core knows it. Operation middleware keys its policies on it.

use std::net::IpAddr;

/// The transport a call arrived on.
///
/// ```
/// use wymcp::middleware::TransportKind;
///
/// assert_eq!(TransportKind::Http.as_str(), "http");
/// assert_eq!(TransportKind::default(), TransportKind::Direct);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum TransportKind {
    /// Streamable HTTP.
    Http,
    /// stdio: one client, the process that started the server.
    Stdio,
    /// No transport: a tool called directly through the testing kit
    /// ([`testing::call_tool`](crate::testing::call_tool), [`TestClient`](crate::testing::TestClient)).
    #[default]
    Direct,
}

impl TransportKind {
    /// `"http"`, `"stdio"` or `"direct"` (the `network.transport`-like name telemetry uses).
    pub const fn as_str(self) -> &'static str {
        match self {
            TransportKind::Http => "http",
            TransportKind::Stdio => "stdio",
            TransportKind::Direct => "direct",
        }
    }
}

/// Where a call came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Origin {
    pub(crate) transport: TransportKind,
    /// The client's address, when the transport knows it (HTTP).
    pub(crate) client: Option<IpAddr>,
}
