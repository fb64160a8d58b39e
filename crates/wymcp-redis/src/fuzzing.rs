//! **Not API.** The record codec the fuzz targets in `fuzz/` drive, behind the non-default
//! `fuzzing` feature (`docs/fuzzing.md`): what a node decodes of what another node, or anyone
//! with write access to Redis, stored. Never enable the feature in a program.

use wymcp::backend::SessionRecord;

/// A session record as a node decodes it from the JSON text Redis holds, or why not.
pub fn decode_session_record(text: &str) -> Result<SessionRecord, String> {
    crate::record::decode(text).map_err(|e| e.to_string())
}

/// A session record as a node stores it in Redis.
pub fn encode_session_record(record: &SessionRecord) -> Result<String, String> {
    crate::record::encode(record).map_err(|e| e.to_string())
}
