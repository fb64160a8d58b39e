//! Multi round-trip requests (SEP-2322) over real HTTP on 127.0.0.1 port 0: `input_required`
//! and the retry for tools, prompts and resources; several inputs in one round; three rounds;
//! missing, extra and malformed answers; tampered, expired, foreign and rotated states; the
//! client's capabilities; the state's size bound; and one eliciting tool served the same in
//! both eras. Every `input_required` is validated against the official 2026-07-28 schema.

#![allow(clippy::unwrap_used, missing_docs)]

mod http_harness;
mod mcp_schema;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use http_harness::{Http, Sse, borrowed, modern_headers};
use reqwest::StatusCode;
use serde_json::{Map, Value, json};
use wymcp::Identity;
use wymcp::Prompt;
use wymcp::ResourceTemplate;
use wymcp::mrtr::RequestStateKeys;
use wymcp::prompt::{GetPromptResult, PromptArguments, PromptError, PromptMessage};
use wymcp::resource::{ReadResource, ResourceContents, ResourceError, Variables};
use wymcp::session::{ClientRequestError, Elicitation, ListRoots, Sampling};
use wymcp::transport::http::{BearerAuth, StreamableHttp};
use wymcp::{
    CallError, CallOutput, CallResult, Content, Context, PlainTool, ProtocolVersion, Server,
    ServerBuilder,
};

const V2026: ProtocolVersion = ProtocolVersion::V2026_07_28;

fn name_form(message: &str) -> Elicitation {
    Elicitation::form(
        message,
        json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
    )
}

fn failed(err: ClientRequestError) -> CallError {
    CallError::tool(format!("asking failed: {err}"))
}

/// What a test tool does.
#[derive(Clone, Copy)]
enum Does {
    /// Elicits a name (key `user_name`) and greets: the tool served in both eras.
    Greet,
    /// Elicits, samples and lists roots at once, under order-based keys.
    AskAll,
    /// Three elicitations one after the other (keys `step1`..`step3`).
    ThreeSteps,
    /// Does "expensive work" once, carried in its request state, then elicits.
    Stateful,
    /// Sets a request state bigger than the bound allows.
    BigState,
    /// Asks only what the request declares.
    Polite,
}

struct Tool {
    name: &'static str,
    does: Does,
    work: Arc<AtomicUsize>,
}

impl PlainTool for Tool {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "An MRTR test tool"
    }
    fn input_schema(&self) -> Map<String, Value> {
        json!({"type": "object"}).as_object().cloned().unwrap()
    }
    async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let body = match self.does {
            Does::Greet => {
                let answer = ctx
                    .elicit(name_form("What is your name?").key("user_name"))
                    .await
                    .map_err(failed)?;
                json!(format!(
                    "Hello, {}!",
                    answer["content"]["name"].as_str().unwrap_or("?")
                ))
            }
            Does::AskAll => {
                let (e, s, r) = tokio::join!(
                    ctx.elicit(name_form("Name?")),
                    ctx.sample(Sampling::prompt("Greet").max_tokens(20)),
                    ctx.list_roots(ListRoots::new()),
                );
                json!({"elicit": e.map_err(failed)?, "sample": s.map_err(failed)?,
                       "roots": r.map_err(failed)?})
            }
            Does::ThreeSteps => {
                let mut names = Vec::new();
                for step in ["step1", "step2", "step3"] {
                    let answer = ctx
                        .elicit(name_form(step).key(step))
                        .await
                        .map_err(failed)?;
                    names.push(answer["content"]["name"].clone());
                }
                json!(names)
            }
            Does::Stateful => {
                let prepared = match ctx.request_state() {
                    Some(prepared) => prepared,
                    None => {
                        let n = self.work.fetch_add(1, Ordering::SeqCst) + 1;
                        let prepared = json!({"draft": n});
                        ctx.set_request_state(prepared.clone()).map_err(failed)?;
                        prepared
                    }
                };
                let answer = ctx
                    .elicit(name_form("Name?").key("who"))
                    .await
                    .map_err(failed)?;
                json!({"prepared": prepared, "who": answer["content"]["name"]})
            }
            Does::BigState => match ctx.set_request_state(json!("x".repeat(4096))) {
                Ok(()) => json!("stored"),
                Err(err) => json!({"refused": err.to_string(),
                    "too_large": matches!(err, ClientRequestError::RequestStateTooLarge { .. })}),
            },
            Does::Polite => {
                let elicit = async {
                    match ctx.client_declares("elicitation") {
                        true => Some(ctx.elicit(name_form("Name?").key("name")).await),
                        false => None,
                    }
                };
                let sample = async {
                    match ctx.client_declares("sampling") {
                        true => Some(ctx.sample(Sampling::prompt("Hi").key("hi")).await),
                        false => None,
                    }
                };
                let (e, s) = tokio::join!(elicit, sample);
                json!({"elicit": e.transpose().map_err(failed)?,
                       "sample": s.transpose().map_err(failed)?})
            }
        };
        Ok(CallOutput::json(body))
    }
}

/// A prompt that asks its context.
struct AskPrompt;

impl Prompt for AskPrompt {
    fn name(&self) -> &str {
        "ask_prompt"
    }
    async fn get(
        &self,
        _arguments: PromptArguments,
        ctx: Context,
    ) -> Result<GetPromptResult, PromptError> {
        let ask = Elicitation::form(
            "Context?",
            json!({"type": "object",
            "properties": {"context": {"type": "string"}}}),
        )
        .key("user_context");
        let answer = ctx
            .elicit(ask)
            .await
            .map_err(|e| PromptError::Failed(e.to_string()))?;
        Ok(GetPromptResult::new(vec![PromptMessage::user(
            Content::text(format!(
                "context: {}",
                answer["content"]["context"].as_str().unwrap_or("?")
            )),
        )]))
    }
}

/// A resource template whose reader asks the client's roots.
struct RootsReader;

impl ReadResource for RootsReader {
    async fn read(
        &self,
        uri: &str,
        _vars: Variables,
        ctx: Context,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        let roots = ctx
            .list_roots(ListRoots::new().key("roots"))
            .await
            .map_err(|e| ResourceError::Failed(e.to_string()))?;
        Ok(vec![ResourceContents::text(
            uri,
            roots["roots"].to_string(),
        )])
    }
}

fn server_with(configure: impl FnOnce(ServerBuilder) -> ServerBuilder) -> Server {
    let work = Arc::new(AtomicUsize::new(0));
    let mut builder = Server::builder().name("mrtr-test").version("1.0.0");
    for (name, does) in [
        ("greet", Does::Greet),
        ("ask_all", Does::AskAll),
        ("three_steps", Does::ThreeSteps),
        ("stateful", Does::Stateful),
        ("big_state", Does::BigState),
        ("polite", Does::Polite),
    ] {
        builder = builder.plain_tool(Tool {
            name,
            does,
            work: work.clone(),
        });
    }
    configure(
        builder
            .prompt(AskPrompt)
            .resource_template(ResourceTemplate::new(
                "test://roots/{id}",
                "roots",
                RootsReader,
            )),
    )
    .build()
    .unwrap()
}

struct Harness {
    http: Http,
    bearer: Option<&'static str>,
}

http_harness::serves_http!(Harness);

async fn start_server(server: Server) -> Harness {
    start_http(StreamableHttp::builder(server)).await
}

async fn start_http(builder: StreamableHttp) -> Harness {
    Harness {
        http: Http::serve(builder).await,
        bearer: None,
    }
}

async fn start() -> Harness {
    start_server(server_with(|b| b)).await
}

fn all_capabilities() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {}})
}

/// A modern request of `method` with `params`, declaring `capabilities`.
fn request(method: &str, mut params: Value, capabilities: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    });
    json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
}

fn call(tool: &str) -> Value {
    request(
        "tools/call",
        json!({"name": tool, "arguments": {}}),
        all_capabilities(),
    )
}

/// `first` retried with `responses` and (when given) `state`.
fn retry(first: &Value, responses: Value, state: Option<&Value>) -> Value {
    let mut body = first.clone();
    body["id"] = json!(8);
    body["params"]["inputResponses"] = responses;
    if let Some(state) = state {
        body["params"]["requestState"] = state.clone();
    }
    body
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

/// The answer to the elicitation of a name under `key`.
fn name_answer(key: &str, name: &str) -> Value {
    json!({key: accept(json!({"name": name}))})
}

/// `first` retried with `responses` and the state `asked` carries.
fn answered(first: &Value, asked: &Value, responses: Value) -> Value {
    retry(first, responses, Some(&asked["requestState"]))
}

impl Harness {
    /// Posts a modern request with the headers its body calls for: status and body.
    async fn post(&self, body: &Value) -> (StatusCode, Value) {
        let headers = modern_headers(body);
        let mut headers = borrowed(&headers);
        let bearer = self.bearer.map(|token| format!("Bearer {token}"));
        headers.extend(bearer.as_deref().map(|b| ("authorization", b)));
        let answer = self.post_raw(&headers, body.to_string()).await;
        (answer.status, answer.json())
    }

    /// Posts `first` and expects an `input_required` result: `first` and the result.
    async fn ask(&self, first: Value) -> (Value, Value) {
        let asked = self.input_required(&first).await;
        (first, asked)
    }

    /// Posts and expects an `input_required` result (valid per the schema): the result.
    async fn input_required(&self, body: &Value) -> Value {
        let (status, answer) = self.post(body).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        let result = &answer["result"];
        assert_eq!(result["resultType"], "input_required", "{answer}");
        assert!(result["requestState"].is_string(), "{answer}");
        assert!(result.get("ttlMs").is_none(), "no cache hint: {answer}");
        valid(response_definition(body), &answer);
        valid("InputRequiredResult", result);
        result.clone()
    }

    /// Posts and expects a complete result: the result.
    async fn complete(&self, body: &Value) -> Value {
        let (status, answer) = self.post(body).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        let result = &answer["result"];
        assert_eq!(result["resultType"], "complete", "{answer}");
        valid(response_definition(body), &answer);
        result.clone()
    }

    /// Posts and expects `-32602` `invalid_request_state`, with HTTP 200.
    async fn invalid_state(&self, body: &Value) -> Value {
        let (status, answer) = self.post(body).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        assert_eq!(answer["error"]["data"]["reason"], "invalid_request_state");
        assert_eq!(answer["id"], body["id"]);
        valid("InvalidParamsError", &answer["error"]);
        answer
    }
}

fn response_definition(body: &Value) -> &'static str {
    match body["method"].as_str() {
        Some("prompts/get") => "GetPromptResultResponse",
        Some("resources/read") => "ReadResourceResultResponse",
        _ => "CallToolResultResponse",
    }
}

fn valid(definition: &str, value: &Value) {
    mcp_schema::assert_valid(V2026, definition, value);
}

/// The JSON a tool answered.
fn tool_json(result: &Value) -> Value {
    serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
}

fn keys(result: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = result["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys
}

#[tokio::test]
async fn a_single_elicitation_is_asked_then_answered_on_retry() {
    let h = start().await;
    let (first, asked) = h.ask(call("greet")).await;
    assert_eq!(keys(&asked), ["user_name"]);
    assert_eq!(
        asked["inputRequests"]["user_name"],
        json!({"method": "elicitation/create", "params": {
            "message": "What is your name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}},
                                "required": ["name"]}}})
    );
    assert!(asked["requestState"].as_str().unwrap().starts_with("v2."));
    let again = answered(&first, &asked, name_answer("user_name", "Ada"));
    valid("CallToolRequest", &again);
    let done = h.complete(&again).await;
    assert_eq!(tool_json(&done), "Hello, Ada!");
}

#[tokio::test]
async fn requests_awaited_together_are_asked_in_one_round_under_order_based_keys() {
    let h = start().await;
    let (first, asked) = h.ask(call("ask_all")).await;
    assert_eq!(keys(&asked), ["elicitation-1", "roots-1", "sampling-1"]);
    assert_eq!(
        asked["inputRequests"]["roots-1"],
        json!({"method": "roots/list", "params": {}})
    );
    assert_eq!(
        asked["inputRequests"]["sampling-1"]["method"],
        "sampling/createMessage"
    );
    let sampled = json!({"role": "assistant", "content": {"type": "text", "text": "hi"},
                         "model": "m", "stopReason": "endTurn"});
    let roots = json!({"roots": [{"uri": "file:///work", "name": "work"}]});
    let responses = json!({"elicitation-1": accept(json!({"name": "Ada"})),
                           "sampling-1": sampled, "roots-1": roots});
    let done = h.complete(&answered(&first, &asked, responses)).await;
    assert_eq!(
        tool_json(&done),
        json!({"elicit": accept(json!({"name": "Ada"})), "sample": sampled, "roots": roots})
    );
}

#[tokio::test]
async fn three_rounds_carry_every_answer_and_each_state_differs() {
    let h = start().await;
    let first = call("three_steps");
    let mut states = Vec::new();
    let mut asked = h.input_required(&first).await;
    for (step, name) in [("step1", "Ada"), ("step2", "Bob")] {
        assert_eq!(keys(&asked), [step]);
        states.push(asked["requestState"].clone());
        // Only this round's answer travels: the earlier ones are in the state.
        let body = answered(&first, &asked, name_answer(step, name));
        asked = h.input_required(&body).await;
    }
    assert_eq!(keys(&asked), ["step3"]);
    states.push(asked["requestState"].clone());
    assert_ne!(states[0], states[1]);
    assert_ne!(states[1], states[2]);
    assert_ne!(states[0], states[2]);
    let body = answered(&first, &asked, name_answer("step3", "Cy"));
    assert_eq!(
        tool_json(&h.complete(&body).await),
        json!(["Ada", "Bob", "Cy"])
    );
}

#[tokio::test]
async fn a_missing_or_wrong_key_is_asked_again() {
    let h = start().await;
    let (first, asked) = h.ask(call("greet")).await;
    let wrong = answered(&first, &asked, name_answer("wrong_key", "Ada"));
    let again = h.input_required(&wrong).await;
    assert_eq!(keys(&again), ["user_name"]);
    assert_ne!(again["requestState"], asked["requestState"]);
    let empty = answered(&first, &again, json!({}));
    assert_eq!(keys(&h.input_required(&empty).await), ["user_name"]);
    // Without any state, a wrong key is asked again too.
    let stateless = retry(&first, json!({"wrong_key": accept(json!({}))}), None);
    assert_eq!(keys(&h.input_required(&stateless).await), ["user_name"]);
}

#[tokio::test]
async fn extra_keys_are_ignored() {
    let h = start().await;
    let (first, asked) = h.ask(call("greet")).await;
    let responses = json!({"user_name": accept(json!({"name": "Ada"})),
                           "unknown": accept(json!({"x": 1})), "other": 5});
    let done = h
        .complete(&answered(&first, &asked, responses.clone()))
        .await;
    assert_eq!(tool_json(&done), "Hello, Ada!");
    // Also when the client sends answers without a state.
    let done = h.complete(&retry(&first, responses, None)).await;
    assert_eq!(tool_json(&done), "Hello, Ada!");
}

#[tokio::test]
async fn malformed_input_responses_never_complete_the_call() {
    let h = start().await;
    let (first, asked) = h.ask(call("greet")).await;
    let state = Some(&asked["requestState"]);
    for malformed in [json!(12345), json!(null), json!("text"), json!([1])] {
        let (status, answer) = h.post(&retry(&first, malformed.clone(), state)).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        assert_eq!(answer["error"]["code"], -32602, "{malformed}: {answer}");
        assert_eq!(answer["error"]["data"]["reason"], "invalid_input_responses");
    }
    // An answer of the wrong shape is asked again.
    for answer in [
        json!(12345),
        json!(null),
        json!({"action": "maybe"}),
        json!({"action": "accept", "content": "Ada"}),
    ] {
        let body = retry(&first, json!({ "user_name": answer }), state);
        assert_eq!(
            keys(&h.input_required(&body).await),
            ["user_name"],
            "{answer}"
        );
    }
}

#[tokio::test]
async fn a_tampered_state_is_refused() {
    let h = start().await;
    let (first, asked) = h.ask(call("greet")).await;
    let sealed = asked["requestState"].as_str().unwrap();
    let answer = json!({"user_name": accept(json!({"name": "Ada"}))});
    let tampered = json!(format!("{sealed}-TAMPERED"));
    let refused = h
        .invalid_state(&retry(&first, answer.clone(), Some(&tampered)))
        .await;
    assert_eq!(
        refused["error"]["message"],
        "Invalid requestState: its integrity check failed"
    );
    // One character of the payload changed.
    let mut bytes = sealed.as_bytes().to_vec();
    bytes[10] = if bytes[10] == b'A' { b'B' } else { b'A' };
    let flipped = json!(String::from_utf8(bytes).unwrap());
    h.invalid_state(&retry(&first, answer.clone(), Some(&flipped)))
        .await;
    for junk in [json!(""), json!("v1."), json!(5), json!({"a": 1})] {
        h.invalid_state(&retry(&first, answer.clone(), Some(&junk)))
            .await;
    }
}

#[tokio::test]
async fn an_expired_state_is_refused() {
    // A zero lifetime: every state has expired by the time it comes back.
    let h = start_server(server_with(|b| b.request_state_lifetime(Duration::ZERO))).await;
    let (first, asked) = h.ask(call("greet")).await;
    let body = answered(&first, &asked, name_answer("user_name", "Ada"));
    let refused = h.invalid_state(&body).await;
    assert_eq!(
        refused["error"]["message"],
        "Invalid requestState: it has expired"
    );
}

#[tokio::test]
async fn a_state_cannot_be_replayed_into_another_call() {
    let h = start().await;
    let (first, asked) = h.ask(call("greet")).await;
    let state = Some(&asked["requestState"]);
    let answer = json!({"user_name": accept(json!({"name": "Ada"}))});
    // Another tool.
    let refused = h
        .invalid_state(&retry(&call("three_steps"), answer.clone(), state))
        .await;
    assert_eq!(
        refused["error"]["message"],
        "Invalid requestState: it was issued for another request"
    );
    // The same tool with other arguments.
    let mut other = first.clone();
    other["params"]["arguments"] = json!({"x": 1});
    h.invalid_state(&retry(&other, answer.clone(), state)).await;
    // Another method.
    let prompt = request(
        "prompts/get",
        json!({"name": "ask_prompt"}),
        all_capabilities(),
    );
    h.invalid_state(&retry(&prompt, answer, state)).await;
}

/// The first request's body as the client wrote it (keys out of order, spaces): the state
/// is bound to the arguments it carries, read again from that body when the state is issued,
/// and a retry sending the same arguments otherwise written is the same request.
#[tokio::test]
async fn a_state_is_bound_to_the_arguments_however_they_were_written() {
    let h = start().await;
    let written = r#"{ "params": { "arguments": { "b": [1, 2], "a": { "y": "s", "x": 1 } },
        "name": "greet", "_meta": { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {},
        "roots": {}} } }, "method": "tools/call", "id": 7, "jsonrpc": "2.0" }"#;
    let first: Value = serde_json::from_str(written).unwrap();
    assert_eq!(first["params"]["_meta"], call("greet")["params"]["_meta"]);
    let headers = modern_headers(&first);
    let answer = h.post_raw(&borrowed(&headers), written.to_owned()).await;
    assert_eq!(answer.status, StatusCode::OK);
    let asked = answer.json()["result"].clone();
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    // The same arguments, serialized with sorted keys and no spaces: answered.
    let again = answered(&first, &asked, name_answer("user_name", "Ada"));
    let done = h.complete(&again).await;
    assert_eq!(tool_json(&done), "Hello, Ada!");
    // Another value: another request.
    let mut other = first.clone();
    other["params"]["arguments"]["b"] = json!([2, 1]);
    let answer = name_answer("user_name", "Ada");
    h.invalid_state(&answered(&other, &asked, answer)).await;
}

#[tokio::test]
async fn rotated_keys_accept_old_states_until_the_old_key_is_removed() {
    let old = [1u8; 32];
    let new = [2u8; 32];
    let before = start_server(server_with(|b| {
        b.request_state_keys(RequestStateKeys::new(old).unwrap())
    }))
    .await;
    let first = call("greet");
    let asked = before.input_required(&first).await;
    let body = answered(&first, &asked, name_answer("user_name", "Ada"));
    let rotated = start_server(server_with(|b| {
        b.request_state_keys(
            RequestStateKeys::new(new)
                .unwrap()
                .also_accept(old)
                .unwrap(),
        )
    }))
    .await;
    assert_eq!(tool_json(&rotated.complete(&body).await), "Hello, Ada!");
    // The rotated server signs with the new key: the old server cannot open its states.
    let fresh = rotated.input_required(&first).await;
    let body_new = answered(&first, &fresh, name_answer("user_name", "Bo"));
    before.invalid_state(&body_new).await;
    let retired = start_server(server_with(|b| {
        b.request_state_keys(RequestStateKeys::new(new).unwrap())
    }))
    .await;
    retired.invalid_state(&body).await;
    assert_eq!(tool_json(&retired.complete(&body_new).await), "Hello, Bo!");
}

#[tokio::test]
async fn a_state_cannot_be_replayed_by_another_user() {
    let auth = BearerAuth::new()
        .token("alice-token", Identity::new("alice"))
        .token("bob-token", Identity::new("bob"));
    let mut h = start_http(StreamableHttp::builder(server_with(|b| b)).auth(auth)).await;
    h.bearer = Some("alice-token");
    let (first, asked) = h.ask(call("greet")).await;
    let body = answered(&first, &asked, name_answer("user_name", "Ada"));
    h.bearer = Some("bob-token");
    let refused = h.invalid_state(&body).await;
    assert_eq!(
        refused["error"]["message"],
        "Invalid requestState: it was issued for another request"
    );
    h.bearer = Some("alice-token");
    assert_eq!(tool_json(&h.complete(&body).await), "Hello, Ada!");
}

#[tokio::test]
async fn the_tools_own_state_spares_redoing_work() {
    let h = start().await;
    let (first, asked) = h.ask(call("stateful")).await;
    let body = answered(&first, &asked, name_answer("who", "Ada"));
    let done = h.complete(&body).await;
    // The work ran once (draft 1), not again on the retry.
    assert_eq!(
        tool_json(&done),
        json!({"prepared": {"draft": 1}, "who": "Ada"})
    );
}

#[tokio::test]
async fn a_state_over_the_bound_fails_in_the_tool() {
    let h = start_server(server_with(|b| b.request_state_max_size(1024))).await;
    let done = h.complete(&call("big_state")).await;
    let body = tool_json(&done);
    assert_eq!(body["too_large"], true, "{body}");
    assert!(
        body["refused"]
            .as_str()
            .unwrap()
            .ends_with("over the 1024-byte bound"),
        "{body}"
    );
    // Under the default bound, the same value is stored.
    let h = start().await;
    assert_eq!(tool_json(&h.complete(&call("big_state")).await), "stored");
}

#[tokio::test]
async fn only_declared_kinds_are_asked() {
    let h = start().await;
    let sampling_only = request(
        "tools/call",
        json!({"name": "polite", "arguments": {}}),
        json!({"sampling": {}}),
    );
    let asked = h.input_required(&sampling_only).await;
    assert_eq!(keys(&asked), ["hi"]);
    let sampled = json!({"role": "assistant", "content": {"type": "text", "text": "yo"},
                         "model": "m"});
    let body = answered(&sampling_only, &asked, json!({"hi": sampled}));
    let done = h.complete(&body).await;
    assert_eq!(tool_json(&done), json!({"elicit": null, "sample": sampled}));
    let nothing = request(
        "tools/call",
        json!({"name": "polite", "arguments": {}}),
        json!({}),
    );
    assert_eq!(
        tool_json(&h.complete(&nothing).await),
        json!({"elicit": null, "sample": null})
    );
}

#[tokio::test]
async fn a_tool_that_needs_an_undeclared_kind_is_answered_32021() {
    let h = start().await;
    let body = request(
        "tools/call",
        json!({"name": "greet", "arguments": {}}),
        json!({"sampling": {}}),
    );
    let (status, answer) = h.post(&body).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(answer["error"]["code"], -32021);
    assert_eq!(
        answer["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {}})
    );
    valid("MissingRequiredClientCapabilityError", &answer);
}

#[tokio::test]
async fn prompts_get_answers_input_required_then_the_prompt() {
    let h = start().await;
    let (first, asked) = h
        .ask(request(
            "prompts/get",
            json!({"name": "ask_prompt"}),
            all_capabilities(),
        ))
        .await;
    assert_eq!(keys(&asked), ["user_context"]);
    let body = answered(
        &first,
        &asked,
        json!({"user_context": accept(json!({"context": "tests"}))}),
    );
    let done = h.complete(&body).await;
    assert_eq!(done["messages"][0]["content"]["text"], "context: tests");
}

#[tokio::test]
async fn resources_read_answers_input_required_then_the_contents() {
    let h = start().await;
    let (first, asked) = h
        .ask(request(
            "resources/read",
            json!({"uri": "test://roots/1"}),
            all_capabilities(),
        ))
        .await;
    assert_eq!(asked["inputRequests"]["roots"]["method"], "roots/list");
    let roots = json!({"roots": [{"uri": "file:///a"}]});
    let body = answered(&first, &asked, json!({"roots": roots}));
    let done = h.complete(&body).await;
    assert_eq!(done["contents"][0]["text"], roots["roots"].to_string());
    assert!(
        done.get("ttlMs").is_some(),
        "a complete read keeps its cache hint"
    );
}

#[tokio::test]
async fn list_methods_never_answer_input_required() {
    let h = start().await;
    for method in ["tools/list", "prompts/list", "resources/templates/list"] {
        let body = request(
            method,
            json!({"inputResponses": {"x": accept(json!({}))}, "requestState": "junk"}),
            all_capabilities(),
        );
        let (status, answer) = h.post(&body).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    }
}

/// `tool`'s final content in the session era: initialize declaring `capabilities`, call with
/// SSE, answer each server request on the stream (by POST) with `answer(request)`.
async fn call_in_a_session(
    h: &Harness,
    tool: &str,
    capabilities: Value,
    answer: impl Fn(&Value) -> Value,
) -> Value {
    let session = h.open_session(capabilities).await;
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": tool, "arguments": {}}});
    let mut stream = Sse::new(h.session_post(&session, &body).await);
    loop {
        let message = stream
            .message()
            .await
            .expect("the stream ended before the response");
        if message.get("method").is_none() {
            assert_eq!(message["id"], 2, "{message}");
            return message["result"]["content"].clone();
        }
        let reply = json!({"jsonrpc": "2.0", "id": message["id"], "result": answer(&message)});
        assert_eq!(h.session_post(&session, &reply).await.status(), 202);
    }
}

/// The client's answer to each kind of request, in both eras.
fn client_answer(method: &str) -> Value {
    match method {
        "elicitation/create" => accept(json!({"name": "Ada"})),
        "sampling/createMessage" => json!({"role": "assistant", "model": "m",
            "content": {"type": "text", "text": "hi"}}),
        "roots/list" => json!({"roots": [{"uri": "file:///work"}]}),
        other => panic!("unexpected request {other}"),
    }
}

/// `tool`'s final content in the stateless era: every `input_required` answered, retried
/// until complete.
async fn call_stateless(h: &Harness, tool: &str) -> Value {
    let first = call(tool);
    let mut body = first.clone();
    for _ in 0..5 {
        let (status, answer) = h.post(&body).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        valid("CallToolResultResponse", &answer);
        let asked = &answer["result"];
        if asked["resultType"] == "complete" {
            return asked["content"].clone();
        }
        assert_eq!(asked["resultType"], "input_required", "{answer}");
        let responses: Map<String, Value> = asked["inputRequests"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, r)| (k.clone(), client_answer(r["method"].as_str().unwrap())))
            .collect();
        body = answered(&first, asked, Value::Object(responses));
    }
    panic!("{tool} did not complete in 5 rounds");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_eliciting_tool_gives_the_same_answer_in_both_eras() {
    let h = start().await;
    let session = call_in_a_session(&h, "greet", json!({"elicitation": {}}), |request| {
        assert_eq!(request["method"], "elicitation/create");
        assert_eq!(request["params"]["message"], "What is your name?");
        client_answer("elicitation/create")
    })
    .await;
    let stateless = greet_stateless(&h, "Ada").await;
    assert_eq!(session, stateless);
    assert_eq!(tool_json(&json!({"content": session})), "Hello, Ada!");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampling_and_roots_work_in_both_eras_too() {
    let h = start().await;
    let session = call_in_a_session(&h, "ask_all", all_capabilities(), |request| {
        client_answer(request["method"].as_str().unwrap())
    })
    .await;
    let stateless = call_stateless(&h, "ask_all").await;
    assert_eq!(session, stateless);
    let body = tool_json(&json!({"content": session}));
    assert_eq!(body["roots"]["roots"][0]["uri"], "file:///work");
    assert_eq!(body["sample"]["content"]["text"], "hi");
}

/// The final text of `greet` in the stateless era: `input_required`, then the retry.
async fn greet_stateless(h: &Harness, name: &str) -> Value {
    let (first, asked) = h.ask(call("greet")).await;
    let body = answered(&first, &asked, name_answer("user_name", name));
    h.complete(&body).await["content"].clone()
}
