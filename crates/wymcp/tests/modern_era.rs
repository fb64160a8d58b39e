//! The stateless era (MCP 2026-07-28) on the session-era endpoint, over real HTTP on
//! 127.0.0.1 port 0: the era chosen per request, the `_meta` envelope and header rules with
//! their error codes, `server/discover`, result shaping and cache hints, the tool context's
//! era, per-request log level, and one tool call answered identically in both eras. Modern
//! responses are validated against the official 2026-07-28 schema.

#![allow(clippy::unwrap_used, missing_docs)]

mod ctx_fixture;
mod http_harness;
mod mcp_schema;
mod stateless_fixture;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::future::BoxFuture;
use http_harness::{Http, borrowed, envelope, modern_headers};
use reqwest::StatusCode;
use serde_json::{Map, Value, json};
use wymcp::Resource;
use wymcp::backend::{
    Backends, CreateError, InMemorySessionStore, SessionRecord, SessionStore, StoreError,
};
use wymcp::protocol::stateless::{CacheHint, CacheHints, CacheScope};
use wymcp::transport::http::StreamableHttp;
use wymcp::{CallOutput, CallResult, Context, PlainTool, ProtocolVersion, Server};

const V2026: ProtocolVersion = ProtocolVersion::V2026_07_28;

/// Counts every call into the session store.
#[derive(Clone, Default)]
struct CountingStore {
    inner: Arc<InMemorySessionStore>,
    calls: Arc<AtomicUsize>,
}

impl CountingStore {
    fn tick(&self) {
        self.calls.fetch_add(1, Ordering::SeqCst);
    }
}

impl SessionStore for CountingStore {
    fn create(
        &self,
        record: SessionRecord,
        max: usize,
        ttl: Duration,
    ) -> BoxFuture<'_, Result<(), CreateError>> {
        self.tick();
        self.inner.create(record, max, ttl)
    }
    fn load<'a>(
        &'a self,
        id: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Option<Arc<SessionRecord>>, StoreError>> {
        self.tick();
        self.inner.load(id, ttl)
    }
    fn save(&self, record: SessionRecord) -> BoxFuture<'_, Result<bool, StoreError>> {
        self.tick();
        self.inner.save(record)
    }
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        self.tick();
        self.inner.remove(id)
    }
    // The reaper runs on its own schedule; it is not a request touching the store.
    fn reap(&self, ttl: Duration) -> BoxFuture<'_, Result<Vec<String>, StoreError>> {
        self.inner.reap(ttl)
    }
}

/// Says which era it runs in.
struct Era;

impl PlainTool for Era {
    fn name(&self) -> &str {
        "era"
    }
    fn description(&self) -> &str {
        "Reports the era of the call"
    }
    fn input_schema(&self) -> Map<String, Value> {
        ctx_fixture::object(json!({"type": "object"}))
    }
    async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
        Ok(CallOutput::json(json!({
            "version": ctx.protocol_version().as_str(),
            "stateless": ctx.protocol_version().is_stateless(),
            "session": ctx.session_id(),
        })))
    }
}

/// A tool whose `region` argument is mirrored in the `Mcp-Param-Region` header.
struct Routed;

impl PlainTool for Routed {
    fn name(&self) -> &str {
        "routed"
    }
    fn description(&self) -> &str {
        "Echoes its region"
    }
    fn input_schema(&self) -> Map<String, Value> {
        ctx_fixture::object(json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"}
        }}))
    }
    async fn run(&self, arguments: Map<String, Value>, _ctx: Context) -> CallResult {
        Ok(CallOutput::text(
            arguments["region"].as_str().unwrap_or_default(),
        ))
    }
}

fn server_with(backends: Backends) -> Server {
    Server::builder()
        .backends(backends)
        .name("modern-test")
        .version("1.2.3")
        .plain_tool(ctx_fixture::CtxTool)
        .plain_tool(Era)
        .plain_tool(Routed)
        .tool(stateless_fixture::Tasks)
        .resource(Resource::text("test://text", "text", "some text"))
        .build()
        .unwrap()
}

struct Harness {
    http: Http,
    store: CountingStore,
}

http_harness::serves_http!(Harness);

async fn start_with(hints: CacheHints) -> Harness {
    let store = CountingStore::default();
    let server = server_with(Backends::new().sessions(store.clone()));
    let builder = StreamableHttp::builder(server).cache_hints(hints);
    Harness {
        http: Http::serve(builder).await,
        store,
    }
}

async fn start() -> Harness {
    start_with(CacheHints::default()).await
}

/// A modern request: `params` gets the envelope; headers mirror the body.
fn request(method: &str, params: Value) -> Value {
    http_harness::request(json!(7), method, params)
}

impl Harness {
    async fn raw(&self, body: &Value, headers: &[(String, String)]) -> reqwest::Response {
        self.http
            .post_with(&borrowed(headers), body.to_string())
            .await
    }

    /// Posts with the given headers: status, session header present, body.
    async fn post_with(&self, body: &Value, headers: &[(String, String)]) -> (StatusCode, Value) {
        let resp = self.raw(body, headers).await;
        let status = resp.status();
        assert!(
            resp.headers().get("mcp-session-id").is_none(),
            "no session is minted in the stateless era"
        );
        let text = resp.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// Posts with the headers the body calls for.
    async fn post(&self, body: &Value) -> (StatusCode, Value) {
        self.post_with(body, &modern_headers(body)).await
    }

    /// A session-era session: initialize, initialized; answers the session id.
    async fn session(&self) -> String {
        self.open_session(json!({})).await
    }
}

fn session_headers(sid: &str) -> Vec<(String, String)> {
    vec![
        ("mcp-session-id".to_owned(), sid.to_owned()),
        ("mcp-protocol-version".to_owned(), "2025-11-25".to_owned()),
    ]
}

/// The JSON a tool answered as its text content.
fn json_text(result: &Value) -> Value {
    serde_json::from_str(result["content"][0]["text"].as_str().unwrap_or("null")).unwrap()
}

fn assert_valid(definition: &str, value: &Value) {
    mcp_schema::assert_valid(V2026, definition, value);
}

fn assert_error(status: StatusCode, body: &Value, want_status: u16, code: i64) {
    assert_eq!(status.as_u16(), want_status, "{body}");
    assert_eq!(body["error"]["code"], code, "{body}");
    assert_eq!(
        body["id"], 7,
        "every error carries the request's id: {body}"
    );
}

#[tokio::test]
async fn discover_is_served_without_a_session_and_never_touches_the_store() {
    let h = start().await;
    let (status, body) = h.post(&request("server/discover", json!({}))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_valid("DiscoverResultResponse", &body);
    let result = &body["result"];
    assert_eq!(result["resultType"], "complete");
    assert!(
        result["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28"))
    );
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "modern-test", "version": "1.2.3"})
    );
    assert_eq!(result["ttlMs"], 0);
    assert_eq!(result["cacheScope"], "private");
    assert!(result["capabilities"]["tools"].is_object());
    // Only what subscriptions/listen delivers is advertised: resource updates (the server has
    // resources), no list changes (the server does not declare listChanged).
    assert!(result["capabilities"]["tools"].get("listChanged").is_none());
    assert!(
        result["capabilities"]["resources"]
            .get("listChanged")
            .is_none()
    );
    assert_eq!(result["capabilities"]["resources"]["subscribe"], true);
    for method in ["tools/list", "resources/list"] {
        let (status, _) = h.post(&request(method, json!({}))).await;
        assert_eq!(status, StatusCode::OK);
    }
    let (status, _) = h
        .post(&request(
            "tools/call",
            json!({"name": "era", "arguments": {}}),
        ))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(h.store.calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn the_session_era_is_unchanged_on_the_same_endpoint() {
    let h = start().await;
    let sid = h.session().await;
    assert!(h.store.calls.load(Ordering::SeqCst) > 0);
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                      "params": {"name": "era", "arguments": {}}});
    let before = h.store.calls.load(Ordering::SeqCst);
    let resp = h.raw(&call, &session_headers(&sid)).await;
    let body: Value = resp.json().await.unwrap();
    let era = &json_text(&body["result"]);
    assert_eq!(era["stateless"], false, "{body}");
    assert_eq!(era["version"], "2025-11-25");
    assert_eq!(era["session"], sid.as_str());
    assert!(body["result"].get("resultType").is_none());
    // The session is loaded once, ahead of the body's parse, and not again where it is
    // resolved.
    assert_eq!(h.store.calls.load(Ordering::SeqCst) - before, 1);
}

#[tokio::test]
async fn a_session_loaded_ahead_is_judged_where_it_was_before() {
    let h = start().await;
    let sid = h.session().await;
    // A body that is not JSON is still refused as such, not as anything the session says.
    let resp = h
        .http
        .post_with(&borrowed(&session_headers(&sid)), "{not json".to_owned())
        .await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32700, "{body}");
    // A session that does not exist: 404 once the message is read, as before.
    let call = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                      "params": {"name": "era", "arguments": {}}});
    let resp = h.raw(&call, &session_headers("no-such-session")).await;
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    // `ping` needs no session: answered whatever the named session's state.
    let ping = json!({"jsonrpc": "2.0", "id": 5, "method": "ping"});
    let resp = h.raw(&ping, &session_headers("no-such-session")).await;
    assert_eq!(resp.status(), StatusCode::OK);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["result"], json!({}), "{body}");
    // A `ping` naming a live session loads it (its idle timer restarts), once.
    let before = h.store.calls.load(Ordering::SeqCst);
    let resp = h.raw(&ping, &session_headers(&sid)).await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(h.store.calls.load(Ordering::SeqCst) - before, 1);
}

#[tokio::test]
async fn a_stateless_request_naming_a_session_never_touches_the_store() {
    let h = start().await;
    let sid = h.session().await;
    let before = h.store.calls.load(Ordering::SeqCst);
    let call = request("tools/call", json!({"name": "era", "arguments": {}}));
    let mut headers = modern_headers(&call);
    headers.push(("mcp-session-id".to_owned(), sid));
    let (status, body) = h.post_with(&call, &headers).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(json_text(&body["result"])["stateless"], true, "{body}");
    assert_eq!(h.store.calls.load(Ordering::SeqCst), before);
}

#[tokio::test]
async fn the_tool_context_tells_the_tool_its_era() {
    let h = start().await;
    let (_, body) = h
        .post(&request(
            "tools/call",
            json!({"name": "era", "arguments": {}}),
        ))
        .await;
    assert_valid("CallToolResultResponse", &body);
    let era = &json_text(&body["result"]);
    assert_eq!(
        *era,
        json!({"version": "2026-07-28", "stateless": true, "session": null})
    );
}

#[tokio::test]
async fn a_missing_envelope_is_400_invalid_params() {
    let h = start().await;
    let bare = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}});
    let (status, body) = h.post(&bare).await;
    assert_error(status, &body, 400, -32602);
    // The schema's InvalidParamsError is the error object.
    assert_valid("InvalidParamsError", &body["error"]);
    for missing in [
        "io.modelcontextprotocol/protocolVersion",
        "io.modelcontextprotocol/clientCapabilities",
    ] {
        let mut meta = envelope();
        meta.as_object_mut().unwrap().remove(missing);
        let body = request("tools/list", json!({"_meta": meta}));
        let (status, answer) = h.post(&body).await;
        assert_error(status, &answer, 400, -32602);
        assert_eq!(
            answer["error"]["data"]["envelope"]["missing"],
            json!([missing])
        );
    }
    // clientInfo is optional.
    let mut meta = envelope();
    meta.as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientInfo");
    let (status, body) = h.post(&request("tools/list", json!({"_meta": meta}))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

/// The era is decided by one rule on every transport (`Era::of`): a body that claims the
/// stateless era by itself is served in it without a version header, as on stdio: a request
/// of a method of this era only, or a `_meta` carrying one of the envelope's keys. Each is then
/// told what its envelope misses, not asked for a session.
#[tokio::test]
async fn a_body_claims_the_stateless_era_without_a_version_header() {
    let h = start().await;
    let discover = json!({"jsonrpc": "2.0", "id": 7, "method": "server/discover"});
    let (status, body) = h.post_with(&discover, &[]).await;
    assert_error(status, &body, 400, -32602);
    assert_eq!(
        body["error"]["data"]["envelope"]["missing"],
        json!([
            "io.modelcontextprotocol/protocolVersion",
            "io.modelcontextprotocol/clientCapabilities"
        ]),
        "{body}"
    );
    let mut meta = envelope();
    meta.as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/protocolVersion");
    let half = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list",
        "params": {"_meta": meta}});
    let (status, body) = h.post_with(&half, &[]).await;
    assert_error(status, &body, 400, -32602);
    assert_eq!(
        body["error"]["data"]["envelope"]["missing"],
        json!(["io.modelcontextprotocol/protocolVersion"]),
        "{body}"
    );
    assert_eq!(
        h.store.calls.load(Ordering::SeqCst),
        0,
        "the store is never asked"
    );
}

#[tokio::test]
async fn headers_must_match_the_body() {
    let h = start().await;
    let body = request("tools/call", json!({"name": "era", "arguments": {}}));
    let without = |skip: &str| -> Vec<(String, String)> {
        modern_headers(&body)
            .into_iter()
            .filter(|(k, _)| !k.eq_ignore_ascii_case(skip))
            .collect()
    };
    let with = |name: &str, value: &str| -> Vec<(String, String)> {
        let mut headers = without(name);
        headers.push((name.to_owned(), value.to_owned()));
        headers
    };
    for headers in [
        without("Mcp-Method"),
        without("Mcp-Name"),
        with("Mcp-Method", "TOOLS/CALL"),
        with("Mcp-Method", "tools/list"),
        with("Mcp-Name", "ERA"),
        with("Mcp-Name", "other"),
        with("MCP-Protocol-Version", "2025-11-25"),
    ] {
        let (status, answer) = h.post_with(&body, &headers).await;
        assert_error(status, &answer, 400, -32020);
        assert_valid("HeaderMismatchError", &answer);
    }
    // Without the version header the body's envelope still picks the era: a mismatch.
    let (status, answer) = h.post_with(&body, &without("MCP-Protocol-Version")).await;
    assert_error(status, &answer, 400, -32020);
    // Names are case-insensitive, values trimmed.
    for headers in [
        with("mcp-method", "tools/call"),
        with("MCP-METHOD", " tools/call "),
        with("Mcp-Name", "  era  "),
    ] {
        let (status, answer) = h.post_with(&body, &headers).await;
        assert_eq!(status, StatusCode::OK, "{headers:?}: {answer}");
    }
    // resources/read's Mcp-Name is the URI.
    let read = request("resources/read", json!({"uri": "test://text"}));
    let mut headers = modern_headers(&read);
    headers.retain(|(k, _)| k != "Mcp-Name");
    headers.push(("Mcp-Name".to_owned(), "test://other".to_owned()));
    let (status, answer) = h.post_with(&read, &headers).await;
    assert_error(status, &answer, 400, -32020);
}

#[tokio::test]
async fn a_body_version_the_header_contradicts_is_a_mismatch_not_unsupported() {
    let h = start().await;
    let mut meta = envelope();
    meta["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let body = request("tools/list", json!({"_meta": meta}));
    let (status, answer) = h.post(&body).await;
    assert_error(status, &answer, 400, -32020);
}

#[tokio::test]
async fn an_unsupported_version_is_32022_with_supported_and_requested() {
    let h = start().await;
    let mut meta = envelope();
    meta["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let body = request("tools/list", json!({"_meta": meta}));
    let mut headers = modern_headers(&body);
    headers[0].1 = "v999.0.0".to_owned();
    let (status, answer) = h.post_with(&body, &headers).await;
    assert_error(status, &answer, 400, -32022);
    assert_valid("UnsupportedProtocolVersionError", &answer);
    assert_eq!(answer["error"]["data"]["requested"], "v999.0.0");
    let supported = answer["error"]["data"]["supported"].as_array().unwrap();
    assert!(!supported.is_empty());
    let (_, discover) = h.post(&request("server/discover", json!({}))).await;
    let listed = discover["result"]["supportedVersions"].as_array().unwrap();
    for version in supported {
        assert!(listed.contains(version), "{version} not in {listed:?}");
    }
    // A session-era revision in the envelope is not served statelessly either.
    let mut meta = envelope();
    meta["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
    let body = request("tools/list", json!({"_meta": meta}));
    let mut headers = modern_headers(&body);
    headers[0].1 = "2025-11-25".to_owned();
    let (status, answer) = h.post_with(&body, &headers).await;
    assert_error(status, &answer, 400, -32022);
}

#[tokio::test]
async fn removed_and_unknown_methods_are_404_method_not_found() {
    let h = start().await;
    for method in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "tools/frobnicate",
    ] {
        let body = request(method, json!({"uri": "test://text", "level": "info"}));
        let (status, answer) = h.post(&body).await;
        assert_error(status, &answer, 404, -32601);
        assert_valid("MethodNotFoundError", &answer["error"]);
    }
    // A capability the server does not have: prompts/list is not served.
    let (status, answer) = h.post(&request("prompts/list", json!({}))).await;
    assert_error(status, &answer, 404, -32601);
}

#[tokio::test]
async fn a_capability_the_request_did_not_declare_is_32021() {
    let h = start().await;
    for (op, required) in [
        ("elicit", json!({"elicitation": {}})),
        ("sample", json!({"sampling": {}})),
        ("elicit_url", json!({"elicitation": {"url": {}}})),
    ] {
        let body = request(
            "tools/call",
            json!({"name": "ctx", "arguments": {"op": op}}),
        );
        let (status, answer) = h.post(&body).await;
        assert_error(status, &answer, 400, -32021);
        assert_valid("MissingRequiredClientCapabilityError", &answer);
        assert_eq!(answer["error"]["data"]["requiredCapabilities"], required);
    }
}

#[tokio::test]
async fn get_and_delete_answer_405_to_the_modern_era() {
    let h = start().await;
    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let modern = [
            ("accept", "text/event-stream"),
            ("MCP-Protocol-Version", "2026-07-28"),
        ];
        let resp = h.send(method.clone(), &modern).await;
        assert_eq!(resp.status(), StatusCode::METHOD_NOT_ALLOWED, "{method}");
        // The wire checks run first: a foreign Origin is refused before the era is looked at.
        let foreign = [modern[0], modern[1], ("origin", "http://evil.example")];
        let resp = h.send(method.clone(), &foreign).await;
        assert_eq!(resp.status(), StatusCode::FORBIDDEN, "{method}");
    }
    // The session era's GET is untouched: without a session it is still a 400.
    let resp = h
        .send(reqwest::Method::GET, &[("accept", "text/event-stream")])
        .await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn list_results_carry_result_type_server_info_and_cache_hints() {
    let hints = CacheHints::default()
        .set(
            "tools/list",
            CacheHint {
                ttl_ms: 60_000,
                scope: CacheScope::Public,
            },
        )
        .set(
            "resources/read",
            CacheHint {
                ttl_ms: 5,
                scope: CacheScope::Private,
            },
        );
    let h = start_with(hints).await;
    let mut orders = Vec::new();
    for _ in 0..3 {
        let (status, body) = h.post(&request("tools/list", json!({}))).await;
        assert_eq!(status, StatusCode::OK);
        assert_valid("ListToolsResultResponse", &body);
        let result = &body["result"];
        assert_eq!(result["resultType"], "complete");
        assert_eq!(result["ttlMs"], 60_000);
        assert_eq!(result["cacheScope"], "public");
        assert_eq!(
            result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
            "modern-test"
        );
        let names: Vec<Value> = result["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].clone())
            .collect();
        orders.push(names);
    }
    assert_eq!(
        orders[0],
        json!(["ctx", "era", "routed", "tasks", "help"])
            .as_array()
            .unwrap()
            .clone()
    );
    assert!(orders.windows(2).all(|w| w[0] == w[1]), "{orders:?}");

    for (method, definition) in [
        ("resources/list", "ListResourcesResultResponse"),
        (
            "resources/templates/list",
            "ListResourceTemplatesResultResponse",
        ),
    ] {
        let (status, body) = h.post(&request(method, json!({}))).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_valid(definition, &body);
        assert_eq!(body["result"]["ttlMs"], 0);
        assert_eq!(body["result"]["cacheScope"], "private");
    }
    let (status, body) = h
        .post(&request("resources/read", json!({"uri": "test://text"})))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_valid("ReadResourceResultResponse", &body);
    assert_eq!(body["result"]["ttlMs"], 5);
    assert_eq!(body["result"]["contents"][0]["text"], "some text");
}

#[tokio::test]
async fn an_unknown_resource_is_32602_with_its_uri() {
    let h = start().await;
    let (status, body) = h
        .post(&request("resources/read", json!({"uri": "test://gone"})))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["error"]["code"], -32602, "{body}");
    assert_eq!(body["error"]["data"]["uri"], "test://gone");
    assert_eq!(body["id"], 7);
}

/// The `result` of a tools/call in the session era.
async fn session_call(h: &Harness, sid: &str, name: &str, arguments: Value) -> Value {
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                      "params": {"name": name, "arguments": arguments}});
    let resp = h.raw(&call, &session_headers(sid)).await;
    assert_eq!(resp.status(), StatusCode::OK);
    let body: Value = resp.json().await.unwrap();
    body["result"].clone()
}

/// The `result` of a tools/call in the stateless era, without the era's additions.
async fn modern_call(h: &Harness, name: &str, arguments: Value) -> Value {
    let body = request("tools/call", json!({"name": name, "arguments": arguments}));
    let (status, answer) = h.post(&body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_valid("CallToolResultResponse", &answer);
    let mut result = answer["result"].clone();
    let map = result.as_object_mut().unwrap();
    assert_eq!(map.remove("resultType"), Some(json!("complete")));
    assert!(map.remove("_meta").is_some());
    result
}

#[tokio::test]
async fn tools_call_gates_and_help_answer_identically_in_both_eras() {
    let h = start().await;
    let sid = h.session().await;
    for (name, arguments) in [
        (
            "tasks",
            json!({"action": "create", "data": {"title": "Write"}}),
        ),
        ("tasks", json!({"action": "create", "data": {"title": ""}})),
        ("tasks", json!({"action": "delete", "data": {}})),
        (
            "tasks",
            json!({"action": "create", "data": {"title": "x", "extra": 1}}),
        ),
        ("help", json!({})),
        ("help", json!({"tool": "tasks"})),
    ] {
        let session = session_call(&h, &sid, name, arguments.clone()).await;
        let modern = modern_call(&h, name, arguments.clone()).await;
        assert_eq!(session, modern, "{name} {arguments}");
    }
    let created = modern_call(
        &h,
        "tasks",
        json!({"action": "create", "data": {"title": "Write"}}),
    )
    .await;
    assert_eq!(json_text(&created)["created"], "Write");
}

/// Reads the `data:` payloads of an SSE body.
fn sse_messages(text: &str) -> Vec<Value> {
    text.split("\n\n")
        .filter_map(|block| {
            let data: String = block
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .collect();
            (!data.is_empty()).then(|| serde_json::from_str(&data).unwrap())
        })
        .collect()
}

#[tokio::test]
async fn log_messages_follow_the_requests_own_level() {
    let h = start().await;
    // No logLevel: nothing is sent, the answer is plain JSON.
    let body = request(
        "tools/call",
        json!({"name": "ctx", "arguments": {"op": "log"}}),
    );
    let (status, answer) = h.post(&body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        json_text(&answer["result"]),
        json!({"info": false, "db": false, "debug": false})
    );
    // logLevel "info": info and error are sent on the POST's stream, debug is not.
    let mut meta = envelope();
    meta["io.modelcontextprotocol/logLevel"] = json!("info");
    let body = request(
        "tools/call",
        json!({"name": "ctx", "arguments": {"op": "log"}, "_meta": meta}),
    );
    let resp = h.raw(&body, &modern_headers(&body)).await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let messages = sse_messages(&resp.text().await.unwrap());
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert_eq!(messages[0]["method"], "notifications/message");
    assert_eq!(messages[0]["params"]["level"], "info");
    assert_eq!(messages[1]["params"]["level"], "error");
    let last = &messages[2];
    assert_valid("CallToolResultResponse", last);
    assert_eq!(
        json_text(&last["result"]),
        json!({"info": true, "db": true, "debug": false})
    );
    // No message in the stream is a server→client request.
    assert!(
        messages
            .iter()
            .all(|m| m.get("id").is_none() || m.get("method").is_none())
    );
}

#[tokio::test]
async fn mcp_param_headers_mirror_x_mcp_header_arguments() {
    let h = start().await;
    let call = |region: Option<&str>| {
        let arguments = region.map_or_else(|| json!({}), |r| json!({"region": r}));
        request(
            "tools/call",
            json!({"name": "routed", "arguments": arguments}),
        )
    };
    let with = |body: &Value, value: &str| {
        let mut headers = modern_headers(body);
        headers.push(("Mcp-Param-Region".to_owned(), value.to_owned()));
        headers
    };
    // Accepted: literal, base64-wrapped, trimmed, lower-case name, prefix-only literal.
    for (region, header) in [
        ("Hello", "Hello"),
        ("Hello", "=?base64?SGVsbG8=?="),
        ("Hello", "  Hello "),
        ("=?base64?abc", "=?base64?abc"),
        ("abc?=", "abc?="),
    ] {
        let body = call(Some(region));
        let (status, answer) = h.post_with(&body, &with(&body, header)).await;
        assert_eq!(status, StatusCode::OK, "{header}: {answer}");
        assert_eq!(answer["result"]["content"][0]["text"], region);
    }
    let body = call(Some("Hello"));
    let mut lower = modern_headers(&body);
    lower.push(("mcp-param-region".to_owned(), "Hello".to_owned()));
    assert_eq!(h.post_with(&body, &lower).await.0, StatusCode::OK);
    // Refused: bad padding, outside the alphabet, another value, missing, not in the body.
    for (region, header) in [
        (Some("Hello"), Some("=?base64?SGVsbG8?=")),
        (Some("Hello"), Some("=?base64?SGV$bG8=?=")),
        (Some("Hello"), Some("World")),
        (Some("Hello"), Some("hello")),
        (Some("Hello"), None),
        (None, Some("Hello")),
    ] {
        let body = call(region);
        let headers = match header {
            Some(header) => with(&body, header),
            None => modern_headers(&body),
        };
        let (status, answer) = h.post_with(&body, &headers).await;
        assert_error(status, &answer, 400, -32020);
        assert_valid("HeaderMismatchError", &answer);
    }
    // Without the argument and the header, the call is served.
    let body = call(None);
    assert_eq!(h.post(&body).await.0, StatusCode::OK);
}

#[tokio::test]
async fn progress_goes_on_the_requests_own_stream_only_with_a_token() {
    let h = start().await;
    let body = request(
        "tools/call",
        json!({"name": "ctx", "arguments": {"op": "progress"}}),
    );
    let (status, answer) = h.post(&body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(json_text(&answer["result"])["first"], false);
    let mut meta = envelope();
    meta["progressToken"] = json!("p-1");
    let body = request(
        "tools/call",
        json!({"name": "ctx", "arguments": {"op": "progress"}, "_meta": meta}),
    );
    let resp = h.raw(&body, &modern_headers(&body)).await;
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let messages = sse_messages(&resp.text().await.unwrap());
    let progress: Vec<&Value> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 2, "{messages:?}");
    assert!(
        progress
            .iter()
            .all(|m| m["params"]["progressToken"] == "p-1")
    );
    assert_eq!(messages.last().unwrap()["id"], 7);
}

#[tokio::test]
async fn notifications_are_accepted_and_batches_refused() {
    let h = start().await;
    let mut note = request("notifications/cancelled", json!({"requestId": 1}));
    note.as_object_mut().unwrap().remove("id");
    let resp = h.raw(&note, &modern_headers(&note)).await;
    assert_eq!(resp.status(), StatusCode::ACCEPTED);
    let batch = json!([request("tools/list", json!({}))]);
    let headers = vec![("MCP-Protocol-Version".to_owned(), "2026-07-28".to_owned())];
    let (status, answer) = h.post_with(&batch, &headers).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(answer["error"]["code"], -32600);
}

/// A plain tool serving the input schema it is given.
struct Annotated(Value);

impl PlainTool for Annotated {
    fn name(&self) -> &str {
        "annotated"
    }
    fn description(&self) -> &str {
        "Declares x-mcp-header annotations"
    }
    fn input_schema(&self) -> Map<String, Value> {
        ctx_fixture::object(self.0.clone())
    }
    async fn run(&self, _arguments: Map<String, Value>, _ctx: Context) -> CallResult {
        Ok(CallOutput::text("ok"))
    }
}

/// Regression: an `x-mcp-header` annotation that a 2026-07-28 client must reject (dropping the
/// tool) used to be served as declared; it now fails `build()`. The cases are the suite's own
/// (`http-invalid-tool-headers`, conformance 0.2.0-alpha.12).
#[test]
fn an_x_mcp_header_clients_must_reject_fails_build() {
    let build = |properties: Value| {
        Server::builder()
            .plain_tool(Annotated(
                json!({"type": "object", "properties": properties}),
            ))
            .build()
    };
    let valid = json!({
        "region": {"type": "string", "x-mcp-header": "Region"},
        "count": {"type": "integer", "x-mcp-header": "Count"},
        "dry_run": {"type": "boolean", "x-mcp-header": "Dry-Run"}
    });
    assert!(build(valid).is_ok());
    let token = "must be an HTTP field-name token (ASCII letters, digits and !#$%&'*+-.^_`|~)";
    let primitive = "is allowed only on a property of type string, integer or boolean";
    for (header, kind, reason) in [
        (json!(""), "string", "must be a non-empty string"),
        (json!(7), "string", "must be a non-empty string"),
        (json!("My Region"), "string", token),
        (json!("Region:Primary"), "string", token),
        (json!("Région"), "string", token),
        (json!("Region\t1"), "string", token),
        (json!("Data"), "object", primitive),
        (json!("Items"), "array", primitive),
        (json!("Nil"), "null", primitive),
        (json!("Score"), "number", primitive),
    ] {
        let err = build(json!({"value": {"type": kind, "x-mcp-header": header}})).unwrap_err();
        assert_eq!(err.tool(), Some("annotated"));
        match err.problem() {
            wymcp::tool::Problem::InvalidHeaderParam {
                property,
                reason: got,
                ..
            } => {
                assert_eq!(property, "value");
                assert_eq!(*got, reason, "{header}");
            }
            other => panic!("{header}: {other:?}"),
        }
    }
    let spaced = build(json!({"value": {"type": "string", "x-mcp-header": "My Region"}}));
    assert_eq!(
        spaced.unwrap_err().to_string(),
        format!(
            "tool \"annotated\", callback input_schema: property \"value\": x-mcp-header \
             \"My Region\" {token}"
        )
    );
    for second in ["Region", "region"] {
        let twice = json!({
            "field1": {"type": "string", "x-mcp-header": "Region"},
            "field2": {"type": "string", "x-mcp-header": second}
        });
        let err = build(twice).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "tool \"annotated\", callback input_schema: properties \"field1\" and \
                 \"field2\" both declare x-mcp-header \"{second}\" (header names are \
                 case-insensitive)"
            )
        );
    }
}
