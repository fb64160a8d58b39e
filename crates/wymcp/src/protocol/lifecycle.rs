//! The lifecycle: `initialize` version negotiation and result, and log levels.

use serde_json::{Map, Value, json};

use super::ProtocolVersion;
use crate::Server;

/// Negotiates the revision of a session from `initialize`'s `params.protocolVersion`: a
/// supported session-era revision is echoed; anything else (unknown, `2024-11-05`, the
/// stateless era, missing, not a string) is answered with the latest session-era revision.
///
/// ```
/// use serde_json::json;
/// use wymcp::ProtocolVersion;
/// use wymcp::protocol::negotiate;
///
/// assert_eq!(negotiate(Some(&json!("2025-03-26"))), ProtocolVersion::V2025_03_26);
/// assert_eq!(negotiate(Some(&json!("2024-11-05"))), ProtocolVersion::LATEST_SESSION_ERA);
/// assert_eq!(negotiate(None), ProtocolVersion::LATEST_SESSION_ERA);
/// ```
pub fn negotiate(requested: Option<&Value>) -> ProtocolVersion {
    requested
        .and_then(Value::as_str)
        .and_then(|s| s.parse::<ProtocolVersion>().ok())
        .filter(|v| !v.is_stateless())
        .unwrap_or(ProtocolVersion::LATEST_SESSION_ERA)
}

/// The `InitializeResult` for `version`: the negotiated revision, the capabilities the server
/// has ([`Server::capabilities`]: tools with `listChanged` and logging always; resources,
/// prompts and completions only when configured), `serverInfo` gated by revision, and `instructions` when configured.
pub fn initialize_result(server: &Server, version: ProtocolVersion) -> Value {
    let mut result = Map::new();
    result.insert("protocolVersion".to_owned(), json!(version.as_str()));
    result.insert("capabilities".to_owned(), server.capabilities(version));
    result.insert("serverInfo".to_owned(), server.info().to_value(version));
    if let Some(instructions) = server.instructions() {
        result.insert("instructions".to_owned(), json!(instructions));
    }
    Value::Object(result)
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
