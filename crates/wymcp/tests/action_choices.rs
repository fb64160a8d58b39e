//! The refusals of a missing or unknown action (gates 3 and 4) list what writing the call
//! needs: each action's description and signature, the likeliest first when the call's data
//! keys suggest it, bounded by `Limits::max_listed_actions` and `Limits::max_action_signature`.
//! Asserted whole, over real Streamable HTTP on 127.0.0.1 (issue 47, first item).

#![allow(clippy::unwrap_used, missing_docs)]

mod http_harness;

use http_harness::{Answer, Http, data_lines};
use serde_json::{Value, json};
use wymcp::transport::http::StreamableHttp;
use wymcp::{
    ActionResult, ActionSchema, ActionTool, Actions, Context, Data, Limits, Reply, Server,
};

/// A small tool with one action of each shape a signature renders.
struct Notes;

impl ActionTool for Notes {
    fn name(&self) -> &str {
        "notes"
    }
    fn description(&self) -> &str {
        "Notes"
    }
    fn actions(&self) -> Actions {
        Actions::new()
            .action(
                "archive",
                ActionSchema::new("Archive a note")
                    .property("id", json!({"type": "integer"}))
                    .required(["id"]),
            )
            .action(
                "create",
                ActionSchema::new("Create a note")
                    .property("title", json!({"type": "string"}))
                    .property("due", json!({"type": "string", "format": "date-time"}))
                    .property(
                        "tags",
                        json!({"type": "array", "items": {"type": "string"}}),
                    )
                    .required(["title"]),
            )
            .action(
                "find",
                ActionSchema::new("Find notes")
                    .property("id", json!({"type": "integer"}))
                    .property("title", json!({"type": "string"}))
                    .required_one_of([["id"], ["title"]]),
            )
            .action("list", ActionSchema::new("List the notes"))
    }
    async fn run_action(&self, _action: &str, _data: Data, _ctx: Context) -> ActionResult {
        Ok(Reply::new(json!({"ok": true})))
    }
}

/// A tool of 25 actions `a00` … `a24`, each declaring its own key `k<nn>`.
struct Many;

impl ActionTool for Many {
    fn name(&self) -> &str {
        "many"
    }
    fn description(&self) -> &str {
        "Many actions"
    }
    fn actions(&self) -> Actions {
        let mut actions = Actions::new();
        for i in 0..25 {
            actions = actions.action(
                format!("a{i:02}"),
                ActionSchema::new(format!("Action number {i} of the many"))
                    .property(format!("k{i:02}"), json!({"type": "string"})),
            );
        }
        actions
    }
    async fn run_action(&self, _action: &str, _data: Data, _ctx: Context) -> ActionResult {
        Ok(Reply::new(json!({"ok": true})))
    }
}

async fn serve(limits: Limits) -> Http {
    let server = Server::builder()
        .name("choices")
        .limits(limits)
        .tool(Notes)
        .tool(Many)
        .build()
        .unwrap();
    Http::serve(StreamableHttp::builder(server)).await
}

/// Calls `tool` with `arguments` in a fresh session over HTTP: the refusal payload (the
/// result must be `isError`).
async fn refusal(http: &Http, tool: &str, arguments: Value) -> Value {
    let session = http.open_session(json!({})).await;
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}});
    let answer = Answer::read(http.session_post(&session, &body).await).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    let envelope = if answer.text.trim_start().starts_with('{') {
        answer.json()
    } else {
        data_lines(&answer.text).pop().unwrap()
    };
    let result = &envelope["result"];
    assert_eq!(result["isError"], true, "{envelope}");
    serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
}

fn archive() -> Value {
    json!({"name": "archive", "description": "Archive a note", "signature": "archive(id: integer)"})
}
fn create() -> Value {
    json!({"name": "create", "description": "Create a note",
        "signature": "create(title: string, due?: date-time, tags?: string[])"})
}
fn find() -> Value {
    json!({"name": "find", "description": "Find notes",
        "signature": "find(id?: integer, title?: string; one of (id) | (title))"})
}
fn list() -> Value {
    json!({"name": "list", "description": "List the notes", "signature": "list()"})
}

const NOTES_MISSING: &str = "Missing required 'action' argument for tool 'notes'. Valid actions: archive, create, find, list.";

#[tokio::test]
async fn missing_action_lists_every_signature_in_name_order() {
    let http = serve(Limits::default()).await;
    for arguments in [json!({}), json!({"data": {}})] {
        assert_eq!(
            refusal(&http, "notes", arguments).await,
            json!({
                "error": "missing_action",
                "message": NOTES_MISSING,
                "valid_actions": ["archive", "create", "find", "list"],
                "actions": [archive(), create(), find(), list()],
                "help": "help {tool: \"notes\"}",
            })
        );
    }
}

#[tokio::test]
async fn missing_action_ranks_the_actions_declaring_the_sent_keys_first() {
    let http = serve(Limits::default()).await;
    // create declares title and due, find title only; archive and list neither.
    let body = refusal(
        &http,
        "notes",
        json!({"data": {"title": "x", "due": "2026-01-01T00:00:00Z", "colour": "red"}}),
    )
    .await;
    assert_eq!(
        body,
        json!({
            "error": "missing_action",
            "message": NOTES_MISSING,
            "valid_actions": ["archive", "create", "find", "list"],
            "actions": [create(), find(), archive(), list()],
            "help": "help {tool: \"notes\"}",
        })
    );
}

#[tokio::test]
async fn unknown_action_lists_the_signatures_with_and_without_suggestive_keys() {
    let http = serve(Limits::default()).await;
    let message =
        "Unknown action 'make' for tool 'notes'. Valid actions: archive, create, find, list.";
    assert_eq!(
        refusal(&http, "notes", json!({"action": "make"})).await,
        json!({
            "error": "unknown_action",
            "message": message,
            "valid_actions": ["archive", "create", "find", "list"],
            "actions": [archive(), create(), find(), list()],
            "help": "help {tool: \"notes\"}",
        })
    );
    // id: archive and find declare it (name order between them), then the rest.
    assert_eq!(
        refusal(&http, "notes", json!({"action": "make", "data": {"id": 1}})).await,
        json!({
            "error": "unknown_action",
            "message": message,
            "valid_actions": ["archive", "create", "find", "list"],
            "actions": [archive(), find(), create(), list()],
            "help": "help {tool: \"notes\"}",
        })
    );
}

/// The 20 first actions of `many` in `order`, as listed.
fn many_listed(order: impl Iterator<Item = usize>) -> Vec<Value> {
    order
        .take(20)
        .map(|i| {
            json!({
                "name": format!("a{i:02}"),
                "description": format!("Action number {i} of the many"),
                "signature": format!("a{i:02}(k{i:02}?: string)"),
            })
        })
        .collect()
}

#[tokio::test]
async fn many_actions_are_bounded_with_the_count_left_out() {
    let http = serve(Limits::default()).await;
    let names: Vec<String> = (0..25).map(|i| format!("a{i:02}")).collect();
    let note = "5 more action(s) not listed here: the limit is 20 \
                (Limits::max_listed_actions); help lists them all";
    let body = refusal(&http, "many", json!({})).await;
    assert_eq!(
        body,
        json!({
            "error": "missing_action",
            "message": format!(
                "Missing required 'action' argument for tool 'many'. Valid actions: {}.",
                names.join(", ")
            ),
            "valid_actions": names,
            "actions": many_listed(0..25),
            "actions_omitted": 5,
            "actions_note": note,
            "help": "help {tool: \"many\"}",
        })
    );
    // A key only a24 declares brings it from beyond the bound to the top.
    let body = refusal(
        &http,
        "many",
        json!({"action": "a99", "data": {"k24": "x"}}),
    )
    .await;
    assert_eq!(
        body["actions"],
        json!(many_listed(std::iter::once(24).chain(0..24)))
    );
    assert_eq!(body["actions_omitted"], 5);
    assert_eq!(body["valid_actions"], json!(names));
}

#[tokio::test]
async fn the_bounds_are_the_limits() {
    let http = serve(
        Limits::default()
            .max_listed_actions(2)
            .max_action_signature(12),
    )
    .await;
    let body = refusal(&http, "notes", json!({"action": "nope"})).await;
    assert_eq!(
        body["actions"],
        json!([
            {"name": "archive", "description": "Archive a no…(+2 chars)",
             "signature": "archive(id: …(+8 chars)"},
            {"name": "create", "description": "Create a not…(+1 chars)",
             "signature": "create(title…(+43 chars)"},
        ])
    );
    assert_eq!(body["actions_omitted"], 2);
    assert_eq!(
        body["actions_note"],
        "2 more action(s) not listed here: the limit is 2 \
         (Limits::max_listed_actions); help lists them all"
    );
    assert_eq!(
        body["valid_actions"],
        json!(["archive", "create", "find", "list"])
    );
}
