//! The `requestState` kept in this process (what a build without the `sealed-state` feature
//! serves: a stdio-only server, one process serving the one client on its pipe): the payload stays in a
//! bounded store, and the client echoes an opaque handle, `k1.` and 22 base64url characters
//! (16 bytes from the OS's CSPRNG), that names it.
//!
//! The store keeps at most its capacity of states (the oldest dropped for a new one past it;
//! expired ones dropped as new ones come); [`Codec`](super::state::Codec) bounds each one's
//! size and lifetime as it bounds a sealed one. A state is not consumed by its retry: like a
//! sealed one, it opens until it expires (or is dropped).

use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasher as _;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::state::{OpenError, Payload, now_ms};

const PREFIX: &str = "k1.";
/// The handle's random bytes.
const HANDLE_BYTES: usize = 16;
/// The handle's length: the prefix and 16 bytes in base64url without padding.
const HANDLE_LEN: usize = PREFIX.len() + (HANDLE_BYTES * 4).div_ceil(3);

/// The store of states issued by one server (clones share it).
#[derive(Debug, Clone)]
#[cfg_attr(feature = "sealed-state", allow(dead_code))]
pub(crate) struct Kept {
    store: Arc<Mutex<Store>>,
    capacity: usize,
}

#[derive(Debug, Default)]
struct Store {
    /// By handle (server-made random ids: a fast seeded hash).
    states: HashMap<String, Payload, foldhash::fast::RandomState>,
    /// Handles in the order issued, the oldest first.
    order: VecDeque<String>,
}

#[cfg_attr(feature = "sealed-state", allow(dead_code))]
impl Kept {
    /// A store keeping at most `capacity` states (at least one).
    pub(crate) fn new(capacity: usize) -> Self {
        Kept {
            store: Arc::default(),
            capacity: capacity.max(1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Store> {
        // Every write leaves the store whole: recover it after a panic elsewhere.
        self.store.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A kept state counts its JSON's length against the size bound.
    pub(crate) fn size_of(json_len: usize) -> usize {
        json_len
    }

    /// A 128-bit digest of `text` under two keys drawn once per process, hex: the binding is
    /// compared here only, so it needs no cryptographic hash.
    pub(crate) fn digest(text: &[u8]) -> String {
        static KEYS: OnceLock<[foldhash::quality::FixedState; 2]> = OnceLock::new();
        let keys = KEYS.get_or_init(|| {
            [(); 2].map(|()| {
                foldhash::quality::FixedState::with_seed(u64::from_ne_bytes(crate::random::bytes()))
            })
        });
        format!(
            "{:016x}{:016x}",
            keys[0].hash_one(text),
            keys[1].hash_one(text)
        )
    }

    /// Keeps `payload` under a fresh handle, dropping expired states and, past the capacity,
    /// the oldest.
    pub(crate) fn issue(&self, payload: &Payload) -> Option<String> {
        let mut handle = String::with_capacity(HANDLE_LEN);
        handle.push_str(PREFIX);
        URL_SAFE_NO_PAD.encode_string(crate::random::bytes::<HANDLE_BYTES>(), &mut handle);
        let now = now_ms();
        let mut store = self.lock();
        let Store { states, order } = &mut *store;
        // States share one lifetime: the oldest expire first.
        while let Some(oldest) = order.front() {
            let expired = states.get(oldest).is_none_or(|state| now >= state.exp);
            if !expired && order.len() < self.capacity {
                break;
            }
            if let Some(dropped) = order.pop_front() {
                states.remove(&dropped);
            }
        }
        states.insert(handle.clone(), payload.clone());
        order.push_back(handle.clone());
        Some(handle)
    }

    /// The state `token` names (its lifetime is the codec's to check).
    pub(crate) fn open(&self, token: &str) -> Result<Payload, OpenError> {
        if token.len() != HANDLE_LEN || !token.starts_with(PREFIX) {
            return Err(OpenError::Malformed);
        }
        self.lock()
            .states
            .get(token)
            .cloned()
            .ok_or(OpenError::Unknown {
                capacity: self.capacity,
            })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::mrtr::state::{Carrier, Codec, DEFAULT_LIFETIME, DEFAULT_MAX_SIZE};
    use serde_json::{Map, json};
    use std::time::Duration;

    fn payload(tag: &str) -> Payload {
        let now = now_ms();
        Payload {
            m: "tools/call".into(),
            t: tag.into(),
            a: Kept::digest(b"{}"),
            p: None,
            iat: now,
            exp: now + 60_000,
            r: 1,
            ans: Map::new(),
            ask: vec!["user_name".into()],
            s: Some(json!({"step": 2})),
        }
    }

    #[test]
    fn a_handle_opens_its_state_until_it_expires() {
        let codec = Codec::new(
            Carrier::Kept(Kept::new(4)),
            Duration::from_secs(60),
            DEFAULT_MAX_SIZE,
        );
        let state = payload("echo");
        let handle = codec.issue(&state).unwrap();
        assert_eq!(handle.len(), HANDLE_LEN);
        assert!(handle.starts_with("k1."));
        assert_eq!(codec.open(&handle, state.iat).unwrap(), state);
        // Opened twice: a retry does not consume it.
        assert_eq!(codec.open(&handle, state.iat).unwrap(), state);
        assert_eq!(codec.open(&handle, state.exp), Err(OpenError::Expired));
        assert_ne!(
            codec.issue(&state).unwrap(),
            handle,
            "a fresh handle each time"
        );
    }

    #[test]
    fn forged_and_foreign_handles_are_refused() {
        let kept = || {
            Codec::new(
                Carrier::Kept(Kept::new(256)),
                DEFAULT_LIFETIME,
                DEFAULT_MAX_SIZE,
            )
        };
        let codec = kept();
        let handle = codec.issue(&payload("echo")).unwrap();
        let mut forged = handle.clone().into_bytes();
        forged[5] = if forged[5] == b'A' { b'B' } else { b'A' };
        let forged = String::from_utf8(forged).unwrap();
        let unknown = OpenError::Unknown { capacity: 256 };
        assert_eq!(codec.open(&forged, 0), Err(unknown));
        // Another server's store (another process, or a restart) holds none of ours.
        assert_eq!(kept().open(&handle, 0), Err(unknown));
        for malformed in ["", "k1.", "v2.abc", &format!("{handle}x"), &handle[1..]] {
            assert_eq!(
                codec.open(malformed, 0),
                Err(OpenError::Malformed),
                "{malformed}"
            );
        }
        assert_eq!(
            unknown.to_string(),
            "this server holds no such requestState (never issued, or dropped: it keeps the newest 256)"
        );
    }

    #[test]
    fn past_the_capacity_the_oldest_is_dropped() {
        let codec = Codec::new(
            Carrier::Kept(Kept::new(2)),
            DEFAULT_LIFETIME,
            DEFAULT_MAX_SIZE,
        );
        let first = codec.issue(&payload("1")).unwrap();
        let second = codec.issue(&payload("2")).unwrap();
        let third = codec.issue(&payload("3")).unwrap();
        assert_eq!(
            codec.open(&first, 0),
            Err(OpenError::Unknown { capacity: 2 })
        );
        assert_eq!(codec.open(&second, 0).unwrap().t, "2");
        assert_eq!(codec.open(&third, 0).unwrap().t, "3");
    }

    #[test]
    fn expired_states_are_dropped_as_new_ones_come() {
        let codec = Codec::new(
            Carrier::Kept(Kept::new(8)),
            Duration::ZERO,
            DEFAULT_MAX_SIZE,
        );
        let mut old = payload("old");
        old.exp = old.iat;
        let handle = codec.issue(&old).unwrap();
        codec.issue(&payload("new")).unwrap();
        assert_eq!(
            codec.open(&handle, 0),
            Err(OpenError::Unknown { capacity: 8 })
        );
    }

    #[test]
    fn the_size_bound_counts_the_json() {
        let codec = Codec::new(Carrier::Kept(Kept::new(8)), DEFAULT_LIFETIME, 300);
        let mut big = payload("echo");
        big.s = Some(json!("x".repeat(400)));
        let json_len = serde_json::to_vec(&big).unwrap().len();
        let err = codec.issue(&big).unwrap_err();
        assert_eq!((err.size, err.limit), (json_len, 300));
    }

    #[test]
    fn the_digest_is_stable_and_keyed() {
        assert_eq!(Kept::digest(b"{\"a\":1}"), Kept::digest(b"{\"a\":1}"));
        assert_ne!(Kept::digest(b"{\"a\":1}"), Kept::digest(b"{\"a\":2}"));
        assert_eq!(Kept::digest(b"").len(), 32);
    }
}
