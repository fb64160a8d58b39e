//! Running a stateless request's handler and shaping its answer for the era.

use serde_json::Value;

use crate::mrtr::{self, Round};
use crate::protocol::modern::{self, CacheHints, ModernMethod};
use crate::protocol::{RpcError, failure, success};
use crate::{Context, Server};

/// Runs the handler of `method` (every method but `subscriptions/listen`, a stream each
/// transport opens itself) under `round` when it has one: `tools/call`, `prompts/get` and
/// `resources/read` answer `input_required` when they wait for input nobody gave yet.
pub(crate) async fn execute(
    server: &Server,
    method: ModernMethod,
    params: Option<Value>,
    ctx: &Context,
    round: Option<&Round>,
) -> Result<Value, RpcError> {
    let ctx = ctx.clone();
    match method {
        ModernMethod::Discover => Ok(modern::discover_result(server)),
        ModernMethod::ToolsList => Ok(server.list_tools(ctx.protocol_version())),
        ModernMethod::ToolsCall => mrtr::run(round, server.handle_tools_call(params, ctx)).await,
        ModernMethod::ResourcesList => server.handle_resources_list(params, ctx).await,
        ModernMethod::ResourceTemplatesList => {
            server.handle_resource_templates_list(params, ctx).await
        }
        ModernMethod::ResourcesRead => {
            mrtr::run(round, server.handle_resources_read(params, ctx)).await
        }
        ModernMethod::PromptsList => server.handle_prompts_list(params, ctx).await,
        ModernMethod::PromptsGet => mrtr::run(round, server.handle_prompts_get(params, ctx)).await,
        ModernMethod::Complete => server.handle_completion_complete(params, ctx).await,
        // A stream, not one answer: the transport opens it (`stateless::listen`).
        ModernMethod::SubscriptionsListen => Err(RpcError::new(
            RpcError::METHOD_NOT_FOUND,
            "Method not found",
            None,
        )),
    }
}

/// The answer to a finished stateless request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Answer {
    /// The JSON-RPC response: the result shaped for the era, or the handler's error.
    Response(Value),
    /// `-32021`: the handler needed a client capability the request did not declare
    /// (Streamable HTTP answers it with 400).
    MissingCapability { id: Value, error: RpcError },
}

impl Answer {
    /// The JSON-RPC message to write.
    pub(crate) fn into_message(self) -> Value {
        match self {
            Answer::Response(message) => message,
            Answer::MissingCapability { id, error } => failure(id, &error),
        }
    }
}

/// The answer to request `id` of method `name`, whose handler ran with `ctx` and gave
/// `result`: `-32021` when the handler asked for a client capability the request did not
/// declare (whatever it did next), else the result shaped for the era (`resultType`,
/// `_meta` serverInfo, the method's cache hint) or the handler's error.
pub(crate) fn answer(
    server: &Server,
    hints: &CacheHints,
    ctx: &Context,
    name: &str,
    id: Value,
    result: Result<Value, RpcError>,
) -> Answer {
    if let Some(required) = ctx.required_capabilities() {
        return Answer::MissingCapability {
            id,
            error: modern::missing_capability(required),
        };
    }
    Answer::Response(match result {
        Ok(result) => success(id, modern::complete(server, name, hints, result)),
        Err(error) => failure(id, &error),
    })
}
