//! [`HttpError`]: one type for every refusal the HTTP transport answers.

use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::rejection::{Dialect, Rejection, SessionNotFound};
use crate::protocol::{RpcError, failure};

/// How a refusal's body is written.
#[derive(Debug, Clone, PartialEq)]
pub enum ErrorBody {
    /// A JSON-RPC error envelope (every POST refusal).
    JsonRpc {
        /// The rejection id (`null` unless the message was a request).
        id: Value,
        /// The error object.
        error: RpcError,
    },
    /// `{"error": "<message>"}` (GET and DELETE refusals).
    Plain(String),
    /// No body at all.
    Empty,
}

/// A refusal: an HTTP status and its body.
///
/// ```
/// use axum::http::StatusCode;
/// use wymcp::transport::http::HttpError;
///
/// let err = HttpError::invalid_request(StatusCode::BAD_REQUEST, serde_json::Value::Null, "nope");
/// assert_eq!(err.status(), StatusCode::BAD_REQUEST);
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("HTTP {}: {:?}", .0.status, .0.body)]
pub struct HttpError(Box<Inner>);

#[derive(Debug, Clone, PartialEq)]
struct Inner {
    status: StatusCode,
    body: ErrorBody,
    /// The header a refusal is sent with (`WWW-Authenticate`, `Allow`), if any.
    header: Option<(HeaderName, HeaderValue)>,
}

impl HttpError {
    /// Any status and body.
    pub fn new(status: StatusCode, body: ErrorBody) -> Self {
        HttpError(Box::new(Inner {
            status,
            body,
            header: None,
        }))
    }

    /// Adds a `WWW-Authenticate` challenge (401 answers).
    #[must_use]
    pub fn with_challenge(self, challenge: HeaderValue) -> Self {
        self.with_header(header::WWW_AUTHENTICATE, challenge)
    }

    /// Adds the header a refusal is sent with (one at most: a challenge or `Allow`).
    #[must_use]
    pub(crate) fn with_header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.0.header = Some((name, value));
        self
    }

    /// A JSON-RPC envelope with `error`.
    pub fn rpc(status: StatusCode, id: Value, error: RpcError) -> Self {
        HttpError::new(status, ErrorBody::JsonRpc { id, error })
    }

    /// `-32600` "Invalid Request" with `data.error` = `message`.
    pub fn invalid_request(status: StatusCode, id: Value, message: impl Into<String>) -> Self {
        let data = json!({ "error": message.into() });
        HttpError::rpc(
            status,
            id,
            RpcError::new(RpcError::INVALID_REQUEST, "Invalid Request", Some(data)),
        )
    }

    /// `-32700` "Parse error", id `null`, HTTP 400.
    pub fn parse_error(reason: impl Into<String>) -> Self {
        let data = json!({ "reason": reason.into() });
        HttpError::rpc(
            StatusCode::BAD_REQUEST,
            Value::Null,
            RpcError::new(RpcError::PARSE_ERROR, "Parse error", Some(data)),
        )
    }

    /// `-32601` "Method not found", HTTP 404 (the method name is not echoed).
    pub fn method_not_found(id: Value) -> Self {
        HttpError::rpc(
            StatusCode::NOT_FOUND,
            id,
            RpcError::new(RpcError::METHOD_NOT_FOUND, "Method not found", None),
        )
    }

    /// HTTP 404 for a session that does not exist (any more): a request gets `-32001`
    /// "Session terminated" without `data`; other kinds an empty body.
    pub fn session_not_found(id: Value) -> Self {
        Rejection::from(SessionNotFound).write(Dialect::JsonRpc(id))
    }

    /// A plain-JSON refusal `{"error": message}` (GET, DELETE).
    pub fn plain(status: StatusCode, message: impl Into<String>) -> Self {
        HttpError::new(status, ErrorBody::Plain(message.into()))
    }

    /// The status.
    pub fn status(&self) -> StatusCode {
        self.0.status
    }

    /// The body.
    pub fn body(&self) -> &ErrorBody {
        &self.0.body
    }
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        let Inner {
            status,
            body,
            header,
        } = *self.0;
        let mut response = match body {
            ErrorBody::JsonRpc { id, error } => json_response(status, &failure(id, &error)),
            ErrorBody::Plain(message) => json_response(status, &json!({ "error": message })),
            ErrorBody::Empty => status.into_response(),
        };
        if let Some((name, value)) = header {
            response.headers_mut().insert(name, value);
        }
        response
    }
}

/// A JSON body with `content-type: application/json`.
pub(crate) fn json_response(status: StatusCode, body: &Value) -> Response {
    // `to_vec` writes straight into the buffer (`Display` goes through the formatter, about
    // twice the work); serializing a `Value` cannot fail.
    json_bytes_response(status, serde_json::to_vec(body).unwrap_or_default())
}

/// A response of JSON bytes, built directly (through `IntoResponse` a `Vec<u8>` is first given
/// `application/octet-stream`, which then has to be replaced).
pub(crate) fn json_bytes_response(status: StatusCode, bytes: Vec<u8>) -> Response {
    let mut response = Response::new(axum::body::Body::from(bytes));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}
