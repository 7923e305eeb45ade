//! Sync that runs itself (`git config rutter.autoSync`, spec/sync.md "Automatic sync"): two
//! clones of one notes repository and a bare remote (`common::net`), the real binary and the real `git`. The
//! captures start detached `git-rutter sync --auto` runs; the tests wait for what they did
//! (the remote's ref, the hook-run log), never for a fixed time.

use crate::common;
use common::json::{decode, Status};
use common::net::Net;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A bare remote and two clones set up for sync, each syncing by itself every minute.
fn two_machines() -> (Net, PathBuf, PathBuf) {
    let (net, a) = Net::new();
    let b = net.machine("b");
    for dir in [&a, &b] {
        net.git(dir, &["config", "rutter.autoSync", "1m"]);
    }
    (net, a, b)
}

/// A Stop-hook run whose turn decided nothing (no directive): no entry, but a run.
fn quiet_turn(net: &Net, dir: &Path, ts: &str) {
    let mut c = net.cmd(dir);
    c.env("RUTTER_TIMESTAMP", ts).args(["capture"]);
    let r = run_with_stdin(&mut c, br#"{"last_assistant_message": "Nothing decided."}"#);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

fn tip(net: &Net, dir: &Path) -> String {
    net.git(dir, &["rev-parse", "refs/rutter/records"])
        .trim()
        .to_string()
}

fn remote_tip(net: &Net) -> String {
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(&net.remote)
        .args(["rev-parse", "refs/rutter/records"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The outcomes of the detached syncs `dir`'s hook-run log holds, oldest first.
fn auto_runs(dir: &Path) -> Vec<(String, String)> {
    let log = std::fs::read_to_string(dir.join(".git/rutter/hook-runs.jsonl")).unwrap_or_default();
    log.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["client"] == "auto-sync")
        .map(|v| {
            let kind = v["outcome"].as_str().unwrap_or("").to_string();
            (kind, v["reason"].as_str().unwrap_or("").to_string())
        })
        .collect()
}

/// When the last detached sync started, as `dir`'s state folder notes it (`sync-last`,
/// spec/sync.md): a capture notes the start before it starts one, so once a capture has
/// returned, a note it left as it was says it started none.
fn last_start(dir: &Path) -> Option<String> {
    let note = std::fs::read_to_string(dir.join(".git/rutter/sync-last")).ok()?;
    Some(note.trim().to_string())
}

/// Waits (at most 60 s) until `dir` has logged `n` detached syncs; they must have synced.
fn wait_for_auto_runs(dir: &Path, n: usize) {
    wait_until(&format!("{n} detached syncs in {dir:?}"), || {
        auto_runs(dir).len() >= n
    });
    for (kind, reason) in auto_runs(dir) {
        assert_eq!(kind, "synced", "{reason}");
    }
}

fn wait_until(what: &str, done: impl FnMut() -> bool) {
    common::wait_until(what, Duration::from_secs(60), done);
}

#[test]
fn two_clones_with_auto_sync_converge_with_no_manual_sync() {
    let (net, a, b) = two_machines();
    let r = net.capture(&a, "2026-11-30T09:00:00.000Z", "Decided on a.");
    assert!(r.stderr.contains("committed"), "{}", r.stderr);
    wait_for_auto_runs(&a, 1);
    assert_eq!(remote_tip(&net), tip(&net, &a), "a's auto-sync pushed");
    // b's capture starts b's sync: it takes a's entry in and sends its own.
    net.capture(&b, "2026-11-30T09:10:00.000Z", "Decided on b.");
    wait_for_auto_runs(&b, 1);
    assert_eq!(remote_tip(&net), tip(&net, &b), "b's auto-sync pushed");
    // The next turn on a (deciding nothing) brings b's entry over.
    quiet_turn(&net, &a, "2026-11-30T09:20:00.000Z");
    wait_for_auto_runs(&a, 2);
    assert_eq!(tip(&net, &a), tip(&net, &b));
    net.converged(&[&a, &b], &["Decided on a.", "Decided on b."]);
    // Within the interval a capture starts no sync (the last one started at 09:20): the note
    // of the last start is as it was once the capture has returned.
    let started = last_start(&a);
    assert_eq!(started.as_deref(), Some("2026-11-30T09:20:00.000Z"));
    net.capture(&a, "2026-11-30T09:20:30.000Z", "Within the minute.");
    assert_eq!(last_start(&a), started, "no sync within the interval");
    assert_eq!(auto_runs(&a).len(), 2, "no sync within the interval");
    assert_ne!(remote_tip(&net), tip(&net, &a));
    // status says how it is set up.
    let v: Status = decode(&net.rut(&a, &["status", "--json"]).stdout);
    let sync = v.sync();
    assert_eq!(sync.auto_sync.as_deref(), Some("1m"));
    assert_eq!(sync.exposure, "local");
    assert!(sync.last_sync.is_some(), "{v:#?}");
    let text = net.rut(&a, &["status"]).stdout;
    assert!(text.contains("syncs by itself every 1m"), "{text}");
}

#[test]
fn captures_during_a_running_auto_sync_lose_nothing() {
    let (net, a, b) = two_machines();
    net.capture(&b, "2026-11-30T08:00:00.000Z", "B before.");
    wait_for_auto_runs(&b, 1);
    // A slow remote keeps a's detached sync (which merges b's entry, rewriting the day file)
    // in its push while more captures run on a: no network phase holds the capture lock, so
    // each commits at once.
    let (hook, pushing) = net.slow_push("sleep 2");
    net.capture(&a, "2026-11-30T09:00:00.000Z", "A starts the sync.");
    wait_until("the detached sync to push", || pushing.exists());
    let mut want = vec!["A starts the sync.".to_string(), "B before.".to_string()];
    for i in 0..5 {
        let summary = format!("A during {i}.");
        let ts = format!("2026-11-30T09:00:1{i}.000Z");
        let r = net.capture_without_waiting(&a, &ts, &summary, &format!("S{i}"));
        assert!(!r.stderr.contains("not committed yet"), "{}", r.stderr);
        want.push(summary);
    }
    wait_for_auto_runs(&a, 1);
    std::fs::remove_file(&hook).unwrap();
    // The next turn after the interval commits what waited and sends it; b's next turn takes
    // it in.
    quiet_turn(&net, &a, "2026-11-30T09:05:00.000Z");
    wait_for_auto_runs(&a, 2);
    quiet_turn(&net, &b, "2026-11-30T09:06:00.000Z");
    wait_for_auto_runs(&b, 2);
    let want: Vec<&str> = want.iter().map(String::as_str).collect();
    net.converged(&[&a, &b], &want);
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
    let (net, a, _b) = two_machines();
    // The remote moves away: the detached sync cannot fetch.
    std::fs::rename(&net.remote, net.env.root().join("moved.git")).unwrap();
    net.capture(&a, "2026-11-30T09:00:00.000Z", "Kept here.");
    wait_until("a logged detached sync", || !auto_runs(&a).is_empty());
    let runs = auto_runs(&a);
    assert_eq!(runs[0].0, "sync-failed", "{runs:?}");
    let s = net.rut(&a, &["status", "--json"]);
    let v: Status = decode(&s.stdout);
    assert!(v.kinds().contains(&"auto-sync-failed"), "{}", s.stdout);
    assert_eq!(s.code, 1);
    // The capture itself was committed all the same.
    assert_eq!(common::net::summaries(&a), ["Kept here."]);
}

#[test]
fn an_interval_that_is_not_one_is_a_status_finding_and_starts_nothing() {
    let (net, a, _b) = two_machines();
    net.git(&a, &["config", "rutter.autoSync", "soon"]);
    let started = last_start(&a);
    net.capture(&a, "2026-11-30T09:00:00.000Z", "No sync for this.");
    assert_eq!(last_start(&a), started, "no sync started");
    assert!(auto_runs(&a).is_empty());
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
    let (net, a, _b) = two_machines();
    // An ssh URL whose "ssh" is a script running git on this machine: the config names a
    // host, the transport stays local (git's "simple" ssh variant: `CMD HOST COMMAND`).
    let ssh = net.env.root().join("fake-ssh");
    std::fs::write(&ssh, "#!/bin/sh\nshift\nexec sh -c \"$1\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&ssh, std::fs::Permissions::from_mode(0o755)).unwrap();
    net.git(&a, &["config", "core.sshCommand", ssh.to_str().unwrap()]);
    let url = format!("ssh://git.example.org{}", net.remote.display());
    net.git(&a, &["remote", "add", "hosted", &url]);
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
