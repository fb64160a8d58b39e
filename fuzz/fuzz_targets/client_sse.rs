//! The client's SSE reader (what a hostile *server* sends): an arbitrary byte stream fed in
//! arbitrary chunks. Never a panic; no event's data past the bound; the events read do not
//! depend on where the chunks were cut (the whole stream fed at once reads the same).
#![no_main]

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;

const MAX_EVENT: usize = 256;

fuzz_target!(|bytes: &[u8]| {
    let mut u = Unstructured::new(bytes);
    let Ok(cuts) = u.arbitrary::<Vec<u8>>() else {
        return;
    };
    let stream = u.take_rest();
    let mut chunks = Vec::new();
    let mut rest = stream;
    for cut in cuts {
        if rest.is_empty() {
            break;
        }
        let at = usize::from(cut) % (rest.len() + 1);
        let (chunk, after) = rest.split_at(at);
        chunks.push(chunk);
        rest = after;
    }
    chunks.push(rest);
    let chunked = wymcp::fuzzing::sse_events(&chunks, MAX_EVENT);
    let whole = wymcp::fuzzing::sse_events(&[stream], MAX_EVENT);
    assert_eq!(chunked, whole, "the events depend on the chunking");
    for event in whole.iter().flatten() {
        assert!(
            event.len() <= MAX_EVENT,
            "an event of {} bytes",
            event.len()
        );
    }
});
