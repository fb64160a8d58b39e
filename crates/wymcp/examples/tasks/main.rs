//! A task tracker an agent can really use: wymcp's example application.
//!
//! ```sh
//! cargo run --example tasks                      # Streamable HTTP on 127.0.0.1:8080/mcp
//! cargo run --example tasks -- --port 9000       # another port
//! cargo run --example tasks -- --bind 0.0.0.0    # every interface (mind the auth!)
//! cargo run --example tasks -- --stdio           # stdio, for clients that spawn servers
//! cargo run --example tasks -- --data /tmp/t     # another data directory
//! ```
//!
//! Tasks live in an SQLite database, `tasks.db` in the data directory (`./data` unless
//! `--data` or `$WYMCP_TASKS_DATA` says otherwise), created on first run. Everything the
//! program says goes to stderr, so stdout stays the protocol's under `--stdio`.

mod resources;
mod store;
mod tools;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use wymcp::transport::http::{HttpServer, StreamableHttp};

use crate::store::Store;

/// The environment variable naming the data directory.
const DATA_ENV: &str = "WYMCP_TASKS_DATA";

const USAGE: &str = "\
wymcp tasks example: a task tracker served over MCP

USAGE:
    cargo run --example tasks -- [OPTIONS]

OPTIONS:
    --port <PORT>    TCP port for Streamable HTTP (default 8080; 0 picks a free one)
    --bind <ADDR>    address to listen on (default 127.0.0.1)
    --stdio          serve over stdin/stdout instead of HTTP
    --data <DIR>     data directory (default $WYMCP_TASKS_DATA, else ./data)
    -h, --help       print this help
";

/// The command line, parsed.
#[derive(Debug)]
struct Options {
    bind: IpAddr,
    port: u16,
    stdio: bool,
    data: PathBuf,
}

fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Option<Options>, String> {
    let mut options = Options {
        bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
        port: 8080,
        stdio: false,
        data: std::env::var_os(DATA_ENV)
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("data")),
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => {
                (flag.to_owned(), Some(value.to_owned()))
            }
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(None),
            "--stdio" => options.stdio = true,
            "--port" => {
                let v = value("--port")?;
                options.port = v
                    .parse()
                    .map_err(|_| format!("--port: {v:?} is not a port number (0-65535)"))?;
            }
            "--bind" => {
                let v = value("--bind")?;
                options.bind = v
                    .parse()
                    .map_err(|_| format!("--bind: {v:?} is not an IP address"))?;
            }
            "--data" => options.data = PathBuf::from(value("--data")?),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Some(options))
}

/// Creates the data directory when needed and opens the database in it.
fn open_store(dir: &Path) -> Result<(Store, PathBuf), String> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create the data directory {}: {e}", dir.display()))?;
    let file = dir.join("tasks.db");
    let store = Store::open(&file).map_err(|e| format!("cannot open {}: {e}", file.display()))?;
    let shown = std::fs::canonicalize(&file).unwrap_or(file);
    Ok((store, shown))
}

#[tokio::main]
async fn main() -> ExitCode {
    let options = match parse_args(std::env::args().skip(1)) {
        Ok(Some(options)) => options,
        Ok(None) => {
            eprint!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("error: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(options).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run(options: Options) -> Result<(), String> {
    if options.stdio {
        return serve_stdio(&options).await;
    }
    let (store, db) = open_store(&options.data)?;
    let server = tools::server(store).map_err(|e| e.to_string())?;
    let addr = SocketAddr::new(options.bind, options.port);
    let http = HttpServer::bind(addr, StreamableHttp::builder(server))
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let local = http.local_addr().map_err(|e| e.to_string())?;
    print_banner(local, &db);
    http.run().await.map_err(|e| e.to_string())
}

/// `--stdio`: one session over stdin/stdout (stdout is the protocol's; we say nothing there).
async fn serve_stdio(options: &Options) -> Result<(), String> {
    let (store, db) = open_store(&options.data)?;
    let server = tools::server(store).map_err(|e| e.to_string())?;
    eprintln!(
        "wymcp tasks example: serving over stdio (database {})",
        db.display()
    );
    wymcp::transport::stdio::serve(server)
        .await
        .map_err(|e| e.to_string())
}

/// Where the server listens and how to connect to it, on stderr.
fn print_banner(local: SocketAddr, db: &Path) {
    let url = format!("http://{local}/mcp");
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "target/debug/examples/tasks".into());
    eprintln!(
        "\
wymcp tasks example
  database   {db}
  listening  {url}  (Streamable HTTP; Ctrl-C stops)

Connect:
  Claude Code:
    claude mcp add --transport http tasks {url}

  Claude Desktop (claude_desktop_config.json; Desktop spawns servers over stdio):
    {{\"mcpServers\": {{\"tasks\": {{\"command\": \"{exe}\", \"args\": [\"--stdio\"]}}}}}}
    or, through a bridge to this HTTP endpoint:
    {{\"mcpServers\": {{\"tasks\": {{\"command\": \"npx\", \"args\": [\"-y\", \"mcp-remote\", \"{url}\"]}}}}}}

  MCP Inspector:
    npx @modelcontextprotocol/inspector            (UI: transport Streamable HTTP, URL {url})
    npx @modelcontextprotocol/inspector --cli {url} --transport http --method tools/list
",
        db = db.display(),
    );
}
