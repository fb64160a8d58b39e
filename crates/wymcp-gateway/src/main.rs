//! `wymcp-gateway`: the MCP servers of a Claude Desktop `mcpServers` file served through
//! wymcp, over Streamable HTTP (`127.0.0.1:8080/mcp` by default) or stdio.
//!
//! ```sh
//! wymcp-gateway --config mcp.json                 # HTTP on 127.0.0.1:8080/mcp
//! wymcp-gateway --config mcp.json --port 9000     # another port (0: a free one)
//! wymcp-gateway --config mcp.json --host 0.0.0.0  # every interface (mind the auth!)
//! wymcp-gateway --config mcp.json --stdio         # stdio, for clients that spawn servers
//! wymcp-gateway --config mcp.json --jwks-url https://id.example.com/jwks \
//!     --issuer https://id.example.com --audience http://127.0.0.1:8080/mcp  # JWT auth
//! wymcp-gateway --config mcp.json --rate-limit 5/s          # 5 calls a second per caller
//! wymcp-gateway --config mcp.json --max-concurrent-calls 4  # 4 calls at once per caller
//! wymcp-gateway --config mcp.json --redis redis://127.0.0.1:6379/  # one node of several
//! wymcp-gateway --config mcp.json --trusted-proxies 127.0.0.1      # behind nginx here
//! wymcp-gateway --config mcp.json --metrics 127.0.0.1:9464  # Prometheus (cargo feature otel)
//! wymcp-gateway --config mcp.json --otlp http://127.0.0.1:4318  # OTLP/HTTP (feature otel)
//! ```
//!
//! `--host` is [`wymcp::run()`]'s `--bind`; `--port`, `--stdio` and `--quiet` (with
//! `RUST_LOG`) are its own. The auth, rate limit, Redis and proxy flags are the tasks
//! example's (`serving.rs`); with `--jwks-url`, each upstream tool or action asks the scopes
//! the config's `scopes` key gives it. Everything the program says goes to stderr, so stdout
//! stays the protocol's under `--stdio`.

mod serving;

use std::path::Path;
use std::process::ExitCode;

use wymcp::run::{Cli, CliError};
use wymcp_gateway::{Gateway, GatewayConfig};

#[tokio::main]
async fn main() -> ExitCode {
    let cli = command();
    // `--host` is the name this program's users know; wymcp's flag is `--bind`.
    let args = std::env::args().skip(1).map(|arg| match arg.as_str() {
        "--host" => "--bind".to_owned(),
        other => match other.strip_prefix("--host=") {
            Some(value) => format!("--bind={value}"),
            None => arg,
        },
    });
    let invocation = match cli.try_parse_from(args) {
        Ok(invocation) => invocation,
        Err(CliError::Help(usage)) => {
            print!("{usage}");
            return ExitCode::SUCCESS;
        }
        Err(refused) => {
            eprint!("error: {refused}\n\n{}", cli.usage());
            return ExitCode::from(refused.exit_code());
        }
    };
    let Some(path) = invocation.value("--config").map(str::to_owned) else {
        eprint!("error: --config FILE is required\n\n{}", cli.usage());
        return ExitCode::from(2);
    };
    let config = match GatewayConfig::from_file(&path) {
        Ok(config) => config,
        Err(error) => {
            eprintln!("error: {path}: {error}");
            return ExitCode::from(2);
        }
    };
    let mut serving = match serving::Serving::read(&invocation) {
        Ok(serving) => serving,
        Err(serving::Refused(refused)) => {
            eprint!("error: {refused}\n\n{}", cli.usage());
            return ExitCode::from(2);
        }
    };
    // --- Telemetry (cargo feature `otel`) ---------------------------------------------
    // `--metrics ADDR` and `--otlp URL` are wymcp::run's flags (wymcp's `otel-export`). The
    // meter provider is installed before the upstreams are reached, so the first upstream calls
    // are measured too; the spans are sent once serving starts, and flushed when it ends.
    #[cfg(feature = "otel")]
    if let Err(error) = invocation.start_telemetry().await {
        eprintln!("error: {error}");
        return ExitCode::FAILURE;
    }
    // --- end of telemetry -------------------------------------------------------------
    let gateway = Gateway::start(config).await;
    for notice in gateway.notices() {
        eprintln!("wymcp-gateway: {notice}");
    }
    let upstreams = gateway.upstreams().join(", ");
    let builder = match serving
        .apply(gateway.register(wymcp::Server::builder().name("wymcp-gateway")))
        .await
    {
        Ok(builder) => builder,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    let server = match builder.build() {
        Ok(server) => server,
        Err(error) => {
            eprintln!("error: the gateway does not build: {error}");
            return ExitCode::FAILURE;
        }
    };
    let absolute =
        std::path::absolute(Path::new(&path)).map_or(path.clone(), |p| p.display().to_string());
    let invocation = invocation
        .detail("config", absolute.clone())
        .detail(
            "upstreams",
            if upstreams.is_empty() {
                "none".to_owned()
            } else {
                upstreams
            },
        )
        .forward("--config", absolute);
    let invocation = match invocation.value("--redis").map(str::to_owned) {
        Some(url) => invocation.detail("sessions", format!("shared with every node on {url}")),
        None => invocation,
    };
    let invocation = forward(invocation);
    let served = match serving.configure() {
        Ok(configure) => invocation.serve_with(server, configure).await,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(2);
        }
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

/// The flags a client spawning this program from the printed entry must pass again.
fn forward(mut invocation: wymcp::run::Invocation) -> wymcp::run::Invocation {
    for flag in ["--rate-limit", "--max-concurrent-calls"] {
        if let Some(value) = invocation.value(flag).map(str::to_owned) {
            invocation = invocation.forward(flag, value);
        }
    }
    invocation
}

/// The command line: [`wymcp::run()`]'s flags, `--config` and the serving flags.
fn command() -> Cli {
    serving::options(
        Cli::new("wymcp-gateway")
            .about("wymcp-gateway: MCP servers served through wymcp's gates")
            .option(
                "--config",
                "FILE",
                "the mcpServers JSON (Claude Desktop's format, with wymcp's keys: docs/gateway.md)",
            ),
    )
}
