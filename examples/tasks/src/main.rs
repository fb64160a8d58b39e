//! A task tracker an agent can really use: wymcp's example application.
//!
//! ```sh
//! cargo run --bin tasks                      # Streamable HTTP on 127.0.0.1:8080/mcp
//! cargo run --bin tasks -- --port 9000       # another port
//! cargo run --bin tasks -- --bind 0.0.0.0    # every interface (mind the auth!)
//! cargo run --bin tasks -- --stdio           # stdio, for clients that spawn servers
//! cargo run --bin tasks -- --data /tmp/t     # another data directory
//! cargo run --bin tasks -- --jwks-url https://id.example.com/jwks \
//!     --issuer https://id.example.com --audience http://127.0.0.1:8080/mcp  # JWT auth
//! cargo run --bin tasks -- --rate-limit 5/s   # at most 5 calls a second per caller
//! cargo run --bin tasks -- --max-concurrent-calls 4   # at most 4 calls at once per caller
//! ```
//!
//! Tasks live in an SQLite database, `tasks.db` in the data directory: the per-user one
//! (`~/.local/share/wymcp-tasks` on Linux, `~/Library/Application Support/wymcp-tasks` on
//! macOS, `%APPDATA%\wymcp-tasks` on Windows) unless `--data` or `$WYMCP_TASKS_DATA` says
//! otherwise, whatever the working directory; created on first run. `--rate-limit` and
//! `--max-concurrent-calls` put wymcp's operation middleware on every tool (`policy.rs`),
//! counted per caller; a call over either is answered `rate_limited` (with `retryAfterMs`) or
//! `concurrency_limited`. The other flags are [`wymcp::run`]'s. Everything the program says goes to stderr, so stdout stays
//! the protocol's under `--stdio`.

mod auth;
mod policy;
mod resources;
mod store;
mod tools;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use wymcp::{Cli, Transport};

use crate::policy::Policy;
use crate::store::Store;

/// The environment variable naming the data directory.
const DATA_ENV: &str = "WYMCP_TASKS_DATA";

/// The data directory's name under the platform's per-user data directory.
const DATA_DIR_NAME: &str = "wymcp-tasks";

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::new("tasks")
        .about("wymcp tasks example: a task tracker served over MCP")
        .option(
            "--data",
            "DIR",
            "data directory (default $WYMCP_TASKS_DATA, else the per-user data directory)",
        )
        .option(
            "--jwks-url",
            "URL",
            "accept JWTs signed by the keys of this JWKS (with --issuer, --audience)",
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
        .parse();
    let auth = match auth::AuthSettings::from_values(
        cli.value("--jwks-url"),
        cli.value("--issuer"),
        cli.value("--audience"),
    ) {
        Ok(auth) => auth,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::FAILURE;
        }
    };
    let policy = match Policy::parse(
        cli.value("--rate-limit"),
        cli.value("--max-concurrent-calls"),
    ) {
        Ok(policy) => policy,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    let explicit = cli
        .value("--data")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os(DATA_ENV).map(PathBuf::from));
    let Some(dir) = explicit.clone().or_else(default_data_dir) else {
        eprintln!(
            "error: no per-user data directory here (is $HOME set?): \
             pass --data DIR or set {DATA_ENV}"
        );
        return ExitCode::FAILURE;
    };
    let (store, db) = match open_store(&dir) {
        Ok(opened) => opened,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::FAILURE;
        }
    };
    let server = match policy.apply(tools::builder(store)).build() {
        Ok(server) => server,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut cli = cli.detail("database", db.display().to_string());
    if explicit.is_some() {
        // A client spawns the server from a directory of its own: give it the very directory
        // (absolute) this run uses, so both see the same tasks.
        let absolute = db.parent().map_or(dir.clone(), Path::to_path_buf);
        cli = cli.forward("--data", absolute.display().to_string());
    }
    for flag in ["--rate-limit", "--max-concurrent-calls"] {
        if let Some(value) = cli.value(flag).map(str::to_owned) {
            cli = cli.forward(flag, value);
        }
    }
    let protect = match auth.as_ref().map(auth::AuthSettings::protect).transpose() {
        Ok(protect) => protect,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::FAILURE;
        }
    };
    let served = match protect {
        None => cli.serve(server).await,
        Some(_) if matches!(cli.transport(), Transport::Stdio) => {
            eprintln!("error: --jwks-url protects the HTTP transport; --stdio takes none");
            return ExitCode::FAILURE;
        }
        Some(protect) => cli.serve_with(server, protect).await,
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
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
