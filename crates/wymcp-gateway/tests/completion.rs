//! Completion through the gateway: `completion/complete` for an upstream prompt's argument
//! (`@modelcontextprotocol/server-everything`, npm, pinned: its `completable-prompt`) is
//! forwarded and answered as the upstream answers it directly.

#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::time::Duration;

use serde_json::json;
use wymcp::client::Client;
use wymcp::testing::TestClient;
use wymcp_gateway::{Gateway, GatewayConfig, UpstreamConfig};

#[tokio::test]
async fn an_upstream_prompt_argument_is_completed_as_directly() {
    let Some(entry) = support::npm_server("everything") else {
        return;
    };
    let direct = Client::stdio("node")
        .args([entry.as_str(), "stdio"])
        .timeout(Duration::from_secs(30))
        .connect()
        .await
        .unwrap();
    let upstream = UpstreamConfig::stdio("everything", "node").args([entry.as_str(), "stdio"]);
    let gateway = Gateway::start(GatewayConfig::new().upstream(upstream)).await;
    assert_eq!(gateway.notices(), []);
    let server = gateway
        .register(wymcp::Server::builder().name("gateway-test"))
        .build()
        .unwrap();
    let client = TestClient::new(server);

    let reference = json!({"type": "ref/prompt", "name": "completable-prompt"});
    let want = direct
        .complete(reference.clone(), "department", "S")
        .await
        .unwrap();
    assert_eq!(want["values"], json!(["Sales", "Support"]));
    let got = client
        .request(
            "completion/complete",
            Some(json!({"ref": reference, "argument": {"name": "department", "value": "S"}})),
        )
        .await
        .unwrap();
    assert_eq!(got["completion"]["values"], want["values"], "{got}");
    assert_eq!(got["completion"]["total"], 2, "{got}");
    direct.close().await.unwrap();
}
