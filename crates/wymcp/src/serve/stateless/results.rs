//! The stateless era's answers: the shaping every result gets (`resultType`, `_meta`
//! serverInfo, cache hints), and the answer to a request whose handler ran (`-32021` first).

use serde_json::{Map, Value, json};

use crate::protocol::stateless::{self, CacheHints, SERVER_INFO_KEY};
use crate::protocol::{RpcError, success};
use crate::serve::{Answer, Class, Core, Refusal};
use crate::server::extension::Answered;
use crate::{Context, Server};

/// Shapes a result of the stateless era: `resultType: "complete"` unless set, the server's
/// `{name, version}` in `_meta`, and `method`'s cache hint when it has one.
pub(crate) fn complete(server: &Server, method: &str, hints: &CacheHints, result: Value) -> Value {
    let mut map = match result {
        Value::Object(map) => map,
        other => {
            let mut map = Map::new();
            map.insert("value".into(), other);
            map
        }
    };
    map.entry("resultType")
        .or_insert_with(|| Value::from("complete"));
    let info = server.info();
    let meta = map
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(meta) = meta.as_object_mut() {
        meta.insert(
            SERVER_INFO_KEY.into(),
            json!({ "name": info.name, "version": info.version }),
        );
    }
    // An `InputRequiredResult` is no answer to cache.
    let input_required = map.get("resultType").and_then(Value::as_str) == Some("input_required");
    if let Some(hint) = hints.get(method).filter(|_| !input_required) {
        map.insert("ttlMs".into(), json!(hint.ttl_ms));
        map.insert("cacheScope".into(), json!(hint.scope.as_str()));
    }
    Value::Object(map)
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
            let shaped = complete(core.server(), name, hints, result);
            Answer::Message(success(id, shaped))
        }
        Err(error) => Answer::failure(id, &error),
    })
}
