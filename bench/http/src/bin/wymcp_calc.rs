//! (b) wymcp: one action-dispatched tool `calc` (action `add`, `a` and `b` required integers),
//! stateful Streamable HTTP at `/mcp`, through the full gate chain.
//!
//! `wymcp_calc <addr>`: prints `listening on <addr>` once bound. `wymcp_calc stdio`: the same
//! server over stdin/stdout instead (`wymcp::transport::stdio::serve`; the stdio figure,
//! `stdio.sh`). `WYMCP_CALC_REDIS=URL` keeps
//! its sessions and events on that Redis (one node of several). `WYMCP_CALC_LAYER` puts one
//! operation-middleware layer on the server, to measure its cost on the hot path: `noop` (a
//! `layer_fn` that passes the call on), `rate`, `concurrency`, `result-size`, `timeout`,
//! `audit` (the built-ins, with limits the load never reaches). `WYMCP_CALC_TOOLS=N` registers
//! N other action tools of `WYMCP_CALC_ACTIONS` actions each (default 10) before `calc`, for the
//! cost of a call as the catalogue grows (docs/performance.md, "Cost as the work grows").
//! `WYMCP_CALC_TOOLS_PER_PAGE=N` pages `tools/list` at N tools (`Limits::tools_per_page`; not
//! paged by default): the cost of a page (`list_pages.sh`).
//! `WYMCP_CALC_RUNTIME=1` adds a tool `grow` whose action `add` (`n`, an integer) registers
//! `n` tools `runtime<i>` of `WYMCP_CALC_ACTIONS` actions each on the caller's session
//! (`SessionHandle::register_tool`): the runtime-tools figures (`runtime_tools.sh`).
//! `WYMCP_CALC_NOTE=1` gives `add` an optional string `note` (the argument-size figure:
//! `MCPLOAD_PAD`). `WYMCP_CALC_STREAMS=1` lets one client hold 20,000 GET streams with no
//! keep-alive comments, on as many connections, and as many `subscriptions/listen` streams
//! (2026-07-28; the server then declares `tools.listChanged`), and makes each `SIGUSR1` fan one
//! `notifications/tools/list_changed` out to every session and listen stream
//! (`Server::notify_tools_list_changed`): the open-streams figures. Built with `--features otel`
//! (wymcp's `otel`), `WYMCP_CALC_METRICS=1` installs OpenTelemetry's SDK meter provider read by
//! the Prometheus exporter, as `wymcp::run`'s `--metrics` does, as the global one before serving
//! (metrics on; nothing scrapes it).

use serde_json::json;
use tokio::signal::unix::SignalKind;
use wymcp::transport::http::{HttpServer, StreamableHttp};
use wymcp::{ActionResult, ActionSchema, ActionTool, Actions, Context, Data, Reply, Server};

struct Calc {
    /// `add` takes an optional string `note` too (`WYMCP_CALC_NOTE=1`).
    note: bool,
}

impl ActionTool for Calc {
    fn name(&self) -> &str {
        "calc"
    }
    fn description(&self) -> &str {
        "Arithmetic"
    }
    fn actions(&self) -> Actions {
        let add = ActionSchema::new("Add two integers")
            .property("a", json!({"type": "integer"}))
            .property("b", json!({"type": "integer"}))
            .required(["a", "b"]);
        let add = if self.note {
            add.property("note", json!({"type": "string"}))
        } else {
            add
        };
        Actions::new().action("add", add)
    }
    async fn run_action(&self, _action: &str, data: Data, _ctx: Context) -> ActionResult {
        let a = data["a"].as_i64().unwrap_or(0);
        let b = data["b"].as_i64().unwrap_or(0);
        Ok(Reply::new(json!({ "sum": a + b })))
    }
}

/// One of the `WYMCP_CALC_TOOLS` tools that only make the catalogue larger: `filler<i>`, with
/// `actions` actions `a0`, `a1`, ... of one optional string each.
struct Filler {
    name: String,
    actions: usize,
}

impl ActionTool for Filler {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        "A tool the load never calls"
    }
    fn actions(&self) -> Actions {
        (0..self.actions).fold(Actions::new(), |actions, i| {
            actions.action(
                format!("a{i}"),
                ActionSchema::new("An action the load never calls")
                    .property("s", json!({"type": "string"})),
            )
        })
    }
    async fn run_action(&self, _action: &str, _data: Data, _ctx: Context) -> ActionResult {
        Ok(Reply::new(json!({})))
    }
}

/// `WYMCP_CALC_RUNTIME=1`: registers tools on the caller's session at runtime.
struct Grow {
    /// Actions per registered tool.
    actions: usize,
}

impl ActionTool for Grow {
    fn name(&self) -> &str {
        "grow"
    }
    fn description(&self) -> &str {
        "Registers tools on this session"
    }
    fn actions(&self) -> Actions {
        Actions::new().action(
            "add",
            ActionSchema::new("Register n tools runtime<i> on this session")
                .property("n", json!({"type": "integer", "minimum": 0, "maximum": 100000}))
                .required(["n"]),
        )
    }
    async fn run_action(&self, _action: &str, data: Data, ctx: Context) -> ActionResult {
        let n = data["n"].as_u64().unwrap_or(0);
        let Some(session) = ctx.session() else {
            return Ok(Reply::new(json!({ "registered": 0, "why": "no session" })));
        };
        for i in 0..n {
            let name = format!("runtime{i}");
            let actions = self.actions;
            if let Err(error) = session.register_tool(Filler { name, actions }) {
                return Ok(Reply::new(json!({ "registered": i, "why": error.to_string() })));
            }
        }
        Ok(Reply::new(json!({ "registered": n })))
    }
}

/// A count from the environment variable `name`, or `default`.
fn count(name: &str, default: usize) -> Result<usize, String> {
    match std::env::var(name) {
        Ok(text) => text
            .parse()
            .map_err(|_| format!("{name}: not a count: {text:?}")),
        Err(_) => Ok(default),
    }
}

// `ALLOC=mimalloc` (the scripts' knob): this server on mimalloc instead of the system allocator.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".to_owned());
    #[cfg(feature = "otel")]
    let _meters = metrics_on()?;
    let mut builder = Server::builder().name("calc").version("1.0.0");
    let actions = count("WYMCP_CALC_ACTIONS", 10)?;
    for i in 0..count("WYMCP_CALC_TOOLS", 0)? {
        let name = format!("filler{i}");
        builder = builder.tool(Filler { name, actions });
    }
    let note = std::env::var_os("WYMCP_CALC_NOTE").is_some_and(|v| v == "1");
    let mut builder = builder.tool(Calc { note });
    if std::env::var_os("WYMCP_CALC_RUNTIME").is_some_and(|v| v == "1") {
        builder = builder.tool(Grow { actions });
    }
    let streams = std::env::var_os("WYMCP_CALC_STREAMS").is_some_and(|v| v == "1");
    if streams {
        // A listen stream is sent `tools/list_changed` only when the server declares it.
        builder = builder.list_changed(true);
    }
    if std::env::var_os("WYMCP_CALC_TOOLS_PER_PAGE").is_some() {
        let size = count("WYMCP_CALC_TOOLS_PER_PAGE", 0)?;
        builder = builder.limits(wymcp::Limits::default().tools_per_page(size));
    }
    // `WYMCP_CALC_REDIS=URL`: one node of a Redis deployment (docs/scale-out.md).
    if let Ok(url) = std::env::var("WYMCP_CALC_REDIS") {
        builder = builder.backends(wymcp_redis::Redis::connect(&url).await?.backends());
    }
    let server = with_layer(builder, std::env::var("WYMCP_CALC_LAYER").ok().as_deref())?.build()?;
    if addr == "stdio" {
        wymcp::transport::stdio::serve(server).await?;
        return Ok(());
    }
    if streams {
        // Each SIGUSR1: one list_changed fanned out to every session (the open-streams figure).
        let notifier = server.clone();
        let mut usr1 = tokio::signal::unix::signal(SignalKind::user_defined1())?;
        tokio::spawn(async move {
            while usr1.recv().await.is_some() {
                notifier.notify_tools_list_changed();
            }
        });
    }
    // Room for the 10,000 idle sessions of the scale figure plus the 64 of the load.
    let mut builder = StreamableHttp::builder(server).max_sessions(20_000);
    if streams {
        builder = builder
            .max_get_streams_per_client(20_000)
            .max_listen_streams(20_000)
            .max_listen_streams_per_client(20_000)
            .keepalive(std::time::Duration::from_secs(3600));
    }
    let mut http = HttpServer::bind(addr.as_str(), builder).await?;
    // All load comes from one address (wrk, mcpload): the per-client cap (64 by default) would
    // refuse a reconnecting wrk connection with 429 while its old one is still counted.
    let mut limits =
        wymcp::transport::http::ConnectionLimits::new().max_connections_per_client(1_024);
    if streams {
        // One client (mcpload) holds a connection per stream.
        limits = limits
            .max_connections(20_500)
            .max_connections_per_client(20_500);
    }
    http = http.connection_limits(limits);
    println!("listening on {}", http.local_addr()?);
    http.run().await?;
    Ok(())
}

/// `WYMCP_CALC_METRICS=1`: the SDK's meter provider with the Prometheus exporter as its reader
/// (what `--metrics` installs), set as the global one. Kept alive by the caller.
#[cfg(feature = "otel")]
fn metrics_on()
-> Result<Option<opentelemetry_sdk::metrics::SdkMeterProvider>, Box<dyn std::error::Error>> {
    if std::env::var_os("WYMCP_CALC_METRICS").is_none_or(|v| v != "1") {
        return Ok(None);
    }
    let exporter = opentelemetry_prometheus::exporter()
        .with_registry(prometheus::Registry::new())
        .build()?;
    let meters = opentelemetry_sdk::metrics::SdkMeterProvider::builder()
        .with_reader(exporter)
        .build();
    opentelemetry::global::set_meter_provider(meters.clone());
    Ok(Some(meters))
}

/// `builder` with the layer `name` names (none for `None`).
fn with_layer(
    builder: wymcp::ServerBuilder,
    name: Option<&str>,
) -> Result<wymcp::ServerBuilder, String> {
    use std::num::NonZeroU32;
    use std::time::Duration;
    use wymcp::middleware::{
        AuditLayer, BoxOperation, CallConcurrencyLayer, CallTimeoutLayer, RateLimitLayer,
        ResultSizeLimitLayer,
    };
    let unlimited = NonZeroU32::new(1_000_000_000).ok_or("a non-zero rate")?;
    Ok(match name {
        None => builder,
        Some("noop") => builder.layer(tower::layer::layer_fn(|inner: BoxOperation| inner)),
        Some("rate") => builder.layer(RateLimitLayer::per_second(unlimited)),
        Some("concurrency") => builder.layer(CallConcurrencyLayer::new(10_000)),
        Some("result-size") => builder.layer(ResultSizeLimitLayer::new(1 << 20)),
        Some("timeout") => builder.layer(CallTimeoutLayer::new(Duration::from_secs(60))),
        Some("audit") => builder.layer(AuditLayer::new()),
        Some(other) => return Err(format!("WYMCP_CALC_LAYER: unknown layer {other:?}")),
    })
}
