//! The axum snippets of `docs/transports.md` answer as the page says: the service mounted in a
//! router of your own serves `initialize` to a loopback `Host`, and with the page's
//! `allowed_hosts` to the public name too, while a host it does not list is refused `403`
//! "Host not allowed". Each router is the page's, bound on a free loopback port instead of
//! 8080; the requests are raw HTTP/1.1, so the `Host` header is exactly the one written.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use wymcp::Server;
use wymcp::transport::http::StreamableHttp;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"docs","version":"1"}}}"#;

fn server() -> Server {
    Server::builder()
        .name("docs")
        .build()
        .expect("a server without tools builds")
}

/// Serves `app` on a free loopback port; returns the port.
async fn serve(app: axum::Router) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a free port");
    let port = listener.local_addr().expect("bound").port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    port
}

/// Sends `POST path` to the port with `host` as the `Host` header; returns the status code and
/// the body.
async fn post(port: u16, path: &str, host: &str, body: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("the server accepts");
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    stream
        .write_all(request.as_bytes())
        .await
        .expect("request written");
    let mut answer = String::new();
    stream
        .read_to_string(&mut answer)
        .await
        .expect("answer read");
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {answer:?}"));
    let body = answer
        .split_once("\r\n\r\n")
        .map_or(String::new(), |(_, b)| b.to_owned());
    (status, body)
}

#[tokio::test]
async fn the_mounted_service_answers_a_loopback_host() {
    // The page's first snippet.
    let service = StreamableHttp::builder(server()).build();
    let app = axum::Router::new()
        .route("/healthz", axum::routing::get(|| async { "ok" }))
        .nest_service("/mcp", service);
    let port = serve(app).await;

    let (status, body) = post(port, "/mcp", &format!("127.0.0.1:{port}"), INITIALIZE).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#""serverInfo":{"name":"docs""#), "{body}");
    let (status, _) = post(port, "/mcp", &format!("localhost:{port}"), INITIALIZE).await;
    assert_eq!(status, 200);
    // Without allowed_hosts, a public name is what the page warns of.
    let (status, body) = post(port, "/mcp", "mcp.example.com:8080", INITIALIZE).await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("Host not allowed"), "{body}");
}

#[tokio::test]
async fn the_allowed_hosts_snippet_answers_the_public_name() {
    // The page's second snippet.
    let service = StreamableHttp::builder(server())
        .allowed_hosts(["mcp.example.com", "localhost", "127.0.0.1"])
        .build();
    let app = axum::Router::new().nest_service("/mcp", service);
    let port = serve(app).await;

    for host in ["mcp.example.com", "mcp.example.com:8080", "127.0.0.1:8080"] {
        let (status, body) = post(port, "/mcp", host, INITIALIZE).await;
        assert_eq!(status, 200, "Host {host}: {body}");
    }
    let (status, body) = post(port, "/mcp", "other.example.com", INITIALIZE).await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("Host not allowed"), "{body}");
}
