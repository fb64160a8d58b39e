//! What the fuzz targets share: the fixture server, the official MCP schemas, arbitrary JSON
//! drawn from the protocol's tokens, the HTTP state machine's model.
//!
//! Every loop here is bounded: by the input's length, or by a constant.

pub mod fixture;
pub mod http;
pub mod json;
pub mod schema;
pub mod schemagen;

/// A current-thread runtime with paused time: timers fire as soon as nothing else can run,
/// so waiting on an SSE stream or a TTL costs no wall-clock time.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime builds")
}
