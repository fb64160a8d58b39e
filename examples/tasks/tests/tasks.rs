//! The `tasks` example application, exercised through `wymcp::testing` (in process, over an
//! in-memory database) and once over real HTTP on 127.0.0.1.
//!
//! The example's own modules are compiled into this test: the tests drive the very tools
//! `cargo run -p wymcp-tasks` serves.

#![allow(clippy::unwrap_used, missing_docs)]

#[allow(dead_code)]
#[path = "../src/resources.rs"]
mod resources;
#[allow(dead_code)]
#[path = "../src/store.rs"]
mod store;
#[allow(dead_code)]
#[path = "../src/tools.rs"]
mod tools;

use serde_json::{Value, json};
use wymcp::ProtocolVersion;
use wymcp::testing::{
    TestClient, assert_gate_error, assert_hint, assert_ok, assert_tool_error, build_action_request,
    error_response, json_response,
};

use crate::store::Store;

fn client() -> TestClient {
    let store = Store::open_in_memory().unwrap();
    TestClient::new(tools::server(store).unwrap())
}

async fn create(client: &TestClient, data: Value) -> Value {
    assert_ok(&client.call("tasks", "create", data).await.unwrap())
}

#[test]
fn tools_list_offers_three_tools_and_help() {
    let client = client();
    let list = client.list_tools(ProtocolVersion::V2025_11_25);
    let names: Vec<&str> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["tasks", "projects", "search", "help"]);
    let search = &list["tools"][2];
    assert_eq!(
        search["outputSchema"]["required"],
        json!(["query", "count", "results"])
    );
    assert_eq!(search["annotations"]["readOnlyHint"], true);
    assert_eq!(list["tools"][0]["title"], "Tasks");
    // 2025-03-26 has no output schemas and no titles.
    let old = client.list_tools(ProtocolVersion::V2025_03_26);
    assert!(old["tools"][2].get("outputSchema").is_none());
}

#[tokio::test]
async fn create_applies_defaults_and_hints_at_next_steps() {
    let client = client();
    let result = client
        .call(
            "tasks",
            "create",
            json!({"title": "Renew passport", "tags": ["admin"],
                   "checklist": [{"text": "Take photos"}, {"text": "Fill in the form", "done": true}]}),
        )
        .await
        .unwrap();
    let task = assert_ok(&result);
    assert_eq!(task["id"], 1);
    assert_eq!(task["priority"], 3, "the action's default");
    assert_eq!(task["status"], "open");
    assert_eq!(
        task["checklist"][0],
        json!({"text": "Take photos", "done": false})
    );
    assert_eq!(task["checklist"][1]["done"], true);
    let hint = assert_hint(&result, "tasks", "complete");
    assert_eq!(hint["example"], json!({"id": 1}));
    assert_hint(&result, "tasks", "update");
    assert!(result.context().is_none(), "nothing is overdue");
}

#[tokio::test]
async fn get_by_id_or_by_title_and_neither_is_refused() {
    let client = client();
    create(&client, json!({"title": "Buy milk"})).await;
    create(&client, json!({"title": "Water plants", "priority": 1})).await;

    let by_id = assert_ok(&client.call("tasks", "get", json!({"id": 2})).await.unwrap());
    assert_eq!(by_id["title"], "Water plants");
    let by_title = assert_ok(
        &client
            .call("tasks", "get", json!({"title": "buy MILK"}))
            .await
            .unwrap(),
    );
    assert_eq!(by_title["id"], 1);

    let refused = client.call("tasks", "get", json!({})).await.unwrap();
    let gate = assert_gate_error(&refused, "missing_required_group");
    assert_eq!(gate.payload["required_one_of"], json!([["id"], ["title"]]));
    assert_eq!(gate.help(), Some("help {tool: \"tasks\", action: \"get\"}"));

    let missing = client
        .call("tasks", "get", json!({"id": 99}))
        .await
        .unwrap();
    assert_eq!(
        assert_tool_error(&missing),
        "Operation failed: No task with id 99"
    );
    assert_hint(&missing, "tasks", "list");
}

#[tokio::test]
async fn gates_refuse_bad_dates_ranges_and_unknown_nested_keys() {
    let client = client();
    let refused = client
        .call(
            "tasks",
            "create",
            json!({"title": "Buy milk", "due": "tomorrow", "priority": 9}),
        )
        .await
        .unwrap();
    let gate = assert_gate_error(&refused, "invalid_values");
    let paths: Vec<&str> = gate.payload["invalid"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["/due", "/priority"]);

    let nested = client
        .call(
            "tasks",
            "create",
            json!({"title": "x", "checklist": [{"text": "a", "checked": true}]}),
        )
        .await
        .unwrap();
    let gate = assert_gate_error(&nested, "unknown_params");
    assert_eq!(gate.payload["unknown"], json!(["/checklist/0/checked"]));

    let unknown = client.call("tasks", "fetch", json!({})).await.unwrap();
    assert_gate_error(&unknown, "unknown_action");
    let bad_slug = client
        .call("projects", "create", json!({"name": "Home Stuff"}))
        .await
        .unwrap();
    assert_gate_error(&bad_slug, "invalid_values");
    // A plain tool's `required` is checked by the value gate, against its input schema.
    let no_query = client.call_tool("search", json!({})).await.unwrap();
    let gate = assert_gate_error(&no_query, "invalid_values");
    assert_eq!(
        gate.payload["invalid"][0]["problems"],
        json!(["missing required property 'query'"])
    );
}

#[tokio::test]
async fn overdue_tasks_show_up_in_the_context_tip() {
    let client = client();
    create(
        &client,
        json!({"title": "Old", "due": "2001-01-01T09:00:00Z"}),
    )
    .await;
    create(
        &client,
        json!({"title": "Future", "due": "2999-01-01T09:00:00+02:00"}),
    )
    .await;

    let listed = client
        .call("tasks", "list", json!({"overdue": true}))
        .await
        .unwrap();
    let body = assert_ok(&listed);
    assert_eq!(body["count"], 1);
    assert_eq!(body["tasks"][0]["title"], "Old");
    assert_eq!(body["tasks"][0]["overdue"], true);
    assert_eq!(listed.context().unwrap()["overdue_tasks"], 1);

    // help's action level carries the same context.
    let help = assert_ok(&client.help(Some("tasks"), Some("list")).await);
    assert_eq!(help["context"]["overdue_tasks"], 1);

    let done = client
        .call("tasks", "complete", json!({"id": 1}))
        .await
        .unwrap();
    assert_eq!(assert_ok(&done)["status"], "done");
    assert!(done.context().is_none(), "nothing is overdue any more");
}

#[tokio::test]
async fn projects_group_tasks_and_an_unknown_project_points_at_projects_create() {
    let client = client();
    let failed = client
        .call(
            "tasks",
            "create",
            json!({"title": "Fix tap", "project": "home"}),
        )
        .await
        .unwrap();
    assert_eq!(
        assert_tool_error(&failed),
        "Operation failed: project 'home' does not exist"
    );
    let hint = assert_hint(&failed, "projects", "create");
    assert_eq!(hint["example"], json!({"name": "home"}));

    assert_ok(
        &client
            .call("projects", "create", json!({"name": "home"}))
            .await
            .unwrap(),
    );
    create(&client, json!({"title": "Fix tap", "project": "home"})).await;
    let listed = assert_ok(&client.call("projects", "list", json!({})).await.unwrap());
    assert_eq!(listed["projects"][0]["open_tasks"], 1);

    let duplicate = client
        .call("projects", "create", json!({"name": "home"}))
        .await
        .unwrap();
    assert_eq!(
        assert_tool_error(&duplicate),
        "Operation failed: project 'home' exists already"
    );

    assert_ok(
        &client
            .call("projects", "archive", json!({"name": "home"}))
            .await
            .unwrap(),
    );
    let hidden = assert_ok(&client.call("projects", "list", json!({})).await.unwrap());
    assert_eq!(hidden["projects"], json!([]));
    let refused = client
        .call(
            "tasks",
            "create",
            json!({"title": "Paint", "project": "home"}),
        )
        .await
        .unwrap();
    assert!(assert_tool_error(&refused).contains("archived"));
}

#[tokio::test]
async fn update_complete_delete() {
    let client = client();
    create(&client, json!({"title": "Draft"})).await;
    let updated = assert_ok(
        &client
            .call(
                "tasks",
                "update",
                json!({"id": 1, "title": "Final", "tags": ["writing"], "priority": 2}),
            )
            .await
            .unwrap(),
    );
    assert_eq!(updated["title"], "Final");
    assert_eq!(updated["tags"], json!(["writing"]));
    let by_tag = assert_ok(
        &client
            .call("tasks", "list", json!({"tag": "writing"}))
            .await
            .unwrap(),
    );
    assert_eq!(by_tag["count"], 1);

    let done = assert_ok(
        &client
            .call("tasks", "complete", json!({"id": 1}))
            .await
            .unwrap(),
    );
    assert!(done["completed_at"].is_string());
    let open = assert_ok(&client.call("tasks", "list", json!({})).await.unwrap());
    assert_eq!(open["count"], 0, "list defaults to open tasks");
    let all = assert_ok(
        &client
            .call("tasks", "list", json!({"status": "all"}))
            .await
            .unwrap(),
    );
    assert_eq!(all["count"], 1);

    // No session, so no elicitation: the model's call is the confirmation.
    let deleted = client
        .call("tasks", "delete", json!({"id": 1}))
        .await
        .unwrap();
    assert_eq!(assert_ok(&deleted), json!({"deleted": true, "id": 1}));
    let gone = client.call("tasks", "get", json!({"id": 1})).await.unwrap();
    assert_tool_error(&gone);
}

#[tokio::test]
async fn search_answers_structured_content() {
    let client = client();
    create(
        &client,
        json!({"title": "Renew passport", "notes": "photo booth"}),
    )
    .await;
    create(&client, json!({"title": "Buy milk", "tags": ["errand"]})).await;
    let result = client
        .call_tool("search", json!({"query": "PHOTO"}))
        .await
        .unwrap();
    let body = assert_ok(&result);
    assert_eq!(body["count"], 1);
    assert_eq!(body["results"][0]["title"], "Renew passport");
    assert_eq!(result.structured_content(), Some(&body));
    // LIKE wildcards are searched for literally.
    let none = assert_ok(
        &client
            .call_tool("search", json!({"query": "%"}))
            .await
            .unwrap(),
    );
    assert_eq!(none["count"], 0);
    let by_tag = assert_ok(
        &client
            .call_tool("search", json!({"query": "errand"}))
            .await
            .unwrap(),
    );
    assert_eq!(by_tag["count"], 1);
}

#[tokio::test]
async fn import_reports_progress_per_batch() {
    let client = client();
    let items: Vec<Value> = (0..120)
        .map(|i| json!({"title": format!("Item {i}"), "tags": ["bulk"]}))
        .collect();
    let result = client
        .call_with_progress(
            "tasks",
            "import",
            json!({"tasks": items}),
            json!("import-1"),
        )
        .await
        .unwrap();
    let body = assert_ok(&result);
    assert_eq!(body["imported"], 120);
    let progress: Vec<f64> = client
        .notifications()
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .map(|n| {
            assert_eq!(n["params"]["progressToken"], "import-1");
            assert_eq!(n["params"]["total"], 120.0);
            n["params"]["progress"].as_f64().unwrap()
        })
        .collect();
    assert_eq!(progress, [50.0, 100.0, 120.0]);

    let empty = client
        .call("tasks", "import", json!({"tasks": []}))
        .await
        .unwrap();
    assert_gate_error(&empty, "invalid_values");
}

#[tokio::test]
async fn a_resource_per_project_and_the_plan_my_day_prompt() {
    let client = client();
    assert_eq!(
        client.server().resource_template_uris(),
        ["tasks://projects/{name}"]
    );
    assert_eq!(client.server().prompt_names(), ["plan_my_day"]);
    client
        .call(
            "projects",
            "create",
            json!({"name": "home", "description": "Chores"}),
        )
        .await
        .unwrap();
    create(
        &client,
        json!({"title": "Fix tap", "project": "home", "priority": 1}),
    )
    .await;
    create(
        &client,
        json!({"title": "Old bill", "due": "2001-01-01T00:00:00Z"}),
    )
    .await;

    let read = client.read_resource("tasks://projects/home").await.unwrap();
    let contents = &read["contents"][0];
    assert_eq!(contents["uri"], "tasks://projects/home");
    assert_eq!(contents["mimeType"], "application/json");
    let body: Value = serde_json::from_str(contents["text"].as_str().unwrap()).unwrap();
    assert_eq!(body["project"]["name"], "home");
    assert_eq!(body["open_tasks"][0]["title"], "Fix tap");
    assert!(client.read_resource("tasks://projects/nope").await.is_err());

    let prompt = client
        .get_prompt("plan_my_day", json!({"hours": "4"}))
        .await
        .unwrap();
    let text = prompt["messages"][0]["content"]["text"].as_str().unwrap();
    assert!(text.starts_with("Plan my day: I have 4 hours."));
    assert!(text.contains("Old bill") && text.contains("Fix tap"));
    let bad = client
        .get_prompt("plan_my_day", json!({"hours": "lots"}))
        .await;
    let bad = bad.unwrap_err();
    assert_eq!(bad.code(), -32602);
    let expected = "hours: \"lots\" is not a number of hours from 0.5 to 24";
    assert!(bad.message().contains(expected), "{}", bad.message());
    let home = client
        .get_prompt("plan_my_day", json!({"project": "home"}))
        .await
        .unwrap();
    assert_eq!(home["description"], "Today's plan from the open tasks");
    let text = home["messages"][0]["content"]["text"].as_str().unwrap();
    assert!(text.starts_with("Plan my day: I have 8 hours."), "{text}");
    assert!(
        text.contains("Fix tap") && !text.contains("Old bill"),
        "{text}"
    );
    let listed = client.request("prompts/list", None).await.unwrap();
    assert_eq!(
        listed["prompts"],
        json!([{
            "name": "plan_my_day",
            "title": "Plan my day",
            "description": "Turn the open tasks into a plan for today, overdue and urgent ones first",
            "arguments": [
                {"name": "project", "description": "Only plan this project's tasks", "required": false},
                {"name": "hours", "description": "Hours available today (default 8)", "required": false}
            ]
        }])
    );
}

#[tokio::test]
async fn help_explains_every_tool() {
    let client = client();
    let index = assert_ok(&client.help(None, None).await);
    let tools: Vec<&str> = index["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["tasks", "projects", "search", "help"]);
    let get = assert_ok(&client.help(Some("tasks"), Some("get")).await);
    assert_eq!(get["required_one_of"], json!([["id"], ["title"]]));
    let create = assert_ok(&client.help(Some("tasks"), Some("create")).await);
    assert_eq!(create["defaults"]["priority"], 3);
    let unknown = client.help(Some("nope"), None).await;
    assert_gate_error(&unknown, "unknown_tool");
}

#[tokio::test]
async fn the_database_file_is_created_on_first_open() {
    let dir = std::env::temp_dir().join(format!("wymcp-tasks-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tasks.db");
    let _ = std::fs::remove_file(&file);
    {
        let client = TestClient::new(tools::server(Store::open(&file).unwrap()).unwrap());
        create(&client, json!({"title": "Persisted"})).await;
    }
    assert!(file.exists());
    let reopened = TestClient::new(tools::server(Store::open(&file).unwrap()).unwrap());
    let found = assert_ok(
        &reopened
            .call("tasks", "get", json!({"title": "Persisted"}))
            .await
            .unwrap(),
    );
    assert_eq!(found["id"], 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The example's server over real HTTP: initialize, tools/list, create, get, a refusal.
#[tokio::test]
async fn over_http_on_an_ephemeral_port() {
    use wymcp::transport::http::{HttpServer, StreamableHttp};

    let server = tools::server(Store::open_in_memory().unwrap()).unwrap();
    let http = HttpServer::bind("127.0.0.1:0", StreamableHttp::builder(server))
        .await
        .unwrap();
    let url = format!("http://{}/mcp", http.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(http.run_until(async {
        let _ = stopped.await;
    }));

    let client = reqwest::Client::new();
    let post = |body: Value, session: Option<String>| {
        let mut request = client
            .post(&url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(session) = session {
            request = request
                .header("Mcp-Session-Id", session)
                .header("MCP-Protocol-Version", "2025-11-25");
        }
        request.send()
    };

    let init = post(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "example-test", "version": "1.0"}}}),
        None,
    )
    .await
    .unwrap();
    assert_eq!(init.status(), 200);
    let session = init
        .headers()
        .get("mcp-session-id")
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    let init: Value = init.json().await.unwrap();
    assert_eq!(init["result"]["serverInfo"]["name"], "wymcp-tasks");
    let initialized = post(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        Some(session.clone()),
    )
    .await
    .unwrap();
    assert_eq!(initialized.status(), 202);
    // A request in the session, answered with JSON.
    let in_session = |body: Value| {
        let answer = post(body, Some(session.clone()));
        async move { answer.await.unwrap().json::<Value>().await.unwrap() }
    };

    let list = in_session(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await;
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 4);

    let created = in_session(build_action_request(
        "tasks",
        "create",
        json!({"title": "Over the wire"}),
    ))
    .await;
    assert_eq!(json_response(&created).unwrap()["id"], 1);

    let got = in_session(build_action_request(
        "tasks",
        "get",
        json!({"title": "Over the wire"}),
    ))
    .await;
    assert_eq!(json_response(&got).unwrap()["title"], "Over the wire");

    let refused = in_session(build_action_request("tasks", "get", json!({}))).await;
    let text = error_response(&refused).unwrap();
    assert!(text.contains("missing_required_group"));

    let _ = stop.send(());
    serving.await.unwrap().unwrap();
}

/// `delete` asks the user through elicitation when the client declares it (over stdio, in
/// memory): an accepted confirmation deletes, a declined one keeps the task.
#[tokio::test]
async fn delete_asks_the_user_to_confirm_over_stdio() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    use wymcp::transport::stdio::{StdioConfig, serve_io};

    let server = tools::server(Store::open_in_memory().unwrap()).unwrap();
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    let stop = tokio_util::sync::CancellationToken::new();
    let serving = tokio::spawn(serve_io(
        server,
        StdioConfig::default(),
        server_read,
        server_write,
        stop.clone(),
        |_| {},
    ));
    let (client_read, mut client_write) = tokio::io::split(client_io);
    let mut lines = BufReader::new(client_read).lines();

    let mut send = async |message: Value| {
        let mut line = message.to_string();
        line.push('\n');
        client_write.write_all(line.as_bytes()).await.unwrap();
    };
    // The next message from the server that `matches`.
    async fn next(
        lines: &mut tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
        matches: impl Fn(&Value) -> bool,
    ) -> Value {
        loop {
            let line = lines
                .next_line()
                .await
                .unwrap()
                .expect("the server hung up");
            let message: Value = serde_json::from_str(&line).unwrap();
            if matches(&message) {
                return message;
            }
        }
    }

    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "example-test", "version": "1.0"}}}),
    )
    .await;
    next(&mut lines, |m| m["id"] == 1).await;
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;

    for (id, answer, deleted) in [
        (
            10,
            json!({"action": "accept", "content": {"confirm": true}}),
            true,
        ),
        (20, json!({"action": "decline"}), false),
    ] {
        send(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params":
            {"name": "tasks", "arguments": {"action": "create", "data": {"title": "Doomed"}}}}),
        )
        .await;
        let created = next(&mut lines, |m| m["id"] == id).await;
        let task = json_response(&created).unwrap();
        send(
            json!({"jsonrpc": "2.0", "id": id + 1, "method": "tools/call", "params":
            {"name": "tasks", "arguments": {"action": "delete", "data": {"id": task["id"]}}}}),
        )
        .await;
        let question = next(&mut lines, |m| m["method"] == "elicitation/create").await;
        assert_eq!(
            question["params"]["message"],
            format!("Delete task {} \"Doomed\" for good?", task["id"])
        );
        send(json!({"jsonrpc": "2.0", "id": question["id"], "result": answer})).await;
        let answered = next(&mut lines, |m| m["id"] == id + 1).await;
        assert_eq!(json_response(&answered).unwrap()["deleted"], deleted);
    }

    stop.cancel();
    serving.await.unwrap().unwrap();
}

/// D3/N12: an unknown 4 MB `project` is quoted back bounded, in the error and in the hints:
/// no answer's size follows its input's (over real HTTP, one 2026-07-28 request each).
#[tokio::test]
async fn a_huge_unknown_project_is_answered_in_bounded_hints() {
    use wymcp::transport::http::{HttpServer, StreamableHttp};

    let server = tools::server(Store::open_in_memory().unwrap()).unwrap();
    let http = HttpServer::bind("127.0.0.1:0", StreamableHttp::builder(server))
        .await
        .unwrap();
    let url = format!("http://{}/mcp", http.local_addr().unwrap());
    tokio::spawn(http.run());
    let huge = "p".repeat(4_000_000);
    let task = json!({"title": "x", "project": huge});
    for (action, data) in [
        ("create", task.clone()),
        (
            "import",
            json!({"tasks": [{"title": "x"}], "project": huge}),
        ),
    ] {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "tasks", "arguments": {"action": action, "data": data},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {},
                      "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"}}}});
        let answer = reqwest::Client::new()
            .post(&url)
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", "tools/call")
            .header("Mcp-Name", "tasks")
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
        let text = answer.text().await.unwrap();
        assert!(text.len() < 8_000, "{action}: {} bytes", text.len());
        let answer: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(answer["result"]["isError"], true, "{action}");
        let payload: Value =
            serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
        let hint = &payload["hints"][0];
        assert_eq!(hint["action"], "create", "{action}");
        let name = hint["example"]["name"].as_str().unwrap();
        assert_eq!(name, format!("{}…(+3999800 chars)", "p".repeat(200)));
    }
}
