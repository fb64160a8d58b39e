//! The command line of [`Cli`](super::Cli): its flags, their parsing, its refusals.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// The port served when `--port` is not given.
pub(super) const DEFAULT_PORT: u16 = 8080;

/// How the command line asked to be served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Streamable HTTP on this address and port (`--bind`, `--port`; port 0 picks a free one).
    Http {
        /// The address listened on (`--bind`, default `127.0.0.1`).
        bind: IpAddr,
        /// The TCP port (`--port`, default 8080).
        port: u16,
    },
    /// One session over stdin and stdout (`--stdio`).
    Stdio,
}

impl Transport {
    /// The transport served without `--stdio`: HTTP when it is compiled in, else stdio.
    pub(super) fn default_for_build() -> Self {
        if cfg!(feature = "http") {
            Transport::Http {
                bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
                port: DEFAULT_PORT,
            }
        } else {
            Transport::Stdio
        }
    }
}

/// A command line [`Cli`](super::Cli) refused, or `--help`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CliError {
    /// `-h` or `--help`: the usage text, to print before exiting successfully.
    #[error("{0}")]
    Help(String),
    /// A flag that needs a value came last, or with an empty one.
    #[error("{flag} needs a value")]
    MissingValue {
        /// The flag, as declared (`--port`).
        flag: String,
    },
    /// `--port` is not a number from 0 to 65535.
    #[error("--port: {value:?} is not a port number (0-65535)")]
    BadPort {
        /// The value given.
        value: String,
    },
    /// `--bind` is not an IP address.
    #[error("--bind: {value:?} is not an IP address (such as 127.0.0.1 or ::1)")]
    BadBind {
        /// The value given.
        value: String,
    },
    /// `--metrics` is not an address and port.
    #[error("--metrics: {value:?} is not an address and port (such as 127.0.0.1:9464)")]
    BadMetrics {
        /// The value given.
        value: String,
    },
    /// `--otlp` is not an `http://` or `https://` URL with a host.
    #[error("--otlp: {value:?} is not an http:// or https:// URL (such as http://127.0.0.1:4318)")]
    BadOtlp {
        /// The value given.
        value: String,
    },
    /// A flag this program does not have (or one its build left out).
    #[error("unknown argument {arg:?}")]
    Unknown {
        /// The argument as given.
        arg: String,
    },
    /// A flag whose cargo feature this program was built without.
    #[error("{flag}: this program was built without wymcp's `{feature}` feature")]
    NotBuilt {
        /// `--stdio`, `--port`, `--bind`, `--metrics` or `--otlp`.
        flag: &'static str,
        /// The cargo feature it needs.
        feature: &'static str,
    },
    /// `--stdio` together with `--port` or `--bind`.
    #[error("--stdio serves over stdin/stdout: it takes no {flag}")]
    Conflict {
        /// The HTTP flag given beside `--stdio`.
        flag: &'static str,
    },
}

impl CliError {
    /// The exit status for this outcome: 0 for `--help`, 2 (a usage error) otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Help(_) => 0,
            _ => 2,
        }
    }
}

/// A command line that parsed: the transport, and the app's options in the order given.
pub(super) struct Parsed {
    pub(super) transport: Transport,
    /// `-q`/`--quiet`: log errors only.
    pub(super) quiet: bool,
    /// `--metrics ADDR`: where to serve the Prometheus text format (feature `otel-export`).
    pub(super) metrics: Option<SocketAddr>,
    /// `--otlp URL`: the OTLP/HTTP collector to send spans and metrics to (feature
    /// `otel-export`).
    pub(super) otlp: Option<String>,
    pub(super) values: Vec<(String, String)>,
}

/// Parses `args` (without the program name). `options` are the app's own flags, which all take
/// a value; `usage` is what `--help` answers.
pub(super) fn parse(
    args: impl IntoIterator<Item = String>,
    options: &[&str],
    usage: impl FnOnce() -> String,
) -> Result<Parsed, CliError> {
    let mut stdio = false;
    let mut quiet = false;
    let mut bind: Option<IpAddr> = None;
    let mut port: Option<u16> = None;
    let mut metrics: Option<SocketAddr> = None;
    let mut otlp: Option<String> = None;
    let mut values = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag.to_owned(), Some(value)),
            _ => (arg.clone(), None),
        };
        let mut value = |flag: &str| match inline.map(str::to_owned).or_else(|| args.next()) {
            Some(v) if !v.is_empty() => Ok(v),
            _ => Err(CliError::MissingValue {
                flag: flag.to_owned(),
            }),
        };
        match flag.as_str() {
            "-h" | "--help" => return Err(CliError::Help(usage())),
            "-q" | "--quiet" => quiet = true,
            "--stdio" => {
                require("--stdio", "stdio", cfg!(feature = "stdio"))?;
                stdio = true;
            }
            "--port" => {
                require("--port", "http", cfg!(feature = "http"))?;
                let v = value("--port")?;
                port = Some(v.parse().map_err(|_| CliError::BadPort { value: v })?);
            }
            "--bind" => {
                require("--bind", "http", cfg!(feature = "http"))?;
                let v = value("--bind")?;
                bind = Some(v.parse().map_err(|_| CliError::BadBind { value: v })?);
            }
            "--metrics" => {
                require("--metrics", "otel-export", cfg!(feature = "otel-export"))?;
                let v = value("--metrics")?;
                metrics = Some(v.parse().map_err(|_| CliError::BadMetrics { value: v })?);
            }
            "--otlp" => {
                require("--otlp", "otel-export", cfg!(feature = "otel-export"))?;
                let v = value("--otlp")?;
                if !is_http_url(&v) {
                    return Err(CliError::BadOtlp { value: v });
                }
                otlp = Some(v);
            }
            known if options.contains(&known) => {
                let v = value(known)?;
                values.push((known.to_owned(), v));
            }
            _ => return Err(CliError::Unknown { arg }),
        }
    }
    let transport = transport(stdio, bind, port)?;
    Ok(Parsed {
        transport,
        quiet,
        metrics,
        otlp,
        values,
    })
}

/// The transport the flags chose: stdio (with no HTTP flag), or HTTP with the build's
/// defaults for what was not given.
fn transport(stdio: bool, bind: Option<IpAddr>, port: Option<u16>) -> Result<Transport, CliError> {
    if stdio {
        if port.is_some() {
            return Err(CliError::Conflict { flag: "--port" });
        }
        if bind.is_some() {
            return Err(CliError::Conflict { flag: "--bind" });
        }
        return Ok(Transport::Stdio);
    }
    Ok(match Transport::default_for_build() {
        Transport::Http { bind: b, port: p } => Transport::Http {
            bind: bind.unwrap_or(b),
            port: port.unwrap_or(p),
        },
        Transport::Stdio => Transport::Stdio,
    })
}

/// `http://` or `https://`, then a host: what `--otlp` takes (the rest is checked when the
/// exporter is built).
fn is_http_url(value: &str) -> bool {
    let rest = value
        .strip_prefix("http://")
        .or_else(|| value.strip_prefix("https://"));
    rest.is_some_and(|rest| {
        let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
        !host.is_empty() && !host.contains(char::is_whitespace)
    })
}

fn require(flag: &'static str, feature: &'static str, built: bool) -> Result<(), CliError> {
    if built {
        Ok(())
    } else {
        Err(CliError::NotBuilt { flag, feature })
    }
}
