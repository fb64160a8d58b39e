//! A [`SessionRecord`] as the JSON text Redis keeps.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use wymcp::ProtocolVersion;
use wymcp::backend::{SessionRecord, StoreError};
use wymcp::protocol::LogLevel;

#[derive(Serialize, Deserialize)]
struct Stored {
    id: String,
    version: String,
    capabilities: Value,
    client_info: Value,
    initialized: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    log_level: Option<String>,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    assigns: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    subject: Option<String>,
}

/// The record as JSON text.
pub(crate) fn encode(record: &SessionRecord) -> Result<String, StoreError> {
    let stored = Stored {
        id: record.id.clone(),
        version: record.version.as_str().to_owned(),
        capabilities: (*record.client_capabilities).clone(),
        client_info: (*record.client_info).clone(),
        initialized: record.initialized,
        log_level: record.log_level.map(|l| l.as_str().to_owned()),
        assigns: record.assigns.clone(),
        subject: record.subject.clone(),
    };
    serde_json::to_string(&stored)
        .map_err(|e| StoreError::unavailable(format!("session record: {e}")))
}

/// The record the JSON text is; an error names what is wrong (a record written by another
/// version of wymcp, say).
pub(crate) fn decode(text: &str) -> Result<SessionRecord, StoreError> {
    let refused =
        |what: String| StoreError::unavailable(format!("session record in Redis: {what}"));
    let stored: Stored = serde_json::from_str(text).map_err(|e| refused(e.to_string()))?;
    let version: ProtocolVersion = stored
        .version
        .parse()
        .map_err(|_| refused(format!("unknown protocol version {:?}", stored.version)))?;
    let log_level = match stored.log_level.as_deref() {
        None => None,
        Some(name) => {
            Some(LogLevel::parse(name).ok_or_else(|| refused(format!("log level {name:?}")))?)
        }
    };
    Ok(SessionRecord {
        id: stored.id,
        version,
        client_capabilities: Arc::new(stored.capabilities),
        client_info: Arc::new(stored.client_info),
        initialized: stored.initialized,
        log_level,
        assigns: stored.assigns,
        subject: stored.subject,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_record_survives_the_round_trip() {
        let mut assigns = Map::new();
        assigns.insert("cart".into(), json!([1, 2]));
        let record = SessionRecord {
            id: "s1".into(),
            version: ProtocolVersion::LATEST_SESSION_ERA,
            client_capabilities: Arc::new(json!({"sampling": {}})),
            client_info: Arc::new(json!({"name": "c", "version": "1"})),
            initialized: true,
            log_level: Some(LogLevel::Warning),
            assigns,
            subject: Some("alice".into()),
        };
        let text = encode(&record).unwrap();
        assert_eq!(decode(&text).unwrap(), record);
    }

    #[test]
    fn a_foreign_record_is_an_error_that_says_why() {
        let text = r#"{"id":"s","version":"1999-01-01","capabilities":{},"client_info":{},"initialized":true}"#;
        let err = decode(text).unwrap_err();
        assert_eq!(
            err.to_string(),
            "session store error: session record in Redis: unknown protocol version \"1999-01-01\""
        );
    }
}
