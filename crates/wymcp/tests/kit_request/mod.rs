//! A request served in-process through the testing kit, shared by the feature tests
//! (`resources.rs`, `prompts.rs`, `completion.rs`; a directory module, so not a test target).

use std::future::Future;

use serde_json::Value;
use wymcp::testing::TestClient;
use wymcp::{ProtocolVersion, RpcError, Server};

/// `method` with `params` served by `server` through the testing kit (a client of its own, in
/// a session of `version`'s, or statelessly at 2026-07-28); the future owns its client, so
/// closures can return it.
pub(crate) fn request(
    server: &Server,
    method: &'static str,
    params: Option<Value>,
    version: ProtocolVersion,
) -> impl Future<Output = Result<Value, RpcError>> {
    let client = TestClient::new(server.clone()).with_version(version);
    async move { client.request(method, params).await }
}
