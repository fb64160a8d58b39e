//! `completion/complete` through the transport-neutral `Server` handler: prompt arguments and
//! template variables, the 100-value cap, context arguments, errors, `build()` refusals,
//! results checked against the official schemas.

mod kit_request;
mod mcp_schema;

use serde_json::{Value, json};
use wymcp::Prompt;
use wymcp::ResourceTemplate;
use wymcp::completion::{Complete, Completion, CompletionRef, CompletionRequest, CompletionValues};
use wymcp::prompt::{GetPromptResult, PromptArgument, PromptArguments, PromptError};
use wymcp::resource::{ReadResource, ResourceContents, ResourceError, Variables};
use wymcp::tool::Problem;
use wymcp::{Context, ProtocolVersion, RpcError, Server};

use kit_request::request;
use mcp_schema::{REVISIONS, problems, validator};

struct WithArgs;

impl Prompt for WithArgs {
    fn name(&self) -> &str {
        "test_prompt_with_arguments"
    }
    fn arguments(&self) -> Vec<PromptArgument> {
        vec![
            PromptArgument::required("arg1"),
            PromptArgument::required("arg2"),
        ]
    }
    async fn get(
        &self,
        _args: PromptArguments,
        _ctx: Context,
    ) -> Result<GetPromptResult, PromptError> {
        Ok(GetPromptResult::default())
    }
}

struct Data;

impl ReadResource for Data {
    async fn read(
        &self,
        uri: &str,
        _vars: Variables,
        _ctx: Context,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(vec![ResourceContents::text(uri, "x")])
    }
}

/// Echoes what it was asked, to check the request reaches the provider intact.
struct Echo;

impl Complete for Echo {
    async fn complete(&self, request: CompletionRequest, _ctx: Context) -> Completion {
        let reference = match request.reference {
            CompletionRef::Prompt(p) => format!("prompt:{p}"),
            CompletionRef::ResourceTemplate(t) => format!("template:{t}"),
        };
        let context: Vec<String> = request
            .context
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        Completion::new([
            reference,
            request.argument,
            request.value,
            context.join("&"),
        ])
    }
}

struct Many;

impl Complete for Many {
    async fn complete(&self, request: CompletionRequest, _ctx: Context) -> Completion {
        Completion::new((0..250).map(|i| format!("{}{i}", request.value)))
    }
}

struct Panics;

impl Complete for Panics {
    async fn complete(&self, _request: CompletionRequest, _ctx: Context) -> Completion {
        panic!("provider bug")
    }
}

const TEMPLATE: &str = "test://template/{id}/data{?page,sort}";

fn server() -> Server {
    Server::builder()
        .prompt(WithArgs)
        .resource_template(ResourceTemplate::new(TEMPLATE, "data", Data))
        .prompt_completion(
            "test_prompt_with_arguments",
            "arg1",
            CompletionValues::new(["paris", "Parma", "rome"]),
        )
        .prompt_completion("test_prompt_with_arguments", "arg2", Echo)
        .template_completion(TEMPLATE, "id", Many)
        .template_completion(TEMPLATE, "sort", Panics)
        .build()
        .expect("valid")
}

/// A request at `version`.
/// The revision a request is served in.
fn ctx(version: ProtocolVersion) -> ProtocolVersion {
    version
}

fn assert_valid(version: ProtocolVersion, definition: &str, value: &Value) {
    let found = problems(&validator(version, definition), value);
    assert!(
        found.is_empty(),
        "{version}: {value} is not a valid {definition}: {found:?}"
    );
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
}

fn prompt_ref(argument: &str, value: &str) -> Value {
    json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
           "argument": {"name": argument, "value": value}})
}

#[test]
fn completes_prompt_arguments() {
    let server = server();
    rt().block_on(async {
        for version in REVISIONS {
            let result = request(
                &server,
                "completion/complete",
                Some(prompt_ref("arg1", "par")),
                ctx(version),
            )
            .await
            .expect("complete");
            assert_valid(version, "CompleteResult", &result);
            assert_eq!(
                result,
                json!({"completion": {"values": ["paris", "Parma"], "total": 2, "hasMore": false}})
            );
            let caps = server.capabilities(version);
            assert_valid(version, "ServerCapabilities", &caps);
            assert_eq!(caps["completions"], json!({}));
        }
        // The conformance suite's request: a value nothing starts with.
        let none = request(
            &server,
            "completion/complete",
            Some(prompt_ref("arg1", "test")),
            ctx(ProtocolVersion::V2025_11_25),
        )
        .await
        .expect("complete");
        assert_eq!(none["completion"]["values"], json!([]));
    });
}

#[test]
fn the_request_reaches_the_provider_with_its_context() {
    let server = server();
    rt().block_on(async {
        let mut params = prompt_ref("arg2", "wo");
        params["context"] = json!({"arguments": {"arg1": "hello"}});
        let result = request(
            &server,
            "completion/complete",
            Some(params),
            ctx(ProtocolVersion::V2025_11_25),
        )
        .await
        .expect("complete");
        assert_eq!(
            result["completion"]["values"],
            json!([
                "prompt:test_prompt_with_arguments",
                "arg2",
                "wo",
                "arg1=hello"
            ])
        );
    });
}

#[test]
fn completes_template_variables_capped_at_100() {
    let server = server();
    rt().block_on(async {
        for version in REVISIONS {
            let result = request(
                &server,
                "completion/complete",
                Some(json!({"ref": {"type": "ref/resource", "uri": TEMPLATE},
                                "argument": {"name": "id", "value": "4"}})),
                ctx(version),
            )
            .await
            .expect("complete");
            assert_valid(version, "CompleteResult", &result);
            let completion = &result["completion"];
            assert_eq!(completion["values"].as_array().map(Vec::len), Some(100));
            assert_eq!(completion["values"][0], "40");
            assert_eq!(completion["total"], 250);
            assert_eq!(completion["hasMore"], true);
        }
        // A variable without a provider completes to nothing.
        let result = request(
            &server,
            "completion/complete",
            Some(json!({"ref": {"type": "ref/resource", "uri": TEMPLATE},
                            "argument": {"name": "page", "value": ""}})),
            ctx(ProtocolVersion::V2025_11_25),
        )
        .await
        .expect("complete");
        assert_eq!(
            result,
            json!({"completion": {"values": [], "total": 0, "hasMore": false}})
        );
    });
}

#[test]
fn errors_are_invalid_params() {
    let server = server();
    rt().block_on(async {
        let v = ProtocolVersion::V2025_11_25;
        let complete = |params: Value| request(&server, "completion/complete", Some(params), ctx(v));

        let unknown_prompt = complete(json!({"ref": {"type": "ref/prompt", "name": "nope"},
                                             "argument": {"name": "a", "value": ""}}))
            .await
            .expect_err("unknown prompt");
        assert_eq!(unknown_prompt.code(), RpcError::INVALID_PARAMS);
        assert!(unknown_prompt.message().contains("Unknown prompt: nope"));

        let unknown_arg = complete(prompt_ref("arg9", "")).await.expect_err("unknown argument");
        assert_eq!(unknown_arg.code(), RpcError::INVALID_PARAMS);
        assert!(unknown_arg.message().contains("'arg9'"), "{unknown_arg:?}");
        assert!(unknown_arg.message().contains("arg1, arg2"));

        let unknown_template = complete(json!({"ref": {"type": "ref/resource", "uri": "test://x/{y}"},
                                               "argument": {"name": "y", "value": ""}}))
            .await
            .expect_err("unknown template");
        assert_eq!(unknown_template.code(), RpcError::INVALID_PARAMS);
        assert!(unknown_template.message().contains("test://x/{y}"));

        let unknown_variable = complete(json!({"ref": {"type": "ref/resource", "uri": TEMPLATE},
                                               "argument": {"name": "nope", "value": ""}}))
            .await
            .expect_err("unknown variable");
        assert_eq!(unknown_variable.code(), RpcError::INVALID_PARAMS);
        assert!(unknown_variable.message().contains("id, page, sort"), "{unknown_variable:?}");

        for bad in [
            json!({}),
            json!({"ref": {"type": "ref/other", "name": "x"}, "argument": {"name": "a", "value": ""}}),
            json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"}}),
            json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                   "argument": {"name": "arg1", "value": 3}}),
            json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                   "argument": {"name": "arg1", "value": ""}, "context": {"arguments": {"a": 1}}}),
        ] {
            let err = complete(bad.clone()).await.expect_err("malformed");
            assert_eq!(err.code(), RpcError::INVALID_PARAMS, "{bad}");
        }

        let panicked = complete(json!({"ref": {"type": "ref/resource", "uri": TEMPLATE},
                                       "argument": {"name": "sort", "value": ""}}))
            .await
            .expect_err("provider panicked");
        assert_eq!(panicked.code(), RpcError::INTERNAL_ERROR);
    });
}

#[test]
fn capabilities_declare_completions_only_with_providers() {
    let server = Server::builder().prompt(WithArgs).build().expect("valid");
    let caps = server.capabilities(ProtocolVersion::V2025_11_25);
    assert!(caps.get("completions").is_none());
    assert!(caps.get("prompts").is_some());
}

#[test]
fn build_refuses_providers_naming_what_does_not_exist() {
    let values = || CompletionValues::new(["x"]);
    let refusal = |builder: wymcp::ServerBuilder| {
        builder
            .build()
            .expect_err("refused at build()")
            .problem()
            .clone()
    };

    let unknown_prompt = refusal(Server::builder().prompt_completion("nope", "a", values()));
    assert_eq!(
        unknown_prompt,
        Problem::CompletionUnknownPrompt("nope".into())
    );

    let unknown_argument = refusal(Server::builder().prompt(WithArgs).prompt_completion(
        "test_prompt_with_arguments",
        "arg3",
        values(),
    ));
    assert_eq!(
        unknown_argument,
        Problem::CompletionUnknownArgument {
            prompt: "test_prompt_with_arguments".into(),
            argument: "arg3".into()
        }
    );
    assert!(unknown_argument.to_string().contains("\"arg3\""));

    let unknown_template =
        refusal(Server::builder().template_completion("test://{x}", "x", values()));
    assert_eq!(
        unknown_template,
        Problem::CompletionUnknownTemplate("test://{x}".into())
    );

    let unknown_variable = refusal(
        Server::builder()
            .resource_template(ResourceTemplate::new("test://{x}", "t", Data))
            .template_completion("test://{x}", "y", values()),
    );
    assert_eq!(
        unknown_variable,
        Problem::CompletionUnknownVariable {
            template: "test://{x}".into(),
            variable: "y".into()
        }
    );

    let duplicate = refusal(
        Server::builder()
            .prompt(WithArgs)
            .prompt_completion("test_prompt_with_arguments", "arg1", values())
            .prompt_completion("test_prompt_with_arguments", "arg1", values()),
    );
    assert!(matches!(duplicate, Problem::DuplicateCompletion(_)));
}
