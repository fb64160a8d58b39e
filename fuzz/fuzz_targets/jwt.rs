//! JWT and JWKS parsing (`JwtAuth`, feature `jwt`): arbitrary text and mutations of a real
//! signed token (a byte flipped, inserted, removed, the parts swapped or re-encoded, claims
//! changed and re-encoded without re-signing) are verified against a static HMAC key; and
//! arbitrary JWKS documents are parsed. Never a panic; a changed token never verifies; the
//! refusal is a bounded text; a JWKS yields at most 64 keys, none symmetric.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, encode};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use wymcp::transport::http::jwt::JwtAuth;

const SECRET: &[u8] = b"a fuzzing secret of thirty-two bytes!";
const ISSUER: &str = "https://id.example.test";
const OTHER: &str = "https://other.example.test";
const AUDIENCE: &str = "https://mcp.example.test/mcp";
const NOW: u64 = 4_000_000_000;

#[derive(Arbitrary, Debug)]
enum Mutation {
    Flip { at: u16, bit: u8 },
    Insert { at: u16, byte: u8 },
    Remove { at: u16 },
    SwapParts,
    Claims(u8),
    Header(u8),
}

fn auth() -> JwtAuth {
    let key = || DecodingKey::from_secret(SECRET).expect("an HMAC key");
    JwtAuth::builder()
        .issuer_key(ISSUER, Some("k1"), key(), Algorithm::HS256)
        .issuer_key(
            OTHER,
            Some("k2"),
            DecodingKey::from_secret(b"another secret, of another issuer").expect("an HMAC key"),
            Algorithm::HS256,
        )
        .audience(AUDIENCE)
        .algorithms([Algorithm::HS256])
        .build()
        .expect("the fuzzing JwtAuth builds")
}

fn claims() -> Value {
    json!({"iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "exp": NOW, "scope": "a b"})
}

fn token(claims: &Value) -> String {
    let mut header = Header::new(Algorithm::HS256);
    header.kid = Some("k1".into());
    encode(
        &header,
        claims,
        &EncodingKey::from_secret(SECRET).expect("an HMAC key"),
    )
    .expect("signs")
}

fn reencoded(token: &str, part: usize, change: impl FnOnce(&mut Value)) -> Option<String> {
    let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
    let mut value: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(&parts[part]).ok()?).ok()?;
    change(&mut value);
    parts[part] = URL_SAFE_NO_PAD.encode(value.to_string());
    Some(parts.join("."))
}

fn mutated(token: &str, mutation: Mutation) -> Option<String> {
    let mut bytes = token.as_bytes().to_vec();
    let len = bytes.len();
    match mutation {
        Mutation::Flip { at, bit } => bytes[usize::from(at) % len] ^= 1 << (bit % 8),
        Mutation::Insert { at, byte } => bytes.insert(usize::from(at) % (len + 1), byte),
        Mutation::Remove { at } => {
            bytes.remove(usize::from(at) % len);
        }
        Mutation::SwapParts => {
            let parts: Vec<&str> = token.split('.').collect();
            return Some(format!("{}.{}.{}", parts[1], parts[0], parts[2]));
        }
        Mutation::Claims(which) => {
            return reencoded(token, 1, |claims| match which % 5 {
                0 => claims["iss"] = json!(OTHER),
                1 => claims["sub"] = json!("mallory"),
                2 => claims["exp"] = json!(NOW + 1),
                3 => claims["aud"] = json!([AUDIENCE, "x"]),
                _ => claims["scope"] = json!("a b admin"),
            });
        }
        Mutation::Header(which) => {
            return reencoded(token, 0, |header| match which % 4 {
                0 => header["alg"] = json!("none"),
                1 => header["kid"] = json!("k2"),
                2 => header["alg"] = json!("HS512"),
                _ => header["typ"] = json!("at+jwt"),
            });
        }
    }
    String::from_utf8(bytes).ok()
}

fuzz_target!(|bytes: &[u8]| {
    let mut u = Unstructured::new(bytes);
    let runtime = wymcp_fuzz::runtime();
    let auth = auth();
    let verify = |token: &str| runtime.block_on(auth.verify(token));
    match u.int_in_range(0..=2u8).unwrap_or(0) {
        0 => {
            let text: String = u.arbitrary().unwrap_or_default();
            if let Err(refusal) = verify(&text) {
                assert!(
                    refusal.0.len() <= 1024,
                    "an unbounded refusal: {} bytes",
                    refusal.0.len()
                );
            } else {
                panic!("arbitrary text verified: {text:?}");
            }
        }
        1 => {
            let original = token(&claims());
            assert!(verify(&original).is_ok(), "the signed token is refused");
            let Ok(mutation) = u.arbitrary::<Mutation>() else {
                return;
            };
            let Some(changed) = mutated(&original, mutation) else {
                return;
            };
            if changed != original {
                assert!(
                    verify(&changed).is_err(),
                    "a changed token verified: {changed}"
                );
            }
        }
        _ => {
            let body: Vec<u8> = if u.arbitrary().unwrap_or(false) {
                u.take_rest().to_vec()
            } else {
                let Ok(keys) = (0..u.int_in_range(0..=80u8).unwrap_or(0))
                    .map(|_| {
                        Ok(json!({
                            "kty": *u.choose(&["RSA", "EC", "OKP", "oct", "x"])?,
                            "kid": wymcp_fuzz::json::string(&mut u)?,
                            "use": *u.choose(&["sig", "enc", "x"])?,
                            "alg": *u.choose(&["RS256", "ES256", "EdDSA", "HS256", "none", "x"])?,
                            "n": "sXch", "e": "AQAB", "crv": *u.choose(&["P-256", "Ed25519", "x"])?,
                            "x": wymcp_fuzz::json::string(&mut u)?, "y": "AQAB", "k": "c2VjcmV0",
                        }))
                    })
                    .collect::<arbitrary::Result<Vec<Value>>>()
                else {
                    return;
                };
                json!({"keys": keys}).to_string().into_bytes()
            };
            if let Ok(kids) = wymcp::fuzzing::jwks_key_ids(&body) {
                assert!(kids.len() <= 64, "{} keys taken from one JWKS", kids.len());
            }
        }
    }
});
