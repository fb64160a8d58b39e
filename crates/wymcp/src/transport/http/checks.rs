//! The wire checks every route runs before touching session state: Origin and Host
//! (DNS-rebinding protection), auth, the singleton headers; and the reading of `Accept`.
//!
//! **Origin** is validated whatever address the server is bound to (the MCP transport spec:
//! servers MUST validate it, and answer a present, invalid one with 403). A request without
//! one (a non-browser client) passes. A present `Origin` is allowed when it is listed in
//! `allowed_origins`, or, without that list, when its host is an allowed `Host` name: the
//! `allowed_hosts` list, else the loopback names. Matching the request's own `Host` instead
//! ("same origin") is not enough: under DNS rebinding the browser sends the attacker's name
//! in both headers, so they always agree.
//!
//! **Host** is parsed strictly on every request: exactly one header (two are 400), a valid
//! authority (`[::1].evil.com` or garbage is 400). Its name is then checked against the host
//! allowlist when DNS-rebinding protection is on (403), which
//! [`HttpServer::bind`](super::HttpServer::bind) turns off on a non-loopback address unless
//! set: the public names a server answers to are not known to it.

use axum::http::header::AsHeaderName;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::auth::{ChallengeError, Presented, challenge, presented};
use super::authority::{authority_host, is_loopback_name, origin_host, same_host};
use super::config::HttpConfig;
use super::error::HttpError;
use super::headers::{Found, WireHeaders};
use super::state::State;
use crate::context::Identity;

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
                error = %wymcp_core::bound::echo(error).escape_debug(),
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
    wire: &WireHeaders<'_>,
) -> Result<Option<Identity>, WireRefusal> {
    check_origin(&state.config, &wire.origin).map_err(WireRefusal::from)?;
    check_host(&state.config, &wire.host).map_err(WireRefusal::from)?;
    let identity = match &state.auth {
        None => None,
        Some(auth) => match authenticate_contained(auth.as_ref(), wire.map).await {
            Ok(identity) => Some(identity),
            Err((refusal, panic)) => return Err(auth_refusal(state, wire.map, refusal, panic)),
        },
    };
    single(&wire.session, "Mcp-Session-Id").map_err(WireRefusal::from)?;
    single(&wire.version, "MCP-Protocol-Version").map_err(WireRefusal::from)?;
    Ok(identity)
}

/// The refusal of a request auth refused (RFC 6750 §3.1): a malformed `Authorization` header
/// is 400 `invalid_request`; bearer credentials refused are 401 `invalid_token`; no bearer
/// credentials at all (none, or another scheme) is 401 without an error code; a panicking
/// hook is 401 with the bare challenge; credentials that could not be checked now
/// ([`AuthRefusal::unavailable`](super::auth::AuthRefusal::unavailable)) are 503.
fn auth_refusal(
    state: &State,
    headers: &HeaderMap,
    refusal: super::auth::AuthRefusal,
    panic: Option<String>,
) -> WireRefusal {
    if panic.is_none() && refusal.is_unavailable() {
        return WireRefusal {
            status: StatusCode::SERVICE_UNAVAILABLE,
            auth: Some(AuthFailure {
                auth_module: state.auth_module,
                panic: None,
                reason: refusal.0.clone(),
            }),
            message: refusal.0,
            challenge: None,
        };
    }
    let (status, message, error) = match (&panic, presented(headers)) {
        (Some(_), _) => (StatusCode::UNAUTHORIZED, None, ChallengeError::None),
        (None, Presented::Malformed(why)) => (
            StatusCode::BAD_REQUEST,
            Some(why.to_owned()),
            ChallengeError::InvalidRequest,
        ),
        (None, Presented::Bearer(_)) => {
            (StatusCode::UNAUTHORIZED, None, ChallengeError::InvalidToken)
        }
        (None, Presented::Nothing | Presented::OtherScheme) => {
            (StatusCode::UNAUTHORIZED, None, ChallengeError::None)
        }
    };
    WireRefusal {
        status,
        auth: Some(AuthFailure {
            auth_module: state.auth_module,
            panic,
            reason: refusal.0.clone(),
        }),
        message: message.unwrap_or(refusal.0),
        challenge: Some(challenge(&state.config.www_authenticate, error)),
    }
}

fn protection_on(config: &HttpConfig) -> bool {
    config.dns_rebinding_protection.unwrap_or(true)
}

/// Whether a parsed host name is allowed: by `allowed_hosts`, else a loopback name.
fn host_allowed(config: &HttpConfig, host: &str) -> bool {
    match &config.allowed_hosts {
        Some(list) => list.iter().any(|h| same_host(h, host)),
        None => is_loopback_name(host),
    }
}

/// The one value of a header that must appear at most once, or the 400 naming it.
fn single<'h>(
    found: &Found<'h>,
    label: &str,
) -> Result<Option<&'h HeaderValue>, (StatusCode, String)> {
    match found.repeated {
        false => Ok(found.first),
        true => Err((
            StatusCode::BAD_REQUEST,
            format!("Duplicated {label} header. Send exactly one {label} header."),
        )),
    }
}

/// A present `Origin` must be allowed (see the module's documentation), whatever the bind
/// address and whether or not DNS-rebinding protection is on.
fn check_origin(config: &HttpConfig, origin: &Found<'_>) -> Result<(), (StatusCode, String)> {
    let Some(origin) = single(origin, "Origin")? else {
        return Ok(());
    };
    let origin = String::from_utf8_lossy(origin.as_bytes());
    let allowed = match &config.allowed_origins {
        Some(allowed) => allowed.iter().any(|a| *a == origin),
        None => origin_host(&origin).is_some_and(|host| host_allowed(config, host)),
    };
    match allowed {
        true => Ok(()),
        false => Err(origin_refusal(&origin)),
    }
}

fn origin_refusal(origin: &str) -> (StatusCode, String) {
    (
        StatusCode::FORBIDDEN,
        format!("Origin not allowed: {}", wymcp_core::bound::echo(origin)),
    )
}

/// `Host`: one header, a valid authority (400 otherwise), then an allowed name when
/// DNS-rebinding protection is on (403 otherwise).
fn check_host(config: &HttpConfig, host: &Found<'_>) -> Result<(), (StatusCode, String)> {
    let protection = protection_on(config);
    let Some(value) = single(host, "Host")? else {
        return match protection {
            true => Err((StatusCode::FORBIDDEN, "Missing Host header".to_owned())),
            false => Ok(()),
        };
    };
    let Some(host) = value.to_str().ok().and_then(authority_host) else {
        return Err((
            StatusCode::BAD_REQUEST,
            format!(
                "Invalid Host header: expected host[:port], got {}",
                wymcp_core::bound::echo(&String::from_utf8_lossy(value.as_bytes()))
            ),
        ));
    };
    if !protection || host_allowed(config, host) {
        return Ok(());
    }
    Err((
        StatusCode::FORBIDDEN,
        format!(
            "Host not allowed: {}",
            wymcp_core::bound::echo(&host.to_ascii_lowercase())
        ),
    ))
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
