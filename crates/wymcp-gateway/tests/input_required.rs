//! The stateless era's input rounds (MCP 2026-07-28, `input_required`) through the gateway, end
//! to end over HTTP on 127.0.0.1: a wymcp upstream whose tool and prompt ask for input under
//! keys of their own (`user_name`, `greeting`, `client_roots`, `user_context`), the gateway in
//! `tools` mode in front of it, and a downstream speaking 2026-07-28: raw JSON-RPC (what the
//! wire carries, exactly) and wymcp's client with handlers installed. The downstream sees the
//! upstream's keys, all of one upstream round in one round, and its answers reach the
//! upstream under them; the upstream is asked only for what the downstream declares.

#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};
use wymcp::client::Client;
use wymcp::prompt::{GetPromptResult, PromptArguments, PromptError, PromptMessage};
use wymcp::session::{Elicitation, ListRoots, Sampling};
use wymcp::transport::http::{HttpServer, StreamableHttp};
use wymcp::{
    CallError, CallOutput, CallResult, Content, Context, PlainTool, Prompt, ProtocolVersion, Server,
};
use wymcp_gateway::{Expose, Gateway, GatewayConfig, UpstreamConfig};

/// Serves `server` over Streamable HTTP on 127.0.0.1: its `/mcp` URL.
async fn serve_http(server: Server) -> String {
    let http = HttpServer::bind("127.0.0.1:0", StreamableHttp::builder(server))
        .await
        .unwrap();
    let url = format!("http://{}/mcp", http.local_addr().unwrap());
    tokio::spawn(http.run());
    url
}

/// The upstream's tools: `ask_all` asks a name, a greeting and the roots in one round and
/// answers what it got, by key, as JSON; `declared` answers the capabilities its request
/// declared.
struct Ask {
    name: &'static str,
}

fn name_form() -> Elicitation {
    Elicitation::form(
        "What is your name?",
        json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
    )
}

impl PlainTool for Ask {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "asks its client for input"
    }
    fn input_schema(&self) -> Map<String, Value> {
        json!({"type": "object", "properties": {}})
            .as_object()
            .unwrap()
            .clone()
    }
    async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
        if self.name == "declared" {
            let declared = ctx.client_capabilities().cloned().unwrap_or(Value::Null);
            return Ok(CallOutput::text(declared.to_string()));
        }
        let (name, greeting, roots) = tokio::join!(
            ctx.elicit(name_form().key("user_name")),
            ctx.sample(
                Sampling::prompt("Generate a greeting")
                    .max_tokens(50)
                    .key("greeting")
            ),
            ctx.list_roots(ListRoots::new().key("client_roots")),
        );
        let failed = |e| CallError::tool(format!("not answered: {e}"));
        let got = json!({
            "user_name": name.map_err(failed)?,
            "greeting": greeting.map_err(failed)?,
            "client_roots": roots.map_err(failed)?,
        });
        Ok(CallOutput::text(got.to_string()))
    }
}

/// The upstream's prompt `ask_context`: asks the context to use (key `user_context`).
struct AskContext;

impl Prompt for AskContext {
    fn name(&self) -> &str {
        "ask_context"
    }
    async fn get(
        &self,
        _arguments: PromptArguments,
        ctx: Context,
    ) -> Result<GetPromptResult, PromptError> {
        let ask = Elicitation::form(
            "What context should the prompt use?",
            json!({"type": "object", "properties": {"context": {"type": "string"}}}),
        )
        .key("user_context");
        let answer = ctx
            .elicit(ask)
            .await
            .map_err(|e| PromptError::Failed(format!("not answered: {e}")))?;
        Ok(GetPromptResult::new(vec![PromptMessage::user(
            Content::text(answer.to_string()),
        )]))
    }
}

/// The upstream over HTTP, and the gateway in front of it (tools mode, no prefix) over HTTP:
/// the gateway's `/mcp` URL.
async fn gateway() -> String {
    let upstream = Server::builder()
        .name("asking-upstream")
        .plain_tool(Ask { name: "ask_all" })
        .plain_tool(Ask { name: "declared" })
        .prompt(AskContext)
        .build()
        .unwrap();
    let upstream_url = serve_http(upstream).await;
    let config = UpstreamConfig::http("asker", &upstream_url)
        .expose(Expose::Tools)
        .prefix("")
        .timeout(Duration::from_secs(20));
    let gateway = Gateway::start(GatewayConfig::new().upstream(config)).await;
    let server = gateway
        .register(Server::builder().name("input-gateway"))
        .build()
        .unwrap();
    serve_http(server).await
}

/// One raw stateless request to `url` (`name` in `Mcp-Name`), declaring sampling, elicitation
/// and roots: the JSON-RPC answer (from a JSON body or the SSE stream's last message).
async fn post(url: &str, method: &str, name: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"sampling": {}, "elicitation": {}, "roots": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "raw-downstream", "version": "1"},
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let answer = reqwest::Client::new()
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", method)
        .header("Mcp-Name", name)
        .json(&body)
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let sse = answer
        .headers()
        .get("content-type")
        .is_some_and(|v| v.to_str().unwrap().starts_with("text/event-stream"));
    let text = answer.text().await.unwrap();
    if !sse {
        return serde_json::from_str(&text).unwrap();
    }
    let answers: Vec<Value> = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .filter(|message| message.get("id").is_some())
        .collect();
    answers.last().cloned().unwrap()
}

/// The answers the downstream gives, under the upstream's keys.
fn answers() -> Value {
    json!({
        "user_name": {"action": "accept", "content": {"name": "Alice"}},
        "greeting": {"role": "assistant", "content": {"type": "text", "text": "Hello there!"},
                     "model": "test-model", "stopReason": "endTurn"},
        "client_roots": {"roots": [{"uri": "file:///test/root", "name": "Test Root"}]},
    })
}

#[tokio::test]
async fn a_stateless_downstream_sees_the_upstreams_keys_and_its_answers_reach_the_upstream() {
    let url = gateway().await;

    // Round 1: the upstream's three requests, under its keys, in one round.
    let first = post(
        &url,
        "tools/call",
        "ask_all",
        json!({"name": "ask_all", "arguments": {}}),
    )
    .await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    assert_eq!(
        result["inputRequests"],
        json!({
            "user_name": {"method": "elicitation/create", "params": {
                "message": "What is your name?",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}},
                                    "required": ["name"]}}},
            "greeting": {"method": "sampling/createMessage", "params": {
                "messages": [{"role": "user", "content": {"type": "text", "text": "Generate a greeting"}}],
                "maxTokens": 50}},
            "client_roots": {"method": "roots/list", "params": {}},
        }),
        "{first}"
    );
    let state = result["requestState"].as_str().unwrap();

    // Round 2: the answers under those keys reach the upstream's tool, which echoes them.
    let second = post(
        &url,
        "tools/call",
        "ask_all",
        json!({"name": "ask_all", "arguments": {}, "inputResponses": answers(), "requestState": state}),
    )
    .await;
    let result = &second["result"];
    assert_eq!(
        result.get("resultType").and_then(Value::as_str),
        Some("complete"),
        "{second}"
    );
    assert_eq!(result["isError"], json!(false), "{second}");
    let got: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(got, answers());

    // prompts/get: the upstream's key, and its answer back.
    let first = post(
        &url,
        "prompts/get",
        "ask_context",
        json!({"name": "ask_context", "arguments": {}}),
    )
    .await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    assert_eq!(
        result["inputRequests"],
        json!({"user_context": {"method": "elicitation/create", "params": {
            "message": "What context should the prompt use?",
            "requestedSchema": {"type": "object", "properties": {"context": {"type": "string"}}}}}}),
        "{first}"
    );
    let context = json!({"action": "accept", "content": {"context": "a test context"}});
    let second = post(
        &url,
        "prompts/get",
        "ask_context",
        json!({"name": "ask_context", "arguments": {},
               "inputResponses": {"user_context": context},
               "requestState": result["requestState"]}),
    )
    .await;
    assert_eq!(
        second["result"]["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": context.to_string()}}]),
        "{second}"
    );
}

#[tokio::test]
async fn wymcps_client_downstream_answers_under_the_upstreams_keys_and_declares_its_own_capabilities()
 {
    let url = gateway().await;
    let keys = Arc::new(Mutex::new(Vec::new()));
    let record = |kind: &'static str| {
        let keys = Arc::clone(&keys);
        move || {
            let key = wymcp::client::related_input_key();
            keys.lock()
                .unwrap()
                .push(format!("{kind}:{}", key.unwrap_or_default()));
        }
    };
    let (on_elicit, on_sample, on_roots) =
        (record("elicitation"), record("sampling"), record("roots"));
    let client =
        Client::builder(&url)
            .versions([ProtocolVersion::V2026_07_28])
            .timeout(Duration::from_secs(30))
            .on_elicitation(move |params| {
                on_elicit();
                let asked = params["message"].as_str().unwrap_or_default().to_owned();
                async move {
                    Ok(json!({"action": "accept", "content": {"name": "Ada", "asked": asked}}))
                }
            })
            .on_sampling(move |_| {
                on_sample();
                async {
                    Ok(
                        json!({"role": "assistant", "content": {"type": "text", "text": "Hi"},
                          "model": "m", "stopReason": "endTurn"}),
                    )
                }
            })
            .on_roots(move |_| {
                on_roots();
                async { Ok(json!({"roots": [{"uri": "file:///down", "name": "down"}]})) }
            })
            .connect()
            .await
            .unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);

    let result = client.call_tool("ask_all", json!({})).await.unwrap();
    assert!(!result.is_error(), "{}", result.text());
    let got: Value = serde_json::from_str(&result.text()).unwrap();
    assert_eq!(
        got,
        json!({
            "user_name": {"action": "accept", "content": {"name": "Ada", "asked": "What is your name?"}},
            "greeting": {"role": "assistant", "content": {"type": "text", "text": "Hi"},
                         "model": "m", "stopReason": "endTurn"},
            "client_roots": {"roots": [{"uri": "file:///down", "name": "down"}]},
        })
    );
    let mut seen = keys.lock().unwrap().clone();
    seen.sort();
    assert_eq!(
        seen,
        [
            "elicitation:user_name",
            "roots:client_roots",
            "sampling:greeting"
        ],
        "one round, under the upstream's keys"
    );

    let prompt = client.get_prompt("ask_context", json!({})).await.unwrap();
    assert_eq!(
        prompt["messages"][0]["content"]["text"],
        json!({"action": "accept", "content": {"name": "Ada", "asked": "What context should the prompt use?"}})
            .to_string()
    );

    // The upstream is told what the downstream declares, not what the gateway could relay.
    let narrow = Client::builder(&url)
        .versions([ProtocolVersion::V2026_07_28])
        .on_sampling(|_| async { Ok(json!({})) })
        .connect()
        .await
        .unwrap();
    let declared = narrow.call_tool("declared", json!({})).await.unwrap();
    assert_eq!(declared.text(), json!({"sampling": {}}).to_string());
}
