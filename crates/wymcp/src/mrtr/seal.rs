//! The `requestState` codec: a JSON payload encrypted and authenticated with
//! XChaCha20-Poly1305 (RustCrypto), bounded in size and lifetime, sealed with the newest key
//! and opened with any configured key.
//!
//! Wire form: `v2.<sealed>`, base64url without padding, where `sealed` is a random 24-byte
//! nonce, then the ciphertext and its 16-byte tag; the version prefix is the associated data.
//! The AEAD key is derived from each configured key with HKDF-SHA256, so the configured key
//! material is never used as a cipher key directly. The payload is unreadable to the client and
//! carries what the state is bound to (method, target, a digest of the arguments and of the
//! principal), which the retry checks after the state is opened.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20poly1305::aead::{Aead, KeyInit, Payload as Sealed};
use chacha20poly1305::{Key, XChaCha20Poly1305, XNonce};
use hkdf::Hkdf;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::Sha256;

/// The shortest key accepted: 32 bytes (256 bits of key material for HKDF).
pub const MIN_KEY_LEN: usize = 32;
/// How long a `requestState` stays valid unless configured: 10 minutes.
pub const DEFAULT_LIFETIME: Duration = Duration::from_secs(600);
/// The largest `requestState` issued unless configured: 64 KiB.
pub const DEFAULT_MAX_SIZE: usize = 64 * 1024;

const PREFIX: &str = "v2.";
/// XChaCha20's extended nonce: random nonces of this size never repeat in practice.
const NONCE_LEN: usize = 24;
/// Poly1305's tag.
const TAG_LEN: usize = 16;
/// HKDF's salt and info: the AEAD key is bound to this use of the configured key.
const KDF_SALT: &[u8] = b"wymcp requestState";
const KDF_INFO: &[u8] = b"v2 xchacha20poly1305";

/// The keys `requestState` is sealed with: the first (newest) seals, every one opens, so a
/// key can be rotated without refusing the states issued just before. Each key is at least
/// [`MIN_KEY_LEN`] bytes of secret material; the cipher key is derived from it (HKDF-SHA256).
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
    /// Keys whose only (and sealing) key is `newest`: at least [`MIN_KEY_LEN`] bytes.
    pub fn new(newest: impl Into<Vec<u8>>) -> Result<Self, KeyError> {
        Ok(RequestStateKeys {
            keys: vec![checked(newest.into())?],
        })
    }

    /// Also opens states sealed with `older` (never seals with it).
    pub fn also_accept(mut self, older: impl Into<Vec<u8>>) -> Result<Self, KeyError> {
        self.keys.push(checked(older.into())?);
        Ok(self)
    }

    /// One random 32-byte key, made once per [`build`](crate::ServerBuilder::build): states
    /// are valid only on this process, so only a single-node server should rely on it.
    pub fn random() -> Self {
        let key = crate::random::bytes::<32>();
        RequestStateKeys {
            keys: vec![Arc::from(key.as_slice())],
        }
    }

    /// How many keys open states.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Always `false`: there is at least the sealing key.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The AEAD of every key, the sealing key first (`new` and `random` put it first).
    fn ciphers(&self) -> Arc<[XChaCha20Poly1305]> {
        self.keys.iter().map(|key| cipher(key)).collect()
    }
}

/// The AEAD of one configured key: its 32-byte cipher key expanded with HKDF-SHA256.
fn cipher(key: &[u8]) -> XChaCha20Poly1305 {
    let mut derived = [0u8; 32];
    // 32 bytes is far below HKDF-SHA256's 8,160-byte output bound: `expand` cannot fail.
    if Hkdf::<Sha256>::new(Some(KDF_SALT), key)
        .expand(KDF_INFO, &mut derived)
        .is_err()
    {
        unreachable!("HKDF-SHA256 expands to 32 bytes");
    }
    XChaCha20Poly1305::new(&Key::from(derived))
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
#[derive(Clone)]
pub(crate) struct Codec {
    /// One AEAD per configured key, the sealing key first (derived once, at build).
    ciphers: Arc<[XChaCha20Poly1305]>,
    lifetime: Duration,
    max_size: usize,
}

impl std::fmt::Debug for Codec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print key material.
        f.debug_struct("Codec")
            .field("keys", &self.ciphers.len())
            .field("lifetime", &self.lifetime)
            .field("max_size", &self.max_size)
            .finish()
    }
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

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl Codec {
    pub(crate) fn new(keys: RequestStateKeys, lifetime: Duration, max_size: usize) -> Self {
        Codec {
            ciphers: keys.ciphers(),
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
        PREFIX.len() + ((NONCE_LEN + json_len + TAG_LEN) * 4).div_ceil(3)
    }

    /// The sealed form of `payload` under a fresh random nonce, or [`TooLarge`] over the
    /// bound.
    pub(crate) fn seal(&self, payload: &Payload) -> Result<String, TooLarge> {
        let json = serde_json::to_vec(payload).unwrap_or_default();
        let size = Self::sealed_len(json.len());
        if size > self.max_size {
            return Err(TooLarge {
                size,
                limit: self.max_size,
            });
        }
        let nonce = XNonce::from(crate::random::bytes::<NONCE_LEN>());
        let plain = Sealed {
            msg: &json,
            aad: PREFIX.as_bytes(),
        };
        // Encryption fails only for messages past 256 GiB; the bound above is far smaller.
        let Some(ciphertext) = self.sealing().and_then(|c| c.encrypt(&nonce, plain).ok()) else {
            return Err(TooLarge {
                size,
                limit: self.max_size,
            });
        };
        let mut sealed = Vec::with_capacity(NONCE_LEN + ciphertext.len());
        sealed.extend_from_slice(&nonce);
        sealed.extend_from_slice(&ciphertext);
        let mut token = String::with_capacity(size);
        token.push_str(PREFIX);
        URL_SAFE_NO_PAD.encode_string(&sealed, &mut token);
        Ok(token)
    }

    fn sealing(&self) -> Option<&XChaCha20Poly1305> {
        self.ciphers.first()
    }

    /// Opens `token` at `now` (milliseconds): decrypted and authenticated with any key, then
    /// its lifetime checked. Any change to a sealed state fails authentication.
    pub(crate) fn open(&self, token: &str, now: u64) -> Result<Payload, OpenError> {
        // A state longer than any this server issues is refused before any work.
        if token.len() > self.max_size {
            return Err(OpenError::Malformed);
        }
        let body = token.strip_prefix(PREFIX).ok_or(OpenError::Malformed)?;
        // A state with this server's prefix that no longer decodes was altered.
        let sealed = URL_SAFE_NO_PAD
            .decode(body)
            .map_err(|_| OpenError::Tampered)?;
        if sealed.len() < NONCE_LEN + TAG_LEN {
            return Err(OpenError::Tampered);
        }
        let (nonce, ciphertext) = sealed.split_at(NONCE_LEN);
        let nonce = XNonce::try_from(nonce).map_err(|_| OpenError::Tampered)?;
        let json = self
            .ciphers
            .iter()
            .find_map(|cipher| {
                let sealed = Sealed {
                    msg: ciphertext,
                    aad: PREFIX.as_bytes(),
                };
                cipher.decrypt(&nonce, sealed).ok()
            })
            .ok_or(OpenError::Tampered)?;
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
        assert!(sealed.starts_with("v2."));
        assert_eq!(codec.open(&sealed, 1_001).unwrap(), payload(1_000, 61_000));
    }

    #[test]
    fn the_payload_is_encrypted_under_a_fresh_nonce() {
        let codec = codec_of(RequestStateKeys::new([1u8; 32]).unwrap());
        let mut secret = payload(1_000, 61_000);
        secret.ans.insert("user_name".into(), json!("Ada Lovelace"));
        let sealed = codec.seal(&secret).unwrap();
        let bytes = URL_SAFE_NO_PAD.decode(&sealed[PREFIX.len()..]).unwrap();
        let visible = String::from_utf8_lossy(&bytes);
        for plain in ["Ada", "user_name", "tools/call", "echo", "step", "\"ans\""] {
            assert!(!visible.contains(plain), "{plain} readable in {visible}");
        }
        // The same payload sealed twice: two nonces, two different states.
        assert_ne!(codec.seal(&secret).unwrap(), sealed);
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
        // Every single-byte change of the sealed bytes fails authentication, never panics.
        let raw = URL_SAFE_NO_PAD.decode(&sealed[PREFIX.len()..]).unwrap();
        for i in 0..raw.len() {
            let mut changed = raw.clone();
            changed[i] ^= 0x01;
            let token = format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(&changed));
            assert_eq!(codec.open(&token, 1), Err(OpenError::Tampered), "byte {i}");
        }
        let cut = format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(&raw[..NONCE_LEN + 3]));
        assert_eq!(codec.open(&cut, 1), Err(OpenError::Tampered));
        assert_eq!(codec.open("v2.abc.def", 1), Err(OpenError::Tampered));
        assert_eq!(codec.open("v2.", 1), Err(OpenError::Tampered));
        assert_eq!(
            codec.open("v1.eyJtIjoidG9vbHMvY2FsbCJ9.AAAA", 1),
            Err(OpenError::Malformed)
        );
        assert_eq!(codec.open("", 1), Err(OpenError::Malformed));
        // Sealed with another key.
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
    fn rotation_newest_seals_any_opens() {
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
            "the newest key seals"
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
