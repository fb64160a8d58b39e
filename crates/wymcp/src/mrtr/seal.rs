//! The `requestState` codec: a JSON payload sealed with HMAC-SHA256, bounded in size and
//! lifetime, signed by the newest key and opened by any configured key.
//!
//! Wire form: `v1.<payload>.<tag>`, both parts base64url without padding; the tag is
//! HMAC-SHA256 over `v1.<payload>` (the version prefix is authenticated too).

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use rand::RngCore as _;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::Sha256;

/// The shortest key accepted: 32 bytes, the HMAC-SHA256 block-size guidance.
pub const MIN_KEY_LEN: usize = 32;
/// How long a `requestState` stays valid unless configured: 10 minutes.
pub const DEFAULT_LIFETIME: Duration = Duration::from_secs(600);
/// The largest `requestState` issued unless configured: 64 KiB.
pub const DEFAULT_MAX_SIZE: usize = 64 * 1024;

const PREFIX: &str = "v1.";
/// base64url of a 32-byte tag, unpadded.
const TAG_CHARS: usize = 43;

/// The keys `requestState` is sealed with: the first (newest) signs, every one verifies, so a
/// key can be rotated without refusing the states issued just before.
///
/// ```
/// use wymcp::mrtr::RequestStateKeys;
///
/// let keys = RequestStateKeys::new([7u8; 32])?.also_accept(b"the key we used until yesterday!".to_vec())?;
/// assert_eq!(keys.len(), 2);
/// assert!(RequestStateKeys::new(b"short".to_vec()).is_err());
/// # Ok::<(), wymcp::mrtr::KeyError>(())
/// ```
#[derive(Clone)]
pub struct RequestStateKeys {
    keys: Vec<Arc<[u8]>>,
}

/// Why a key was refused.
///
/// ```
/// use wymcp::mrtr::{KeyError, RequestStateKeys};
///
/// let refused = RequestStateKeys::new(b"too short".to_vec()).unwrap_err();
/// assert_eq!(refused, KeyError::TooShort { len: 9, min: 32 });
/// assert_eq!(refused.to_string(), "a requestState key needs at least 32 bytes, got 9");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The key is shorter than [`MIN_KEY_LEN`] bytes.
    #[error("a requestState key needs at least {min} bytes, got {len}")]
    TooShort {
        /// The key's length.
        len: usize,
        /// The minimum.
        min: usize,
    },
}

impl RequestStateKeys {
    /// Keys whose only (and signing) key is `signing`: at least [`MIN_KEY_LEN`] bytes.
    pub fn new(signing: impl Into<Vec<u8>>) -> Result<Self, KeyError> {
        Ok(RequestStateKeys {
            keys: vec![checked(signing.into())?],
        })
    }

    /// Also accepts states sealed with `older` (never signs with it).
    pub fn also_accept(mut self, older: impl Into<Vec<u8>>) -> Result<Self, KeyError> {
        self.keys.push(checked(older.into())?);
        Ok(self)
    }

    /// One random 32-byte key, made once per [`build`](crate::ServerBuilder::build): states
    /// are valid only on this process, so only a single-node server should rely on it.
    pub fn random() -> Self {
        let mut key = [0u8; 32];
        rand::rng().fill_bytes(&mut key);
        RequestStateKeys {
            keys: vec![Arc::from(key.as_slice())],
        }
    }

    /// How many keys verify.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Always `false`: there is at least the signing key.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    fn signing(&self) -> &[u8] {
        // `new` and `random` always put the signing key first.
        self.keys.first().map_or(&[][..], |k| &k[..])
    }
}

fn checked(key: Vec<u8>) -> Result<Arc<[u8]>, KeyError> {
    if key.len() < MIN_KEY_LEN {
        return Err(KeyError::TooShort {
            len: key.len(),
            min: MIN_KEY_LEN,
        });
    }
    Ok(Arc::from(key))
}

impl std::fmt::Debug for RequestStateKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print key material.
        f.debug_struct("RequestStateKeys")
            .field("keys", &self.keys.len())
            .finish()
    }
}

/// What a `requestState` binds and carries (short field names: it travels on every retry).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Payload {
    /// The method it was issued for.
    pub(crate) m: String,
    /// The target: tool name, prompt name or resource URI.
    pub(crate) t: String,
    /// SHA-256 of the canonical arguments, base64url.
    pub(crate) a: String,
    /// SHA-256 of the authenticated principal, when there is one.
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
    #[error("its integrity check failed")]
    Tampered,
    #[error("it has expired")]
    Expired,
    #[error("it was issued for another request")]
    OtherRequest,
}

/// Why a state was not sealed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the requestState would take {size} bytes, over the {limit}-byte bound")]
pub(crate) struct TooLarge {
    pub(crate) size: usize,
    pub(crate) limit: usize,
}

/// Seals and opens states with the server's keys, lifetime and size bound.
#[derive(Debug, Clone)]
pub(crate) struct Codec {
    keys: RequestStateKeys,
    lifetime: Duration,
    max_size: usize,
}

impl Default for Codec {
    fn default() -> Self {
        Codec::new(
            RequestStateKeys::random(),
            DEFAULT_LIFETIME,
            DEFAULT_MAX_SIZE,
        )
    }
}

type HmacSha256 = Hmac<Sha256>;

fn mac(key: &[u8]) -> HmacSha256 {
    // HMAC takes a key of any length; `KeyInit` still returns a `Result`.
    match HmacSha256::new_from_slice(key) {
        Ok(mac) => mac,
        Err(_) => unreachable!("HMAC accepts keys of every length"),
    }
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl Codec {
    pub(crate) fn new(keys: RequestStateKeys, lifetime: Duration, max_size: usize) -> Self {
        Codec {
            keys,
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

    /// The length of the sealed form of a payload whose JSON takes `json_len` bytes.
    pub(crate) fn sealed_len(json_len: usize) -> usize {
        PREFIX.len() + (json_len * 4).div_ceil(3) + 1 + TAG_CHARS
    }

    /// The sealed form of `payload`, or [`TooLarge`] over the bound.
    pub(crate) fn seal(&self, payload: &Payload) -> Result<String, TooLarge> {
        let json = serde_json::to_vec(payload).unwrap_or_default();
        let size = Self::sealed_len(json.len());
        if size > self.max_size {
            return Err(TooLarge {
                size,
                limit: self.max_size,
            });
        }
        let mut token = String::with_capacity(size);
        token.push_str(PREFIX);
        URL_SAFE_NO_PAD.encode_string(&json, &mut token);
        let mut mac = mac(self.keys.signing());
        mac.update(token.as_bytes());
        let tag = mac.finalize().into_bytes();
        token.push('.');
        URL_SAFE_NO_PAD.encode_string(tag, &mut token);
        Ok(token)
    }

    /// Opens `token` at `now` (milliseconds): its tag verified against every key in constant
    /// time, then its lifetime.
    pub(crate) fn open(&self, token: &str, now: u64) -> Result<Payload, OpenError> {
        // A state longer than any this server issues is refused before any work.
        if token.len() > self.max_size {
            return Err(OpenError::Malformed);
        }
        let (body, tag) = token
            .strip_prefix(PREFIX)
            .and_then(|rest| rest.rsplit_once('.'))
            .ok_or(OpenError::Malformed)?;
        let signed = &token[..PREFIX.len() + body.len()];
        let tag = URL_SAFE_NO_PAD
            .decode(tag)
            .map_err(|_| OpenError::Tampered)?;
        let verified = self.keys.keys.iter().any(|key| {
            let mut mac = mac(key);
            mac.update(signed.as_bytes());
            mac.verify_slice(&tag).is_ok()
        });
        if !verified {
            return Err(OpenError::Tampered);
        }
        let json = URL_SAFE_NO_PAD
            .decode(body)
            .map_err(|_| OpenError::Malformed)?;
        let payload: Payload = serde_json::from_slice(&json).map_err(|_| OpenError::Malformed)?;
        if now >= payload.exp {
            return Err(OpenError::Expired);
        }
        Ok(payload)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn payload(now: u64, exp: u64) -> Payload {
        Payload {
            m: "tools/call".into(),
            t: "echo".into(),
            a: "digest".into(),
            p: None,
            iat: now,
            exp,
            r: 1,
            ans: Map::new(),
            ask: vec!["user_name".into()],
            s: Some(json!({"step": 2})),
        }
    }

    fn codec_of(keys: RequestStateKeys) -> Codec {
        Codec::new(keys, Duration::from_secs(60), DEFAULT_MAX_SIZE)
    }

    #[test]
    fn seal_then_open_gives_the_payload_back() {
        let codec = codec_of(RequestStateKeys::new([1u8; 32]).unwrap());
        let sealed = codec.seal(&payload(1_000, 61_000)).unwrap();
        assert!(sealed.starts_with("v1."));
        assert_eq!(codec.open(&sealed, 1_001).unwrap(), payload(1_000, 61_000));
    }

    #[test]
    fn sealed_len_is_exact() {
        let codec = codec_of(RequestStateKeys::random());
        for n in 0..40 {
            let mut p = payload(0, 10);
            p.t = "x".repeat(n);
            let json = serde_json::to_vec(&p).unwrap();
            assert_eq!(codec.seal(&p).unwrap().len(), Codec::sealed_len(json.len()));
        }
    }

    #[test]
    fn any_change_is_tampering() {
        let codec = codec_of(RequestStateKeys::new([2u8; 32]).unwrap());
        let sealed = codec.seal(&payload(0, 10)).unwrap();
        assert_eq!(
            codec.open(&format!("{sealed}-TAMPERED"), 1),
            Err(OpenError::Tampered)
        );
        // Flip one payload character.
        let mut bytes = sealed.clone().into_bytes();
        bytes[5] = if bytes[5] == b'A' { b'B' } else { b'A' };
        let flipped = String::from_utf8(bytes).unwrap();
        assert_eq!(codec.open(&flipped, 1), Err(OpenError::Tampered));
        assert_eq!(codec.open("v2.abc.def", 1), Err(OpenError::Malformed));
        assert_eq!(codec.open("v1.nodot", 1), Err(OpenError::Malformed));
        assert_eq!(codec.open("", 1), Err(OpenError::Malformed));
        // Signed by another key.
        let other = codec_of(RequestStateKeys::new([3u8; 32]).unwrap());
        assert_eq!(other.open(&sealed, 1), Err(OpenError::Tampered));
    }

    #[test]
    fn a_state_expires_at_its_expiry() {
        let codec = codec_of(RequestStateKeys::random());
        let sealed = codec.seal(&payload(0, 10)).unwrap();
        assert!(codec.open(&sealed, 9).is_ok());
        assert_eq!(codec.open(&sealed, 10), Err(OpenError::Expired));
        assert_eq!(codec.expiry(5), 60_005);
        let zero = Codec::new(RequestStateKeys::random(), Duration::ZERO, DEFAULT_MAX_SIZE);
        assert_eq!(zero.expiry(5), 5, "a zero lifetime is expired when issued");
    }

    #[test]
    fn rotation_newest_signs_any_verifies() {
        let old = [4u8; 32];
        let new = [5u8; 32];
        let before = codec_of(RequestStateKeys::new(old).unwrap());
        let sealed_old = before.seal(&payload(0, 10)).unwrap();
        let rotated = codec_of(
            RequestStateKeys::new(new)
                .unwrap()
                .also_accept(old)
                .unwrap(),
        );
        assert!(rotated.open(&sealed_old, 1).is_ok());
        let sealed_new = rotated.seal(&payload(0, 10)).unwrap();
        assert_eq!(
            before.open(&sealed_new, 1),
            Err(OpenError::Tampered),
            "the newest key signs"
        );
        let retired = codec_of(RequestStateKeys::new(new).unwrap());
        assert_eq!(retired.open(&sealed_old, 1), Err(OpenError::Tampered));
        assert!(retired.open(&sealed_new, 1).is_ok());
    }

    #[test]
    fn the_size_bound_refuses_to_seal_and_to_open() {
        let codec = Codec::new(RequestStateKeys::random(), DEFAULT_LIFETIME, 300);
        let mut big = payload(0, 10);
        big.s = Some(json!("x".repeat(400)));
        let err = codec.seal(&big).unwrap_err();
        assert_eq!(err.limit, 300);
        assert!(err.size > 300);
        let roomy = Codec::new(RequestStateKeys::random(), DEFAULT_LIFETIME, 4096);
        let sealed = roomy.seal(&big).unwrap();
        assert_eq!(codec.open(&sealed, 1), Err(OpenError::Malformed));
    }

    #[test]
    fn keys_are_checked_and_never_printed() {
        assert_eq!(
            RequestStateKeys::new(vec![0u8; 31]).unwrap_err(),
            KeyError::TooShort { len: 31, min: 32 }
        );
        let keys = RequestStateKeys::new([9u8; 32]).unwrap();
        assert_eq!(format!("{keys:?}"), "RequestStateKeys { keys: 1 }");
        assert!(!keys.is_empty());
    }
}
