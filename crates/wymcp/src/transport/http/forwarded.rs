//! The client's address behind a reverse proxy: `X-Forwarded-For`, believed only from the
//! proxies the server was told to trust.
//!
//! A session is counted against its client's address when there is no auth
//! ([`Limits::max_sessions_per_client`](crate::Limits::max_sessions_per_client)). Behind a
//! reverse proxy every request comes from the proxy's address; with that address listed in
//! [`HttpConfig::trusted_proxies`](super::HttpConfig::trusted_proxies), the client is the
//! right-most `X-Forwarded-For` entry that is not itself a trusted proxy. The header of a peer
//! that is not trusted is ignored (anyone can write it).

use std::net::IpAddr;

use axum::http::HeaderMap;

/// `X-Forwarded-For` entries read at most, from the right: a hop chain longer than this is
/// answered with the last entry read.
pub(crate) const MAX_HOPS: usize = 16;

/// The address sessions are counted against: `peer`, or, when `peer` is a trusted proxy, the
/// right-most `X-Forwarded-For` entry that is not a trusted proxy (the last entry read when
/// they all are, or when one does not parse as an IP address, the hop after it).
pub(crate) fn client_address(peer: IpAddr, headers: &HeaderMap, trusted: &[IpAddr]) -> IpAddr {
    if !trusted.contains(&peer) {
        return peer;
    }
    let hops = headers
        .get_all("x-forwarded-for")
        .iter()
        .rev()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.rsplit(','))
        .take(MAX_HOPS);
    let mut client = peer;
    for hop in hops {
        let Some(address) = parse_hop(hop) else {
            break;
        };
        client = address;
        if !trusted.contains(&address) {
            break;
        }
    }
    client
}

/// One entry: an IP address, possibly with a port (`203.0.113.7:4711`, `[2001:db8::1]:80`).
fn parse_hop(hop: &str) -> Option<IpAddr> {
    let hop = hop.trim();
    if let Ok(address) = hop.parse() {
        return Some(address);
    }
    if let Some(rest) = hop.strip_prefix('[') {
        return rest.split_once(']')?.0.parse().ok();
    }
    hop.rsplit_once(':')?.0.parse().ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append("x-forwarded-for", value.parse().unwrap());
        }
        headers
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_writes() {
        let peer = ip("198.51.100.1");
        let forged = headers(&["203.0.113.7"]);
        assert_eq!(client_address(peer, &forged, &[]), peer);
        assert_eq!(client_address(peer, &forged, &[ip("127.0.0.1")]), peer);
    }

    #[test]
    fn behind_trusted_proxies_the_right_most_untrusted_hop_is_the_client() {
        let proxy = ip("127.0.0.1");
        let inner = ip("10.0.0.2");
        let trusted = [proxy, inner];
        // A client's own forged entries are left of what the proxies appended.
        let chain = headers(&["6.6.6.6, 203.0.113.7", "10.0.0.2"]);
        assert_eq!(client_address(proxy, &chain, &trusted), ip("203.0.113.7"));
        assert_eq!(
            client_address(proxy, &headers(&["[2001:db8::1]:443"]), &trusted),
            ip("2001:db8::1")
        );
        assert_eq!(
            client_address(proxy, &headers(&["203.0.113.7:4711"]), &trusted),
            ip("203.0.113.7")
        );
        // No header: the proxy itself; garbage: the last hop that parsed.
        assert_eq!(client_address(proxy, &HeaderMap::new(), &trusted), proxy);
        assert_eq!(
            client_address(proxy, &headers(&["unknown, 10.0.0.2"]), &trusted),
            inner
        );
    }

    #[test]
    fn at_most_max_hops_entries_are_read() {
        let proxy = ip("127.0.0.1");
        let long = vec!["127.0.0.1"; MAX_HOPS + 5].join(",");
        let chain = headers(&[&format!("203.0.113.7,{long}")]);
        assert_eq!(client_address(proxy, &chain, &[proxy]), proxy);
    }
}
