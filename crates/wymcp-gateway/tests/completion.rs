//! Completion through the gateway: `completion/complete` for an upstream prompt's argument
//! (`@modelcontextprotocol/server-everything`, npm, pinned: its `completable-prompt`) is
//! forwarded and answered as the upstream answers it directly.

#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use serde_json::json;

#[tokio::test]
async fn an_upstream_prompt_argument_is_completed_as_directly() {
    let Some((direct, client)) = support::everything_direct_and_through_gateway().await else {
        return;
    };

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
