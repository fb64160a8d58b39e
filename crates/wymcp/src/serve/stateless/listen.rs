//! `subscriptions/listen` (MCP 2026-07-28), transport-neutral: the notification filter a
//! stream honours, and the messages every stream carries, each tagged with the subscription id
//! (the listen request's JSON-RPC id) in `params._meta`: the acknowledgement first, then only
//! the kinds asked for, and the successful response that ends a stream the server closes.
//! Streamable HTTP frames them as SSE events, stdio as lines on stdout among other messages.

use serde_json::{Map, Value, json};

use super::results;
use crate::Server;
use crate::protocol::stateless::{CacheHints, SUBSCRIPTION_ID_KEY};
use crate::protocol::{RpcError, success};
use crate::resource::Change;

/// Most URIs one stream's `resourceSubscriptions` may list.
pub(crate) const MAX_RESOURCE_SUBSCRIPTIONS: usize = 1_000;

/// What a stream delivers: the honoured part of the client's filter.
#[derive(Debug, Default)]
pub(crate) struct Filter {
    tools: bool,
    prompts: bool,
    resources: bool,
    uris: Vec<String>,
}

impl Filter {
    /// Reads `params.notifications`: an object whose known fields have their schema's types
    /// (unknown fields are ignored, as a later revision may add kinds).
    pub(crate) fn parse(params: Option<&Value>) -> Result<Filter, RpcError> {
        let invalid = |what: &str| {
            RpcError::new(
                RpcError::INVALID_PARAMS,
                format!("Invalid params: params.notifications{what}"),
                None,
            )
        };
        let Some(filter) = params
            .and_then(|p| p.get("notifications"))
            .and_then(Value::as_object)
        else {
            return Err(invalid(" must be an object (the notification filter)"));
        };
        let flag = |key: &str| match filter.get(key) {
            None => Ok(false),
            Some(Value::Bool(on)) => Ok(*on),
            Some(_) => Err(invalid(&format!(".{key} must be a boolean"))),
        };
        let uris = match filter.get("resourceSubscriptions") {
            None => Vec::new(),
            Some(Value::Array(items)) if items.len() > MAX_RESOURCE_SUBSCRIPTIONS => {
                return Err(invalid(&format!(
                    ".resourceSubscriptions lists {} URIs; at most {MAX_RESOURCE_SUBSCRIPTIONS} are allowed",
                    items.len()
                )));
            }
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| invalid(".resourceSubscriptions must be an array of strings"))?,
            Some(_) => {
                return Err(invalid(
                    ".resourceSubscriptions must be an array of strings",
                ));
            }
        };
        Ok(Filter {
            tools: flag("toolsListChanged")?,
            prompts: flag("promptsListChanged")?,
            resources: flag("resourcesListChanged")?,
            uris,
        })
    }

    /// The part of the request the server delivers: kinds its stateless-era capabilities
    /// declare, URIs it resolves (each once).
    pub(crate) fn honoured(self, server: &Server) -> Filter {
        let caps = results::capabilities(server);
        let declared = |kind: &str, flag: &str| caps[kind][flag] == Value::Bool(true);
        let mut uris: Vec<String> = Vec::new();
        if declared("resources", "subscribe") {
            let resources = &server.features().resources;
            for uri in self.uris {
                if resources.resolves(&uri) && !uris.contains(&uri) {
                    uris.push(uri);
                }
            }
        }
        Filter {
            tools: self.tools && declared("tools", "listChanged"),
            prompts: self.prompts && declared("prompts", "listChanged"),
            resources: self.resources && declared("resources", "listChanged"),
            uris,
        }
    }

    /// The filter as the acknowledgement states it: only what is honoured.
    fn to_value(&self) -> Value {
        let mut map = Map::new();
        for (key, on) in [
            ("toolsListChanged", self.tools),
            ("promptsListChanged", self.prompts),
            ("resourcesListChanged", self.resources),
        ] {
            if on {
                map.insert(key.into(), Value::Bool(true));
            }
        }
        if !self.uris.is_empty() {
            map.insert("resourceSubscriptions".into(), json!(self.uris));
        }
        Value::Object(map)
    }

    /// The notification `change` becomes on this stream, if it asked for it.
    fn wants(&self, change: &Change) -> Option<(&'static str, Map<String, Value>)> {
        let list = |method| Some((method, Map::new()));
        match change {
            Change::ToolsList if self.tools => list("notifications/tools/list_changed"),
            Change::PromptsList if self.prompts => list("notifications/prompts/list_changed"),
            Change::ResourcesList if self.resources => list("notifications/resources/list_changed"),
            Change::ResourceUpdated(uri) if self.uris.iter().any(|u| **u == **uri) => {
                let mut params = Map::new();
                params.insert("uri".into(), Value::from(&**uri));
                Some(("notifications/resources/updated", params))
            }
            _ => None,
        }
    }

    /// Everything this stream could have missed (after `Lagged`).
    pub(crate) fn everything(&self) -> Vec<Change> {
        let mut all = Vec::new();
        for (on, change) in [
            (self.tools, Change::ToolsList),
            (self.prompts, Change::PromptsList),
            (self.resources, Change::ResourcesList),
        ] {
            if on {
                all.push(change);
            }
        }
        all.extend(
            self.uris
                .iter()
                .map(|u| Change::ResourceUpdated(u.as_str().into())),
        );
        all
    }
}

impl Filter {
    /// The acknowledgement a stream opens with: the honoured filter, tagged.
    pub(crate) fn acknowledgement(&self, id: &Value) -> Value {
        tagged(
            "notifications/subscriptions/acknowledged",
            Map::from_iter([("notifications".to_owned(), self.to_value())]),
            id,
        )
    }

    /// The notification `change` becomes on the stream of subscription `id`, if it asked
    /// for it.
    pub(crate) fn notification(&self, change: &Change, id: &Value) -> Option<Value> {
        let (method, params) = self.wants(change)?;
        Some(tagged(method, params, id))
    }
}

/// A notification of subscription `id`: `params._meta` carries the id.
fn tagged(method: &str, mut params: Map<String, Value>, id: &Value) -> Value {
    params.insert("_meta".into(), json!({ SUBSCRIPTION_ID_KEY: id }));
    json!({ "jsonrpc": "2.0", "method": method, "params": params })
}

/// The successful `subscriptions/listen` response that ends stream `id` gracefully (the
/// server closed it), tagged like every message of the stream.
pub(crate) fn closing(server: &Server, hints: &CacheHints, id: &Value) -> Value {
    let result = results::complete(
        server,
        "subscriptions/listen",
        hints,
        json!({ "_meta": { SUBSCRIPTION_ID_KEY: id } }),
    );
    success(id.clone(), result)
}
