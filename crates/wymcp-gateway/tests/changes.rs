//! An upstream whose tools change while the gateway serves it (`fixtures/upstream.py` in its
//! `changing` mode): its `notifications/tools/list_changed` makes the gateway re-list its
//! tools, serve the new ones and tell the downstream clients; a call to a tool it no longer
//! lists is refused without a request reaching it. A downstream `resources/subscribe` is
//! forwarded upstream, and the upstream's `notifications/resources/updated` reaches the
//! subscribed session.

#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::broadcast;
use wymcp::resource::ServerNotification;
use wymcp::testing::{TestClient, assert_gate_error, assert_ok};
use wymcp::{ProtocolVersion, Server};
use wymcp_gateway::{Expose, Gateway, GatewayConfig, UpstreamConfig};

use support::{call_action, received, record};

fn fixture(python: &str, record: &Path) -> UpstreamConfig {
    UpstreamConfig::stdio("fx", python).args([
        support::fixture("upstream.py"),
        "changing".to_owned(),
        record.display().to_string(),
    ])
}

async fn serve(upstream: UpstreamConfig) -> Server {
    let gateway = Gateway::start(GatewayConfig::new().upstream(upstream)).await;
    assert_eq!(gateway.notices(), []);
    gateway
        .register(Server::builder().name("gateway-test"))
        .build()
        .unwrap()
}

/// The next notification of `method` the server sends its sessions (within 10 s).
async fn next(
    rx: &mut broadcast::Receiver<ServerNotification>,
    method: &str,
) -> ServerNotification {
    let wait = async {
        loop {
            let sent = rx.recv().await.unwrap();
            if sent.method() == method {
                return sent;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), wait)
        .await
        .unwrap_or_else(|_| panic!("no {method} within 10 s"))
}

fn tool_names(client: &TestClient) -> Vec<String> {
    let tools = client.list_tools(ProtocolVersion::V2025_11_25);
    tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn actions_follow_the_upstreams_list_changed() {
    let Some(python) = support::python() else {
        return;
    };
    let record = record("changes-actions");
    let server = serve(fixture(python, &record)).await;
    let mut sessions = server.notifications();
    let client = TestClient::new(server.clone());
    let before = client.list_tools(ProtocolVersion::V2025_11_25);
    assert!(
        before["tools"][0]["description"]
            .as_str()
            .unwrap()
            .contains("actions: work.")
    );

    let swap = call_action(&client, "fx", "work", json!({"n": 1, "label": "swap"})).await;
    assert_ok(&swap);
    next(&mut sessions, "notifications/tools/list_changed").await;

    let after = client.list_tools(ProtocolVersion::V2025_11_25);
    let description = after["tools"][0]["description"].as_str().unwrap();
    assert!(description.contains("actions: fresh."), "{description}");
    let fresh = call_action(&client, "fx", "fresh", json!({"word": "hi"})).await;
    assert_ok(&fresh);
    let reply: Value = serde_json::from_str(&support::text(&fresh)).unwrap();
    assert_eq!(reply["content"][0]["text"], "fresh hi");
    assert_eq!(received(&record, "tools/call"), 2);

    // `work` is gone: the gates refuse it, and the upstream sees nothing.
    let gone = call_action(&client, "fx", "work", json!({"n": 2})).await;
    assert_gate_error(&gone, "unknown_action");
    let wrong = call_action(&client, "fx", "fresh", json!({"word": 3})).await;
    assert_gate_error(&wrong, "invalid_values");
    assert_eq!(received(&record, "tools/call"), 2);
    // Listed twice: at start and after the change.
    assert_eq!(received(&record, "tools/list"), 2);
}

#[tokio::test]
async fn tools_follow_the_upstreams_list_changed() {
    let Some(python) = support::python() else {
        return;
    };
    let record = record("changes-tools");
    let server = serve(fixture(python, &record).expose(Expose::Tools)).await;
    let mut sessions = server.notifications();
    let client = TestClient::new(server.clone());
    assert_eq!(tool_names(&client), ["fx_work", "help"]);

    let args = json!({"n": 1, "label": "swap"});
    let swap = client.call_tool("fx_work", args).await.unwrap();
    assert_ok(&swap);
    next(&mut sessions, "notifications/tools/list_changed").await;

    assert_eq!(tool_names(&client), ["fx_fresh", "help"]);
    let fresh = client
        .call_tool("fx_fresh", json!({"word": "hi"}))
        .await
        .unwrap();
    assert_eq!(support::text(&fresh), "fresh hi");
    let gone = client
        .call_tool("fx_work", json!({"n": 2}))
        .await
        .unwrap_err();
    assert_eq!(gone.code(), -32602);
    assert_eq!(received(&record, "tools/call"), 2);
}

#[tokio::test]
async fn a_subscribe_is_forwarded_and_the_upstreams_update_relayed() {
    let Some(python) = support::python() else {
        return;
    };
    let record = record("changes-resources");
    let server = serve(fixture(python, &record)).await;
    let mut sessions = server.notifications();
    let client = TestClient::new(server.clone());
    let note = Some(json!({"uri": "fixture://note"}));
    client
        .request("resources/subscribe", note.clone())
        .await
        .unwrap();
    assert_eq!(received(&record, "resources/subscribe"), 1);

    let touch = call_action(&client, "fx", "work", json!({"n": 1, "label": "touch"})).await;
    assert_ok(&touch);
    let updated = next(&mut sessions, "notifications/resources/updated").await;
    assert_eq!(updated.message["params"]["uri"], "fixture://note");
    assert_eq!(updated.session_id.as_deref(), client.session_id());

    client.request("resources/unsubscribe", note).await.unwrap();
    assert_eq!(received(&record, "resources/unsubscribe"), 1);
}
