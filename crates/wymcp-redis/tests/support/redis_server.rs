//! A real `redis-server` (the Debian package) for one test: on a free port of 127.0.0.1, in a
//! temporary directory, persisting nothing; stopped (and its directory removed) on drop.
//!
//! Without `redis-server` on `PATH` a test skips: [`RedisServer::start`] answers `None` after
//! one line on stderr naming the test and how to install it. `WYMCP_REQUIRE_SERVICES=1` (which
//! `.ci/run` sets) turns that skip into a failure.

use std::io::{ErrorKind, Write as _};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub(crate) struct RedisServer {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
    /// More `redis-server` arguments (TLS, a password, cluster mode).
    extra: Vec<String>,
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address").port()
}

impl RedisServer {
    /// Starts a server and waits until it answers; `None` when there is no `redis-server` to
    /// run (the calling test returns: it is skipped, see [`skip`]).
    pub(crate) fn start() -> Option<RedisServer> {
        RedisServer::start_with_files(|_| Vec::new())
    }

    /// [`start`](Self::start) with more `redis-server` arguments; `dir` gets the server's
    /// temporary directory (for files the arguments name, written before it starts).
    pub(crate) fn start_with_files(
        args: impl FnOnce(&std::path::Path) -> Vec<String>,
    ) -> Option<RedisServer> {
        if !installed() {
            skip();
            return None;
        }
        let dir = temporary_dir();
        let extra = args(&dir);
        let mut server = RedisServer {
            child: None,
            port: free_port(),
            dir,
            extra,
        };
        server.resume();
        Some(server)
    }

    /// The plain (non-TLS) port.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// Runs `redis-cli` against it with `args` (the server's password, if any, among them):
    /// the reply's text.
    pub(crate) fn cli(&self, args: &[&str]) -> String {
        let out = Command::new("redis-cli")
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(args)
            .output()
            .expect("redis-cli runs (it comes with redis-server)");
        assert!(out.status.success(), "redis-cli {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// `redis://127.0.0.1:<port>/`.
    pub(crate) fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Stops the server (a crash, as far as its clients can tell).
    pub(crate) fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Freezes the server (SIGSTOP): connections stay open, nothing is answered, as in a
    /// network partition; [`thaw`](Self::thaw) lets it go on with its data intact.
    pub(crate) fn freeze(&self) {
        self.signal("-STOP");
    }

    /// Lets a frozen server go on (SIGCONT).
    pub(crate) fn thaw(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        let pid = self
            .child
            .as_ref()
            .expect("a running server")
            .id()
            .to_string();
        let status = Command::new("kill")
            .args([signal, &pid])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill {signal} {pid}");
    }

    /// Starts it again on the same port (empty: it persists nothing).
    pub(crate) fn resume(&mut self) {
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &self.port.to_string()])
            .args([
                "--save",
                "",
                "--appendonly",
                "no",
                "--protected-mode",
                "yes",
            ])
            .arg("--dir")
            .arg(&self.dir)
            .args(&self.extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server runs (Debian package redis-server; .ci/run installs it)");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(mut conn) = std::net::TcpStream::connect(("127.0.0.1", self.port)) {
                use std::io::{Read as _, Write as _};
                let _ = conn.set_read_timeout(Some(Duration::from_secs(1)));
                // A server with a password answers `-NOAUTH …`: up all the same.
                let mut pong = [0u8; 7];
                if conn.write_all(b"PING\r\n").is_ok()
                    && conn.read_exact(&mut pong).is_ok()
                    && (&pong == b"+PONG\r\n" || &pong == b"-NOAUTH")
                {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("redis-server did not answer on port {}", self.port);
    }
}

/// A fresh temporary directory for one server.
fn temporary_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "wymcp-redis-{}-{}",
        std::process::id(),
        free_port()
    ));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}

/// Whether `redis-server` runs here (it is on `PATH`).
fn installed() -> bool {
    match Command::new("redis-server")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(_) => true,
        Err(error) => error.kind() != ErrorKind::NotFound,
    }
}

/// What a skipped test says, and the variable that makes its skip a failure.
const REQUIRE: &str = "WYMCP_REQUIRE_SERVICES";

/// Says on one line which test is skipped and how to install `redis-server`, or fails the test
/// when `WYMCP_REQUIRE_SERVICES=1`. The line goes to the process's stderr itself, not through
/// `eprintln!` (which the test harness captures and shows only for a failed test), so
/// `cargo test` shows it next to the test's `ok`.
fn skip() {
    let test = std::thread::current().name().unwrap_or("a test").to_owned();
    let binary = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .map(|stem| {
            stem.rsplit_once('-')
                .map_or(stem.clone(), |(name, _)| name.to_owned())
        })
        .unwrap_or_default();
    let install = "redis-server is not on PATH (Debian/Ubuntu: apt-get install redis-server; \
                   macOS: brew install redis)";
    assert!(
        std::env::var(REQUIRE).as_deref() != Ok("1"),
        "{binary}::{test}: {install}, and {REQUIRE}=1 requires it"
    );
    let _ = writeln!(
        std::io::stderr(),
        "skipped {binary}::{test}: {install}; {REQUIRE}=1 makes this a failure"
    );
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
