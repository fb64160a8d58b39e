//! N1 (hostile-2026-12-04): one client must not lock every other out by holding the server's
//! connections or streams. Each test makes one client (127.0.0.1, or one principal) hold its
//! cap of GET streams, listen streams or connections over real HTTP, asserts the next one is
//! refused whole (status, `Retry-After`, the body naming the limit), and that a second client
//! (127.0.0.2: Linux routes all of 127.0.0.0/8 to loopback) is still answered.
//!
//! The default caps are used where a test can afford them, so that the tests also show the
//! defaults hold one address to less than the whole server.

#![allow(clippy::unwrap_used, missing_docs)]

mod hostile_kit;
mod http_harness;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use hostile_kit::{Greeter, PING, Raw, RawAnswer, Served, post};
use http_harness::{modern_headers, request};
use serde_json::{Value, json};
use tokio::net::TcpSocket;
use wymcp::transport::http::{BearerAuth, ConnectionLimits, StreamableHttp};
use wymcp::{Identity, Server};

/// The attacker's address.
const ONE: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 1);
/// Another client's address.
const TWO: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);

/// The default caps (`DEFAULT_MAX_GET_STREAMS_PER_CLIENT`, …), written out so that the
/// refusal texts below are the ones a client reads.
const GET_STREAMS: usize = 16;
const LISTEN_STREAMS: usize = 16;
const CONNECTIONS: usize = 64;

fn server() -> Server {
    Server::builder()
        .name("caps")
        .list_changed(true)
        .plain_tool(Greeter)
        .build()
        .unwrap()
}

async fn serve(
    configure: impl FnOnce(StreamableHttp) -> StreamableHttp,
    limits: ConnectionLimits,
) -> Served {
    let builder = configure(StreamableHttp::builder(server()));
    Served::start("127.0.0.1:0", builder, limits).await
}

/// A connection to `served` from `from`.
async fn connect_from(served: &Served, from: Ipv4Addr) -> Raw {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::from((from, 0))).unwrap();
    Raw(socket.connect(served.addr).await.unwrap())
}

/// `ping` from `from` on a fresh connection, answered 200 `{}`.
async fn assert_pinged(served: &Served, from: Ipv4Addr) {
    let mut conn = connect_from(served, from).await;
    conn.send(&post("", PING)).await;
    let answer = conn.answer().await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(
        answer.json(),
        json!({"jsonrpc": "2.0", "id": 1, "result": {}})
    );
}

/// A ready 2025-11-25 session opened from `from` with `extra` header lines.
async fn session(served: &Served, from: Ipv4Addr, extra: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "caps", "version": "0"}}});
    let mut conn = connect_from(served, from).await;
    conn.send(&post(extra, &init.to_string())).await;
    let answer = conn.answer().await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let id = answer.header("mcp-session-id").unwrap().to_owned();
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let header = format!("{extra}Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: 2025-11-25\r\n");
    conn.send(&post(&header, &note.to_string())).await;
    assert_eq!(conn.answer().await.status, 202);
    id
}

/// Opens `session`'s GET stream from `from` with `extra` header lines: the connection and
/// the answer's head (a stream's body never ends).
async fn get_stream(
    served: &Served,
    from: Ipv4Addr,
    session: &str,
    extra: &str,
) -> (Raw, RawAnswer) {
    let mut conn = connect_from(served, from).await;
    conn.send(&format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}Accept: text/event-stream\r\n\
         Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n"
    ))
    .await;
    let answer = conn.answer().await;
    (conn, answer)
}

/// A `subscriptions/listen` POST from `from` with `extra` header lines: the connection and
/// the answer's head.
async fn listen_stream(served: &Served, from: Ipv4Addr, id: i64, extra: &str) -> (Raw, RawAnswer) {
    let filter = json!({"notifications": {"toolsListChanged": true}});
    let body = request(json!(id), "subscriptions/listen", filter);
    let mut headers: String = modern_headers(&body)
        .into_iter()
        .map(|(k, v)| format!("{k}: {v}\r\n"))
        .collect();
    headers.push_str(extra);
    let mut conn = connect_from(served, from).await;
    conn.send(&post(&headers, &body.to_string())).await;
    let answer = conn.answer().await;
    (conn, answer)
}

fn assert_stream(answer: &RawAnswer) {
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.header("content-type"), Some("text/event-stream"));
}

/// A per-client refusal: 429, `Retry-After: <retry>`, a JSON `body`.
fn assert_refused(answer: &RawAnswer, retry: &str, body: &Value) {
    assert_eq!(answer.status, 429, "{}", answer.body);
    assert_eq!(answer.header("retry-after"), Some(retry));
    assert_eq!(answer.header("content-type"), Some("application/json"));
    assert_eq!(&answer.json(), body);
}

fn get_refusal(max: usize) -> Value {
    json!({"error": format!(
        "Too many GET streams for this client: the limit of {max} open GET streams per client \
         is reached (StreamableHttp::max_get_streams_per_client). Close one or try again later."
    )})
}

fn listen_refusal(id: i64, max: usize) -> Value {
    let text = format!(
        "Too many listen streams for this client: the limit of {max} open \
         subscriptions/listen streams per client is reached \
         (StreamableHttp::max_listen_streams_per_client). Close one or try again later."
    );
    json!({"jsonrpc": "2.0", "id": id, "error": {
        "code": -32600, "message": "Invalid Request", "data": {"error": text}}})
}

fn connection_refusal(max: usize) -> Value {
    json!({"error": format!(
        "Too many connections from this client: the limit of {max} open connections per \
         client is reached (ConnectionLimits::max_connections_per_client). Close one or try \
         again later."
    )})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n1_one_address_holding_its_get_streams_does_not_lock_the_others_out() {
    let served = serve(|b| b, ConnectionLimits::new()).await;
    let mut held = Vec::new();
    for _ in 0..GET_STREAMS {
        let id = session(&served, ONE, "").await;
        let (conn, answer) = get_stream(&served, ONE, &id, "").await;
        assert_stream(&answer);
        held.push(conn);
    }
    let id = session(&served, ONE, "").await;
    let (_, refused) = get_stream(&served, ONE, &id, "").await;
    assert_refused(&refused, "5", &get_refusal(GET_STREAMS));
    // Another address still gets its stream, and its ping.
    let other = session(&served, TWO, "").await;
    let (_other_stream, answer) = get_stream(&served, TWO, &other, "").await;
    assert_stream(&answer);
    assert_pinged(&served, TWO).await;
    // A stream closed gives its place back (once the server has seen it close).
    drop(held.pop());
    let mut reopened = false;
    for _ in 0..100 {
        let (conn, answer) = get_stream(&served, ONE, &id, "").await;
        if answer.status == 200 {
            held.push(conn);
            reopened = true;
            break;
        }
        assert_refused(&answer, "5", &get_refusal(GET_STREAMS));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(reopened, "the closed stream's place was never given back");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n1_one_address_holding_its_listen_streams_does_not_lock_the_others_out() {
    let served = serve(|b| b, ConnectionLimits::new()).await;
    let mut held = Vec::new();
    for id in 0..LISTEN_STREAMS {
        let (conn, answer) = listen_stream(&served, ONE, id as i64, "").await;
        assert_stream(&answer);
        held.push(conn);
    }
    let (_, refused) = listen_stream(&served, ONE, 99, "").await;
    assert_refused(&refused, "5", &listen_refusal(99, LISTEN_STREAMS));
    let (_other, answer) = listen_stream(&served, TWO, 1, "").await;
    assert_stream(&answer);
    assert_pinged(&served, TWO).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n1_one_address_holding_its_connections_does_not_lock_the_others_out() {
    // Idle connections are held for the test's length, not closed by the header timeout.
    let limits = ConnectionLimits::new().header_read_timeout(Duration::from_secs(60));
    let served = serve(|b| b, limits).await;
    let mut held = Vec::new();
    for _ in 0..CONNECTIONS {
        held.push(connect_from(&served, ONE).await);
    }
    // Connections are accepted in the order they arrive: the next one is over the cap.
    let mut over = connect_from(&served, ONE).await;
    over.send(&post("", PING)).await;
    let answer = over.answer().await;
    assert_refused(&answer, "1", &connection_refusal(CONNECTIONS));
    assert_eq!(answer.header("connection"), Some("close"));
    over.closed().await;
    assert_pinged(&served, TWO).await;
    // One closed: the address is served again (once the server has seen it close).
    drop(held.pop());
    let mut served_again = false;
    for _ in 0..100 {
        let mut conn = connect_from(&served, ONE).await;
        conn.send(&post("", PING)).await;
        let answer = conn.answer().await;
        if answer.status == 200 {
            served_again = true;
            break;
        }
        assert_refused(&answer, "1", &connection_refusal(CONNECTIONS));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        served_again,
        "the closed connection's place was never given back"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n1_a_body_trickled_past_its_deadline_is_refused() {
    // Each byte comes well within the read timeout; the whole body does not come in time.
    let limits = ConnectionLimits::new()
        .body_read_timeout(Duration::from_secs(5))
        .body_deadline(Duration::from_millis(300));
    let served = serve(|b| b, limits).await;
    let mut conn = connect_from(&served, ONE).await;
    let head = post("", "");
    let head = head.replace("Content-Length: 0", "Content-Length: 4000");
    conn.send(&head).await;
    let (mut read, mut write) = conn.0.into_split();
    let trickle = tokio::spawn(async move {
        use tokio::io::AsyncWriteExt as _;
        for _ in 0..200 {
            if write.write_all(b" ").await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    let answer = tokio::time::timeout(hostile_kit::PATIENCE, async {
        let mut buf = Vec::new();
        loop {
            use tokio::io::AsyncReadExt as _;
            let mut chunk = [0u8; 4096];
            let n = read.read(&mut chunk).await.unwrap();
            assert!(n > 0, "closed without an answer");
            buf.extend_from_slice(&chunk[..n]);
            let text = String::from_utf8_lossy(&buf).into_owned();
            if let Some((_, body)) = text.split_once("\r\n\r\n")
                && serde_json::from_str::<Value>(body).is_ok()
            {
                return text;
            }
        }
    })
    .await
    .expect("an answer within the patience bound");
    trickle.abort();
    assert!(answer.starts_with("HTTP/1.1 408 "), "{answer}");
    let body: Value = serde_json::from_str(answer.split_once("\r\n\r\n").unwrap().1).unwrap();
    assert_eq!(
        body["error"]["data"]["error"],
        "Request Timeout: the request body did not arrive whole within 300ms \
         (ConnectionLimits::body_deadline)"
    );
    assert_pinged(&served, TWO).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n1_an_authenticated_client_is_counted_by_its_principal_wherever_it_comes_from() {
    let bearer = BearerAuth::new()
        .token("alice-token", Identity::new("alice"))
        .token("bob-token", Identity::new("bob"));
    let served = serve(
        |b| b.auth(bearer).max_listen_streams_per_client(2),
        ConnectionLimits::new(),
    )
    .await;
    let alice = "Authorization: Bearer alice-token\r\n";
    let bob = "Authorization: Bearer bob-token\r\n";
    let (_a1, first) = listen_stream(&served, ONE, 1, alice).await;
    let (_a2, second) = listen_stream(&served, TWO, 2, alice).await;
    assert_stream(&first);
    assert_stream(&second);
    // Alice holds her two from two addresses: a third is refused from either.
    for from in [ONE, TWO] {
        let (_, refused) = listen_stream(&served, from, 3, alice).await;
        assert_refused(&refused, "5", &listen_refusal(3, 2));
    }
    // Bob, from alice's address, is another client.
    let (_b, answer) = listen_stream(&served, ONE, 4, bob).await;
    assert_stream(&answer);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n1_behind_a_trusted_proxy_streams_count_against_the_forwarded_client() {
    let proxy = IpAddr::from(ONE);
    let served = serve(
        |b| b.trusted_proxies([proxy]).max_get_streams_per_client(1),
        ConnectionLimits::new().max_connections_per_client(2),
    )
    .await;
    let first = "X-Forwarded-For: 203.0.113.7\r\n";
    let second = "X-Forwarded-For: 203.0.113.8\r\n";
    let mine = session(&served, ONE, first).await;
    let (_held, answer) = get_stream(&served, ONE, &mine, first).await;
    assert_stream(&answer);
    let again = session(&served, ONE, first).await;
    let (_, refused) = get_stream(&served, ONE, &again, first).await;
    assert_refused(&refused, "5", &get_refusal(1));
    // Another client behind the same proxy gets its stream, though the proxy holds more
    // connections than one client may: a trusted proxy's connections are not capped.
    let theirs = session(&served, ONE, second).await;
    let (_theirs, answer) = get_stream(&served, ONE, &theirs, second).await;
    assert_stream(&answer);
    assert_pinged(&served, ONE).await;
}
