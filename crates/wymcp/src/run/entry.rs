//! A binary's whole `main`: [`main!`](crate::main) and [`run_blocking`].

use std::fmt::Display;
use std::process::ExitCode;

use super::{Cli, RunError};
use crate::Server;

/// Builds the server with `server`, then serves it as the command line says ([`run`](fn@crate::run))
/// on a multi-threaded tokio runtime of its own, from a synchronous `main`. A server that does
/// not build, or a failure while serving, is printed on stderr (`<name>: <reason>`) and exits
/// with status 1; `--help` and a refused command line exit as [`run`](fn@crate::run) says.
///
/// [`main!`](crate::main) writes this `main` for you.
///
/// ```no_run
/// use wymcp::Server;
///
/// fn server() -> Result<Server, wymcp::ConfigurationError> {
///     Server::builder().name("notes").build()
/// }
///
/// fn main() -> std::process::ExitCode {
///     wymcp::run_blocking(server)
/// }
/// ```
pub fn run_blocking<E: Display>(server: impl FnOnce() -> Result<Server, E>) -> ExitCode {
    let program = std::env::args().next().unwrap_or_else(|| "server".into());
    let program = std::path::Path::new(&program)
        .file_name()
        .map_or(program.clone(), |name| name.to_string_lossy().into_owned());
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return failed(&program, format!("cannot start the tokio runtime: {error}")),
    };
    let server = match server() {
        Ok(server) => server,
        Err(error) => return failed(&program, format!("the server does not build: {error}")),
    };
    match runtime.block_on(crate::run(server)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => failed(&program, error),
    }
}

fn failed(program: &str, reason: impl Display) -> ExitCode {
    eprintln!("{program}: {reason}");
    ExitCode::FAILURE
}

/// Writes a binary's `main`: builds the server with the function given, then serves it as the
/// command line says (`--stdio`, `--port`, `--bind`, `--help`), on a tokio runtime of its own
/// ([`run_blocking`]). The function returns `Result<Server, E>` with `E: Display`, such as
/// what [`ServerBuilder::build`](crate::ServerBuilder::build) returns.
///
/// ```no_run
/// use wymcp::Server;
///
/// fn server() -> Result<Server, wymcp::ConfigurationError> {
///     Server::builder().name("notes").build()
/// }
///
/// wymcp::main!(server);
/// ```
#[macro_export]
macro_rules! main {
    ($server:expr) => {
        fn main() -> ::std::process::ExitCode {
            $crate::run_blocking($server)
        }
    };
}

/// Serves `server` as the command line says (`--stdio`, `--port`, `--bind`, `--help`), until
/// end of input (stdio) or Ctrl-C/SIGTERM (HTTP).
///
/// `--help` prints the usage on stdout and exits with status 0; a refused command line prints
/// the reason and the usage on stderr and exits with status 2.
///
/// ```no_run
/// use wymcp::Server;
///
/// #[tokio::main]
/// async fn main() -> Result<(), wymcp::run::RunError> {
///     let server = Server::builder().name("notes").build().expect("valid schemas");
///     wymcp::run(server).await // `notes --stdio`, `notes --port 9000`, `notes --help`
/// }
/// ```
pub async fn run(server: Server) -> Result<(), RunError> {
    let name = server.info().name.clone();
    Cli::new(name).parse().serve(server).await
}
