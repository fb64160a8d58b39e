//! MCP protocol pieces: revisions, JSON-RPC messages and errors, the lifecycle, the method table.

mod error;
mod jsonrpc;
mod lifecycle;
mod methods;
pub mod stateless;
mod version;

pub use error::RpcError;
pub use jsonrpc::{Kind, failure, success, validate_envelope};
pub(crate) use jsonrpc::{success_bytes, success_text};
pub use lifecycle::{LogLevel, negotiate};
pub use methods::Method;
pub use version::{ProtocolVersion, UnsupportedVersion};

/// The former name of [`stateless`], kept so existing imports compile.
#[doc(hidden)]
pub use stateless as modern;
