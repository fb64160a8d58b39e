//! The matrix: one scripted conversation over every path a request can take, HTTP and stdio,
//! each in the session era (2025-11-25, after `initialize`) and in the stateless era
//! (2026-07-28, each request carrying its envelope). A [`Client`] sends a request on its
//! path and gives back the whole [`Exchange`]: the response, the related notifications, and
//! what the server asked the client (a server→client request answered on the wire in the
//! session era, an `input_required` result answered by a retry at 2026-07-28). Shared by
//! `matrix.rs` (a directory module, so not a test target).

mod client;
mod era;
mod fixture;
mod http;
pub(crate) mod refusals;
mod schema;
mod stdio;
mod transcript;

pub(crate) use client::Client;
pub(crate) use era::{SESSION_VERSION, STATELESS_VERSION};
pub(crate) use fixture::{INSTRUCTIONS, NAME, README, VERSION};
pub(crate) use transcript::Transcript;

/// One way a request reaches the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Path {
    /// Streamable HTTP, in a session opened by `initialize`.
    HttpSession,
    /// Streamable HTTP at 2026-07-28: no session, the envelope and headers on every POST.
    HttpStateless,
    /// stdio, after `initialize`.
    StdioSession,
    /// stdio at 2026-07-28: no `initialize`, the envelope on every request.
    StdioStateless,
}

impl Path {
    /// `session`'s value on a session-era path, `stateless`'s at 2026-07-28.
    pub(crate) fn by_era<T>(self, session: T, stateless: T) -> T {
        if self.stateless() { stateless } else { session }
    }

    /// Whether requests on this path are of the 2026-07-28 era.
    pub(crate) fn stateless(self) -> bool {
        matches!(self, Path::HttpStateless | Path::StdioStateless)
    }

    /// Whether this path is HTTP (which answers with a status besides the JSON-RPC message).
    pub(crate) fn http(self) -> bool {
        matches!(self, Path::HttpSession | Path::HttpStateless)
    }
}
