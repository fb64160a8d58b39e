//! Sealed MRTR `requestState`: arbitrary bytes, and mutations of a real sealed state (a
//! byte flipped, inserted, removed, the parts swapped, re-encoded) → refused, never accepted,
//! never a panic. The untouched state opens to what was sealed.
#![no_main]

use std::time::Duration;

use arbitrary::{Arbitrary, Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, json};
use wymcp::fuzzing::{Sample, StateCodec};

const KEY: [u8; 32] = [7; 32];
const OTHER_KEY: [u8; 32] = [8; 32];
const NOW: u64 = 1_800_000_000_000;

#[derive(Arbitrary, Debug)]
enum Mutation {
    Flip { at: u16, bit: u8 },
    Insert { at: u16, byte: u8 },
    Remove { at: u16 },
    Truncate { at: u16 },
    SwapParts,
    Append(Vec<u8>),
    OtherKey,
    Expired,
}

fn sample(u: &mut Unstructured) -> Result<Sample> {
    let mut answers = Map::new();
    for _ in 0..u.int_in_range(0..=2u8)? {
        answers.insert(u.arbitrary()?, wymcp_fuzz::json::value(u, 2)?);
    }
    Ok(Sample {
        method: (*u.choose(&["tools/call", "prompts/get", "resources/read"])?).to_owned(),
        target: u.arbitrary()?,
        arguments: u.arbitrary()?,
        principal: u.arbitrary()?,
        issued: NOW - u64::from(u.arbitrary::<u16>()?),
        round: u.arbitrary()?,
        answers,
        asked: u.arbitrary()?,
        state: if u.arbitrary()? { Some(wymcp_fuzz::json::value(u, 2)?) } else { None },
    })
}

fuzz_target!(|bytes: &[u8]| {
    let mut u = Unstructured::new(bytes);
    let codec = StateCodec::new(&KEY, Duration::from_secs(600), 4096).expect("a 32-byte key");
    // Arbitrary text never opens.
    if let Ok(text) = u.arbitrary::<&str>() {
        assert!(codec.open(text, NOW).is_err(), "arbitrary text opened: {text:?}");
    }
    let Ok(sample) = sample(&mut u) else { return };
    let Some(sealed) = codec.seal(sample.clone()) else { return };
    let opened = codec.open(&sealed, NOW).unwrap_or_else(|e| panic!("a fresh state refused: {e}"));
    assert_eq!(opened["t"], json!(sample.target), "the state opens to another payload");
    let Ok(mutation) = u.arbitrary::<Mutation>() else { return };
    let mut token = sealed.clone().into_bytes();
    let len = token.len();
    let at = |i: u16| usize::from(i) % len.max(1);
    let mut now = NOW;
    match mutation {
        Mutation::Flip { at: i, bit } => token[at(i)] ^= 1 << (bit % 8),
        Mutation::Insert { at: i, byte } => token.insert(at(i), byte),
        Mutation::Remove { at: i } => {
            token.remove(at(i));
        }
        Mutation::Truncate { at: i } => token.truncate(at(i)),
        Mutation::SwapParts => {
            let text = String::from_utf8_lossy(&token).into_owned();
            let parts: Vec<&str> = text.split('.').collect();
            token = match parts.as_slice() {
                [v, p, t] => format!("{v}.{t}.{p}").into_bytes(),
                _ => token,
            };
        }
        Mutation::Append(more) => token.extend(more),
        Mutation::OtherKey => {
            let other = StateCodec::new(&OTHER_KEY, Duration::from_secs(600), 4096).expect("32 bytes");
            token = other.seal(sample).unwrap_or_default().into_bytes();
        }
        Mutation::Expired => now = NOW + 601_000,
    }
    let Ok(token) = String::from_utf8(token) else { return };
    if token == sealed && now == NOW {
        return;
    }
    if let Ok(payload) = codec.open(&token, now) {
        panic!("a changed state opened: {token:?} → {payload}");
    }
});
