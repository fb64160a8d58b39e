//! The matrix's stdio wire: `wymcp::transport::stdio::serve_io` over an in-memory duplex
//! pipe, one JSON-RPC message per line each way; both eras share the one connection, decided
//! per message.

use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, DuplexStream, Lines};
use tokio::io::{ReadHalf, WriteHalf};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use wymcp::Server;
use wymcp::transport::stdio::{StdioConfig, serve_io};

/// How long the server may take to write its next line before the test fails.
const LINE_WAIT: Duration = Duration::from_secs(10);

/// The client's ends of the pipe, and the serving task.
pub(crate) struct StdioWire {
    write: WriteHalf<DuplexStream>,
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    served: JoinHandle<std::io::Result<()>>,
}

impl StdioWire {
    pub(crate) fn serve(server: Server) -> StdioWire {
        let (client, served) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(served);
        let (client_read, client_write) = tokio::io::split(client);
        let served = tokio::spawn(serve_io(
            server,
            StdioConfig::default(),
            server_read,
            server_write,
            CancellationToken::new(),
            |_| {},
        ));
        StdioWire {
            write: client_write,
            lines: BufReader::new(client_read).lines(),
            served,
        }
    }

    /// Writes `message` as one line.
    pub(crate) async fn send(&mut self, message: &Value) {
        self.send_line(&message.to_string()).await;
    }

    /// Writes `text` as one line, as it is.
    pub(crate) async fn send_line(&mut self, text: &str) {
        let line = format!("{text}\n");
        self.write
            .write_all(line.as_bytes())
            .await
            .unwrap_or_else(|e| panic!("stdin closed ({e})"));
    }

    /// The next line the server writes, which must be one JSON-RPC message.
    pub(crate) async fn next(&mut self) -> Option<Value> {
        let line = tokio::time::timeout(LINE_WAIT, self.lines.next_line())
            .await
            .unwrap_or_else(|_| panic!("stdout stayed silent for {LINE_WAIT:?}"))
            .unwrap_or_else(|e| panic!("stdout failed ({e})"))?;
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carried a non-JSON line ({e}): {line}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        Some(message)
    }

    /// Closes stdin: the server must write nothing more and end cleanly.
    pub(crate) async fn close(mut self) {
        self.write
            .shutdown()
            .await
            .unwrap_or_else(|e| panic!("stdin would not close ({e})"));
        if let Some(extra) = self.next().await {
            panic!("stdout carried a message after the conversation: {extra}");
        }
        let ended = tokio::time::timeout(LINE_WAIT, self.served)
            .await
            .unwrap_or_else(|_| panic!("serve_io did not end on EOF"));
        ended
            .unwrap_or_else(|e| panic!("serve_io panicked ({e})"))
            .unwrap_or_else(|e| panic!("serve_io failed ({e})"));
    }
}
