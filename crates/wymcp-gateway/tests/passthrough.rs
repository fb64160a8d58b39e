//! Resources, resource templates and prompts of a real upstream
//! (`@modelcontextprotocol/server-everything`, npm, pinned) served by the gateway: listed as
//! the upstream lists them, each read and `prompts/get` forwarded and answered as directly.

#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use serde_json::{Value, json};

#[tokio::test]
async fn resources_templates_and_prompts_pass_through() {
    let Some((direct, client)) = support::everything_direct_and_through_gateway().await else {
        return;
    };

    let uris = |items: &[Value], key: &str| -> Vec<Value> {
        let mut uris: Vec<Value> = items.iter().map(|r| r[key].clone()).collect();
        uris.sort_by_key(ToString::to_string);
        uris
    };
    let want = direct.list_resources().await.unwrap();
    let got = client.request("resources/list", None).await.unwrap();
    assert_eq!(
        uris(got["resources"].as_array().unwrap(), "uri"),
        uris(&want, "uri")
    );
    let first = want[0]["uri"].as_str().unwrap();
    assert_eq!(
        client.read_resource(first).await.unwrap(),
        direct.read_resource(first).await.unwrap()
    );

    let want = direct.list_resource_templates().await.unwrap();
    let got = client
        .request("resources/templates/list", None)
        .await
        .unwrap();
    assert_eq!(
        uris(got["resourceTemplates"].as_array().unwrap(), "uriTemplate"),
        uris(&want, "uriTemplate")
    );
    // The dynamic resource's text names the second it was made ("created at 10:10:41 AM"):
    // compared without it, or two reads a second apart would differ.
    let dynamic = "demo://resource/dynamic/text/7";
    let undated = |mut read: serde_json::Value| {
        if let Some(text) = read["contents"][0]["text"].as_str() {
            let kept = text.split(" created at ").next().unwrap_or(text).to_owned();
            read["contents"][0]["text"] = kept.into();
        }
        read
    };
    let through = undated(client.read_resource(dynamic).await.unwrap());
    assert_eq!(
        through,
        undated(direct.read_resource(dynamic).await.unwrap())
    );
    assert_eq!(
        through["contents"][0]["text"],
        "Resource 7: This is a plaintext resource"
    );

    let want = direct.list_prompts().await.unwrap();
    let got = client.request("prompts/list", None).await.unwrap();
    assert_eq!(
        uris(got["prompts"].as_array().unwrap(), "name"),
        uris(&want, "name")
    );
    let args = json!({"city": "Lyon", "state": "Rhone"});
    assert_eq!(
        client
            .get_prompt("args-prompt", args.clone())
            .await
            .unwrap(),
        direct.get_prompt("args-prompt", args).await.unwrap()
    );
    direct.close().await.unwrap();
}
