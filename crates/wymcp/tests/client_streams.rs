//! `wymcp::client`'s SSE streams against a real wymcp server on 127.0.0.1, through a TCP relay
//! the tests can cut: the session's GET stream delivers what the server pushes, and when its
//! connection drops the client reopens it with `Last-Event-ID` and gets the events sent
//! meanwhile once, in order; a call's stream closed before its answer (SSE polling) is resumed
//! the same way; an event over the limit is dropped and counted, the stream read on. A
//! 2026-07-28 `subscriptions/listen` stream ([`Client::listen`]) delivers what it asked for,
//! and is opened again when its connection drops or the server ends it.

#![allow(clippy::unwrap_used, missing_docs)]

mod http_harness;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_harness::Http;
use serde_json::{Map, Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;
use wymcp::client::{Client, ClientError, Notification, Subscriptions};
use wymcp::transport::http::StreamableHttp;
use wymcp::{CallOutput, CallResult, Context, PlainTool, ProtocolVersion, Resource, Server};

/// How long a test waits for one thing that should happen at once.
const WAIT: Duration = Duration::from_secs(10);

/// A TCP relay on 127.0.0.1 to `target`: [`cut`](Relay::cut) drops every connection through
/// it; while [`down`](Relay::down), new connections are accepted and dropped at once.
struct Relay {
    url: String,
    up: Arc<AtomicBool>,
    connections: Arc<Mutex<Vec<AbortHandle>>>,
}

impl Relay {
    async fn start(target: SocketAddr) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let up = Arc::new(AtomicBool::new(true));
        let connections = Arc::new(Mutex::new(Vec::<AbortHandle>::new()));
        let (up2, connections2) = (up.clone(), connections.clone());
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if !up2.load(Ordering::SeqCst) {
                    drop(inbound);
                    continue;
                }
                let relay = tokio::spawn(async move {
                    let mut outbound = TcpStream::connect(target).await.unwrap();
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                });
                connections2.lock().unwrap().push(relay.abort_handle());
            }
        });
        Relay {
            url,
            up,
            connections,
        }
    }

    /// Drops every connection through the relay, and refuses new ones until [`up`](Self::up).
    fn down(&self) {
        self.up.store(false, Ordering::SeqCst);
        for connection in self.connections.lock().unwrap().drain(..) {
            connection.abort();
        }
    }

    fn up(&self) {
        self.up.store(true, Ordering::SeqCst);
    }
}

fn target(http: &Http) -> SocketAddr {
    let authority = http
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp");
    authority.parse().unwrap()
}

fn note(n: u64) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/test/pushed", "params": {"n": n}})
}

/// The next notification the client gets, within [`WAIT`].
async fn next(client: &Client) -> Notification {
    tokio::time::timeout(WAIT, client.next_notification())
        .await
        .expect("a notification within the wait")
}

/// The `n` of the next notification.
async fn next_n(client: &Client) -> u64 {
    let note = next(client).await;
    assert_eq!(note.method(), "notifications/test/pushed", "{note:?}");
    note.params().unwrap()["n"].as_u64().unwrap()
}

fn server() -> Server {
    Server::builder()
        .name("client-streams")
        .plain_tool(Polled)
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_get_stream_is_resumed_and_the_events_missed_arrive_once_in_order() {
    let http = Http::serve(StreamableHttp::builder(server())).await;
    let relay = Relay::start(target(&http)).await;
    let client = Client::builder(&relay.url)
        .versions(ProtocolVersion::SESSION_ERA)
        .reconnect_delay(Duration::from_millis(50))
        .max_reconnects(100)
        .connect()
        .await
        .unwrap();
    let session = client.session_id().unwrap().to_owned();
    // `connect` returned with the GET stream open: the server's pushes reach it.
    for n in 1..=2 {
        assert!(http.service.push(&session, &note(n)).await.unwrap());
    }
    assert_eq!(next_n(&client).await, 1);
    assert_eq!(next_n(&client).await, 2);

    // The connection drops; the server sends three more while the client cannot reconnect.
    relay.down();
    for n in 3..=5 {
        http.service.push(&session, &note(n)).await.unwrap();
    }
    relay.up();
    // Replayed after the last event the client read, then the stream goes on live: were any
    // event delivered twice, it would come before 6.
    for n in 3..=5 {
        assert_eq!(next_n(&client).await, n);
    }
    assert!(http.service.push(&session, &note(6)).await.unwrap());
    assert_eq!(next_n(&client).await, 6);
    assert!(client.drain_notifications().is_empty());
    assert_eq!(client.dropped_notifications(), 0);
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_of_the_get_stream_over_the_limit_is_dropped_and_counted() {
    let http = Http::serve(StreamableHttp::builder(server())).await;
    let client = Client::builder(&http.url)
        .versions(ProtocolVersion::SESSION_ERA)
        .max_event_bytes(200)
        .connect()
        .await
        .unwrap();
    let session = client.session_id().unwrap().to_owned();
    let big = json!({"jsonrpc": "2.0", "method": "notifications/test/pushed",
                     "params": {"n": 0, "pad": "x".repeat(1000)}});
    assert!(http.service.push(&session, &big).await.unwrap());
    assert!(http.service.push(&session, &note(1)).await.unwrap());
    // The stream reads on past the dropped event.
    assert_eq!(next_n(&client).await, 1);
    assert_eq!(client.dropped_notifications(), 1);
    client.close().await.unwrap();
}

/// Closes its POST stream (SSE polling), then sends two notifications and answers: the
/// client must resume the stream to get them and the answer.
struct Polled;

impl PlainTool for Polled {
    fn name(&self) -> &str {
        "polled"
    }
    fn description(&self) -> &str {
        "Closes its SSE stream mid-call"
    }
    fn input_schema(&self) -> Map<String, Value> {
        json!({"type": "object"})
            .as_object()
            .cloned()
            .unwrap_or_default()
    }
    async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
        ctx.notify("notifications/test/pushed", json!({"n": 1}));
        let closed = ctx.close_sse_stream();
        // Let the client see its stream end before the rest is sent.
        tokio::time::sleep(Duration::from_millis(100)).await;
        ctx.notify("notifications/test/pushed", json!({"n": 2}));
        ctx.notify("notifications/test/pushed", json!({"n": 3}));
        Ok(CallOutput::text(format!("closed: {closed}")))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_calls_stream_closed_before_its_answer_is_resumed() {
    let http = Http::serve(
        StreamableHttp::builder(server())
            .sse_polling(true)
            .sse_retry(Duration::from_millis(50)),
    )
    .await;
    let client = Client::builder(&http.url)
        .versions(ProtocolVersion::SESSION_ERA)
        .connect()
        .await
        .unwrap();
    let result = client.call_tool("polled", json!({})).await.unwrap();
    assert_eq!(result.text(), "closed: true");
    let got: Vec<u64> = client
        .drain_notifications()
        .iter()
        .map(|n| n.params().unwrap()["n"].as_u64().unwrap())
        .collect();
    assert_eq!(got, [1, 2, 3]);
    client.close().await.unwrap();
}

fn listened() -> Server {
    Server::builder()
        .name("client-listen")
        .list_changed(true)
        .plain_tool(Polled)
        .resource(Resource::text("test://a", "a", "A"))
        .resource(Resource::text("test://b", "b", "B"))
        .build()
        .unwrap()
}

/// Tells `test://a` updated (`resource`) or the tools changed every 50 ms until the client
/// gets that notification (at most [`WAIT`]; others, left from before, are skipped): the
/// stream was opened again.
async fn told_again(server: &Server, client: &Client, resource: bool) -> Notification {
    let method = match resource {
        true => "notifications/resources/updated",
        false => "notifications/tools/list_changed",
    };
    let retell = async {
        loop {
            match resource {
                true => drop(server.notify_resource_updated("test://a").await),
                false => drop(server.notify_tools_list_changed()),
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let told = async {
        loop {
            let note = next(client).await;
            if note.method() == method {
                return note;
            }
        }
    };
    tokio::select! {
        note = told => note,
        () = retell => unreachable!("the loop never ends; next() bounds it"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_stream_delivers_what_it_asked_for_and_is_opened_again_when_it_ends() {
    let server = listened();
    let http = Http::serve(StreamableHttp::builder(server.clone())).await;
    let relay = Relay::start(target(&http)).await;
    let client = Client::builder(&relay.url)
        .reconnect_delay(Duration::from_millis(50))
        .max_reconnects(100)
        .connect()
        .await
        .unwrap();
    assert!(client.protocol_version().is_stateless());
    let asked = Subscriptions::new()
        .tools_list_changed()
        .resource("test://a")
        .resource("test://unknown");
    let subscription = client.listen(asked).await.unwrap();
    // Acknowledged: a URI the server does not serve is not honoured.
    assert_eq!(
        *subscription.honoured(),
        json!({"toolsListChanged": true, "resourceSubscriptions": ["test://a"]})
    );

    // Only what it asked for: `test://b` and the prompts are not told.
    server.notify_resource_updated("test://b").await;
    server.notify_prompts_list_changed();
    server.notify_resource_updated("test://a").await;
    let updated = next(&client).await;
    assert_eq!(updated.method(), "notifications/resources/updated");
    assert_eq!(updated.params().unwrap()["uri"], "test://a");
    server.notify_tools_list_changed();
    assert_eq!(
        next(&client).await.method(),
        "notifications/tools/list_changed"
    );

    // The connection drops: the stream is opened again.
    relay.down();
    relay.up();
    let note = told_again(&server, &client, false).await;
    assert_eq!(note.method(), "notifications/tools/list_changed");
    // The server ends it (its graceful-closure response): opened again, the URIs asked still.
    http.service.close_streams();
    let note = told_again(&server, &client, true).await;
    assert_eq!(note.params().unwrap()["uri"], "test://a");
    assert!(subscription.is_listening());
    assert_eq!(client.dropped_notifications(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_stream_is_refused_in_the_session_era_and_when_the_server_refuses_it() {
    let http = Http::serve(StreamableHttp::builder(listened())).await;
    let session = Client::builder(&http.url)
        .versions(ProtocolVersion::SESSION_ERA)
        .connect()
        .await
        .unwrap();
    let refused = session
        .listen(Subscriptions::new().tools_list_changed())
        .await
        .unwrap_err();
    assert!(
        matches!(refused, ClientError::Unavailable { ref method, .. } if method == "subscriptions/listen"),
        "{refused}"
    );
    assert_eq!(
        refused.to_string(),
        "subscriptions/listen: not available here: the session era delivers notifications on \
         the session's GET stream"
    );

    // A server with nothing to tell refuses the stream: the refusal is the error.
    let bare = Http::serve(StreamableHttp::builder(Server::builder().build().unwrap())).await;
    let client = Client::builder(&bare.url).connect().await.unwrap();
    let refused = client
        .listen(Subscriptions::new().tools_list_changed())
        .await
        .unwrap_err();
    assert_eq!(refused.status(), Some(404), "{refused}");
    assert_eq!(
        refused.rpc_error().map(|e| e.code()),
        Some(-32601),
        "{refused}"
    );
}
