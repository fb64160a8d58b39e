//! The stateless era (MCP 2026-07-28), served the same way by every transport: a request's
//! admission (the JSON-RPC envelope, the method, the `_meta` envelope, the revision), its
//! context, its handler under a multi round-trip input round ([`crate::mrtr`]), and its
//! answer shaped for the era (`resultType`, `_meta` serverInfo, cache hints, `-32021`).
//!
//! What is left to a transport is what only it knows: Streamable HTTP checks its headers
//! between the steps ([`admit::Incoming`] first, then [`admit::Incoming::version`]) and
//! maps each [`Refusal`] to a status; stdio has no header layer and writes every answer as
//! one line.
//! `subscriptions/listen` shares its filter and its messages ([`listen`]); each transport
//! frames the stream its own way (SSE events, tagged lines on stdout).
//!
//! The order of the checks, and what each refusal is on the wire:
//!
//! | Check | JSON-RPC | HTTP |
//! |---|---|---|
//! | the JSON-RPC envelope | `-32600` | 400 |
//! | a method this era serves, for a capability the server declares | `-32601` | 404 |
//! | `_meta` with `protocolVersion` and `clientCapabilities` | `-32602` | 400 |
//! | (HTTP: `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`) | `-32020` | 400 |
//! | the revision served | `-32022` | 400 |
//! | (HTTP: `Mcp-Param-*`) | `-32020` | 400 |
//! | `requestState`, `inputResponses` | `-32602` | 200 |
//! | a client capability the handler needed, undeclared | `-32021` | 400 |

mod admit;
mod execute;
pub(crate) mod listen;

pub(crate) use admit::{Prepared, Refusal, admit, names_era};
pub(crate) use execute::{Answer, answer, execute};
