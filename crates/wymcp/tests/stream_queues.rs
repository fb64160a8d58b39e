//! Slow readers (issue 48, N5's remainder): what waits to be written to a client that does not
//! read is bounded in bytes. A GET stream whose client stops reading is closed once its queue
//! passes `StreamableHttp::max_stream_queue_bytes` (over real HTTP on 127.0.0.1, the client's
//! socket with a small receive buffer, never read); a stdio connection whose client does not
//! read stdout ends once its queue passes `StdioConfig::max_stdout_queue_bytes`. Before, both
//! queues were unbounded: the stream stayed open and the server held every event.

#![allow(clippy::unwrap_used, missing_docs)]

mod http_harness;

use std::time::Duration;

use http_harness::Http;
use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio_util::sync::CancellationToken;
use wymcp::transport::http::StreamableHttp;
use wymcp::transport::stdio::{StdioConfig, serve_io};
use wymcp::{Resource, Server};

/// Bounds each wait of the test: a hang fails the test instead of stalling it (not a speed
/// target).
const PATIENCE: Duration = Duration::from_secs(60);

fn server() -> Server {
    Server::builder()
        .name("slow-readers")
        .list_changed(true)
        .resource(Resource::text("test://a", "a", "A"))
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_get_stream_whose_client_stops_reading_is_closed_past_its_queue_bound() {
    let server = server();
    let http =
        Http::serve(StreamableHttp::builder(server.clone()).max_stream_queue_bytes(64 * 1024))
            .await;
    let session = http.ready("2025-11-25").await;
    let address = http
        .url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();

    // The GET stream, on a socket that takes little and is read no more once the head is in.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stream = socket.connect(address.parse().unwrap()).await.unwrap();
    let request = format!(
        "GET /mcp HTTP/1.1\r\nHost: {address}\r\nAccept: text/event-stream\r\n\
         Mcp-Session-Id: {session}\r\nMcp-Protocol-Version: 2025-11-25\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !String::from_utf8_lossy(&head).contains("\r\n\r\n") {
        let n = tokio::time::timeout(PATIENCE, stream.read(&mut buf))
            .await
            .unwrap()
            .unwrap();
        assert!(n > 0, "the GET stream ended before its head");
        head.extend_from_slice(&buf[..n]);
    }
    assert!(
        String::from_utf8_lossy(&head).starts_with("HTTP/1.1 200"),
        "{head:?}"
    );

    // About 14 MB of events (140,000 of about 100 bytes) for a client that reads none: more
    // than the sockets hold (the server's send buffer grows to 4 MiB at most here), so the
    // queue fills.
    for _ in 0..700 {
        for _ in 0..200 {
            assert!(server.notify_resources_list_changed());
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let sent = 700 * 200 * 100;

    // Reading now: what the sockets held, then the end of the stream (the server closed it:
    // HTTP/1.1 chunked, so the last chunk, then the connection stays or closes).
    let mut read = head.len();
    let mut tail = Vec::new();
    let ended = tokio::time::timeout(PATIENCE, async {
        loop {
            let n = stream.read(&mut buf).await.unwrap_or(0);
            if n == 0 {
                return;
            }
            read += n;
            tail.extend_from_slice(&buf[..n]);
            if tail.len() > 16 {
                tail.drain(..tail.len() - 16);
            }
            // The end of a chunked body: the zero-length last chunk.
            if tail.ends_with(b"\r\n0\r\n\r\n") {
                return;
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "the stream stayed open: {read} bytes read");
    assert!(
        read < sent,
        "every event was delivered ({read} bytes): nothing was dropped"
    );
    // The session still serves.
    let answer = http
        .post(
            Some(&session),
            &json!({"jsonrpc": "2.0", "id": 9, "method": "ping"}),
        )
        .await;
    assert_eq!(answer.status, reqwest::StatusCode::OK, "{}", answer.text);
}

#[tokio::test]
async fn a_stdio_client_that_does_not_read_stdout_is_disconnected_past_the_queue_bound() {
    // stdout is a pipe of 1 KiB nobody reads; the client writes 500 pings.
    let (client, serving) = tokio::io::duplex(1024);
    let (server_in, server_out) = tokio::io::split(serving);
    let (_client_in, mut client_out) = tokio::io::split(client);
    let config = StdioConfig::default().max_stdout_queue_bytes(16 * 1024);
    let served = tokio::spawn(serve_io(
        server(),
        config,
        server_in,
        server_out,
        CancellationToken::new(),
        |_| {},
    ));
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}});
    let mut lines = format!("{init}\n");
    for id in 1..=500 {
        lines.push_str(&format!(
            "{}\n",
            json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
        ));
    }
    // The input is written in the background: once the server stops reading, it fills too.
    tokio::spawn(async move {
        let _ = client_out.write_all(lines.as_bytes()).await;
    });
    let ended = tokio::time::timeout(PATIENCE, served).await;
    let Ok(ended) = ended else {
        panic!("the connection stayed open with its client not reading stdout")
    };
    assert!(matches!(ended, Ok(Ok(()))), "{ended:?}");
}
