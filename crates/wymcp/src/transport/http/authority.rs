//! Strict reading of the authorities a request names: the `Host` header (`host[:port]`,
//! RFC 9110 §7.2) and the `Origin` header (`scheme://host[:port]`, RFC 6454 §7).
//!
//! The host is a DNS name or IPv4 address (letters, digits, `-`, `.`, `_`, `~`), or an IPv6
//! literal in brackets that parses as an IPv6 address; the port, when there is a `:`, is at
//! most five digits up to 65535. Anything else (`[::1].evil.com`, `a@b`, `host:port:port`,
//! spaces, a path) is not an authority: it is refused, never cut down to a prefix that
//! happens to be allowed. Both run on every request: they read bytes in place and allocate
//! nothing.

use std::net::Ipv6Addr;

/// The host of an authority `host[:port]`, as written (brackets kept for IPv6), or `None` when
/// `text` is not one.
pub(crate) fn authority_host(text: &str) -> Option<&str> {
    let (host, port) = if text.starts_with('[') {
        let end = text.find(']')?;
        let literal = &text[1..end];
        literal.parse::<Ipv6Addr>().ok()?;
        let rest = &text[end + 1..];
        let port = match rest {
            "" => None,
            _ => Some(rest.strip_prefix(':')?),
        };
        (&text[..=end], port)
    } else {
        // One pass: the host's bytes are checked up to the first `:` (a `str::split_once`
        // first would search the text twice; this runs on every request).
        let mut end = text.len();
        for (i, b) in text.bytes().enumerate() {
            if b == b':' {
                end = i;
                break;
            }
            if !HOST_BYTE[usize::from(b)] {
                return None;
            }
        }
        if end == 0 {
            return None;
        }
        let port = text.get(end + 1..);
        (&text[..end], port)
    };
    match port {
        None => Some(host),
        Some(port) if port_valid(port) => Some(host),
        Some(_) => None,
    }
}

/// The bytes of a host name or IPv4 address: letters, digits, `-`, `.`, `_`, `~` (one load
/// per byte on every request's `Host`).
static HOST_BYTE: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~');
        b += 1;
    }
    table
};

/// RFC 3986 allows an empty port (`host:`); a present one is at most 65535.
fn port_valid(port: &str) -> bool {
    port.is_empty()
        || (port.len() <= 5
            && port.bytes().all(|b| b.is_ascii_digit())
            && port.parse::<u32>().is_ok_and(|n| n <= 65_535))
}

/// The host of a serialized origin `scheme://host[:port]`, or `None` when `origin` is not one
/// (`null`, a path, an invalid authority).
pub(crate) fn origin_host(origin: &str) -> Option<&str> {
    let (scheme, authority) = origin.split_once("://")?;
    let mut scheme_bytes = scheme.bytes();
    let scheme_valid = scheme_bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && scheme_bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    if !scheme_valid {
        return None;
    }
    authority_host(authority)
}

/// A configured host name compared with a parsed one: case-insensitive, port ignored, IPv6
/// with or without brackets (`::1` and `[::1]` name the same host).
pub(crate) fn same_host(configured: &str, host: &str) -> bool {
    let configured = configured.trim();
    let configured = authority_host(configured).unwrap_or(configured);
    unbracketed(configured).eq_ignore_ascii_case(unbracketed(host))
}

/// The host names allowed when no `allowed_hosts` list is configured, without brackets.
const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Whether a parsed host is a loopback name (`localhost`, `127.0.0.1`, `[::1]`, any case):
/// compared in place, on every request when no host list is configured.
pub(crate) fn is_loopback_name(host: &str) -> bool {
    let host = unbracketed(host);
    LOOPBACK_NAMES
        .iter()
        .any(|name| name.eq_ignore_ascii_case(host))
}

fn unbracketed(host: &str) -> &str {
    host.strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host)
}

#[cfg(test)]
mod tests {
    use super::{authority_host, is_loopback_name, origin_host, same_host};

    #[test]
    fn an_authority_is_a_host_and_an_optional_port() {
        for (text, host) in [
            ("localhost", "localhost"),
            ("localhost:8080", "localhost"),
            ("LocalHost:1", "LocalHost"),
            ("127.0.0.1:65535", "127.0.0.1"),
            ("[::1]", "[::1]"),
            ("[::1]:3000", "[::1]"),
            ("mcp.example.com:", "mcp.example.com"),
        ] {
            assert_eq!(authority_host(text), Some(host), "{text}");
        }
    }

    #[test]
    fn anything_else_is_refused_whole() {
        for text in [
            "",
            "[::1].evil.com",
            "[::1]evil",
            "[::1]:80:80",
            "[evil]",
            "[::1",
            "localhost:80:80",
            "localhost:65536",
            "localhost:123456",
            "localhost:8o",
            "user@localhost",
            "local host",
            "localhost/path",
            ":80",
            "évil.com",
        ] {
            assert_eq!(authority_host(text), None, "{text}");
        }
    }

    #[test]
    fn an_origin_is_a_scheme_and_an_authority() {
        assert_eq!(origin_host("http://localhost:5173"), Some("localhost"));
        assert_eq!(origin_host("https://[::1]"), Some("[::1]"));
        for origin in [
            "null",
            "localhost",
            "http://",
            "http://[::1].evil.com",
            "http://localhost/",
            "http://localhost:80/path",
            "1http://localhost",
            "://localhost",
        ] {
            assert_eq!(origin_host(origin), None, "{origin}");
        }
    }

    #[test]
    fn configured_hosts_compare_without_case_port_or_brackets() {
        assert!(same_host("LOCALHOST", "localhost"));
        assert!(same_host("mcp.example:8443", "mcp.example"));
        assert!(same_host("::1", "[::1]"));
        assert!(same_host("[::1]", "[::1]"));
        assert!(!same_host("mcp.example", "mcp.example.evil"));
    }

    #[test]
    fn the_loopback_names_are_localhost_127_0_0_1_and_bracketed_1() {
        for host in ["localhost", "LOCALHOST", "127.0.0.1", "[::1]"] {
            assert!(is_loopback_name(host), "{host}");
        }
        for host in ["localhost.evil", "127.0.0.2", "[::2]", "::1x", "evil"] {
            assert!(!is_loopback_name(host), "{host}");
        }
    }
}
