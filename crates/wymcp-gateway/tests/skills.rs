//! An upstream's skills (the skills extension, SEP-2640) through the gateway: a wymcp server
//! serving two skills over Streamable HTTP on 127.0.0.1 as the upstream, the gateway in front
//! of it. The downstream client lists, gets, reads and browses exactly what the upstream
//! serves (the same entries, digests and bytes), the gateway declares the extension as the
//! upstream does, and a skill another upstream already serves is left out with a notice.

#![allow(clippy::unwrap_used, missing_docs)]

use serde_json::{Value, json};
use wymcp::skill::Skill;
use wymcp::testing::TestClient;
use wymcp::transport::http::{HttpServer, StreamableHttp};
use wymcp::{ProtocolVersion, Resource, Server};
use wymcp_gateway::{Expose, Gateway, GatewayConfig, Notice, UpstreamConfig};

/// The upstream: a skill with a text file and a binary one, a skill under a prefix, and a
/// plain resource beside them.
fn upstream() -> Server {
    let review = Skill::new(
        "---\nname: code-review\ndescription: Review a change against the checklist\n---\n\
         # Code review\n\nWalk through `references/checklist.md`.\n",
    )
    .file(
        "references/checklist.md",
        "- every input path refuses bad input\n",
    )
    .file("assets/mark.bin", vec![0u8, 159, 146, 150]);
    let refunds =
        Skill::new("---\nname: refunds\ndescription: Process refund requests\n---\n# Refunds\n")
            .prefix("acme/billing");
    Server::builder()
        .name("skills-upstream")
        .skill(review)
        .skill(refunds)
        .resource(Resource::text("test://plain", "plain", "not a skill"))
        .build()
        .unwrap()
}

/// Serves `server` over Streamable HTTP on 127.0.0.1: its `/mcp` URL.
async fn serve_http(server: Server) -> String {
    let http = HttpServer::bind("127.0.0.1:0", StreamableHttp::builder(server))
        .await
        .unwrap();
    let url = format!("http://{}/mcp", http.local_addr().unwrap());
    tokio::spawn(http.run());
    url
}

/// The gateway serving `config`, and a 2026-07-28 client of it; the notices beside the
/// upstreams' own `help` tools (the gateway has one).
async fn gateway(config: GatewayConfig) -> (TestClient, Vec<Notice>) {
    let gateway = Gateway::start(config).await;
    let notices = gateway
        .notices()
        .iter()
        .filter(|n| n.tool() != Some("help"))
        .cloned()
        .collect();
    let server = gateway
        .register(Server::builder().name("gateway"))
        .build()
        .unwrap();
    let client = TestClient::new(server).with_version(ProtocolVersion::V2026_07_28);
    (client, notices)
}

fn tools(name: &str, url: &str) -> UpstreamConfig {
    UpstreamConfig::http(name, url)
        .expose(Expose::Tools)
        .prefix("")
}

/// `method` with `params`, answered; the result's `_meta` (which names the server that
/// answered) left out.
async fn ask(client: &TestClient, method: &str, params: Value) -> Value {
    let mut result = client.request(method, Some(params)).await.unwrap();
    if let Some(result) = result.as_object_mut() {
        result.remove("_meta");
    }
    result
}

const REVIEW_MD: &str = "---\nname: code-review\ndescription: Review a change against the checklist\n---\n# Code review\n\nWalk through `references/checklist.md`.\n";

#[tokio::test]
async fn the_downstream_lists_gets_reads_and_browses_the_upstreams_skills() {
    let upstream = upstream();
    let direct = TestClient::new(upstream.clone()).with_version(ProtocolVersion::V2026_07_28);
    let url = serve_http(upstream).await;
    let (client, notices) = gateway(GatewayConfig::new().upstream(tools("up", &url))).await;
    assert_eq!(notices, []);

    // Declared as the upstream declares it.
    let discover = ask(&client, "server/discover", json!({})).await;
    assert_eq!(
        discover["capabilities"]["extensions"]["io.modelcontextprotocol/skills"],
        json!({"directoryRead": true})
    );

    let listed = ask(&client, "skills/list", json!({})).await;
    // (The digests are `sha256sum` of the bytes above.)
    assert_eq!(
        listed["skills"],
        json!([
            {"uri": "skill://code-review/SKILL.md",
             "frontmatter": {"name": "code-review", "description": "Review a change against the checklist"},
             "resources": [
                {"uri": "skill://code-review/SKILL.md",
                 "digest": "sha256:f7512dda116cfbfe89e5a866ea91f5003b36f7497f3c4847ce4f39d158503482",
                 "size": 132},
                {"uri": "skill://code-review/references/checklist.md",
                 "digest": "sha256:abf99549ddf99f7c8d6158979f7c039a186312d22ba2cb811be1ba376f1ee3e8",
                 "size": 37},
                {"uri": "skill://code-review/assets/mark.bin",
                 "digest": "sha256:b02a591131217cb579165aeccf0d94569acffb9934c84d6c813d77e3abedd233",
                 "size": 4}]},
            {"uri": "skill://acme/billing/refunds/SKILL.md",
             "frontmatter": {"name": "refunds", "description": "Process refund requests"},
             "resources": [
                {"uri": "skill://acme/billing/refunds/SKILL.md",
                 "digest": "sha256:a34e463a5cf8f7d267765596d45527a5f090bb247be50131b5c534d953374d9f",
                 "size": 69}]}
        ])
    );
    // The entries, digests and cache hints the upstream itself answers.
    assert_eq!(listed, ask(&direct, "skills/list", json!({})).await);

    let get = json!({"uri": "skill://acme/billing/refunds/SKILL.md"});
    let got = ask(&client, "skills/get", get.clone()).await;
    assert_eq!(got["skill"], listed["skills"][1]);
    assert_eq!(got, ask(&direct, "skills/get", get).await);
    let unknown = client
        .request(
            "skills/get",
            Some(json!({"uri": "skill://nothing/SKILL.md"})),
        )
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), -32602);

    // Every file reads as it does upstream: SKILL.md as markdown, text as text, bytes as a blob.
    let read = |uri: &'static str| {
        let (client, direct) = (&client, &direct);
        async move {
            let through = ask(client, "resources/read", json!({"uri": uri})).await;
            assert_eq!(
                through,
                ask(direct, "resources/read", json!({"uri": uri})).await
            );
            through["contents"].clone()
        }
    };
    assert_eq!(
        read("skill://code-review/SKILL.md").await,
        json!([{"uri": "skill://code-review/SKILL.md", "mimeType": "text/markdown", "text": REVIEW_MD}])
    );
    assert_eq!(
        read("skill://code-review/references/checklist.md").await,
        json!([{"uri": "skill://code-review/references/checklist.md", "mimeType": "text/markdown",
                "text": "- every input path refuses bad input\n"}])
    );
    assert_eq!(
        read("skill://code-review/assets/mark.bin").await,
        json!([{"uri": "skill://code-review/assets/mark.bin", "mimeType": "application/octet-stream",
                "blob": "AJ+Slg=="}])
    );

    // Its folders, the prefix folders included.
    let folder = ask(
        &client,
        "resources/directory/read",
        json!({"uri": "skill://code-review"}),
    )
    .await;
    assert_eq!(
        folder["resources"],
        json!([
            {"uri": "skill://code-review/SKILL.md", "name": "code-review",
             "description": "Review a change against the checklist", "mimeType": "text/markdown",
             "size": 132},
            {"uri": "skill://code-review/assets", "name": "assets", "mimeType": "inode/directory"},
            {"uri": "skill://code-review/references", "name": "references", "mimeType": "inode/directory"}
        ])
    );
    assert_eq!(
        folder,
        ask(
            &direct,
            "resources/directory/read",
            json!({"uri": "skill://code-review"})
        )
        .await
    );
    let acme = json!({"uri": "skill://acme"});
    assert_eq!(
        ask(&client, "resources/directory/read", acme.clone()).await,
        ask(&direct, "resources/directory/read", acme).await
    );

    // The skill files listed once, as the skills' resources (wymcp lists them after the
    // others), beside the plain resource.
    let resources = ask(&client, "resources/list", json!({})).await;
    let uris: Vec<&str> = resources["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        [
            "test://plain",
            "skill://code-review/SKILL.md",
            "skill://code-review/references/checklist.md",
            "skill://code-review/assets/mark.bin",
            "skill://acme/billing/refunds/SKILL.md",
        ]
    );
}

#[tokio::test]
async fn a_skill_another_upstream_serves_is_left_out_and_said_so() {
    let first = serve_http(upstream()).await;
    let second = serve_http(upstream()).await;
    let (client, notices) = gateway(
        GatewayConfig::new()
            .upstream(tools("first", &first))
            .upstream(tools("second", &second).prefix("second")),
    )
    .await;
    let said: Vec<String> = notices.iter().map(ToString::to_string).collect();
    assert_eq!(
        said,
        [
            "upstream second: skill skill://code-review/SKILL.md: left out: another upstream serves skill://code-review/SKILL.md",
            "upstream second: skill skill://acme/billing/refunds/SKILL.md: left out: another upstream serves skill://acme/billing/refunds/SKILL.md",
            "upstream second: resource test://plain: left out: another upstream serves that URI",
        ]
    );
    // The first upstream's skills, once.
    let listed = ask(&client, "skills/list", json!({})).await;
    assert_eq!(listed["skills"].as_array().unwrap().len(), 2);
}
