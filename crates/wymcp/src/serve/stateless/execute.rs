//! Running a stateless request's handler and shaping its answer for the era.

use serde_json::Value;

use super::results;
use crate::mrtr::{self, Round};
use crate::protocol::stateless;
use crate::protocol::{Method, RpcError, success};
use crate::serve::{Answer, Class, Core, Refusal};
use crate::server::extension::Answered;
use crate::{Context, Server};

/// Runs the handler of `method` (every method but `subscriptions/listen`, a stream each
/// transport opens itself) under `round` when it has one: `tools/call`, `prompts/get` and
/// `resources/read` answer `input_required` when they wait for input nobody gave yet. A
/// `tools/call` is offered to the server's extensions first (the tasks extension takes the
/// calls it runs as tasks); the extensions' own methods are the server's features.
pub(crate) async fn execute(
    server: &Server,
    method: Method,
    params: Option<Value>,
    ctx: &Context,
    round: Option<&Round>,
) -> Result<Answered, RpcError> {
    let ctx = ctx.clone();
    let value = match method {
        Method::Discover => Ok(results::discover_result(server)),
        Method::ToolsList => {
            let lists = server.clone();
            let serve = move |params: Option<Value>, ctx: Context| async move {
                lists.list_tools_page(ctx.protocol_version(), ctx.identity(), params.as_ref())
            };
            server.through_layers(method, params, ctx, serve).await
        }
        Method::ToolsCall => {
            let extensions = &server.features().extensions;
            let params = match extensions.take_call(server, params, &ctx, round) {
                Err(params) => params,
                // Boxed by the extension: its paths' futures stay out of every plain call's.
                Ok(answering) => return answering.await,
            };
            let call = server.tools_call(params, ctx);
            return Ok(match mrtr::run_typed(round, call).await? {
                Ok(result) => Answered::Call(result),
                Err(input_required) => Answered::Value(input_required),
            });
        }
        Method::ResourcesRead | Method::PromptsGet => {
            mrtr::run(round, server.feature(method, params, ctx)).await
        }
        method => server.feature(method, params, ctx).await,
    };
    value.map(Answered::Value)
}

/// The answer to request `id` of method `name`, whose handler ran with `ctx` and gave
/// `result`: `-32021` when the handler asked for a client capability the request did not
/// declare (whatever it did next), else the result shaped for the era (`resultType`,
/// `_meta` serverInfo, the method's cache hint) or the handler's error.
pub(crate) fn answer(
    core: &Core,
    ctx: &Context,
    name: &str,
    id: Value,
    result: Result<Answered, RpcError>,
) -> Result<Answer, Refusal> {
    if let Some(required) = ctx.required_capabilities() {
        let error = stateless::missing_capability(required);
        return Err(Refusal::new(Class::Invalid, id, error));
    }
    Ok(match result {
        Ok(Answered::Call(result)) => Answer::Stateless {
            id,
            result,
            meta: core.stateless_meta().clone(),
        },
        Ok(Answered::Value(result)) => {
            let hints = &core.settings().cache_hints;
            let shaped = results::complete(core.server(), name, hints, result);
            Answer::Message(success(id, shaped))
        }
        Err(error) => Answer::failure(id, &error),
    })
}
