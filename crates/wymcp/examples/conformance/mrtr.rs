//! The multi round-trip request fixtures (SEP-2322, 2026-07-28 `input-required-result-*`
//! scenarios): tools and one prompt whose code asks the client with `ctx.elicit`,
//! `ctx.sample` and `ctx.list_roots`. The code is era-neutral: in a session each ask is a
//! server→client request; in the stateless era the framework answers `input_required` and
//! runs the code again on the client's retry.

use serde_json::{Map, Value, json};
use wymcp::Prompt;
use wymcp::prompt::{GetPromptResult, PromptArguments, PromptError, PromptMessage};
use wymcp::session::{ClientRequestError, Elicitation, ListRoots, Sampling};
use wymcp::{CallError, CallOutput, CallResult, Content, Context, PlainTool, ServerBuilder};

/// What a fixture tool asks.
#[derive(Clone, Copy)]
enum Ask {
    Elicitation,
    Sampling,
    ListRoots,
    RequestState,
    MultipleInputs,
    MultiRound,
    TamperedState,
    Capabilities,
}

struct MrtrTool {
    name: &'static str,
    description: &'static str,
    ask: Ask,
}

/// Registers every MRTR fixture on `builder`.
pub(crate) fn register(mut builder: ServerBuilder) -> ServerBuilder {
    let tools = [
        (
            "test_input_required_result_elicitation",
            "Asks the user's name (elicitation, key user_name), then greets them",
            Ask::Elicitation,
        ),
        (
            "test_input_required_result_sampling",
            "Asks the client's model for the capital of France (key capital_question)",
            Ask::Sampling,
        ),
        (
            "test_input_required_result_list_roots",
            "Asks the client for its roots (key client_roots) and lists them",
            Ask::ListRoots,
        ),
        (
            "test_input_required_result_request_state",
            "Asks for confirmation carrying its own request state; answers state-ok",
            Ask::RequestState,
        ),
        (
            "test_input_required_result_multiple_inputs",
            "Asks elicitation, sampling and roots in one round",
            Ask::MultipleInputs,
        ),
        (
            "test_input_required_result_multi_round",
            "Asks a name (step1), then a favorite color (step2)",
            Ask::MultiRound,
        ),
        (
            "test_input_required_result_tampered_state",
            "Asks for confirmation; a tampered requestState is refused",
            Ask::TamperedState,
        ),
        (
            "test_input_required_result_capabilities",
            "Asks only for the kinds of input the request's clientCapabilities declare",
            Ask::Capabilities,
        ),
    ];
    for (name, description, ask) in tools {
        builder = builder.plain_tool(MrtrTool {
            name,
            description,
            ask,
        });
    }
    builder.prompt(ContextPrompt)
}

fn form(message: &str, property: &str, schema: Value) -> Elicitation {
    Elicitation::form(
        message,
        json!({"type": "object", "properties": {property: schema}, "required": [property]}),
    )
}

fn name_form(message: &str) -> Elicitation {
    form(message, "name", json!({"type": "string"}))
}

fn confirm_form() -> Elicitation {
    form("Please confirm", "ok", json!({"type": "boolean"})).key("confirm")
}

fn failed(what: &str) -> impl Fn(ClientRequestError) -> CallError + '_ {
    move |err| CallError::tool(format!("{what} failed: {err}"))
}

/// The `content` field `field` of an elicitation answer, as text.
fn field(answer: &Value, field: &str) -> String {
    match &answer["content"][field] {
        Value::String(s) => s.clone(),
        Value::Null => "(none)".to_owned(),
        other => other.to_string(),
    }
}

fn sampled_text(answer: &Value) -> &str {
    answer["content"]["text"].as_str().unwrap_or_default()
}

fn root_uris(answer: &Value) -> String {
    let uris: Vec<&str> = answer["roots"]
        .as_array()
        .map(|roots| roots.iter().filter_map(|r| r["uri"].as_str()).collect())
        .unwrap_or_default();
    uris.join(", ")
}

impl PlainTool for MrtrTool {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        self.description
    }
    fn input_schema(&self) -> Map<String, Value> {
        let mut schema = Map::new();
        schema.insert("type".into(), json!("object"));
        schema.insert("properties".into(), json!({}));
        schema
    }
    async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let text = match self.ask {
            Ask::Elicitation => {
                let ask = name_form("What is your name?").key("user_name");
                let answer = ctx.elicit(ask).await.map_err(failed("Elicitation"))?;
                format!("Hello, {}!", field(&answer, "name"))
            }
            Ask::Sampling => {
                let ask = Sampling::prompt("What is the capital of France?")
                    .max_tokens(100)
                    .key("capital_question");
                let answer = ctx.sample(ask).await.map_err(failed("Sampling"))?;
                format!("LLM response: {}", sampled_text(&answer))
            }
            Ask::ListRoots => {
                let ask = ListRoots::new().key("client_roots");
                let answer = ctx.list_roots(ask).await.map_err(failed("roots/list"))?;
                format!("Client roots: {}", root_uris(&answer))
            }
            Ask::RequestState => {
                // The tool's own value rides in the sealed requestState to the retry.
                if ctx.request_state().is_none() {
                    ctx.set_request_state(json!({"issued_by": self.name}))
                        .map_err(failed("Setting the request state"))?;
                }
                let answer = ctx
                    .elicit(confirm_form())
                    .await
                    .map_err(failed("Elicitation"))?;
                let carried = ctx.request_state();
                let verdict = if carried == Some(json!({"issued_by": self.name})) {
                    "state-ok"
                } else {
                    "state-missing"
                };
                format!("{verdict}: confirmed={}", field(&answer, "ok"))
            }
            Ask::MultipleInputs => {
                let (name, greeting, roots) = tokio::join!(
                    ctx.elicit(name_form("What is your name?").key("user_name")),
                    ctx.sample(
                        Sampling::prompt("Generate a greeting")
                            .max_tokens(50)
                            .key("greeting")
                    ),
                    ctx.list_roots(ListRoots::new().key("client_roots")),
                );
                let name = name.map_err(failed("Elicitation"))?;
                let greeting = greeting.map_err(failed("Sampling"))?;
                let roots = roots.map_err(failed("roots/list"))?;
                format!(
                    "name={}, greeting={}, roots={}",
                    field(&name, "name"),
                    sampled_text(&greeting),
                    root_uris(&roots)
                )
            }
            Ask::MultiRound => {
                let name = ctx
                    .elicit(name_form("Step 1: What is your name?").key("step1"))
                    .await
                    .map_err(failed("Step 1"))?;
                let color = ctx
                    .elicit(
                        form(
                            "Step 2: What is your favorite color?",
                            "color",
                            json!({"type": "string"}),
                        )
                        .key("step2"),
                    )
                    .await
                    .map_err(failed("Step 2"))?;
                format!(
                    "{}'s favorite color is {}",
                    field(&name, "name"),
                    field(&color, "color")
                )
            }
            Ask::TamperedState => {
                let answer = ctx
                    .elicit(confirm_form())
                    .await
                    .map_err(failed("Elicitation"))?;
                format!("confirmed={}", field(&answer, "ok"))
            }
            Ask::Capabilities => capabilities(&ctx).await?,
        };
        Ok(CallOutput::text(text))
    }
}

/// Asks for each kind of input the request declares, all in one round; none when none is.
async fn capabilities(ctx: &Context) -> Result<String, CallError> {
    let elicit = async {
        match ctx.client_declares("elicitation") {
            true => Some(
                ctx.elicit(name_form("What is your name?").key("user_name"))
                    .await,
            ),
            false => None,
        }
    };
    let sample = async {
        match ctx.client_declares("sampling") {
            true => Some(
                ctx.sample(Sampling::prompt("Generate a greeting").key("greeting"))
                    .await,
            ),
            false => None,
        }
    };
    let roots = async {
        match ctx.client_declares("roots") {
            true => Some(ctx.list_roots(ListRoots::new().key("client_roots")).await),
            false => None,
        }
    };
    let (name, greeting, roots) = tokio::join!(elicit, sample, roots);
    let mut parts = Vec::new();
    if let Some(name) = name {
        parts.push(format!(
            "name={}",
            field(&name.map_err(failed("Elicitation"))?, "name")
        ));
    }
    if let Some(greeting) = greeting {
        let greeting = greeting.map_err(failed("Sampling"))?;
        parts.push(format!("greeting={}", sampled_text(&greeting)));
    }
    if let Some(roots) = roots {
        let roots = roots.map_err(failed("roots/list"))?;
        parts.push(format!("roots={}", root_uris(&roots)));
    }
    if parts.is_empty() {
        return Ok("No input kind declared: nothing to ask".to_owned());
    }
    Ok(parts.join(", "))
}

/// `test_input_required_result_prompt`: asks the context it should use (key user_context).
struct ContextPrompt;

impl Prompt for ContextPrompt {
    fn name(&self) -> &str {
        "test_input_required_result_prompt"
    }
    fn description(&self) -> Option<String> {
        Some("A prompt that asks the user for its context (elicitation, key user_context)".into())
    }
    async fn get(
        &self,
        _arguments: PromptArguments,
        ctx: Context,
    ) -> Result<GetPromptResult, PromptError> {
        let ask = form(
            "What context should the prompt use?",
            "context",
            json!({"type": "string"}),
        )
        .key("user_context");
        let answer = ctx
            .elicit(ask)
            .await
            .map_err(|err| PromptError::Failed(format!("Elicitation failed: {err}")))?;
        Ok(GetPromptResult::new(vec![PromptMessage::user(
            Content::text(format!("Use this context: {}", field(&answer, "context"))),
        )]))
    }
}
