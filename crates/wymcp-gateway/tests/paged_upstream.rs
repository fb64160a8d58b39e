//! A gateway in front of a wymcp upstream that pages `tools/list`
//! (`Limits::tools_per_page`): the gateway follows `nextCursor` and serves every upstream tool.

#![allow(clippy::unwrap_used, missing_docs)]

use serde_json::{Map, Value};
use wymcp::transport::http::{HttpServer, StreamableHttp};
use wymcp::{CallOutput, CallResult, Context, Limits, PlainTool, ProtocolVersion, Server};
use wymcp_gateway::{Expose, Gateway, GatewayConfig, UpstreamConfig};

/// Upstream tools besides its `help`: 21 pages of 50.
const TOOLS: usize = 1_001;

struct Numbered(String);

impl PlainTool for Numbered {
    fn name(&self) -> &str {
        &self.0
    }
    fn description(&self) -> &str {
        "One of many"
    }
    fn input_schema(&self) -> Map<String, Value> {
        let mut schema = Map::new();
        schema.insert("type".into(), Value::String("object".into()));
        schema
    }
    async fn run(&self, _arguments: Map<String, Value>, _ctx: Context) -> CallResult {
        Ok(CallOutput::text(self.0.clone()))
    }
}

#[tokio::test]
async fn a_gateway_lists_every_tool_of_a_paged_upstream() {
    let mut builder = Server::builder()
        .name("paged")
        .limits(Limits::default().tools_per_page(50));
    for i in 0..TOOLS {
        builder = builder.plain_tool(Numbered(format!("tool_{i:04}")));
    }
    let upstream = builder.build().unwrap();
    let http = HttpServer::bind("127.0.0.1:0", StreamableHttp::builder(upstream))
        .await
        .unwrap();
    let url = format!("http://{}/mcp", http.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(http.run_until(async move {
        let _ = stopped.await;
    }));

    let config = UpstreamConfig::http("up", url).expose(Expose::Tools);
    let gateway = Gateway::start(GatewayConfig::new().upstream(config)).await;
    assert_eq!(gateway.notices(), []);
    let server = gateway
        .register(Server::builder().name("gw"))
        .build()
        .unwrap();
    let listed = server.list_tools(ProtocolVersion::V2025_11_25);
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for i in 0..TOOLS {
        let name = format!("up_tool_{i:04}");
        assert!(
            names.contains(&name.as_str()),
            "{name} missing from {}",
            names.len()
        );
    }
    let _ = stop.send(());
}
