//! Operation middleware: every `tools/call` the gates admitted, and every other request of
//! the application (`tools/list`, the resources, prompts and completion methods, the skills
//! methods), reaches its handler through a [`tower::Service`] of [`Operation`]s answering
//! [`Response`]s, so any tower layer wraps them: every operation
//! ([`ServerBuilder::layer`](crate::ServerBuilder::layer)), every call
//! ([`call_layer`](crate::ServerBuilder::call_layer)), a tool
//! ([`ToolPolicy::layer`](crate::ToolPolicy::layer)) or an action
//! ([`ToolPolicy::action_layer`](crate::ToolPolicy::action_layer)), on every transport and in both
//! eras.
//!
//! A layer refuses by failing with a [`Refusal`]: the model reads an `isError` result with its
//! `errorType`, never a JSON-RPC error (a method other than `tools/call` answers the JSON-RPC
//! error `-32000` carrying the same payload). tower's own errors are answered the same way
//! (`timeout` for `TimeoutLayer`, `overloaded` for `LoadShedLayer`); any other error is
//! `middleware_error`. The ready-made policies: [`CallConcurrencyLayer`],
//! [`ResultSizeLimitLayer`], [`CallTimeoutLayer`], [`AuditLayer`], and with the `rate-limit`
//! feature `RateLimitLayer` (a token bucket per caller, on `governor`). `docs/middleware.md`
//! has the model, the order and every refusal's text.
//!
//! A server without layers runs its operations as it did without this module: no service, no
//! box, no operation is built.
//!
//! ```
//! use serde_json::json;
//! use tower::layer::layer_fn;
//! use tower::ServiceExt;
//! use wymcp::{Server, ToolPolicy};
//! use wymcp::middleware::{Operation, Refusal};
//!
//! struct Notes;
//!
//! /// Keep short notes
//! #[wymcp::tool]
//! impl Notes {
//!     /// Delete every note
//!     async fn clear(&self) -> serde_json::Value {
//!         json!({"cleared": true})
//!     }
//! }
//!
//! // A layer of one's own: refuse `clear` to anonymous callers.
//! let signed_in_only = layer_fn(|inner: wymcp::middleware::BoxOperation| {
//!     tower::service_fn(move |op: Operation| {
//!         let inner = inner.clone();
//!         async move {
//!             if op.principal().is_none() {
//!                 return Err(Refusal::new("forbidden", "Sign in to clear the notes.").into());
//!             }
//!             inner.oneshot(op).await
//!         }
//!     })
//! });
//! let server = Server::builder()
//!     .tool_with(Notes, ToolPolicy::new().action_layer("clear", signed_in_only))
//!     .build()
//!     .unwrap();
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let args = json!({"action": "clear", "data": {}});
//! let result = wymcp::testing::call_tool(&server, "notes", Some(args), wymcp::Context::default())
//!     .await
//!     .unwrap();
//! assert!(result.is_error());
//! assert_eq!(result.json().unwrap()["errorType"], "forbidden");
//! # });
//! ```

mod audit;
mod concurrency;
mod key;
mod operation;
#[cfg(feature = "rate-limit")]
mod rate_limit;
#[cfg(feature = "rate-limit")]
pub(crate) mod rate_store;
mod refusal;
mod response;
mod result_size;
mod route;
mod stack;
mod timeout;

pub use crate::context::TransportKind;
pub use audit::{Audit, AuditLayer};
pub use concurrency::{CallConcurrency, CallConcurrencyLayer};
pub use key::Per;
pub use operation::Operation;
pub(crate) use operation::Serve;
#[cfg(feature = "rate-limit")]
pub use rate_limit::{RateLimit, RateLimitLayer};
#[cfg(feature = "rate-limit")]
pub(crate) use rate_store::RateLimitStore;
pub use refusal::Refusal;
pub use response::Response;
pub use result_size::{ResultSizeLimit, ResultSizeLimitLayer};
pub use stack::BoxOperation;
pub(crate) use stack::{Layers, Stack, Wrap};
pub use timeout::{CallTimeout, CallTimeoutLayer};
