//! The Streamable HTTP service as a state machine, both eras on one endpoint: a sequence of
//! structured requests in process (tower `oneshot`), invariants after every step
//! (docs/fuzzing.md).
#![no_main]

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use wymcp_fuzz::http::{Run, Setup};

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(setup) = u.arbitrary::<Setup>() else { return };
    wymcp_fuzz::runtime().block_on(async {
        let mut run = Run::new(setup);
        let _ = run.run(&mut u).await;
    });
});
