//! Sync that runs itself (`git config rutter.autoSync`, spec/sync.md "Automatic sync"): two
//! clones of one notes repository and a bare remote, the real binary and the real `git`. The
//! captures start detached `git-rutter sync --auto` runs; the tests wait for what they did
//! (the remote's ref, the hook-run log), never for a fixed time.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A bare remote and two clones set up for sync, each syncing by itself every minute.
struct Net {
    env: Env,
    remote: PathBuf,
}

impl Net {
    fn new() -> (Net, PathBuf, PathBuf) {
        let env = Env::bare();
        env.write("Notes/a.md", NOTE_A);
        env.git(&["init", "-q", "-b", "main"]);
        env.git(&["add", "Notes"]);
        env.git(&["commit", "-qm", "notes"]);
        let remote = env.root().join("remote.git");
        env.git(&["clone", "-q", "--bare", ".", remote.to_str().unwrap()]);
        let net = Net { env, remote };
        let a = net.machine("a");
        let b = net.machine("b");
        (net, a, b)
    }

    fn machine(&self, name: &str) -> PathBuf {
        let dir = self.env.root().join(name);
        let remote = self.remote.to_str().unwrap();
        self.env
            .git(&["clone", "-q", remote, dir.to_str().unwrap()]);
        for args in [&["init"][..], &["sync", "--setup", "origin"]] {
            let r = self.rut(&dir, args);
            assert_eq!(r.code, 0, "{args:?}: {}{}", r.stdout, r.stderr);
        }
        self.env.git_in(&dir, &["config", "rutter.autoSync", "1m"]);
        dir
    }

    fn cmd(&self, dir: &Path) -> Command {
        let mut c = self.env.cmd();
        c.env("LIBRARIAN_VAULT_PATH", dir).current_dir(dir);
        c
    }

    fn rut(&self, dir: &Path, args: &[&str]) -> Run {
        run_with_stdin(self.cmd(dir).args(args), b"")
    }

    /// A capture at the pinned time `ts` (the detached sync it starts inherits the time).
    fn capture(&self, dir: &Path, ts: &str, summary: &str) -> Run {
        let mut c = self.cmd(dir);
        c.env("RUTTER_TIMESTAMP", ts)
            .args(["capture", "--summary", summary, "--session", "S"]);
        run_with_stdin(&mut c, b"")
    }

    /// A Stop-hook run whose turn decided nothing (no directive): no entry, but a run.
    fn quiet_turn(&self, dir: &Path, ts: &str) {
        let mut c = self.cmd(dir);
        c.env("RUTTER_TIMESTAMP", ts).args(["capture"]);
        let r = run_with_stdin(&mut c, br#"{"last_assistant_message": "Nothing decided."}"#);
        assert_eq!(r.code, 0, "{}", r.stderr);
    }

    fn tip(&self, dir: &Path) -> String {
        self.env
            .git_in(dir, &["rev-parse", "refs/rutter/records"])
            .trim()
            .to_string()
    }

    fn remote_tip(&self) -> String {
        let out = Command::new("git")
            .arg("--git-dir")
            .arg(&self.remote)
            .args(["rev-parse", "refs/rutter/records"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// The outcomes of the detached syncs `dir`'s hook-run log holds, oldest first.
    fn auto_runs(&self, dir: &Path) -> Vec<(String, String)> {
        let log =
            std::fs::read_to_string(dir.join(".git/rutter/hook-runs.jsonl")).unwrap_or_default();
        log.lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|v| v["client"] == "auto-sync")
            .map(|v| {
                let kind = v["outcome"].as_str().unwrap_or("").to_string();
                (kind, v["reason"].as_str().unwrap_or("").to_string())
            })
            .collect()
    }

    /// Waits (at most 60 s) until `dir` has logged `n` detached syncs; they must have synced.
    fn wait_for_auto_runs(&self, dir: &Path, n: usize) {
        wait_until(&format!("{n} detached syncs in {dir:?}"), || {
            self.auto_runs(dir).len() >= n
        });
        for (kind, reason) in self.auto_runs(dir) {
            assert_eq!(kind, "synced", "{reason}");
        }
    }

    fn summaries(&self, dir: &Path) -> Vec<String> {
        let r = self.rut(dir, &["recent", "--all", "--json"]);
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        let mut out: Vec<String> = v["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|s| s["steps"].as_array().unwrap().clone())
            .map(|e| e["summary"].as_str().unwrap().to_string())
            .collect();
        out.sort();
        out
    }

    fn verify_clean(&self, dir: &Path) {
        let v = self.rut(dir, &["verify", "--full"]);
        assert_eq!(v.code, 0, "verify in {dir:?}: {}{}", v.stdout, v.stderr);
    }
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn two_clones_with_auto_sync_converge_with_no_manual_sync() {
    let (net, a, b) = Net::new();
    let r = net.capture(&a, "2026-11-30T09:00:00.000Z", "Decided on a.");
    assert!(r.stderr.contains("committed"), "{}", r.stderr);
    net.wait_for_auto_runs(&a, 1);
    assert_eq!(net.remote_tip(), net.tip(&a), "a's auto-sync pushed");
    // b's capture starts b's sync: it takes a's entry in and sends its own.
    net.capture(&b, "2026-11-30T09:10:00.000Z", "Decided on b.");
    net.wait_for_auto_runs(&b, 1);
    assert_eq!(net.remote_tip(), net.tip(&b), "b's auto-sync pushed");
    // The next turn on a (deciding nothing) brings b's entry over.
    net.quiet_turn(&a, "2026-11-30T09:20:00.000Z");
    net.wait_for_auto_runs(&a, 2);
    assert_eq!(net.tip(&a), net.tip(&b));
    let want = ["Decided on a.", "Decided on b."];
    for dir in [&a, &b] {
        assert_eq!(net.summaries(dir), want, "{dir:?}");
        net.verify_clean(dir);
    }
    // Within the interval a capture starts no sync (the last one started at 09:20).
    net.capture(&a, "2026-11-30T09:20:30.000Z", "Within the minute.");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(net.auto_runs(&a).len(), 2, "no sync within the interval");
    assert_ne!(net.remote_tip(), net.tip(&a));
    // status says how it is set up.
    let s = net.rut(&a, &["status", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&s.stdout).unwrap();
    assert_eq!(v["record"]["sync"]["auto_sync"], "1m");
    assert_eq!(v["record"]["sync"]["exposure"], "local");
    assert!(v["record"]["sync"]["last_sync"].is_string(), "{v}");
    let text = net.rut(&a, &["status"]).stdout;
    assert!(text.contains("syncs by itself every 1m"), "{text}");
}

#[test]
fn captures_during_a_running_auto_sync_lose_nothing() {
    let (net, a, b) = Net::new();
    net.capture(&b, "2026-11-30T08:00:00.000Z", "B before.");
    net.wait_for_auto_runs(&b, 1);
    // A slow remote keeps a's detached sync (which merges b's entry, rewriting the day file)
    // holding the capture lock while more captures run on a.
    let hook = net.remote.join("hooks/pre-receive");
    std::fs::write(&hook, "#!/bin/sh\ncat >/dev/null\nsleep 2\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    net.capture(&a, "2026-11-30T09:00:00.000Z", "A starts the sync.");
    let lock = a.join(".git/rutter/lock");
    let held = || {
        !Command::new("flock")
            .arg("-n")
            .arg(&lock)
            .arg("true")
            .status()
            .unwrap()
            .success()
    };
    wait_until("the detached sync to hold the capture lock", held);
    let mut want = vec!["A starts the sync.".to_string(), "B before.".to_string()];
    for i in 0..5 {
        let summary = format!("A during {i}.");
        let mut c = net.cmd(&a);
        c.env("RUTTER_TIMESTAMP", format!("2026-11-30T09:00:1{i}.000Z"))
            .env("RUTTER_LOCK_WAIT_MS", "50")
            .args([
                "capture",
                "--summary",
                &summary,
                "--session",
                &format!("S{i}"),
            ]);
        let r = run_with_stdin(&mut c, b"");
        assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
        want.push(summary);
    }
    net.wait_for_auto_runs(&a, 1);
    std::fs::remove_file(&hook).unwrap();
    // The next turn after the interval commits what waited and sends it; b's next turn takes
    // it in.
    net.quiet_turn(&a, "2026-11-30T09:05:00.000Z");
    net.wait_for_auto_runs(&a, 2);
    net.quiet_turn(&b, "2026-11-30T09:06:00.000Z");
    net.wait_for_auto_runs(&b, 2);
    want.sort();
    for dir in [&a, &b] {
        assert_eq!(net.summaries(dir), want, "{dir:?}");
        net.verify_clean(dir);
    }
    assert_eq!(net.tip(&a), net.tip(&b));
    assert_eq!(
        std::fs::read_dir(a.join(".git/rutter/pending"))
            .unwrap()
            .count(),
        0,
        "nothing left pending"
    );
}

#[test]
fn a_failed_auto_sync_is_logged_and_shown_by_status() {
    let (net, a, _b) = Net::new();
    // The remote moves away: the detached sync cannot fetch.
    std::fs::rename(&net.remote, net.env.root().join("moved.git")).unwrap();
    net.capture(&a, "2026-11-30T09:00:00.000Z", "Kept here.");
    wait_until("a logged detached sync", || !net.auto_runs(&a).is_empty());
    let runs = net.auto_runs(&a);
    assert_eq!(runs[0].0, "sync-failed", "{runs:?}");
    let s = net.rut(&a, &["status", "--json"]);
    assert!(s.stdout.contains("\"auto-sync-failed\""), "{}", s.stdout);
    assert_eq!(s.code, 1);
    // The capture itself was committed all the same.
    assert_eq!(net.summaries(&a), ["Kept here."]);
}

#[test]
fn an_interval_that_is_not_one_is_a_status_finding_and_starts_nothing() {
    let (net, a, _b) = Net::new();
    net.env.git_in(&a, &["config", "rutter.autoSync", "soon"]);
    net.capture(&a, "2026-11-30T09:00:00.000Z", "No sync for this.");
    std::thread::sleep(Duration::from_millis(500));
    assert!(net.auto_runs(&a).is_empty());
    let s = net.rut(&a, &["status"]);
    assert!(
        s.stdout
            .contains("rutter.autoSync \"soon\" is not an interval"),
        "{}",
        s.stdout
    );
    assert_eq!(s.code, 1);
}

#[test]
fn setup_says_what_the_host_of_a_plaintext_remote_can_read() {
    let (net, a, _b) = Net::new();
    // An ssh URL whose "ssh" is a script running git on this machine: the config names a
    // host, the transport stays local (git's "simple" ssh variant: `CMD HOST COMMAND`).
    let ssh = net.env.root().join("fake-ssh");
    std::fs::write(&ssh, "#!/bin/sh\nshift\nexec sh -c \"$1\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&ssh, std::fs::Permissions::from_mode(0o755)).unwrap();
    net.env
        .git_in(&a, &["config", "core.sshCommand", ssh.to_str().unwrap()]);
    let url = format!("ssh://git.example.org{}", net.remote.display());
    net.env.git_in(&a, &["remote", "add", "hosted", &url]);
    let r = net.rut(&a, &["sync", "--setup", "hosted"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr
            .contains("hosted is not encrypted: git.example.org can read everything sync sends it"),
        "{}",
        r.stderr
    );
    let text = net.rut(&a, &["status"]).stdout;
    assert!(
        text.contains("not encrypted: git.example.org can read"),
        "{text}"
    );
    // A local remote says nothing of the kind.
    let r = net.rut(&a, &["sync", "--setup", "origin"]);
    assert!(!r.stderr.contains("not encrypted"), "{}", r.stderr);
}
