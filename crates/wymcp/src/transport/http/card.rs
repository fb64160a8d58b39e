//! `GET <endpoint>/server-card`: the Server Card (SEP-2127), made once when the service is
//! built, served with a strong ETag (304 on a matching `If-None-Match`), `Cache-Control` and
//! CORS headers, so browsers and crawlers on any origin can read it.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use bytes::Bytes;
use sha2::{Digest, Sha256};

use crate::serve::SERVER_CARD_MEDIA_TYPE;
use crate::serve::Server;

/// How long a client or cache may reuse the card without asking again.
const CACHE_CONTROL: &str = "public, max-age=3600";

/// The card's bytes and their strong validator.
pub(crate) struct CardDocument {
    body: Bytes,
    etag: HeaderValue,
}

impl CardDocument {
    pub(crate) fn new(server: &Server) -> Self {
        let body = Bytes::from(server.server_card().to_string());
        let digest = Sha256::digest(&body);
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        let etag = HeaderValue::from_str(&format!("\"{hex}\""))
            .expect("a quoted hex digest is a valid header value");
        CardDocument { body, etag }
    }
}

/// The card routed at `path` (the endpoint's path followed by `/server-card`).
pub(crate) fn router(path: &str, card: Arc<CardDocument>) -> Router {
    Router::new().route(path, any(handle)).with_state(card)
}

async fn handle(State(card): State<Arc<CardDocument>>, req: Request) -> Response {
    let mut headers = HeaderMap::new();
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, HEAD, OPTIONS"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("Content-Type, If-None-Match"),
    );
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static("ETag"),
    );
    match *req.method() {
        Method::GET | Method::HEAD => {}
        Method::OPTIONS => return (StatusCode::NO_CONTENT, headers).into_response(),
        _ => {
            headers.insert(
                header::ALLOW,
                HeaderValue::from_static("GET, HEAD, OPTIONS"),
            );
            return (StatusCode::METHOD_NOT_ALLOWED, headers).into_response();
        }
    }
    headers.insert(header::ETAG, card.etag.clone());
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(CACHE_CONTROL),
    );
    if matches(req.headers(), &card.etag) {
        return (StatusCode::NOT_MODIFIED, headers).into_response();
    }
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(SERVER_CARD_MEDIA_TYPE),
    );
    let body = if req.method() == Method::HEAD {
        Bytes::new()
    } else {
        card.body.clone()
    };
    (StatusCode::OK, headers, body).into_response()
}

/// Whether an `If-None-Match` names `etag` (RFC 9110 §13.1.2: weak comparison, `*` matches
/// any current representation). An unreadable header matches nothing, so the card is sent.
fn matches(headers: &HeaderMap, etag: &HeaderValue) -> bool {
    let Ok(etag) = etag.to_str() else {
        return false;
    };
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == etag)
}
