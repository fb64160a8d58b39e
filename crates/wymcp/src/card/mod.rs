//! Discovery documents describing a server before any client connects: the MCP Server Card
//! (SEP-2127), served by the HTTP transport at `<endpoint>/server-card`, and the MCP
//! registry's `server.json` (schema 2025-12-11), which publishing tools upload.
//!
//! Both are generated from the [`ServerBuilder`](crate::ServerBuilder)'s identity: `name`
//! (reverse-DNS, `namespace/server`, for the registry), `version`, `title`, `description`,
//! `icon`s, `website_url`, [`repository`](crate::ServerBuilder::repository) and
//! [`remote`](crate::ServerBuilder::remote)s.
//!
//! ```
//! use wymcp::Server;
//! use wymcp::card::{Package, Remote, Repository};
//!
//! let server = Server::builder()
//!     .name("io.github.example/notes")
//!     .version("1.2.0")
//!     .description("Take and search notes")
//!     .repository(Repository::github("https://github.com/example/notes"))
//!     .remote(Remote::streamable_http("https://notes.example.com/mcp"))
//!     .build()?;
//!
//! let card = server.server_card();
//! assert_eq!(card["name"], "io.github.example/notes");
//! assert_eq!(card["remotes"][0]["type"], "streamable-http");
//!
//! let registry = server.server_json(&[Package::oci("ghcr.io/example/notes:1.2.0")])?;
//! assert_eq!(registry["packages"][0]["registryType"], "oci");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub(crate) mod document;
pub(crate) mod info;
pub(crate) mod registry;

pub use document::{SERVER_CARD_MEDIA_TYPE, SERVER_CARD_SCHEMA};
pub use info::{Remote, Repository};
pub use registry::{Package, RegistryError, SERVER_JSON_SCHEMA};
