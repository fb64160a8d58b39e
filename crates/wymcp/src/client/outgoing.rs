//! [`Outgoing`]: a message the client sends, serialized once from its parts (no `Value` of the
//! whole message is built), with the progress token its `params._meta` carries. In the
//! stateless era every request carries the same envelope in `params._meta`: it is serialized
//! once per connection ([`Envelope`]) and written into each request as it is.

use bytes::Bytes;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::{RawValue, to_raw_value};
use serde_json::{Map, Value};

use crate::protocol::ProtocolVersion;
use crate::protocol::stateless::{CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, PROTOCOL_VERSION_KEY};

use super::builder::Settings;

/// The members of the stateless era's `params._meta` envelope (protocol version, the client's
/// capabilities and info), serialized.
#[derive(Debug, Clone)]
pub(crate) struct Envelope {
    members: Vec<(&'static str, Box<RawValue>)>,
}

impl Envelope {
    /// The envelope of revision `version` for the client `settings` describe.
    pub(crate) fn new(
        version: ProtocolVersion,
        settings: &Settings,
    ) -> Result<Envelope, serde_json::Error> {
        Ok(Envelope {
            members: vec![
                (PROTOCOL_VERSION_KEY, to_raw_value(version.as_str())?),
                (
                    CLIENT_CAPABILITIES_KEY,
                    to_raw_value(&settings.capabilities)?,
                ),
                (CLIENT_INFO_KEY, to_raw_value(&client_info(settings))?),
            ],
        })
    }

    fn has(&self, key: &str) -> bool {
        self.members.iter().any(|(name, _)| *name == key)
    }
}

/// The client's `clientInfo`.
pub(crate) fn client_info(settings: &Settings) -> Value {
    serde_json::json!({"name": settings.name, "version": settings.version})
}

/// A JSON-RPC message ready to send.
#[derive(Debug, Clone)]
pub(crate) struct Outgoing {
    text: Bytes,
    token: Option<Value>,
}

impl Outgoing {
    /// The request `id` (a notification when `None`) of `method` with `params`, whose
    /// `params._meta` gets `meta` (the log level, a trace context) and the `envelope`'s
    /// members, replacing members of the same name. A `_meta` that is not an object is sent
    /// as it is, with neither.
    pub(crate) fn new(
        id: Option<i64>,
        method: &str,
        params: &Map<String, Value>,
        meta: &Map<String, Value>,
        envelope: Option<&Envelope>,
    ) -> Result<Outgoing, serde_json::Error> {
        let own = params.get("_meta");
        let added = !meta.is_empty() || envelope.is_some();
        let meta = match own {
            None if added => Some(Meta {
                own: None,
                meta,
                envelope,
            }),
            Some(Value::Object(own)) if added => Some(Meta {
                own: Some(own),
                meta,
                envelope,
            }),
            _ => None,
        };
        let message = Message {
            id,
            method,
            params: Params { params, meta },
        };
        let token = own.and_then(|meta| meta.get("progressToken")).cloned();
        Ok(Outgoing {
            text: Bytes::from(serde_json::to_vec(&message)?),
            token,
        })
    }

    /// A message given as a whole (a response to a server's request, `initialize`).
    pub(crate) fn value(message: &Value) -> Result<Outgoing, serde_json::Error> {
        Ok(Outgoing {
            text: Bytes::from(serde_json::to_vec(message)?),
            token: None,
        })
    }

    /// The message's JSON text.
    pub(crate) fn text(&self) -> &Bytes {
        &self.text
    }

    /// `params._meta.progressToken`, when the message carries one.
    pub(crate) fn token(&self) -> Option<&Value> {
        self.token.as_ref()
    }
}

struct Message<'a> {
    id: Option<i64>,
    method: &'a str,
    params: Params<'a>,
}

impl Serialize for Message<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("jsonrpc", "2.0")?;
        if let Some(id) = self.id {
            map.serialize_entry("id", &id)?;
        }
        map.serialize_entry("method", self.method)?;
        map.serialize_entry("params", &self.params)?;
        map.end()
    }
}

struct Params<'a> {
    params: &'a Map<String, Value>,
    /// `_meta` with members added; `None`: `params` as they are.
    meta: Option<Meta<'a>>,
}

impl Serialize for Params<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in self.params {
            if self.meta.is_none() || key != "_meta" {
                map.serialize_entry(key, value)?;
            }
        }
        if let Some(meta) = &self.meta {
            map.serialize_entry("_meta", meta)?;
        }
        map.end()
    }
}

struct Meta<'a> {
    own: Option<&'a Map<String, Value>>,
    meta: &'a Map<String, Value>,
    envelope: Option<&'a Envelope>,
}

impl Serialize for Meta<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        // A request declaring capabilities of its own keeps them (`Client::request`; a
        // task-augmented call declares the client's with the extension beside them).
        let own_wins = |key: &str| {
            key == CLIENT_CAPABILITIES_KEY && self.own.is_some_and(|own| own.contains_key(key))
        };
        let replaced = |key: &str| {
            self.meta.contains_key(key)
                || (self.envelope.is_some_and(|e| e.has(key)) && !own_wins(key))
        };
        for (key, value) in self.own.into_iter().flatten() {
            if !replaced(key) {
                map.serialize_entry(key, value)?;
            }
        }
        for (key, value) in self.meta {
            if !self.envelope.is_some_and(|e| e.has(key)) {
                map.serialize_entry(key, value)?;
            }
        }
        for (key, value) in self.envelope.iter().flat_map(|e| &e.members) {
            if !own_wins(key) {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn settings() -> Settings {
        crate::client::Client::builder("http://127.0.0.1:1/mcp").settings
    }

    fn parsed(outgoing: &Outgoing) -> Value {
        serde_json::from_slice(outgoing.text()).unwrap_or(Value::Null)
    }

    #[test]
    fn a_request_declaring_its_own_capabilities_keeps_them() {
        let settings = settings();
        let envelope = Envelope::new(ProtocolVersion::V2026_07_28, &settings).ok();
        let params = json!({"name": "x", "_meta": {CLIENT_CAPABILITIES_KEY: {"sampling": {}}}});
        let params = params.as_object().cloned().unwrap_or_default();
        let out = Outgoing::new(
            Some(1),
            "tools/call",
            &params,
            &Map::new(),
            envelope.as_ref(),
        );
        let body = out.as_ref().map(parsed).unwrap_or(Value::Null);
        assert_eq!(
            body["params"]["_meta"][CLIENT_CAPABILITIES_KEY],
            json!({"sampling": {}})
        );
        assert_eq!(
            body["params"]["_meta"][PROTOCOL_VERSION_KEY],
            json!("2026-07-28")
        );
    }

    #[test]
    fn a_stateless_request_carries_the_envelope_with_its_own_meta() {
        let settings = settings();
        let envelope = Envelope::new(ProtocolVersion::V2026_07_28, &settings).ok();
        let params = json!({"name": "calc", "arguments": {"a": 1}, "_meta": {"progressToken": "t-1", "io.modelcontextprotocol/protocolVersion": "1999-01-01"}});
        let params = params.as_object().cloned().unwrap_or_default();
        let mut meta = Map::new();
        meta.insert(
            "io.modelcontextprotocol/logLevel".to_owned(),
            json!("debug"),
        );
        let out = Outgoing::new(Some(7), "tools/call", &params, &meta, envelope.as_ref());
        let out = out.ok();
        let body = out.as_ref().map(parsed).unwrap_or(Value::Null);
        assert_eq!(
            body,
            json!({
                "jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": "calc", "arguments": {"a": 1}, "_meta": {
                    "progressToken": "t-1",
                    "io.modelcontextprotocol/logLevel": "debug",
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": {"name": "wymcp-client", "version": env!("CARGO_PKG_VERSION")},
                }},
            })
        );
        assert_eq!(out.and_then(|o| o.token().cloned()), Some(json!("t-1")));
    }

    #[test]
    fn a_session_notification_is_sent_as_given() {
        let params = json!({"requestId": 3, "_meta": "not an object"});
        let params = params.as_object().cloned().unwrap_or_default();
        let out = Outgoing::new(None, "notifications/cancelled", &params, &Map::new(), None);
        let body = out.as_ref().map(parsed).unwrap_or(Value::Null);
        assert_eq!(
            body,
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3, "_meta": "not an object"}})
        );
    }
}
