//! The era a connection speaks, chosen at connect: MCP 2026-07-28 stateless where the server
//! offers it (`server/discover`), else `initialize` with the newest session-era revision both
//! speak; and what each era puts on a request (the `_meta` envelope and headers, or the
//! session's headers).

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};

use crate::protocol::ProtocolVersion;
use crate::protocol::headers::{METHOD, NAME, PROTOCOL_VERSION, SESSION_ID};

use super::builder::Settings;
use super::http::header;
use super::link::Link;
use super::outgoing::{Envelope, Outgoing, client_info};
use super::{ClientError, Malformed, TransportError};

/// The negotiated era.
#[derive(Debug, Clone)]
pub(crate) enum Era {
    /// 2026-07-28 and later: every request carries the envelope (serialized once, at
    /// connect); no session.
    Stateless {
        version: ProtocolVersion,
        envelope: Envelope,
    },
    /// `initialize` done at this revision; the session's id when the server gave one.
    Session {
        version: ProtocolVersion,
        session_id: Option<String>,
    },
}

impl Era {
    pub(crate) fn version(&self) -> ProtocolVersion {
        match self {
            Era::Stateless { version, .. } | Era::Session { version, .. } => *version,
        }
    }

    /// The stateless era at `version`, its envelope that of the client `settings` describe.
    pub(crate) fn stateless(
        version: ProtocolVersion,
        settings: &Settings,
    ) -> Result<Era, ClientError> {
        let envelope = Envelope::new(version, settings).map_err(|e| ClientError::Transport {
            method: "connect".to_owned(),
            source: TransportError::new(e),
        })?;
        Ok(Era::Stateless { version, envelope })
    }

    /// The message of `method` (a request with `id`, or a notification), with `meta` in its
    /// `params._meta`, and the envelope there in the stateless era.
    pub(crate) fn body(
        &self,
        id: Option<i64>,
        method: &str,
        params: &Map<String, Value>,
        meta: &Map<String, Value>,
    ) -> Result<Outgoing, ClientError> {
        let envelope = match self {
            Era::Stateless { envelope, .. } => Some(envelope),
            Era::Session { .. } => None,
        };
        Outgoing::new(id, method, params, meta, envelope).map_err(|e| ClientError::Transport {
            method: method.to_owned(),
            source: TransportError::new(e),
        })
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
            Era::Stateless { version, .. } => {
                headers.insert(
                    HeaderName::from_static(PROTOCOL_VERSION),
                    HeaderValue::from_static(version.as_str()),
                );
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
                    headers.insert(
                        HeaderName::from_static(PROTOCOL_VERSION),
                        HeaderValue::from_static(version.as_str()),
                    );
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
    let probe = Era::stateless(version, conn.settings())?;
    let body = probe.body(Some(0), DISCOVER, &Map::new(), &Map::new())?;
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
    let era = match shared {
        Some(&version) => Some(Era::stateless(version, conn.settings())?),
        None => None,
    };
    Ok((era, answer.result))
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
    let body = Outgoing::value(&body).map_err(|e| ClientError::Transport {
        method: INITIALIZE.to_owned(),
        source: TransportError::new(e),
    })?;
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
    let note = era.body(None, INITIALIZED, &Map::new(), &Map::new())?;
    conn.send(INITIALIZED, None, &note, era.headers(INITIALIZED, None)?)
        .await?;
    Ok((era, answer.result))
}
