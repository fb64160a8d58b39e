//! The stdio transport: newline-delimited JSON-RPC over stdin and stdout: one session of the
//! session era (`initialize`), and MCP 2026-07-28 (the stateless era) decided per message.
//!
//! ```no_run
//! use wymcp::Server;
//!
//! # #[tokio::main] async fn main() -> std::io::Result<()> {
//! let server = Server::builder().name("demo").build().unwrap();
//! wymcp::transport::stdio::serve(server).await
//! # }
//! ```
//!
//! * stdout carries JSON-RPC messages only, one per line; wymcp's own logs are `tracing`
//!   events: install a subscriber writing to **stderr** (never stdout).
//! * A line that is not JSON is answered with a parse error (`-32700`), a line longer than the
//!   limit ([`DEFAULT_MAX_LINE`] unless [`StdioConfig::max_line`] says otherwise) with an
//!   invalid request (`-32600`), both with `id: null`; the server reads on.
//! * End of input (the client closed stdin) ends the session cleanly: the calls already read
//!   are answered (each within its call timeout, all within
//!   [`StdioConfig::shutdown_grace`]), stdout is flushed, [`serve`] returns `Ok(())`. SIGTERM
//!   cancels the running calls instead of waiting.
//! * Tools reach the client while they run: progress, log messages (filtered by
//!   `logging/setLevel`), sampling and elicitation round trips, and
//!   `notifications/tools/list_changed` when runtime tools change the list.
//! * A request whose `params._meta` carries the 2026-07-28 envelope (or `server/discover`,
//!   `subscriptions/listen`) is served statelessly, exactly as over Streamable HTTP minus the
//!   header checks, each in its own task: `server/discover`, `input_required` round trips,
//!   `subscriptions/listen` streams tagged with their subscription id, cancellation by
//!   `notifications/cancelled` ([`StdioConfig`] has this era's settings). The session is
//!   neither needed nor touched.

mod config;
mod connection;
mod lines;
mod listen;

use tokio_util::sync::CancellationToken;

pub use config::{
    DEFAULT_MAX_LINE, DEFAULT_MAX_LISTEN_STREAMS, DEFAULT_MAX_STDOUT_QUEUE_BYTES,
    DEFAULT_SHUTDOWN_GRACE, StdioConfig,
};
pub use connection::serve_io;

use crate::serve::Server;

/// Serves `server` on this process's stdin and stdout until stdin ends or SIGTERM (or
/// Ctrl-C) arrives.
pub async fn serve(server: Server) -> std::io::Result<()> {
    serve_with(server, StdioConfig::default()).await
}

/// [`serve`] with settings.
pub async fn serve_with(server: Server, config: StdioConfig) -> std::io::Result<()> {
    let stop = CancellationToken::new();
    // Listening starts before the first message is read, so an early SIGTERM is not fatal.
    let signal = shutdown_signal();
    let signals = stop.clone();
    tokio::spawn(async move {
        signal.await;
        signals.cancel();
    });
    serve_io(
        server,
        config,
        lines::stdin(),
        tokio::io::stdout(),
        stop,
        |_| {},
    )
    .await
}

#[cfg(unix)]
fn shutdown_signal() -> impl Future<Output = ()> + Send {
    use tokio::signal::unix::{SignalKind, signal};
    let term = signal(SignalKind::terminate());
    async move {
        match term {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(err) => {
                tracing::warn!(%err, "cannot listen for SIGTERM");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
}

#[cfg(not(unix))]
fn shutdown_signal() -> impl Future<Output = ()> + Send {
    async {
        let _ = tokio::signal::ctrl_c().await;
    }
}
