//! The stateless era's `requestState` in a stdio-only build, end to end: the server binary of
//! this package (wymcp without `http`, so without `sealed-state`) spawned as a client spawns
//! it, driven over its pipes through MCP 2026-07-28 `input_required` rounds. The state stays
//! in the server's process: the client holds a handle (`k1.` and 22 base64url characters),
//! echoes it with its answer and gets the tool's result; a forged handle, one dropped past the
//! capacity (2 in this server) and a sealed state from an HTTP build are refused with the
//! exact text. End of input: the process exits with status 0.

#![allow(clippy::unwrap_used, missing_docs)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

/// How long one answer may take (a loaded CI machine); never a measure of speed.
const ANSWER_WITHIN: Duration = Duration::from_secs(60);

struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Server {
    fn spawn() -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_wymcp-stdio-only"))
            .arg("--stdio")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if send.send(line).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        Server {
            child,
            stdin,
            lines,
        }
    }

    fn request(&mut self, id: i64, params: Value) -> Value {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
        let line = self
            .lines
            .recv_timeout(ANSWER_WITHIN)
            .unwrap_or_else(|e| panic!("no answer to request {id}: {e}"));
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(answer["id"], id, "{answer}");
        answer
    }
}

/// A `tools/call` of `greet` in the 2026-07-28 envelope, the client declaring elicitation.
fn greet(arguments: Value) -> Value {
    json!({
        "name": "greet",
        "arguments": arguments,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
            "io.modelcontextprotocol/clientInfo": {"name": "stdio-only-test", "version": "0"}
        }
    })
}

/// `call` retried with the name answered and `state` echoed.
fn retry(call: &Value, state: &str) -> Value {
    let mut retry = call.clone();
    retry["inputResponses"] =
        json!({"user_name": {"action": "accept", "content": {"name": "Ada"}}});
    retry["requestState"] = json!(state);
    retry
}

/// The handle of an `input_required` answer, checked to be one.
fn handle_of(answer: &Value) -> String {
    let result = &answer["result"];
    assert_eq!(result["resultType"], "input_required", "{answer}");
    assert_eq!(
        result["inputRequests"]["user_name"]["method"], "elicitation/create",
        "{answer}"
    );
    let state = result["requestState"].as_str().unwrap().to_owned();
    // A handle, not a sealed state (`v2.` and the encrypted payload, hundreds of characters).
    assert!(state.starts_with("k1."), "{state}");
    assert_eq!(state.len(), 25, "{state}");
    assert!(
        state[3..]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
        "{state}"
    );
    state
}

fn refusal(answer: &Value) -> &str {
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(
        answer["error"]["data"]["reason"], "invalid_request_state",
        "{answer}"
    );
    answer["error"]["message"].as_str().unwrap()
}

#[test]
fn a_stdio_only_server_keeps_the_request_state_and_refuses_a_forged_handle() {
    let mut server = Server::spawn();

    // Round 1: the tool asks; the client gets a handle.
    let call = greet(json!({"greeting": "Hello"}));
    let asked = server.request(1, call.clone());
    let handle = handle_of(&asked);

    // Round 2: the handle echoed with the answer; the tool completes.
    let done = server.request(2, retry(&call, &handle));
    assert_eq!(
        done["result"]["content"][0]["text"], "Hello, Ada!",
        "{done}"
    );
    assert_eq!(done["result"]["isError"], false, "{done}");

    // The same state twice (a client retrying after a lost answer), as a sealed one allows.
    let again = server.request(3, retry(&call, &handle));
    assert_eq!(
        again["result"]["content"][0]["text"], "Hello, Ada!",
        "{again}"
    );

    // Bound to its request: other arguments are refused.
    let other = server.request(4, retry(&greet(json!({"greeting": "Hi"})), &handle));
    assert_eq!(
        refusal(&other),
        "Invalid requestState: it was issued for another request"
    );

    // A forged handle: one character changed.
    let mut forged = handle.clone().into_bytes();
    forged[10] = if forged[10] == b'A' { b'B' } else { b'A' };
    let forged = String::from_utf8(forged).unwrap();
    let refused = server.request(5, retry(&call, &forged));
    assert_eq!(
        refusal(&refused),
        "Invalid requestState: this server holds no such requestState \
         (never issued, or dropped: it keeps the newest 2)"
    );

    // A sealed state (what an HTTP build issues) is not one of this server's.
    let sealed = server.request(
        6,
        retry(&call, "v2.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
    );
    assert_eq!(
        refusal(&sealed),
        "Invalid requestState: it is not a requestState this server issued"
    );

    // Past the capacity (2): two more states, and the first one is dropped.
    let second = handle_of(&server.request(7, call.clone()));
    let third = handle_of(&server.request(8, call.clone()));
    let dropped = server.request(9, retry(&call, &handle));
    assert_eq!(
        refusal(&dropped),
        "Invalid requestState: this server holds no such requestState \
         (never issued, or dropped: it keeps the newest 2)"
    );
    for (id, kept) in [(10, &second), (11, &third)] {
        let done = server.request(id, retry(&call, kept));
        assert_eq!(
            done["result"]["content"][0]["text"], "Hello, Ada!",
            "{done}"
        );
    }

    // End of input: the server exits cleanly.
    drop(server.stdin.take());
    let status = server.child.wait().unwrap();
    assert!(status.success(), "{status}");
}
