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
//! set: the public names a server answers to are not known to it. The authority of an
//! absolute-form request target (`POST http://evil.example/mcp`), which RFC 9112 §3.2.2 puts
//! in place of `Host`, is checked the same way.

use axum::http::header::AsHeaderName;
use axum::http::{HeaderMap, HeaderValue, Uri};

use super::auth::{ChallengeError, Presented, challenge, presented};
use super::authority::{authority_host, is_loopback_name, origin_host, same_host};
use super::config::HttpConfig;
use super::headers::{Found, WireHeaders};
use super::rejection::{
    AuthDenial, AuthFailure, AuthRefused, DuplicatedHeader, HostNotAllowed, InvalidHost,
    MissingHost, OriginNotAllowed, Rejection,
};
use super::state::State;
use crate::serve::Identity;

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
            let message = crate::serve::Fault::from_panic(payload.as_ref())
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
    target: &Uri,
) -> Result<Option<Identity>, Rejection> {
    check_origin(&state.config, &wire.origin)?;
    check_host(&state.config, &wire.host)?;
    check_target(&state.config, target)?;
    let identity = match &state.auth {
        None => None,
        Some(auth) => match authenticate_contained(auth.as_ref(), wire.map).await {
            // The token that proved it rides with the identity for a tool that forwards it
            // on purpose (`Identity::bearer_token`); it is never kept or shown.
            Ok(identity) => Some(match presented(wire.map) {
                Presented::Bearer(token) => identity.with_bearer_token(token),
                _ => identity,
            }),
            Err((refusal, panic)) => return Err(auth_refusal(state, wire.map, refusal, panic)),
        },
    };
    single(&wire.session, "Mcp-Session-Id")?;
    single(&wire.version, "MCP-Protocol-Version")?;
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
) -> Rejection {
    let failure = AuthFailure {
        auth_module: state.auth_module,
        panic,
        reason: refusal.0.clone(),
    };
    if failure.panic.is_none() && refusal.is_unavailable() {
        let denial = AuthDenial::Unavailable;
        let (text, challenge) = (refusal.0, None);
        return AuthRefused {
            denial,
            text,
            challenge,
            failure,
        }
        .into();
    }
    let (denial, text, error) = match (&failure.panic, presented(headers)) {
        (Some(_), _) => (AuthDenial::Unauthorized, None, ChallengeError::None),
        (None, Presented::Malformed(why)) => (
            AuthDenial::Malformed,
            Some(why.to_owned()),
            ChallengeError::InvalidRequest,
        ),
        (None, Presented::Bearer(_)) => {
            (AuthDenial::Unauthorized, None, ChallengeError::InvalidToken)
        }
        (None, Presented::Nothing | Presented::OtherScheme) => {
            (AuthDenial::Unauthorized, None, ChallengeError::None)
        }
    };
    AuthRefused {
        denial,
        text: text.unwrap_or(refusal.0),
        challenge: Some(challenge(&state.config.www_authenticate, error)),
        failure,
    }
    .into()
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
    name: &'static str,
) -> Result<Option<&'h HeaderValue>, DuplicatedHeader> {
    match found.repeated {
        false => Ok(found.first),
        true => Err(DuplicatedHeader { name }),
    }
}

/// A present `Origin` must be allowed (see the module's documentation), whatever the bind
/// address and whether or not DNS-rebinding protection is on.
fn check_origin(config: &HttpConfig, origin: &Found<'_>) -> Result<(), Rejection> {
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
        false => Err(OriginNotAllowed {
            origin: wymcp_core::bound::echo(&origin),
        }
        .into()),
    }
}

/// `Host`: one header, a valid authority (400 otherwise), then an allowed name when
/// DNS-rebinding protection is on (403 otherwise).
fn check_host(config: &HttpConfig, host: &Found<'_>) -> Result<(), Rejection> {
    let protection = protection_on(config);
    let Some(value) = single(host, "Host")? else {
        return match protection {
            true => Err(MissingHost.into()),
            false => Ok(()),
        };
    };
    let Some(host) = value.to_str().ok().and_then(authority_host) else {
        let host = wymcp_core::bound::echo(&String::from_utf8_lossy(value.as_bytes()));
        return Err(InvalidHost { host }.into());
    };
    if !protection || host_allowed(config, host) {
        return Ok(());
    }
    let host = wymcp_core::bound::echo(&host.to_ascii_lowercase());
    Err(HostNotAllowed { host }.into())
}

/// The authority of an absolute-form request target (`POST http://evil.example/mcp`; HTTP/2's
/// `:authority`) is checked as `Host` is: RFC 9112 §3.2.2 makes it replace `Host`, so an
/// allowed `Host` beside a foreign target is refused (403 `Host not allowed: <host>`), and a
/// target whose authority is not `host[:port]` is 400.
fn check_target(config: &HttpConfig, target: &Uri) -> Result<(), Rejection> {
    let Some(authority) = target.authority() else {
        return Ok(());
    };
    let Some(host) = authority_host(authority.as_str()) else {
        let host = wymcp_core::bound::echo(authority.as_str());
        return Err(InvalidHost { host }.into());
    };
    if !protection_on(config) || host_allowed(config, host) {
        return Ok(());
    }
    let host = wymcp_core::bound::echo(&host.to_ascii_lowercase());
    Err(HostNotAllowed { host }.into())
}

/// The single value of a header, as text.
pub(crate) fn header_str(headers: &HeaderMap, name: impl AsHeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}
