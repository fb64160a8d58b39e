//! Running a stateless request's handler and shaping its answer for the era.

use serde_json::Value;

use super::results;
use crate::dispatch::CallToolResult;
use crate::mrtr::{self, Round};
use crate::protocol::stateless;
use crate::protocol::{Method, RpcError, success};
use crate::serve::{Answer, Class, Core, Refusal};
use crate::task::hand_off::HandedOff;
use crate::task::serve::{Route, route_call, run_task_call};
use crate::{Context, Server};

/// What a stateless handler produced.
pub(crate) enum Done {
    /// A `tools/call` that completed: its typed result (written without a `Value` tree).
    Call(CallToolResult),
    /// Any other result, `input_required` included.
    Value(Value),
}

/// Runs the handler of `method` (every method but `subscriptions/listen`, a stream each
/// transport opens itself) under `round` when it has one: `tools/call`, `prompts/get` and
/// `resources/read` answer `input_required` when they wait for input nobody gave yet.
pub(crate) async fn execute(
    server: &Server,
    method: Method,
    params: Option<Value>,
    ctx: &Context,
    round: Option<&Round>,
) -> Result<Done, RpcError> {
    let ctx = ctx.clone();
    let value = match method {
        Method::Discover => Ok(results::discover_result(server)),
        Method::ToolsList => {
            let lists = server.clone();
            let serve = move |_, ctx: Context| async move {
                Ok(lists.list_tools_for(ctx.protocol_version(), ctx.identity()))
            };
            server.through_layers(method, params, ctx, serve).await
        }
        Method::ToolsCall => {
            let params = match route_call(server, params, &ctx) {
                Route::Sync(params) => params,
                Route::Task(call) => {
                    // Boxed: the task paths' futures stay out of every plain call's.
                    let outcome = Box::pin(run_task_call(server, call, &ctx, round)).await;
                    return match outcome {
                        HandedOff::Complete(result) => result.map(Done::Call),
                        HandedOff::InputRequired(value) => Ok(Done::Value(value)),
                        HandedOff::Task(handle) => handle.map(Done::Value),
                    };
                }
            };
            let call = server.tools_call(params, ctx);
            return Ok(match mrtr::run_typed(round, call).await? {
                Ok(result) => Done::Call(result),
                Err(input_required) => Done::Value(input_required),
            });
        }
        Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => {
            Box::pin(crate::task::serve::method(server, method, params, &ctx)).await
        }
        Method::ResourcesRead | Method::PromptsGet => {
            mrtr::run(round, server.feature(method, params, ctx)).await
        }
        method => server.feature(method, params, ctx).await,
    };
    value.map(Done::Value)
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
    result: Result<Done, RpcError>,
) -> Result<Answer, Refusal> {
    if let Some(required) = ctx.required_capabilities() {
        let error = stateless::missing_capability(required);
        return Err(Refusal::new(Class::Invalid, id, error));
    }
    Ok(match result {
        Ok(Done::Call(result)) => Answer::Stateless {
            id,
            result,
            meta: core.stateless_meta().clone(),
        },
        Ok(Done::Value(result)) => {
            let hints = &core.settings().cache_hints;
            let shaped = results::complete(core.server(), name, hints, result);
            Answer::Message(success(id, shaped))
        }
        Err(error) => Answer::failure(id, &error),
    })
}
