//! The `requestState`: what it carries ([`Payload`]), why one is refused ([`OpenError`]) or not
//! issued ([`TooLarge`]), and the one [`Codec`] that issues and opens it, bounded in size and
//! lifetime. How the payload travels is the codec's choice, made by the build:
//!
//! * with the `sealed-state` feature (which `http` enables), sealed
//!   ([`seal`](super::seal)): encrypted and authenticated, the client carries it, any node
//!   holding the keys opens it;
//! * without it (a stdio-only build: one process, one client), kept in this process
//!   ([`kept`](super::kept)): the client carries an opaque random handle to it.
//!
//! Everything else of a round (what is bound, what is asked, what a retry may answer) is the
//! same whichever codec serves it.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// How long a `requestState` stays valid unless configured: 10 minutes.
pub const DEFAULT_LIFETIME: Duration = Duration::from_secs(600);
/// The largest `requestState` issued unless configured: 64 KiB.
pub const DEFAULT_MAX_SIZE: usize = 64 * 1024;
/// How many states a build without the `sealed-state` feature keeps in the process unless
/// configured: 256 (the oldest is dropped for a new one past it).
pub const DEFAULT_CAPACITY: usize = 256;

/// What a `requestState` binds and carries (short field names: a sealed one travels on every
/// retry).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Payload {
    /// The method it was issued for.
    pub(crate) m: String,
    /// The target: tool name, prompt name or resource URI.
    pub(crate) t: String,
    /// A digest of the canonical arguments.
    pub(crate) a: String,
    /// A digest of the authenticated principal, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) p: Option<String>,
    /// Issued at, milliseconds since the Unix epoch.
    pub(crate) iat: u64,
    /// Expires at (exclusive), milliseconds since the Unix epoch.
    pub(crate) exp: u64,
    /// The round that issued it (1 for the first `input_required`).
    pub(crate) r: u32,
    /// Every answer gathered so far, by input key.
    pub(crate) ans: Map<String, Value>,
    /// The keys asked in the issuing round.
    pub(crate) ask: Vec<String>,
    /// The tool's own value ([`Context::set_request_state`](crate::Context::set_request_state)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) s: Option<Value>,
}

/// Why a state did not open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum OpenError {
    #[error("it is not a requestState this server issued")]
    Malformed,
    #[cfg(feature = "sealed-state")]
    #[error("its integrity check failed")]
    Tampered,
    /// A handle of the right form that the process does not hold: never issued, or dropped
    /// for newer ones past the store's capacity.
    #[error(
        "this server holds no such requestState (never issued, or dropped: it keeps the newest {capacity})"
    )]
    Unknown { capacity: usize },
    #[error("it has expired")]
    Expired,
    #[error("it was issued for another request")]
    OtherRequest,
}

/// Why a state was not issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the requestState would take {size} bytes, over the {limit}-byte bound")]
pub(crate) struct TooLarge {
    pub(crate) size: usize,
    pub(crate) limit: usize,
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// How the states travel: sealed, or kept here behind a handle. The build picks one (see the
/// module's documentation); the store also builds with `sealed-state`, where only its tests use
/// it.
#[derive(Debug, Clone)]
pub(crate) enum Carrier {
    #[cfg(feature = "sealed-state")]
    Sealed(super::seal::Sealer),
    #[cfg_attr(feature = "sealed-state", allow(dead_code))]
    Kept(super::kept::Kept),
}

/// Issues and opens the server's states, with its lifetime and size bound (one per server,
/// made at `build()`; clones share the keys or the store).
#[derive(Debug, Clone)]
pub(crate) struct Codec {
    carrier: Carrier,
    lifetime: Duration,
    max_size: usize,
}

impl Default for Codec {
    fn default() -> Self {
        #[cfg(feature = "sealed-state")]
        let carrier = Carrier::Sealed(super::seal::Sealer::new(
            &super::seal::RequestStateKeys::random(),
        ));
        #[cfg(not(feature = "sealed-state"))]
        let carrier = Carrier::Kept(super::kept::Kept::new(DEFAULT_CAPACITY));
        Codec::new(carrier, DEFAULT_LIFETIME, DEFAULT_MAX_SIZE)
    }
}

impl Codec {
    pub(crate) fn new(carrier: Carrier, lifetime: Duration, max_size: usize) -> Self {
        Codec {
            carrier,
            lifetime,
            max_size,
        }
    }

    pub(crate) fn max_size(&self) -> usize {
        self.max_size
    }

    /// When a state issued at `now` expires.
    pub(crate) fn expiry(&self, now: u64) -> u64 {
        let lifetime = u64::try_from(self.lifetime.as_millis()).unwrap_or(u64::MAX);
        now.saturating_add(lifetime)
    }

    /// The size a payload whose JSON takes `json_len` bytes counts against the bound: its
    /// sealed form's length, or (kept) its JSON's.
    pub(crate) fn size_of(&self, json_len: usize) -> usize {
        match &self.carrier {
            #[cfg(feature = "sealed-state")]
            Carrier::Sealed(_) => super::seal::Sealer::size_of(json_len),
            Carrier::Kept(_) => super::kept::Kept::size_of(json_len),
        }
    }

    /// The state of `payload` as the client will echo it, or [`TooLarge`] over the bound.
    pub(crate) fn issue(&self, payload: &Payload) -> Result<String, TooLarge> {
        let json = serde_json::to_vec(payload).unwrap_or_default();
        let size = self.size_of(json.len());
        let too_large = TooLarge {
            size,
            limit: self.max_size,
        };
        if size > self.max_size {
            return Err(too_large);
        }
        let issued = match &self.carrier {
            #[cfg(feature = "sealed-state")]
            Carrier::Sealed(sealer) => sealer.issue(&json),
            Carrier::Kept(kept) => kept.issue(payload),
        };
        issued.ok_or(too_large)
    }

    /// The payload of the state `token` at `now` (milliseconds), or why it does not open:
    /// unreadable or altered, unknown, or expired.
    pub(crate) fn open(&self, token: &str, now: u64) -> Result<Payload, OpenError> {
        // A state longer than any this server issues is refused before any work.
        if token.len() > self.max_size {
            return Err(OpenError::Malformed);
        }
        let payload = match &self.carrier {
            #[cfg(feature = "sealed-state")]
            Carrier::Sealed(sealer) => sealer.open(token)?,
            Carrier::Kept(kept) => kept.open(token)?,
        };
        if now >= payload.exp {
            return Err(OpenError::Expired);
        }
        Ok(payload)
    }

    /// A digest of a canonical JSON text, as a state's binding holds it: SHA-256 in a build
    /// whose states travel (the client must not learn the arguments from one, nor make another
    /// request match it), a keyed 128-bit hash, seeded per process, in one whose states stay
    /// here (no cryptographic hash built for it).
    pub(crate) fn digest(text: &[u8]) -> String {
        #[cfg(feature = "sealed-state")]
        return super::seal::Sealer::digest(text);
        #[cfg(not(feature = "sealed-state"))]
        return super::kept::Kept::digest(text);
    }
}
