//! Random bytes from the operating system's CSPRNG (`getrandom`): session, node, task and
//! request ids, the `requestState` key and its nonces.
//!
//! Read straight from the OS rather than through a userspace generator: each is a few bytes
//! made once per session, task, server→client request or sealed state, and `getrandom` is
//! already built for the validator (through `ahash`), where `rand` and its ChaCha generator
//! would be four crates more.

/// `N` bytes from the OS's CSPRNG.
///
/// # Panics
///
/// When the OS has no randomness to give (no `getrandom(2)` and no `/dev/urandom`), as
/// `rand`'s thread generator did: no id, key or nonce can be made safely without it.
pub(crate) fn bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    if let Err(error) = getrandom::fill(&mut bytes) {
        panic!("the operating system gave no random bytes: {error}");
    }
    bytes
}
