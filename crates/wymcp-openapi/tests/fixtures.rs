//! Committed Petstore-like documents (3.0 JSON, 3.1 YAML) loaded: the tools, the actions,
//! the operations skipped with their reason, the schemas as the gates get them, and a wymcp
//! server built from them.

#![allow(clippy::unwrap_used, missing_docs)]

use serde_json::{Value, json};
use wymcp::ActionTool;
use wymcp_openapi::{OpenApi, OpenApiTool};

mod support;

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Each tool's name and sorted action names.
fn shape(tools: &[OpenApiTool]) -> Vec<(String, Vec<String>)> {
    tools
        .iter()
        .map(|t| {
            let mut actions: Vec<String> = t
                .actions()
                .entries()
                .iter()
                .map(|(n, _)| n.clone())
                .collect();
            actions.sort();
            (t.name().to_owned(), actions)
        })
        .collect()
}

fn action(tools: &[OpenApiTool], tool: &str, action: &str) -> Value {
    let tool = tools.iter().find(|t| t.name() == tool).unwrap();
    let actions = tool.actions();
    let (_, schema) = actions.entries().iter().find(|(n, _)| n == action).unwrap();
    schema.clone()
}

#[test]
fn the_petstore_3_0_json_loads_as_one_tool_per_tag() {
    let api = OpenApi::builder()
        .load_file(fixture("petstore-3.0.json"))
        .unwrap();
    assert_eq!(api.tool_names(), ["pet", "store", "user", "api"]);
    let skipped: Vec<(&str, &str)> = api
        .skipped()
        .iter()
        .map(|s| (s.operation(), s.reason()))
        .collect();
    assert_eq!(
        skipped,
        [(
            "POST /pet/{petId}/uploadImage",
            "its required request body is multipart/form-data, not JSON"
        )]
    );
    let tools = api.into_tools();
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        shape(&tools),
        [
            (
                "pet".to_owned(),
                strings(&[
                    "addPet",
                    "deletePet",
                    "findPetsByStatus",
                    "getPetById",
                    "updatePet"
                ])
            ),
            (
                "store".to_owned(),
                strings(&[
                    "delete_store_order_by_orderId",
                    "getInventory",
                    "get_store_order_by_orderId",
                    "placeOrder"
                ])
            ),
            ("user".to_owned(), strings(&["getUserByName", "loginUser"])),
            ("api".to_owned(), strings(&["get_health"])),
        ]
    );

    // The request body: readOnly `id` left out, `nullable` a null type (its enum admitting
    // null), formats the gate does not assert (int64) and `xml`/`example` dropped.
    let add = action(&tools, "pet", "addPet");
    assert_eq!(add["description"], "Add a new pet to the store");
    assert_eq!(add["required"], json!(["body"]));
    let body = &add["properties"]["body"];
    assert_eq!(body["required"], json!(["name", "photoUrls"]));
    assert_eq!(
        body["description"],
        "Pet object that needs to be added to the store"
    );
    assert_eq!(body["properties"]["id"], Value::Null);
    assert_eq!(body["properties"]["name"], json!({"type": "string"}));
    assert_eq!(
        body["properties"]["photoUrls"],
        json!({"type": "array", "items": {"type": "string"}})
    );
    assert_eq!(
        body["properties"]["status"],
        json!({"type": ["string", "null"], "description": "pet status in the store", "enum": ["available", "pending", "sold", null]})
    );
    assert_eq!(
        body["properties"]["category"],
        json!({"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}})
    );

    // A path-level parameter with its description; a header parameter beside it.
    let delete = action(&tools, "pet", "deletePet");
    assert_eq!(
        delete["properties"],
        json!({"petId": {"type": "integer", "description": "ID of the pet"}, "api_key": {"type": "string"}})
    );
    assert_eq!(delete["required"], json!(["petId"]));
    assert_eq!(delete["notes"], "HTTP DELETE /pet/{petId}");
    // The summary as description, the long description in the notes.
    let find = action(&tools, "pet", "findPetsByStatus");
    assert_eq!(find["description"], "Finds pets by status");
    // ... and what it answers: the 200 response's schema, resolved and normalized (the
    // answer's `readOnly` id kept), quoted whole while small.
    let answers = json!({"type": "array", "items": {
        "type": "object", "required": ["id", "name", "photoUrls"],
        "properties": {
            "id": {"type": "integer", "readOnly": true},
            "name": {"type": "string"},
            "category": {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}},
            "photoUrls": {"type": "array", "items": {"type": "string"}},
            "tags": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}}},
            "status": {"type": ["string", "null"], "description": "pet status in the store", "enum": ["available", "pending", "sold", null]}
        }
    }});
    assert_eq!(
        find["notes"],
        format!(
            "HTTP GET /pet/findByStatus\n\nMultiple status values can be provided.\nUse commas in the UI.\n\nAnswers 200 with JSON of the schema {answers}"
        )
    );
    // 3.0's boolean exclusiveMinimum as 2020-12's number.
    assert_eq!(
        action(&tools, "store", "delete_store_order_by_orderId")["properties"]["orderId"],
        json!({"type": "integer", "exclusiveMinimum": 1})
    );

    let server = tools
        .into_iter()
        .fold(wymcp::Server::builder(), wymcp::ServerBuilder::tool)
        .build()
        .unwrap();
    assert_eq!(server.tool_names(), ["pet", "store", "user", "api", "help"]);
}

#[test]
fn the_petstore_3_1_yaml_loads_with_type_arrays_siblings_of_ref_and_recursion() {
    let api = OpenApi::builder()
        .untagged_tool("other")
        .load_file(fixture("petstore-3.1.yaml"))
        .unwrap();
    assert_eq!(api.skipped(), []);
    let tools = api.into_tools();
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        shape(&tools),
        [
            (
                "pets".to_owned(),
                strings(&["createPets", "get_pets_by_petId", "listPets"])
            ),
            (
                "owners".to_owned(),
                strings(&["get_owners_by_ownerId_pets"])
            ),
        ]
    );
    let create = action(&tools, "pets", "createPets");
    let pet = &create["properties"]["body"];
    assert_eq!(
        pet["properties"]["tag"],
        json!({"type": ["string", "null"]})
    );
    // `description` beside `$ref` kept; the recursion Pet → Owner → Pet ends in an open schema.
    let owner = &pet["properties"]["owner"];
    assert_eq!(owner["description"], "Who keeps the pet");
    assert_eq!(
        owner["properties"]["pets"]["items"],
        json!({"description": "(recursive: #/components/schemas/Pet)"})
    );
    let owners = action(&tools, "owners", "get_owners_by_ownerId_pets");
    assert_eq!(
        owners["properties"],
        json!({"ownerId": {"type": "integer"}, "X-Request-Id": {"type": "string", "format": "uuid"}})
    );
    let server = tools
        .into_iter()
        .fold(wymcp::Server::builder(), wymcp::ServerBuilder::tool)
        .build()
        .unwrap();
    assert_eq!(server.tool_names(), ["pets", "owners", "help"]);
}

/// The catalogue a model reads (`tools/list`, compact JSON) in action form against the same
/// operations as one flat tool each (its data schema as the input schema, its annotations and
/// the same output schema): the figure docs/openapi.md quotes.
#[test]
fn the_action_catalogue_is_smaller_than_flat_tools() {
    let api = OpenApi::builder()
        .load_file(fixture("petstore-3.0.json"))
        .unwrap();
    let (action_bytes, flat_bytes, operations) = support::catalogue::sizes(api.into_tools());
    println!(
        "petstore-3.0.json, {} operations: action form {action_bytes} bytes, flat {flat_bytes} bytes, ratio {:.2}",
        operations,
        action_bytes as f64 / flat_bytes as f64
    );
    assert!(action_bytes < flat_bytes, "{action_bytes} >= {flat_bytes}");
}

/// Swagger's own Petstore samples (3.0 JSON and 3.1 YAML, shipped unchanged under their
/// license, `tests/fixtures/swagger-petstore.LICENSE`): all 20 operations of each served as
/// actions of one tool per tag, none skipped; the two optional bodies that are not JSON (a
/// form and a multipart upload) said in the action's notes; the same catalogue from either
/// version, and its size against flat tools (reported in docs/openapi.md).
#[test]
fn swaggers_petstore_samples_load_every_operation_served_or_reported() {
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let mut catalogues = Vec::new();
    // The upload's body is multipart in 3.0 and bytes in 3.1.
    for (file, upload_body) in [
        ("swagger-petstore-3.0.json", "multipart/form-data"),
        ("swagger-petstore-3.1.yaml", "application/octet-stream"),
    ] {
        let api = OpenApi::builder().load_file(fixture(file)).unwrap();
        assert!(api.skipped().is_empty(), "{file}: {:?}", api.skipped());
        let tools = api.into_tools();
        assert_eq!(
            shape(&tools),
            [
                (
                    "pet".to_owned(),
                    strings(&[
                        "addPet",
                        "deletePet",
                        "findPetsByStatus",
                        "findPetsByTags",
                        "getPetById",
                        "updatePet",
                        "updatePetWithForm",
                        "uploadFile"
                    ])
                ),
                (
                    "store".to_owned(),
                    strings(&["deleteOrder", "getInventory", "getOrderById", "placeOrder"])
                ),
                (
                    "user".to_owned(),
                    strings(&[
                        "createUser",
                        "createUsersWithArrayInput",
                        "createUsersWithListInput",
                        "deleteUser",
                        "getUserByName",
                        "loginUser",
                        "logoutUser",
                        "updateUser"
                    ])
                ),
            ],
            "{file}"
        );
        let upload = action(&tools, "pet", "uploadFile");
        assert_eq!(upload["required"], json!(["petId"]), "{file}");
        assert!(
            upload["notes"].as_str().unwrap().contains(&format!(
                "Its optional request body ({upload_body}) is not sent: only JSON bodies are."
            )),
            "{file}: {}",
            upload["notes"]
        );
        let form = action(&tools, "pet", "updatePetWithForm");
        assert!(
            form["notes"].as_str().unwrap().contains(
                "Its optional request body (application/x-www-form-urlencoded) is not sent"
            ),
            "{file}: {}",
            form["notes"]
        );
        // A JSON body by `$ref` to `components/requestBodies`, required.
        let list = action(&tools, "user", "createUsersWithListInput");
        assert_eq!(list["required"], json!(["body"]), "{file}");
        assert_eq!(list["properties"]["body"]["type"], "array", "{file}");
        catalogues.push(support::catalogue::sizes(tools));
    }
    assert_eq!(catalogues[0], catalogues[1], "3.0 and 3.1 fold alike");
    let (action_bytes, flat_bytes, operations) = catalogues[0];
    assert_eq!(operations, 20);
    let ratio = action_bytes as f64 / flat_bytes as f64;
    println!(
        "Swagger Petstore: {action_bytes} bytes as actions, {flat_bytes} as flat tools: {ratio:.3}"
    );
    assert!(ratio < 0.3, "{ratio:.3}");
}
