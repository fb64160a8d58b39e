//! Prompts through the transport-neutral `Server` handlers: list (paginated, title/icons per
//! revision), get with every content kind, argument validation, `build()` refusals, results
//! checked against the official schemas.

mod kit_request;
mod mcp_schema;

use serde_json::{Value, json};
use wymcp::Prompt;
use wymcp::prompt::{
    GetPromptResult, PromptArgument, PromptArguments, PromptError, PromptMessage, Role,
};
use wymcp::resource::ResourceContents;
use wymcp::tool::Problem;
use wymcp::{Content, Context, ProtocolVersion, RpcError, Server};

use kit_request::request;
use mcp_schema::{REVISIONS, problems, validator};

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==";

struct WithArgs;

impl Prompt for WithArgs {
    fn name(&self) -> &str {
        "test_prompt_with_arguments"
    }
    fn title(&self) -> Option<String> {
        Some("Prompt With Arguments".into())
    }
    fn description(&self) -> Option<String> {
        Some("A prompt with required arguments".into())
    }
    fn arguments(&self) -> Vec<PromptArgument> {
        vec![
            PromptArgument::required("arg1")
                .description("First test argument")
                .title("First"),
            PromptArgument::required("arg2").description("Second test argument"),
            PromptArgument::optional("tone"),
        ]
    }
    fn icons(&self) -> Vec<Value> {
        vec![json!({"src": "https://example.com/p.png"})]
    }
    async fn get(
        &self,
        args: PromptArguments,
        _ctx: Context,
    ) -> Result<GetPromptResult, PromptError> {
        if args.get("tone").map(String::as_str) == Some("rude") {
            return Err(PromptError::InvalidArguments("tone must be polite".into()));
        }
        if args.get("tone").map(String::as_str) == Some("crash") {
            return Err(PromptError::Failed("template store unavailable".into()));
        }
        Ok(GetPromptResult::new(vec![PromptMessage::user(
            Content::text(format!(
                "Prompt with arguments: arg1='{}', arg2='{}'",
                args["arg1"], args["arg2"]
            )),
        )]))
    }
}

struct Everything;

impl Prompt for Everything {
    fn name(&self) -> &str {
        "everything"
    }
    async fn get(
        &self,
        _args: PromptArguments,
        _ctx: Context,
    ) -> Result<GetPromptResult, PromptError> {
        Ok(GetPromptResult::new(vec![
            PromptMessage::user(Content::image(PNG, "image/png")),
            PromptMessage::user(Content::audio("UklGRg==", "audio/wav")),
            PromptMessage::user(
                ResourceContents::text("test://embedded", "Embedded").with_mime_type("text/plain"),
            ),
            PromptMessage::new(
                Role::Assistant,
                Content::resource_link("test://linked", "linked"),
            ),
            PromptMessage::assistant(Content::text("Done.")),
        ])
        .description("every content kind"))
    }
}

struct Panics;

impl Prompt for Panics {
    fn name(&self) -> &str {
        "panics"
    }
    async fn get(
        &self,
        _args: PromptArguments,
        _ctx: Context,
    ) -> Result<GetPromptResult, PromptError> {
        panic!("boom")
    }
}

fn server() -> Server {
    Server::builder()
        .prompt(WithArgs)
        .prompt(Everything)
        .prompt(Panics)
        .build()
        .expect("valid prompts")
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

#[test]
fn list_is_valid_per_revision() {
    let server = server();
    rt().block_on(async {
        for version in REVISIONS {
            let list = request(&server, "prompts/list", None, ctx(version))
                .await
                .expect("list");
            assert_valid(version, "ListPromptsResult", &list);
            let p = &list["prompts"][0];
            assert_eq!(p["name"], "test_prompt_with_arguments");
            assert_eq!(p["arguments"][0]["required"], true);
            assert_eq!(p["arguments"][2]["required"], false);
            let titled = version >= ProtocolVersion::V2025_06_18;
            assert_eq!(p.get("title").is_some(), titled);
            assert_eq!(p["arguments"][0].get("title").is_some(), titled);
            assert_eq!(
                p.get("icons").is_some(),
                version >= ProtocolVersion::V2025_11_25
            );
            assert!(list["prompts"][1].get("arguments").is_none());
        }
        let caps = server.capabilities(ProtocolVersion::V2025_11_25);
        assert_eq!(caps["prompts"], json!({"listChanged": false}));
        assert!(caps.get("resources").is_none());
    });
}

#[test]
fn list_paginates() {
    let server = Server::builder()
        .page_size(1)
        .prompt(WithArgs)
        .prompt(Everything)
        .build()
        .expect("valid");
    rt().block_on(async {
        let v = ProtocolVersion::V2025_11_25;
        let first = request(&server, "prompts/list", None, ctx(v))
            .await
            .expect("p1");
        assert_eq!(first["prompts"].as_array().map(Vec::len), Some(1));
        let cursor = first["nextCursor"].clone();
        let second = request(
            &server,
            "prompts/list",
            Some(json!({ "cursor": cursor })),
            ctx(v),
        )
        .await
        .expect("p2");
        assert_eq!(second["prompts"][0]["name"], "everything");
        assert!(second.get("nextCursor").is_none());
        // A resources cursor is no prompts cursor.
        let err = request(
            &server,
            "prompts/list",
            Some(json!({"cursor": "cmVzb3VyY2VzOjE"})),
            ctx(v),
        )
        .await
        .expect_err("foreign cursor");
        assert_eq!(err.code(), RpcError::INVALID_PARAMS);
    });
}

#[test]
fn get_substitutes_arguments_and_carries_every_content_kind() {
    let server = server();
    rt().block_on(async {
        for version in REVISIONS {
            let got = request(
                &server,
                "prompts/get",
                Some(json!({"name": "test_prompt_with_arguments",
                                "arguments": {"arg1": "testValue1", "arg2": "testValue2"}})),
                ctx(version),
            )
            .await
            .expect("get");
            assert_valid(version, "GetPromptResult", &got);
            assert_eq!(
                got["messages"][0],
                json!({"role": "user", "content": {"type": "text",
                    "text": "Prompt with arguments: arg1='testValue1', arg2='testValue2'"}})
            );

            let all = request(
                &server,
                "prompts/get",
                Some(json!({"name": "everything"})),
                ctx(version),
            )
            .await
            .expect("get");
            assert_valid(version, "GetPromptResult", &all);
            let kinds: Vec<&str> = all["messages"]
                .as_array()
                .expect("messages")
                .iter()
                .map(|m| m["content"]["type"].as_str().unwrap_or_default())
                .collect();
            let link = if version >= ProtocolVersion::V2025_06_18 {
                "resource_link"
            } else {
                "text"
            };
            assert_eq!(kinds, ["image", "audio", "resource", link, "text"]);
            assert_eq!(
                all["messages"][2]["content"]["resource"]["uri"],
                "test://embedded"
            );
            assert_eq!(all["description"], "every content kind");
        }
    });
}

#[test]
fn argument_validation_names_the_argument() {
    let server = server();
    rt().block_on(async {
        let v = ProtocolVersion::V2025_11_25;
        let get = |params: Value| request(&server, "prompts/get", Some(params), ctx(v));

        let missing =
            get(json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "a"}}))
                .await
                .expect_err("missing");
        assert_eq!(missing.code(), RpcError::INVALID_PARAMS);
        assert!(
            missing
                .message()
                .contains("Missing required argument 'arg2'"),
            "{missing:?}"
        );
        assert_eq!(missing.data().expect("data")["argument"], "arg2");

        let none = get(json!({"name": "test_prompt_with_arguments"}))
            .await
            .expect_err("none");
        assert!(none.message().contains("'arg1'"));

        let unknown = get(json!({"name": "test_prompt_with_arguments",
                                 "arguments": {"arg1": "a", "arg2": "b", "arg3": "c"}}))
        .await
        .expect_err("unknown");
        assert_eq!(unknown.code(), RpcError::INVALID_PARAMS);
        assert!(
            unknown.message().contains("Unknown argument 'arg3'"),
            "{unknown:?}"
        );
        assert!(unknown.message().contains("arg1, arg2, tone"));

        let not_string = get(json!({"name": "test_prompt_with_arguments",
                                    "arguments": {"arg1": 1, "arg2": "b"}}))
        .await
        .expect_err("not a string");
        assert_eq!(not_string.code(), RpcError::INVALID_PARAMS);
        assert!(not_string.message().contains("'arg1'"));

        let not_object = get(json!({"name": "everything", "arguments": ["x"]}))
            .await
            .expect_err("not an object");
        assert_eq!(not_object.code(), RpcError::INVALID_PARAMS);

        let unknown_prompt = get(json!({"name": "nope"}))
            .await
            .expect_err("unknown prompt");
        assert_eq!(unknown_prompt.code(), RpcError::INVALID_PARAMS);
        assert!(unknown_prompt.message().contains("Unknown prompt: nope"));

        let no_name = get(json!({})).await.expect_err("no name");
        assert_eq!(no_name.code(), RpcError::INVALID_PARAMS);

        let refused = get(json!({"name": "test_prompt_with_arguments",
                                 "arguments": {"arg1": "a", "arg2": "b", "tone": "rude"}}))
        .await
        .expect_err("prompt refuses");
        assert_eq!(refused.code(), RpcError::INVALID_PARAMS);
        assert!(refused.message().contains("tone must be polite"));

        let failed = get(json!({"name": "test_prompt_with_arguments",
                                "arguments": {"arg1": "a", "arg2": "b", "tone": "crash"}}))
        .await
        .expect_err("prompt fails");
        assert_eq!(failed.code(), RpcError::INTERNAL_ERROR);

        let panicked = get(json!({"name": "panics"})).await.expect_err("panics");
        assert_eq!(panicked.code(), RpcError::INTERNAL_ERROR);
        assert!(get(json!({"name": "everything"})).await.is_ok());
    });
}

#[test]
fn list_changed_is_declared_and_sent_only_when_asked() {
    let quiet = server();
    let _rx = quiet.notifications();
    assert!(!quiet.notify_prompts_list_changed());
    let loud = Server::builder()
        .list_changed(true)
        .prompt(Everything)
        .build()
        .expect("valid");
    let mut rx = loud.notifications();
    assert!(loud.notify_prompts_list_changed());
    let sent = rx.try_recv().expect("sent");
    assert_eq!(sent.method(), "notifications/prompts/list_changed");
    for version in REVISIONS {
        let caps = loud.capabilities(version);
        assert_valid(version, "ServerCapabilities", &caps);
        assert_eq!(caps["prompts"]["listChanged"], true);
    }
}

struct Named(&'static str, Vec<PromptArgument>);

impl Prompt for Named {
    fn name(&self) -> &str {
        self.0
    }
    fn arguments(&self) -> Vec<PromptArgument> {
        self.1.clone()
    }
    async fn get(
        &self,
        _args: PromptArguments,
        _ctx: Context,
    ) -> Result<GetPromptResult, PromptError> {
        Ok(GetPromptResult::default())
    }
}

#[test]
fn build_refuses_duplicates_and_empty_names() {
    let dup = Server::builder()
        .prompt(Named("p", vec![]))
        .prompt(Named("p", vec![]))
        .build()
        .expect_err("duplicate");
    assert_eq!(dup.problem(), &Problem::DuplicatePrompt("p".into()));

    let dup_arg = Server::builder()
        .prompt(Named(
            "p",
            vec![PromptArgument::required("a"), PromptArgument::optional("a")],
        ))
        .build()
        .expect_err("duplicate argument");
    assert_eq!(
        dup_arg.problem(),
        &Problem::DuplicatePromptArgument {
            prompt: "p".into(),
            argument: "a".into()
        }
    );

    let empty = Server::builder()
        .prompt(Named("", vec![]))
        .build()
        .expect_err("empty");
    assert!(matches!(empty.problem(), Problem::EmptyName(_)));
    let empty_arg = Server::builder()
        .prompt(Named("p", vec![PromptArgument::required("")]))
        .build()
        .expect_err("empty argument");
    assert!(matches!(empty_arg.problem(), Problem::EmptyName(_)));
}
