//! SSE polling (SEP-1699) over Streamable HTTP on 127.0.0.1: a tool closes its POST stream
//! mid-call, the client resumes on GET with `Last-Event-ID` and gets the rest, response
//! included, exactly once, whether the call finished before or after the client came back.

mod http_harness;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use http_harness::{Http, data_lines, read_to_end, read_until};
use reqwest::StatusCode;
use serde_json::{Map, Value, json};
use tokio::sync::Notify;
use wymcp::protocol::LogLevel;
use wymcp::transport::http::StreamableHttp;
use wymcp::{CallOutput, CallResult, Context, PlainTool, Server};

/// Closes its stream, logs a line, waits for `release`, answers; `closed` records what
/// `close_sse_stream` answered, `returned` fires when it answers.
#[derive(Clone, Default)]
struct Closer {
    closed: Arc<AtomicBool>,
    release: Arc<Notify>,
    returned: Arc<Notify>,
}

impl PlainTool for Closer {
    fn name(&self) -> &str {
        "closer"
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
        self.closed.store(ctx.close_sse_stream(), Ordering::SeqCst);
        ctx.log(LogLevel::Info, json!("after the close"));
        self.release.notified().await;
        self.returned.notify_one();
        Ok(CallOutput::text("done after reconnection"))
    }
}

struct Harness {
    http: Http,
    tool: Closer,
}

http_harness::serves_http!(Harness);

async fn start(polling: bool) -> Harness {
    let tool = Closer::default();
    let server = Server::builder()
        .plain_tool(tool.clone())
        .build()
        .expect("builds");
    let http = Http::serve(
        StreamableHttp::builder(server)
            .sse_polling(polling)
            .sse_retry(Duration::from_millis(300)),
    )
    .await;
    Harness { http, tool }
}

impl Harness {
    async fn call_closer(&self, session: &str) -> reqwest::Response {
        self.post_stream(
            Some(session),
            &json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                    "params": {"name": "closer", "arguments": {}}}),
        )
        .await
    }

    async fn resume(&self, session: &str, last_event_id: &str) -> reqwest::Response {
        self.get_stream(session, &[("last-event-id", last_event_id)])
            .await
    }
}

/// The POST stream: one priming event (id, `retry`, empty data), then its end.
async fn closed_post_stream(h: &Harness, session: &str) -> String {
    let mut post = h.call_closer(session).await;
    assert_eq!(post.status(), StatusCode::OK);
    assert!(
        post.headers()["content-type"]
            .to_str()
            .expect("text")
            .starts_with("text/event-stream")
    );
    let mut body = String::new();
    read_to_end(&mut post, &mut body).await;
    let (first, rest) = body.split_once("\n\n").expect("one event");
    let id = first
        .strip_prefix("id: ")
        .and_then(|f| f.split_once('\n'))
        .map(|(id, _)| id.to_owned())
        .expect("an id");
    assert_eq!(first, format!("id: {id}\nretry: 300\ndata: "), "{body:?}");
    assert!(rest.is_empty(), "the stream ends after priming: {body:?}");
    assert!(h.tool.closed.load(Ordering::SeqCst));
    id
}

/// How many SSE events in `buf` are the call's response.
fn responses(buf: &str) -> usize {
    data_lines(buf)
        .into_iter()
        .filter(|message| message["id"] == 5 && message.get("result").is_some())
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_response_finished_while_away_is_replayed() {
    let h = start(true).await;
    let session = h.ready("2025-11-25").await;
    let last = closed_post_stream(&h, &session).await;
    h.tool.release.notify_one();
    h.tool.returned.notified().await;
    let mut get = h.resume(&session, &last).await;
    let mut buf = String::new();
    read_until(&mut get, &mut buf, "done after reconnection").await;
    assert!(buf.contains("after the close"), "{buf:?}");
    assert!(
        buf.find("after the close") < buf.find("done after reconnection"),
        "{buf:?}"
    );
    assert_eq!(responses(&buf), 1, "{buf:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_response_finished_after_the_resume_is_delivered_live() {
    let h = start(true).await;
    let session = h.ready("2025-11-25").await;
    let last = closed_post_stream(&h, &session).await;
    // The GET is attached once its headers are in: the call finishes after.
    let mut get = h.resume(&session, &last).await;
    h.tool.release.notify_one();
    let mut buf = String::new();
    read_until(&mut get, &mut buf, "done after reconnection").await;
    assert!(buf.contains("after the close"), "{buf:?}");
    assert_eq!(responses(&buf), 1, "{buf:?}");
    // The resumed stream's events carry the POST stream's ids: a second resumption from the
    // last one continues it (nothing more to replay, the response is not sent twice).
    let ids: Vec<&str> = buf.lines().filter_map(|l| l.strip_prefix("id: ")).collect();
    let stream = last.rsplit_once('.').map(|(s, _)| s).expect("a stream key");
    assert!(ids.iter().all(|id| id.starts_with(stream)), "{ids:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_standalone_get_stream_is_not_replaced_by_a_resumption() {
    let h = start(true).await;
    let session = h.ready("2025-11-25").await;
    let mut standalone = h
        .client
        .get(&h.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .send()
        .await
        .expect("GET");
    let mut standalone_buf = String::new();
    read_until(&mut standalone, &mut standalone_buf, "\n\n").await;
    let last = closed_post_stream(&h, &session).await;
    let mut get = h.resume(&session, &last).await;
    h.tool.release.notify_one();
    let mut buf = String::new();
    read_until(&mut get, &mut buf, "done after reconnection").await;
    // Ending the session ends both streams; the standalone one never carried the response.
    let del = h
        .client
        .delete(&h.url)
        .header("mcp-session-id", &session)
        .send()
        .await
        .expect("DELETE");
    assert_eq!(del.status(), StatusCode::OK);
    read_to_end(&mut standalone, &mut standalone_buf).await;
    assert_eq!(responses(&standalone_buf), 0, "{standalone_buf:?}");
    read_to_end(&mut get, &mut String::new()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_polling_the_call_keeps_its_stream() {
    let h = start(false).await;
    let session = h.ready("2025-11-25").await;
    // A stored permit: the call goes through at once.
    h.tool.release.notify_one();
    let mut post = h.call_closer(&session).await;
    let mut body = String::new();
    read_to_end(&mut post, &mut body).await;
    assert!(!h.tool.closed.load(Ordering::SeqCst));
    assert!(
        !body.contains("retry:"),
        "no priming without polling: {body:?}"
    );
    assert!(body.contains("after the close"), "{body:?}");
    assert_eq!(responses(&body), 1, "{body:?}");
}
