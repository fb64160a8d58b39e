//! `JwtAuth` against a JWKS served on 127.0.0.1 by the test, in front of a real Streamable
//! HTTP server: what is accepted, what is refused (and how), and the JWKS cache's fetches.

#![allow(clippy::unwrap_used)]

mod http_harness;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::extract::State;
use axum::response::IntoResponse;
use base64::Engine as _;
use http_harness::{Answer, Http};
use jsonwebtoken::{EncodingKey, Header, encode};
use reqwest::StatusCode;
use serde_json::{Map, Value, json};
use wymcp::Identity;
use wymcp::backend::{Backends, InMemoryUserState};
use wymcp::transport::http::StreamableHttp;
use wymcp::transport::http::jwt::{Algorithm, DecodingKey, JwtAuth, JwtConfigError};
use wymcp::{CallOutput, CallResult, Context, PlainTool, Server};

const ISSUER: &str = "https://id.example.test/realms/main";
const RESOURCE: &str = "https://mcp.example.test/mcp";
const PRM: &str = "https://mcp.example.test/.well-known/oauth-protected-resource/mcp";

const A_KEY: &[u8] = include_bytes!("fixtures/jwt/a.key.pem");
const A_PUB: &[u8] = include_bytes!("fixtures/jwt/a.pub.pem");
const A_JWK: &str = include_str!("fixtures/jwt/a.jwk.json");
const B_KEY: &[u8] = include_bytes!("fixtures/jwt/b.key.pem");
const B_JWK: &str = include_str!("fixtures/jwt/b.jwk.json");

// ---------------------------------------------------------------------------------------------
// The identity provider's JWKS endpoint

/// A JWKS endpoint on 127.0.0.1: the keys it publishes (changed by the test to rotate), the
/// `Cache-Control` it sends, how many times it was fetched; whether it fails (500), and how
/// many of its answers it gives (the others held until the test releases them: a hanging
/// identity provider).
#[derive(Clone)]
struct Provider {
    keys: Arc<Mutex<Vec<Value>>>,
    cache_control: Arc<str>,
    hits: Arc<AtomicUsize>,
    failing: Arc<AtomicBool>,
    answers: Arc<tokio::sync::watch::Sender<usize>>,
    url: String,
}

impl Provider {
    async fn start(jwks: &[&str], cache_control: &str) -> Provider {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/jwks", listener.local_addr().unwrap());
        let provider = Provider {
            keys: Arc::new(Mutex::new(jwks.iter().map(|k| jwk(k)).collect())),
            cache_control: cache_control.into(),
            hits: Arc::default(),
            failing: Arc::default(),
            answers: Arc::new(tokio::sync::watch::channel(usize::MAX).0),
            url,
        };
        let app = axum::Router::new()
            .route("/jwks", axum::routing::get(serve_jwks))
            .with_state(provider.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        provider
    }

    fn publish(&self, jwks: &[&str]) {
        *self.keys.lock().unwrap() = jwks.iter().map(|k| jwk(k)).collect();
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }

    /// Waits (boundedly) until the endpoint was asked `n` times.
    async fn until_hits(&self, n: usize) {
        for _ in 0..500 {
            if self.hits() >= n {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the JWKS was fetched {} times, not {n}", self.hits());
    }

    /// Answers 500 (or again the keys).
    fn fail(&self, failing: bool) {
        self.failing.store(failing, Ordering::SeqCst);
    }

    /// Answers the first `n` fetches (counted from the start), holds every later one until
    /// [`Provider::release`].
    fn answer_only(&self, n: usize) {
        self.answers.send_replace(n);
    }

    fn release(&self) {
        self.answers.send_replace(usize::MAX);
    }
}

async fn serve_jwks(State(provider): State<Provider>) -> axum::response::Response {
    let nth = provider.hits.fetch_add(1, Ordering::SeqCst);
    let _ = provider.answers.subscribe().wait_for(|n| nth < *n).await;
    if provider.failing.load(Ordering::SeqCst) {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    }
    let keys = provider.keys.lock().unwrap().clone();
    (
        [
            ("content-type", "application/json".to_owned()),
            ("cache-control", provider.cache_control.to_string()),
        ],
        json!({ "keys": keys }).to_string(),
    )
        .into_response()
}

fn jwk(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

// ---------------------------------------------------------------------------------------------
// The MCP server

/// Answers the identity its context holds.
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
        let typed = ctx.identity().map(|who| {
            json!({
                "subject": who.subject(), "scopes": who.scopes(),
                "issuer": who.issuer(), "client_id": who.client_id(),
                "principal": who.principal(),
            })
        });
        Ok(CallOutput::json(json!({
            "typed": typed,
            "assigned": ctx.assigns().get("identity"),
        })))
    }
}

/// A server whose audience is its protected-resource metadata's `resource`.
async fn serve(auth: JwtAuth) -> Http {
    let server = Server::builder()
        .name("jwt-test")
        .plain_tool(WhoAmI)
        .build()
        .unwrap();
    Http::serve(
        StreamableHttp::builder(server)
            .auth(auth)
            .protected_resource(json!({"resource": RESOURCE, "authorization_servers": [ISSUER]}))
            .www_authenticate([("resource_metadata", PRM)]),
    )
    .await
}

fn jwks_auth(provider: &Provider) -> wymcp::transport::http::jwt::JwtAuthBuilder {
    JwtAuth::builder().issuer(ISSUER).jwks_url(&provider.url)
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Claims of a token that should be accepted.
fn good_claims() -> Value {
    json!({
        "iss": ISSUER, "aud": RESOURCE, "sub": "alice", "azp": "desktop",
        "exp": now() + 600, "iat": now(), "scope": "tasks:read tasks:write",
    })
}

fn signed(kid: &str, pem: &[u8], claims: &Value) -> String {
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some(kid.to_owned());
    encode(&header, claims, &EncodingKey::from_rsa_pem(pem).unwrap()).unwrap()
}

fn with(claims: &[(&str, Value)]) -> Value {
    let mut all = good_claims();
    for (k, v) in claims {
        all[*k] = v.clone();
    }
    all
}

async fn ping(http: &Http, authorization: &str) -> Answer {
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    http.post_raw(&[("authorization", authorization)], ping)
        .await
}

/// Asserts a 401 `invalid_token` challenge whose reason says `why`.
fn assert_invalid_token(answer: &Answer, why: &str) {
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{}", answer.text);
    assert_eq!(
        answer.header("www-authenticate"),
        Some(format!(r#"Bearer resource_metadata="{PRM}", error="invalid_token""#).as_str())
    );
    let reason = answer.refusal_reason();
    assert!(reason.starts_with("invalid_token: "), "{reason}");
    assert!(reason.contains(why), "{reason} lacks {why:?}");
}

fn b64(value: &Value) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value.to_string())
}

// ---------------------------------------------------------------------------------------------
// Tests

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_valid_token_is_accepted_and_its_claims_are_the_identity() {
    let provider = Provider::start(&[A_JWK], "max-age=300").await;
    let http = serve(jwks_auth(&provider).build().unwrap()).await;
    let token = signed("key-a", A_KEY, &good_claims());
    let answer = ping(&http, &format!("Bearer {token}")).await;
    assert_eq!(answer.status, StatusCode::OK);
    let identity = whoami_after(&http, &token, &token).await;
    assert_eq!(
        identity["typed"],
        json!({"subject": "alice", "scopes": ["tasks:read", "tasks:write"],
               "issuer": ISSUER, "client_id": "desktop",
               // One issuer: the principal is `sub`, as it always was (kept keys stay valid).
               "principal": "alice"})
    );
    assert_eq!(identity["assigned"]["subject"], "alice");
    assert_eq!(
        identity["assigned"]["claims"]["scope"],
        "tasks:read tasks:write"
    );
    // The JWKS was fetched once, and kept (max-age=300) for the later requests.
    assert_eq!(provider.hits(), 1);
}

/// Opens a session with `opening`; the session id.
async fn open(http: &Http, opening: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                      "params": {"protocolVersion": "2025-11-25"}});
    let bearer = format!("Bearer {opening}");
    let answer = http
        .post_raw(&[("authorization", &bearer)], init.to_string())
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    answer.header("mcp-session-id").unwrap().to_owned()
}

/// `whoami` called with `calling` in `session`: the answer.
async fn call_whoami(http: &Http, session: &str, calling: &str) -> Answer {
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "whoami", "arguments": {}}});
    let bearer = format!("Bearer {calling}");
    http.post_raw(
        &[
            ("authorization", &bearer),
            ("mcp-session-id", session),
            ("mcp-protocol-version", "2025-11-25"),
        ],
        call.to_string(),
    )
    .await
}

/// `whoami` in a session opened with `opening`, called with `calling`: what it answered.
async fn whoami_after(http: &Http, opening: &str, calling: &str) -> Value {
    let session = open(http, opening).await;
    let body = call_whoami(http, &session, calling).await.json();
    serde_json::from_str(body["result"]["content"][0]["text"].as_str().unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_context_holds_each_request_s_own_identity_after_a_step_up() {
    let provider = Provider::start(&[A_JWK], "max-age=300").await;
    let http = serve(jwks_auth(&provider).build().unwrap()).await;
    let reader = signed("key-a", A_KEY, &with(&[("scope", json!("tasks:read"))]));
    let writer = signed(
        "key-a",
        A_KEY,
        &with(&[("scp", json!(["tasks:read", "tasks:write"]))]),
    );
    // The session opened with the read-only token; the call presents the stepped-up one.
    let identity = whoami_after(&http, &reader, &writer).await;
    assert_eq!(
        identity["typed"]["scopes"],
        json!(["tasks:read", "tasks:write"])
    );
    // Another subject's valid token cannot use the session.
    let mallory = signed("key-a", A_KEY, &with(&[("sub", json!("mallory"))]));
    let session = open(&http, &reader).await;
    let answer = call_whoami(&http, &session, &mallory).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_for_another_audience_or_issuer_or_out_of_time_are_invalid_tokens() {
    let provider = Provider::start(&[A_JWK], "max-age=300").await;
    let http = serve(jwks_auth(&provider).build().unwrap()).await;
    let cases = [
        (
            with(&[("aud", json!("https://other.example.test/mcp"))]),
            "another audience",
        ),
        (
            with(&[("aud", json!(["https://a.test", "https://b.test"]))]),
            "another audience",
        ),
        (
            with(&[("iss", json!("https://evil.example.test"))]),
            "issuer (`iss`) is not accepted",
        ),
        (with(&[("exp", json!(now() - 3600))]), "has expired (`exp`)"),
        (
            with(&[("nbf", json!(now() + 3600))]),
            "not valid yet (`nbf`)",
        ),
        (with(&[("sub", json!(""))]), "no `sub` claim"),
    ];
    for (claims, why) in cases {
        let token = signed("key-a", A_KEY, &claims);
        assert_invalid_token(&ping(&http, &format!("Bearer {token}")).await, why);
    }
    let mut no_aud = good_claims();
    no_aud.as_object_mut().unwrap().remove("aud");
    let token = signed("key-a", A_KEY, &no_aud);
    assert_invalid_token(
        &ping(&http, &format!("Bearer {token}")).await,
        "required claim",
    );
    // A token of the right key signed by another key does not verify.
    let forged = signed("key-a", B_KEY, &good_claims());
    assert_invalid_token(&ping(&http, &format!("Bearer {forged}")).await, "signature");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_leeway_admits_a_just_expired_token() {
    let provider = Provider::start(&[A_JWK], "max-age=300").await;
    let auth = jwks_auth(&provider)
        .leeway(Duration::from_secs(120))
        .build()
        .unwrap();
    let http = serve(auth).await;
    let token = signed("key-a", A_KEY, &with(&[("exp", json!(now() - 60))]));
    assert_eq!(
        ping(&http, &format!("Bearer {token}")).await.status,
        StatusCode::OK
    );
    let token = signed("key-a", A_KEY, &with(&[("exp", json!(now() - 600))]));
    assert_invalid_token(&ping(&http, &format!("Bearer {token}")).await, "expired");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alg_none_and_hs256_signed_with_the_public_key_are_refused() {
    let provider = Provider::start(&[A_JWK], "max-age=300").await;
    let http = serve(jwks_auth(&provider).build().unwrap()).await;
    let unsigned = format!(
        "{}.{}.",
        b64(&json!({"alg": "none", "typ": "JWT", "kid": "key-a"})),
        b64(&good_claims())
    );
    assert_invalid_token(
        &ping(&http, &format!("Bearer {unsigned}")).await,
        "not a signed JWT",
    );
    let mut header = Header::new(Algorithm::HS256);
    header.kid = Some("key-a".to_owned());
    let confused = encode(
        &header,
        &good_claims(),
        &EncodingKey::from_secret(A_PUB).unwrap(),
    )
    .unwrap();
    assert_invalid_token(
        &ping(&http, &format!("Bearer {confused}")).await,
        "algorithm HS256 is not accepted",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_kid_is_fetched_once_and_a_rotated_key_is_accepted() {
    let provider = Provider::start(&[A_JWK], "max-age=3600").await;
    let auth = jwks_auth(&provider)
        .refetch_interval(Duration::ZERO)
        .build()
        .unwrap();
    let http = serve(auth).await;
    let old = signed("key-a", A_KEY, &good_claims());
    assert_eq!(
        ping(&http, &format!("Bearer {old}")).await.status,
        StatusCode::OK
    );
    assert_eq!(provider.hits(), 1);
    // The provider rotates: key-b is published; a token of key-b makes one refetch.
    provider.publish(&[A_JWK, B_JWK]);
    let new = signed("key-b", B_KEY, &good_claims());
    assert_eq!(
        ping(&http, &format!("Bearer {new}")).await.status,
        StatusCode::OK
    );
    assert_eq!(provider.hits(), 2);
    assert_eq!(
        ping(&http, &format!("Bearer {new}")).await.status,
        StatusCode::OK
    );
    assert_eq!(provider.hits(), 2);
    // key-a retired: still held until the set goes stale, so the old token passes for now.
    provider.publish(&[B_JWK]);
    assert_eq!(
        ping(&http, &format!("Bearer {old}")).await.status,
        StatusCode::OK
    );
    assert_eq!(provider.hits(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_kids_cause_at_most_one_fetch_per_refetch_interval() {
    let provider = Provider::start(&[A_JWK], "max-age=3600").await;
    let auth = jwks_auth(&provider)
        .refetch_interval(Duration::from_secs(3600))
        .build()
        .unwrap();
    let http = serve(auth).await;
    for i in 0..5 {
        let token = signed(&format!("nobody-{i}"), B_KEY, &good_claims());
        assert_invalid_token(
            &ping(&http, &format!("Bearer {token}")).await,
            &format!("no key with id \"nobody-{i}\""),
        );
    }
    assert_eq!(provider.hits(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jwks_without_max_age_or_with_no_store_is_fetched_again_when_stale() {
    let provider = Provider::start(&[A_JWK], "no-store").await;
    let auth = jwks_auth(&provider)
        .refetch_interval(Duration::ZERO)
        .jwks_cache_bounds(Duration::ZERO, Duration::from_secs(60))
        .build()
        .unwrap();
    let http = serve(auth).await;
    let token = signed("key-a", A_KEY, &good_claims());
    // Stale at once: each request served starts a fetch in the background (one at a time).
    for _ in 0..500 {
        assert_eq!(
            ping(&http, &format!("Bearer {token}")).await.status,
            StatusCode::OK
        );
        if provider.hits() >= 4 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("a stale JWKS was fetched {} times", provider.hits());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_header_is_400_and_no_token_is_a_bare_challenge() {
    let provider = Provider::start(&[A_JWK], "max-age=300").await;
    let http = serve(jwks_auth(&provider).build().unwrap()).await;
    let answer = ping(&http, "Bearer two tokens").await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        answer.header("www-authenticate"),
        Some(format!(r#"Bearer resource_metadata="{PRM}", error="invalid_request""#).as_str())
    );
    assert!(
        answer
            .refusal_reason()
            .contains("Malformed Authorization header")
    );
    let ping_body = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    let answer = http.post_raw(&[], ping_body).await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        answer.header("www-authenticate"),
        Some(format!(r#"Bearer resource_metadata="{PRM}""#).as_str())
    );
    // Not a JWT at all.
    assert_invalid_token(
        &ping(&http, "Bearer opaque-token").await,
        "not a signed JWT",
    );
    // No fetch but the one made when the auth was built.
    provider.until_hits(1).await;
    assert_eq!(provider.hits(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_keys_verify_without_a_jwks_and_an_explicit_audience_wins() {
    let auth = JwtAuth::builder()
        .issuer(ISSUER)
        .audience("api://tasks")
        .key(
            Some("key-a"),
            DecodingKey::from_rsa_pem(A_PUB).unwrap(),
            Algorithm::RS256,
        )
        .build()
        .unwrap();
    assert_eq!(auth.audiences(), ["api://tasks"]);
    let http = serve(auth).await;
    let token = signed("key-a", A_KEY, &with(&[("aud", json!("api://tasks"))]));
    assert_eq!(
        ping(&http, &format!("Bearer {token}")).await.status,
        StatusCode::OK
    );
    let token = signed("key-a", A_KEY, &good_claims());
    assert_invalid_token(
        &ping(&http, &format!("Bearer {token}")).await,
        "another audience",
    );
}

#[test]
fn unsafe_settings_are_refused_when_built() {
    let jwks = || {
        JwtAuth::builder()
            .issuer(ISSUER)
            .jwks_url("https://id.example.test/jwks")
    };
    assert!(matches!(
        JwtAuth::builder()
            .jwks_url("https://id.example.test/jwks")
            .build(),
        Err(JwtConfigError::NoIssuer)
    ));
    assert!(matches!(
        JwtAuth::builder().issuer(ISSUER).build(),
        Err(JwtConfigError::NoKeys)
    ));
    let hmac = jwks()
        .algorithms([Algorithm::RS256, Algorithm::HS256])
        .build();
    assert!(matches!(&hmac, Err(JwtConfigError::HmacWithJwks(alg)) if alg == "HS256"));
    assert!(
        hmac.unwrap_err()
            .to_string()
            .contains("never serve as an HMAC secret")
    );
    assert!(matches!(
        jwks().algorithms([]).build(),
        Err(JwtConfigError::NoAlgorithms)
    ));
    for insecure in [
        "http://id.example.test/jwks",
        "http://127.0.0.1@evil.test/jwks",
        "ftp://x",
    ] {
        assert!(
            matches!(
                JwtAuth::builder().issuer(ISSUER).jwks_url(insecure).build(),
                Err(JwtConfigError::InsecureJwksUrl(_))
            ),
            "{insecure}"
        );
    }
    let mismatched = JwtAuth::builder()
        .issuer(ISSUER)
        .algorithms([Algorithm::ES256])
        .key(
            None,
            DecodingKey::from_rsa_pem(A_PUB).unwrap(),
            Algorithm::RS256,
        )
        .build();
    assert!(matches!(
        mismatched,
        Err(JwtConfigError::KeyOutsideAllowlist { .. })
    ));
}

#[test]
fn identity_reads_scopes_issuer_and_client_from_the_claims() {
    let who = Identity::new("alice")
        .claim("scp", json!("a b"))
        .claim("client_id", json!("cli"));
    assert_eq!(who.scopes(), ["a", "b"]);
    assert_eq!(who.client_id(), Some("cli"));
    assert_eq!(who.issuer(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_without_kid_is_verified_only_by_a_lone_key() {
    let unnamed = encode(
        &Header::new(Algorithm::RS256),
        &good_claims(),
        &EncodingKey::from_rsa_pem(A_KEY).unwrap(),
    )
    .unwrap();
    let lone = Provider::start(&[A_JWK], "max-age=300").await;
    let http = serve(jwks_auth(&lone).build().unwrap()).await;
    let answer = ping(&http, &format!("Bearer {unnamed}")).await;
    assert_eq!(answer.status, StatusCode::OK);
    let several = Provider::start(&[A_JWK, B_JWK], "max-age=300").await;
    let http = serve(jwks_auth(&several).build().unwrap()).await;
    assert_invalid_token(
        &ping(&http, &format!("Bearer {unnamed}")).await,
        "names no key (`kid`)",
    );
}

// ---------------------------------------------------------------------------------------------
// Several issuers (issue 48, N10)

const OTHER_ISSUER: &str = "https://idp-b.example.test";

/// `{"op": "set"|"get", "key", "value"?}` on the caller's user state.
struct Remember;

impl PlainTool for Remember {
    fn name(&self) -> &str {
        "remember"
    }
    fn description(&self) -> &str {
        "Keeps a value for the caller"
    }
    fn input_schema(&self) -> Map<String, Value> {
        json!({"type": "object"}).as_object().cloned().unwrap()
    }
    async fn run(&self, arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let failed = |e: wymcp::user_state::UserStateError| wymcp::CallError::tool(e.to_string());
        let key = arguments["key"].as_str().unwrap_or_default();
        let state = ctx.user_state();
        let answer = match arguments.get("value") {
            Some(value) => {
                state.set(key, value.clone()).await.map_err(failed)?;
                json!("ok")
            }
            None => state.get(key).await.map_err(failed)?.unwrap_or(Value::Null),
        };
        Ok(CallOutput::text(answer.to_string()))
    }
}

/// `remember` with `arguments` in `session` as `token`: the answer.
async fn remember(http: &Http, session: &str, token: &str, arguments: Value) -> Answer {
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                      "params": {"name": "remember", "arguments": arguments}});
    let bearer = format!("Bearer {token}");
    http.post_raw(
        &[
            ("authorization", &bearer),
            ("mcp-session-id", session),
            ("mcp-protocol-version", "2025-11-25"),
        ],
        call.to_string(),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alice_of_one_issuer_is_not_alice_of_another() {
    let provider = Provider::start(&[A_JWK], "max-age=300").await;
    // Both issuers publish the same key here (each key source names its issuers).
    let auth = JwtAuth::builder()
        .issuer_jwks_url(ISSUER, &provider.url)
        .issuer_jwks_url(OTHER_ISSUER, &provider.url)
        .build()
        .unwrap();
    let server = Server::builder()
        .name("two-issuers")
        .plain_tool(WhoAmI)
        .plain_tool(Remember)
        .backends(Backends::new().user_state(InMemoryUserState::default()))
        .build()
        .unwrap();
    let http = Http::serve(
        StreamableHttp::builder(server)
            .auth(auth)
            .protected_resource(json!({"resource": RESOURCE, "authorization_servers": [ISSUER]}))
            .www_authenticate([("resource_metadata", PRM)]),
    )
    .await;
    let a_alice = signed("key-a", A_KEY, &good_claims());
    let b_alice = signed("key-a", A_KEY, &with(&[("iss", json!(OTHER_ISSUER))]));

    // A-alice's principal names her issuer; her session is hers alone.
    let identity = whoami_after(&http, &a_alice, &a_alice).await;
    assert_eq!(
        identity["typed"]["principal"],
        format!("{ISSUER}|alice").as_str()
    );
    assert_eq!(identity["typed"]["subject"], "alice");
    let session = open(&http, &a_alice).await;
    let stolen = call_whoami(&http, &session, &b_alice).await;
    assert_eq!(stolen.status, StatusCode::NOT_FOUND, "{}", stolen.text);

    // What A-alice keeps, B-alice does not read.
    let kept = json!({"key": "note", "value": "from-issuer-A"});
    let set = remember(&http, &session, &a_alice, kept).await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.text);
    let b_session = open(&http, &b_alice).await;
    let read = remember(&http, &b_session, &b_alice, json!({"key": "note"})).await;
    assert_eq!(read.json()["result"]["content"][0]["text"], "null");
    let read = remember(&http, &session, &a_alice, json!({"key": "note"})).await;
    assert_eq!(
        read.json()["result"]["content"][0]["text"],
        "\"from-issuer-A\""
    );
}

/// Issue 48 (N10's remainder): with several issuers, each key verifies the tokens of its own
/// issuer only. Two identity providers, each with its own JWKS endpoint served here: issuer
/// B's token signed with issuer A's key is refused, though the key is configured and its
/// `kid` published (before, any configured key verified a token of any configured issuer).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_of_one_issuer_does_not_verify_a_token_of_another() {
    let idp_a = Provider::start(&[A_JWK], "max-age=300").await;
    let idp_b = Provider::start(&[B_JWK], "max-age=300").await;
    let auth = JwtAuth::builder()
        .issuer_jwks_url(ISSUER, &idp_a.url)
        .issuer_jwks_url(OTHER_ISSUER, &idp_b.url)
        .build()
        .unwrap();
    let http = serve(auth).await;
    let b_claims = with(&[("iss", json!(OTHER_ISSUER))]);

    let own = ping(
        &http,
        &format!("Bearer {}", signed("key-a", A_KEY, &good_claims())),
    )
    .await;
    assert_eq!(own.status, StatusCode::OK, "{}", own.text);
    let own = ping(
        &http,
        &format!("Bearer {}", signed("key-b", B_KEY, &b_claims)),
    )
    .await;
    assert_eq!(own.status, StatusCode::OK, "{}", own.text);

    // A's key signing for B's users: B's set has no key-a, and A's set is not B's.
    let forged = ping(
        &http,
        &format!("Bearer {}", signed("key-a", A_KEY, &b_claims)),
    )
    .await;
    assert_eq!(forged.status, StatusCode::UNAUTHORIZED, "{}", forged.text);
    assert_eq!(
        forged.refusal_reason(),
        "invalid_token: no key with id \"key-a\" verifies RS256"
    );
    // And B's key signing for A's users.
    let forged = ping(
        &http,
        &format!("Bearer {}", signed("key-b", B_KEY, &good_claims())),
    )
    .await;
    assert_eq!(forged.status, StatusCode::UNAUTHORIZED, "{}", forged.text);
    assert_eq!(
        forged.refusal_reason(),
        "invalid_token: no key with id \"key-b\" verifies RS256"
    );
}

#[test]
fn several_issuers_refuse_a_key_source_bound_to_none() {
    let key = || DecodingKey::from_rsa_pem(A_PUB).unwrap();
    let refused = JwtAuth::builder()
        .issuer(ISSUER)
        .issuer(OTHER_ISSUER)
        .key(Some("key-a"), key(), Algorithm::RS256)
        .build()
        .unwrap_err();
    assert!(matches!(refused, JwtConfigError::UnboundKeys), "{refused}");
    let refused = JwtAuth::builder()
        .issuer_key(ISSUER, Some("key-a"), key(), Algorithm::RS256)
        .issuer(OTHER_ISSUER)
        .build()
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        format!("JwtAuth has no key for issuer \"{OTHER_ISSUER}\": its tokens could never verify")
    );
    assert!(
        JwtAuth::builder()
            .issuer_key(ISSUER, Some("key-a"), key(), Algorithm::RS256)
            .issuer_key(OTHER_ISSUER, Some("key-a"), key(), Algorithm::RS256)
            .build()
            .is_ok()
    );
}

// ---------------------------------------------------------------------------------------------
// Issue 48, N11 and N13: the JWKS fetched ahead, one fetch at a time, never stalling a request
// past the bounded wait

/// Bounds a request that must not wait for the identity provider: a hang fails the test
/// instead of stalling it (not a speed target).
const PATIENCE: Duration = Duration::from_secs(20);

/// Asserts a 503 `temporarily_unavailable` answer (no challenge: the token is not refused).
fn assert_unavailable(answer: &Answer, reason: &str) {
    assert_eq!(
        answer.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        answer.text
    );
    assert!(answer.header("www-authenticate").is_none());
    assert_eq!(answer.refusal_reason(), reason);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_valid_token_is_503_not_401_while_no_key_set_could_be_fetched_and_fetches_back_off() {
    let provider = Provider::start(&[A_JWK], "max-age=300").await;
    provider.fail(true);
    let http = serve(jwks_auth(&provider).build().unwrap()).await;
    let token = signed("key-a", A_KEY, &good_claims());
    for _ in 0..20 {
        assert_unavailable(
            &ping(&http, &format!("Bearer {token}")).await,
            "temporarily_unavailable: the identity provider's keys (JWKS) could not be fetched: \
             the JWKS endpoint answered 500",
        );
    }
    // One fetch (the one started when the auth was built): the failure is not retried before
    // the refetch interval (30 s), so requests do not become fetches.
    assert_eq!(provider.hits(), 1);

    // Once the endpoint answers, the next fetch due serves the token.
    let provider = Provider::start(&[A_JWK], "max-age=300").await;
    provider.fail(true);
    let auth = jwks_auth(&provider).refetch_interval(Duration::ZERO);
    let http = serve(auth.build().unwrap()).await;
    assert_eq!(
        ping(&http, &format!("Bearer {token}")).await.status,
        StatusCode::SERVICE_UNAVAILABLE
    );
    provider.fail(false);
    assert_eq!(
        ping(&http, &format!("Bearer {token}")).await.status,
        StatusCode::OK
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_set_is_fetched_when_built_and_concurrent_first_requests_share_that_fetch() {
    let provider = Provider::start(&[A_JWK], "max-age=300").await;
    provider.answer_only(0);
    let auth = jwks_auth(&provider).jwks_wait(PATIENCE).build().unwrap();
    // Fetched before any request needs it.
    provider.until_hits(1).await;
    let http = Arc::new(serve(auth).await);
    let token = signed("key-a", A_KEY, &good_claims());
    let requests: Vec<_> = (0..8)
        .map(|_| {
            let (http, token) = (Arc::clone(&http), token.clone());
            tokio::spawn(async move { ping(&http, &format!("Bearer {token}")).await })
        })
        .collect();
    // Let the requests reach the server while the fetch is held.
    tokio::time::sleep(Duration::from_millis(300)).await;
    provider.release();
    for request in requests {
        let answer = tokio::time::timeout(PATIENCE, request)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    }
    assert_eq!(provider.hits(), 1, "one fetch for all");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_set_keeps_serving_while_one_background_fetch_runs() {
    let provider = Provider::start(&[A_JWK], "no-store").await;
    // The first fetch is answered; every later one hangs.
    provider.answer_only(1);
    let auth = jwks_auth(&provider)
        .refetch_interval(Duration::ZERO)
        .jwks_cache_bounds(Duration::ZERO, Duration::from_secs(60))
        .fetch_timeout(Duration::from_secs(120));
    let http = Arc::new(serve(auth.build().unwrap()).await);
    let token = signed("key-a", A_KEY, &good_claims());
    assert_eq!(
        ping(&http, &format!("Bearer {token}")).await.status,
        StatusCode::OK
    );
    // The set is stale at once, and its refresh hangs.
    for _ in 0..3 {
        let requests: Vec<_> = (0..5)
            .map(|_| {
                let (http, token) = (Arc::clone(&http), token.clone());
                tokio::spawn(async move { ping(&http, &format!("Bearer {token}")).await })
            })
            .collect();
        for request in requests {
            let answer = tokio::time::timeout(PATIENCE, request)
                .await
                .expect("a request waited for the hanging identity provider")
                .unwrap();
            assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
        }
    }
    // Sixteen requests on a stale set: one background fetch, still hanging.
    provider.until_hits(2).await;
    assert_eq!(provider.hits(), 2);
    provider.release();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_identity_provider_delays_a_request_at_most_the_bounded_wait() {
    let provider = Provider::start(&[A_JWK], "max-age=300").await;
    provider.answer_only(0);
    let auth = jwks_auth(&provider)
        .jwks_wait(Duration::from_millis(200))
        .fetch_timeout(Duration::from_secs(120));
    let http = serve(auth.build().unwrap()).await;
    let token = signed("key-a", A_KEY, &good_claims());
    for _ in 0..2 {
        let answer = tokio::time::timeout(PATIENCE, ping(&http, &format!("Bearer {token}")))
            .await
            .expect("a request waited past the bounded wait");
        assert_unavailable(
            &answer,
            "temporarily_unavailable: the identity provider's keys (JWKS) were not fetched \
             within 200 ms",
        );
    }
    assert_eq!(
        provider.hits(),
        1,
        "the fetch still running is not repeated"
    );
    provider.release();
    for _ in 0..500 {
        let answer = ping(&http, &format!("Bearer {token}")).await;
        if answer.status == StatusCode::OK {
            return;
        }
        assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the token was not accepted once the identity provider answered");
}

// ---------------------------------------------------------------------------------------------
// Issue 48, N16: the header's `typ` (RFC 9068 §4, RFC 8725 §3.11)

fn typed(typ: Option<&str>) -> String {
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some("key-a".to_owned());
    header.typ = typ.map(str::to_owned);
    encode(
        &header,
        &good_claims(),
        &EncodingKey::from_rsa_pem(A_KEY).unwrap(),
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_kind_of_jwt_is_refused_and_require_at_jwt_accepts_access_tokens_only() {
    let provider = Provider::start(&[A_JWK], "max-age=300").await;
    let lenient = serve(jwks_auth(&provider).build().unwrap()).await;
    let strict = serve(jwks_auth(&provider).require_at_jwt().build().unwrap()).await;
    let other_kind =
        "the token's type (`typ`) names another kind of JWT, not an access token (`at+jwt`)";
    let not_at_jwt =
        "the token's type (`typ`) is not `at+jwt`: only RFC 9068 access tokens are accepted";
    for typ in [Some("at+jwt"), Some("application/AT+JWT")] {
        for http in [&lenient, &strict] {
            let answer = ping(http, &format!("Bearer {}", typed(typ))).await;
            assert_eq!(answer.status, StatusCode::OK, "{typ:?}: {}", answer.text);
        }
    }
    for typ in [Some("JWT"), Some("JOSE"), None] {
        let token = typed(typ);
        let answer = ping(&lenient, &format!("Bearer {token}")).await;
        assert_eq!(answer.status, StatusCode::OK, "{typ:?}: {}", answer.text);
        assert_invalid_token(&ping(&strict, &format!("Bearer {token}")).await, not_at_jwt);
    }
    for typ in ["dpop+jwt", "logout+jwt", "application/secevent+jwt"] {
        let token = typed(Some(typ));
        assert_invalid_token(
            &ping(&lenient, &format!("Bearer {token}")).await,
            other_kind,
        );
        assert_invalid_token(&ping(&strict, &format!("Bearer {token}")).await, not_at_jwt);
    }
}
