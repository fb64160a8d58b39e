//! A real `redis-server` (the Debian package) for one test: on a free port of 127.0.0.1, in a
//! temporary directory, persisting nothing; stopped (and its directory removed) on drop.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub(crate) struct RedisServer {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address").port()
}

impl RedisServer {
    /// Starts a server and waits until it answers.
    pub(crate) fn start() -> RedisServer {
        let dir = std::env::temp_dir().join(format!(
            "wymcp-redis-{}-{}",
            std::process::id(),
            free_port()
        ));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let mut server = RedisServer {
            child: None,
            port: free_port(),
            dir,
        };
        server.resume();
        server
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
                let mut pong = [0u8; 7];
                if conn.write_all(b"PING\r\n").is_ok()
                    && conn.read_exact(&mut pong).is_ok()
                    && &pong == b"+PONG\r\n"
                {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("redis-server did not answer on port {}", self.port);
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
