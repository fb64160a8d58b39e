//! Transports that serve a [`Server`](crate::Server) to MCP clients.
//!
//! [`http`] serves the Streamable HTTP transport of the session era (MCP 2025-03-26,
//! 2025-06-18, 2025-11-25); [`stdio`] serves one session over stdin and stdout. Both serve
//! the stateless era (MCP 2026-07-28) beside it, decided per request, through one
//! transport-neutral code path.

#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "stdio")]
pub mod stdio;
