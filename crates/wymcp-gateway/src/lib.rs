//! Any MCP server served through wymcp: its tools folded into action-dispatched tools (or kept
//! one by one), every call checked by wymcp's gates before a request reaches it, each upstream
//! behind a timeout, answer limits and a restart with backoff. The guide's page is
//! `docs/gateway.md`; the binary `wymcp-gateway` serves a Claude Desktop `mcpServers` file.
//!
//! ```no_run
//! use wymcp_gateway::{Expose, Gateway, GatewayConfig, UpstreamConfig};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let config = GatewayConfig::new()
//!     // Its tools become the actions of one tool, `memory`.
//!     .upstream(UpstreamConfig::stdio("memory", "npx").args(["-y", "@modelcontextprotocol/server-memory"]))
//!     // Each of its tools served as it is.
//!     .upstream(
//!         UpstreamConfig::http("time", "http://127.0.0.1:9000/mcp")
//!             .expose(Expose::Tools)
//!             .prefix(""),
//!     );
//! let gateway = Gateway::start(config).await;
//! for notice in gateway.notices() {
//!     eprintln!("{notice}");
//! }
//! let server = gateway.register(wymcp::Server::builder().name("gateway")).build()?;
//! wymcp::run(server).await?;
//! # Ok(()) }
//! ```

mod actions;
mod changes;
mod completion;
pub mod config;
mod error;
mod gateway;
mod openapi;
mod passthrough;
mod relay;
mod report;
mod skills;
mod tasks;
mod tools;
mod upstream;

pub use config::{Era, Expose, GatewayConfig, SchemaFallback, Target, UpstreamConfig};
pub use error::{ConfigError, UpstreamError};
pub use gateway::Gateway;
pub use openapi::{ApiAuth, OpenApiUpstream};
pub use report::Notice;
