//! One call: `data` placed into an HTTP request as the operation says, the answer read within
//! the limits and shaped as the action's reply.

use std::time::Duration;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::header::{CONTENT_TYPE, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};
use wymcp::tool::Failure;
use wymcp::{ActionResult, Reply};

use crate::auth::Auth;
use crate::operation::{BODY, Location, Operation, Parameter, Style};

/// A path segment keeps RFC 3986's unreserved characters; everything else is encoded (`/`,
/// `?`, `#`, `%` included), so a value never changes the path's shape.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// What every call of one document shares.
#[derive(Debug)]
pub(crate) struct Api {
    pub(crate) client: reqwest::Client,
    pub(crate) base_url: String,
    pub(crate) auth: Option<Auth>,
    pub(crate) max_answer_bytes: usize,
    pub(crate) timeout: Duration,
    pub(crate) max_error_body_chars: usize,
}

impl Api {
    /// Sends the request `data` makes for `operation`, and shapes its answer.
    pub(crate) async fn call(
        &self,
        operation: &Operation,
        data: &Map<String, Value>,
        caller: Option<&wymcp::Identity>,
    ) -> ActionResult {
        let request = self.request(operation, data, caller)?;
        tracing::debug!(method = %operation.method, path = %operation.path, "calling the API");
        match tokio::time::timeout(self.timeout, self.send(request)).await {
            Ok(answer) => answer,
            Err(_) => Err(Failure::msg(format!(
                "the API did not answer within timeout ({} ms)",
                self.timeout.as_millis()
            ))),
        }
    }

    fn request(
        &self,
        operation: &Operation,
        data: &Map<String, Value>,
        caller: Option<&wymcp::Identity>,
    ) -> Result<reqwest::RequestBuilder, Failure> {
        let mut path = operation.path.clone();
        let mut query: Vec<(String, String)> = Vec::new();
        let mut headers = reqwest::header::HeaderMap::new();
        let mut cookies: Vec<String> = Vec::new();
        for parameter in &operation.parameters {
            let Some(value) = data.get(&parameter.name) else {
                continue;
            };
            match parameter.location {
                Location::Path => {
                    let text = simple(value);
                    let encoded = utf8_percent_encode(&text, SEGMENT).to_string();
                    path = path.replace(&format!("{{{}}}", parameter.name), &encoded);
                }
                Location::Query => query.extend(query_pairs(parameter, value)),
                Location::Header => {
                    let name = HeaderName::from_bytes(parameter.name.as_bytes()).map_err(|_| {
                        Failure::msg(format!(
                            "header parameter {} is not a valid header name",
                            parameter.name
                        ))
                    })?;
                    let value = HeaderValue::from_str(&simple(value)).map_err(|_| {
                        Failure::msg(format!(
                            "header parameter {}: its value is not a valid header value",
                            parameter.name
                        ))
                    })?;
                    headers.insert(name, value);
                }
                Location::Cookie => {
                    let text = utf8_percent_encode(&simple(value), SEGMENT).to_string();
                    cookies.push(format!("{}={text}", parameter.name));
                }
            }
        }
        if !cookies.is_empty() {
            let value = HeaderValue::from_str(&cookies.join("; "))
                .map_err(|_| Failure::msg("the cookie parameters make no valid Cookie header"))?;
            headers.insert(reqwest::header::COOKIE, value);
        }
        if let Some(auth) = &self.auth {
            if let Some((name, value)) = auth.header() {
                let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                    Failure::msg("the configured auth header name is not a valid header name")
                })?;
                let mut value = HeaderValue::from_str(&value)
                    .map_err(|_| Failure::msg("the configured auth makes no valid header value"))?;
                value.set_sensitive(true);
                headers.insert(name, value);
            }
            if let Some((name, value)) = auth.query() {
                query.push((name.to_owned(), value.to_owned()));
            }
            if auth.is_caller_bearer() {
                headers.insert(reqwest::header::AUTHORIZATION, caller_bearer(caller)?);
            }
        }
        let mut url =
            reqwest::Url::parse(&format!("{}{path}", self.base_url.trim_end_matches('/')))
                .map_err(|e| Failure::msg(format!("the request URL is invalid: {e}")))?;
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        let mut request = self
            .client
            .request(operation.method.clone(), url)
            .headers(headers);
        if operation.has_body {
            if let Some(body) = data.get(BODY) {
                request = request.json(body);
            }
        }
        Ok(request)
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> ActionResult {
        let mut response = request.send().await.map_err(|e| {
            Failure::msg(format!("the API could not be reached: {}", without_url(&e)))
        })?;
        let status = response.status();
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        if response
            .content_length()
            .is_some_and(|n| n > self.max_answer_bytes as u64)
        {
            return Err(self.too_large());
        }
        let mut bytes: Vec<u8> = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| {
            Failure::msg(format!(
                "reading the API's answer failed: {}",
                without_url(&e)
            ))
        })? {
            if bytes.len() + chunk.len() > self.max_answer_bytes {
                return Err(self.too_large());
            }
            bytes.extend_from_slice(&chunk);
        }
        let text = String::from_utf8_lossy(&bytes);
        if !status.is_success() {
            let quoted: String = text.chars().take(self.max_error_body_chars).collect();
            let cut = if quoted.len() < text.len() { "…" } else { "" };
            return Err(Failure::msg(format!(
                "the API answered {status}: {quoted}{cut}"
            )));
        }
        let mut reply = Map::new();
        reply.insert("status".into(), json!(status.as_u16()));
        if bytes.is_empty() {
            return Ok(Reply::new(reply));
        }
        let json_type = {
            let media = content_type.split(';').next().unwrap_or_default().trim();
            media.ends_with("/json") || media.ends_with("+json")
        };
        match json_type
            .then(|| serde_json::from_slice::<Value>(&bytes).ok())
            .flatten()
        {
            Some(body) => {
                reply.insert("body".into(), body);
            }
            None => {
                reply.insert("content_type".into(), json!(content_type));
                reply.insert("text".into(), json!(text));
            }
        }
        Ok(Reply::new(reply))
    }

    fn too_large(&self) -> Failure {
        Failure::msg(format!(
            "the API's answer is larger than max_answer_bytes ({} bytes)",
            self.max_answer_bytes
        ))
    }
}

/// The reply's schema, every action's: the status, and the JSON `body` or the `text` and its
/// `content_type`.
pub(crate) fn reply_schema() -> Map<String, Value> {
    let schema = json!({
        "type": "object",
        "properties": {
            "status": {"type": "integer"},
            "body": {},
            "content_type": {"type": "string"},
            "text": {"type": "string"}
        },
        "required": ["status"]
    });
    match schema {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// A reqwest error's text without its URL (which may carry an API key in the query).
fn without_url(error: &reqwest::Error) -> String {
    let kind = if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "connection failed"
    } else if error.is_body() || error.is_decode() {
        "the body could not be read"
    } else {
        "request failed"
    };
    let source = std::error::Error::source(error)
        .map(|s| format!(": {s}"))
        .unwrap_or_default();
    format!("{kind}{source}")
}

/// A value in `simple` style: a scalar as itself, an array's items joined by commas, an
/// object's keys and values likewise.
fn simple(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(scalar).collect::<Vec<_>>().join(","),
        Value::Object(map) => map
            .iter()
            .flat_map(|(k, v)| [k.clone(), scalar(v)])
            .collect::<Vec<_>>()
            .join(","),
        other => scalar(other),
    }
}

fn scalar(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The query pairs of one parameter, by its `style` and `explode`.
fn query_pairs(parameter: &Parameter, value: &Value) -> Vec<(String, String)> {
    let name = parameter.name.clone();
    let separator = match parameter.style {
        Style::SpaceDelimited => " ",
        Style::PipeDelimited => "|",
        _ => ",",
    };
    match value {
        Value::Array(items) if parameter.explode && parameter.style == Style::Form => items
            .iter()
            .map(|item| (name.clone(), scalar(item)))
            .collect(),
        Value::Array(items) => {
            vec![(
                name,
                items.iter().map(scalar).collect::<Vec<_>>().join(separator),
            )]
        }
        Value::Object(map) if parameter.style == Style::DeepObject => map
            .iter()
            .map(|(k, v)| (format!("{name}[{k}]"), scalar(v)))
            .collect(),
        Value::Object(map) if parameter.explode => {
            map.iter().map(|(k, v)| (k.clone(), scalar(v))).collect()
        }
        Value::Object(_) => vec![(name, simple(value))],
        other => vec![(name, scalar(other))],
    }
}

/// `Authorization: Bearer` with the token the caller presented, marked sensitive; refused
/// when the call carried none (the API would answer 401 without saying why).
fn caller_bearer(caller: Option<&wymcp::Identity>) -> Result<HeaderValue, Failure> {
    let token = caller
        .and_then(wymcp::Identity::bearer_token)
        .ok_or_else(|| {
            Failure::msg(
                "this API is called with the caller's own bearer token, and this call carried \
             none: call it over HTTP with an Authorization: Bearer token the server accepts",
            )
        })?;
    let mut value = HeaderValue::from_str(&format!("Bearer {token}"))
        .map_err(|_| Failure::msg("the caller's token makes no valid header value"))?;
    value.set_sensitive(true);
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(style: Style, explode: bool, value: Value) -> Vec<(String, String)> {
        let parameter = Parameter {
            name: "p".into(),
            location: Location::Query,
            style,
            explode,
        };
        query_pairs(&parameter, &value)
    }

    fn expected(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn query_parameters_follow_style_and_explode() {
        assert_eq!(
            pairs(Style::Form, true, json!(["a", 1])),
            expected(&[("p", "a"), ("p", "1")])
        );
        assert_eq!(
            pairs(Style::Form, false, json!(["a", 1])),
            expected(&[("p", "a,1")])
        );
        assert_eq!(
            pairs(Style::SpaceDelimited, false, json!(["a", "b"])),
            expected(&[("p", "a b")])
        );
        assert_eq!(
            pairs(Style::PipeDelimited, false, json!(["a", "b"])),
            expected(&[("p", "a|b")])
        );
        assert_eq!(
            pairs(Style::DeepObject, true, json!({"x": 1, "y": "z"})),
            expected(&[("p[x]", "1"), ("p[y]", "z")])
        );
        assert_eq!(
            pairs(Style::Form, true, json!({"x": 1})),
            expected(&[("x", "1")])
        );
        assert_eq!(
            pairs(Style::Form, false, json!({"x": 1, "y": 2})),
            expected(&[("p", "x,1,y,2")])
        );
        assert_eq!(
            pairs(Style::Form, true, json!(true)),
            expected(&[("p", "true")])
        );
    }

    #[test]
    fn path_values_are_one_encoded_segment() {
        assert_eq!(
            utf8_percent_encode("a b/c?d#e%f~g.h-i_j", SEGMENT).to_string(),
            "a%20b%2Fc%3Fd%23e%25f~g.h-i_j"
        );
        assert_eq!(simple(&json!([1, "x"])), "1,x");
    }
}
