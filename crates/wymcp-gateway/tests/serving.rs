//! The binary's serving flags over real HTTP on 127.0.0.1, in front of the stdio fixture
//! upstream (`fixtures/upstream.py`, which records every request it reads):
//!
//! * `--jwks-url --issuer --audience` with the config's `scopes`: a token without the scope an
//!   upstream action asks is refused (403, the step-up challenge naming the scope) and the
//!   upstream receives no request; a token with it calls through (the JWKS served by the test,
//!   the tokens signed with the test keys of wymcp's own JWT tests);
//! * `--rate-limit`: the calls past the budget are answered `rate_limited` and never reach the
//!   upstream.

#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use reqwest::StatusCode;
use serde_json::{Value, json};
use wymcp::client::Client;

const KEY: &[u8] = include_bytes!("../../wymcp/tests/fixtures/jwt/a.key.pem");
const JWK: &str = include_str!("../../wymcp/tests/fixtures/jwt/a.jwk.json");
const ISSUER: &str = "https://id.example.test";
/// The resource URL the gateway is configured with, the audience tokens must name.
const AUDIENCE: &str = "https://gateway.example.test/mcp";
/// Where its protected-resource metadata is published.
const METADATA: &str = "https://gateway.example.test/.well-known/oauth-protected-resource/mcp";

/// Serves the JWKS on 127.0.0.1; its URL.
async fn jwks() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/jwks", listener.local_addr().unwrap());
    let body = json!({"keys": [serde_json::from_str::<Value>(JWK).unwrap()]}).to_string();
    let app = axum::Router::new().route("/jwks", axum::routing::get(move || async { body }));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

fn token(subject: &str, scope: &str) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let claims = json!({"iss": ISSUER, "aud": AUDIENCE, "sub": subject, "scope": scope,
                        "iat": now, "exp": now + 600});
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some("key-a".to_owned());
    encode(&header, &claims, &EncodingKey::from_rsa_pem(KEY).unwrap()).unwrap()
}

/// The mcpServers file of the fixture upstream `fx` recording to `record`, with `extra` keys.
fn config(python: &str, record: &std::path::Path, extra: Value) -> Value {
    let mut server = json!({
        "command": python,
        "args": [support::fixture("upstream.py"), "ok", record.display().to_string()],
        "timeout_ms": 5000
    });
    for (key, value) in extra.as_object().unwrap() {
        server[key] = value.clone();
    }
    json!({"mcpServers": {"fx": server}})
}

/// A path for the test's config file.
fn config_path(name: &str) -> std::path::PathBuf {
    let dir = support::target_dir().join("gateway-test-records");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(format!("{name}-{}.json", std::process::id()))
}

/// A session of `token` on the gateway at `url`: its POSTs.
struct Session {
    client: reqwest::Client,
    url: String,
    bearer: String,
    id: String,
}

impl Session {
    async fn open(url: &str, token: &str) -> Session {
        let mut session = Session {
            client: reqwest::Client::new(),
            url: url.to_owned(),
            bearer: format!("Bearer {token}"),
            id: String::new(),
        };
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                          "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                     "clientInfo": {"name": "serving-test", "version": "1"}}});
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

    async fn work(&self, n: u64) -> reqwest::Response {
        self.post(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                         "params": {"name": "fx", "arguments":
                             {"action": "work", "data": {"n": n, "label": "scoped"}}}}))
            .await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_without_an_upstream_action_s_scope_is_refused_before_the_upstream() {
    let Some(python) = support::python() else {
        return;
    };
    let record = support::record("serving-jwt");
    let file = config(python, &record, json!({"scopes": {"work": ["fx:work"]}}));
    let jwks = jwks().await;
    let (mut child, url, _) = support::start(
        &config_path("serving-jwt"),
        &file,
        &[],
        &[
            "--jwks-url",
            &jwks,
            "--issuer",
            ISSUER,
            "--audience",
            AUDIENCE,
        ],
    )
    .await;

    // No token at all: the challenge, pointing at the metadata.
    let anonymous = reqwest::Client::new()
        .post(&url)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);

    let reader = Session::open(&url, &token("rita", "fx:read")).await;
    let refused = reader.work(5).await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        refused.headers()["www-authenticate"].to_str().unwrap(),
        format!(
            r#"Bearer error="insufficient_scope", scope="fx:work", resource_metadata="{METADATA}""#
        )
    );
    assert_eq!(support::received(&record, "tools/call"), 0);

    let worker = Session::open(&url, &token("will", "fx:read fx:work")).await;
    let answered = worker.work(5).await;
    assert_eq!(answered.status(), StatusCode::OK);
    let body: Value = answered.json().await.unwrap();
    let text = body["result"]["content"][0]["text"].as_str().unwrap();
    let upstream: Value = serde_json::from_str(text).unwrap();
    assert_eq!(upstream["content"][0]["text"], "worked 5 scoped", "{body}");
    assert_eq!(support::received(&record, "tools/call"), 1);
    child.kill().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rate_limit_refuses_upstream_calls_past_the_budget_before_the_upstream() {
    let Some(python) = support::python() else {
        return;
    };
    let record = support::record("serving-rate");
    let file = config(python, &record, json!({}));
    let (mut child, url, _) = support::start(
        &config_path("serving-rate"),
        &file,
        &[],
        &["--rate-limit", "2/min"],
    )
    .await;
    let client = Client::builder(&url).connect().await.unwrap();
    let work = json!({"action": "work", "data": {"n": 7, "label": "budget"}});
    for _ in 0..2 {
        let ok = client.call_tool("fx", work.clone()).await.unwrap();
        assert!(!ok.is_error(), "{}", ok.text());
    }
    let limited = client.call_tool("fx", work).await.unwrap();
    assert!(limited.is_error(), "{}", limited.text());
    let refusal: Value = serde_json::from_str(&limited.text()).unwrap();
    assert_eq!(refusal["errorType"], "rate_limited", "{refusal}");
    assert_eq!(refusal["tool"], "fx", "{refusal}");
    assert_eq!(refusal["action"], "work", "{refusal}");
    assert_eq!(support::received(&record, "tools/call"), 2);
    client.close().await.unwrap();
    child.kill().await.unwrap();
}
