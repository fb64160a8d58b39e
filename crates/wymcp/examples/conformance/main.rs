//! The fixture server of the official MCP conformance suite
//! (`@modelcontextprotocol/conformance` 0.1.16, and 0.2.0-alpha.12 at 2026-07-28, server
//! scenarios): exactly the tools, resources, prompts, completion and skills its scenarios
//! call, served over Streamable HTTP (or over stdio with `--stdio`).
//!
//! ```sh
//! cargo run -p wymcp --example conformance -- 3001        # or PORT=3001
//! npx @modelcontextprotocol/conformance@0.1.16 server --url http://127.0.0.1:3001/mcp --suite all
//! npx @modelcontextprotocol/conformance@0.2.0-alpha.12 server --url http://127.0.0.1:3001/mcp \
//!     --suite all --spec-version 2026-07-28
//! ```
//!
//! Prints `listening on <addr>` once bound (port 0 picks a free port); the endpoint is `/mcp`.
//! The sampling and elicitation tools ask the client (`ctx.sample`, `ctx.elicit`) and answer
//! an `isError` result when it cannot answer; `test_reconnection` closes its SSE stream mid-call
//! (SEP-1699 polling is on), the client resumes on GET and is replayed the response.

mod listen;
mod modern;
mod mrtr;
mod skills;
mod tasks;

use std::time::Duration;

use serde_json::{Map, Value, json};
use wymcp::Prompt;
use wymcp::completion::CompletionValues;
use wymcp::prompt::{GetPromptResult, PromptArgument, PromptArguments, PromptError, PromptMessage};
use wymcp::resource::{ReadResource, ResourceContents, ResourceError, Variables};
use wymcp::session::{Elicitation, Sampling};
use wymcp::transport::http::{HttpServer, StreamableHttp};
use wymcp::{CallError, CallOutput, CallResult, Content, Context, PlainTool, Server};
use wymcp::{Resource, ResourceTemplate};

/// A 1×1 red PNG, base64.
const TEST_IMAGE_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A minimal WAV file, base64.
const TEST_AUDIO_BASE64: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";
const WATCHED_URI: &str = "test://watched-resource";

/// What a fixture tool does.
#[derive(Clone, Copy)]
enum Kind {
    SimpleText,
    Image,
    Audio,
    EmbeddedResource,
    MultipleContentTypes,
    Logging,
    Progress,
    ErrorHandling,
    Reconnection,
    Sampling,
    Elicitation,
    ElicitationDefaults,
    ElicitationEnums,
    JsonSchema2020,
}

struct Fixture {
    name: &'static str,
    description: &'static str,
    schema: Value,
    kind: Kind,
}

fn empty_schema() -> Value {
    json!({"type": "object", "properties": {}})
}

fn string_argument(name: &str, description: &str) -> Value {
    json!({
        "type": "object",
        "properties": {name: {"type": "string", "description": description}},
        "required": [name]
    })
}

fn tools() -> Vec<Fixture> {
    let tool = |name, description, kind| Fixture {
        name,
        description,
        schema: empty_schema(),
        kind,
    };
    vec![
        tool(
            "test_simple_text",
            "Tests simple text content response",
            Kind::SimpleText,
        ),
        tool(
            "test_image_content",
            "Tests image content response",
            Kind::Image,
        ),
        tool(
            "test_audio_content",
            "Tests audio content response",
            Kind::Audio,
        ),
        tool(
            "test_embedded_resource",
            "Tests embedded resource content response",
            Kind::EmbeddedResource,
        ),
        tool(
            "test_multiple_content_types",
            "Tests response with multiple content types (text, image, resource)",
            Kind::MultipleContentTypes,
        ),
        tool(
            "test_tool_with_logging",
            "Tests tool that emits log messages during execution",
            Kind::Logging,
        ),
        tool(
            "test_tool_with_progress",
            "Tests tool that reports progress notifications",
            Kind::Progress,
        ),
        tool(
            "test_error_handling",
            "Tests error response handling",
            Kind::ErrorHandling,
        ),
        tool(
            "test_reconnection",
            "Tests SSE stream disconnection and client reconnection (SEP-1699)",
            Kind::Reconnection,
        ),
        Fixture {
            name: "test_sampling",
            description: "Tests server-initiated sampling (LLM completion request)",
            schema: string_argument("prompt", "The prompt to send to the LLM"),
            kind: Kind::Sampling,
        },
        Fixture {
            name: "test_elicitation",
            description: "Tests server-initiated elicitation (user input request)",
            schema: string_argument("message", "The message to show the user"),
            kind: Kind::Elicitation,
        },
        tool(
            "test_elicitation_sep1034_defaults",
            "Tests elicitation with default values per SEP-1034",
            Kind::ElicitationDefaults,
        ),
        tool(
            "test_elicitation_sep1330_enums",
            "Tests elicitation with enum schema improvements per SEP-1330",
            Kind::ElicitationEnums,
        ),
        Fixture {
            name: "json_schema_2020_12_tool",
            description: "Tool with JSON Schema 2020-12 features",
            schema: json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {
                    "address": {
                        "$anchor": "addressDef",
                        "type": "object",
                        "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
                    }
                },
                "properties": {
                    "name": {"type": "string"},
                    "address": {"$ref": "#/$defs/address"},
                    "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                    "phone": {"type": "string"},
                    "email": {"type": "string"}
                },
                // SEP-2106 (2026-07-28): composition, conditional and `$anchor` keywords.
                "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
                "if": {
                    "properties": {"contactMethod": {"const": "phone"}},
                    "required": ["contactMethod"]
                },
                "then": {"required": ["phone"]},
                "else": {"required": ["email"]},
                "additionalProperties": false
            }),
            kind: Kind::JsonSchema2020,
        },
    ]
}

impl PlainTool for Fixture {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        self.description
    }
    fn input_schema(&self) -> Map<String, Value> {
        self.schema.as_object().cloned().unwrap_or_default()
    }
    async fn run(&self, arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let step = Duration::from_millis(50);
        match self.kind {
            Kind::SimpleText => Ok(CallOutput::text(
                "This is a simple text response for testing.",
            )),
            Kind::Image => Ok(CallOutput::new(vec![Content::image(
                TEST_IMAGE_BASE64,
                "image/png",
            )])),
            Kind::Audio => Ok(CallOutput::new(vec![Content::audio(
                TEST_AUDIO_BASE64,
                "audio/wav",
            )])),
            Kind::EmbeddedResource => Ok(CallOutput::new(vec![Content::embedded_text(
                "test://embedded-resource",
                "text/plain",
                "This is an embedded resource content.",
            )])),
            Kind::MultipleContentTypes => Ok(CallOutput::new(vec![
                Content::text("Multiple content types test:"),
                Content::image(TEST_IMAGE_BASE64, "image/png"),
                Content::embedded_text(
                    "test://mixed-content-resource",
                    "application/json",
                    json!({"test": "data", "value": 123}).to_string(),
                ),
            ])),
            Kind::Logging => {
                for (i, data) in [
                    "Tool execution started",
                    "Tool processing data",
                    "Tool execution completed",
                ]
                .into_iter()
                .enumerate()
                {
                    if i > 0 {
                        tokio::time::sleep(step).await;
                    }
                    ctx.notify(
                        "notifications/message",
                        json!({"level": "info", "data": data}),
                    );
                }
                Ok(CallOutput::text("Tool with logging executed successfully"))
            }
            Kind::Progress => {
                for (i, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                    if i > 0 {
                        tokio::time::sleep(step).await;
                    }
                    let message = format!("Completed step {progress} of 100");
                    ctx.progress(progress, Some(100.0), Some(&message));
                }
                let token = ctx.progress_token().cloned().unwrap_or(json!(0));
                let token = match token {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                Ok(CallOutput::text(token))
            }
            Kind::ErrorHandling => Err(CallError::tool(
                "This tool intentionally returns an error for testing",
            )),
            Kind::Reconnection => {
                // Ends this call's SSE stream (SEP-1699); the response follows on the GET
                // stream the client resumes with Last-Event-ID. Without a stream to close (no
                // SSE, another transport) the call simply completes.
                ctx.close_sse_stream();
                tokio::time::sleep(Duration::from_millis(100)).await;
                Ok(CallOutput::text(
                    "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.",
                ))
            }
            Kind::Sampling => {
                let prompt = arguments
                    .get("prompt")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let answer = ctx
                    .sample(Sampling::prompt(prompt).max_tokens(100))
                    .await
                    .map_err(|err| CallError::tool(format!("Sampling failed: {err}")))?;
                let text = answer["content"]["text"].as_str().unwrap_or_default();
                Ok(CallOutput::text(format!("LLM response: {text}")))
            }
            Kind::Elicitation => {
                let message = arguments
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let schema = json!({
                    "type": "object",
                    "properties": {
                        "username": {"type": "string", "description": "User's response"},
                        "email": {"type": "string", "description": "User's email address"}
                    },
                    "required": ["username", "email"]
                });
                let answer = elicit(&ctx, message, schema).await?;
                Ok(CallOutput::text(format!(
                    "User response: action={}, content={}",
                    answer["action"].as_str().unwrap_or_default(),
                    answer.get("content").cloned().unwrap_or(json!({}))
                )))
            }
            Kind::ElicitationDefaults => {
                let schema = json!({
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "User name", "default": "John Doe"},
                        "age": {"type": "integer", "description": "User age", "default": 30},
                        "score": {"type": "number", "description": "User score", "default": 95.5},
                        "status": {
                            "type": "string",
                            "description": "User status",
                            "enum": ["active", "inactive", "pending"],
                            "default": "active"
                        },
                        "verified": {"type": "boolean", "description": "Verification status", "default": true}
                    },
                    "required": []
                });
                let answer = elicit(
                    &ctx,
                    "Please review and update the form fields with defaults",
                    schema,
                )
                .await?;
                Ok(completed(&answer))
            }
            Kind::ElicitationEnums => {
                let schema = json!({
                    "type": "object",
                    "properties": {
                        "untitledSingle": {
                            "type": "string",
                            "description": "Choose an option",
                            "enum": ["option1", "option2", "option3"]
                        },
                        "titledSingle": {
                            "type": "string",
                            "description": "Choose a titled option",
                            "oneOf": [
                                {"const": "value1", "title": "First Option"},
                                {"const": "value2", "title": "Second Option"},
                                {"const": "value3", "title": "Third Option"}
                            ]
                        },
                        "legacyEnum": {
                            "type": "string",
                            "description": "Choose a legacy option",
                            "enum": ["opt1", "opt2", "opt3"],
                            "enumNames": ["Option One", "Option Two", "Option Three"]
                        },
                        "untitledMulti": {
                            "type": "array",
                            "description": "Choose multiple options",
                            "minItems": 1,
                            "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
                        },
                        "titledMulti": {
                            "type": "array",
                            "description": "Choose multiple titled options",
                            "minItems": 1,
                            "items": {
                                "anyOf": [
                                    {"const": "value1", "title": "First Choice"},
                                    {"const": "value2", "title": "Second Choice"},
                                    {"const": "value3", "title": "Third Choice"}
                                ]
                            }
                        }
                    },
                    "required": []
                });
                let answer =
                    elicit(&ctx, "Please select options from the enum fields", schema).await?;
                Ok(completed(&answer))
            }
            Kind::JsonSchema2020 => Ok(CallOutput::text(format!(
                "JSON Schema 2020-12 tool called with: {}",
                Value::Object(arguments)
            ))),
        }
    }
}

/// Asks the user for input (form mode); a failed round trip is the tool's error.
async fn elicit(ctx: &Context, message: &str, schema: Value) -> Result<Value, CallError> {
    ctx.elicit(Elicitation::form(message, schema))
        .await
        .map_err(|err| CallError::tool(format!("Elicitation failed: {err}")))
}

/// `Elicitation completed: action=…, content={…}`.
fn completed(answer: &Value) -> CallOutput {
    CallOutput::text(format!(
        "Elicitation completed: action={}, content={}",
        answer["action"].as_str().unwrap_or_default(),
        answer.get("content").cloned().unwrap_or(json!({}))
    ))
}

/// `test://template/{id}/data`.
struct TemplateData;

impl ReadResource for TemplateData {
    async fn read(
        &self,
        uri: &str,
        vars: Variables,
        _ctx: Context,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        let id = vars.get("id").ok_or(ResourceError::NotFound)?;
        let body = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
        Ok(vec![
            ResourceContents::text(uri, body.to_string()).with_mime_type("application/json"),
        ])
    }
}

/// A prompt answering fixed messages, or messages built from its arguments.
struct FixturePrompt {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    arguments: Vec<PromptArgument>,
    render: fn(&PromptArguments) -> Vec<PromptMessage>,
}

impl Prompt for FixturePrompt {
    fn name(&self) -> &str {
        self.name
    }
    fn title(&self) -> Option<String> {
        Some(self.title.to_owned())
    }
    fn description(&self) -> Option<String> {
        Some(self.description.to_owned())
    }
    fn arguments(&self) -> Vec<PromptArgument> {
        self.arguments.clone()
    }
    async fn get(
        &self,
        arguments: PromptArguments,
        _ctx: Context,
    ) -> Result<GetPromptResult, PromptError> {
        Ok(GetPromptResult::new((self.render)(&arguments)))
    }
}

fn argument<'a>(arguments: &'a PromptArguments, name: &str) -> &'a str {
    // The handler admits a call only with every required argument present.
    arguments.get(name).map(String::as_str).unwrap_or_default()
}

fn prompts() -> Vec<FixturePrompt> {
    vec![
        FixturePrompt {
            name: "test_simple_prompt",
            title: "Simple Test Prompt",
            description: "A simple prompt without arguments",
            arguments: vec![],
            render: |_| {
                vec![PromptMessage::user(Content::text(
                    "This is a simple prompt for testing.",
                ))]
            },
        },
        FixturePrompt {
            name: "test_prompt_with_arguments",
            title: "Prompt With Arguments",
            description: "A prompt with required arguments",
            arguments: vec![
                PromptArgument::required("arg1").description("First test argument"),
                PromptArgument::required("arg2").description("Second test argument"),
            ],
            render: |args| {
                vec![PromptMessage::user(Content::text(format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    argument(args, "arg1"),
                    argument(args, "arg2")
                )))]
            },
        },
        FixturePrompt {
            name: "test_prompt_with_embedded_resource",
            title: "Prompt With Embedded Resource",
            description: "A prompt that includes an embedded resource",
            arguments: vec![
                PromptArgument::required("resourceUri").description("URI of the resource to embed"),
            ],
            render: |args| {
                vec![
                    PromptMessage::user(
                        ResourceContents::text(
                            argument(args, "resourceUri"),
                            "Embedded resource content for testing.",
                        )
                        .with_mime_type("text/plain"),
                    ),
                    PromptMessage::user(Content::text(
                        "Please process the embedded resource above.",
                    )),
                ]
            },
        },
        FixturePrompt {
            name: "test_prompt_with_image",
            title: "Prompt With Image",
            description: "A prompt that includes image content",
            arguments: vec![],
            render: |_| {
                vec![
                    PromptMessage::user(Content::image(TEST_IMAGE_BASE64, "image/png")),
                    PromptMessage::user(Content::text("Please analyze the image above.")),
                ]
            },
        },
    ]
}

/// The fixture server, everything declared once and validated by `build()`.
#[cfg(test)]
fn server() -> Result<Server, Box<dyn std::error::Error>> {
    Ok(server_builder()?.build()?)
}

/// The fixture's server, before `build()` (`--redis` adds the shared requestState keys).
fn server_builder() -> Result<wymcp::ServerBuilder, Box<dyn std::error::Error>> {
    let mut builder = Server::builder()
        .name("mcp-conformance-test-server")
        .version("1.0.0")
        .list_changed(true)
        .resource(
            Resource::text(
                "test://static-text",
                "static-text",
                "This is the content of the static text resource.",
            )
            .title("Static Text Resource")
            .description("A static text resource for testing")
            .mime_type("text/plain"),
        )
        .resource(
            Resource::blob_base64("test://static-binary", "static-binary", TEST_IMAGE_BASE64)
                .title("Static Binary Resource")
                .description("A static binary resource (image) for testing")
                .mime_type("image/png"),
        )
        .resource(
            Resource::text(WATCHED_URI, "watched-resource", "Watched resource content")
                .title("Watched Resource")
                .description("A resource that auto-updates every 3 seconds")
                .mime_type("text/plain"),
        )
        .resource_template(
            ResourceTemplate::new("test://template/{id}/data", "template", TemplateData)
                .title("Resource Template")
                .description("A resource template with parameter substitution")
                .mime_type("application/json"),
        )
        .prompt_completion(
            "test_prompt_with_arguments",
            "arg1",
            CompletionValues::new(["paris", "park", "party"]),
        )
        .template_completion(
            "test://template/{id}/data",
            "id",
            CompletionValues::new(["1", "2", "3", "123"]),
        );
    for tool in tools() {
        builder = builder.plain_tool(tool);
    }
    for prompt in prompts() {
        builder = builder.prompt(prompt);
    }
    builder = listen::register(builder);
    builder = mrtr::register(builder);
    builder = modern::register(builder);
    builder = skills::register(builder)?;
    builder = tasks::register(builder);
    Ok(builder)
}

/// `conformance [PORT] [--redis URL] [--stdio]`: serves the fixture on 127.0.0.1:PORT (3001, or
/// `PORT` from the environment); with `--redis`, as one node of several sharing that Redis
/// (sessions, event log, bus, requestState keys and tasks: `tests/conformance/run.sh
/// --scale-out`); with `--stdio`, over stdin and stdout instead (the upstream a gateway spawns:
/// `run.sh --through-gateway`), stdout carrying the protocol only.
#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let stdio = args.iter().any(|a| a == "--stdio");
    let redis_url = args
        .iter()
        .position(|a| a == "--redis")
        .and_then(|at| args.get(at + 1));
    let port = args
        .iter()
        .find(|a| !a.starts_with("--") && Some(*a) != redis_url)
        .cloned()
        .or_else(|| std::env::var("PORT").ok())
        .unwrap_or_else(|| "3001".to_owned());
    if stdio && (redis_url.is_some() || args.iter().any(|a| !a.starts_with("--"))) {
        return Err(
            "--stdio serves one client over stdin/stdout: it takes no PORT or --redis".into(),
        );
    }
    let redis = match redis_url {
        Some(url) => Some(wymcp_redis::Redis::connect(url).await?),
        None => None,
    };
    let mut builder = server_builder()?;
    if let Some(redis) = &redis {
        // Every store in Redis (sessions, events, the bus, subscriptions, tasks), any node
        // answering for any task: a running task's node picks up a cancel or an answer given
        // to another node at its next heartbeat.
        builder = builder
            .backends(redis.backends())
            .request_state_keys(redis.request_state_keys().await?)
            .task_heartbeat(Duration::from_millis(250));
    }
    let server = builder.build()?;
    listen::attach(&server);
    // The watched resource "updates" every 3 seconds: subscribers are notified.
    let watcher = server.clone();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_secs(3));
        loop {
            every.tick().await;
            watcher.notify_resource_updated(WATCHED_URI).await;
        }
    });
    if stdio {
        wymcp::transport::stdio::serve(server).await?;
        return Ok(());
    }
    // SSE polling (SEP-1699): POST streams open with a priming event carrying `retry`, and
    // `test_reconnection` closes its stream mid-call.
    let http = StreamableHttp::builder(server)
        .sse_polling(true)
        .sse_retry(Duration::from_millis(500));
    let http = HttpServer::bind(format!("127.0.0.1:{port}").as_str(), http).await?;
    println!("listening on {}", http.local_addr()?);
    http.run().await?;
    Ok(())
}

/// What each 0.1.16 server scenario checks, asked of the handlers directly (`cargo test -p wymcp
/// --example conformance`); the HTTP run is the suite's.
#[cfg(test)]
mod tests {
    use super::*;
    use wymcp::testing::TestClient;

    /// A test client of the fixture, speaking 2025-11-25.
    fn client() -> TestClient {
        let server = server().expect("the fixture builds");
        TestClient::new(server).with_version(wymcp::ProtocolVersion::V2025_11_25)
    }

    #[tokio::test]
    async fn resources_scenarios() {
        let client = client();
        let list = client.request("resources/list", None).await.expect("list");
        for r in list["resources"].as_array().expect("resources") {
            assert!(r["uri"].is_string() && r["name"].is_string(), "{r}");
        }
        let read =
            |uri: &'static str| client.request("resources/read", Some(json!({ "uri": uri })));
        let text = read("test://static-text").await.expect("text");
        assert_eq!(
            text["contents"][0]["text"],
            "This is the content of the static text resource."
        );
        assert_eq!(text["contents"][0]["mimeType"], "text/plain");
        let blob = read("test://static-binary").await.expect("blob");
        assert_eq!(blob["contents"][0]["blob"], TEST_IMAGE_BASE64);
        let templated = read("test://template/123/data").await.expect("template");
        assert!(
            templated["contents"][0]["text"]
                .as_str()
                .is_some_and(|t| t.contains("123"))
        );
        let watched = json!({ "uri": WATCHED_URI });
        assert_eq!(
            client
                .request("resources/subscribe", Some(watched.clone()))
                .await
                .expect("sub"),
            json!({})
        );
        assert_eq!(
            client
                .request("resources/unsubscribe", Some(watched))
                .await
                .expect("unsub"),
            json!({})
        );
    }

    #[tokio::test]
    async fn prompts_and_completion_scenarios() {
        let client = client();
        let list = client.request("prompts/list", None).await.expect("list");
        let names: Vec<&str> = list["prompts"]
            .as_array()
            .map(|prompts| prompts.iter().filter_map(|p| p["name"].as_str()).collect())
            .unwrap_or_default();
        assert_eq!(
            names,
            [
                "test_simple_prompt",
                "test_prompt_with_arguments",
                "test_prompt_with_embedded_resource",
                "test_prompt_with_image",
                "test_input_required_result_prompt",
            ]
        );
        let get = |params: Value| client.request("prompts/get", Some(params));
        let simple = get(json!({"name": "test_simple_prompt"}))
            .await
            .expect("simple");
        assert_eq!(simple["messages"][0]["role"], "user");
        let args = get(json!({"name": "test_prompt_with_arguments",
                              "arguments": {"arg1": "testValue1", "arg2": "testValue2"}}))
        .await
        .expect("args")
        .to_string();
        assert!(args.contains("testValue1") && args.contains("testValue2"));
        let embedded = get(json!({"name": "test_prompt_with_embedded_resource",
                                  "arguments": {"resourceUri": "test://example-resource"}}))
        .await
        .expect("embedded");
        assert_eq!(embedded["messages"][0]["content"]["type"], "resource");
        assert_eq!(
            embedded["messages"][0]["content"]["resource"]["uri"],
            "test://example-resource"
        );
        let image = get(json!({"name": "test_prompt_with_image"}))
            .await
            .expect("image");
        assert_eq!(image["messages"][0]["content"]["type"], "image");

        let complete = client
            .request(
                "completion/complete",
                Some(
                    json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                            "argument": {"name": "arg1", "value": "test"}}),
                ),
            )
            .await
            .expect("complete");
        assert!(complete["completion"]["values"].is_array());
        let caps = client
            .server()
            .capabilities(wymcp::ProtocolVersion::V2025_11_25);
        for key in ["tools", "resources", "prompts", "completions", "logging"] {
            assert!(caps.get(key).is_some(), "{key}");
        }
    }

    #[tokio::test]
    async fn tools_scenarios() {
        let client = client();
        let call = |name: &'static str, arguments: Value| {
            client.request(
                "tools/call",
                Some(json!({"name": name, "arguments": arguments})),
            )
        };
        for (name, kind) in [
            ("test_simple_text", "text"),
            ("test_image_content", "image"),
            ("test_audio_content", "audio"),
            ("test_embedded_resource", "resource"),
            ("test_tool_with_logging", "text"),
            ("test_tool_with_progress", "text"),
            ("test_reconnection", "text"),
        ] {
            let result = call(name, json!({})).await.expect(name);
            assert_eq!(result["isError"], false, "{name}: {result}");
            assert_eq!(result["content"][0]["type"], kind, "{name}");
        }
        let mixed = call("test_multiple_content_types", json!({}))
            .await
            .expect("mixed");
        assert_eq!(mixed["content"].as_array().map(Vec::len), Some(3));
        let email = json!({"contactMethod": "email", "email": "ada@example.com"});
        let schema_call = call("json_schema_2020_12_tool", email)
            .await
            .expect("2020-12");
        assert_eq!(schema_call["isError"], false, "{schema_call}");
        // `if`/`then`: a phone contact without a phone number is refused by the value gate.
        let no_phone = json!({"contactMethod": "phone", "email": "ada@example.com"});
        let refused = call("json_schema_2020_12_tool", no_phone)
            .await
            .expect("2020-12");
        assert_eq!(refused["isError"], true, "{refused}");
        let error = call("test_error_handling", json!({})).await.expect("error");
        assert_eq!(error["isError"], true);
        let sampling = call("test_sampling", json!({"prompt": "hi"}))
            .await
            .expect("sampling");
        assert_eq!(sampling["isError"], true);

        let list = client
            .server()
            .list_tools(wymcp::ProtocolVersion::V2025_11_25);
        let schema = list["tools"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["name"] == "json_schema_2020_12_tool"))
            .map(|t| t["inputSchema"].clone())
            .expect("listed");
        assert_eq!(
            schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        assert!(schema.get("$defs").is_some());
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["$defs"]["address"]["$anchor"], "addressDef");
        assert!(schema["allOf"][0]["anyOf"].is_array());
        assert!(schema.get("if").is_some() && schema.get("then").is_some());
        assert!(schema.get("else").is_some());
    }
}
