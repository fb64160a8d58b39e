//! The diagnostic tools the suite's 2026-07-28 scenarios (0.2.0-alpha.12) call besides
//! MRTR and `subscriptions/listen`:
//!
//! * `test_missing_capability` (`server-stateless`): needs the client's `sampling`
//!   capability; a request that does not declare it is answered 400 `-32021` with
//!   `requiredCapabilities: {"sampling": {}}` by the framework, as soon as the tool asks;
//! * `test_streaming_elicitation` (`server-stateless`): asks the user through
//!   `ctx.elicit`, which the stateless era turns into an `input_required` result on the
//!   request's own response, never a server→client request on the stream;
//! * `test_header_param` (`http-custom-header-server-validation`): a string argument annotated
//!   `x-mcp-header`, so the call must carry it again as `Mcp-Param-Region`.
//!
//! Each tool is era-neutral: in a session the asks are server→client requests.

use serde_json::{Map, Value, json};
use wymcp::session::{Elicitation, Sampling};
use wymcp::{CallError, CallOutput, CallResult, Context, PlainTool, ServerBuilder};

/// Registers the tools on `builder`.
pub(crate) fn register(builder: ServerBuilder) -> ServerBuilder {
    builder
        .plain_tool(Modern::MissingCapability)
        .plain_tool(Modern::StreamingElicitation)
        .plain_tool(Modern::HeaderParam)
}

/// One diagnostic tool.
#[derive(Clone, Copy)]
enum Modern {
    MissingCapability,
    StreamingElicitation,
    HeaderParam,
}

impl PlainTool for Modern {
    fn name(&self) -> &str {
        match self {
            Modern::MissingCapability => "test_missing_capability",
            Modern::StreamingElicitation => "test_streaming_elicitation",
            Modern::HeaderParam => "test_header_param",
        }
    }

    fn description(&self) -> &str {
        match self {
            Modern::MissingCapability => {
                "Needs the client's sampling capability: without it the call is refused -32021"
            }
            Modern::StreamingElicitation => {
                "Asks the user to confirm (elicitation, key confirm) on the call's own response"
            }
            Modern::HeaderParam => {
                "Echoes its region, which the call also carries as the Mcp-Param-Region header"
            }
        }
    }

    fn input_schema(&self) -> Map<String, Value> {
        let schema = match self {
            Modern::MissingCapability | Modern::StreamingElicitation => {
                json!({"type": "object", "properties": {}})
            }
            Modern::HeaderParam => json!({
                "type": "object",
                "properties": {
                    "region": {
                        "type": "string",
                        "description": "Where to route the call; mirrored in Mcp-Param-Region",
                        "x-mcp-header": "Region"
                    }
                },
                "required": ["region"]
            }),
        };
        schema.as_object().cloned().unwrap_or_default()
    }

    async fn run(&self, arguments: Map<String, Value>, ctx: Context) -> CallResult {
        match self {
            Modern::MissingCapability => {
                let answer = ctx
                    .sample(Sampling::prompt("Say hello").max_tokens(16).key("greeting"))
                    .await
                    .map_err(|err| CallError::tool(format!("Sampling failed: {err}")))?;
                let text = answer["content"]["text"].as_str().unwrap_or_default();
                Ok(CallOutput::text(format!("LLM response: {text}")))
            }
            Modern::StreamingElicitation => {
                ctx.progress(0.0, Some(1.0), Some("asking the user"));
                let ask = Elicitation::form(
                    "Proceed?",
                    json!({
                        "type": "object",
                        "properties": {"confirm": {"type": "boolean"}},
                        "required": ["confirm"]
                    }),
                )
                .key("confirm");
                let answer = ctx
                    .elicit(ask)
                    .await
                    .map_err(|err| CallError::tool(format!("Elicitation failed: {err}")))?;
                ctx.progress(1.0, Some(1.0), Some("answered"));
                Ok(CallOutput::text(format!(
                    "Elicitation completed: action={}",
                    answer["action"].as_str().unwrap_or_default()
                )))
            }
            Modern::HeaderParam => {
                let region = arguments
                    .get("region")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                Ok(CallOutput::text(format!("region: {region}")))
            }
        }
    }
}
