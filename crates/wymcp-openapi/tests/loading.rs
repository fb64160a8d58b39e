//! Where a document comes from and which of its operations are served: a document fetched
//! from a real HTTP server on 127.0.0.1 (its relative server URL resolved against where it
//! came from, its size bounded while it is read), and the include and exclude patterns.

#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use wymcp::testing::{TestClient, assert_ok};
use wymcp_openapi::{LoadError, OpenApi};

/// A document whose server is relative to where it is served from.
fn document() -> Value {
    json!({
        "openapi": "3.1.0",
        "info": {"title": "Zoo", "version": "1"},
        "servers": [{"url": "/api/{version}", "variables": {"version": {"default": "v1"}}}],
        "paths": {
            "/animals": {
                "get": {"operationId": "listAnimals", "tags": ["animals"]},
                "delete": {"operationId": "dropAnimals", "tags": ["animals"]}
            },
            "/keepers": {"get": {"operationId": "listKeepers", "tags": ["keepers"]}},
            "/tickets": {"post": {"operationId": "buyTicket", "tags": ["tickets"],
                "requestBody": {"required": true, "content": {"application/json": {
                    "schema": {"type": "object"}}}}}}
        }
    })
}

/// What the zoo's API received, as `METHOD path`.
type Log = Arc<Mutex<Vec<String>>>;

async fn animals(State(log): State<Log>) -> impl IntoResponse {
    log.lock().unwrap().push("GET /api/v1/animals".into());
    axum::Json(json!([{"name": "Zebra"}]))
}

/// Serves the document at `/openapi.json`, a document of `bytes` without a length at
/// `/streamed.json` (chunked), a 404 elsewhere, and the API under `/api/v1`.
async fn zoo() -> (String, Log) {
    let log: Log = Arc::default();
    let app = Router::new()
        .route("/openapi.json", get(|| async { axum::Json(document()) }))
        .route(
            "/streamed.json",
            get(|| async {
                let chunks = (0..64).map(|_| Ok::<_, std::io::Error>(vec![b' '; 1024]));
                Response::builder()
                    .header(header::CONTENT_TYPE, "application/json")
                    .body(Body::from_stream(futures_util::stream::iter(chunks)))
                    .unwrap()
            }),
        )
        .route("/api/v1/animals", get(animals).with_state(log.clone()))
        .fallback(|| async { (StatusCode::NOT_FOUND, "no such document") });
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, log)
}

#[tokio::test]
async fn a_document_fetched_from_a_url_calls_its_relative_server() {
    let (base, log) = zoo().await;
    let api = OpenApi::builder()
        .load_url(&format!("{base}/openapi.json"))
        .await
        .unwrap();
    assert_eq!(api.tool_names(), ["animals", "keepers", "tickets"]);
    let server = api
        .register(wymcp::Server::builder().name("zoo"))
        .build()
        .unwrap();
    let client = TestClient::new(server);
    let result = client
        .call("animals", "listAnimals", json!({}))
        .await
        .unwrap();
    assert_eq!(
        assert_ok(&result),
        json!({"status": 200, "body": [{"name": "Zebra"}]})
    );
    assert_eq!(*log.lock().unwrap(), ["GET /api/v1/animals"]);
}

#[tokio::test]
async fn a_fetched_document_over_the_limit_is_refused_while_it_is_read() {
    let (base, _) = zoo().await;
    // With its length announced, and streamed without one (64 KiB in 1 KiB chunks).
    for path in ["openapi.json", "streamed.json"] {
        let refused = OpenApi::builder()
            .max_document_bytes(200)
            .load_url(&format!("{base}/{path}"))
            .await
            .unwrap_err();
        assert!(
            matches!(refused, LoadError::DocumentTooLarge { limit: 200 }),
            "{path}: {refused:?}"
        );
        assert_eq!(
            refused.to_string(),
            "the OpenAPI document is larger than max_document_bytes (200 bytes)"
        );
    }
}

#[tokio::test]
async fn a_document_that_cannot_be_fetched_says_why() {
    let (base, _) = zoo().await;
    let missing = format!("{base}/nowhere.json");
    let refused = OpenApi::builder().load_url(&missing).await.unwrap_err();
    assert_eq!(
        refused.to_string(),
        format!("cannot fetch the OpenAPI document {missing}: answered 404 Not Found")
    );
    let refused = OpenApi::builder()
        .load_url("file:///etc/passwd")
        .await
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "cannot fetch the OpenAPI document file:///etc/passwd: not an http or https URL"
    );
}

#[test]
fn include_and_exclude_pick_operations_by_id_tag_or_method_and_path() {
    let text = document().to_string();
    let load = |builder: wymcp_openapi::OpenApiBuilder| {
        let api = builder
            .base_url("http://127.0.0.1:9")
            .load_str(&text)
            .unwrap();
        let server = api.register(wymcp::Server::builder()).build().unwrap();
        let listed = server.list_tools(wymcp::ProtocolVersion::V2025_11_25);
        listed["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|tool| tool["name"] != "help")
            .map(|tool| {
                let actions = tool["inputSchema"]["properties"]["action"]["enum"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| a.as_str().unwrap().to_owned())
                    .collect::<Vec<_>>();
                format!("{}: {}", tool["name"].as_str().unwrap(), actions.join(" "))
            })
            .collect::<Vec<_>>()
    };
    // A tag, an operationId and a method and path.
    assert_eq!(
        load(
            OpenApi::builder()
                .include("animals")
                .include("buyTicket")
                .exclude("DELETE /animals")
        ),
        ["animals: listAnimals", "tickets: buyTicket"]
    );
    // A trailing `*`.
    assert_eq!(
        load(OpenApi::builder().exclude("GET *")),
        ["animals: dropAnimals", "tickets: buyTicket"]
    );
    assert_eq!(
        load(OpenApi::builder().include("list*")),
        ["animals: listAnimals", "keepers: listKeepers"]
    );
}
