//! What the fuzz targets found (docs/fuzzing.md, "Found"), each pinned over real HTTP on
//! 127.0.0.1; the inputs that found them are kept in `fuzz/seeds/`.

#![allow(clippy::unwrap_used, missing_docs)]

mod http_harness;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use http_harness::{Http, envelope};
use reqwest::StatusCode;
use serde_json::{Value, json};
use wymcp::Server;
use wymcp::backend::{
    Backends, CreateError, InMemorySessionStore, SessionRecord, SessionStore, StoreError,
};
use wymcp::transport::http::StreamableHttp;

/// A store the test reaches too: it can end a session behind the service's back, as another
/// node would (`0.remove`), or expire one without its record being reaped yet (`expire`).
#[derive(Clone, Default)]
struct Shared(Arc<InMemorySessionStore>, Arc<Mutex<HashSet<String>>>);

impl Shared {
    fn expire(&self, id: &str) {
        self.1.lock().unwrap().insert(id.to_owned());
    }
}

impl SessionStore for Shared {
    fn create(
        &self,
        record: SessionRecord,
        max: usize,
        ttl: Duration,
    ) -> BoxFuture<'_, Result<(), CreateError>> {
        self.0.create(record, max, ttl)
    }
    fn load<'a>(
        &'a self,
        id: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Option<Arc<SessionRecord>>, StoreError>> {
        if self.1.lock().unwrap().contains(id) {
            return Box::pin(async { Ok(None) });
        }
        self.0.load(id, ttl)
    }
    fn save(&self, record: SessionRecord) -> BoxFuture<'_, Result<bool, StoreError>> {
        self.0.save(record)
    }
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        self.0.remove(id)
    }
    fn reap(&self, ttl: Duration) -> BoxFuture<'_, Result<Vec<String>, StoreError>> {
        self.0.reap(ttl)
    }
}

fn server() -> Server {
    Server::builder().name("regressions").build().unwrap()
}

/// The server with its sessions kept in `store`.
fn server_on(store: &Shared) -> Server {
    Server::builder()
        .name("regressions")
        .backends(Backends::new().sessions(store.clone()))
        .build()
        .unwrap()
}

/// `http_session` (fuzz/seeds/http_session/regression-*): a session
/// whose record left the store was answered 404, yet `StreamableHttpService::session` still
/// handed out its live handle until the reaper's next round.
#[tokio::test]
async fn a_session_gone_from_the_store_has_no_live_handle_once_answered_404() {
    let store = Shared::default();
    let http = Http::serve(StreamableHttp::builder(server_on(&store))).await;
    let session = http.ready("2025-11-25").await;
    assert!(http.service.session(&session).await.unwrap().is_some());
    assert!(
        store.0.remove(&session).await.unwrap(),
        "the record was there"
    );
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let answer = http.post(Some(&session), &list).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND, "{}", answer.text);
    assert!(
        http.service.session(&session).await.unwrap().is_none(),
        "the session's live handle outlived its record"
    );
    let again = http.post(Some(&session), &list).await;
    assert_eq!(again.status, StatusCode::NOT_FOUND, "{}", again.text);
}

/// `http_session` (fuzz/seeds/http_session/, fuzz/seeds/jsonrpc/regression-*): a 2026-07-28
/// request with a broken envelope and an id that is no id (an object, an array, a boolean)
/// was refused with that id echoed, which no MCP schema admits; it is answered `null`.
#[tokio::test]
async fn a_stateless_refusal_never_echoes_an_id_that_is_not_one() {
    let http = Http::serve(StreamableHttp::builder(server())).await;
    for id in [json!({}), json!([0, null]), json!(false), json!(1.5)] {
        let body = json!({"jsonrpc": "1.0", "id": id, "method": "tools/list",
                          "params": {"_meta": envelope()}});
        let headers = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/list"),
        ];
        let answer = http.post_raw(&headers, body.to_string()).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{}", answer.text);
        let refusal = answer.json();
        assert_eq!(refusal["id"], Value::Null, "{id} echoed: {}", answer.text);
        assert_eq!(refusal["error"]["code"], -32600, "{}", answer.text);
        assert_eq!(
            refusal["error"]["data"]["error"],
            "\"jsonrpc\" must be the string \"2.0\""
        );
    }
}

/// `jsonrpc` and `http_session` (fuzz/seeds/*/regression-invalid-id-echoed): the same in a
/// session-era refusal (fixed on main while the fuzzers ran; kept as found).
#[tokio::test]
async fn a_session_era_refusal_never_echoes_an_id_that_is_not_one() {
    let http = Http::serve(StreamableHttp::builder(server())).await;
    let body = json!({"jsonrpc": "2.0", "id": ["jsonrpc", null], "method": "prompts/list"});
    let answer = http.post(None, &body).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{}", answer.text);
    assert_eq!(answer.json()["id"], Value::Null, "{}", answer.text);
}

/// `http_session` (fuzz/seeds/http_session/regression-0c90bca16eeb): a DELETE of a
/// session that had expired (its record not reaped yet) was answered 404 and left its live
/// handle behind, as the 404 of a POST did.
#[tokio::test]
async fn deleting_an_expired_session_leaves_no_live_handle() {
    let store = Shared::default();
    let http = Http::serve(StreamableHttp::builder(server_on(&store))).await;
    let session = http.ready("2025-11-25").await;
    assert!(http.service.session(&session).await.unwrap().is_some());
    store.expire(&session);
    let answer = http
        .send(reqwest::Method::DELETE, &[("mcp-session-id", &session)])
        .await;
    assert_eq!(answer.status(), StatusCode::NOT_FOUND);
    assert!(
        http.service.session(&session).await.unwrap().is_none(),
        "the expired session's live handle outlived its DELETE"
    );
}
