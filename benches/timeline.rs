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
//! It prints (and writes to `<target>/rutter-bench/timeline.md`) median, p95 and min, the median
//! CPU time and the largest peak memory (`wait4`) against the target, with the page's size and
//! its number of decisions. A missed target is reported, not fatal; a run that cannot report
//! panics.
//!
//! With `RUTTER_BENCH_BASE=BIN` (an older `git-rutter`, or a revision such as `main`, built once:
//! `support/base.rs`), each case also runs BIN on its own copy of the vault (made as this
//! build's, read once by `recent` with BIN) and page, interleaved with this build run by run,
//! the order alternating (`support/ab.rs`); the base's row is printed under this build's and a
//! last table gives the change in time, CPU and peak memory.

#[path = "support/mod.rs"]
mod support;

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use support::ab::{self, Builds, Sample, THIS};
use support::{
    machine, measured, measured_discarding, prepare, restore_vault, stats_table, utf8, Env, Spec,
    BIN,
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
    let builds = Builds::from_env(&env);
    let vaults = builds.vaults(restore_vault(&prepared), || {
        ab::copy_of(&prepared, "base-vault")
    });
    for (b, vault) in vaults.iter().enumerate() {
        run_ok(&env, &builds, b, vault, &["recent"]);
    }
    let pages: Vec<PathBuf> = ["timeline.html", "timeline-base.html"]
        .iter()
        .take(builds.len())
        .map(|name| env.root.join(name))
        .collect();

    let decisions = count_decisions(&env, &vaults[THIS]);

    println!("timeline -o FILE: {WARMUP} warm-ups + {RUNS} runs...");
    let mut said = String::new();
    let samples = ab::interleaved(builds.len(), WARMUP, RUNS, |b, _| {
        let page = utf8(&pages[b]);
        let m = run_ok(&env, &builds, b, &vaults[b], &["timeline", "-o", page]);
        if b == THIS {
            said = String::from_utf8_lossy(&m.out.stderr).into_owned();
        }
        Sample::from(&m)
    });
    assert!(
        said.starts_with(&format!("Wrote the timeline of {decisions} decisions")),
        "the page holds what recent --all --json shows: {said}"
    );
    let label = format!("`timeline -o FILE` ({decisions} decisions)");
    let mut rows = ab::rows(&builds, &label, &samples, Some(TARGET_MS));
    println!("recent --all --json: {WARMUP} warm-ups + {RUNS} runs...");
    let samples = ab::interleaved(builds.len(), WARMUP, RUNS, |b, _| {
        let args = ["recent", "--all", "--json"];
        let mut cmd = builds.command(&env, b, &vaults[b], &args);
        let m = measured_discarding(&mut cmd, b"");
        ab::expect_success(&m.out, "recent --all --json");
        Sample::from(&m)
    });
    let label = "`recent --all --json` (the same decisions)";
    rows.extend(ab::rows(&builds, label, &samples, None));

    let size = fs::metadata(&pages[THIS]).map_or(0, |m| m.len());
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
    report.push_str(&stats_table(&rows));
    let changes = ab::changes(&builds, &rows.iter().collect::<Vec<_>>());
    report.push_str(&ab::change_table(&builds, &changes));
    print!("\n{report}");
    let out = env.root.join("timeline.md");
    fs::write(&out, &report).expect("write timeline.md");
    println!("\nwritten to {}", out.display());
}

/// The decisions `recent --all --json` lists, its output written to a file and read as it is
/// parsed, each step skipped unread: a child's peak memory starts from this benchmark's own
/// peak, which must stay below the page's (13 MB of JSON parsed whole took it to 68 MiB).
fn count_decisions(env: &Env, vault: &Path) -> usize {
    #[derive(serde::Deserialize)]
    struct Recent {
        sessions: Vec<Session>,
    }
    #[derive(serde::Deserialize)]
    struct Session {
        steps: Vec<serde::de::IgnoredAny>,
    }
    let json = env.root.join("timeline-recent.json");
    let file = fs::File::create(&json).expect("create the recent --all --json file");
    let status = env
        .command(BIN)
        .args(["--vault", utf8(vault), "recent", "--all", "--json"])
        .stdout(file)
        .status()
        .expect("run recent --all --json");
    assert!(status.success(), "recent --all --json failed: {status}");
    let file = fs::File::open(&json).expect("open the recent --all --json file");
    let recent: Recent =
        serde_json::from_reader(std::io::BufReader::new(file)).expect("recent --json");
    support::remove(&json);
    recent.sessions.iter().map(|s| s.steps.len()).sum()
}

/// `ARGS` with build `b` on `vault`, measured (wall, CPU, peak); panics unless it exits 0.
fn run_ok(env: &Env, builds: &Builds, b: usize, vault: &Path, args: &[&str]) -> support::Measured {
    let m = measured(&mut builds.command(env, b, vault, args), b"");
    ab::expect_success(&m.out, &format!("{} {args:?}", builds.bin(b).display()));
    m
}
