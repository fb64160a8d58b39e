//! The in-memory session store as the sessions grow (issue 46; `store_scale.sh`): what opening
//! one session (`SessionStore::create`) and one sweep of the reaper (`SessionStore::reap`, no
//! session expired) cost among `n` live sessions.
//!
//! `store_scale <n> <creates> <sweeps>`: fills an `InMemorySessionStore` with `n` sessions,
//! then opens `creates` more in `measured_creates`, runs `sweeps` reaper sweeps in
//! `measured_sweeps`, and makes `creates` attempts refused at the cap in `measured_refusals`
//! (the store then counts its live sessions by a scan of all of them: what every `create`
//! cost before 7 December 2026). Run under callgrind with `--toggle-collect` on each function (the script
//! does): the instructions of those calls alone, the filling left out. Prints the store's size.

use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt as _;
use serde_json::json;
use wymcp::ProtocolVersion;
use wymcp::backend::{InMemorySessionStore, SessionRecord, SessionStore};

/// The sessions' idle time to live: none expires while the program runs.
const TTL: Duration = Duration::from_secs(3600);

fn record(i: usize) -> SessionRecord {
    // 43 characters, as a real session id (`new_session_id`).
    let id = format!("{i:0>43}");
    SessionRecord {
        id,
        version: ProtocolVersion::V2025_06_18,
        client_capabilities: Arc::new(json!({})),
        client_info: Arc::new(json!({"name": "store_scale", "version": "1.0"})),
        initialized: true,
        log_level: None,
        assigns: Default::default(),
        subject: None,
    }
}

/// The in-memory store answers at once: its futures are ready when made.
fn now<T>(future: impl std::future::Future<Output = T>) -> Result<T, String> {
    future
        .now_or_never()
        .ok_or_else(|| "a store future was pending".to_owned())
}

fn create(store: &InMemorySessionStore, i: usize, max: usize) -> Result<(), String> {
    now(store.create(record(i), max, TTL))?.map_err(|e| e.to_string())
}

#[inline(never)]
fn measured_creates(
    store: &InMemorySessionStore,
    from: usize,
    count: usize,
    max: usize,
) -> Result<(), String> {
    for i in from..from + count {
        create(store, i, max)?;
    }
    Ok(())
}

#[inline(never)]
fn measured_sweeps(store: &InMemorySessionStore, count: usize) -> Result<usize, String> {
    let mut gone = 0;
    for _ in 0..count {
        gone += now(store.reap(TTL))?.map_err(|e| e.to_string())?.len();
    }
    Ok(gone)
}

#[inline(never)]
fn measured_refusals(
    store: &InMemorySessionStore,
    from: usize,
    count: usize,
    max: usize,
) -> Result<(), String> {
    for i in from..from + count {
        if create(store, i, max).is_ok() {
            return Err(format!("session {i} was admitted past the cap of {max}"));
        }
    }
    Ok(())
}

fn main() -> Result<(), String> {
    let arg = |i: usize| -> Result<usize, String> {
        std::env::args()
            .nth(i)
            .ok_or("usage: store_scale <n> <creates> <sweeps>")?
            .parse()
            .map_err(|e| format!("argument {i}: {e}"))
    };
    let (n, creates, sweeps) = (arg(1)?, arg(2)?, arg(3)?);
    let max = n + creates;
    let store = InMemorySessionStore::new();
    for i in 0..n {
        create(&store, i, max)?;
    }
    measured_creates(&store, n, creates, max)?;
    let gone = measured_sweeps(&store, sweeps)?;
    if gone != 0 {
        return Err(format!("{gone} sessions expired"));
    }
    measured_refusals(&store, max, creates, max)?;
    println!("{} sessions", n + creates);
    Ok(())
}
