//! What a serving binary logs by default: wymcp's events on stderr, and panics bounded.
//!
//! [`Invocation::serve`](super::Invocation::serve) installs both before it serves, unless the
//! program installed a `tracing` subscriber of its own (then it keeps it, and its panic hook).

use std::str::FromStr as _;

use tracing::level_filters::LevelFilter;
use tracing_subscriber::filter::Targets;

use crate::dispatch::fault::Fault;

/// The environment variable read for the log filter (`info`, `warn,wymcp=debug`…).
pub(super) const FILTER_ENV: &str = "RUST_LOG";

/// The filter the binary logs with: `--quiet` keeps errors only (faults, failed stores);
/// otherwise `RUST_LOG` when it parses, else `info` (sessions started and expired, refused
/// calls, timeouts, rejected requests, faults).
pub(super) fn filter(quiet: bool, env: Option<&str>) -> Result<Targets, String> {
    if quiet {
        return Ok(Targets::new().with_default(LevelFilter::ERROR));
    }
    match env.map(str::trim).filter(|s| !s.is_empty()) {
        None => Ok(Targets::new().with_default(LevelFilter::INFO)),
        Some(spec) => Targets::from_str(spec).map_err(|err| {
            format!("{FILTER_ENV}={spec:?} is not a log filter ({err}); logging at info")
        }),
    }
}

/// A layer beside the stderr log, with its own filter (`--otlp`'s span exporter).
pub(super) type Extra =
    Box<dyn tracing_subscriber::Layer<tracing_subscriber::Registry> + Send + Sync>;

/// Installs a stderr subscriber with [`filter`] (and `extra` beside it) and the bounded panic
/// hook, unless a subscriber is already set. Returns whether it installed them.
pub(super) fn install(quiet: bool, extra: Option<Extra>) -> bool {
    if tracing::dispatcher::has_been_set() {
        return false;
    }
    let env = std::env::var(FILTER_ENV).ok();
    let (targets, complaint) = match filter(quiet, env.as_deref()) {
        Ok(targets) => (targets, None),
        Err(complaint) => (
            Targets::new().with_default(LevelFilter::INFO),
            Some(complaint),
        ),
    };
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    let stderr = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let set = match extra {
        // The filter of the whole subscriber: what the log leaves out is never recorded.
        None => tracing::subscriber::set_global_default(
            tracing_subscriber::registry().with(stderr).with(targets),
        ),
        // Each layer filtered on its own: the extra one takes what the log leaves out.
        Some(extra) => {
            let layers: Vec<Extra> = vec![extra, Box::new(stderr.with_filter(targets))];
            tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layers))
        }
    };
    if set.is_err() {
        return false;
    }
    if let Some(complaint) = complaint {
        tracing::warn!("{complaint}");
    }
    std::panic::set_hook(Box::new(|info| eprintln!("{}", panic_line(info))));
    true
}

/// One panic as the hook writes it: the thread, the place, and the message cut to
/// 4,096 characters and escaped, so a panic can neither flood stderr nor forge a log line.
/// A backtrace follows when `RUST_BACKTRACE` asks for one.
fn panic_line(info: &std::panic::PanicHookInfo<'_>) -> String {
    let thread = std::thread::current();
    let place = info
        .location()
        .map_or_else(String::new, |l| format!(" at {}:{}", l.file(), l.line()));
    let message = Fault::from_panic(info.payload()).logged_message();
    let mut line = format!(
        "thread '{}' panicked{place}: {message}",
        thread.name().unwrap_or("<unnamed>")
    );
    let backtrace = std::backtrace::Backtrace::capture();
    if backtrace.status() == std::backtrace::BacktraceStatus::Captured {
        line.push_str(&format!("\n{backtrace}"));
    }
    line
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn quiet_keeps_errors_only_whatever_the_environment_says() {
        let targets = filter(true, Some("debug")).unwrap();
        assert!(targets.would_enable("wymcp", &tracing::Level::ERROR));
        assert!(!targets.would_enable("wymcp", &tracing::Level::WARN));
    }

    #[test]
    fn info_by_default_and_the_environment_when_it_parses() {
        let default = filter(false, None).unwrap();
        assert!(default.would_enable("wymcp", &tracing::Level::INFO));
        assert!(!default.would_enable("wymcp", &tracing::Level::DEBUG));
        let custom = filter(false, Some("warn,wymcp=debug")).unwrap();
        assert!(custom.would_enable("wymcp::dispatch", &tracing::Level::DEBUG));
        assert!(!custom.would_enable("hyper", &tracing::Level::INFO));
        let refused = filter(false, Some("wymcp=loud")).unwrap_err();
        assert!(
            refused.contains("RUST_LOG=\"wymcp=loud\" is not a log filter"),
            "{refused}"
        );
    }
}
