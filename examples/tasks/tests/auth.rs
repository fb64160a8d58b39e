//! `--jwks-url --issuer --audience`: the example behind JWT auth, over real HTTP on
//! 127.0.0.1, with a JWKS the test serves and tokens it signs (the test keys of wymcp's own
//! JWT tests). A `tasks:read` principal sees and calls only the reading actions; its `create`
//! is answered with the step-up challenge naming `tasks:write`; a `tasks:write` one creates.

#![allow(clippy::unwrap_used, missing_docs)]

#[path = "../src/auth.rs"]
mod auth;
#[allow(dead_code)]
#[path = "../src/resources.rs"]
mod resources;
#[allow(dead_code)]
#[path = "../src/store.rs"]
mod store;
#[allow(dead_code)]
#[path = "../src/tools.rs"]
mod tools;

use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use reqwest::StatusCode;
use serde_json::{Value, json};
use wymcp::transport::http::{HttpServer, StreamableHttp};

use crate::auth::AuthSettings;
use crate::store::Store;

const KEY: &[u8] = include_bytes!("../../../crates/wymcp/tests/fixtures/jwt/a.key.pem");
const JWK: &str = include_str!("../../../crates/wymcp/tests/fixtures/jwt/a.jwk.json");
const ISSUER: &str = "https://id.example.test";

/// Serves the JWKS on 127.0.0.1; its URL.
async fn jwks() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/jwks", listener.local_addr().unwrap());
    let body = json!({"keys": [serde_json::from_str::<Value>(JWK).unwrap()]}).to_string();
    let app = axum::Router::new().route("/jwks", axum::routing::get(move || async { body }));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

/// The resource URL the server is configured with (as behind a proxy: it need not be the
/// address the test reaches it at), the audience tokens must name.
const AUDIENCE: &str = "https://tasks.example.test/mcp";
/// Where its protected-resource metadata is published.
const METADATA: &str = "https://tasks.example.test/.well-known/oauth-protected-resource/mcp";

/// The example behind JWT auth on 127.0.0.1: its base URL (`http://127.0.0.1:port`) and the
/// audience tokens must name.
async fn protected() -> (String, String) {
    let settings = AuthSettings::from_values(Some(&jwks().await), Some(ISSUER), Some(AUDIENCE))
        .unwrap()
        .unwrap();
    let protect = settings.protect().unwrap();
    let server = tools::server(Store::open_in_memory().unwrap()).unwrap();
    let http = HttpServer::bind("127.0.0.1:0", protect(StreamableHttp::builder(server)))
        .await
        .unwrap();
    let base = format!("http://{}", http.local_addr().unwrap());
    tokio::spawn(http.run());
    (base, AUDIENCE.to_owned())
}

fn token(audience: &str, subject: &str, scope: &str) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let claims = json!({"iss": ISSUER, "aud": audience, "sub": subject, "scope": scope,
                        "iat": now, "exp": now + 600});
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some("key-a".to_owned());
    encode(&header, &claims, &EncodingKey::from_rsa_pem(KEY).unwrap()).unwrap()
}

/// A session of `token` on the example: its POSTs.
struct Session {
    client: reqwest::Client,
    url: String,
    bearer: String,
    id: String,
}

impl Session {
    async fn open(base: &str, token: &str) -> Session {
        let mut session = Session {
            client: reqwest::Client::new(),
            url: format!("{base}/mcp"),
            bearer: format!("Bearer {token}"),
            id: String::new(),
        };
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                          "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                     "clientInfo": {"name": "auth-test", "version": "1"}}});
        let response = session.post(init).await;
        assert_eq!(response.status(), StatusCode::OK);
        session.id = response.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(
            session.post(initialized).await.status(),
            StatusCode::ACCEPTED
        );
        session
    }

    async fn post(&self, body: Value) -> reqwest::Response {
        let mut request = self
            .client
            .post(&self.url)
            .header("authorization", &self.bearer)
            .header("accept", "application/json, text/event-stream")
            .json(&body);
        if !self.id.is_empty() {
            request = request
                .header("mcp-session-id", &self.id)
                .header("mcp-protocol-version", "2025-11-25");
        }
        request.send().await.unwrap()
    }

    async fn call(&self, tool: &str, arguments: Value) -> reqwest::Response {
        self.post(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                         "params": {"name": tool, "arguments": arguments}}))
            .await
    }
}

/// The JSON its first content item holds.
async fn payload(response: reqwest::Response) -> Value {
    let body: Value = response.json().await.unwrap();
    serde_json::from_str(body["result"]["content"][0]["text"].as_str().unwrap()).unwrap()
}

/// Each tool's name and action enum (`null` for the plain tool and help).
async fn listed(session: &Session) -> Vec<(String, Value)> {
    let list = session
        .post(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    let body: Value = list.json().await.unwrap();
    let tools = body["result"]["tools"].as_array().unwrap();
    tools
        .iter()
        .map(|t| {
            let name = t["name"].as_str().unwrap().to_owned();
            (
                name,
                t["inputSchema"]["properties"]["action"]["enum"].clone(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_sees_and_calls_only_reads_and_is_asked_to_step_up_on_create() {
    let (base, audience) = protected().await;
    let reader = Session::open(&base, &token(&audience, "rita", "tasks:read")).await;
    assert_eq!(
        listed(&reader).await,
        [
            ("tasks".to_owned(), json!(["get", "list"])),
            ("projects".to_owned(), json!(["list"])),
            ("search".to_owned(), Value::Null),
            ("help".to_owned(), Value::Null),
        ]
    );
    let help = payload(reader.call("help", json!({"tool": "tasks"})).await).await;
    let actions: Vec<&String> = help["actions"].as_object().unwrap().keys().collect();
    assert_eq!(actions, ["get", "list"]);
    let list = reader.call("tasks", json!({"action": "list"})).await;
    assert_eq!(list.status(), StatusCode::OK);
    let create = reader
        .call(
            "tasks",
            json!({"action": "create", "data": {"title": "Renew passport"}}),
        )
        .await;
    assert_eq!(create.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        create.headers()["www-authenticate"].to_str().unwrap(),
        format!(
            r#"Bearer error="insufficient_scope", scope="tasks:write", resource_metadata="{METADATA}""#
        )
    );
    assert_eq!(
        payload(create).await["missing_scopes"],
        json!(["tasks:write"])
    );

    let writer = Session::open(&base, &token(&audience, "will", "tasks:read tasks:write")).await;
    let created = writer
        .call(
            "tasks",
            json!({"action": "create", "data": {"title": "Renew passport"}}),
        )
        .await;
    assert_eq!(created.status(), StatusCode::OK);
    assert_eq!(payload(created).await["title"], "Renew passport");
    let (name, actions) = listed(&writer).await.remove(0);
    assert_eq!(name, "tasks");
    assert_eq!(actions.as_array().unwrap().len(), 7);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_token_the_client_is_pointed_at_the_metadata() {
    let (base, audience) = protected().await;
    let client = reqwest::Client::new();
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let refused = client
        .post(format!("{base}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .json(&ping)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    let served = format!("{base}/.well-known/oauth-protected-resource/mcp");
    assert_eq!(
        refused.headers()["www-authenticate"].to_str().unwrap(),
        format!(r#"Bearer resource_metadata="{METADATA}""#)
    );
    let metadata: Value = client
        .get(&served)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        metadata,
        json!({"resource": audience, "authorization_servers": [ISSUER],
               "bearer_methods_supported": ["header"],
               "scopes_supported": ["tasks:read", "tasks:write"]})
    );
    // A token for another audience is refused.
    let other = token("https://elsewhere.example.test/mcp", "rita", "tasks:read");
    let refused = client
        .post(format!("{base}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("authorization", format!("Bearer {other}"))
        .json(&ping)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    assert!(
        refused.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .ends_with(r#"error="invalid_token""#)
    );
}

#[test]
fn the_three_flags_go_together() {
    assert_eq!(AuthSettings::from_values(None, None, None), Ok(None));
    assert_eq!(
        AuthSettings::from_values(Some("https://id/jwks"), None, Some("https://mcp/mcp")),
        Err("--jwks-url, --issuer and --audience go together: missing --issuer".to_owned())
    );
    assert_eq!(
        auth::metadata_url("https://mcp.example.com/mcp"),
        "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
    );
    assert_eq!(
        auth::metadata_url("https://mcp.example.com"),
        "https://mcp.example.com/.well-known/oauth-protected-resource"
    );
}

/// A 2026-07-28 request of `token` to the example: its answer.
async fn stateless(base: &str, token: &str, mut body: Value) -> reqwest::Response {
    let method = body["method"].as_str().unwrap().to_owned();
    let params = body
        .as_object_mut()
        .unwrap()
        .entry("params")
        .or_insert_with(|| json!({}));
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "auth-test", "version": "1"}
    });
    let mut request = reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .header("authorization", format!("Bearer {token}"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", &method);
    let name = match method.as_str() {
        "prompts/get" => body["params"]["name"].as_str(),
        "resources/read" => body["params"]["uri"].as_str(),
        _ => None,
    };
    if let Some(name) = name {
        request = request.header("mcp-name", name);
    }
    request.json(&body).send().await.unwrap()
}

/// Asserts `refused` is the step-up refusal naming `tasks:read`, and that it tells nothing of
/// the data.
async fn assert_needs_read(refused: reqwest::Response, what: &str) {
    let status = refused.status();
    let headers = refused.headers().clone();
    let text = refused.text().await.unwrap();
    assert_eq!(status, StatusCode::FORBIDDEN, "{what}: {text}");
    assert_eq!(
        headers["www-authenticate"].to_str().unwrap(),
        format!(
            r#"Bearer error="insufficient_scope", scope="tasks:read", resource_metadata="{METADATA}""#
        ),
        "{what}"
    );
    assert!(!text.contains("fire bob"), "{what}: {text}");
    let body: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(body["error"]["code"], -32003, "{what}: {text}");
    assert_eq!(
        body["error"]["data"]["missing_scopes"],
        json!(["tasks:read"])
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("The caller's credentials lack the scope(s) tasks:read that "),
        "{what}: {text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_and_the_prompt_need_tasks_read_in_both_eras() {
    let (base, audience) = protected().await;
    let alice = Session::open(&base, &token(&audience, "alice", "tasks:read tasks:write")).await;
    let created = alice
        .call(
            "projects",
            json!({"action": "create", "data": {"name": "hr"}}),
        )
        .await;
    assert_eq!(created.status(), StatusCode::OK);
    let task = json!({"action": "create",
                      "data": {"title": "fire bob on friday", "project": "hr", "notes": "confidential"}});
    assert_eq!(alice.call("tasks", task).await.status(), StatusCode::OK);

    // Mallory holds no scope of the example's: the session era.
    let mallory_token = token(&audience, "mallory", "openid");
    let mallory = Session::open(&base, &mallory_token).await;
    let read = json!({"jsonrpc": "2.0", "id": 3, "method": "resources/read",
                      "params": {"uri": "tasks://projects/hr"}});
    assert_needs_read(mallory.post(read.clone()).await, "read").await;
    let plan = json!({"jsonrpc": "2.0", "id": 4, "method": "prompts/get",
                      "params": {"name": "plan_my_day"}});
    assert_needs_read(mallory.post(plan.clone()).await, "prompt").await;
    let subscribe = json!({"jsonrpc": "2.0", "id": 5, "method": "resources/subscribe",
                           "params": {"uri": "tasks://projects/hr"}});
    assert_needs_read(mallory.post(subscribe).await, "subscribe").await;
    // The lists leave out what she may not read.
    for (method, field) in [
        ("resources/templates/list", "resourceTemplates"),
        ("prompts/list", "prompts"),
    ] {
        let list = mallory
            .post(json!({"jsonrpc": "2.0", "id": 6, "method": method}))
            .await;
        let body: Value = list.json().await.unwrap();
        assert_eq!(body["result"][field], json!([]), "{method}");
    }
    // The 2026-07-28 era.
    assert_needs_read(
        stateless(&base, &mallory_token, read.clone()).await,
        "read 2026",
    )
    .await;
    assert_needs_read(
        stateless(&base, &mallory_token, plan.clone()).await,
        "prompt 2026",
    )
    .await;
    let listed = stateless(
        &base,
        &mallory_token,
        json!({"jsonrpc": "2.0", "id": 7, "method": "resources/templates/list"}),
    )
    .await;
    let body: Value = listed.json().await.unwrap();
    assert_eq!(body["result"]["resourceTemplates"], json!([]));

    // A reader reads them, in both eras.
    let reader_token = token(&audience, "rita", "tasks:read");
    let reader = Session::open(&base, &reader_token).await;
    let body: Value = reader.post(read.clone()).await.json().await.unwrap();
    assert!(
        body["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("fire bob on friday")
    );
    let body: Value = stateless(&base, &reader_token, plan)
        .await
        .json()
        .await
        .unwrap();
    let text = body["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("fire bob on friday"), "{text}");
    let listed = stateless(
        &base,
        &reader_token,
        json!({"jsonrpc": "2.0", "id": 8, "method": "resources/templates/list"}),
    )
    .await;
    let body: Value = listed.json().await.unwrap();
    assert_eq!(
        body["result"]["resourceTemplates"][0]["uriTemplate"],
        "tasks://projects/{name}"
    );
}
