//! Newline-delimited JSON-RPC framing: stdin read line by line under a limit (the rest of an
//! oversize line skipped, never buffered), stdout written one message per line.

use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};
use tokio::sync::{mpsc, watch};

use crate::serve::{StreamEvent, StreamReceiver, StreamSender};

/// stdin as an async reader fed by a detached thread: a blocking read of stdin cannot be
/// cancelled, and on tokio's blocking pool it would hold the runtime's shutdown (after
/// SIGTERM) until the client writes or closes stdin.
pub(super) fn stdin() -> tokio::io::DuplexStream {
    let (mut feed, reader) = tokio::io::duplex(64 * 1024);
    let (chunks_tx, mut chunks) = mpsc::channel::<Vec<u8>>(4);
    let spawned = std::thread::Builder::new()
        .name("wymcp-stdin".into())
        .spawn(move || {
            use std::io::Read as _;
            let mut stdin = std::io::stdin().lock();
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match stdin.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        if chunks_tx.blocking_send(buf[..n].to_vec()).is_err() {
                            break;
                        }
                    }
                    Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(err) => {
                        tracing::warn!(%err, "stdio: reading stdin failed");
                        break;
                    }
                }
            }
        });
    if let Err(err) = spawned {
        tracing::error!(%err, "stdio: cannot start the stdin reader");
    }
    tokio::spawn(async move {
        while let Some(chunk) = chunks.recv().await {
            if feed.write_all(&chunk).await.is_err() {
                break;
            }
        }
        // Dropping the feed is the reader's end of input.
    });
    reader
}

pub(super) fn trim_line(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

pub(super) enum Line {
    Complete,
    TooLong,
    Eof,
}

/// Reads one line into `buf` (newline included), refusing more than `max` bytes without
/// buffering them: the rest of an oversize line is skipped.
pub(super) async fn read_line<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Line> {
    buf.clear();
    let mut too_long = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if too_long {
                Line::TooLong
            } else if buf.is_empty() {
                Line::Eof
            } else {
                Line::Complete
            });
        }
        let (chunk, found) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (&available[..=at], true),
            None => (available, false),
        };
        let taken = chunk.len();
        if !too_long {
            if buf.len() + taken > max.saturating_add(2) {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        reader.consume(taken);
        if found {
            if !too_long && trim_line(buf).len() > max {
                too_long = true;
            }
            return Ok(if too_long {
                Line::TooLong
            } else {
                Line::Complete
            });
        }
    }
}

/// stdout as a sender of lines: what a call, a listen stream or the session's standalone
/// stream writes. Its frames are the core's [`StreamEvent`]s, so stdout is attached as the
/// session's standalone stream as it is, in the one order everything was sent in (stdio
/// resumes nothing: an event's id is not written).
#[derive(Debug, Clone)]
pub(super) struct Stdout(pub(super) StreamSender);

impl Stdout {
    /// Queues one message as a line; `false` when stdout is gone, or its queue overflowed
    /// (the client does not read it: the connection ends).
    pub(super) fn line(&self, data: String) -> bool {
        self.0.send(StreamEvent { id: None, data }).is_ok()
    }
}

pub(super) async fn write_lines<W: AsyncWrite + Unpin>(
    mut output: W,
    mut rx: StreamReceiver,
    done: watch::Sender<bool>,
) -> std::io::Result<()> {
    let result = async {
        while let Some(StreamEvent { data: mut line, .. }) = rx.recv().await {
            line.push('\n');
            let written = async {
                output.write_all(line.as_bytes()).await?;
                output.flush().await
            };
            // A client that does not read its stdout until the queue overflows: the
            // connection ends (the queue logged why).
            tokio::select! {
                written = written => written?,
                () = rx.overflowed() => break,
            }
        }
        Ok(())
    }
    .await;
    // stdout is gone (or every sender is): the reader stops too.
    let _ = done.send(true);
    result
}
