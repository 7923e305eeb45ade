//! `git rutter timeline` as a process on a vault of 10,000 or so decisions (issue 22: "10,000
//! decisions render in under a second", the page written here and shown in a browser; the
//! browser's part is measured by `tests/timeline_browser.py`).
//!
//! Run with `cargo bench --bench timeline` (needs `python3` and `git` on PATH). It generates
//! its own vault with `tools/gen_vault.py` (1,000 notes, 530 day files of ~19 decisions each,
//! cached under `<target>/rutter-bench/timeline/` as the other benchmarks cache theirs), puts it
//! back as `init` left it, reads the record once (`recent`, untimed: the index is built), then
//! measures, each from spawn to exit:
//!
//! 1. `timeline -o FILE`: every decision, 2 warm-ups + 21 runs;
//! 2. `recent --all --json`, the same decisions as JSON (reported only: what the page adds to
//!    reading them), 2 warm-ups + 21 runs.
//!
//! It prints (and writes to `<target>/rutter-bench/timeline.md`) median, p95 and min against
//! the target, with the page's size and its number of decisions. A missed target is reported,
//! not fatal; a run that cannot report panics.

#[path = "support/mod.rs"]
mod support;

use std::fmt::Write as _;
use std::fs;
use support::{
    machine, prepare, restore_vault, rutter_ok, stats_table, timed_runs, utf8, Env, Spec, Stats,
};

const RUNS: usize = 21;
const WARMUP: usize = 2;
/// Half of the second issue 22 gives the page, written and shown; the browser has the rest.
const TARGET_MS: f64 = 500.0;

/// About 10,000 decisions: 530 day files of ~19 entries.
const TIMELINE: Spec = Spec {
    name: "timeline",
    notes: 1_000,
    days: 530,
};

fn main() {
    // `cargo test --benches` runs this binary without `--bench`: do nothing then.
    if !std::env::args().any(|a| a == "--bench") {
        println!("timeline benchmark: run it with `cargo bench --bench timeline`");
        return;
    }
    let env = Env::new();
    let prepared = prepare(&env, &TIMELINE);
    let vault = restore_vault(&prepared);
    rutter_ok(&env, &vault, &["recent"]);
    let page = env.root.join("timeline.html");
    let page_arg = utf8(&page).to_string();

    let decisions = {
        let (_, out) = rutter_ok(&env, &vault, &["recent", "--all", "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("recent --json");
        v["sessions"]
            .as_array()
            .expect("sessions")
            .iter()
            .map(|s| s["steps"].as_array().map_or(0, Vec::len))
            .sum::<usize>()
    };

    println!("timeline -o FILE: {WARMUP} warm-ups + {RUNS} runs...");
    let mut said = String::new();
    let ms = timed_runs(WARMUP, RUNS, |_| {
        let (took, out) = rutter_ok(&env, &vault, &["timeline", "-o", &page_arg]);
        said = String::from_utf8_lossy(&out.stderr).into_owned();
        took
    });
    assert!(
        said.starts_with(&format!("Wrote the timeline of {decisions} decisions")),
        "the page holds what recent --all --json shows: {said}"
    );
    let timeline = Stats::of(
        &format!("`timeline -o FILE` ({decisions} decisions)"),
        ms,
        Some(TARGET_MS),
    );
    println!("recent --all --json: {WARMUP} warm-ups + {RUNS} runs...");
    let ms = timed_runs(WARMUP, RUNS, |_| {
        rutter_ok(&env, &vault, &["recent", "--all", "--json"]).0
    });
    let json = Stats::of("`recent --all --json` (the same decisions)", ms, None);

    let size = fs::metadata(&page).map_or(0, |m| m.len());
    let mut report = String::from("# git-rutter timeline benchmark\n\n");
    let _ = writeln!(report, "{}\n", machine());
    let _ = writeln!(
        report,
        "Vault: {} notes, {} day files ({}); {decisions} decisions; the page is {:.1} MB.\n",
        TIMELINE.notes,
        TIMELINE.days,
        if prepared.cached {
            "cached"
        } else {
            "generated"
        },
        size as f64 / 1e6
    );
    report.push_str(&stats_table([&timeline, &json]));
    print!("\n{report}");
    let out = env.root.join("timeline.md");
    fs::write(&out, &report).expect("write timeline.md");
    println!("\nwritten to {}", out.display());
}
