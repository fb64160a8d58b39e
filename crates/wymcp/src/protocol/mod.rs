//! MCP's wire types: revisions, errors, log levels, the method table, and the stateless era's
//! `_meta` keys, error codes and cache hints. (The JSON-RPC plumbing is the crate's own.)

pub(crate) mod content;
pub(crate) mod error;
pub(crate) mod extensions;
pub(crate) mod headers;
mod jsonrpc;
mod lifecycle;
mod methods;
pub mod stateless;
pub(crate) mod version;

pub(crate) use error::RpcError;
pub(crate) use jsonrpc::{
    Kind, Members, failure, rejection_id, success, success_bytes, success_text, validate_members,
};
pub use lifecycle::LogLevel;
pub(crate) use lifecycle::negotiate;
pub use methods::Method;
pub(crate) use methods::{Handler, Lifecycle, Serve};
pub(crate) use version::ProtocolVersion;
pub use version::UnsupportedVersion;
