//! The gateway's errors: a configuration it cannot read ([`ConfigError`]), and why a call
//! that needed an upstream was refused ([`UpstreamError`]).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use wymcp::client::ClientError;

/// A configuration the gateway cannot read. Each names the server (the key of `mcpServers`)
/// and the key at fault.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_CONFIG_BYTES`](crate::config::MAX_CONFIG_BYTES).
    #[error("the configuration is larger than {max} bytes")]
    TooLarge {
        /// The limit.
        max: u64,
    },
    /// Not the `mcpServers` JSON.
    #[error("not an mcpServers configuration: {0}")]
    Json(#[source] serde_json::Error),
    /// A server gives neither `command` nor `url`.
    #[error("server {server:?}: none of \"command\", \"url\" and \"openapi\" is given")]
    NoTarget {
        /// The server.
        server: String,
    },
    /// A server gives both `command` and `url`.
    #[error(
        "server {server:?}: more than one of \"command\", \"url\" and \"openapi\" is given; give one"
    )]
    BothTargets {
        /// The server.
        server: String,
    },
    /// A key's value is not one the gateway knows.
    #[error("server {server:?}: {key:?} is {value:?}; expected {expected}")]
    Value {
        /// The server.
        server: String,
        /// The key.
        key: &'static str,
        /// The value given.
        value: String,
        /// What it may be.
        expected: &'static str,
    },
}

/// Why a call that needed an upstream was refused: every variant's text names the upstream
/// and the reason, and is what the downstream caller reads (an `isError` result).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UpstreamError {
    /// The upstream did not answer within its timeout (the request was cancelled upstream).
    #[error("upstream {upstream}: no answer within {after:?} (timeout_ms)")]
    Timeout {
        /// The upstream.
        upstream: String,
        /// The timeout.
        after: Duration,
    },
    /// The upstream is down (it exited, or could not be started) and is restarted with
    /// backoff; this call came before the next attempt was due.
    #[error("upstream {upstream}: unavailable ({reason}); next restart attempt in {retry_in:?}")]
    Down {
        /// The upstream.
        upstream: String,
        /// Why it went down.
        reason: String,
        /// When the next attempt is due.
        retry_in: Duration,
    },
    /// The downstream caller cancelled the call (cancelled upstream too).
    #[error("upstream {upstream}: the call was cancelled")]
    Cancelled {
        /// The upstream.
        upstream: String,
    },
    /// The exchange with the upstream failed: it exited mid-call, answered what is not MCP,
    /// answered more than a limit allows, or refused the request.
    #[error("upstream {upstream}: {source}")]
    Client {
        /// The upstream.
        upstream: String,
        /// What the client says failed.
        #[source]
        source: ClientError,
    },
}

impl UpstreamError {
    /// The upstream's name.
    pub fn upstream(&self) -> &str {
        match self {
            UpstreamError::Timeout { upstream, .. }
            | UpstreamError::Down { upstream, .. }
            | UpstreamError::Cancelled { upstream }
            | UpstreamError::Client { upstream, .. } => upstream,
        }
    }

    /// The JSON-RPC error code the upstream answered, when it answered one.
    pub(crate) fn rpc_code(&self) -> Option<i64> {
        match self {
            UpstreamError::Client { source, .. } => source.rpc_error().map(|e| e.code()),
            _ => None,
        }
    }

    /// The JSON-RPC error the upstream answered, when it answered one.
    pub(crate) fn rpc_error(&self) -> Option<&wymcp::RpcError> {
        match self {
            UpstreamError::Client { source, .. } => source.rpc_error(),
            _ => None,
        }
    }

    /// The `data` of the JSON-RPC error the upstream answered, when it answered one with data.
    pub(crate) fn rpc_data(&self) -> Option<&Value> {
        match self {
            UpstreamError::Client { source, .. } => source.rpc_error()?.data(),
            _ => None,
        }
    }

    /// The reason alone, without the leading `upstream NAME: `.
    pub fn reason(&self) -> String {
        let text = self.to_string();
        let prefix = format!("upstream {}: ", self.upstream());
        match text.strip_prefix(&prefix) {
            Some(reason) => reason.to_owned(),
            None => text,
        }
    }

    /// The error of a client call to `upstream`.
    pub(crate) fn client(upstream: &str, source: ClientError) -> Self {
        if let ClientError::Timeout { after, .. } = source {
            return UpstreamError::Timeout {
                upstream: upstream.to_owned(),
                after,
            };
        }
        UpstreamError::Client {
            upstream: upstream.to_owned(),
            source,
        }
    }

    /// Whether the connection is over and the upstream must be reconnected (restarted).
    pub(crate) fn ends_connection(&self) -> bool {
        match self {
            UpstreamError::Client { source, .. } => matches!(
                source,
                ClientError::Closed { .. }
                    | ClientError::Transport { .. }
                    | ClientError::Spawn { .. }
                    | ClientError::LimitExceeded {
                        limit: wymcp::client::Limit::LineBytes { .. },
                        ..
                    }
                    // An HTTP session the upstream no longer knows.
                    | ClientError::Status { status: 404, .. }
            ),
            _ => false,
        }
    }
}
