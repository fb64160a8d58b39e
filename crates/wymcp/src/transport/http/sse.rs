//! Server-Sent Events, written one way for every stream of the endpoint: the session's GET
//! stream, a POST answered as a stream (either era), and `subscriptions/listen`.

use std::convert::Infallible;
use std::time::Duration;

use axum::http::{HeaderValue, header};
use axum::response::Response;
use bytes::Bytes;

/// The comment a stream writes while idle, so a client that went away is noticed.
pub(crate) const KEEPALIVE: &[u8] = b":keepalive\n\n";

/// One SSE event as one buffer (so it is written in one write): an `id` for a resumable
/// stream's event, else the event name `message`; an optional `retry`; and a single `data`
/// line (JSON text carries no raw newline; any newline is split defensively).
pub(crate) fn event(id: Option<&str>, retry: Option<Duration>, data: &str) -> Bytes {
    let mut out = String::with_capacity(data.len() + 40);
    match id {
        Some(id) => {
            out.push_str("id: ");
            out.push_str(id);
        }
        None => out.push_str("event: message"),
    }
    out.push('\n');
    if let Some(retry) = retry {
        out.push_str(&format!("retry: {}\n", retry.as_millis()));
    }
    for line in data.split('\n') {
        out.push_str("data: ");
        out.push_str(line.trim_end_matches('\r'));
        out.push('\n');
    }
    out.push('\n');
    Bytes::from(out)
}

/// A response streaming `body` as Server-Sent Events: `text/event-stream`, not cached, and
/// `X-Accel-Buffering: no` so a reverse proxy (nginx) passes each event on as it is written.
pub(crate) fn response<S>(body: S) -> Response
where
    S: futures_util::Stream<Item = Result<Bytes, Infallible>> + Send + 'static,
{
    let mut response = Response::new(axum::body::Body::from_stream(body));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::event;

    #[test]
    fn an_event_has_its_id_or_its_name_then_retry_then_data() {
        let resumable = event(Some("get.1"), Some(Duration::from_millis(1500)), "");
        assert_eq!(&resumable[..], b"id: get.1\nretry: 1500\ndata: \n\n");
        assert_eq!(
            &event(None, None, "{}")[..],
            b"event: message\ndata: {}\n\n"
        );
        assert_eq!(
            &event(Some("post0.2"), None, "a\r\nb")[..],
            b"id: post0.2\ndata: a\ndata: b\n\n"
        );
    }
}
