//! The era a connection speaks, chosen at connect: MCP 2026-07-28 stateless where the server
//! offers it (`server/discover`), else `initialize` with the newest session-era revision both
//! speak; and what each era puts on a request (the `_meta` envelope and headers, or the
//! session's headers).

use reqwest::header::HeaderMap;
use serde_json::{Map, Value, json};

use crate::protocol::ProtocolVersion;
use crate::protocol::headers::{METHOD, NAME, PROTOCOL_VERSION, SESSION_ID};
use crate::protocol::stateless::{CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, PROTOCOL_VERSION_KEY};

use super::builder::Settings;
use super::http::header;
use super::link::Link;
use super::{ClientError, Malformed};

/// The negotiated era.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Era {
    /// 2026-07-28 and later: every request carries the envelope; no session.
    Stateless(ProtocolVersion),
    /// `initialize` done at this revision; the session's id when the server gave one.
    Session {
        version: ProtocolVersion,
        session_id: Option<String>,
    },
}

impl Era {
    pub(crate) fn version(&self) -> ProtocolVersion {
        match self {
            Era::Stateless(version) | Era::Session { version, .. } => *version,
        }
    }

    /// The request's body, with the envelope in `params._meta` in the stateless era.
    pub(crate) fn body(
        &self,
        settings: &Settings,
        id: Option<i64>,
        method: &str,
        mut params: Map<String, Value>,
    ) -> Value {
        if let Era::Stateless(version) = self {
            let meta = params
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(meta) = meta.as_object_mut() {
                meta.insert(PROTOCOL_VERSION_KEY.to_owned(), json!(version.as_str()));
                // A request declaring capabilities of its own keeps them (`Client::request`;
                // a task-augmented call declares the client's with the extension beside them).
                meta.entry(CLIENT_CAPABILITIES_KEY)
                    .or_insert_with(|| settings.capabilities.clone());
                meta.insert(CLIENT_INFO_KEY.to_owned(), client_info(settings));
            }
        }
        let mut body = json!({"jsonrpc": "2.0", "method": method, "params": params});
        if let (Some(id), Some(obj)) = (id, body.as_object_mut()) {
            obj.insert("id".to_owned(), json!(id));
        }
        body
    }

    /// The request's headers: `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` in the
    /// stateless era; `Mcp-Session-Id` and (from 2025-06-18) `MCP-Protocol-Version` in a
    /// session.
    pub(crate) fn headers(
        &self,
        method: &str,
        name: Option<&str>,
    ) -> Result<HeaderMap, ClientError> {
        let mut headers = HeaderMap::new();
        match self {
            Era::Stateless(version) => {
                header(&mut headers, PROTOCOL_VERSION, version.as_str())?;
                header(&mut headers, METHOD, method)?;
                if let Some(name) = name {
                    header(&mut headers, NAME, name)?;
                }
            }
            Era::Session {
                version,
                session_id,
            } => {
                if let Some(id) = session_id {
                    header(&mut headers, SESSION_ID, id)?;
                }
                if version.has_version_header() {
                    header(&mut headers, PROTOCOL_VERSION, version.as_str())?;
                }
            }
        }
        Ok(headers)
    }
}

/// Adds the capabilities of `own` to `capabilities`: each member, and each of `extensions`.
pub(super) fn extend(capabilities: &mut Value, own: Map<String, Value>) {
    let Some(all) = capabilities.as_object_mut() else {
        return;
    };
    for (key, value) in own {
        match (all.get_mut(&key), value) {
            (Some(Value::Object(ours)), Value::Object(theirs)) if key == "extensions" => {
                ours.extend(theirs);
            }
            (_, value) => {
                all.insert(key, value);
            }
        }
    }
}

/// The era the server and the client share, and the server's handshake result (`server/discover`'s
/// or `initialize`'s).
pub(crate) async fn negotiate(conn: &Link) -> Result<(Era, Value), ClientError> {
    let versions = &conn.settings().versions;
    let mut offered = None;
    if let Some(&stateless) = versions.iter().find(|v| v.is_stateless()) {
        match discover(conn, stateless).await {
            Ok((Some(era), result)) => return Ok((era, result)),
            Ok((None, result)) => offered = Some(result["supportedVersions"].to_string()),
            // Credentials refused are refused for `initialize` too; a server that cannot be
            // reached cannot be initialized either.
            Err(
                err @ ClientError::Status {
                    status: 401 | 403, ..
                },
            ) => return Err(err),
            // A session-era server answers `server/discover` with an error or a refusal (a
            // 400 for the missing session, a 404 or `-32601` for the unknown method): fall
            // back to `initialize`.
            Err(
                ClientError::Rpc { .. }
                | ClientError::Status { .. }
                | ClientError::Malformed { .. },
            ) => {}
            Err(other) => return Err(other),
        }
    }
    match versions.iter().find(|v| !v.is_stateless()) {
        Some(&version) => initialize(conn, version).await,
        None => Err(ClientError::UnsupportedVersion {
            offered: offered.unwrap_or_default(),
        }),
    }
}

/// `server/discover` at `version`: the newest stateless revision both speak, when there is one.
async fn discover(
    conn: &Link,
    version: ProtocolVersion,
) -> Result<(Option<Era>, Value), ClientError> {
    const DISCOVER: &str = "server/discover";
    let probe = Era::Stateless(version);
    let body = probe.body(conn.settings(), Some(0), DISCOVER, Map::new());
    let answer = conn
        .send(DISCOVER, Some(0), &body, probe.headers(DISCOVER, None)?)
        .await?;
    let supported: Vec<ProtocolVersion> = answer.result["supportedVersions"]
        .as_array()
        .ok_or(ClientError::Malformed {
            method: DISCOVER.to_owned(),
            what: Malformed::ResultShape,
        })?
        .iter()
        .filter_map(|v| v.as_str()?.parse().ok())
        .collect();
    let shared = conn
        .settings()
        .versions
        .iter()
        .find(|v| v.is_stateless() && supported.contains(v));
    Ok((shared.map(|v| Era::Stateless(*v)), answer.result))
}

/// `initialize` at `version`, then `notifications/initialized` in the session it opened.
async fn initialize(conn: &Link, version: ProtocolVersion) -> Result<(Era, Value), ClientError> {
    const INITIALIZE: &str = "initialize";
    let params = json!({
        "protocolVersion": version.as_str(),
        "capabilities": conn.settings().capabilities,
        "clientInfo": client_info(conn.settings()),
    });
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": INITIALIZE, "params": params});
    let answer = conn
        .send(INITIALIZE, Some(0), &body, HeaderMap::new())
        .await?;
    let Some(answered) = answer.result["protocolVersion"].as_str() else {
        return Err(ClientError::Malformed {
            method: INITIALIZE.to_owned(),
            what: Malformed::ResultShape,
        });
    };
    let agreed = answered
        .parse::<ProtocolVersion>()
        .ok()
        .filter(|v| !v.is_stateless() && conn.settings().versions.contains(v))
        .ok_or_else(|| ClientError::UnsupportedVersion {
            offered: answered.to_owned(),
        })?;
    let session_id = answer
        .headers
        .get(SESSION_ID)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let era = Era::Session {
        version: agreed,
        session_id,
    };
    const INITIALIZED: &str = "notifications/initialized";
    let note = era.body(conn.settings(), None, INITIALIZED, Map::new());
    conn.send(INITIALIZED, None, &note, era.headers(INITIALIZED, None)?)
        .await?;
    Ok((era, answer.result))
}

fn client_info(settings: &Settings) -> Value {
    json!({"name": settings.name, "version": settings.version})
}
