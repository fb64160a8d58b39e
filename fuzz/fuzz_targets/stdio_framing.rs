//! The stdio framing: an arbitrary byte stream, delivered in arbitrary chunks (partial lines,
//! a line split inside a UTF-8 sequence, no final newline, EOF anywhere). The server never
//! panics, ends when the input ends, writes only whole lines of JSON-RPC, at most one answer
//! per line read plus what the calls of those lines send, each line bounded.
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;
use wymcp::transport::stdio::{StdioConfig, serve_io};
use wymcp_fuzz::fixture;

/// The line limit the server runs with (small, so the fuzzer reaches it).
const MAX_LINE: usize = 512;

// The input: one byte choosing how the stream is cut, then the stream (so a seed is a byte
// and real JSON-RPC lines, `seeds/stdio_framing/`).
fuzz_target!(|data: &[u8]| {
    let Some((&cut, stream)) = data.split_first() else { return };
    wymcp_fuzz::runtime().block_on(exchange(cut, stream.to_vec()));
});

async fn exchange(cut: u8, stream: Vec<u8>) {
    let (client, server) = tokio::io::duplex(1 << 20);
    let (server_in, server_out) = tokio::io::split(server);
    let (mut client_in, mut client_out) = tokio::io::split(client);
    let config = StdioConfig::default()
        .max_line(MAX_LINE)
        .shutdown_grace(Duration::from_secs(1));
    let serving = tokio::spawn(serve_io(
        fixture::server(),
        config,
        server_in,
        server_out,
        CancellationToken::new(),
        |_| {},
    ));
    // Chunks of 1 to 64 bytes, their sizes drawn from the stream itself and `cut`: lines
    // arrive split anywhere, several at once, or byte by byte.
    let mut rest = &stream[..];
    while let Some(&first) = rest.first() {
        let n = (1 + usize::from(first ^ cut) % 64).min(rest.len());
        client_out.write_all(&rest[..n]).await.expect("the duplex takes the chunk");
        rest = &rest[n..];
        tokio::task::yield_now().await;
    }
    client_out.shutdown().await.expect("the duplex closes");
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(600), client_in.read_to_end(&mut out))
        .await
        .expect("the server ends its output once the input ends")
        .expect("the duplex reads");
    let ended = tokio::time::timeout(Duration::from_secs(600), serving)
        .await
        .expect("serve_io returns once the input ends");
    assert!(matches!(ended, Ok(Ok(()))), "serve_io ended with {ended:?}");
    assert!(out.is_empty() || out.ends_with(b"\n"), "a partial last line");
    let lines_in = stream.split(|b| *b == b'\n').count();
    let mut answers = 0;
    for line in out.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let message: Value = serde_json::from_slice(line).unwrap_or_else(|e| {
            panic!("a line that is not JSON ({e}): {}", String::from_utf8_lossy(line))
        });
        assert_eq!(message["jsonrpc"], "2.0", "{message}");
        // A refusal quotes what it was sent bounded: never much more than the line limit.
        assert!(line.len() <= 16 * 1024, "a line of {} bytes", line.len());
        if message.get("method").is_none() {
            answers += 1;
        }
    }
    assert!(answers <= lines_in, "{answers} answers to {lines_in} lines");
}
