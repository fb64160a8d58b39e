//! The sealed `requestState` (feature `sealed-state`, which `http` enables): the payload's JSON
//! encrypted and authenticated with XChaCha20-Poly1305 (RustCrypto), sealed with the newest key
//! and opened with any configured key; [`Codec`](super::state::Codec) bounds its size and
//! lifetime.
//!
//! Wire form: `v2.<sealed>`, base64url without padding, where `sealed` is a random 24-byte
//! nonce, then the ciphertext and its 16-byte tag; the version prefix is the associated data.
//! The AEAD key is derived from each configured key with HKDF-SHA256, so the configured key
//! material is never used as a cipher key directly. The payload is unreadable to the client and
//! carries what the state is bound to (method, target, a digest of the arguments and of the
//! principal), which the retry checks after the state is opened.

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20poly1305::aead::{Aead, KeyInit, Payload as Sealed};
use chacha20poly1305::{Key, XChaCha20Poly1305, XNonce};
use hkdf::Hkdf;
use sha2::{Digest as _, Sha256};

use super::state::{OpenError, Payload};

/// The shortest key accepted: 32 bytes (256 bits of key material for HKDF).
pub const MIN_KEY_LEN: usize = 32;

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

/// The sealing carrier of [`Codec`]: one AEAD per configured key, the sealing key first
/// (derived once, at build).
#[derive(Clone)]
pub(crate) struct Sealer {
    ciphers: Arc<[XChaCha20Poly1305]>,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print key material.
        f.debug_struct("Sealer")
            .field("keys", &self.ciphers.len())
            .finish()
    }
}

impl Sealer {
    pub(crate) fn new(keys: &RequestStateKeys) -> Self {
        Sealer {
            ciphers: keys.ciphers(),
        }
    }

    /// The length of the sealed form of a payload whose JSON takes `json_len` bytes.
    pub(crate) fn size_of(json_len: usize) -> usize {
        PREFIX.len() + ((NONCE_LEN + json_len + TAG_LEN) * 4).div_ceil(3)
    }

    /// SHA-256 of `text`, base64url.
    pub(crate) fn digest(text: &[u8]) -> String {
        URL_SAFE_NO_PAD.encode(Sha256::digest(text))
    }

    /// The sealed form of the payload's `json` under a fresh random nonce (`None` only past
    /// the AEAD's 256 GiB message bound, far above any size bound).
    pub(crate) fn issue(&self, json: &[u8]) -> Option<String> {
        let size = Self::size_of(json.len());
        let nonce = XNonce::from(crate::random::bytes::<NONCE_LEN>());
        let plain = Sealed {
            msg: json,
            aad: PREFIX.as_bytes(),
        };
        let ciphertext = self.ciphers.first()?.encrypt(&nonce, plain).ok()?;
        let mut sealed = Vec::with_capacity(NONCE_LEN + ciphertext.len());
        sealed.extend_from_slice(&nonce);
        sealed.extend_from_slice(&ciphertext);
        let mut token = String::with_capacity(size);
        token.push_str(PREFIX);
        URL_SAFE_NO_PAD.encode_string(&sealed, &mut token);
        Some(token)
    }

    /// Opens `token`: decrypted and authenticated with any key (its lifetime is the codec's
    /// to check). Any change to a sealed state fails authentication.
    pub(crate) fn open(&self, token: &str) -> Result<Payload, OpenError> {
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
        serde_json::from_slice(&json).map_err(|_| OpenError::Malformed)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::mrtr::state::{Carrier, Codec, DEFAULT_LIFETIME, DEFAULT_MAX_SIZE};
    use serde_json::{Map, json};
    use std::time::Duration;

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
        Codec::new(
            Carrier::Sealed(Sealer::new(&keys)),
            Duration::from_secs(60),
            DEFAULT_MAX_SIZE,
        )
    }

    #[test]
    fn seal_then_open_gives_the_payload_back() {
        let codec = codec_of(RequestStateKeys::new([1u8; 32]).unwrap());
        let sealed = codec.issue(&payload(1_000, 61_000)).unwrap();
        assert!(sealed.starts_with("v2."));
        assert_eq!(codec.open(&sealed, 1_001).unwrap(), payload(1_000, 61_000));
    }

    #[test]
    fn the_payload_is_encrypted_under_a_fresh_nonce() {
        let codec = codec_of(RequestStateKeys::new([1u8; 32]).unwrap());
        let mut secret = payload(1_000, 61_000);
        secret.ans.insert("user_name".into(), json!("Ada Lovelace"));
        let sealed = codec.issue(&secret).unwrap();
        let bytes = URL_SAFE_NO_PAD.decode(&sealed[PREFIX.len()..]).unwrap();
        let visible = String::from_utf8_lossy(&bytes);
        for plain in ["Ada", "user_name", "tools/call", "echo", "step", "\"ans\""] {
            assert!(!visible.contains(plain), "{plain} readable in {visible}");
        }
        // The same payload sealed twice: two nonces, two different states.
        assert_ne!(codec.issue(&secret).unwrap(), sealed);
    }

    #[test]
    fn size_of_is_exact() {
        let codec = codec_of(RequestStateKeys::random());
        for n in 0..40 {
            let mut p = payload(0, 10);
            p.t = "x".repeat(n);
            let json = serde_json::to_vec(&p).unwrap();
            assert_eq!(codec.issue(&p).unwrap().len(), codec.size_of(json.len()));
        }
    }

    #[test]
    fn any_change_is_tampering() {
        let codec = codec_of(RequestStateKeys::new([2u8; 32]).unwrap());
        let sealed = codec.issue(&payload(0, 10)).unwrap();
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
        let sealed = codec.issue(&payload(0, 10)).unwrap();
        assert!(codec.open(&sealed, 9).is_ok());
        assert_eq!(codec.open(&sealed, 10), Err(OpenError::Expired));
        assert_eq!(codec.expiry(5), 60_005);
        let zero = Codec::new(
            Carrier::Sealed(Sealer::new(&RequestStateKeys::random())),
            Duration::ZERO,
            DEFAULT_MAX_SIZE,
        );
        assert_eq!(zero.expiry(5), 5, "a zero lifetime is expired when issued");
    }

    #[test]
    fn rotation_newest_seals_any_opens() {
        let old = [4u8; 32];
        let new = [5u8; 32];
        let before = codec_of(RequestStateKeys::new(old).unwrap());
        let sealed_old = before.issue(&payload(0, 10)).unwrap();
        let rotated = codec_of(
            RequestStateKeys::new(new)
                .unwrap()
                .also_accept(old)
                .unwrap(),
        );
        assert!(rotated.open(&sealed_old, 1).is_ok());
        let sealed_new = rotated.issue(&payload(0, 10)).unwrap();
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
        let codec = Codec::new(
            Carrier::Sealed(Sealer::new(&RequestStateKeys::random())),
            DEFAULT_LIFETIME,
            300,
        );
        let mut big = payload(0, 10);
        big.s = Some(json!("x".repeat(400)));
        let err = codec.issue(&big).unwrap_err();
        assert_eq!(err.limit, 300);
        assert!(err.size > 300);
        let roomy = Codec::new(
            Carrier::Sealed(Sealer::new(&RequestStateKeys::random())),
            DEFAULT_LIFETIME,
            4096,
        );
        let sealed = roomy.issue(&big).unwrap();
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
