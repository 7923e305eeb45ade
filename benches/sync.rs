//! What checking a remote's records costs (issue 18; spec/sync.md, "What sync takes in"): before
//! sync takes in a remote's commits it checks each with the audit's rules.
//!
//! Run with `cargo bench --bench sync` (needs `python3` and `git` on PATH). On the large
//! generated vault (10,000 notes, 3,650 days; shared with the other benches, see
//! `benches/support/`):
//!
//! 1. machine A is the large vault, set up for sync with a fresh bare remote (`sync --setup`
//!    pushes its history); machine B is a `git clone` of the remote where `git rutter init`
//!    starts from the remote's records, which checks their whole history (timed, reported);
//! 2. for each batch (5 commits, an ordinary sync, then 1,000), B captures that many entries
//!    (real `git-rutter capture` runs) and syncs them to the remote; A fetches them with plain
//!    `git fetch`, then the check of what A would take in
//!    (`Store::check_incoming(remote tip, Some(local tip))`, read-only) is timed in-process
//!    over several runs, then A's `git rutter sync` takes them in (timed once, reported).
//!
//! Targets (issue 18): the check of an ordinary sync's few commits ≤ 50 ms; 1,000 incoming
//! commits checked in ≤ 1 s. It prints (and writes to `<target>/rutter-bench/sync.md`) median,
//! p95 and min. A missed target is reported, not fatal; a failed command panics.

#[path = "support/mod.rs"]
mod support;

use std::path::Path;
use std::time::Instant;
use support::{
    machine, prepare, restore_vault, rutter_ok, stats_table, utf8, Env, Stats, BIN, LARGE,
};

const RUNS: usize = 11;
const TARGET_FEW_MS: f64 = 50.0;
const TARGET_THOUSAND_MS: f64 = 1_000.0;

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("sync benchmark: run it with `cargo bench --bench sync`");
        return;
    }
    let env = Env::new();
    let large = prepare(&env, &LARGE);
    let a = restore_vault(&large);
    let remote = env.root.join("sync-remote.git");
    let b = env.root.join("sync-b");
    for dir in [&remote, &b] {
        if dir.exists() {
            support::remove(dir);
        }
    }
    env.run("git", &["init", "-q", "--bare", utf8(&remote)], &env.root);
    env.run("git", &["remote", "add", "origin", utf8(&remote)], &a);
    rutter_ok(&env, &a, &["sync", "--setup", "origin"]);
    env.run("git", &["push", "-q", "origin", "HEAD:refs/heads/main"], &a);
    env.run("git", &["clone", "-q", utf8(&remote), utf8(&b)], &env.root);
    let t = Instant::now();
    rutter_ok(&env, &b, &["init"]);
    let clone_ms = t.elapsed().as_secs_f64() * 1e3;
    rutter_ok(&env, &b, &["sync", "--setup", "origin"]);
    let commits = count(&env, &a);
    let mut rows = vec![
        Stats::of(
            &format!("`init` on a clone: the whole history checked ({commits} commit(s), 3,650 day files), then the files written"),
            vec![clone_ms],
            None,
        ),
        whole_history(&b),
    ];
    for (n, target) in [(5, TARGET_FEW_MS), (1_000, TARGET_THOUSAND_MS)] {
        rows.extend(batch(&env, &a, &b, &large.refs, n, target));
    }
    let report = format!(
        "# Checking a remote's records (`cargo bench --bench sync`)\n\n{}\n\n{}",
        machine(),
        stats_table(&rows)
    );
    println!("{report}");
    std::fs::write(env.root.join("sync.md"), &report).expect("write sync.md");
}

/// `n` captures on B synced to the remote; A fetches them; the check timed; A's sync once.
fn batch(env: &Env, a: &Path, b: &Path, refs: &[String], n: usize, target: f64) -> Vec<Stats> {
    println!("{n} captures on the second machine...");
    for k in 0..n {
        capture(env, b, refs, n, k);
    }
    rutter_ok(env, b, &["sync"]);
    env.run("git", &["fetch", "-q", "origin"], a);
    let vault = rutter::vault::open(a, rutter::vault::VaultSource::Flag).expect("the vault");
    let store = rutter::store::Store::open(&vault).expect("the store");
    let local = store.tip().expect("the tip").expect("a local tip");
    let theirs = oid(env, a, "refs/remotes/origin/rutter/records");
    let mut ms = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        let checked = rutter::audit::intake::check_incoming(&store, theirs, Some(local))
            .unwrap_or_else(|e| panic!("the check refused a clean history: {e}"));
        ms.push(t.elapsed().as_secs_f64() * 1e3);
        assert!(
            checked >= n,
            "checked {checked} commits, fewer than the {n} made"
        );
    }
    let t = Instant::now();
    rutter_ok(env, a, &["sync"]);
    let sync_ms = t.elapsed().as_secs_f64() * 1e3;
    vec![
        Stats::of(
            &format!("check of {n} incoming commits (in-process, read-only)"),
            ms,
            Some(target),
        ),
        Stats::of(
            &format!("`git rutter sync` taking in {n} commits (check, fast-forward, working files, index)"),
            vec![sync_ms],
            None,
        ),
    ]
}

/// The check `init` makes of a clone's whole history, alone (in-process, read-only).
fn whole_history(vault: &Path) -> Stats {
    let v = rutter::vault::open(vault, rutter::vault::VaultSource::Flag).expect("the vault");
    let store = rutter::store::Store::open(&v).expect("the store");
    let tip = store.tip().expect("the tip").expect("a tip");
    let ms = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            rutter::audit::intake::check_incoming(&store, tip, None).expect("a clean history");
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    Stats::of(
        "check of a clone's whole history (in-process, read-only)",
        ms,
        None,
    )
}

fn capture(env: &Env, vault: &Path, refs: &[String], batch: usize, k: usize) {
    let summary = format!("Bench sync {batch}-{k}: decided on the second machine.");
    let session = format!("bench-sync-{batch}-{}", k / 5);
    let mut cmd = env.command(BIN);
    cmd.args(["capture", "--summary", &summary, "--session", &session])
        .env("LIBRARIAN_VAULT_PATH", vault);
    for r in refs.iter().take(2) {
        cmd.args(["--ref", r]);
    }
    let out = cmd.output().expect("run capture");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.contains("captured 1 entry"),
        "capture {batch}-{k}: {stderr}"
    );
}

fn oid(env: &Env, dir: &Path, rev: &str) -> rutter::objectid::ObjectId {
    let out = env
        .command("git")
        .args(["rev-parse", rev])
        .current_dir(dir)
        .output()
        .expect("git rev-parse");
    let hex = String::from_utf8_lossy(&out.stdout);
    rutter::objectid::ObjectId::from_hex(hex.trim()).expect("an object id")
}

fn count(env: &Env, dir: &Path) -> String {
    let out = env
        .command("git")
        .args(["rev-list", "--count", "refs/rutter/records"])
        .current_dir(dir)
        .output()
        .expect("git rev-list");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}
