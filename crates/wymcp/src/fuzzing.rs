//! **Not API.** Crate internals the fuzz targets in `fuzz/` drive, behind the non-default
//! `fuzzing` feature (`docs/fuzzing.md`). Nothing here is stable; never enable the feature in
//! a program.
//!
//! Everything else the targets need (the HTTP service, stdio, templates, `build()`, the gates)
//! is public API: only the `requestState` codec is reached through here.

use std::time::Duration;

use serde_json::{Map, Value};

use crate::mrtr::RequestStateKeys;
use crate::mrtr::seal::Sealer;
use crate::mrtr::state::{Carrier, Codec, Payload};

/// The `requestState` codec of a server, with one key: seals sample payloads and opens tokens.
#[derive(Debug, Clone)]
pub struct StateCodec(Codec);

/// The fields of a sample payload (the codec's own are crate-private).
#[derive(Debug, Clone, Default)]
pub struct Sample {
    /// The method it is issued for.
    pub method: String,
    /// The tool name, prompt name or resource URI.
    pub target: String,
    /// The arguments' digest.
    pub arguments: String,
    /// The principal's digest.
    pub principal: Option<String>,
    /// Issued at (ms).
    pub issued: u64,
    /// The round.
    pub round: u32,
    /// The answers gathered so far.
    pub answers: Map<String, Value>,
    /// The keys asked.
    pub asked: Vec<String>,
    /// The tool's own value.
    pub state: Option<Value>,
}

impl StateCodec {
    /// A codec sealing with `key` (at least 32 bytes), states living `lifetime`, at most
    /// `max_size` bytes.
    pub fn new(key: &[u8], lifetime: Duration, max_size: usize) -> Option<Self> {
        let keys = RequestStateKeys::new(key.to_vec()).ok()?;
        Some(StateCodec(Codec::new(
            Carrier::Sealed(Sealer::new(&keys)),
            lifetime,
            max_size,
        )))
    }

    /// `sample` sealed (expiring after the codec's lifetime), or `None` over the size bound.
    pub fn seal(&self, sample: Sample) -> Option<String> {
        let payload = Payload {
            m: sample.method,
            t: sample.target,
            a: sample.arguments,
            p: sample.principal,
            iat: sample.issued,
            exp: self.0.expiry(sample.issued),
            r: sample.round,
            ans: sample.answers,
            ask: sample.asked,
            s: sample.state,
        };
        self.0.issue(&payload).ok()
    }

    /// Whether `token` opens at `now` (ms): `Ok` with the payload's JSON, or why not.
    pub fn open(&self, token: &str, now: u64) -> Result<Value, String> {
        self.0
            .open(token, now)
            .map(|payload| serde_json::to_value(payload).unwrap_or(Value::Null))
            .map_err(|e| e.to_string())
    }
}

/// The client's SSE reader fed `chunks` in order, with events of at most `max_event` bytes:
/// every event's data in order, `None` for an event dropped for being over the bound.
#[cfg(feature = "client")]
pub fn sse_events(chunks: &[&[u8]], max_event: usize) -> Vec<Option<Vec<u8>>> {
    use crate::client::sse::{Event, SseReader};
    let mut reader = SseReader::new(max_event);
    let mut events = Vec::new();
    for chunk in chunks {
        reader.feed(chunk, |event| {
            events.push(match event {
                Event::Data(data) => Some(data),
                Event::TooLarge => None,
            });
            true
        });
    }
    events
}

/// The key ids of the keys `JwtAuth` takes from a JWKS document `body` (the default
/// algorithms allowed), or why the document was refused.
#[cfg(feature = "jwt")]
pub fn jwks_key_ids(body: &[u8]) -> Result<Vec<Option<String>>, String> {
    let allowed = crate::transport::http::jwt::DEFAULT_ALGORITHMS;
    crate::transport::http::jwt::parse_jwks_for_fuzzing(body, &allowed)
        .map(|keys| keys.into_iter().map(|k| k.kid).collect())
}
