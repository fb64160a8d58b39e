//! [`WireHeaders`]: the request headers the MCP routes read, found in one pass over the map.
//!
//! A POST reads a dozen headers, several of them twice (a singleton is counted by the wire
//! checks, then its value read by a later step). Each `HeaderMap` lookup hashes the name it
//! looks for, and `mcp-protocol-version` is 20 bytes: one pass over the few headers a request
//! carries, comparing names, costs less than three lookups (docs/performance-history.md, "One pass
//! over the headers").

use axum::http::{HeaderMap, HeaderValue};

use crate::protocol::ProtocolVersion;
use crate::protocol::headers::{METHOD, NAME, PROTOCOL_VERSION, SESSION_ID};

/// The `Mcp-Session-Id` header.
pub const SESSION_HEADER: &str = SESSION_ID;
/// The `MCP-Protocol-Version` header.
pub const VERSION_HEADER: &str = PROTOCOL_VERSION;

/// A header as found: its first value, and whether it came more than once.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Found<'h> {
    pub(crate) first: Option<&'h HeaderValue>,
    pub(crate) repeated: bool,
}

impl<'h> Found<'h> {
    fn add(&mut self, value: &'h HeaderValue) {
        match self.first {
            None => self.first = Some(value),
            Some(_) => self.repeated = true,
        }
    }

    /// The first value as text (`None`: absent, or not visible ASCII).
    pub(crate) fn text(&self) -> Option<&'h str> {
        self.first.and_then(|v| v.to_str().ok())
    }
}

/// The headers of one request that the routes read, and the map they came from (for the rest:
/// auth's `Authorization`, forwarding, `Last-Event-ID`, a stateless request's `Mcp-Param-*`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct WireHeaders<'h> {
    pub(crate) map: &'h HeaderMap,
    pub(crate) host: Found<'h>,
    pub(crate) origin: Found<'h>,
    pub(crate) accept: Found<'h>,
    pub(crate) content_type: Found<'h>,
    pub(crate) content_length: Found<'h>,
    /// `Mcp-Session-Id`.
    pub(crate) session: Found<'h>,
    /// `MCP-Protocol-Version`.
    pub(crate) version: Found<'h>,
    /// `Mcp-Method` (the stateless era's routing header).
    pub(crate) method: Found<'h>,
    /// `Mcp-Name` (the stateless era's routing header).
    pub(crate) name: Found<'h>,
}

impl<'h> WireHeaders<'h> {
    /// `MCP-Protocol-Version`, read as a revision.
    pub(crate) fn version_header(&self) -> VersionHeader<'h> {
        VersionHeader::of(self.version)
    }

    /// One pass over `map` (a repeated header is seen once per value).
    pub(crate) fn of(map: &'h HeaderMap) -> Self {
        let mut found = WireHeaders {
            map,
            host: Found::default(),
            origin: Found::default(),
            accept: Found::default(),
            content_type: Found::default(),
            content_length: Found::default(),
            session: Found::default(),
            version: Found::default(),
            method: Found::default(),
            name: Found::default(),
        };
        for (name, value) in map {
            // Names are stored lower-cased: the match is exact.
            let slot = match name.as_str() {
                "host" => &mut found.host,
                "origin" => &mut found.origin,
                "accept" => &mut found.accept,
                "content-type" => &mut found.content_type,
                "content-length" => &mut found.content_length,
                SESSION_ID => &mut found.session,
                PROTOCOL_VERSION => &mut found.version,
                METHOD => &mut found.method,
                NAME => &mut found.name,
                _ => continue,
            };
            slot.add(value);
        }
        found
    }

    /// Every `Accept` line (usually one).
    pub(crate) fn accept_lines(&self) -> impl Iterator<Item = &'h HeaderValue> {
        // A repeated `Accept` is read from the map; a single one is the value found.
        let (one, all) = match self.accept.repeated {
            false => (self.accept.first, None),
            true => (None, Some(self.map.get_all(axum::http::header::ACCEPT))),
        };
        one.into_iter().chain(all.into_iter().flatten())
    }
}

/// A request's `MCP-Protocol-Version` header, read once: the era test and the session era's
/// check both need it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum VersionHeader<'h> {
    Absent,
    NotText,
    /// The raw text, and the revision it names (`None`: none this server knows).
    Text(&'h str, Option<ProtocolVersion>),
}

impl<'h> VersionHeader<'h> {
    fn of(found: Found<'h>) -> Self {
        match found.first {
            None => VersionHeader::Absent,
            Some(value) => match value.to_str() {
                Ok(raw) => VersionHeader::Text(raw, raw.trim().parse().ok()),
                Err(_) => VersionHeader::NotText,
            },
        }
    }

    /// The header names a stateless (2026-07-28) revision.
    pub(crate) fn names_stateless(self) -> bool {
        matches!(self, VersionHeader::Text(_, Some(v)) if v.is_stateless())
    }

    /// The session era's reading: the revision named, none, or the header's text when it names
    /// no session-era revision.
    pub(crate) fn session_era(self) -> Result<Option<ProtocolVersion>, &'h str> {
        match self {
            VersionHeader::Absent => Ok(None),
            VersionHeader::NotText => Err("<not text>"),
            VersionHeader::Text(_, Some(v)) if !v.is_stateless() => Ok(Some(v)),
            VersionHeader::Text(raw, _) => Err(raw),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn finds_each_header_and_notes_a_repeat() {
        let headers = map(&[
            ("Host", "127.0.0.1:8080"),
            ("Mcp-Session-Id", "abc"),
            ("mcp-session-id", "def"),
            ("MCP-Protocol-Version", "2025-06-18"),
            ("X-Other", "1"),
        ]);
        let wire = WireHeaders::of(&headers);
        assert_eq!(wire.host.text(), Some("127.0.0.1:8080"));
        assert!(!wire.host.repeated);
        assert_eq!(wire.session.text(), Some("abc"));
        assert!(wire.session.repeated);
        assert_eq!(wire.version.text(), Some("2025-06-18"));
        assert!(wire.origin.first.is_none() && wire.method.first.is_none());
    }

    #[test]
    fn gives_every_accept_line() {
        let one = map(&[("Accept", "application/json")]);
        let lines: Vec<_> = WireHeaders::of(&one).accept_lines().collect();
        assert_eq!(lines, [&HeaderValue::from_static("application/json")]);
        let two = map(&[
            ("Accept", "application/json"),
            ("Accept", "text/event-stream"),
        ]);
        let lines: Vec<_> = WireHeaders::of(&two).accept_lines().collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1], "text/event-stream");
        assert_eq!(WireHeaders::of(&HeaderMap::new()).accept_lines().count(), 0);
    }
}
