//! `IntrospectionAuth` (RFC 7662) against an introspection endpoint served on 127.0.0.1 by the
//! test, in front of a real Streamable HTTP server: an active token's description is the
//! identity; inactive, foreign-audience, foreign-issuer, expired and subject-less tokens are
//! 401 `invalid_token`; an endpoint that fails is 503 and nothing is cached from it; answers
//! are cached by token, for no longer than the cache TTL (a revocation shows after it).

#![allow(clippy::unwrap_used)]

mod http_harness;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode as AxumStatus};
use axum::response::IntoResponse;
use base64::Engine as _;
use http_harness::{Answer, Http, borrowed, modern_headers};
use reqwest::StatusCode;
use serde_json::{Map, Value, json};
use wymcp::transport::http::StreamableHttp;
use wymcp::transport::http::introspection::{IntrospectionAuth, IntrospectionConfigError};
use wymcp::{CallOutput, CallResult, Context, PlainTool, Server};

const ISSUER: &str = "https://id.example.test";
const RESOURCE: &str = "https://mcp.example.test/mcp";
const PRM: &str = "https://mcp.example.test/.well-known/oauth-protected-resource/mcp";

/// An introspection endpoint: what it says of each token, whether it fails, how often it
/// was asked, and the form bodies it received.
#[derive(Clone, Default)]
struct Endpoint {
    tokens: Arc<Mutex<HashMap<String, Value>>>,
    failing: Arc<AtomicBool>,
    hits: Arc<AtomicUsize>,
    url: Arc<Mutex<String>>,
}

impl Endpoint {
    async fn start() -> Endpoint {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let endpoint = Endpoint::default();
        *endpoint.url.lock().unwrap() =
            format!("http://{}/introspect", listener.local_addr().unwrap());
        let app = axum::Router::new()
            .route("/introspect", axum::routing::post(introspect))
            .with_state(endpoint.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        endpoint
    }

    fn says(&self, token: &str, description: Value) {
        self.tokens
            .lock()
            .unwrap()
            .insert(token.to_owned(), description);
    }

    fn url(&self) -> String {
        self.url.lock().unwrap().clone()
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

/// RFC 7662 §2: the caller authenticates (Basic `mcp-server:s3cret`), the token in a form.
async fn introspect(
    State(endpoint): State<Endpoint>,
    headers: HeaderMap,
    body: String,
) -> axum::response::Response {
    endpoint.hits.fetch_add(1, Ordering::SeqCst);
    if endpoint.failing.load(Ordering::SeqCst) {
        return (AxumStatus::INTERNAL_SERVER_ERROR, "down").into_response();
    }
    let basic = base64::engine::general_purpose::STANDARD.encode("mcp-server:s3cret");
    let authorized = headers.get("authorization").and_then(|v| v.to_str().ok())
        == Some(format!("Basic {basic}").as_str());
    if !authorized {
        return (AxumStatus::UNAUTHORIZED, "who are you").into_response();
    }
    let form: HashMap<String, String> = body
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (k.to_owned(), decode(v)))
        .collect();
    assert_eq!(
        form.get("token_type_hint").map(String::as_str),
        Some("access_token")
    );
    let token = form.get("token").cloned().unwrap_or_default();
    let description = endpoint.tokens.lock().unwrap().get(&token).cloned();
    let description = description.unwrap_or_else(|| json!({"active": false}));
    (
        [("content-type", "application/json")],
        description.to_string(),
    )
        .into_response()
}

/// Percent-decoding of a form value (what the test's tokens need).
fn decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 3 <= bytes.len() {
            out.push(u8::from_str_radix(&value[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

struct WhoAmI;

impl PlainTool for WhoAmI {
    fn name(&self) -> &str {
        "whoami"
    }
    fn description(&self) -> &str {
        "Tells the caller who it is"
    }
    fn input_schema(&self) -> Map<String, Value> {
        json!({"type": "object"}).as_object().cloned().unwrap()
    }
    async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let who = ctx.identity().unwrap();
        Ok(CallOutput::json(json!({
            "subject": who.subject(), "scopes": who.scopes(), "client_id": who.client_id(),
        })))
    }
}

async fn serve(auth: IntrospectionAuth) -> Http {
    let server = Server::builder().plain_tool(WhoAmI).build().unwrap();
    Http::serve(
        StreamableHttp::builder(server)
            .auth(auth)
            .protected_resource(json!({"resource": RESOURCE, "authorization_servers": [ISSUER]}))
            .www_authenticate([("resource_metadata", PRM)]),
    )
    .await
}

fn auth(endpoint: &Endpoint) -> wymcp::transport::http::introspection::IntrospectionAuthBuilder {
    IntrospectionAuth::builder()
        .endpoint(endpoint.url())
        .client_credentials("mcp-server", "s3cret")
        .issuer(ISSUER)
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn active(changes: &[(&str, Value)]) -> Value {
    let mut description = json!({
        "active": true, "iss": ISSUER, "aud": [RESOURCE, "other"], "sub": "alice",
        "client_id": "desktop", "scope": "tasks:read", "exp": now() + 600,
    });
    for (k, v) in changes {
        description[*k] = v.clone();
    }
    description
}

/// A 2026-07-28 `tools/call` of `whoami` with `token`.
async fn whoami(http: &Http, token: &str) -> Answer {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "whoami", "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}});
    let mut headers = modern_headers(&body);
    headers.push(("authorization".into(), format!("Bearer {token}")));
    http.post_raw(&borrowed(&headers), body.to_string()).await
}

fn assert_invalid_token(answer: &Answer, why: &str) {
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{}", answer.text);
    assert_eq!(
        answer.header("www-authenticate"),
        Some(format!(r#"Bearer resource_metadata="{PRM}", error="invalid_token""#).as_str())
    );
    let reason = answer.refusal_reason();
    assert!(
        reason.starts_with("invalid_token: ") && reason.contains(why),
        "{reason}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_active_token_is_the_identity_the_endpoint_describes_and_is_cached() {
    let endpoint = Endpoint::start().await;
    let http = serve(auth(&endpoint).build().unwrap()).await;
    // `+`, `/` and `=` reach the endpoint form-encoded, and decoded as they were.
    endpoint.says("tok+en/1==", active(&[]));
    let answer = whoami(&http, "tok+en/1==").await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    let text = answer.json()["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap(),
        json!({"subject": "alice", "scopes": ["tasks:read"], "client_id": "desktop"})
    );
    assert_eq!(endpoint.hits(), 1);
    assert_eq!(whoami(&http, "tok+en/1==").await.status, StatusCode::OK);
    assert_eq!(
        endpoint.hits(),
        1,
        "the second request is answered from the cache"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inactive_foreign_expired_and_subjectless_tokens_are_invalid_tokens() {
    let endpoint = Endpoint::start().await;
    let http = serve(auth(&endpoint).build().unwrap()).await;
    let cases = [
        ("unknown", None, "the token is not active"),
        (
            "other-aud",
            Some(active(&[("aud", json!("https://other.test/mcp"))])),
            "another audience",
        ),
        (
            "other-iss",
            Some(active(&[("iss", json!("https://evil.test"))])),
            "issuer (`iss`) is not accepted",
        ),
        (
            "expired",
            Some(active(&[("exp", json!(now() - 3600))])),
            "has expired",
        ),
        (
            "early",
            Some(active(&[("nbf", json!(now() + 3600))])),
            "not valid yet",
        ),
        // Issue 48, N15: a NumericDate may have a fraction (RFC 7519), and a date that is not a
        // number is not a date; both were read as no date at all, and the token accepted.
        (
            "expired-fraction",
            Some(active(&[("exp", json!(now() as f64 - 1000.5))])),
            "has expired",
        ),
        (
            "early-fraction",
            Some(active(&[("nbf", json!(now() as f64 + 3600.5))])),
            "not valid yet",
        ),
        (
            "exp-text",
            Some(active(&[("exp", json!(format!("x{}", now() + 600)))])),
            "`exp` is not a NumericDate",
        ),
        (
            "nbf-negative",
            Some(active(&[("nbf", json!(-1))])),
            "`nbf` is not a NumericDate",
        ),
        (
            "no-sub",
            Some(active(&[("sub", json!(""))])),
            "has no `sub`",
        ),
    ];
    for (token, description, why) in cases {
        if let Some(description) = description {
            endpoint.says(token, description);
        }
        assert_invalid_token(&whoami(&http, token).await, why);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_that_fails_is_503_and_nothing_is_cached_from_it() {
    let endpoint = Endpoint::start().await;
    let http = serve(auth(&endpoint).build().unwrap()).await;
    endpoint.says("good", active(&[]));
    endpoint.failing.store(true, Ordering::SeqCst);
    let answer = whoami(&http, "good").await;
    assert_eq!(
        answer.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        answer.text
    );
    assert!(answer.header("www-authenticate").is_none());
    assert_eq!(
        answer.refusal_reason(),
        "temporarily_unavailable: the token could not be checked now: the introspection endpoint answered 500"
    );
    endpoint.failing.store(false, Ordering::SeqCst);
    assert_eq!(whoami(&http, "good").await.status, StatusCode::OK);

    // Wrong client credentials: the endpoint refuses the server, not the token.
    let wrong = IntrospectionAuth::builder()
        .endpoint(endpoint.url())
        .client_credentials("mcp-server", "wrong")
        .build()
        .unwrap();
    let http = serve(wrong).await;
    let answer = whoami(&http, "good").await;
    assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(
        answer
            .refusal_reason()
            .ends_with("the introspection endpoint answered 401")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_token_is_refused_once_its_cached_answer_is_older_than_the_cache_ttl() {
    let endpoint = Endpoint::start().await;
    let ttl = Duration::from_millis(300);
    let http = serve(
        auth(&endpoint)
            .cache_ttl(ttl)
            .negative_cache_ttl(ttl)
            .build()
            .unwrap(),
    )
    .await;
    endpoint.says("t", active(&[]));
    assert_eq!(whoami(&http, "t").await.status, StatusCode::OK);
    endpoint.says("t", json!({"active": false}));
    assert_eq!(
        whoami(&http, "t").await.status,
        StatusCode::OK,
        "still cached"
    );
    tokio::time::sleep(ttl + Duration::from_millis(100)).await;
    assert_invalid_token(&whoami(&http, "t").await, "not active");
    assert_eq!(endpoint.hits(), 2);
}

#[test]
fn a_builder_without_endpoint_or_credentials_or_over_plain_http_is_refused() {
    let no_endpoint = IntrospectionAuth::builder()
        .client_credentials("a", "b")
        .build();
    assert!(matches!(
        no_endpoint,
        Err(IntrospectionConfigError::NoEndpoint)
    ));
    let no_credentials = IntrospectionAuth::builder()
        .endpoint("https://id.test/i")
        .build();
    assert!(matches!(
        no_credentials,
        Err(IntrospectionConfigError::NoCredentials)
    ));
    let plain = IntrospectionAuth::builder()
        .endpoint("http://id.example.com/introspect")
        .client_credentials("a", "b")
        .build();
    assert!(matches!(
        plain,
        Err(IntrospectionConfigError::InsecureEndpoint(_))
    ));
}
