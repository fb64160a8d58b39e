//! Resources: static resources (text or binary), dynamic resources, resource templates (RFC 6570
//! URI templates) with a read callback, subscriptions and their notifications.
//!
//! Declare them on the [`ServerBuilder`](crate::ServerBuilder)
//! ([`resource`](crate::ServerBuilder::resource),
//! [`resource_template`](crate::ServerBuilder::resource_template)); `build()` validates every URI
//! and template and refuses duplicates. The server answers `resources/list` (paginated),
//! `resources/templates/list`, `resources/read`, `resources/subscribe` and
//! `resources/unsubscribe` over every transport; in tests,
//! [`TestClient`](crate::testing::TestClient) sends them in-process.
//!
//! ```
//! use wymcp::Resource;
//! use wymcp::Server;
//! use wymcp::testing::TestClient;
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let server = Server::builder()
//!     .resource(Resource::text("test://static-text", "static-text", "Hello").mime_type("text/plain"))
//!     .build()
//!     .unwrap();
//! let read = TestClient::new(server).read_resource("test://static-text").await.unwrap();
//! assert_eq!(read["contents"][0]["text"], "Hello");
//! # });
//! ```

mod contents;
pub(crate) mod definition;
pub(crate) mod from_fn;
mod notify;
mod read;
pub(crate) mod registry;
pub(crate) mod subscription_store;
pub(crate) mod subscriptions;
mod template;

pub use contents::ResourceContents;
pub(crate) use definition::{Resource, ResourceTemplate};
pub use from_fn::{IntoContents, ReadFn, read_fn};
pub use notify::ServerNotification;
pub use read::{RESOURCE_NOT_FOUND, ReadResource, ResourceError};
pub(crate) use subscription_store::{SubscriptionError, SubscriptionStore};
pub use template::{MatchError, UriTemplate, Variables};

pub(crate) use definition::write_named;
pub(crate) use notify::{Change, Hub};
