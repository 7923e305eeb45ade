//! A minimal stdio JSON-RPC client of `git-rutter mcp`, for the benchmarks that speak MCP: it
//! spawns the server, exchanges newline-delimited JSON-RPC and reads the server's CPU time
//! and peak memory from `/proc`.

use super::{Env, BIN};
use serde_json::{json, Value};
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::thread::JoinHandle;

pub const PROTOCOL_VERSION: &str = "2025-06-18";

/// The `initialize` request's parameters.
pub fn init_params() -> Value {
    json!({
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "rutter-bench", "version": "1.0.0"},
    })
}

/// A running `git-rutter mcp` with its pipes; stderr is collected on a thread.
pub struct Server {
    pub child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    stderr: Option<JoinHandle<String>>,
}

impl Server {
    /// `git-rutter mcp`, the vault in `LIBRARIAN_VAULT_PATH`.
    pub fn spawn(env: &Env, vault: &Path) -> Server {
        Server::spawn_with(env, Path::new(BIN), vault)
    }

    /// `bin mcp` (another build of git-rutter), the vault in `LIBRARIAN_VAULT_PATH`.
    pub fn spawn_with(env: &Env, bin: &Path, vault: &Path) -> Server {
        let mut child = env
            .command(super::utf8(bin))
            .arg("mcp")
            .env("LIBRARIAN_VAULT_PATH", vault)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn git-rutter mcp");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut err = child.stderr.take().expect("piped stderr");
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        Server {
            child,
            stdin,
            stdout,
            stderr: Some(stderr),
        }
    }

    pub fn send(&mut self, msg: &Value) {
        let mut line = msg.to_string();
        line.push('\n');
        let pipe = self.stdin.as_mut().expect("stdin still open");
        pipe.write_all(line.as_bytes())
            .and_then(|()| pipe.flush())
            .unwrap_or_else(|e| panic!("write to the server: {e}"));
    }

    /// Sends a request and reads lines until the response with its id.
    pub fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).expect("read the server");
            if n == 0 {
                let stderr = self.close();
                panic!(
                    "the server closed stdout before answering {method} ({id}); stderr:\n{stderr}"
                );
            }
            let v: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("not a JSON-RPC line ({e}): {line:?}"));
            if v["id"] == json!(id) {
                assert!(v.get("error").is_none(), "{method} failed: {v}");
                return v;
            }
        }
    }

    /// The CPU time of each of the server's threads so far (`/proc/PID/task/*/schedstat`, in
    /// nanoseconds: exact, where `/proc/PID/stat` counts 10 ms ticks).
    pub fn cpu(&self) -> Cpu {
        let tasks = format!("/proc/{}/task", self.child.id());
        let mut by_thread = std::collections::HashMap::new();
        for task in fs::read_dir(&tasks).unwrap_or_else(|e| panic!("read {tasks}: {e}")) {
            let path = task
                .expect("list the server's threads")
                .path()
                .join("schedstat");
            // A thread may end between the listing and the read: it is not counted.
            let Ok(text) = fs::read_to_string(&path) else {
                continue;
            };
            let ns: u64 = text
                .split_whitespace()
                .next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("unexpected {}: {text:?}", path.display()));
            by_thread.insert(path, ns);
        }
        Cpu { by_thread }
    }

    /// The server's peak resident memory so far (`VmHWM`), in MiB.
    pub fn peak_mib(&self) -> f64 {
        let status = format!("/proc/{}/status", self.child.id());
        let text = fs::read_to_string(&status).unwrap_or_else(|e| panic!("read {status}: {e}"));
        text.lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map(|kb| kb / 1024.0)
            .unwrap_or_else(|| panic!("no VmHWM in {status}"))
    }

    /// Waits until the server has done what it does after starting (its watches, the first
    /// refresh: seconds of CPU on a heavy vault, which would otherwise be counted to the first
    /// calls measured): until its threads spend under a millisecond in each of five 100 ms
    /// polls in a row, at most `max`. Returns how long it waited.
    pub fn settle(&self, max: std::time::Duration) -> std::time::Duration {
        let start = std::time::Instant::now();
        let mut quiet = 0;
        let mut before = self.cpu();
        while quiet < 5 && start.elapsed() < max {
            std::thread::sleep(std::time::Duration::from_millis(100));
            let now = self.cpu();
            quiet = if now.since(&before) < 1.0 {
                quiet + 1
            } else {
                0
            };
            before = now;
        }
        start.elapsed()
    }

    /// `initialize` and `notifications/initialized`; returns the reply to `initialize`.
    pub fn handshake(&mut self) -> Value {
        let reply = self.request(1, "initialize", init_params());
        self.notify("notifications/initialized");
        reply
    }

    pub fn notify(&mut self, method: &str) {
        self.send(&json!({"jsonrpc": "2.0", "method": method}));
    }

    /// Closes stdin and waits for the exit (the server first finishes its background refresh);
    /// returns its stderr. Panics unless it exits 0.
    pub fn close(&mut self) -> String {
        drop(self.stdin.take());
        let mut rest = Vec::new();
        let _ = self.stdout.read_to_end(&mut rest);
        let status = self.child.wait().expect("wait for the server");
        let stderr = self
            .stderr
            .take()
            .map(|h| h.join().unwrap_or_default())
            .unwrap_or_default();
        assert!(
            status.success(),
            "git-rutter mcp exited with {status}; stderr:\n{stderr}"
        );
        stderr
    }
}

/// CPU nanoseconds by thread, as [`Server::cpu`] read them.
pub struct Cpu {
    by_thread: std::collections::HashMap<std::path::PathBuf, u64>,
}

impl Cpu {
    pub fn total_ms(&self) -> f64 {
        self.by_thread.values().sum::<u64>() as f64 / 1e6
    }

    /// Milliseconds spent since `before` by the threads alive now (a thread that ended in
    /// between is not counted: the server's threads live as long as it does).
    pub fn since(&self, before: &Cpu) -> f64 {
        let ns: u64 = self
            .by_thread
            .iter()
            .map(|(t, now)| now - before.by_thread.get(t).copied().unwrap_or(0))
            .sum();
        ns as f64 / 1e6
    }
}
