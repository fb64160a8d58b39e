//! `ctx.user_state()` over real HTTP with bearer auth: what alice keeps in one era she reads
//! in the other, bob never sees it; the bounds refuse naming themselves; an unauthenticated
//! caller, or a server without a store, has no state.

#![allow(clippy::unwrap_used)]

mod http_harness;

use http_harness::{Http, borrowed, modern_headers};
use serde_json::{Map, Value, json};
use wymcp::Identity;
use wymcp::backend::{Backends, InMemoryUserState, UserStateLimits};
use wymcp::transport::http::{BearerAuth, StreamableHttp};
use wymcp::{CallError, CallOutput, CallResult, Context, PlainTool, Server};

/// `{"op": "set"|"get"|"remove", "key", "value"?}` on the caller's user state.
struct Remember;

impl PlainTool for Remember {
    fn name(&self) -> &str {
        "remember"
    }
    fn description(&self) -> &str {
        "Keeps a value for the caller"
    }
    fn input_schema(&self) -> Map<String, Value> {
        json!({"type": "object", "properties": {
            "op": {"type": "string"}, "key": {"type": "string"}, "value": {}
        }})
        .as_object()
        .cloned()
        .unwrap()
    }
    async fn run(&self, arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let failed = |e: wymcp::user_state::UserStateError| CallError::tool(e.to_string());
        let key = arguments["key"].as_str().unwrap_or_default();
        let state = ctx.user_state();
        let answer = match arguments["op"].as_str() {
            Some("set") => {
                let value = arguments.get("value").cloned().unwrap_or(Value::Null);
                state.set(key, value).await.map_err(failed)?;
                json!("ok")
            }
            Some("remove") => json!(state.remove(key).await.map_err(failed)?),
            _ => state.get(key).await.map_err(failed)?.unwrap_or(Value::Null),
        };
        Ok(CallOutput::text(answer.to_string()))
    }
}

fn server(limits: UserStateLimits) -> Server {
    Server::builder()
        .plain_tool(Remember)
        .backends(Backends::new().user_state(InMemoryUserState::with_limits(limits)))
        .build()
        .unwrap()
}

async fn serve(server: Server) -> Http {
    let auth = BearerAuth::new()
        .token("alice-token", Identity::new("alice"))
        .token("bob-token", Identity::new("bob"));
    Http::serve(StreamableHttp::builder(server).auth(auth)).await
}

/// A 2026-07-28 call of `remember` by `who` (a token, or none): its text, or its error text.
async fn stateless(http: &Http, who: Option<&str>, arguments: Value) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "remember", "arguments": arguments, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}});
    let mut headers = modern_headers(&body);
    if let Some(who) = who {
        headers.push(("authorization".into(), format!("Bearer {who}")));
    }
    let answer = http
        .post_raw(&borrowed(&headers), body.to_string())
        .await
        .json();
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The same call in a session of `who` (initialized with the same token).
async fn in_session(http: &Http, who: &str, arguments: Value) -> String {
    let auth = format!("Bearer {who}");
    let auth = ("authorization", auth.as_str());
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "user-state-test", "version": "1"}}});
    let opened = http.post_raw(&[auth], init.to_string()).await;
    let session = opened.header("mcp-session-id").unwrap().to_owned();
    http.initialized(&session, &[auth]).await;
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "remember", "arguments": arguments}});
    let headers = [
        auth,
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let answer = http.post_raw(&headers, body.to_string()).await.json();
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn a_principal_reads_in_one_era_what_it_kept_in_the_other_and_nobody_else_does() {
    let http = serve(server(UserStateLimits::default())).await;
    let set = json!({"op": "set", "key": "draft", "value": {"title": "Q4"}});
    assert_eq!(stateless(&http, Some("alice-token"), set).await, "\"ok\"");
    let get = json!({"op": "get", "key": "draft"});
    assert_eq!(
        in_session(&http, "alice-token", get.clone()).await,
        r#"{"title":"Q4"}"#
    );
    assert_eq!(
        stateless(&http, Some("bob-token"), get.clone()).await,
        "null"
    );
    let remove = json!({"op": "remove", "key": "draft"});
    assert_eq!(in_session(&http, "alice-token", remove).await, "true");
    assert_eq!(stateless(&http, Some("alice-token"), get).await, "null");
}

#[tokio::test]
async fn the_bounds_refuse_naming_themselves() {
    let mut limits = UserStateLimits::default();
    limits.max_keys = 2;
    limits.max_value_bytes = 32;
    let http = serve(server(limits)).await;
    let set = |key: &str, value: Value| json!({"op": "set", "key": key, "value": value});
    let alice = Some("alice-token");
    assert_eq!(stateless(&http, alice, set("a", json!(1))).await, "\"ok\"");
    assert_eq!(stateless(&http, alice, set("b", json!(2))).await, "\"ok\"");
    assert_eq!(
        stateless(&http, alice, set("c", json!(3))).await,
        "this caller holds 2 user-state keys, the most allowed: remove one first"
    );
    // Replacing a key held is not a new key.
    assert_eq!(stateless(&http, alice, set("a", json!(4))).await, "\"ok\"");
    assert_eq!(
        stateless(&http, alice, set("a", json!("x".repeat(40)))).await,
        "the value takes 42 bytes, over the 32-byte bound of user state"
    );
    assert_eq!(
        stateless(&http, alice, set(&"k".repeat(300), json!(1))).await,
        "a user-state key is 1 to 256 bytes; this one is 300"
    );
}

#[tokio::test]
async fn without_a_principal_or_a_store_there_is_no_state() {
    let anonymous = Http::serve(StreamableHttp::builder(server(UserStateLimits::default()))).await;
    let get = json!({"op": "get", "key": "k"});
    assert_eq!(
        stateless(&anonymous, None, get.clone()).await,
        "user state needs an authenticated caller"
    );
    let bare = Server::builder().plain_tool(Remember).build().unwrap();
    let http = serve(bare).await;
    assert_eq!(
        stateless(&http, Some("alice-token"), get).await,
        "no user state on this server (ServerBuilder::user_state)"
    );
}
