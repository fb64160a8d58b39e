//! MCP protocol revisions, as an ordered enum with named predicates.

use std::fmt;
use std::str::FromStr;

/// A revision of the Model Context Protocol that wymcp speaks.
///
/// Revisions are ordered by date, so `version >= ProtocolVersion::V2025_06_18` reads as
/// "this revision or a later one". Prefer the named predicates
/// ([`supports_tool_title`](Self::supports_tool_title), ...) over comparisons in feature code:
/// they say *why* a field is gated.
///
/// ```
/// use wymcp::ProtocolVersion;
///
/// let v: ProtocolVersion = "2025-06-18".parse().unwrap();
/// assert!(v.supports_output_schema());
/// assert_eq!(v.as_str(), "2025-06-18");
/// assert!("1999-01-01".parse::<ProtocolVersion>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// 2025-03-26: Streamable HTTP, batches, no titles or output schemas.
    V2025_03_26,
    /// 2025-06-18: titles, output schemas and structured content, elicitation; no batches.
    V2025_06_18,
    /// 2025-11-25: icons, URL-mode elicitation, tasks.
    V2025_11_25,
    /// 2026-07-28: the stateless era (no sessions, per-request `_meta`).
    V2026_07_28,
}

impl ProtocolVersion {
    /// Every revision wymcp speaks, oldest first.
    pub const ALL: [ProtocolVersion; 4] = [
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// The revisions of the session era (`initialize` and sessions), oldest first.
    pub const SESSION_ERA: [ProtocolVersion; 3] = [
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
    ];

    /// The newest revision that uses `initialize` and sessions.
    pub const LATEST_SESSION_ERA: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The revision's wire string, e.g. `"2025-06-18"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// Tool definitions may carry `title` (added in 2025-06-18).
    pub fn supports_tool_title(self) -> bool {
        self >= ProtocolVersion::V2025_06_18
    }

    /// Tool definitions may carry `outputSchema`, results `structuredContent` (2025-06-18).
    pub fn supports_output_schema(self) -> bool {
        self >= ProtocolVersion::V2025_06_18
    }

    /// JSON-RPC batches are accepted (2025-03-26 only).
    pub fn supports_batches(self) -> bool {
        self == ProtocolVersion::V2025_03_26
    }

    /// `serverInfo` and definitions may carry `icons`, `websiteUrl`, `description` (2025-11-25).
    pub fn supports_icons(self) -> bool {
        self >= ProtocolVersion::V2025_11_25
    }

    /// The `MCP-Protocol-Version` header is sent on every request after `initialize`, so a
    /// strict server may check it against the session's (2025-06-18).
    pub fn has_version_header(self) -> bool {
        self >= ProtocolVersion::V2025_06_18
    }

    /// Elicitation (`elicitation/create`) exists (2025-06-18); its URL mode came in 2025-11-25
    /// ([`supports_url_elicitation`](Self::supports_url_elicitation)).
    pub fn supports_elicitation(self) -> bool {
        self >= ProtocolVersion::V2025_06_18
    }

    /// URL-mode elicitation exists (2025-11-25).
    pub fn supports_url_elicitation(self) -> bool {
        self >= ProtocolVersion::V2025_11_25
    }

    /// Results and content items may carry `_meta`; content may be a `resource_link`
    /// (2025-06-18).
    pub fn supports_meta(self) -> bool {
        self >= ProtocolVersion::V2025_06_18
    }

    /// The revision is served statelessly, without `initialize` or sessions.
    pub fn is_stateless(self) -> bool {
        self >= ProtocolVersion::V2026_07_28
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of parsing a revision string wymcp does not speak.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unsupported protocol version")]
pub struct UnsupportedVersion;

impl FromStr for ProtocolVersion {
    type Err = UnsupportedVersion;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProtocolVersion::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or(UnsupportedVersion)
    }
}
