//! The catalogue a model reads (`tools/list`, compact JSON) in action form against the same
//! operations as one flat tool each: its data schema as the input schema, its description,
//! annotations and the same output schema.

use serde_json::json;
use wymcp::ActionTool as _;
use wymcp_openapi::OpenApiTool;

/// (action form bytes, flat form bytes, operations) of `tools`.
pub(crate) fn sizes(tools: Vec<OpenApiTool>) -> (usize, usize, usize) {
    let mut flat = Vec::new();
    for tool in &tools {
        for (name, schema) in tool.actions().entries() {
            let mut input = json!({"type": "object", "properties": schema["properties"]});
            if let Some(required) = schema.get("required") {
                input["required"] = required.clone();
            }
            flat.push(json!({
                "name": name,
                "description": schema["description"],
                "inputSchema": input,
                "outputSchema": tool.output_schema(),
                "annotations": {"readOnlyHint": schema["notes"].as_str().unwrap_or_default().starts_with("HTTP GET")},
            }));
        }
    }
    let operations = flat.len();
    let flat_bytes = serde_json::to_string(&json!({"tools": flat}))
        .map(|text| text.len())
        .unwrap_or_default();
    let server = tools
        .into_iter()
        .fold(wymcp::Server::builder(), wymcp::ServerBuilder::tool)
        .build()
        .expect("the tools build");
    let listed = server.list_tools(wymcp::ProtocolVersion::V2025_11_25);
    let action_bytes = serde_json::to_string(&listed)
        .map(|text| text.len())
        .unwrap_or_default();
    (action_bytes, flat_bytes, operations)
}
