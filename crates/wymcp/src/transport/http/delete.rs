//! DELETE: the client ends its session.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt;

use super::checks::wire_checks;
use super::headers::WireHeaders;
use super::rejection::{
    Dialect, MissingSessionId, Rejection, SessionNotFound, SessionStoreUnavailable,
    StatelessMethodNotAllowed,
};
use super::state::State;

/// A DELETE's response. Not an `async fn`: mapping `end`'s future keeps one copy of it in the
/// router's box.
pub(crate) fn handle(state: Arc<State>, req: Request) -> impl Future<Output = Response> {
    end(state, req)
        .map(|ended| ended.unwrap_or_else(|refusal| refusal.write(Dialect::Plain).into_response()))
}

async fn end(state: Arc<State>, req: Request) -> Result<Response, Rejection> {
    let headers = req.headers();
    let wire = WireHeaders::of(headers);
    let identity = match wire_checks(&state, &wire, req.uri()).await {
        Ok(identity) => identity,
        Err(refusal) => {
            refusal.report_auth("DELETE", None, None);
            return Err(refusal);
        }
    };
    // The stateless era has no session to end: 405, once the caller passed the wire checks.
    if wire.version_header().names_stateless() {
        return Err(StatelessMethodNotAllowed.into());
    }
    let Some(session) = wire.session.text() else {
        return Err(MissingSessionId.into());
    };
    // Only the session's owner may end it; to anyone else it does not exist.
    let sessions = state.core.sessions();
    match sessions.end_owned(session, identity.as_ref()).await {
        Ok(true) => {
            tracing::info!("MCP session ended by the client");
            Ok(StatusCode::OK.into_response())
        }
        Ok(false) => Err(SessionNotFound.into()),
        Err(err) => {
            tracing::error!(%err, "MCP session store failed");
            Err(SessionStoreUnavailable.into())
        }
    }
}
