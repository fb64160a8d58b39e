//! Interop: `wymcp::client` against a server written with the official Python SDK (PyPI `mcp`,
//! pinned below; `.ci/run` installs it in a virtualenv under the target directory), a small
//! `MCPServer` (the SDK's FastMCP) script written here, spawned over stdio and served over
//! Streamable HTTP on 127.0.0.1: tools, progress and log messages, a resource template, a
//! prompt, and an elicitation answered by the client's handler. Skipped (one line saying how
//! to install it) without the virtualenv; `WYMCP_REQUIRE_SERVICES=1` makes that a failure.

#![allow(clippy::unwrap_used, missing_docs)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt as _;
use wymcp::ProtocolVersion;
use wymcp::client::{Client, ClientBuilder};

/// The version `.ci/run` installs too.
const VERSION: &str = "2.3.0";
const REQUIRE: &str = "WYMCP_REQUIRE_SERVICES";

/// The server: `server.py stdio`, or `server.py http` (listens on 127.0.0.1, a port of the
/// system's choosing, printed on stdout).
const SCRIPT: &str = r#"
import asyncio
import socket
import sys
from typing import Annotated

from pydantic import BaseModel

from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve

server = MCPServer("wymcp-interop")


@server.tool()
def add(a: int, b: int) -> int:
    """Adds two integers"""
    return a + b


@server.tool()
async def steps(n: int, ctx: Context) -> str:
    """Reports progress and logs each step"""
    for i in range(n):
        await ctx.report_progress(i + 1, n)
        await ctx.info(f"step {i + 1}")
    return f"{n} steps"


class Name(BaseModel):
    name: str


def user_name() -> Elicit[Name]:
    # An elicitation request mid-call in the session era, an input_required round at 2026-07-28.
    return Elicit("What is your name?", Name)


@server.tool()
async def ask_name(name: Annotated[Name, Resolve(user_name)]) -> str:
    """Asks the user's name"""
    return f"Hello, {name.name}!"


@server.resource("note://{name}")
def note(name: str) -> str:
    """A note"""
    return f"the note {name}"


@server.prompt()
def greet(who: str) -> str:
    """Greets someone"""
    return f"Hello, {who}!"


if sys.argv[1] == "stdio":
    server.run()
else:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections wait in the backlog until uvicorn serves
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))
"#;

/// The virtualenv's python and the script, or `None` (after the skip line) without them.
fn python(test: &str) -> Option<(PathBuf, PathBuf)> {
    // target/<profile>/deps/client_python-… → target/python-mcp-<VERSION>
    let exe = std::env::current_exe().unwrap();
    let target = exe.ancestors().nth(3).unwrap().to_path_buf();
    let venv = target.join(format!("python-mcp-{VERSION}"));
    let python = venv.join("bin/python");
    let installed = std::process::Command::new(&python)
        .args(["-c", "import mcp.server.mcpserver, uvicorn"])
        .output()
        .is_ok_and(|o| o.status.success());
    if installed {
        let dir = std::env::temp_dir().join(format!("wymcp-python-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("server.py");
        std::fs::write(&script, SCRIPT).unwrap();
        return Some((python, script));
    }
    let install = format!(
        "needs the Python SDK (PyPI mcp=={VERSION}) in a virtualenv at {0} \
         (python3 -m venv {0} && {0}/bin/pip install mcp=={VERSION})",
        venv.display()
    );
    assert!(
        std::env::var(REQUIRE).as_deref() != Ok("1"),
        "client_python: {install}, and {REQUIRE}=1 requires it"
    );
    let _ = writeln!(
        std::io::stderr(),
        "skipped client_python::{test}: {install}; {REQUIRE}=1 makes this a failure"
    );
    None
}

/// The revisions the client may speak, and the one it must then agree with the server: the
/// SDK serves 2026-07-28 (its elicitation an `input_required` round) and the session era.
fn eras() -> [(&'static [ProtocolVersion], ProtocolVersion); 2] {
    [
        (&ProtocolVersion::ALL, ProtocolVersion::V2026_07_28),
        (&ProtocolVersion::SESSION_ERA, ProtocolVersion::V2025_11_25),
    ]
}

/// The handler every client installs: accepts with the name Ada.
fn with_handlers(builder: ClientBuilder) -> ClientBuilder {
    builder
        .timeout(Duration::from_secs(20))
        .on_elicitation(|params| async move {
            assert_eq!(params["message"], "What is your name?");
            Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
        })
}

/// What both transports must show.
async fn exercise(client: &Client) {
    let mut names: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["add", "ask_name", "steps"]);
    let add = client.list_tools().await.unwrap();
    let add = add.iter().find(|t| t.name() == "add").unwrap();
    assert_eq!(add.description(), Some("Adds two integers"));
    assert_eq!(add.input_schema()["required"], json!(["a", "b"]));

    let sum = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert!(!sum.is_error());
    assert_eq!(sum.text(), "5");
    let refused = client
        .call_tool("add", json!({"a": "two", "b": 3}))
        .await
        .unwrap();
    assert!(refused.is_error(), "{:?}", refused.raw());

    client.drain_notifications();
    let stepped = client
        .call_tool_with_progress("steps", json!({"n": 2}), "py-1")
        .await
        .unwrap();
    assert_eq!(stepped.text(), "2 steps");
    let notes = client.drain_notifications();
    let progress: Vec<f64> = notes
        .iter()
        .filter(|n| n.method() == "notifications/progress")
        .filter(|n| n.params().unwrap()["progressToken"] == "py-1")
        .filter_map(|n| n.params().unwrap()["progress"].as_f64())
        .collect();
    assert_eq!(progress, [1.0, 2.0], "{notes:?}");
    if !client.protocol_version().is_stateless() {
        // The stateless era sends log messages only at a level the request asks for.
        let logged: Vec<&Value> = notes
            .iter()
            .filter(|n| n.method() == "notifications/message")
            .map(|n| &n.params().unwrap()["data"])
            .collect();
        assert_eq!(logged, [&json!("step 1"), &json!("step 2")], "{notes:?}");
    }

    let asked = client.call_tool("ask_name", json!({})).await.unwrap();
    assert_eq!(asked.text(), "Hello, Ada!");

    let templates = client.list_resource_templates().await.unwrap();
    assert_eq!(templates[0]["uriTemplate"], "note://{name}");
    let read = client.read_resource("note://todo").await.unwrap();
    assert_eq!(read["contents"][0]["text"], "the note todo");

    let prompt = client
        .get_prompt("greet", json!({"who": "Ada"}))
        .await
        .unwrap();
    assert_eq!(prompt["messages"][0]["content"]["text"], "Hello, Ada!");
    client.ping().await.unwrap();
}

#[tokio::test]
async fn a_python_sdk_server_over_stdio() {
    let Some((python, script)) = python("a_python_sdk_server_over_stdio") else {
        return;
    };
    for (versions, era) in eras() {
        let client = with_handlers(Client::stdio(python.to_string_lossy()))
            .arg(script.to_string_lossy())
            .arg("stdio")
            .versions(versions.iter().copied())
            .connect()
            .await
            .unwrap();
        assert_eq!(client.protocol_version(), era);
        exercise(&client).await;
        client.close().await.unwrap();
    }
}

/// The script served over HTTP (killed when dropped) and its endpoint's URL.
async fn serve_http(python: &Path, script: &Path) -> (tokio::process::Child, String) {
    let mut child = tokio::process::Command::new(python)
        .arg(script)
        .arg("http")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let port = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("the server prints its port within 30 s")
        .unwrap()
        .expect("the server printed its port");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, format!("http://127.0.0.1:{}/mcp", port.trim()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_sdk_server_over_streamable_http() {
    let Some((python, script)) = python("a_python_sdk_server_over_streamable_http") else {
        return;
    };
    let (_server, url) = serve_http(&python, &script).await;
    for (versions, era) in eras() {
        let client = with_handlers(Client::builder(&url))
            .versions(versions.iter().copied())
            .connect()
            .await
            .unwrap();
        assert_eq!(client.protocol_version(), era);
        assert_eq!(client.session_id().is_some(), !era.is_stateless());
        exercise(&client).await;
        client.close().await.unwrap();
    }
}
