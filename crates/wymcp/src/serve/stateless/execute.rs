//! Running a stateless request's handler and shaping its answer for the era.

use serde_json::Value;

use super::results;
use crate::mrtr::{self, Round};
use crate::protocol::modern::{self, CacheHints};
use crate::protocol::{Method, RpcError, failure, success};
use crate::serve::{Answer, Class, Refusal};
use crate::{Context, Server};

/// Runs the handler of `method` (every method but `subscriptions/listen`, a stream each
/// transport opens itself) under `round` when it has one: `tools/call`, `prompts/get` and
/// `resources/read` answer `input_required` when they wait for input nobody gave yet.
pub(crate) async fn execute(
    server: &Server,
    method: Method,
    params: Option<Value>,
    ctx: &Context,
    round: Option<&Round>,
) -> Result<Value, RpcError> {
    let ctx = ctx.clone();
    match method {
        Method::Discover => Ok(results::discover_result(server)),
        Method::ToolsList => Ok(server.list_tools(ctx.protocol_version())),
        Method::ToolsCall => mrtr::run(round, server.handle_tools_call(params, ctx)).await,
        Method::ResourcesRead => mrtr::run(round, server.handle_resources_read(params, ctx)).await,
        Method::PromptsGet => mrtr::run(round, server.handle_prompts_get(params, ctx)).await,
        method => crate::serve::session::feature(server, method, params, ctx).await,
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
) -> Result<Answer, Refusal> {
    if let Some(required) = ctx.required_capabilities() {
        let error = modern::missing_capability(required);
        return Err(Refusal::new(Class::Invalid, id, error));
    }
    Ok(Answer::Message(match result {
        Ok(result) => success(id, results::complete(server, name, hints, result)),
        Err(error) => failure(id, &error),
    }))
}
