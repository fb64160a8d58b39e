//! The Server Card (SEP-2127) over real HTTP: `GET /mcp/server-card` on a server bound to
//! 127.0.0.1, its body generated from the builder, its headers (media type, strong ETag,
//! Cache-Control, CORS), 304 on a matching `If-None-Match`; and `server.json` for the registry.

#![allow(clippy::unwrap_used)]

mod http_harness;

use http_harness::{Answer, Http};
use reqwest::StatusCode;
use serde_json::json;
use wymcp::Server;
use wymcp::card::{Package, Remote, Repository, SERVER_JSON_SCHEMA};
use wymcp::transport::http::StreamableHttp;

fn server() -> Server {
    Server::builder()
        .name("io.github.example/notes")
        .version("1.2.0")
        .title("Notes")
        .description("Take and search notes")
        .website_url("https://notes.example.com")
        .icon(json!({"src": "https://notes.example.com/icon.png", "mimeType": "image/png"}))
        .repository(Repository::github("https://github.com/example/notes").subfolder("server"))
        .remote(
            Remote::streamable_http("https://notes.example.com/mcp")
                .supported_protocol_versions(["2026-07-28"])
                .authentication(true, ["bearer"]),
        )
        .build()
        .unwrap()
}

async fn get(http: &Http, headers: &[(&str, &str)]) -> Answer {
    let mut request = http.client.get(format!("{}/server-card", http.url));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    Answer::read(request.send().await.unwrap()).await
}

#[tokio::test]
async fn the_card_is_served_with_its_media_type_cache_and_cors_headers() {
    let http = Http::serve(StreamableHttp::builder(server())).await;
    let answer = get(&http, &[]).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(
        answer.header("content-type"),
        Some("application/mcp-server-card+json")
    );
    assert_eq!(answer.header("cache-control"), Some("public, max-age=3600"));
    assert_eq!(answer.header("access-control-allow-origin"), Some("*"));
    assert_eq!(answer.header("access-control-expose-headers"), Some("ETag"));
    let etag = answer.header("etag").unwrap();
    assert_eq!(etag.len(), 66, "a quoted SHA-256 hex digest: {etag}");
    assert!(etag.starts_with('"') && etag.ends_with('"') && !etag.starts_with("W/"));
    assert_eq!(
        answer.json(),
        json!({
            "$schema": "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
            "name": "io.github.example/notes",
            "version": "1.2.0",
            "title": "Notes",
            "description": "Take and search notes",
            "websiteUrl": "https://notes.example.com",
            "repository": {"url": "https://github.com/example/notes", "source": "github",
                           "subfolder": "server"},
            "icons": [{"src": "https://notes.example.com/icon.png", "mimeType": "image/png"}],
            "remotes": [{"type": "streamable-http", "url": "https://notes.example.com/mcp",
                         "supportedProtocolVersions": ["2026-07-28"],
                         "authentication": {"required": true, "schemes": ["bearer"]}}]
        })
    );
    // The same bytes, so the same validator, on every request.
    assert_eq!(get(&http, &[]).await.header("etag"), Some(etag));
}

#[tokio::test]
async fn a_matching_if_none_match_gets_304_without_a_body() {
    let http = Http::serve(StreamableHttp::builder(server())).await;
    let etag = get(&http, &[]).await.header("etag").unwrap().to_owned();

    let not_modified = get(&http, &[("if-none-match", &etag)]).await;
    assert_eq!(not_modified.status, StatusCode::NOT_MODIFIED);
    assert_eq!(not_modified.text, "");
    assert_eq!(not_modified.header("etag"), Some(etag.as_str()));
    assert_eq!(
        not_modified.header("cache-control"),
        Some("public, max-age=3600")
    );

    let listed = format!("\"other\", W/{etag}");
    let weak = get(&http, &[("if-none-match", &listed)]).await;
    assert_eq!(weak.status, StatusCode::NOT_MODIFIED);
    let any = get(&http, &[("if-none-match", "*")]).await;
    assert_eq!(any.status, StatusCode::NOT_MODIFIED);

    let stale = get(&http, &[("if-none-match", "\"an-old-card\"")]).await;
    assert_eq!(stale.status, StatusCode::OK);
    assert_eq!(stale.json()["name"], "io.github.example/notes");
}

#[tokio::test]
async fn preflight_head_and_other_methods() {
    let http = Http::serve(StreamableHttp::builder(server())).await;
    let url = format!("{}/server-card", http.url);

    let preflight = http
        .client
        .request(reqwest::Method::OPTIONS, &url)
        .header("origin", "https://elsewhere.example")
        .header("access-control-request-method", "GET")
        .send()
        .await
        .unwrap();
    assert_eq!(preflight.status(), StatusCode::NO_CONTENT);
    assert_eq!(preflight.headers()["access-control-allow-origin"], "*");
    assert_eq!(
        preflight.headers()["access-control-allow-methods"],
        "GET, HEAD, OPTIONS"
    );

    let head = Answer::read(http.client.head(&url).send().await.unwrap()).await;
    assert_eq!(head.status, StatusCode::OK);
    assert_eq!(head.text, "");
    assert_eq!(head.header("etag"), get(&http, &[]).await.header("etag"));

    let post = Answer::read(http.client.post(&url).body("{}").send().await.unwrap()).await;
    assert_eq!(post.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(post.header("allow"), Some("GET, HEAD, OPTIONS"));
}

#[tokio::test]
async fn a_service_nested_in_an_application_serves_it_under_its_mount() {
    let service = StreamableHttp::builder(server()).build();
    let app = axum::Router::new().nest_service("/tools/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let served = tokio::spawn(async move { axum::serve(listener, app).await });
    let answer = reqwest::get(format!("http://{addr}/tools/mcp/server-card"))
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    assert_eq!(
        answer.headers()["content-type"],
        "application/mcp-server-card+json"
    );
    let card: serde_json::Value = answer.json().await.unwrap();
    assert_eq!(card["version"], "1.2.0");
    served.abort();
}

#[test]
fn server_json_is_the_registry_document() {
    let doc = server()
        .server_json(&[Package::oci("ghcr.io/example/notes:1.2.0")])
        .unwrap();
    assert_eq!(
        doc,
        json!({
            "$schema": SERVER_JSON_SCHEMA,
            "name": "io.github.example/notes",
            "version": "1.2.0",
            "title": "Notes",
            "description": "Take and search notes",
            "websiteUrl": "https://notes.example.com",
            "repository": {"url": "https://github.com/example/notes", "source": "github",
                           "subfolder": "server"},
            "icons": [{"src": "https://notes.example.com/icon.png", "mimeType": "image/png"}],
            "packages": [{"registryType": "oci", "identifier": "ghcr.io/example/notes:1.2.0",
                          "transport": {"type": "stdio"}}],
            "remotes": [{"type": "streamable-http", "url": "https://notes.example.com/mcp"}]
        })
    );
    let unnamed = Server::builder().description("d").build().unwrap();
    assert_eq!(
        unnamed.server_json(&[]).unwrap_err().to_string(),
        "server.json: name \"wymcp-server\" is not reverse-DNS `namespace/server` (one '/', [A-Za-z0-9.-] before it, [A-Za-z0-9._-] after it, 3 to 200 characters)"
    );
}
