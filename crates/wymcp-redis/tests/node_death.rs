//! A node dying mid-call: the client, resuming the call's stream on another node, gets a
//! JSON-RPC error for that call (the dead node's lease lapses), never a hang.

#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::sync::mpsc;

use serde_json::json;
use wymcp::transport::http::{HttpServer, StreamableHttp};
use wymcp_redis::Redis;

use support::fixture::node_server;
use support::redis_server::RedisServer;
use support::{Client, Node, SESSION_VERSION};

/// A node on a runtime of its own, in a thread of its own: `kill` ends the runtime at once
/// (every task, connection and timer of the node with it), as a crash ends a process.
struct Doomed {
    url: String,
    kill: mpsc::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

impl Doomed {
    fn start(redis_url: String) -> Doomed {
        let (ready, url) = mpsc::channel();
        let (kill, killed) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                let redis = Redis::connect(&redis_url).await.unwrap();
                let builder = StreamableHttp::builder(node_server(&redis))
                    .sse_polling(true)
                    .node_id("doomed");
                let http = HttpServer::bind("127.0.0.1:0", builder).await.unwrap();
                ready
                    .send(format!("http://{}/mcp", http.local_addr().unwrap()))
                    .unwrap();
                tokio::spawn(http.run());
            });
            let _ = killed.recv();
            runtime.shutdown_background();
        });
        Doomed {
            url: url.recv().unwrap(),
            kill,
            thread,
        }
    }

    fn kill(self) {
        self.kill.send(()).unwrap();
        self.thread.join().unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_whose_node_died_is_answered_with_an_error_on_the_node_the_client_reaches() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let doomed = Doomed::start(redis.url());
    let survivor = Redis::connect(&redis.url()).await.unwrap();
    let builder = StreamableHttp::builder(node_server(&survivor)).sse_polling(true);
    let other = Node::serve(builder).await;

    let mut client = Client::new(vec![doomed.url.clone()], false);
    let init = json!({"protocolVersion": SESSION_VERSION, "capabilities": {},
        "clientInfo": {"name": "node-death-test", "version": "1"}});
    assert_eq!(client.request(1, "initialize", init).await.status(), 200);
    assert_eq!(
        client.notify("notifications/initialized", json!({})).await,
        202
    );
    let call = json!({"name": "slow", "arguments": {}, "_meta": {"progressToken": "t"}});
    let mut stream = client.request(5, "tools/call", call).await.stream();
    let (last_seen, started) = stream.next().await.unwrap();
    assert_eq!(started["params"]["message"], "started");
    doomed.kill();
    assert!(
        stream.next().await.is_none(),
        "the dead node's stream is gone"
    );

    let mut resuming = Client::new(vec![other.url.clone()], false);
    resuming.session = client.session.clone();
    let (status, mut resumed) = resuming.get(last_seen.as_deref()).await;
    assert_eq!(status, 200);
    let (_, answer) = resumed.next().await.expect("an answer, not a hang");
    assert_eq!(
        answer,
        json!({"jsonrpc": "2.0", "id": 5, "error": {"code": -32603, "message": "Internal error",
            "data": {"reason": "the node running this call stopped; send the request again"}}})
    );
}
