//! Resources through the transport-neutral `Server` handlers: list (paginated), templates,
//! read (static, binary, dynamic, templated), not found per revision, subscriptions and their
//! notifications, `build()` refusals, every result checked against the official schemas.

mod kit_request;
mod mcp_schema;

use serde_json::{Map, Value, json};
use wymcp::resource::{ReadResource, ResourceContents, ResourceError, Variables};
use wymcp::testing::TestClient;
use wymcp::tool::Problem;
use wymcp::{Context, ProtocolVersion, RpcError, Server};
use wymcp::{Resource, ResourceTemplate};

use kit_request::request;
use mcp_schema::{REVISIONS, problems, validator};

struct TemplateData;

impl ReadResource for TemplateData {
    async fn read(
        &self,
        uri: &str,
        vars: Variables,
        _ctx: Context,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        match vars.get("id") {
            Some("missing") => Err(ResourceError::NotFound),
            Some("bad") => Err(ResourceError::Invalid("id must be numeric".into())),
            Some("boom") => Err(ResourceError::Failed("database down".into())),
            Some("panic") => panic!("reader panicked"),
            Some(id) => Ok(vec![
                ResourceContents::text(
                    uri,
                    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")})
                        .to_string(),
                )
                .with_mime_type("application/json"),
            ]),
            None => Err(ResourceError::NotFound),
        }
    }
}

struct Clock;

impl ReadResource for Clock {
    async fn read(
        &self,
        uri: &str,
        vars: Variables,
        ctx: Context,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        assert!(vars.is_empty());
        let mut meta = Map::new();
        meta.insert("session".into(), json!(ctx.session_id()));
        Ok(vec![ResourceContents::text(uri, "tick").with_meta(meta)])
    }
}

fn annotations() -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("audience".into(), json!(["user"]));
    map.insert("priority".into(), json!(0.5));
    map.insert("lastModified".into(), json!("2025-01-12T15:00:58Z"));
    map
}

fn server() -> Server {
    Server::builder()
        .resource(
            Resource::text(
                "test://static-text",
                "static-text",
                "This is the content of the static text resource.",
            )
            .title("Static Text Resource")
            .description("A static text resource for testing")
            .mime_type("text/plain")
            .icon(json!({"src": "https://example.com/icon.png", "mimeType": "image/png"}))
            .annotations(annotations()),
        )
        .resource(
            Resource::blob(
                "test://static-binary",
                "static-binary",
                [0x89, b'P', b'N', b'G'],
            )
            .mime_type("image/png"),
        )
        .resource(Resource::dynamic("test://clock", "clock", Clock).size(4))
        .resource_template(
            ResourceTemplate::new("test://template/{id}/data", "template", TemplateData)
                .title("Resource Template")
                .description("A resource template with parameter substitution")
                .mime_type("application/json")
                .icon(json!({"src": "https://example.com/t.png"})),
        )
        .build()
        .expect("valid resources")
}

/// A request of session `s1` at `version`.
/// The revision a request is served in.
fn ctx(version: ProtocolVersion) -> ProtocolVersion {
    version
}

fn assert_valid(version: ProtocolVersion, definition: &str, value: &Value) {
    let found = problems(&validator(version, definition), value);
    assert!(
        found.is_empty(),
        "{version}: {value} is not a valid {definition}: {found:?}"
    );
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

#[test]
fn list_is_valid_per_revision_with_title_and_icons_only_where_allowed() {
    let server = server();
    rt().block_on(async {
        for version in REVISIONS {
            let list = request(&server, "resources/list", None, ctx(version))
                .await
                .expect("list");
            assert_valid(version, "ListResourcesResult", &list);
            let first = &list["resources"][0];
            assert_eq!(first["uri"], "test://static-text");
            assert_eq!(first["name"], "static-text");
            assert_eq!(first["mimeType"], "text/plain");
            assert_eq!(first["size"], 48);
            assert_eq!(list["resources"][1]["size"], 4);
            assert_eq!(list["resources"][2]["size"], 4);
            assert_eq!(
                first.get("title").is_some(),
                version >= ProtocolVersion::V2025_06_18
            );
            assert_eq!(
                first["annotations"].get("lastModified").is_some(),
                version >= ProtocolVersion::V2025_06_18
            );
            assert_eq!(
                first.get("icons").is_some(),
                version >= ProtocolVersion::V2025_11_25
            );
            assert!(list.get("nextCursor").is_none());

            let templates = request(
                &server,
                "resources/templates/list",
                Some(json!({})),
                ctx(version),
            )
            .await
            .expect("templates");
            assert_valid(version, "ListResourceTemplatesResult", &templates);
            let t = &templates["resourceTemplates"][0];
            assert_eq!(t["uriTemplate"], "test://template/{id}/data");
            assert_eq!(
                t.get("title").is_some(),
                version >= ProtocolVersion::V2025_06_18
            );
            assert_eq!(
                t.get("icons").is_some(),
                version >= ProtocolVersion::V2025_11_25
            );
        }
    });
}

#[test]
fn pagination_walks_every_page_and_refuses_a_bad_cursor() {
    let mut builder = Server::builder().page_size(2);
    for i in 0..5 {
        builder = builder.resource(Resource::text(
            format!("test://r/{i}"),
            format!("r{i}"),
            "x",
        ));
    }
    let server = builder.build().expect("valid");
    rt().block_on(async {
        let mut seen = Vec::new();
        let mut params = None;
        loop {
            let page = request(
                &server,
                "resources/list",
                params,
                ctx(ProtocolVersion::V2025_11_25),
            )
            .await
            .expect("page");
            assert_valid(ProtocolVersion::V2025_11_25, "ListResourcesResult", &page);
            let items = page["resources"].as_array().expect("array");
            assert!(items.len() <= 2);
            seen.extend(items.iter().map(|r| r["uri"].clone()));
            match page.get("nextCursor") {
                Some(cursor) => params = Some(json!({ "cursor": cursor })),
                None => break,
            }
        }
        assert_eq!(seen.len(), 5);
        assert_eq!(seen[4], "test://r/4");

        for bad in [json!({"cursor": "nope"}), json!({"cursor": 3})] {
            let err = request(
                &server,
                "resources/list",
                Some(bad),
                ctx(ProtocolVersion::V2025_11_25),
            )
            .await
            .expect_err("bad cursor");
            assert_eq!(err.code(), RpcError::INVALID_PARAMS);
        }
    });
}

#[test]
fn read_static_binary_dynamic_and_template() {
    let server = server();
    rt().block_on(async {
        for version in REVISIONS {
            let text = request(
                &server,
                "resources/read",
                Some(json!({"uri": "test://static-text"})),
                ctx(version),
            )
            .await
            .expect("text");
            assert_valid(version, "ReadResourceResult", &text);
            assert_eq!(
                text["contents"][0],
                json!({"uri": "test://static-text", "mimeType": "text/plain",
                       "text": "This is the content of the static text resource."})
            );

            let blob = request(
                &server,
                "resources/read",
                Some(json!({"uri": "test://static-binary"})),
                ctx(version),
            )
            .await
            .expect("blob");
            assert_valid(version, "ReadResourceResult", &blob);
            assert_eq!(blob["contents"][0]["blob"], "iVBORw==");
            assert_eq!(blob["contents"][0]["mimeType"], "image/png");

            let clock = request(
                &server,
                "resources/read",
                Some(json!({"uri": "test://clock"})),
                ctx(version),
            )
            .await
            .expect("dynamic");
            assert_valid(version, "ReadResourceResult", &clock);
            assert_eq!(
                clock["contents"][0].get("_meta").is_some(),
                version >= ProtocolVersion::V2025_06_18
            );

            let templated = request(
                &server,
                "resources/read",
                Some(json!({"uri": "test://template/123/data"})),
                ctx(version),
            )
            .await
            .expect("template");
            assert_valid(version, "ReadResourceResult", &templated);
            assert_eq!(templated["contents"][0]["uri"], "test://template/123/data");
            let body: Value =
                serde_json::from_str(templated["contents"][0]["text"].as_str().expect("text"))
                    .expect("json");
            assert_eq!(body["id"], "123");
        }
    });
}

#[test]
fn not_found_is_answered_as_the_revision_requires() {
    let server = server();
    rt().block_on(async {
        for (version, code) in [
            (ProtocolVersion::V2025_03_26, -32002),
            (ProtocolVersion::V2025_06_18, -32002),
            (ProtocolVersion::V2025_11_25, -32002),
            (ProtocolVersion::V2026_07_28, -32602),
        ] {
            for uri in ["test://nope", "test://template/missing/data"] {
                let err = request(
                    &server,
                    "resources/read",
                    Some(json!({ "uri": uri })),
                    ctx(version),
                )
                .await
                .expect_err("not found");
                assert_eq!(err.code(), code, "{version} {uri}");
                assert_eq!(err.data().expect("data")["uri"], uri);
                assert!(err.message().contains(uri));
            }
        }
    });
}

#[test]
fn read_errors_are_protocol_errors() {
    let server = server();
    rt().block_on(async {
        let v = ProtocolVersion::V2025_11_25;
        let read = |uri: &'static str| {
            request(
                &server,
                "resources/read",
                Some(json!({ "uri": uri })),
                ctx(v),
            )
        };
        let bad = read("test://template/bad/data").await.expect_err("invalid");
        assert_eq!(bad.code(), RpcError::INVALID_PARAMS);
        assert!(bad.message().contains("id must be numeric"));
        let boom = read("test://template/boom/data").await.expect_err("failed");
        assert_eq!(boom.code(), RpcError::INTERNAL_ERROR);
        assert!(boom.message().contains("database down"));
        let panicked = read("test://template/panic/data").await.expect_err("panic");
        assert_eq!(panicked.code(), RpcError::INTERNAL_ERROR);
        // The server lives on.
        assert!(read("test://static-text").await.is_ok());

        for params in [None, Some(json!({})), Some(json!({"uri": 7}))] {
            let err = request(&server, "resources/read", params, ctx(v))
                .await
                .expect_err("bad params");
            assert_eq!(err.code(), RpcError::INVALID_PARAMS);
        }
        // Params that are not an object are no valid request on the wire.
        let err = request(&server, "resources/read", Some(json!([1])), ctx(v))
            .await
            .expect_err("array params");
        assert_eq!(err.code(), RpcError::INVALID_REQUEST);
    });
}

#[test]
fn subscriptions_are_kept_per_session_and_notify_subscribers() {
    let server = server();
    rt().block_on(async {
        let mut rx = server.notifications();
        let v = ProtocolVersion::V2025_11_25;
        // Two clients, each in a session of its own.
        let s1 = TestClient::new(server.clone()).with_version(v);
        let s2 = TestClient::new(server.clone()).with_version(v);
        let ok = s1
            .request(
                "resources/subscribe",
                Some(json!({"uri": "test://static-text"})),
            )
            .await
            .expect("subscribe");
        assert_valid(v, "EmptyResult", &ok);
        s2.request(
            "resources/subscribe",
            Some(json!({"uri": "test://template/9/data"})),
        )
        .await
        .expect("subscribe to a templated uri");
        let unknown = s1
            .request("resources/subscribe", Some(json!({"uri": "test://nope"})))
            .await
            .expect_err("unknown");
        assert_eq!(unknown.code(), -32002);

        assert_eq!(
            server
                .subscriptions(s1.session_id())
                .await
                .expect("in memory"),
            ["test://static-text"]
        );
        assert_eq!(
            server.notify_resource_updated("test://static-text").await,
            1
        );
        let sent = rx.recv().await.expect("notification");
        assert_eq!(sent.session_id.as_deref(), s1.session_id());
        assert_eq!(sent.method(), "notifications/resources/updated");
        assert_valid(v, "ResourceUpdatedNotification", &sent.message);
        assert_eq!(
            server
                .notify_resource_updated("test://template/9/data")
                .await,
            1
        );
        assert_eq!(
            rx.recv().await.expect("n").session_id.as_deref(),
            s2.session_id()
        );

        let ok = s1
            .request(
                "resources/unsubscribe",
                Some(json!({"uri": "test://static-text"})),
            )
            .await
            .expect("unsubscribe");
        assert_eq!(ok, json!({}));
        assert_eq!(
            server.notify_resource_updated("test://static-text").await,
            0
        );
        server.forget_session(s2.session_id()).await;
        assert_eq!(
            server
                .notify_resource_updated("test://template/9/data")
                .await,
            0
        );
        assert!(rx.try_recv().is_err());
    });
}

#[test]
fn list_changed_is_sent_only_when_declared() {
    let quiet = server();
    let _rx = quiet.notifications();
    assert!(!quiet.notify_resources_list_changed());
    assert_eq!(
        quiet.capabilities(ProtocolVersion::V2025_11_25)["resources"],
        json!({"subscribe": true, "listChanged": false})
    );

    let loud = Server::builder()
        .list_changed(true)
        .resource(Resource::text("test://a", "a", "A"))
        .build()
        .expect("valid");
    let mut rx = loud.notifications();
    assert!(loud.notify_resources_list_changed());
    let sent = rx.try_recv().expect("sent");
    assert_eq!(sent.session_id, None);
    assert_eq!(sent.method(), "notifications/resources/list_changed");
    for version in REVISIONS {
        let caps = loud.capabilities(version);
        assert_valid(version, "ServerCapabilities", &caps);
        assert_eq!(caps["resources"]["listChanged"], true);
        assert!(caps.get("prompts").is_none());
        assert!(caps.get("completions").is_none());
    }
}

#[test]
fn a_server_without_resources_declares_none_and_answers_empty_lists() {
    let server = Server::builder().build().expect("valid");
    for version in REVISIONS {
        let caps = server.capabilities(version);
        assert_valid(version, "ServerCapabilities", &caps);
        assert!(caps.get("tools").is_some());
        assert!(caps.get("resources").is_none());
    }
    rt().block_on(async {
        let list = request(
            &server,
            "resources/list",
            None,
            ProtocolVersion::LATEST_SESSION_ERA,
        )
        .await
        .expect("list");
        assert_eq!(list, json!({"resources": []}));
    });
}

fn refusal(builder: wymcp::ServerBuilder) -> Problem {
    builder
        .build()
        .expect_err("refused at build()")
        .problem()
        .clone()
}

#[test]
fn build_refuses_bad_templates_uris_names_and_duplicates() {
    let bad_template = refusal(Server::builder().resource_template(ResourceTemplate::new(
        "test://{unclosed",
        "t",
        TemplateData,
    )));
    assert!(
        matches!(&bad_template, Problem::InvalidUriTemplate { template, .. } if template == "test://{unclosed"),
        "{bad_template:?}"
    );
    let spaced = refusal(Server::builder().resource_template(ResourceTemplate::new(
        "test://{a b}",
        "t",
        TemplateData,
    )));
    assert!(matches!(spaced, Problem::InvalidUriTemplate { .. }));

    let bad_uri = refusal(Server::builder().resource(Resource::text("not a uri", "x", "")));
    assert!(
        matches!(bad_uri, Problem::InvalidResourceUri { .. }),
        "{bad_uri:?}"
    );

    let empty = refusal(Server::builder().resource(Resource::text("test://a", "", "")));
    assert!(matches!(empty, Problem::EmptyName(_)));

    let dup = refusal(
        Server::builder()
            .resource(Resource::text("test://a", "a", "1"))
            .resource(Resource::text("test://a", "b", "2")),
    );
    assert_eq!(dup, Problem::DuplicateResource("test://a".into()));
    assert!(dup.to_string().contains("test://a"));

    let dup_template = refusal(
        Server::builder()
            .resource_template(ResourceTemplate::new("test://{x}", "a", TemplateData))
            .resource_template(ResourceTemplate::new("test://{x}", "b", TemplateData)),
    );
    assert_eq!(
        dup_template,
        Problem::DuplicateResourceTemplate("test://{x}".into())
    );
}
