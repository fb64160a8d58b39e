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

/// A client address as it is counted: an IPv4 address as it is (an IPv4-mapped IPv6 address
/// is its IPv4 address, so one client is not two), an IPv6 address by its /64, the least a site
/// is given (a client holding a /64 holds every address in it: counted one by one, seven
/// addresses of one /64 held seven times the quota).
pub(crate) fn network(address: std::net::IpAddr) -> String {
    match address.to_canonical() {
        std::net::IpAddr::V4(v4) => v4.to_string(),
        std::net::IpAddr::V6(v6) => {
            let prefix = u128::from(v6) & !((1u128 << 64) - 1);
            format!("{}/64", std::net::Ipv6Addr::from(prefix))
        }
    }
}
