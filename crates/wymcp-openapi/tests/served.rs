//! An OpenAPI document served as action tools, end to end over real components: a pets and
//! orders REST API (axum) on 127.0.0.1 that records every request it receives, its OpenAPI
//! YAML written to a file, a wymcp server built from it and served over Streamable HTTP on
//! 127.0.0.1, and wymcp's MCP client calling it.

#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::{Path, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use wymcp::client::{Client, ToolResult};
use wymcp::transport::http::{BearerAuth, HttpServer, StreamableHttp};
use wymcp_openapi::{Auth, LoadError, OpenApi, OpenApiBuilder};

/// One request as the API received it.
#[derive(Debug, Clone)]
struct Received {
    method: String,
    /// The path and query as sent (percent-encoding kept).
    target: String,
    authorization: Option<String>,
    trace: Option<String>,
    cookie: Option<String>,
    body: String,
}

type Log = Arc<Mutex<Vec<Received>>>;

async fn record(State(log): State<Log>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = to_bytes(body, 64 * 1024).await.unwrap();
    let header = |name: &str| {
        parts
            .headers
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    };
    log.lock().unwrap().push(Received {
        method: parts.method.to_string(),
        target: parts.uri.path_and_query().unwrap().to_string(),
        authorization: header("authorization"),
        trace: header("x-trace"),
        cookie: header("cookie"),
        body: String::from_utf8_lossy(&bytes).into_owned(),
    });
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

async fn list_pets() -> impl IntoResponse {
    axum::Json(json!([{"id": 1, "name": "Rex"}, {"id": 2, "name": "Tom"}]))
}

async fn create_pet(axum::Json(pet): axum::Json<Value>) -> impl IntoResponse {
    (
        StatusCode::CREATED,
        axum::Json(json!({"id": 3, "name": pet["name"]})),
    )
}

async fn show_pet(Path(id): Path<String>) -> Response {
    if id == "99" {
        return (
            StatusCode::NOT_FOUND,
            axum::Json(json!({"error": "no pet 99"})),
        )
            .into_response();
    }
    axum::Json(json!({"id": id, "name": "Rex"})).into_response()
}

async fn delete_pet() -> StatusCode {
    StatusCode::NO_CONTENT
}

async fn show_order(Path(id): Path<u32>) -> impl IntoResponse {
    axum::Json(json!({"id": id, "status": "placed"}))
}

async fn health() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], "ok")
}

async fn slow() -> &'static str {
    // Longer than the timeout the test sets; the call gives up long before this ends.
    tokio::time::sleep(Duration::from_secs(5)).await;
    "late"
}

async fn big() -> String {
    "x".repeat(10_000)
}

/// Sends the caller to another origin, which must not receive the API's credentials.
async fn moved(State(elsewhere): State<String>) -> Response {
    (
        StatusCode::TEMPORARY_REDIRECT,
        [(header::LOCATION, format!("{elsewhere}/landing"))],
    )
        .into_response()
}

/// The API's OpenAPI document, its server at `base`.
fn document(base: &str) -> String {
    format!(
        r#"openapi: 3.0.3
info:
  title: Pets and orders
  version: "1"
servers:
  - url: {base}
tags:
  - name: pets
    description: The pets of the shop
paths:
  /pets:
    get:
      tags: [pets]
      operationId: listPets
      summary: List pets
      parameters:
        - name: tags
          in: query
          schema:
            type: array
            items:
              type: string
        - name: limit
          in: query
          schema:
            type: integer
            format: int32
            minimum: 1
    post:
      tags: [pets]
      operationId: createPet
      summary: Create a pet
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/NewPet'
  /pets/{{petId}}:
    parameters:
      - name: petId
        in: path
        required: true
        schema:
          type: string
    get:
      tags: [pets]
      summary: Show a pet
    delete:
      tags: [pets]
      operationId: deletePet
      summary: Delete a pet
  /orders/{{orderId}}:
    get:
      tags: [orders]
      operationId: showOrder
      summary: Show an order
      parameters:
        - name: orderId
          in: path
          required: true
          schema:
            type: integer
        - name: X-Trace
          in: header
          schema:
            type: string
        - name: session
          in: cookie
          schema:
            type: string
  /health:
    get:
      operationId: health
      summary: Is the API up
  /slow:
    get:
      operationId: slow
      summary: Answers after five seconds
  /big:
    get:
      operationId: big
      summary: Answers 10,000 bytes
  /moved:
    get:
      operationId: moved
      summary: Redirects to another origin
components:
  schemas:
    NewPet:
      type: object
      required: [name]
      properties:
        name:
          type: string
        tag:
          type: string
          nullable: true
"#
    )
}

/// The API on 127.0.0.1, the document written to a file, and a wymcp server made from it
/// (with `builder`'s settings) served over Streamable HTTP, with a client connected.
struct Harness {
    log: Log,
    /// What another origin, the target of `/moved`, received.
    elsewhere: Log,
    client: Client,
    file: std::path::PathBuf,
}

impl Harness {
    async fn start(builder: OpenApiBuilder) -> Harness {
        Harness::start_as(builder, None).await
    }

    /// [`start`](Self::start) with the MCP server behind bearer auth accepting `token` as
    /// alice, and the client presenting it.
    async fn start_as(builder: OpenApiBuilder, token: Option<&str>) -> Harness {
        let elsewhere: Log = Arc::default();
        let other = Router::new()
            .route("/landing", get(health))
            .layer(from_fn_with_state(elsewhere.clone(), record));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let other_base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, other).await.unwrap() });

        let log: Log = Arc::default();
        let api = Router::new()
            .route("/moved", get(moved).with_state(other_base))
            .route("/pets", get(list_pets).post(create_pet))
            .route("/pets/{id}", get(show_pet).delete(delete_pet))
            .route("/orders/{id}", get(show_order))
            .route("/health", get(health))
            .route("/slow", get(slow))
            .route("/big", get(big))
            .layer(from_fn_with_state(log.clone(), record));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, api).await.unwrap() });

        let file = std::env::temp_dir().join(format!(
            "wymcp-openapi-{}-{}.yaml",
            std::process::id(),
            rand_suffix()
        ));
        std::fs::write(&file, document(&base)).unwrap();
        let api = builder.untagged_tool("misc").load_file(&file).unwrap();
        assert_eq!(api.skipped(), []);
        let server = api
            .register(wymcp::Server::builder().name("pets"))
            .build()
            .unwrap();
        let mut http = StreamableHttp::builder(server);
        if let Some(token) = token {
            http = http.auth(BearerAuth::new().token(token, wymcp::Identity::new("alice")));
        }
        let http = HttpServer::bind("127.0.0.1:0", http).await.unwrap();
        let url = format!("http://{}/mcp", http.local_addr().unwrap());
        tokio::spawn(http.run_until(std::future::pending::<()>()));
        let mut client = Client::builder(url);
        if let Some(token) = token {
            client = client.bearer_token(token);
        }
        let client = client.connect().await.unwrap();
        Harness {
            log,
            elsewhere,
            client,
            file,
        }
    }

    async fn call(&self, tool: &str, action: &str, data: Value) -> ToolResult {
        self.client
            .call_tool(tool, json!({"action": action, "data": data}))
            .await
            .unwrap()
    }

    fn received(&self) -> Vec<Received> {
        self.log.lock().unwrap().clone()
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.file);
    }
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[tokio::test]
async fn tools_list_shows_one_tool_per_tag_with_its_actions() {
    let h = Harness::start(OpenApi::builder()).await;
    let tools = h.client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["pets", "orders", "misc", "help"]);
    let actions = |i: usize| tools[i].input_schema()["properties"]["action"]["enum"].clone();
    assert_eq!(
        actions(0),
        json!(["createPet", "deletePet", "get_pets_by_petId", "listPets"])
    );
    assert_eq!(actions(1), json!(["showOrder"]));
    assert_eq!(actions(2), json!(["big", "health", "moved", "slow"]));
    assert_eq!(
        tools[0].description(),
        Some("The pets of the shop (Pets and orders)")
    );
    assert_eq!(
        tools[0].raw()["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": true, "openWorldHint": true})
    );
    assert_eq!(
        tools[1].raw()["annotations"],
        json!({"readOnlyHint": true, "openWorldHint": true})
    );
    assert_eq!(
        tools[0].output_schema().unwrap()["required"],
        json!(["status"])
    );

    // The action's schema, as help shows it: parameters by name, the body under `body`,
    // OpenAPI 3.0's `nullable` as a null type.
    let help = h
        .client
        .call_tool("help", json!({"tool": "pets", "action": "createPet"}))
        .await
        .unwrap();
    let help: Value = serde_json::from_str(&help.text()).unwrap();
    let text = help.to_string();
    assert!(
        text.contains(r#""tag":{"type":["string","null"]}"#),
        "{text}"
    );
    assert!(text.contains("HTTP POST /pets"), "{text}");
    assert!(h.received().is_empty());
}

#[tokio::test]
async fn a_call_reaches_the_api_with_its_path_query_headers_cookies_and_body() {
    let h = Harness::start(OpenApi::builder().auth(Auth::bearer("t0ken"))).await;

    let result = h
        .call(
            "pets",
            "listPets",
            json!({"tags": ["a b", "c&d"], "limit": 2}),
        )
        .await;
    assert!(!result.is_error(), "{}", result.text());
    assert_eq!(
        result.structured_content().unwrap(),
        &json!({"status": 200, "body": [{"id": 1, "name": "Rex"}, {"id": 2, "name": "Tom"}]})
    );

    let result = h
        .call("pets", "createPet", json!({"body": {"name": "Fido"}}))
        .await;
    assert_eq!(
        result.structured_content().unwrap(),
        &json!({"status": 201, "body": {"id": 3, "name": "Fido"}})
    );

    let result = h
        .call("pets", "get_pets_by_petId", json!({"petId": "a b/c?"}))
        .await;
    assert_eq!(
        result.structured_content().unwrap(),
        &json!({"status": 200, "body": {"id": "a b/c?", "name": "Rex"}})
    );

    let result = h.call("pets", "deletePet", json!({"petId": "7"})).await;
    assert_eq!(
        result.structured_content().unwrap(),
        &json!({"status": 204})
    );

    let result = h
        .call(
            "orders",
            "showOrder",
            json!({"orderId": 5, "X-Trace": "abc", "session": "s 1"}),
        )
        .await;
    assert_eq!(
        result.structured_content().unwrap(),
        &json!({"status": 200, "body": {"id": 5, "status": "placed"}})
    );

    let received = h.received();
    let targets: Vec<(&str, &str)> = received
        .iter()
        .map(|r| (r.method.as_str(), r.target.as_str()))
        .collect();
    assert_eq!(
        targets,
        [
            ("GET", "/pets?tags=a+b&tags=c%26d&limit=2"),
            ("POST", "/pets"),
            ("GET", "/pets/a%20b%2Fc%3F"),
            ("DELETE", "/pets/7"),
            ("GET", "/orders/5"),
        ]
    );
    assert_eq!(
        serde_json::from_str::<Value>(&received[1].body).unwrap(),
        json!({"name": "Fido"})
    );
    assert_eq!(received[4].trace.as_deref(), Some("abc"));
    assert_eq!(received[4].cookie.as_deref(), Some("session=s%201"));
    assert!(
        received
            .iter()
            .all(|r| r.authorization.as_deref() == Some("Bearer t0ken"))
    );
}

#[tokio::test]
async fn the_other_auth_kinds_reach_the_api() {
    let h = Harness::start(OpenApi::builder().auth(Auth::basic("ann", "pw"))).await;
    h.call("misc", "health", json!({})).await;
    // base64("ann:pw")
    assert_eq!(
        h.received()[0].authorization.as_deref(),
        Some("Basic YW5uOnB3")
    );

    let h = Harness::start(OpenApi::builder().auth(Auth::api_key_query("key", "k&1"))).await;
    h.call("pets", "listPets", json!({"limit": 1})).await;
    assert_eq!(h.received()[0].target, "/pets?limit=1&key=k%261");
}

#[tokio::test]
async fn the_callers_own_token_is_forwarded_only_when_chosen_and_only_when_presented() {
    // Chosen, and the caller presented one: the API receives the caller's token.
    let builder = OpenApi::builder().auth(Auth::caller_bearer());
    let h = Harness::start_as(builder, Some("alice-t0ken")).await;
    let result = h.call("misc", "health", json!({})).await;
    assert!(!result.is_error(), "{result:?}");
    assert_eq!(
        h.received()[0].authorization.as_deref(),
        Some("Bearer alice-t0ken")
    );

    // Chosen, but the server has no auth, so the call carries no token: refused before any
    // request leaves, saying why.
    let h = Harness::start(OpenApi::builder().auth(Auth::caller_bearer())).await;
    let result = h.call("misc", "health", json!({})).await;
    assert!(result.is_error());
    assert!(
        result.text().contains(
            "this API is called with the caller's own bearer token, and this call carried none"
        ),
        "{result:?}"
    );
    assert!(h.received().is_empty(), "the API saw {:?}", h.received());

    // Not chosen: the caller's token stays with this server.
    let h = Harness::start_as(OpenApi::builder(), Some("alice-t0ken")).await;
    h.call("misc", "health", json!({})).await;
    assert_eq!(h.received()[0].authorization, None);
}

#[tokio::test]
async fn a_redirect_to_another_origin_is_not_followed_with_the_credentials() {
    let h = Harness::start(OpenApi::builder().auth(Auth::api_key_header("X-Api-Key", "k"))).await;
    let result = h.call("misc", "moved", json!({})).await;
    assert!(result.is_error());
    assert_eq!(
        result.text(),
        "Operation failed: the API answered 307 Temporary Redirect: "
    );
    assert_eq!(h.received().len(), 1);
    assert_eq!(h.elsewhere.lock().unwrap().len(), 0);
}

#[tokio::test]
async fn the_gates_refuse_a_bad_call_before_the_api_sees_it() {
    let h = Harness::start(OpenApi::builder()).await;
    let cases = [
        ("listPets", json!({"limit": "two"}), "invalid_values"),
        ("listPets", json!({"limit": 0}), "invalid_values"),
        ("listPets", json!({"tags": "a"}), "invalid_values"),
        ("listPets", json!({"limt": 2}), "unknown_params"),
        ("createPet", json!({}), "missing_required_fields"),
        ("createPet", json!({"body": {"name": 1}}), "invalid_values"),
        (
            "createPet",
            json!({"body": {"name": "a", "colour": "red"}}),
            "unknown_params",
        ),
        ("get_pets_by_petId", json!({}), "missing_required_fields"),
    ];
    for (action, data, error) in cases {
        let result = h.call("pets", action, data.clone()).await;
        assert!(result.is_error(), "{action} {data}");
        let body: Value = serde_json::from_str(&result.text()).unwrap();
        assert_eq!(body["error"], error, "{action} {data}: {body}");
    }
    assert_eq!(h.received().len(), 0, "the API received a request");
}

#[tokio::test]
async fn an_error_status_comes_back_as_an_error_quoting_status_and_body() {
    let h = Harness::start(OpenApi::builder().max_error_body_chars(12)).await;
    let result = h
        .call("pets", "get_pets_by_petId", json!({"petId": "99"}))
        .await;
    assert!(result.is_error());
    assert_eq!(
        result.text(),
        r#"Operation failed: the API answered 404 Not Found: {"error":"no…"#
    );
    assert_eq!(h.received().len(), 1);
}

#[tokio::test]
async fn a_text_answer_comes_back_as_text() {
    let h = Harness::start(OpenApi::builder()).await;
    let result = h.call("misc", "health", json!({})).await;
    assert!(!result.is_error());
    assert_eq!(
        result.structured_content().unwrap(),
        &json!({"status": 200, "content_type": "text/plain; charset=utf-8", "text": "ok"})
    );
}

#[tokio::test]
async fn the_call_limits_refuse_naming_themselves() {
    let h = Harness::start(
        OpenApi::builder()
            .timeout(Duration::from_millis(300))
            .max_answer_bytes(1024),
    )
    .await;
    let result = h.call("misc", "slow", json!({})).await;
    assert!(result.is_error());
    assert_eq!(
        result.text(),
        "Operation failed: the API did not answer within timeout (300 ms)"
    );
    let result = h.call("misc", "big", json!({})).await;
    assert!(result.is_error());
    assert_eq!(
        result.text(),
        "Operation failed: the API's answer is larger than max_answer_bytes (1024 bytes)"
    );
    // Under the limit, the same answer passes.
    let h = Harness::start(OpenApi::builder().max_answer_bytes(10_000)).await;
    let result = h.call("misc", "big", json!({})).await;
    assert_eq!(
        result.structured_content().unwrap()["text"]
            .as_str()
            .map(str::len),
        Some(10_000)
    );
}

const REFS: &str = r##"{
  "openapi": "3.1.0",
  "info": {"title": "refs", "version": "1"},
  "servers": [{"url": "http://127.0.0.1:9/"}],
  "paths": {"/a": {"post": {"operationId": "a", "summary": "A",
    "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/A"}}}}}}},
  "components": {"schemas": {
    "A": {"type": "object", "properties": {"b": {"$ref": "#/components/schemas/B"}}},
    "B": {"type": "object", "properties": {"c": {"$ref": "#/components/schemas/C"}}},
    "C": {"type": "string", "description": "a fairly long description of the innermost schema"}
  }}
}"##;

fn load_error(builder: OpenApiBuilder, text: &str) -> LoadError {
    builder.load_str(text).unwrap_err()
}

#[test]
fn the_load_limits_refuse_naming_themselves() {
    assert!(OpenApi::builder().load_str(REFS).is_ok());
    assert_eq!(
        load_error(OpenApi::builder().max_document_bytes(100), REFS).to_string(),
        "the OpenAPI document is larger than max_document_bytes (100 bytes)"
    );
    assert_eq!(
        load_error(OpenApi::builder().max_ref_depth(2), REFS).to_string(),
        "$ref chain deeper than max_ref_depth (2) in operation POST /a (a)"
    );
    assert!(OpenApi::builder().max_ref_depth(3).load_str(REFS).is_ok());
    assert_eq!(
        load_error(OpenApi::builder().max_schema_bytes(100), REFS).to_string(),
        "the resolved schema of operation POST /a (a) is larger than max_schema_bytes (100 bytes)"
    );
    let two = REFS.replace(
        r#""post": {"#,
        r#""get": {"operationId": "g", "summary": "G"}, "post": {"#,
    );
    assert!(OpenApi::builder().max_operations(2).load_str(&two).is_ok());
    assert_eq!(
        load_error(OpenApi::builder().max_operations(1), &two).to_string(),
        "the OpenAPI document declares more than max_operations (1) operations"
    );
}

#[test]
fn a_remote_ref_is_refused_at_load() {
    let remote = REFS.replace("#/components/schemas/C", "https://schemas.example/c.json");
    let error = load_error(OpenApi::builder(), &remote);
    assert!(matches!(error, LoadError::RemoteRef { .. }));
    assert_eq!(
        error.to_string(),
        "remote $ref refused at #/components/schemas/B/properties/c/$ref: https://schemas.example/c.json (only references inside the document, \"#/...\", are resolved; nothing is fetched)"
    );
}

#[test]
fn swagger_2_is_refused() {
    let error = load_error(OpenApi::builder(), r#"{"swagger": "2.0", "paths": {}}"#);
    assert_eq!(
        error.to_string(),
        "not an OpenAPI 3.0 or 3.1 document: swagger: \"2.0\" (Swagger 2.0: convert it to OpenAPI 3)"
    );
}
