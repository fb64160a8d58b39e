//! The HTTP headers MCP defines, by their lower-case names (as `http` keeps names): one
//! spelling for the transport that reads them and the serving core that checks them.

/// `Mcp-Session-Id`: the session a session-era request belongs to.
pub(crate) const SESSION_ID: &str = "mcp-session-id";
/// `MCP-Protocol-Version`: the revision a request speaks.
pub(crate) const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// `Mcp-Method`: a 2026-07-28 request's method, repeated from the body.
pub(crate) const METHOD: &str = "mcp-method";
/// `Mcp-Name`: a 2026-07-28 request's tool, prompt or resource, repeated from the body.
pub(crate) const NAME: &str = "mcp-name";
