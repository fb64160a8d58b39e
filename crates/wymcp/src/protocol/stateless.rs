//! The stateless era (MCP 2026-07-28), transport-neutral: the per-request `_meta` envelope,
//! its error codes, the methods it serves, cache hints and the shape of its results.
//!
//! A request of this era carries everything a session used to hold in `params._meta`, under the
//! keys below; the serving core reads them and answers with the codes below.

use serde_json::{Value, json};

use super::{LogLevel, ProtocolVersion, RpcError};

/// `_meta` key of the protocol revision a request speaks (required).
pub const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the client's capabilities for this request (required; `{}` means none).
pub const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the client's `{name, version}` (optional).
pub const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of the request's log level (optional; absent means no log messages).
pub const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key of the server's `{name, version}` on every result.
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key of the subscription a `subscriptions/listen` stream's messages belong to (the
/// listen request's JSON-RPC id).
pub const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";

/// `-32020`: an HTTP header does not match the body.
pub const HEADER_MISMATCH: i64 = -32020;
/// `-32021`: the request needs a client capability it did not declare.
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
/// `-32022`: the requested protocol revision is not served.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// The per-request envelope of the stateless era, read from `params._meta`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub(crate) struct Envelope {
    requested: String,
    client_capabilities: Value,
    client_info: Option<Value>,
    log_level: Option<LogLevel>,
    progress_token: Option<Value>,
}

impl Envelope {
    /// Reads the envelope from a request's `params`, moving the client's capabilities and
    /// info and the progress token out of `_meta` (nothing after admission reads them there:
    /// moved, a request's envelope is never copied). A missing `_meta`, or one without a
    /// string `protocolVersion` or an object `clientCapabilities`, is `-32602` with
    /// `data.envelope.missing` naming the missing keys, and leaves `params` as it was.
    pub(crate) fn parse(params: Option<&mut Value>) -> Result<Envelope, RpcError> {
        let meta = params
            .and_then(|p| p.get_mut("_meta"))
            .and_then(Value::as_object_mut);
        let version = meta
            .as_ref()
            .and_then(|m| m.get(PROTOCOL_VERSION_KEY))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let has_capabilities = meta
            .as_ref()
            .and_then(|m| m.get(CLIENT_CAPABILITIES_KEY))
            .is_some_and(Value::is_object);
        let version_missing = version.is_none();
        let (Some(version), Some(meta), true) = (version, meta, has_capabilities) else {
            let mut missing = Vec::new();
            if version_missing {
                missing.push(PROTOCOL_VERSION_KEY);
            }
            if !has_capabilities {
                missing.push(CLIENT_CAPABILITIES_KEY);
            }
            return Err(RpcError::new(
                RpcError::INVALID_PARAMS,
                format!(
                    "Invalid params: params._meta must carry {}",
                    missing.join(" and ")
                ),
                Some(json!({ "envelope": { "missing": missing } })),
            ));
        };
        // One pass over `_meta` (its keys are long and share a prefix: each lookup compares
        // them again), moving the client's parts out and leaving the rest in place.
        let mut envelope = Envelope {
            requested: version,
            client_capabilities: Value::Null,
            client_info: None,
            log_level: None,
            progress_token: None,
        };
        meta.retain(|key, value| match key.as_str() {
            CLIENT_CAPABILITIES_KEY => {
                envelope.client_capabilities = value.take();
                false
            }
            CLIENT_INFO_KEY => {
                envelope.client_info = Some(value.take()).filter(Value::is_object);
                false
            }
            "progressToken" => {
                envelope.progress_token = Some(value.take());
                false
            }
            LOG_LEVEL_KEY => {
                envelope.log_level = value.as_str().and_then(LogLevel::parse);
                true
            }
            _ => true,
        });
        Ok(envelope)
    }

    /// The client's capabilities, info and progress token, moved out.
    pub(crate) fn into_client(self) -> (Value, Option<Value>, Option<Value>) {
        (
            self.client_capabilities,
            self.client_info,
            self.progress_token,
        )
    }

    /// The revision as the request wrote it.
    pub(crate) fn requested(&self) -> &str {
        &self.requested
    }

    /// The requested revision, when it is a stateless one wymcp serves; else `-32022` with
    /// `data.supported` and `data.requested`.
    pub(crate) fn version(&self) -> Result<ProtocolVersion, RpcError> {
        match self.requested.parse::<ProtocolVersion>() {
            Ok(version) if version.is_stateless() => Ok(version),
            _ => Err(unsupported_version(&self.requested)),
        }
    }

    /// The request's log level, when sent (and valid).
    pub(crate) fn log_level(&self) -> Option<LogLevel> {
        self.log_level
    }
}

/// Every revision served on the endpoint, newest first (`server/discover`'s
/// `supportedVersions`, and `data.supported` of `-32022`).
pub(crate) fn supported_versions() -> Vec<&'static str> {
    ProtocolVersion::ALL
        .iter()
        .rev()
        .map(|v| v.as_str())
        .collect()
}

/// `-32022` "Unsupported protocol version" with `data.supported` and `data.requested`
/// (bounded).
pub(crate) fn unsupported_version(requested: &str) -> RpcError {
    RpcError::new(
        UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
        Some(json!({
            "supported": supported_versions(),
            "requested": wymcp_core::bound::echo(requested),
        })),
    )
}

/// `-32020` "Header mismatch", naming the header and both values (bounded).
pub(crate) fn header_mismatch(header: &str, sent: Option<&str>, body: &str) -> RpcError {
    let message = match sent {
        Some(sent) => format!(
            "Header mismatch: {header} header value '{}' does not match body value '{}'",
            wymcp_core::bound::echo(sent),
            wymcp_core::bound::echo(body)
        ),
        None => format!(
            "Header mismatch: the {header} header is missing; the body says '{}'",
            wymcp_core::bound::echo(body)
        ),
    };
    RpcError::new(HEADER_MISMATCH, message, None)
}

/// `-32021` naming the capabilities a request needs, as a `ClientCapabilities` object.
pub(crate) fn missing_capability(required: Value) -> RpcError {
    let names: Vec<String> = required
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    RpcError::new(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!(
            "Server requires the {} capability for this request",
            names.join(", ")
        ),
        Some(json!({ "requiredCapabilities": required })),
    )
}

/// The value an `Mcp-Param-*` header carries: literal, unless wrapped as `=?base64?…?=`,
/// which is decoded (standard alphabet, canonical padding, UTF-8). `None` when a wrapped
/// value does not decode.
pub(crate) fn decode_param_header(value: &str) -> Option<String> {
    use base64::Engine as _;
    let Some(encoded) = value
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    else {
        return Some(value.to_owned());
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    String::from_utf8(bytes).ok()
}

/// The `x-mcp-header` annotations of a tool's `inputSchema`: (argument, header suffix) for
/// each top-level property that carries one.
pub(crate) fn header_params(input_schema: &Value) -> Vec<(&str, &str)> {
    input_schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .filter_map(|(name, schema)| {
                    let suffix = schema.get("x-mcp-header")?.as_str()?;
                    Some((name.as_str(), suffix))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Whether a cached result may be shared between users (`cacheScope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum CacheScope {
    /// `"private"`: only the requesting user may reuse it.
    #[default]
    Private,
    /// `"public"`: any user may reuse it.
    Public,
}

impl CacheScope {
    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            CacheScope::Private => "private",
            CacheScope::Public => "public",
        }
    }
}

/// One cache hint: `ttlMs` and `cacheScope`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheHint {
    /// How long the result may be reused, in milliseconds (`0`: revalidate every time).
    pub ttl_ms: u64,
    /// Who may reuse it.
    pub scope: CacheScope,
}

/// The cache hints served per method (`tools/list`, `prompts/list`, `resources/list`,
/// `resources/templates/list`, `resources/read`, `server/discover`, and the skills
/// extension's `skills/list`, `skills/get` and `resources/directory/read`); every one is
/// `{ttlMs: 0, cacheScope: "private"}` unless set.
///
/// ```
/// use wymcp::protocol::stateless::{CacheHint, CacheHints, CacheScope};
///
/// let hints = CacheHints::default()
///     .set("tools/list", CacheHint { ttl_ms: 60_000, scope: CacheScope::Public });
/// assert_eq!(hints.get("tools/list").unwrap().ttl_ms, 60_000);
/// assert_eq!(hints.get("prompts/list").unwrap().ttl_ms, 0);
/// assert!(hints.get("tools/call").is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CacheHints {
    overrides: Vec<(&'static str, CacheHint)>,
}

/// The methods whose results carry cache hints.
pub const CACHED_METHODS: [&str; 9] = [
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "server/discover",
    "skills/list",
    "skills/get",
    "resources/directory/read",
];

impl CacheHints {
    /// Sets the hint of `method`; a method outside [`CACHED_METHODS`] is ignored.
    #[must_use]
    pub fn set(mut self, method: &str, hint: CacheHint) -> Self {
        if let Some(&known) = CACHED_METHODS.iter().find(|m| **m == method) {
            self.overrides.retain(|(m, _)| *m != known);
            self.overrides.push((known, hint));
        }
        self
    }

    /// The hint `method`'s results carry; `None` for methods without one.
    pub fn get(&self, method: &str) -> Option<CacheHint> {
        if !CACHED_METHODS.contains(&method) {
            return None;
        }
        Some(
            self.overrides
                .iter()
                .find(|(m, _)| *m == method)
                .map_or_else(CacheHint::default, |(_, hint)| *hint),
        )
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Envelope, decode_param_header};
    use crate::ProtocolVersion;

    #[test]
    fn the_envelope_is_read_from_meta() {
        let params = json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/logLevel": "info"
        }});
        let mut params = params;
        let envelope = Envelope::parse(Some(&mut params)).expect("an envelope");
        assert_eq!(envelope.requested(), "2026-07-28");
        assert_eq!(
            envelope.version().expect("served"),
            ProtocolVersion::V2026_07_28
        );
        assert!(Envelope::parse(Some(&mut json!({}))).is_err());
        let mut half = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "c"}}});
        let before = half.clone();
        assert!(Envelope::parse(Some(&mut half)).is_err());
        assert_eq!(
            half, before,
            "a refused envelope leaves params as they were"
        );
    }

    #[test]
    fn a_param_header_is_literal_unless_wrapped_in_base64() {
        assert_eq!(decode_param_header("Hello").as_deref(), Some("Hello"));
        assert_eq!(
            decode_param_header("=?base64?SGVsbG8=?=").as_deref(),
            Some("Hello")
        );
        assert_eq!(decode_param_header("=?base64?SGVsbG8?="), None); // bad padding
        assert_eq!(decode_param_header("=?base64?SGV$bG8=?="), None); // outside the alphabet
        assert_eq!(
            decode_param_header("=?base64?abc").as_deref(),
            Some("=?base64?abc")
        );
    }
}
