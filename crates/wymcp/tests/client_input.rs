//! `wymcp::client` against a real wymcp server at MCP 2026-07-28 on 127.0.0.1: a tool that asks
//! for elicitation and roots in one round and sampling in the next is answered
//! `input_required`; the client's handlers answer each request and it sends the call again
//! with `inputResponses` and the `requestState`, until the result. A handler's error, and a
//! server asking more rounds than allowed, are typed refusals.

#![allow(clippy::unwrap_used, missing_docs)]

mod http_harness;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use http_harness::Http;
use serde_json::{Map, Value, json};
use wymcp::RpcError;
use wymcp::client::{Client, ClientBuilder, ClientError, Limit};
use wymcp::session::{Elicitation, ListRoots, Sampling};
use wymcp::transport::http::StreamableHttp;
use wymcp::{CallError, CallOutput, CallResult, Context, PlainTool, ProtocolVersion, Server};

/// Asks a name and the roots together (one round), then a sampling (a second round).
struct Greeter;

impl PlainTool for Greeter {
    fn name(&self) -> &str {
        "greeter"
    }
    fn description(&self) -> &str {
        "Asks the client three things over two rounds"
    }
    fn input_schema(&self) -> Map<String, Value> {
        json!({"type": "object"})
            .as_object()
            .cloned()
            .unwrap_or_default()
    }
    async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let fail = |e: wymcp::session::ClientRequestError| CallError::tool(e.to_string());
        let ask = Elicitation::form(
            "What is your name?",
            json!({"type": "object", "properties": {"name": {"type": "string"}}}),
        )
        .key("user_name");
        let (name, roots) = tokio::join!(ctx.elicit(ask), ctx.list_roots(ListRoots::new()));
        let (name, roots) = (name.map_err(fail)?, roots.map_err(fail)?);
        let name = name["content"]["name"].as_str().unwrap_or("?").to_owned();
        let sampled = ctx
            .sample(Sampling::prompt(format!("Greet {name}")).key("greeting"))
            .await
            .map_err(fail)?;
        Ok(CallOutput::text(format!(
            "{} ({} roots, {})",
            sampled["content"]["text"].as_str().unwrap_or("?"),
            roots["roots"].as_array().map_or(0, Vec::len),
            sampled["model"].as_str().unwrap_or("?"),
        )))
    }
}

async fn serve() -> Http {
    let server = Server::builder()
        .name("client-input")
        .plain_tool(Greeter)
        .build()
        .unwrap();
    Http::serve(StreamableHttp::builder(server)).await
}

/// A client with the three handlers; `asked` counts the handlers' calls.
fn answering(url: &str, asked: &Arc<AtomicUsize>) -> ClientBuilder {
    let (a, b, c) = (asked.clone(), asked.clone(), asked.clone());
    Client::builder(url)
        .on_elicitation(move |params| {
            a.fetch_add(1, Ordering::SeqCst);
            async move {
                assert_eq!(params["message"], "What is your name?");
                Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
            }
        })
        .on_roots(move |_| {
            b.fetch_add(1, Ordering::SeqCst);
            async { Ok(json!({"roots": [{"uri": "file:///work", "name": "work"}]})) }
        })
        .on_sampling(move |params| {
            c.fetch_add(1, Ordering::SeqCst);
            async move {
                let asked = params["messages"][0]["content"]["text"]
                    .as_str()
                    .unwrap_or("");
                Ok(json!({"role": "assistant", "model": "echo-model",
                          "content": {"type": "text", "text": format!("{asked}!")}}))
            }
        })
}

#[tokio::test]
async fn input_required_rounds_are_answered_by_the_handlers() {
    let http = serve().await;
    let asked = Arc::new(AtomicUsize::new(0));
    let client = answering(&http.url, &asked).connect().await.unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    let result = client.call_tool("greeter", json!({})).await.unwrap();
    assert!(!result.is_error(), "{:?}", result.raw());
    assert_eq!(result.text(), "Greet Ada! (1 roots, echo-model)");
    // Each request answered once per round it was asked in: name and roots, then sampling.
    assert_eq!(asked.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn the_same_handlers_answer_the_session_era() {
    let http = serve().await;
    let asked = Arc::new(AtomicUsize::new(0));
    let client = answering(&http.url, &asked)
        .versions(ProtocolVersion::SESSION_ERA)
        .connect()
        .await
        .unwrap();
    let result = client.call_tool("greeter", json!({})).await.unwrap();
    assert_eq!(result.text(), "Greet Ada! (1 roots, echo-model)");
    client.close().await.unwrap();
}

#[tokio::test]
async fn more_rounds_than_allowed_are_refused_naming_the_limit() {
    let http = serve().await;
    let asked = Arc::new(AtomicUsize::new(0));
    let client = answering(&http.url, &asked)
        .max_input_rounds(1)
        .connect()
        .await
        .unwrap();
    let err = client.call_tool("greeter", json!({})).await.unwrap_err();
    assert_eq!(err.limit(), Some(Limit::InputRounds { max: 1 }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "tools/call: refused: the server exceeded the input rounds of one request \
         (at most 1 rounds, ClientBuilder::max_input_rounds)"
    );
    // The first round was answered; the second was not.
    assert_eq!(asked.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_handlers_error_fails_the_call_naming_the_request() {
    let http = serve().await;
    let client = Client::builder(&http.url)
        .on_elicitation(|_| async { Err(RpcError::new(-32001, "the user went away", None)) })
        .on_roots(|_| async { Ok(json!({"roots": []})) })
        .connect()
        .await
        .unwrap();
    let err = client.call_tool("greeter", json!({})).await.unwrap_err();
    match &err {
        ClientError::InputNotAnswered {
            method,
            key,
            request,
            error,
        } => {
            assert_eq!(method, "tools/call");
            assert_eq!(key, "user_name");
            assert_eq!(request, "elicitation/create");
            assert_eq!(error.code(), -32001);
        }
        other => panic!("not InputNotAnswered: {other:?}"),
    }
    assert_eq!(
        err.to_string(),
        "tools/call: the server's elicitation/create request \"user_name\" was not answered: \
         JSON-RPC error -32001: the user went away"
    );
}
