//! A request served in-process through the testing kit, shared by the feature tests
//! (`resources.rs`, `prompts.rs`, `completion.rs`; a directory module, so not a test target).

use std::future::Future;

use serde_json::Value;
use wymcp::testing::TestClient;
use wymcp::{ContextBuilder, RpcError, Server};

/// `method` with `params` served by `server` through the testing kit, in the context `ctx`
/// sets up; the future owns its client, so closures can return it.
pub(crate) fn request(
    server: &Server,
    method: &'static str,
    params: Option<Value>,
    ctx: impl FnOnce(ContextBuilder) -> ContextBuilder,
) -> impl Future<Output = Result<Value, RpcError>> {
    let client = TestClient::new(server.clone());
    async move { client.request_with(method, params, ctx).await }
}
