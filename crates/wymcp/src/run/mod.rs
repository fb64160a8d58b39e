//! Serving from the command line: [`run`](fn@crate::run) for a binary whose only job is to serve
//! (at the crate root, with [`run_blocking`](crate::run_blocking)), [`Cli`] for one with options
//! of its own.
//!
//! The flags are `--stdio` (one session over stdin/stdout, the way Claude Desktop and the
//! Inspector spawn servers), `--port <PORT>` and `--bind <ADDR>` (Streamable HTTP, default
//! `127.0.0.1:8080`; port 0 picks a free one), `-q`/`--quiet` (log errors only) and
//! `-h`/`--help`. A build without the `http`
//! feature serves stdio by default and refuses `--port`; one without `stdio` refuses `--stdio`.
//!
//! Over HTTP, a banner on stderr says where the server listens and how to connect Claude Code,
//! Claude Desktop (the absolute path of the running binary, with `--stdio` and the options the
//! app [forwards](Invocation::forward)) and the MCP Inspector. Over stdio it says one line, on
//! stderr: stdout is the protocol's.

mod args;
mod banner;
pub(crate) mod entry;
mod log;
#[cfg(feature = "otel-export")]
mod metrics;
#[cfg(feature = "otel-export")]
mod otlp;
#[cfg(feature = "otel-export")]
mod telemetry;

use std::net::SocketAddr;

pub use args::{CliError, Transport};

use crate::Server;

/// A failure while serving (the command line itself was accepted).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The HTTP address could not be bound (in use, or not this machine's).
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        /// The address asked for.
        addr: SocketAddr,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The transport failed while serving.
    #[error("serving failed: {0}")]
    Serve(#[source] std::io::Error),
    /// `--metrics ADDR` could not be served (the address in use, or not this machine's).
    #[error("cannot serve metrics on {addr}: {source}")]
    Metrics {
        /// The address asked for.
        addr: SocketAddr,
        /// Why it failed.
        source: std::io::Error,
    },
    /// `--otlp URL` could not be set up (the URL does not parse, the HTTP client cannot be
    /// built). A collector that cannot be reached is no such failure: each export that fails
    /// is logged, and serving goes on.
    #[error("cannot export OTLP to {url}: {source}")]
    Otlp {
        /// The URL given.
        url: String,
        /// Why it failed.
        source: std::io::Error,
    },
}

/// The command line of a serving binary, with options of the app's own beside the transport
/// flags.
///
/// ```no_run
/// use wymcp::run::Cli;
/// use wymcp::Server;
///
/// #[tokio::main]
/// async fn main() -> Result<(), wymcp::run::RunError> {
///     let cli = Cli::new("notes")
///         .about("notes: short notes, served over MCP")
///         .option("--dir", "DIR", "where the notes live (default ./notes)")
///         .parse(); // exits on --help and on a refused command line
///     let dir = cli.value("--dir").unwrap_or("notes").to_owned();
///     let server = Server::builder().name("notes").build().expect("valid schemas");
///     cli.detail("notes", dir).serve(server).await
/// }
/// ```
#[derive(Debug, Clone)]
pub struct Cli {
    name: String,
    about: Option<String>,
    options: Vec<AppOption>,
}

#[derive(Debug, Clone)]
struct AppOption {
    flag: String,
    value: String,
    help: String,
}

impl Cli {
    /// A command line for the server called `name` (the key of the printed client
    /// configurations, and the usage's program name).
    pub fn new(name: impl Into<String>) -> Self {
        Cli {
            name: name.into(),
            about: None,
            options: Vec::new(),
        }
    }

    /// The first line of the usage and of the banner.
    pub fn about(mut self, about: impl Into<String>) -> Self {
        self.about = Some(about.into());
        self
    }

    /// An option of the app's own, such as `("--data", "DIR", "the data directory")`; it takes
    /// a value (`--data DIR` or `--data=DIR`), read back with [`Invocation::value`].
    pub fn option(
        mut self,
        flag: impl Into<String>,
        value: impl Into<String>,
        help: impl Into<String>,
    ) -> Self {
        self.options.push(AppOption {
            flag: flag.into(),
            value: value.into(),
            help: help.into(),
        });
        self
    }

    /// The usage text `--help` prints.
    pub fn usage(&self) -> String {
        banner::usage(self)
    }

    /// Parses `args` (without the program name).
    ///
    /// ```
    /// use wymcp::run::{Cli, CliError, Transport};
    ///
    /// let cli = Cli::new("demo").option("--data", "DIR", "the data directory");
    /// let ok = cli.try_parse_from(["--stdio", "--data=/tmp/d"].map(String::from)).unwrap();
    /// assert_eq!(ok.transport(), Transport::Stdio);
    /// assert_eq!(ok.value("--data"), Some("/tmp/d"));
    /// let refused = cli.try_parse_from(["--port", "http"].map(String::from)).unwrap_err();
    /// assert_eq!(refused.to_string(), "--port: \"http\" is not a port number (0-65535)");
    /// assert!(matches!(cli.try_parse_from(["-h".to_owned()]), Err(CliError::Help(_))));
    /// ```
    pub fn try_parse_from(
        &self,
        args: impl IntoIterator<Item = String>,
    ) -> Result<Invocation, CliError> {
        let flags: Vec<&str> = self.options.iter().map(|o| o.flag.as_str()).collect();
        let parsed = args::parse(args, &flags, || self.usage())?;
        Ok(Invocation {
            cli: self.clone(),
            transport: parsed.transport,
            quiet: parsed.quiet,
            metrics: parsed.metrics,
            otlp: parsed.otlp,
            values: parsed.values,
            forwarded: Vec::new(),
            details: Vec::new(),
        })
    }

    /// Parses the process's arguments; on `--help` prints the usage on stdout and exits 0, on
    /// a refused command line prints why and the usage on stderr and exits 2.
    pub fn parse(self) -> Invocation {
        match self.try_parse_from(std::env::args().skip(1)) {
            Ok(invocation) => invocation,
            Err(CliError::Help(usage)) => {
                print!("{usage}");
                std::process::exit(0)
            }
            Err(refused) => {
                eprint!("error: {refused}\n\n{}", self.usage());
                std::process::exit(i32::from(refused.exit_code()))
            }
        }
    }
}

/// The process's telemetry (feature `otel-export`): started once, by the first
/// [`Invocation::start_telemetry`]; `None` inside when neither `--metrics` nor `--otlp` was
/// given.
#[cfg(feature = "otel-export")]
static TELEMETRY: tokio::sync::OnceCell<Option<telemetry::Telemetry>> =
    tokio::sync::OnceCell::const_new();

/// Sends what the exporters still hold, once serving has ended (feature `otel-export`).
async fn flush_telemetry() {
    #[cfg(feature = "otel-export")]
    if let Some(Some(telemetry)) = TELEMETRY.get() {
        telemetry.shutdown().await;
    }
}

/// A parsed command line: the transport to serve, the app's option values, what the banner
/// adds.
#[derive(Debug, Clone)]
pub struct Invocation {
    cli: Cli,
    transport: Transport,
    quiet: bool,
    /// `--metrics ADDR` (read only by the `otel-export` build, which serves it).
    #[cfg_attr(not(feature = "otel-export"), allow(dead_code))]
    metrics: Option<SocketAddr>,
    /// `--otlp URL` (read only by the `otel-export` build, which exports there).
    #[cfg_attr(not(feature = "otel-export"), allow(dead_code))]
    otlp: Option<String>,
    values: Vec<(String, String)>,
    forwarded: Vec<String>,
    details: Vec<(String, String)>,
}

impl Invocation {
    /// The transport the command line chose.
    pub fn transport(&self) -> Transport {
        self.transport
    }

    /// Whether `-q`/`--quiet` was given: [`serve`](Self::serve) then logs errors only.
    pub fn quiet(&self) -> bool {
        self.quiet
    }

    /// The value of an app option (the last one given), `None` when absent.
    pub fn value(&self, flag: &str) -> Option<&str> {
        self.values
            .iter()
            .rev()
            .find(|(f, _)| f == flag)
            .map(|(_, v)| v.as_str())
    }

    /// Adds `flag value` to the arguments of the printed Claude Desktop configuration (after
    /// `--stdio`), so the spawned server is configured like this one. Pass absolute paths:
    /// a client spawns servers from a working directory of its own.
    pub fn forward(mut self, flag: impl Into<String>, value: impl Into<String>) -> Self {
        self.forwarded.push(flag.into());
        self.forwarded.push(value.into());
        self
    }

    /// A `label  value` line in the banner (a database path, say).
    pub fn detail(mut self, label: impl Into<String>, value: impl Into<String>) -> Self {
        self.details.push((label.into(), value.into()));
        self
    }

    /// Serves `server` over the chosen transport, printing the banner on stderr.
    ///
    /// Unless the program set a `tracing` subscriber of its own, this installs one that writes
    /// wymcp's events to stderr, at `info` (sessions started and expired, refused and timed-out
    /// calls, rejected requests, faults), or as `RUST_LOG` says (`warn,wymcp=debug`), or errors
    /// only under `--quiet`; and a panic hook that writes a panic's message cut to 4,096
    /// characters and escaped, so that no input can flood stderr or forge a log line.
    ///
    /// With the `otel-export` feature, `--metrics ADDR` is served first and `--otlp URL`'s
    /// exporters started (`start_telemetry`, feature `otel-export`), each a line of the
    /// banner; under `--otlp` the subscriber installed also sends the request spans (not when
    /// the program set its own: add `tracing-opentelemetry`'s layer to it), and what is still
    /// queued is sent when serving ends.
    pub async fn serve(self, server: Server) -> Result<(), RunError> {
        // Before the log: the SDK's own INFO line on installing its provider stays unsaid.
        let this = self.with_telemetry().await?;
        this.install_log();
        let served = match this.transport {
            #[cfg(feature = "http")]
            Transport::Http { bind, port } => {
                this.serve_http(server, (bind, port).into(), |http| http)
                    .await
            }
            _ => this.serve_stdio(server).await,
        };
        flush_telemetry().await;
        served
    }

    /// The default log ([`log::install`]), with `--otlp`'s span layer when there is one.
    fn install_log(&self) {
        #[cfg(feature = "otel-export")]
        let spans = TELEMETRY.get().and_then(|t| t.as_ref()?.layer());
        #[cfg(not(feature = "otel-export"))]
        let spans = None;
        if !log::install(self.quiet, spans) && self.otlp.is_some() {
            tracing::warn!(
                "--otlp: the program set its own tracing subscriber, which does not send the \
                 request spans: add tracing-opentelemetry's layer to it (metrics are sent)"
            );
        }
    }

    /// Serves `server` over stdio (or says this build has no such transport).
    async fn serve_stdio(self, server: Server) -> Result<(), RunError> {
        match self.transport {
            #[cfg(feature = "stdio")]
            Transport::Stdio => {
                eprint!("{}", banner::stdio(&self));
                crate::transport::stdio::serve(server)
                    .await
                    .map_err(RunError::Serve)
            }
            // The parser never chooses a transport that is not compiled in.
            #[allow(unreachable_patterns)]
            _ => {
                let _ = server;
                Err(RunError::Serve(std::io::Error::new(
                    std::io::ErrorKind::Unsupported,
                    "this transport is not compiled in",
                )))
            }
        }
    }

    /// Starts what the command line asked for beside the server: with the `otel-export`
    /// feature, `--metrics ADDR` installs OpenTelemetry's SDK meter provider as the global
    /// one and serves the Prometheus text format at `http://ADDR/metrics` (docs/telemetry.md).
    /// Returns the endpoint's address (the port chosen when ADDR's was 0), `None` without
    /// `--metrics`.
    ///
    /// [`serve`](Self::serve) calls it; call it yourself first when the program records
    /// metrics before it serves (a client's requests at start-up: the instruments are made
    /// from the provider installed at their first record). Once per process: a second call
    /// returns the first one's endpoint.
    ///
    /// `--otlp URL` starts OTLP/HTTP exporters sending the metrics to `URL/v1/metrics` and,
    /// once [`serve`](Self::serve) installs the log, the request spans to `URL/v1/traces`;
    /// it installs W3C's trace-context propagator as the global one.
    #[cfg(feature = "otel-export")]
    pub async fn start_telemetry(&self) -> Result<Option<SocketAddr>, RunError> {
        if self.metrics.is_none() && self.otlp.is_none() {
            return Ok(None);
        }
        let started = TELEMETRY
            .get_or_try_init(|| {
                telemetry::Telemetry::start(self.metrics, self.otlp.as_deref(), &self.cli.name)
            })
            .await?;
        Ok(started.as_ref().and_then(|t| t.metrics))
    }

    /// `start_telemetry` (feature `otel-export`), its endpoint and collector named in the
    /// banner.
    async fn with_telemetry(self) -> Result<Self, RunError> {
        #[cfg(feature = "otel-export")]
        {
            let mut this = self;
            if let Some(local) = this.start_telemetry().await? {
                this = this.detail("metrics", format!("http://{local}/metrics"));
            }
            if let Some(url) = this.otlp.clone() {
                this = this.detail("otlp", url);
            }
            Ok(this)
        }
        #[cfg(not(feature = "otel-export"))]
        Ok(self)
    }

    /// [`serve`](Self::serve), the Streamable HTTP settings adjusted by `configure` first (an
    /// auth hook, protected-resource metadata, …); over stdio `configure` is not used.
    ///
    /// ```no_run
    /// use wymcp::transport::http::BearerAuth;
    /// use wymcp::run::Cli;
    /// use wymcp::{Identity, Server};
    ///
    /// # async fn run() -> Result<(), wymcp::run::RunError> {
    /// let server = Server::builder().name("demo").build().expect("valid");
    /// Cli::new("demo")
    ///     .parse()
    ///     .serve_with(server, |http| {
    ///         http.auth(BearerAuth::new().token("dev-token", Identity::new("dev")))
    ///     })
    ///     .await
    /// # }
    /// ```
    #[cfg(feature = "http")]
    pub async fn serve_with(
        self,
        server: Server,
        configure: impl FnOnce(
            crate::transport::http::StreamableHttp,
        ) -> crate::transport::http::StreamableHttp,
    ) -> Result<(), RunError> {
        // Before the log: the SDK's own INFO line on installing its provider stays unsaid.
        let this = self.with_telemetry().await?;
        this.install_log();
        let served = match this.transport {
            Transport::Http { bind, port } => {
                this.serve_http(server, (bind, port).into(), configure)
                    .await
            }
            #[allow(unreachable_patterns)]
            _ => this.serve_stdio(server).await,
        };
        flush_telemetry().await;
        served
    }

    #[cfg(feature = "http")]
    async fn serve_http(
        self,
        server: Server,
        addr: SocketAddr,
        configure: impl FnOnce(
            crate::transport::http::StreamableHttp,
        ) -> crate::transport::http::StreamableHttp,
    ) -> Result<(), RunError> {
        use crate::transport::http::{HttpServer, StreamableHttp};
        let http = HttpServer::bind(addr, configure(StreamableHttp::builder(server)))
            .await
            .map_err(|source| RunError::Listen { addr, source })?;
        let local = http.local_addr().map_err(RunError::Serve)?;
        eprint!("{}", banner::http(&self, local));
        http.run_until(stop_signal()).await.map_err(RunError::Serve)
    }
}

/// Resolves on Ctrl-C (SIGINT) or, on Unix, SIGTERM (what a container runtime or a service
/// manager sends): serving then ends gracefully and the telemetry is flushed before exit.
#[cfg(feature = "http")]
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut terminate) = signal(SignalKind::terminate()) {
            let interrupt = std::pin::pin!(tokio::signal::ctrl_c());
            let terminate = std::pin::pin!(terminate.recv());
            futures_util::future::select(interrupt, terminate).await;
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
