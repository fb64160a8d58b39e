//! One Streamable HTTP exchange: a POST (or the closing DELETE) with the client's headers, its
//! answer read as JSON or as an SSE stream, every read bounded and the whole under the timeout.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use crate::protocol::RpcError;

use super::builder::Settings;
use super::handlers::{Handlers, is_request};
use super::notifications::{Notification, Queue};
use super::outgoing::Outgoing;
use super::sse::{Event, SseReader};

/// The header a resumption carries: the id of the last event the client read.
const LAST_EVENT_ID: &str = "last-event-id";
use super::{ClientError, Limit, Malformed, TransportError};

/// What every exchange shares: the HTTP client, the endpoint, the user's headers, the limits,
/// the queue of notifications and the handlers of the server's requests.
#[derive(Debug)]
pub(crate) struct Connection {
    pub(crate) http: reqwest::Client,
    pub(crate) url: reqwest::Url,
    pub(crate) headers: HeaderMap,
    /// What every POST carries: `headers`, then `Accept` and `Content-Type` (built once).
    pub(crate) post_headers: HeaderMap,
    pub(crate) settings: Settings,
    pub(crate) notes: Arc<Queue>,
    pub(crate) handlers: Handlers,
}

/// A request's answer: the response's headers and the JSON-RPC `result` (`null` for a
/// notification's 202).
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) headers: HeaderMap,
    pub(crate) result: Value,
}

impl Connection {
    /// POSTs `body` (a request with `id`, or a notification when `id` is `None`) with
    /// `extra` headers, under the timeout.
    pub(crate) async fn post(
        &self,
        method: &str,
        id: Option<i64>,
        body: &Outgoing,
        extra: HeaderMap,
    ) -> Result<Answer, ClientError> {
        self.timed(method, self.exchange(method, id, body, extra))
            .await?
    }

    /// `work` under the request timeout: past it, the typed timeout of `method`.
    async fn timed<T>(
        &self,
        method: &str,
        work: impl std::future::Future<Output = T>,
    ) -> Result<T, ClientError> {
        let after = self.settings.timeout;
        tokio::time::timeout(after, work)
            .await
            .map_err(|_| ClientError::Timeout {
                method: method.to_owned(),
                after,
            })
    }

    /// POSTs `body` (a message for `method`, named in a transport error) with the client's
    /// headers and `extra`; the response unread.
    async fn send(
        &self,
        method: &str,
        body: Bytes,
        extra: &HeaderMap,
    ) -> Result<reqwest::Response, ClientError> {
        let mut request = reqwest::Request::new(reqwest::Method::POST, self.url.clone());
        let headers = request.headers_mut();
        *headers = self.post_headers.clone();
        // As `RequestBuilder::headers`: each of `extra` replaces the headers of its name.
        let mut last = None;
        for (name, value) in extra {
            if last != Some(name) {
                headers.remove(name);
                last = Some(name);
            }
            headers.append(name, value.clone());
        }
        *request.body_mut() = Some(body.into());
        self.http
            .execute(request)
            .await
            .map_err(|e| transport(method, e))
    }

    /// DELETEs the session (`extra` carries its id), under the timeout. A server that does
    /// not let clients end sessions answers 405: not an error.
    pub(crate) async fn delete(&self, extra: HeaderMap) -> Result<(), ClientError> {
        const METHOD: &str = "DELETE";
        let request = self
            .http
            .delete(self.url.clone())
            .headers(self.headers.clone())
            .headers(extra)
            .send();
        let response = self
            .timed(METHOD, request)
            .await?
            .map_err(|e| transport(METHOD, e))?;
        let status = response.status();
        if status.is_success() || status == reqwest::StatusCode::METHOD_NOT_ALLOWED {
            return Ok(());
        }
        Err(status_error(METHOD, status, None))
    }

    pub(crate) async fn exchange(
        &self,
        method: &str,
        id: Option<i64>,
        body: &Outgoing,
        extra: HeaderMap,
    ) -> Result<Answer, ClientError> {
        let mut response = self.send(method, body.text().clone(), &extra).await?;
        let status = response.status();
        // Taken, not copied: reading the body needs no headers.
        let headers = std::mem::take(response.headers_mut());
        let Some(id) = id else {
            return if status.is_success() {
                Ok(Answer {
                    headers,
                    result: Value::Null,
                })
            } else {
                Err(status_error(method, status, None))
            };
        };
        let is_sse = is_event_stream(&headers);
        let result = if status.is_success() && is_sse {
            self.read_sse(method, id, body.token(), &mut response, &extra)
                .await?
        } else {
            let message = self.read_json(method, status, &mut response).await?;
            if !headers
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.trim_start().starts_with("application/json"))
            {
                return Err(malformed(method, Malformed::ContentType));
            }
            response_to(method, id, message)?
        };
        Ok(Answer { headers, result })
    }

    /// A body answered as JSON: its message, or, under an error status, that status with the
    /// refusal's JSON-RPC error (a 400's `-32020`, a 404's `-32601`), whatever id it carries.
    async fn read_json(
        &self,
        method: &str,
        status: reqwest::StatusCode,
        response: &mut reqwest::Response,
    ) -> Result<Value, ClientError> {
        let bytes = self.read_body(method, response).await?;
        let message: Option<Value> = serde_json::from_slice(&bytes).ok();
        if !status.is_success() {
            let error = message.as_ref().and_then(rpc_error);
            return Err(status_error(method, status, error));
        }
        message.ok_or_else(|| malformed(method, Malformed::NotJson))
    }

    /// The body, refused past [`Limit::AnswerBytes`] before more is held.
    async fn read_body(
        &self,
        method: &str,
        response: &mut reqwest::Response,
    ) -> Result<Vec<u8>, ClientError> {
        let max = self.settings.max_answer_bytes;
        let too_large = || ClientError::LimitExceeded {
            method: method.to_owned(),
            limit: Limit::AnswerBytes { max },
        };
        if response
            .content_length()
            .is_some_and(|len| len > max as u64)
        {
            return Err(too_large());
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| transport(method, e))? {
            if body.len() + chunk.len() > max {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    /// Reads SSE events until the response to `id`; notifications before it go to the queue;
    /// the server's requests (sampling, elicitation, roots) are answered by the handlers, each
    /// answer POSTed with the request's session headers (`extra`). A stream that ends (or
    /// drops) before the response, after an event with an id, is resumed: a GET with
    /// `Last-Event-ID`, after the server's `retry` delay (else
    /// [`reconnect_delay`](super::ClientBuilder::reconnect_delay)), at most
    /// [`max_reconnects`](super::ClientBuilder::max_reconnects) failed attempts in a row; the
    /// whole under the request's timeout.
    ///
    /// What the stream carries is related to the request: its requests are answered, and its
    /// notifications queued, with the request's progress token (`related`).
    async fn read_sse(
        &self,
        method: &str,
        id: i64,
        related: Option<&Value>,
        response: &mut reqwest::Response,
        extra: &HeaderMap,
    ) -> Result<Value, ClientError> {
        let mut reader = SseReader::new(self.settings.max_event_bytes);
        let mut read = 0usize;
        let mut resumed: Option<reqwest::Response> = None;
        loop {
            let stream = resumed.as_mut().unwrap_or(&mut *response);
            let ended = match self
                .read_events(method, (id, related), stream, &mut reader, &mut read, extra)
                .await?
            {
                Read::Answer(answer) => return answer,
                Read::Ended(ended) => ended,
            };
            let Some(last) = reader.last_event_id().map(str::to_owned) else {
                return Err(ended);
            };
            if let Some(observer) = &self.handlers.stream_closed {
                observer(related);
            }
            resumed = Some(self.resume(method, extra, &last, reader.retry()).await?);
            reader.restart();
        }
    }

    /// Reads events of `response` until the response to `id` or the stream's end; `related`
    /// is the request's progress token.
    async fn read_events(
        &self,
        method: &str,
        (id, related): (i64, Option<&Value>),
        response: &mut reqwest::Response,
        reader: &mut SseReader,
        read: &mut usize,
        extra: &HeaderMap,
    ) -> Result<Read, ClientError> {
        let max = self.settings.max_answer_bytes;
        let mut answer: Option<Result<Value, ClientError>> = None;
        let mut requests: Vec<Value> = Vec::new();
        loop {
            let chunk = match response.chunk().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => return Ok(Read::Ended(malformed(method, Malformed::StreamEnded))),
                Err(err) => return Ok(Read::Ended(transport(method, err))),
            };
            *read += chunk.len();
            if *read > max {
                return Err(ClientError::LimitExceeded {
                    method: method.to_owned(),
                    limit: Limit::AnswerBytes { max },
                });
            }
            reader.feed(&chunk, |event| {
                let data = match event {
                    Event::Data(data) => data,
                    Event::TooLarge => {
                        answer = Some(Err(ClientError::LimitExceeded {
                            method: method.to_owned(),
                            limit: Limit::EventBytes {
                                max: self.settings.max_event_bytes,
                            },
                        }));
                        return false;
                    }
                };
                match self.route(data, Some(id), related) {
                    Routed::Answer(message) => {
                        answer = Some(response_to(method, id, message));
                        false
                    }
                    Routed::NotJson => {
                        answer = Some(Err(malformed(method, Malformed::NotJson)));
                        false
                    }
                    Routed::Request(request) => {
                        requests.push(request);
                        true
                    }
                    Routed::Done => true,
                }
            });
            for request in requests.drain(..) {
                let reply = self.handlers.answer(request, related.cloned()).await;
                self.send_reply(method, &reply, extra).await?;
            }
            if let Some(answer) = answer {
                return Ok(Read::Answer(answer));
            }
        }
    }

    /// Where one event's data goes: the response to `id` (or, waiting for one, a message that
    /// is not JSON), a request of the server to answer, or a notification queued (anything
    /// else is dropped: a response to no request waiting here, a priming event). A
    /// notification on the stream of a request with a progress token is queued `related` to it.
    pub(crate) fn route(&self, data: Vec<u8>, id: Option<i64>, related: Option<&Value>) -> Routed {
        if data.iter().all(u8::is_ascii_whitespace) {
            return Routed::Done; // a priming event: an id and no message
        }
        let Ok(message) = serde_json::from_slice::<Value>(&data) else {
            return match id {
                Some(_) => Routed::NotJson,
                None => {
                    tracing::warn!("an SSE event of the server is not JSON: dropped");
                    Routed::Done
                }
            };
        };
        if id.is_some()
            && message.get("id").and_then(Value::as_i64) == id
            && message.get("method").is_none()
        {
            return Routed::Answer(message);
        }
        if is_request(&message) {
            return Routed::Request(message);
        }
        if let Some(note) = Notification::of(message) {
            self.notes.push(note.related_to(related.cloned()));
        }
        Routed::Done
    }

    /// Reopens a dropped stream with a GET carrying `Last-Event-ID: last`, after the delay
    /// (the server's `retry`, else the configured one); at most `max_reconnects` attempts.
    /// A 404 (the session is gone) or 405 (the server has no GET stream) ends the attempts.
    async fn resume(
        &self,
        method: &str,
        extra: &HeaderMap,
        last: &str,
        retry: Option<Duration>,
    ) -> Result<reqwest::Response, ClientError> {
        let delay = retry.unwrap_or(self.settings.reconnect_delay);
        let mut failed = None;
        for _ in 0..self.settings.max_reconnects {
            tokio::time::sleep(delay).await;
            match self.open_stream(method, extra, Some(last)).await {
                Ok(response) => return Ok(response),
                Err(
                    err @ ClientError::Status {
                        status: 404 | 405, ..
                    },
                ) => return Err(err),
                Err(err) => failed = Some(err),
            }
        }
        Err(failed.unwrap_or_else(|| malformed(method, Malformed::StreamEnded)))
    }

    /// GETs an SSE stream: the session's own (no `last`), or the stream whose event `last`
    /// was, resumed after it. `extra` carries the session's headers. Not under the timeout:
    /// callers bound it.
    pub(crate) async fn open_stream(
        &self,
        method: &str,
        extra: &HeaderMap,
        last: Option<&str>,
    ) -> Result<reqwest::Response, ClientError> {
        let mut request = self
            .http
            .get(self.url.clone())
            .headers(self.headers.clone())
            .header(ACCEPT, "text/event-stream")
            .headers(extra.clone());
        if let Some(last) = last {
            request = request.header(LAST_EVENT_ID, last);
        }
        let response = request.send().await.map_err(|e| transport(method, e))?;
        let status = response.status();
        if !status.is_success() {
            return Err(status_error(method, status, None));
        }
        if !is_event_stream(response.headers()) {
            return Err(malformed(method, Malformed::ContentType));
        }
        Ok(response)
    }

    /// POSTs `body`, the request `id` of `method` whose answer is a long-lived SSE stream
    /// (`subscriptions/listen`): the stream's response, unread. A refusal (an HTTP error
    /// status, or a JSON answer in place of the stream) is its error. Not under the timeout:
    /// callers bound it.
    pub(crate) async fn post_stream(
        &self,
        method: &str,
        id: i64,
        body: &Outgoing,
        extra: &HeaderMap,
    ) -> Result<reqwest::Response, ClientError> {
        let mut response = self.send(method, body.text().clone(), extra).await?;
        let status = response.status();
        if status.is_success() && is_event_stream(response.headers()) {
            return Ok(response);
        }
        let message = self.read_json(method, status, &mut response).await?;
        // An error answered in place of the stream is that error; a result, no stream.
        response_to(method, id, message)?;
        Err(malformed(method, Malformed::ContentType))
    }

    /// POSTs the client's response to a request of the server (answered 202).
    pub(crate) async fn send_reply(
        &self,
        method: &str,
        reply: &Value,
        extra: &HeaderMap,
    ) -> Result<(), ClientError> {
        let response = self
            .send(method, Bytes::from(reply.to_string()), extra)
            .await?;
        let status = response.status();
        if status.is_success() {
            Ok(())
        } else {
            Err(status_error(method, status, None))
        }
    }
}

/// How reading a stream ended.
enum Read {
    /// The response to the request (or the refusal read in its place).
    Answer(Result<Value, ClientError>),
    /// The stream ended or dropped first: why, for when it cannot be resumed.
    Ended(ClientError),
}

/// What [`Connection::route`] made of an event.
pub(crate) enum Routed {
    /// The message answering the request waited for.
    Answer(Value),
    /// Data that is not JSON, where the answer was waited for.
    NotJson,
    /// A request of the server, for the handlers.
    Request(Value),
    /// Queued or dropped: nothing more to do.
    Done,
}

/// Whether `headers` say the body is an SSE stream.
fn is_event_stream(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"))
}

/// The `result` of the JSON-RPC response to `id`, or its error.
pub(crate) fn response_to(method: &str, id: i64, mut message: Value) -> Result<Value, ClientError> {
    if let Some(error) = rpc_error(&message) {
        return Err(ClientError::Rpc {
            method: method.to_owned(),
            error,
        });
    }
    let obj = message.as_object_mut();
    match obj {
        Some(obj) if obj.get("id").and_then(Value::as_i64) == Some(id) => obj
            .remove("result")
            .filter(Value::is_object)
            .ok_or_else(|| malformed(method, Malformed::NotTheResponse)),
        _ => Err(malformed(method, Malformed::NotTheResponse)),
    }
}

/// The JSON-RPC error a message carries, when it is one (an integer `code`, a string
/// `message`).
fn rpc_error(message: &Value) -> Option<RpcError> {
    let error = message.get("error")?;
    let code = error.get("code")?.as_i64()?;
    let text = error.get("message")?.as_str()?;
    Some(RpcError::new(code, text, error.get("data").cloned()))
}

/// A header the client derives (a method or a tool name), or
/// [`ClientError::InvalidHeader`] naming it.
pub(crate) fn header(
    headers: &mut HeaderMap,
    name: &'static str,
    value: &str,
) -> Result<(), ClientError> {
    let value = HeaderValue::from_str(value).map_err(|_| ClientError::InvalidHeader {
        name: name.to_owned(),
    })?;
    headers.insert(HeaderName::from_static(name), value);
    Ok(())
}

fn transport(method: &str, error: reqwest::Error) -> ClientError {
    ClientError::Transport {
        method: method.to_owned(),
        source: TransportError::new(error),
    }
}

fn status_error(method: &str, status: reqwest::StatusCode, error: Option<RpcError>) -> ClientError {
    ClientError::Status {
        method: method.to_owned(),
        status: status.as_u16(),
        error,
    }
}

fn malformed(method: &str, what: Malformed) -> ClientError {
    ClientError::Malformed {
        method: method.to_owned(),
        what,
    }
}
