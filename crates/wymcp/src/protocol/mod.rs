//! MCP protocol pieces: revisions and JSON-RPC errors.

mod error;
mod version;

pub use error::RpcError;
pub use version::{ProtocolVersion, UnsupportedVersion};
