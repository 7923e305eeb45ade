//! `git rutter context` and its SessionStart hook as processes on the large generated vault
//! (10,000 notes, 3,650 day files), from spawn to exit (spec/context.md; issue 33's targets:
//! `context` ≤ 10 ms, the hook ≤ 20 ms).
//!
//! Run with `cargo bench --bench context` (needs `python3` and `git` on PATH). It shares the
//! vault and its cache with the other benchmarks (`benches/support/`), puts the vault back as
//! `init` left it, builds the index once, then measures, 3 warm-ups + 21 runs each:
//!
//! 1. `context` (the brief of the vault's project and elsewhere);
//! 2. `context --hook claude` with Claude Code's documented SessionStart payload on stdin.
//!
//! It prints (and writes to `<target>/rutter-bench/context.md`) median, p95 and min against the
//! target. A missed target is reported, not fatal; a run that cannot report panics.

#[path = "support/mod.rs"]
mod support;

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use support::{
    machine, prepare, restore_vault, rutter_ok, stats_table, time_process, timed_runs, utf8, Env,
    Stats, BIN, LARGE,
};

const RUNS: usize = 21;
const WARMUP: usize = 3;
const CONTEXT_MS: f64 = 10.0;
const HOOK_MS: f64 = 20.0;

fn main() {
    // `cargo test --benches` runs this binary without `--bench`: do nothing then.
    if !std::env::args().any(|a| a == "--bench") {
        println!("context benchmark: run it with `cargo bench --bench context`");
        return;
    }
    let env = Env::new();
    let large = prepare(&env, &LARGE);
    let vault = restore_vault(&large);
    rutter_ok(&env, &vault, &["reindex"]);
    let payload = serde_json::json!({
        "session_id": "bench",
        "transcript_path": "/nonexistent/bench.jsonl",
        "cwd": utf8(&vault),
        "hook_event_name": "SessionStart",
        "source": "startup",
    })
    .to_string();
    let stats = vec![
        case(&env, &vault, "`context`", &["context"], b"", CONTEXT_MS),
        case(
            &env,
            &vault,
            "`context --hook claude` (SessionStart)",
            &["context", "--hook", "claude"],
            payload.as_bytes(),
            HOOK_MS,
        ),
    ];
    let mut report = String::from("# git-rutter context benchmark\n\n");
    let _ = writeln!(report, "{}\n", machine());
    report.push_str(&stats_table(&stats));
    print!("\n{report}");
    let out = env.root.join("context.md");
    fs::write(&out, &report).expect("write context.md");
    println!("\nwritten to {}", out.display());
}

/// Times `ARGS` with `stdin`; each run must exit 0 and print a brief of recorded decisions.
fn case(env: &Env, vault: &Path, label: &str, args: &[&str], stdin: &[u8], target: f64) -> Stats {
    println!("{label}: {WARMUP} warm-ups + {RUNS} runs...");
    let ms = timed_runs(WARMUP, RUNS, |_| {
        let mut cmd = env.command(BIN);
        cmd.args(["--vault", utf8(vault)]).args(args);
        let (took, out) = time_process(&mut cmd, stdin);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("recorded decisions") && stdout.contains("- "),
            "{label} gave no brief:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        took
    });
    Stats::of(label, ms, Some(target))
}
