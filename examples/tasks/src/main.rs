//! A task tracker an agent can really use: wymcp's example application.
//!
//! ```sh
//! cargo run -p wymcp-tasks                      # Streamable HTTP on 127.0.0.1:8080/mcp
//! cargo run -p wymcp-tasks -- --port 9000       # another port
//! cargo run -p wymcp-tasks -- --bind 0.0.0.0    # every interface (mind the auth!)
//! cargo run -p wymcp-tasks -- --stdio           # stdio, for clients that spawn servers
//! cargo run -p wymcp-tasks -- --data /tmp/t     # another data directory
//! cargo run -p wymcp-tasks --features jwt -- --jwks-url https://id.example.com/jwks \
//!     --issuer https://id.example.com --audience http://127.0.0.1:8080/mcp  # JWT auth
//! cargo run -p wymcp-tasks -- --rate-limit 5/s   # at most 5 calls a second per caller
//! cargo run -p wymcp-tasks -- --max-concurrent-calls 4   # at most 4 calls at once per caller
//! cargo run -p wymcp-tasks --features redis -- --redis redis://127.0.0.1:6379/  # one node of several
//! cargo run -p wymcp-tasks -- --trusted-proxies 127.0.0.1   # behind nginx on this host
//! cargo run -p wymcp-tasks --features otel -- --metrics 127.0.0.1:9464  # Prometheus at /metrics
//! cargo run -p wymcp-tasks --features otel -- --otlp http://127.0.0.1:4318  # spans to a collector
//! ```
//!
//! Tasks live in an SQLite database, `tasks.db` in the data directory: the per-user one
//! (`~/.local/share/wymcp-tasks` on Linux, `~/Library/Application Support/wymcp-tasks` on
//! macOS, `%APPDATA%\wymcp-tasks` on Windows) unless `--data` or `$WYMCP_TASKS_DATA` says
//! otherwise, whatever the working directory; created on first run. `--rate-limit` and
//! `--max-concurrent-calls` put wymcp's operation middleware on every tool (`policy.rs`),
//! counted per caller; a call over either is answered `rate_limited` (with `retryAfterMs`) or
//! `concurrency_limited`. `--jwks-url` needs the cargo feature `jwt` (the JWKS client, TLS and
//! the signature algorithms stay out of the default build). `--redis` (cargo feature `redis`) makes this process one node of
//! several sharing that Redis (sessions, event log, bus: docs/scale-out.md); the nodes share
//! the tasks through the same `--data` directory. `--trusted-proxies` lists the reverse proxies
//! in front (nginx on the same host: `127.0.0.1`) whose `X-Forwarded-For` names the client, so
//! that each client behind them is counted on its own (sessions per client, rate limits,
//! streams) instead of all sharing the proxy's address (docs/scale-out.md). The other flags are [`wymcp::run()`]'s. Everything the program says goes to stderr, so stdout stays
//! the protocol's under `--stdio`.

mod auth;
mod nodes;
mod policy;
mod resources;
mod store;
mod tools;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use wymcp::run::{Cli, Invocation, Transport};

use crate::policy::Policy;
use crate::store::Store;

/// The environment variable naming the data directory.
const DATA_ENV: &str = "WYMCP_TASKS_DATA";

/// The data directory's name under the platform's per-user data directory.
const DATA_DIR_NAME: &str = "wymcp-tasks";

#[tokio::main]
async fn main() -> ExitCode {
    match run(command().parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(message, code)) => {
            // A refused command line (2) is answered as wymcp's own refusals are: why, then
            // the usage.
            if code == 2 {
                eprint!("error: {message}\n\n{}", command().usage());
            } else {
                eprintln!("error: {message}");
            }
            ExitCode::from(code)
        }
    }
}

/// Why the program stopped: what to print, and the exit code (2: a usage error).
struct Failure(String, u8);

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(error: E) -> Self {
        Failure(error.to_string(), 1)
    }
}

/// The command line: [`wymcp::run()`]'s flags and this program's.
fn command() -> Cli {
    Cli::new("tasks")
        .about("wymcp tasks example: a task tracker served over MCP")
        .option(
            "--data",
            "DIR",
            "data directory (default $WYMCP_TASKS_DATA, else the per-user data directory)",
        )
        .option(
            "--jwks-url",
            "URL",
            "accept JWTs signed by the keys of this JWKS (with --issuer, --audience; cargo feature jwt)",
        )
        .option(
            "--issuer",
            "ISS",
            "the issuer (`iss`) of the tokens accepted",
        )
        .option(
            "--audience",
            "AUD",
            "this server's resource URL, the audience (`aud`) tokens must name",
        )
        .option(
            "--rate-limit",
            "RATE",
            "at most RATE tool calls per caller, such as 5/s or 100/min (default: no limit)",
        )
        .option(
            "--max-concurrent-calls",
            "N",
            "at most N tool calls running at once per caller (default: no limit)",
        )
        .option(
            "--redis",
            "URL",
            "serve as one node of several sharing this Redis (sessions, events, bus; cargo feature redis)",
        )
        .option(
            "--trusted-proxies",
            "ADDRS",
            "reverse proxies (IP addresses, comma-separated) whose X-Forwarded-For names the client",
        )
}

/// Reads `--trusted-proxies`: comma-separated IP addresses.
fn trusted_proxies(value: Option<&str>) -> Result<Vec<std::net::IpAddr>, Failure> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    value
        .split(',')
        .map(|address| {
            address.trim().parse().map_err(|_| {
                Failure(
                    format!(
                        "--trusted-proxies: {address:?} is not an IP address (such as 127.0.0.1 or ::1)"
                    ),
                    2,
                )
            })
        })
        .collect()
}

/// Opens the store, builds the server and serves it as the command line says.
async fn run(cli: Invocation) -> Result<(), Failure> {
    let auth = auth::AuthSettings::from_values(
        cli.value("--jwks-url"),
        cli.value("--issuer"),
        cli.value("--audience"),
    )
    .map_err(Failure::from)?;
    #[cfg(not(feature = "jwt"))]
    if auth.is_some() {
        return Err(Failure(auth::NEEDS_JWT.to_owned(), 2));
    }
    #[cfg(not(feature = "redis"))]
    if cli.value("--redis").is_some() {
        return Err(Failure(nodes::NEEDS_REDIS.to_owned(), 2));
    }
    let policy = Policy::parse(
        cli.value("--rate-limit"),
        cli.value("--max-concurrent-calls"),
    )
    .map_err(|message| Failure(message, 2))?;
    let proxies = trusted_proxies(cli.value("--trusted-proxies"))?;
    let explicit = cli
        .value("--data")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os(DATA_ENV).map(PathBuf::from));
    let dir = explicit.clone().or_else(default_data_dir).ok_or_else(|| {
        format!(
            "no per-user data directory here (is $HOME set?): pass --data DIR or set {DATA_ENV}"
        )
    })?;
    let (store, db) = open_store(&dir)?;
    let redis = match cli.value("--redis") {
        Some(url) => Some(nodes::Node::join(url).await?),
        None => None,
    };
    let mut builder = policy.apply(tools::builder(store), |layer| match &redis {
        Some(redis) => redis.share_rate_limit(layer),
        None => layer,
    });
    if let Some(redis) = &redis {
        builder = redis.share(builder.request_state_keys(redis.request_state_keys().await?));
    }
    let server = builder.build()?;
    let mut cli = cli.detail("database", db.display().to_string());
    if let Some(url) = cli.value("--redis").map(str::to_owned) {
        cli = cli.detail("sessions", format!("shared with every node on {url}"));
    }
    let cli = forward(cli, explicit, &dir, &db);
    let protect = auth.as_ref().map(auth::AuthSettings::protect).transpose()?;
    let http_only = protect.is_some() || redis.is_some() || !proxies.is_empty();
    if http_only && matches!(cli.transport(), Transport::Stdio) {
        return Err(Failure(
            "--jwks-url, --redis and --trusted-proxies are for the HTTP transport; --stdio takes \
             none of them"
                .to_owned(),
            2,
        ));
    }
    if !http_only {
        return Ok(cli.serve(server).await?);
    }
    let configure = move |mut http: wymcp::transport::http::StreamableHttp| {
        if !proxies.is_empty() {
            http = http.trusted_proxies(proxies);
        }
        if let Some(protect) = protect {
            http = protect(http);
        }
        http
    };
    Ok(cli.serve_with(server, configure).await?)
}

/// The flags a client spawning this program from the printed entry must pass again.
fn forward(mut cli: Invocation, explicit: Option<PathBuf>, dir: &Path, db: &Path) -> Invocation {
    if explicit.is_some() {
        // A client spawns the server from a directory of its own: give it the very directory
        // (absolute) this run uses, so both see the same tasks.
        let absolute = db.parent().map_or(dir.to_path_buf(), Path::to_path_buf);
        cli = cli.forward("--data", absolute.display().to_string());
    }
    for flag in ["--rate-limit", "--max-concurrent-calls"] {
        if let Some(value) = cli.value(flag).map(str::to_owned) {
            cli = cli.forward(flag, value);
        }
    }
    cli
}

/// The platform's per-user data directory for this example (`None` without a home directory).
fn default_data_dir() -> Option<PathBuf> {
    dirs::data_dir().map(|base| base.join(DATA_DIR_NAME))
}

/// Creates the data directory when needed and opens the database in it; returns the database's
/// absolute path.
fn open_store(dir: &Path) -> Result<(Store, PathBuf), String> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create the data directory {}: {e}", dir.display()))?;
    let file = dir.join("tasks.db");
    let store = Store::open(&file).map_err(|e| format!("cannot open {}: {e}", file.display()))?;
    let shown = std::fs::canonicalize(&file).unwrap_or(file);
    Ok((store, shown))
}
