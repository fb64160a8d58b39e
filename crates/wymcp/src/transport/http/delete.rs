//! DELETE: the client ends its session.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::checks::{plain_refusal, wire_checks};
use super::headers::WireHeaders;
use super::state::State;
use crate::serve::owns;

pub(crate) async fn handle(state: Arc<State>, req: Request) -> Response {
    let headers = req.headers();
    let wire = WireHeaders::of(headers);
    let identity = match wire_checks(&state, &wire).await {
        Ok(identity) => identity,
        Err(refusal) => {
            refusal.report_auth("DELETE", None, None);
            return plain_refusal(refusal);
        }
    };
    // The stateless era has no session to end: 405, once the caller passed the wire checks.
    if wire.version_header().names_stateless() {
        return super::stateless_method_not_allowed();
    }
    let Some(session) = wire.session.text() else {
        return plain_refusal((
            StatusCode::BAD_REQUEST,
            "Missing mcp-session-id header".to_owned(),
        ));
    };
    // Only the session's owner may end it; to anyone else it does not exist.
    match state
        .core
        .store()
        .load(session, state.config.session_ttl)
        .await
    {
        Ok(Some(record)) if owns(&record, identity.as_ref()) => {}
        Ok(found) => {
            if found.is_none() {
                state.core.forget_gone(session);
            }
            return plain_refusal((StatusCode::NOT_FOUND, "Session not found".to_owned()));
        }
        Err(err) => {
            tracing::error!(%err, "MCP session store failed");
            return plain_refusal((
                StatusCode::SERVICE_UNAVAILABLE,
                "Session store unavailable: try again shortly".to_owned(),
            ));
        }
    }
    match state.end_session(session).await {
        Ok(true) => {
            tracing::info!("MCP session ended by the client");
            StatusCode::OK.into_response()
        }
        Ok(false) => plain_refusal((StatusCode::NOT_FOUND, "Session not found".to_owned())),
        Err(err) => {
            tracing::error!(%err, "MCP session store failed");
            plain_refusal((
                StatusCode::SERVICE_UNAVAILABLE,
                "Session store unavailable: try again shortly".to_owned(),
            ))
        }
    }
}
