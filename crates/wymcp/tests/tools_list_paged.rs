//! `tools/list` paged by `Limits::tools_per_page`, over real transports: by default one page
//! with `cursor` ignored and no `nextCursor` (LIST-11, both eras); with a page size, 1,002
//! tools read page by page in both eras and over stdio, each tool once and in the order of the
//! full list, each page a valid `ListToolsResult` of the official schema; a forged cursor and a
//! cursor made stale by a session's runtime tool refused `-32602` with their exact texts
//! (wymcp's client following them: tests/client.rs needs the `client` feature; the gateway's
//! test, crates/wymcp-gateway/tests/paged_upstream.rs, lists through it.)

mod http_harness;
mod mcp_schema;

use reqwest::StatusCode;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio_util::sync::CancellationToken;
use wymcp::transport::http::StreamableHttp;
use wymcp::transport::stdio::{StdioConfig, serve_io};
use wymcp::{
    ActionResult, ActionSchema, ActionTool, Actions, CallOutput, CallResult, Context, Data, Limits,
    PlainTool, ProtocolVersion, Reply, Server,
};

use http_harness::{Http, borrowed, modern_headers};

/// Configured tools besides `help`: 1,002 listed in all.
const TOOLS: usize = 1_001;
const PER_PAGE: usize = 50;
/// More pages than 1,002 tools in pages of 50 take: every loop reading pages stops there.
const MOST_PAGES: usize = 1_002 / PER_PAGE + 2;

const INVALID: &str = "Invalid cursor: pass the nextCursor of a previous tools/list result, or no cursor for the first page";
const STALE: &str = "Stale cursor: the tool list changed since this nextCursor was given; list again without a cursor";

/// A plain tool of the catalogue; `add_runtime` registers the runtime tool [`Runtime`] in the
/// caller's session.
struct Numbered(String);

impl PlainTool for Numbered {
    fn name(&self) -> &str {
        &self.0
    }
    fn description(&self) -> &str {
        "One of many"
    }
    fn input_schema(&self) -> Map<String, Value> {
        let mut schema = Map::new();
        schema.insert("type".into(), Value::String("object".into()));
        schema
    }
    async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
        if self.0 == "add_runtime" {
            let session = ctx.session().expect("a session-era call");
            session.register_tool(Runtime).expect("registers");
        }
        Ok(CallOutput::text("ran"))
    }
}

/// The runtime tool `add_runtime` registers: listed first in its session.
struct Runtime;

impl ActionTool for Runtime {
    fn name(&self) -> &str {
        "runtime"
    }
    fn description(&self) -> &str {
        "Registered at runtime"
    }
    fn actions(&self) -> Actions {
        Actions::new().action("get", ActionSchema::new("Get it"))
    }
    async fn run_action(&self, _action: &str, _data: Data, _ctx: Context) -> ActionResult {
        Ok(Reply::new(json!({})))
    }
}

fn server(limits: Limits) -> Server {
    let mut builder = Server::builder().name("many").limits(limits);
    builder = builder.plain_tool(Numbered("add_runtime".into()));
    for i in 1..TOOLS {
        builder = builder.plain_tool(Numbered(format!("tool_{i:04}")));
    }
    builder.build().expect("builds")
}

fn paged() -> Server {
    server(Limits::default().tools_per_page(PER_PAGE))
}

/// The names of the full, unpaged list.
fn full_names(server: &Server, version: ProtocolVersion) -> Vec<String> {
    names(&server.list_tools(version))
}

fn names(result: &Value) -> Vec<String> {
    let tools = result["tools"].as_array().expect("tools is an array");
    let names = tools.iter().map(|t| t["name"].as_str().expect("a name"));
    names.map(str::to_owned).collect()
}

fn list(id: usize, cursor: Option<&str>) -> Value {
    let params = cursor.map_or_else(|| json!({}), |c| json!({ "cursor": c }));
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params})
}

/// One era of HTTP: posts `tools/list` and answers the JSON-RPC response.
enum Era {
    Session(String),
    Stateless,
}

impl Era {
    fn version(&self) -> ProtocolVersion {
        match self {
            Era::Session(_) => ProtocolVersion::V2025_11_25,
            Era::Stateless => ProtocolVersion::V2026_07_28,
        }
    }

    async fn list(&self, http: &Http, id: usize, cursor: Option<&str>) -> Value {
        let answer = match self {
            Era::Session(sid) => {
                let resp = http.session_post(sid, &list(id, cursor)).await;
                http_harness::Answer::read(resp).await
            }
            Era::Stateless => {
                let params = cursor.map_or_else(|| json!({}), |c| json!({ "cursor": c }));
                let body = http_harness::request(json!(id), "tools/list", params);
                let headers = modern_headers(&body);
                http.post_raw(&borrowed(&headers), body.to_string()).await
            }
        };
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
        answer.json()
    }
}

async fn eras(http: &Http) -> [Era; 2] {
    [
        Era::Session(http.open_session(json!({})).await),
        Era::Stateless,
    ]
}

/// Reads every page from the first, checking each against the official schema: the names in
/// the order served, and the number of pages.
async fn read_pages(http: &Http, era: &Era) -> (Vec<String>, usize) {
    let validator = mcp_schema::validator(era.version(), "ListToolsResult");
    let (mut all, mut cursor) = (Vec::new(), None::<String>);
    for page in 1..=MOST_PAGES {
        let answer = era.list(http, page, cursor.as_deref()).await;
        let result = &answer["result"];
        let found = mcp_schema::problems(&validator, result);
        assert!(found.is_empty(), "page {page}: {found:?}");
        let served = names(result);
        assert!(
            served.len() <= PER_PAGE,
            "page {page}: {} tools",
            served.len()
        );
        all.extend(served);
        match result.get("nextCursor") {
            None => return (all, page),
            Some(next) => cursor = Some(next.as_str().expect("a string cursor").to_owned()),
        }
    }
    panic!("more than {MOST_PAGES} pages");
}

#[tokio::test]
async fn by_default_one_page_without_next_cursor_and_the_cursor_ignored_in_both_eras() {
    let server = server(Limits::default());
    let expected = full_names(&server, ProtocolVersion::V2025_11_25);
    assert_eq!(expected.len(), TOOLS + 1);
    let http = Http::serve(StreamableHttp::builder(server)).await;
    for era in eras(&http).await {
        for cursor in [None, Some("x"), Some("dG9vbHM6NTA6dG9vbF8wMDQ5")] {
            let answer = era.list(&http, 1, cursor).await;
            assert_eq!(names(&answer["result"]), expected, "{cursor:?}");
            assert!(answer["result"].get("nextCursor").is_none(), "{answer}");
        }
    }
}

#[tokio::test]
async fn pages_of_50_serve_every_tool_once_in_the_full_order_in_both_eras() {
    let server = paged();
    let expected = full_names(&server, ProtocolVersion::V2025_11_25);
    let http = Http::serve(StreamableHttp::builder(server)).await;
    for era in eras(&http).await {
        let (served, pages) = read_pages(&http, &era).await;
        assert_eq!(pages, 21, "1,002 tools in pages of 50");
        assert_eq!(served, expected, "{:?}", era.version());
    }
}

#[tokio::test]
async fn a_forged_cursor_is_refused_naming_it_in_both_eras() {
    let http = Http::serve(StreamableHttp::builder(paged())).await;
    let forged = [
        "x",
        "dG9vbHM6",                    // "tools:"
        "cHJvbXB0czo1MDp0b29sXzAwNDk", // "prompts:50:tool_0049"
        &"A".repeat(10_000),
    ];
    for era in eras(&http).await {
        for cursor in forged {
            let answer = era.list(&http, 3, Some(cursor)).await;
            assert_eq!(answer["error"]["code"], -32602, "{answer}");
            assert_eq!(answer["error"]["data"]["reason"], INVALID, "{answer}");
        }
        let wrong =
            json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"cursor": 7}});
        if let Era::Session(sid) = &era {
            let answer = http_harness::Answer::read(http.session_post(sid, &wrong).await).await;
            assert_eq!(
                answer.json()["error"]["data"]["reason"],
                "Invalid 'cursor' in params: expected a string"
            );
        }
    }
}

/// A cursor whose place moved (a runtime tool registered in the session lists first) is stale:
/// refused, and the list read again from the first page holds the runtime tool.
#[tokio::test]
async fn a_cursor_made_stale_by_a_runtime_tool_is_refused_and_a_new_listing_sees_it() {
    let server = paged();
    let mut expected = full_names(&server, ProtocolVersion::V2025_11_25);
    let http = Http::serve(StreamableHttp::builder(server)).await;
    let era = Era::Session(http.open_session(json!({})).await);
    let Era::Session(sid) = &era else {
        unreachable!()
    };
    let first = era.list(&http, 1, None).await;
    let next = first["result"]["nextCursor"]
        .as_str()
        .expect("more")
        .to_owned();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "add_runtime", "arguments": {}}});
    let called = http_harness::Answer::read(http.session_post(sid, &call).await).await;
    assert!(called.text.contains("\"ran\""), "{}", called.text);
    let answer = era.list(&http, 3, Some(&next)).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(answer["error"]["data"]["reason"], STALE, "{answer}");
    let (served, _) = read_pages(&http, &era).await;
    expected.insert(0, "runtime".to_owned());
    assert_eq!(served, expected);
}

#[tokio::test]
async fn pages_over_stdio_serve_every_tool_once_in_the_full_order() {
    let server = paged();
    let expected = full_names(&server, ProtocolVersion::V2025_11_25);
    let (client, pipe) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(pipe);
    let (client_read, mut write) = tokio::io::split(client);
    let cancel = CancellationToken::new();
    let served = tokio::spawn(serve_io(
        server,
        StdioConfig::default(),
        server_read,
        server_write,
        cancel.clone(),
        |_| {},
    ));
    let mut lines = BufReader::new(client_read).lines();
    let mut send = async |message: Value| {
        write
            .write_all(format!("{message}\n").as_bytes())
            .await
            .expect("writes");
        let line = lines.next_line().await.expect("reads").expect("a line");
        serde_json::from_str::<Value>(&line).expect("JSON")
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}});
    assert!(send(init).await["result"].is_object());
    let (mut all, mut cursor) = (Vec::new(), None::<String>);
    for page in 1..=MOST_PAGES {
        let answer = send(list(page, cursor.as_deref())).await;
        mcp_schema::assert_valid(
            ProtocolVersion::V2025_11_25,
            "ListToolsResult",
            &answer["result"],
        );
        all.extend(names(&answer["result"]));
        cursor = answer["result"]["nextCursor"].as_str().map(str::to_owned);
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(all, expected);
    let answer = send(list(99, Some("x"))).await;
    assert_eq!(answer["error"]["data"]["reason"], INVALID, "{answer}");
    cancel.cancel();
    let _ = served.await;
}
