//! The wire checks every route runs before touching session state: Origin and Host
//! (DNS-rebinding protection), auth, the singleton headers; and the reading of `Accept`.

use axum::http::header::AsHeaderName;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::auth::{Identity, challenge};
use super::config::HttpConfig;
use super::error::HttpError;
use super::service::{SESSION_NAME, State, VERSION_NAME};

/// A failed check: status and message (the route picks the dialect), and the
/// `WWW-Authenticate` challenge of a 401.
#[derive(Debug)]
pub(crate) struct WireRefusal {
    pub(crate) status: StatusCode,
    pub(crate) message: String,
    pub(crate) challenge: Option<axum::http::HeaderValue>,
    /// Set when auth refused the request: what the route reports as `wymcp.auth.reject` or
    /// `wymcp.auth.error` (see [`WireRefusal::report_auth`]).
    pub(crate) auth: Option<AuthFailure>,
}

/// Why auth refused a request, for the auth events.
#[derive(Debug)]
pub(crate) struct AuthFailure {
    pub(crate) auth_module: &'static str,
    /// `None`: the hook answered a refusal; `Some(message)`: the hook panicked.
    pub(crate) panic: Option<String>,
    pub(crate) reason: String,
}

impl From<(StatusCode, String)> for WireRefusal {
    fn from((status, message): (StatusCode, String)) -> Self {
        WireRefusal {
            status,
            message,
            challenge: None,
            auth: None,
        }
    }
}

impl WireRefusal {
    /// Emits `wymcp.auth.reject` (or `wymcp.auth.error` for a panicking hook) when auth
    /// refused the request; `request_id` and `method` are the body's, when the route read one.
    pub(crate) fn report_auth(
        &self,
        http_method: &str,
        request_id: Option<&Value>,
        method: Option<&str>,
    ) {
        let Some(failure) = &self.auth else { return };
        let request_id = request_id.map(|id| wymcp_core::bound::echo(&id.to_string()));
        let method = method.map(wymcp_core::bound::echo);
        match &failure.panic {
            None => tracing::warn!(
                name: "wymcp.auth.reject",
                auth_module = failure.auth_module,
                reason = %wymcp_core::bound::echo(&failure.reason),
                request_id = request_id.as_deref(),
                method = method.as_deref(),
                http_method,
                "MCP request refused by auth"
            ),
            Some(error) => tracing::error!(
                name: "wymcp.auth.error",
                auth_module = failure.auth_module,
                exception = "panic",
                error = %wymcp_core::bound::echo(error),
                request_id = request_id.as_deref(),
                method = method.as_deref(),
                http_method,
                "the auth hook panicked"
            ),
        }
    }

    /// In the plain-JSON dialect (GET, DELETE).
    pub(crate) fn plain(self) -> HttpError {
        let err = HttpError::plain(self.status, self.message);
        match self.challenge {
            Some(c) => err.with_challenge(c),
            None => err,
        }
    }

    /// In the JSON-RPC dialect (POST).
    pub(crate) fn rpc(self, id: Value) -> HttpError {
        let err = HttpError::invalid_request(self.status, id, self.message);
        match self.challenge {
            Some(c) => err.with_challenge(c),
            None => err,
        }
    }
}

/// Runs the auth hook with a panic inside it contained: a panicking hook refuses the request
/// with `Authentication error` (and an error log) instead of taking the connection down.
async fn authenticate_contained(
    auth: &dyn super::auth::Authenticate,
    headers: &HeaderMap,
) -> Result<Identity, (super::auth::AuthRefusal, Option<String>)> {
    use futures_util::FutureExt;
    // A hook may panic while making its future as well as while running it.
    let answer =
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| auth.authenticate(headers)))
        {
            Ok(future) => std::panic::AssertUnwindSafe(future).catch_unwind().await,
            Err(payload) => Err(payload),
        };
    match answer {
        Ok(answer) => answer.map_err(|refusal| (refusal, None)),
        Err(payload) => {
            let message = crate::dispatch::fault::Fault::from_panic(payload.as_ref())
                .whole_message()
                .to_owned();
            Err((
                super::auth::AuthRefusal("Authentication error".to_owned()),
                Some(message),
            ))
        }
    }
}

/// The wire checks, in order, before any session state is touched: Origin and Host
/// (DNS-rebinding protection), auth, then the singleton headers. Answers the caller's identity
/// when auth is configured.
pub(crate) async fn wire_checks(
    state: &State,
    headers: &HeaderMap,
) -> Result<Option<Identity>, WireRefusal> {
    check_origin(&state.config, headers).map_err(WireRefusal::from)?;
    check_host(&state.config, headers).map_err(WireRefusal::from)?;
    let identity = match &state.auth {
        None => None,
        Some(auth) => match authenticate_contained(auth.as_ref(), headers).await {
            Ok(identity) => Some(identity),
            Err((refusal, panic)) => {
                // Credentials were presented and refused (not a hook fault): RFC 6750's
                // `error="invalid_token"`.
                let invalid_token =
                    panic.is_none() && headers.contains_key(axum::http::header::AUTHORIZATION);
                return Err(WireRefusal {
                    status: StatusCode::UNAUTHORIZED,
                    auth: Some(AuthFailure {
                        auth_module: state.auth_module,
                        panic,
                        reason: refusal.0.clone(),
                    }),
                    message: refusal.0,
                    challenge: Some(challenge(&state.config.www_authenticate, invalid_token)),
                });
            }
        },
    };
    for (name, label) in [
        (&SESSION_NAME, "Mcp-Session-Id"),
        (&VERSION_NAME, "MCP-Protocol-Version"),
    ] {
        if headers.get_all(name).iter().nth(1).is_some() {
            return Err(WireRefusal::from((
                StatusCode::BAD_REQUEST,
                format!("Duplicated {label} header. Send exactly one {label} header."),
            )));
        }
    }
    Ok(identity)
}

fn protection_on(config: &HttpConfig) -> bool {
    config.dns_rebinding_protection.unwrap_or(true)
}

const LOOPBACK_HOSTS: [&str; 4] = ["localhost", "127.0.0.1", "[::1]", "::1"];

/// The host name of an authority (`host[:port]`), port removed, as written: compare it with
/// `eq_ignore_ascii_case` (this runs on every request, so it allocates nothing).
fn host_name(authority: &str) -> &str {
    let authority = authority.trim();
    if authority.starts_with('[') {
        return match authority.find(']') {
            Some(end) => &authority[..=end],
            None => authority,
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if port.chars().all(|c| c.is_ascii_digit()) => host,
        _ => authority,
    }
}

fn host_allowed(config: &HttpConfig, host: &str) -> bool {
    match &config.allowed_hosts {
        Some(list) => list.iter().any(|h| host_name(h).eq_ignore_ascii_case(host)),
        None => LOOPBACK_HOSTS.iter().any(|h| h.eq_ignore_ascii_case(host)),
    }
}

fn check_origin(config: &HttpConfig, headers: &HeaderMap) -> Result<(), (StatusCode, String)> {
    let values: Vec<_> = headers.get_all(header::ORIGIN).iter().collect();
    if let Some(allowed) = &config.allowed_origins {
        if values.len() > 1 {
            return Err((
                StatusCode::BAD_REQUEST,
                "Duplicated Origin header. Send exactly one Origin header.".to_owned(),
            ));
        }
        if let Some(origin) = values.first() {
            let origin = String::from_utf8_lossy(origin.as_bytes());
            if !allowed.iter().any(|a| *a == origin) {
                return Err(origin_refusal(&origin));
            }
        }
        return Ok(());
    }
    if !protection_on(config) {
        return Ok(());
    }
    for origin in values {
        let origin = String::from_utf8_lossy(origin.as_bytes());
        let authority = origin
            .split_once("://")
            .map(|(_, rest)| rest.split('/').next().unwrap_or_default())
            .unwrap_or_default();
        if authority.is_empty() || !host_allowed(config, host_name(authority)) {
            return Err(origin_refusal(&origin));
        }
    }
    Ok(())
}

fn origin_refusal(origin: &str) -> (StatusCode, String) {
    (
        StatusCode::FORBIDDEN,
        format!("Origin not allowed: {}", wymcp_core::bound::echo(origin)),
    )
}

fn check_host(config: &HttpConfig, headers: &HeaderMap) -> Result<(), (StatusCode, String)> {
    if !protection_on(config) {
        return Ok(());
    }
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(host_name);
    match host {
        Some(host) if host_allowed(config, host) => Ok(()),
        Some(host) => Err((
            StatusCode::FORBIDDEN,
            format!(
                "Host not allowed: {}",
                wymcp_core::bound::echo(&host.to_ascii_lowercase())
            ),
        )),
        None => Err((StatusCode::FORBIDDEN, "Missing Host header".to_owned())),
    }
}

/// Whether an `Accept` header admits `wanted` (absent header: yes).
pub(crate) fn accepts(headers: &HeaderMap, wanted: &str) -> bool {
    let mut seen = false;
    for line in headers.get_all(header::ACCEPT) {
        seen = true;
        if media_ranges(line).any(|range| range_admits(range, wanted.as_bytes())) {
            return true;
        }
    }
    !seen
}

/// The media ranges one `Accept` header line lists, parameters cut and trimmed, read over
/// bytes in place (every POST reads them: nothing is allocated, and a byte loop beats
/// `str::split`'s memchr per piece on a line this short). A line that is not visible ASCII
/// lists none.
pub(crate) fn media_ranges(line: &HeaderValue) -> impl Iterator<Item = &[u8]> {
    line.to_str()
        .ok()
        .into_iter()
        .flat_map(|line| line.as_bytes().split(|&b| b == b','))
        .map(|range| {
            range
                .split(|&b| b == b';')
                .next()
                .unwrap_or_default()
                .trim_ascii()
        })
}

/// Whether a media range admits `wanted` (`type/subtype`): by name, as `*/*`, or as `type/*`,
/// case-insensitively.
pub(crate) fn range_admits(range: &[u8], wanted: &[u8]) -> bool {
    range.eq_ignore_ascii_case(wanted)
        || range == b"*/*"
        || range.strip_suffix(b"/*").is_some_and(|kind| {
            wanted
                .split(|&b| b == b'/')
                .next()
                .is_some_and(|wanted_kind| wanted_kind.eq_ignore_ascii_case(kind))
        })
}

/// Whether the `MCP-Protocol-Version` header names a stateless revision (2026-07-28).
pub(crate) fn header_names_stateless(headers: &HeaderMap) -> bool {
    header_str(headers, &VERSION_NAME)
        .and_then(|v| v.trim().parse::<crate::ProtocolVersion>().ok())
        .is_some_and(crate::ProtocolVersion::is_stateless)
}

/// GET and DELETE in the stateless era: 405, there is no session stream to open or end.
pub(crate) fn stateless_method_not_allowed() -> Response {
    (
        StatusCode::METHOD_NOT_ALLOWED,
        [(header::ALLOW, "POST")],
        axum::Json(serde_json::json!({
            "error": "Method Not Allowed: MCP 2026-07-28 is served by POST only"
        })),
    )
        .into_response()
}

/// The single value of a header, as text.
pub(crate) fn header_str(headers: &HeaderMap, name: impl AsHeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Plain-JSON refusal for GET and DELETE.
pub(crate) fn plain_refusal(refusal: impl Into<WireRefusal>) -> Response {
    refusal.into().plain().into_response()
}

#[cfg(test)]
mod tests {
    use axum::http::{HeaderMap, HeaderValue, header};

    use super::{accepts, range_admits};

    #[test]
    fn a_range_admits_by_name_by_wildcard_and_by_its_type() {
        let wanted = b"text/event-stream";
        for range in [
            &b"text/event-stream"[..],
            b"TEXT/Event-Stream",
            b"*/*",
            b"text/*",
        ] {
            assert!(range_admits(range, wanted), "{range:?}");
        }
        for range in [
            &b"application/*"[..],
            b"text/plain",
            b"text/event-streams",
            b"",
        ] {
            assert!(!range_admits(range, wanted), "{range:?}");
        }
    }

    #[test]
    fn accepts_reads_every_line_and_admits_a_request_without_the_header() {
        let mut headers = HeaderMap::new();
        assert!(accepts(&headers, "text/event-stream"));
        headers.append(header::ACCEPT, HeaderValue::from_static("application/json"));
        assert!(!accepts(&headers, "text/event-stream"));
        headers.append(header::ACCEPT, HeaderValue::from_static("text/*;q=0.1"));
        assert!(accepts(&headers, "text/event-stream"));
    }
}
