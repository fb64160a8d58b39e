//! What [`Cli`](super::Cli) prints: the usage, and the banners that say how to connect.

use std::fmt::Write as _;

use super::args::DEFAULT_PORT;
use super::{Cli, Invocation};

/// The `--help` text: the transport flags this build has, then the app's options.
pub(super) fn usage(cli: &Cli) -> String {
    let mut rows: Vec<(String, String)> = Vec::new();
    if cfg!(feature = "http") {
        rows.push((
            "--port <PORT>".into(),
            format!("TCP port for Streamable HTTP (default {DEFAULT_PORT}; 0 picks a free one)"),
        ));
        rows.push((
            "--bind <ADDR>".into(),
            "address to listen on (default 127.0.0.1; another stops checking Host, Origin is still checked)"
                .into(),
        ));
    }
    if cfg!(feature = "stdio") {
        let what = if cfg!(feature = "http") {
            "serve one session over stdin/stdout instead of HTTP"
        } else {
            "serve one session over stdin/stdout (the default)"
        };
        rows.push(("--stdio".into(), what.into()));
    }
    if cfg!(feature = "otel-export") {
        rows.push((
            "--metrics <ADDR>".into(),
            "serve the metrics in Prometheus's text format at http://ADDR/metrics (such as 127.0.0.1:9464)"
                .into(),
        ));
        rows.push((
            "--otlp <URL>".into(),
            "send the request spans and the metrics over OTLP/HTTP to URL/v1/traces and URL/v1/metrics (such as http://127.0.0.1:4318)"
                .into(),
        ));
    }
    for option in &cli.options {
        rows.push((
            format!("{} <{}>", option.flag, option.value),
            option.help.clone(),
        ));
    }
    rows.push((
        "-q, --quiet".into(),
        "log only errors on stderr (default: info, or RUST_LOG, e.g. warn,wymcp=debug)".into(),
    ));
    rows.push(("-h, --help".into(), "print this help".into()));
    let width = rows.iter().map(|(f, _)| f.len()).max().unwrap_or(0);
    let mut text = String::new();
    if let Some(about) = &cli.about {
        let _ = writeln!(text, "{about}\n");
    }
    let _ = writeln!(text, "USAGE:\n    {} [OPTIONS]\n\nOPTIONS:", cli.name);
    for (flag, help) in rows {
        let _ = writeln!(text, "    {flag:<width$}  {help}");
    }
    text
}

/// The one line said over stdio (on stderr), with the app's details.
#[cfg(feature = "stdio")]
pub(super) fn stdio(invocation: &Invocation) -> String {
    let mut text = format!("{}: serving over stdio", invocation.cli.name);
    for (label, value) in &invocation.details {
        let _ = write!(text, " ({label} {value})");
    }
    text.push('\n');
    text
}

/// Where the server listens and how to connect clients to it, as they take it.
#[cfg(feature = "http")]
pub(super) fn http(invocation: &Invocation, local: std::net::SocketAddr) -> String {
    let name = &invocation.cli.name;
    // Bound to every interface (0.0.0.0 or ::): no client connects to that address, so the
    // URL a client takes names this machine's loopback of the same family.
    let reach = if local.ip().is_unspecified() {
        let loopback: std::net::IpAddr = if local.is_ipv4() {
            std::net::Ipv4Addr::LOCALHOST.into()
        } else {
            std::net::Ipv6Addr::LOCALHOST.into()
        };
        std::net::SocketAddr::new(loopback, local.port())
    } else {
        local
    };
    let url = format!("http://{reach}/mcp");
    let width = invocation
        .details
        .iter()
        .map(|(label, _)| label.len())
        .chain([9])
        .max()
        .unwrap_or(9);
    let mut text = format!("{}\n", heading(invocation));
    for (label, value) in &invocation.details {
        let _ = writeln!(text, "  {label:<width$}  {value}");
    }
    let _ = writeln!(
        text,
        "  {:<width$}  {url}  (Streamable HTTP; Ctrl-C stops)",
        "listening"
    );
    if !local.ip().is_loopback() {
        let _ = writeln!(
            text,
            "  {:<width$}  bound to {}: other machines reach it at this one's addresses, and \
             without auth in front (docs/auth.md) anyone who reaches it may call every tool",
            "warning",
            local.ip()
        );
    }
    let _ = write!(
        text,
        "\nConnect:\n  Claude Code:\n    claude mcp add --transport http {name} {url}\n\n"
    );
    let _ = writeln!(
        text,
        "  Claude Desktop (claude_desktop_config.json; Desktop spawns servers over stdio):"
    );
    if cfg!(feature = "stdio") {
        let _ = writeln!(text, "    {}", desktop_config(invocation));
        let _ = writeln!(text, "    or, through a bridge to this HTTP endpoint:");
    }
    let bridge = desktop_entry(
        name,
        "npx",
        &["-y".into(), "mcp-remote".into(), url.clone()],
    );
    let _ = write!(
        text,
        "    {bridge}\n\n  MCP Inspector:\n    \
         npx @modelcontextprotocol/inspector            (UI: transport Streamable HTTP, URL {url})\n    \
         npx @modelcontextprotocol/inspector --cli {url} --transport http --method tools/list\n"
    );
    text
}

/// Claude Desktop's entry for this very binary over stdio: its absolute path, `--stdio` and
/// the forwarded options.
#[cfg(feature = "http")]
fn desktop_config(invocation: &Invocation) -> String {
    let command = std::env::current_exe()
        .ok()
        .and_then(|exe| std::fs::canonicalize(&exe).ok().or(Some(exe)))
        .map(|exe| exe.display().to_string())
        .unwrap_or_else(|| invocation.cli.name.clone());
    let mut args = vec!["--stdio".to_owned()];
    args.extend(invocation.forwarded.iter().cloned());
    desktop_entry(&invocation.cli.name, &command, &args)
}

/// `{"mcpServers": {name: {"command": …, "args": […]}}}`, keys in the order the docs show them.
#[cfg(feature = "http")]
fn desktop_entry(name: &str, command: &str, args: &[String]) -> String {
    let quote = |s: &str| serde_json::Value::from(s).to_string();
    let args = serde_json::Value::from(args.to_vec()).to_string();
    format!(
        "{{\"mcpServers\": {{{}: {{\"command\": {}, \"args\": {args}}}}}}}",
        quote(name),
        quote(command)
    )
}

fn heading(invocation: &Invocation) -> &str {
    invocation
        .cli
        .about
        .as_deref()
        .unwrap_or(&invocation.cli.name)
}
