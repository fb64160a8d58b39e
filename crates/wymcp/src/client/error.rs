//! [`ClientError`]: every way a client call fails, and [`Limit`]: the bound a refusal names.

use std::fmt;
use std::time::Duration;

use crate::protocol::RpcError;

/// A bound on what a server can make the client hold, as a refusal names it: which limit,
/// its value, and the [`ClientBuilder`](super::ClientBuilder) method that sets it.
///
/// ```
/// use wymcp::client::Limit;
///
/// let limit = Limit::AnswerBytes { max: 1024 };
/// assert_eq!(
///     limit.to_string(),
///     "the answer's size (at most 1024 bytes, ClientBuilder::max_answer_bytes)"
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Limit {
    /// The bytes of one answer's body (JSON, or the whole SSE stream up to the answer).
    AnswerBytes {
        /// The limit.
        max: usize,
    },
    /// The bytes of one SSE event (its `data` lines and the line being read).
    EventBytes {
        /// The limit.
        max: usize,
    },
    /// The pages one listing follows (`nextCursor`).
    Pages {
        /// The limit.
        max: usize,
    },
    /// The bytes of one line a stdio server writes on its stdout (one JSON-RPC message).
    LineBytes {
        /// The limit.
        max: usize,
    },
    /// The `input_required` rounds of one request (MCP 2026-07-28) the client answers.
    InputRounds {
        /// The limit.
        max: usize,
    },
}

impl Limit {
    /// The [`ClientBuilder`](super::ClientBuilder) method that sets this limit.
    pub fn setter(&self) -> &'static str {
        match self {
            Limit::AnswerBytes { .. } => "ClientBuilder::max_answer_bytes",
            Limit::EventBytes { .. } => "ClientBuilder::max_event_bytes",
            Limit::Pages { .. } => "ClientBuilder::max_pages",
            Limit::LineBytes { .. } => "ClientBuilder::max_line_bytes",
            Limit::InputRounds { .. } => "ClientBuilder::max_input_rounds",
        }
    }

    /// The limit's value.
    pub fn max(&self) -> usize {
        match *self {
            Limit::AnswerBytes { max }
            | Limit::EventBytes { max }
            | Limit::Pages { max }
            | Limit::LineBytes { max }
            | Limit::InputRounds { max } => max,
        }
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (what, unit) = match self {
            Limit::AnswerBytes { .. } => ("the answer's size", "bytes"),
            Limit::EventBytes { .. } => ("one SSE event's size", "bytes"),
            Limit::Pages { .. } => ("the pages of one listing", "pages"),
            Limit::LineBytes { .. } => ("one stdout line's size", "bytes"),
            Limit::InputRounds { .. } => ("the input rounds of one request", "rounds"),
        };
        write!(
            f,
            "{what} (at most {} {unit}, {})",
            self.max(),
            self.setter()
        )
    }
}

/// What was wrong with an answer the client could not read as MCP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Malformed {
    /// The body (or an SSE event's data) is not JSON.
    NotJson,
    /// The answer is JSON but not the JSON-RPC response to the request (another id, no
    /// `result` or `error`).
    NotTheResponse,
    /// The SSE stream ended before the response to the request.
    StreamEnded,
    /// The answer's `Content-Type` is neither `application/json` nor `text/event-stream`.
    ContentType,
    /// The result lacks a member the method's result must carry, or has it of the wrong type
    /// (a `tools/list` without its `tools` array, an `initialize` without `protocolVersion`).
    /// Not named `Result`: a public item of that name makes rustc write `std::result::Result`
    /// in full in the diagnostics of every crate that uses wymcp.
    ResultShape,
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Malformed::NotJson => "the body is not JSON",
            Malformed::NotTheResponse => "the body is not the JSON-RPC response to the request",
            Malformed::StreamEnded => "the SSE stream ended before the response",
            Malformed::ContentType => {
                "the Content-Type is neither application/json nor text/event-stream"
            }
            Malformed::ResultShape => "the result lacks a member its method requires",
        })
    }
}

/// An error of the underlying HTTP exchange (connection refused, reset, TLS): opaque, so the
/// HTTP library stays out of wymcp's API; its [`source`](std::error::Error::source) chain
/// says more.
#[derive(Debug)]
pub struct TransportError(Box<dyn std::error::Error + Send + Sync>);

impl TransportError {
    pub(crate) fn new(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        TransportError(Box::new(error))
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for TransportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// Why a client call failed. Each variant names what failed (the method, the limit, the
/// header); none carries a bare message.
///
/// ```
/// use std::time::Duration;
/// use wymcp::client::{ClientError, Limit};
///
/// let err = ClientError::Timeout { method: "tools/call".into(), after: Duration::from_millis(250) };
/// assert_eq!(err.to_string(), "tools/call: no answer within 250ms");
/// assert!(err.is_timeout());
///
/// let err = ClientError::LimitExceeded { method: "tools/list".into(), limit: Limit::AnswerBytes { max: 64 } };
/// assert_eq!(err.limit(), Some(Limit::AnswerBytes { max: 64 }));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The URL given to [`Client::builder`](super::Client::builder) is not an absolute
    /// `http` or `https` URL.
    #[error("not an http(s) URL: {url:?}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
    },
    /// A header given to the builder (or a header value the client derives from a call,
    /// `Mcp-Name` from a tool name) is not a valid HTTP header.
    #[error("invalid HTTP header {name:?}")]
    InvalidHeader {
        /// The header's name.
        name: String,
    },
    /// The HTTP exchange itself failed.
    #[error("{method}: HTTP exchange failed: {source}")]
    Transport {
        /// The method of the request.
        method: String,
        /// What failed.
        #[source]
        source: TransportError,
    },
    /// No answer within the timeout ([`ClientBuilder::timeout`](super::ClientBuilder::timeout)).
    #[error("{method}: no answer within {after:?}")]
    Timeout {
        /// The method of the request.
        method: String,
        /// The timeout.
        after: Duration,
    },
    /// The server's answer would make the client hold more than a limit allows.
    #[error("{method}: refused: the server exceeded {limit}")]
    LimitExceeded {
        /// The method of the request.
        method: String,
        /// The limit exceeded.
        limit: Limit,
    },
    /// The server answered with a JSON-RPC error.
    #[error("{method}: {error}")]
    Rpc {
        /// The method of the request.
        method: String,
        /// The error, as the server sent it.
        error: RpcError,
    },
    /// The server answered with an HTTP status other than success (401 for a missing or
    /// wrong token, 404 for an ended session), with the JSON-RPC error its body carried.
    #[error("{method}: HTTP status {status}{}", error.as_ref().map(|e| format!(" ({e})")).unwrap_or_default())]
    Status {
        /// The method of the request.
        method: String,
        /// The HTTP status code.
        status: u16,
        /// The JSON-RPC error of the body, when it carried one.
        error: Option<RpcError>,
    },
    /// The server's answer is not MCP the client can read.
    #[error("{method}: malformed answer: {what}")]
    Malformed {
        /// The method of the request.
        method: String,
        /// What was wrong.
        what: Malformed,
    },
    /// The command of a stdio client could not be started (not found, not executable).
    #[error("cannot start {command:?}: {source}")]
    Spawn {
        /// The program, as given to [`Client::stdio`](super::Client::stdio).
        command: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The stdio connection is over: the server's process ended or closed its stdout (a
    /// connection ended by a refused line fails with that refusal instead). The request is
    /// not answered.
    #[error("{method}: the server's process ended or closed its stdout")]
    Closed {
        /// The method of the request.
        method: String,
    },
    /// The method is not available on this connection: `subscriptions/listen`
    /// ([`Client::listen`](super::Client::listen)) needs MCP 2026-07-28 over HTTP.
    #[error("{method}: not available here: {reason}")]
    Unavailable {
        /// The method asked for.
        method: String,
        /// Why not, e.g. "the session era delivers notifications on the session's GET stream".
        reason: &'static str,
    },
    /// A request the server made in an `input_required` result (MCP 2026-07-28: sampling,
    /// elicitation or roots) that the client's handlers did not answer: none is installed
    /// for its method, or the handler answered an error. The call is not sent again.
    #[error("{method}: the server's {request} request {key:?} was not answered: {error}")]
    InputNotAnswered {
        /// The method of the call that asked.
        method: String,
        /// The key of the request in `inputRequests`.
        key: String,
        /// The request's method (`sampling/createMessage`, ...).
        request: String,
        /// Why: the handler's error, or `-32601` when none is installed (boxed: it would
        /// make every `ClientError` as large as itself).
        error: Box<RpcError>,
    },
    /// The server speaks no protocol revision the client offered.
    #[error("the server offers no protocol revision this client speaks (it answered {offered:?})")]
    UnsupportedVersion {
        /// The revision the server answered, as it wrote it.
        offered: String,
    },
}

impl ClientError {
    /// Whether the request timed out.
    pub fn is_timeout(&self) -> bool {
        matches!(self, ClientError::Timeout { .. })
    }

    /// The limit a refusal names, when it is one.
    pub fn limit(&self) -> Option<Limit> {
        match self {
            ClientError::LimitExceeded { limit, .. } => Some(*limit),
            _ => None,
        }
    }

    /// The JSON-RPC error the server answered, when it did (with a success status or not).
    pub fn rpc_error(&self) -> Option<&RpcError> {
        match self {
            ClientError::Rpc { error, .. } => Some(error),
            ClientError::Status { error, .. } => error.as_ref(),
            _ => None,
        }
    }

    /// The HTTP status of a refusal, when the server answered with one other than success.
    pub fn status(&self) -> Option<u16> {
        match self {
            ClientError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }
}
