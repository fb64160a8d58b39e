//! `initialize`: a new session's record (the negotiated revision, the client's capabilities and
//! info, the caller's identity), the session hooks' say, the session limit, and the
//! `InitializeResult`.

use serde_json::{Map, Value, json};

use super::client_values::ClientValues;
use super::{Class, Core, Identity, Outcome, Refusal, SessionStart};
use crate::Server;
use crate::protocol::{ProtocolVersion, RpcError, negotiate, success};
use crate::session::{SessionRecord, new_session_id};

/// Starts a session from `initialize` request `id`.
pub(super) async fn start(
    core: &Core,
    id: Value,
    params: Option<&Value>,
    identity: Option<&Identity>,
    client: Option<String>,
) -> Result<Outcome, Refusal> {
    check_size(core, &id, params)?;
    let assigns = identity
        .map(|i| Map::from_iter([("identity".to_owned(), i.to_value())]))
        .unwrap_or_default();
    let subject = identity.map(|i| i.principal().to_owned());
    let values = core.sessions().client_values();
    let mut record = new_record(params, assigns, subject, values);
    let version = record.version;
    if let Some(refused) = run_start_hook(core, &mut record, &id, identity).await {
        return Ok(Outcome::Message(super::Answer::Message(refused)));
    }
    let session = record.id.clone();
    let client_info = wymcp_core::bound::echo(&record.client_info.to_string());
    core.sessions()
        .create(record, &id, client.as_deref())
        .await?;
    tracing::info!(
        name: "wymcp.session.start",
        session_id = session.as_str(),
        client_info = %client_info,
        version = version.as_str(),
        "MCP session started"
    );
    Ok(Outcome::Started {
        session,
        message: success(id, initialize_result(core.server(), version)),
    })
}

/// Refuses `initialize` params larger than [`Limits::max_initialize_params`](crate::Limits).
fn check_size(core: &Core, id: &Value, params: Option<&Value>) -> Result<(), Refusal> {
    let max = core.server().limits().max_initialize_params;
    if !params.is_some_and(|p| crate::limits::json_longer_than(p, max)) {
        return Ok(());
    }
    Err(Refusal::new(
        Class::Invalid,
        id.clone(),
        RpcError::invalid_params_reason(format!(
            "initialize params refused: larger than the limit of {max} bytes \
             (Limits::max_initialize_params)"
        )),
    ))
}

/// Runs the session hooks' start hook on a record about to be created: its assigns join the
/// record's; a refusal or a panic is the error response to send instead (`None`: go on).
async fn run_start_hook(
    core: &Core,
    record: &mut SessionRecord,
    id: &Value,
    identity: Option<&Identity>,
) -> Option<Value> {
    let hooks = core.sessions().hooks()?;
    let start = SessionStart {
        session_id: &record.id,
        version: record.version,
        client_info: &record.client_info,
        client_capabilities: &record.client_capabilities,
        identity,
    };
    let started = std::panic::AssertUnwindSafe(hooks.on_start(start));
    let server = core.server().info().name.as_str();
    let request_id = wymcp_core::bound::echo(&id.to_string());
    match futures_util::FutureExt::catch_unwind(started).await {
        Ok(Ok(assigns)) => {
            let kept = assigns
                .into_iter()
                .filter(|(key, _)| !is_internal_assign(key));
            record.assigns.extend(kept);
            None
        }
        Ok(Err(reason)) => {
            tracing::warn!(
                name: "wymcp.server.reject",
                server,
                session_id = record.id.as_str(),
                reason = %wymcp_core::bound::echo(&reason),
                request_id = %request_id,
                "MCP session refused by the server's hook"
            );
            let data = Some(json!({ "reason": reason }));
            let error = RpcError::new(RpcError::INTERNAL_ERROR, "Internal error", data);
            Some(crate::protocol::failure(id.clone(), &error))
        }
        Err(payload) => {
            let fault = crate::dispatch::fault::Fault::from_panic(payload.as_ref());
            tracing::error!(
                name: "wymcp.server.error",
                server,
                session_id = record.id.as_str(),
                exception = "panic",
                error = %fault.bounded_message().escape_debug(),
                request_id = %request_id,
                "the server's session hook panicked"
            );
            let error = RpcError::new(RpcError::INTERNAL_ERROR, "Internal error", None);
            Some(crate::protocol::failure(id.clone(), &error))
        }
    }
}

/// Whether an assign key is framework-internal (`wymcp`, `wymcp_*`): such keys from upstream
/// code (auth, hooks) never reach a tool's assigns.
fn is_internal_assign(key: &str) -> bool {
    key == "wymcp" || key.starts_with("wymcp_")
}

/// A new session's record from `initialize`'s params: negotiated revision, client
/// capabilities and info (`{}` when absent or not objects; shared through `values` with the
/// sessions that sent equal ones), not yet initialized.
fn new_record(
    params: Option<&Value>,
    assigns: Map<String, Value>,
    subject: Option<String>,
    values: &ClientValues,
) -> SessionRecord {
    let version: ProtocolVersion = negotiate(params.and_then(|p| p.get("protocolVersion")));
    let empty = Value::Object(Map::new());
    let field = |name: &str| {
        let value = params
            .and_then(|p| p.get(name))
            .filter(|v| v.is_object())
            .unwrap_or(&empty);
        values.share(value)
    };
    SessionRecord {
        id: new_session_id(),
        version,
        client_capabilities: field("capabilities"),
        client_info: field("clientInfo"),
        initialized: false,
        log_level: None,
        assigns,
        subject,
    }
}

/// The `InitializeResult` for `version`: the negotiated revision, the capabilities the server
/// has (tools with `listChanged` and logging always; resources, prompts and completions only
/// when configured), `serverInfo` gated by revision, and `instructions` when configured.
pub(crate) fn initialize_result(server: &Server, version: ProtocolVersion) -> Value {
    let mut result = Map::new();
    result.insert("protocolVersion".to_owned(), json!(version.as_str()));
    result.insert("capabilities".to_owned(), server.capabilities(version));
    result.insert("serverInfo".to_owned(), server.info().to_value(version));
    if let Some(instructions) = server.instructions() {
        result.insert("instructions".to_owned(), json!(instructions));
    }
    Value::Object(result)
}
