//! The lifecycle: `initialize` version negotiation, and log levels.

use serde_json::Value;

use super::ProtocolVersion;

/// Negotiates the revision of a session from `initialize`'s `params.protocolVersion`: a
/// supported session-era revision is echoed; anything else (unknown, `2024-11-05`, the
/// stateless era, missing, not a string) is answered with the latest session-era revision.
pub(crate) fn negotiate(requested: Option<&Value>) -> ProtocolVersion {
    requested
        .and_then(Value::as_str)
        .and_then(|s| s.parse::<ProtocolVersion>().ok())
        .filter(|v| !v.is_stateless())
        .unwrap_or(ProtocolVersion::LATEST_SESSION_ERA)
}

/// A `logging/setLevel` level (RFC 5424 severities), least severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// `debug`.
    Debug,
    /// `info`.
    Info,
    /// `notice`.
    Notice,
    /// `warning`.
    Warning,
    /// `error`.
    Error,
    /// `critical`.
    Critical,
    /// `alert`.
    Alert,
    /// `emergency`.
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    /// The level named `name`.
    pub fn parse(name: &str) -> Option<LogLevel> {
        LogLevel::ALL.into_iter().find(|l| l.as_str() == name)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::negotiate;
    use crate::ProtocolVersion;

    #[test]
    fn a_session_era_revision_is_echoed_anything_else_is_the_latest() {
        let latest = ProtocolVersion::LATEST_SESSION_ERA;
        assert_eq!(
            negotiate(Some(&json!("2025-03-26"))),
            ProtocolVersion::V2025_03_26
        );
        assert_eq!(negotiate(Some(&json!("2024-11-05"))), latest);
        assert_eq!(negotiate(Some(&json!("2026-07-28"))), latest);
        assert_eq!(negotiate(None), latest);
    }
}
