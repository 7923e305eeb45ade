//! Index latency: `reindex`, `search` and `recent` as processes on the large generated vault
//! (10,000 notes, 3,650 day files), each timed from spawn to exit (DESIGN §9, rows 2-5).
//!
//! Run with `cargo bench --bench index` (needs `python3` and `git` on PATH). It shares the
//! vault, its cache under `<target>/rutter-bench/large/` and the hermetic environment with
//! `benches/capture.rs` (see `benches/support/`), puts the vault back as `init` left it (no
//! index), then measures, in this order:
//!
//! 1. cold reindex: the index files (`.git/rutter/index.sqlite`, `-wal`, `-shm`) deleted, then
//!    `git-rutter --vault V reindex`; 1 warm-up (it fills the page cache) + 5 runs; and
//!    `reindex --force` over the existing index, 5 runs, reported only;
//! 2. no-change refresh: `reindex` right after a reindex, 2 warm-ups + 21 runs; each must
//!    report that no note and no day file was re-read;
//! 3. `search` with 3-word AND queries over the generator's `QUERY_WORDS`, rotating through
//!    four orders, 5 warm-ups + 41 runs; each must print at least one hit. Every `search` runs
//!    the freshness check (spec/index.md), which finds nothing changed here;
//! 4. `show` of one note, 5 warm-ups + 41 runs: the freshness check and one lookup (reported
//!    only: it shows what the check costs as a process);
//! 5. `search` right after one note was edited in place (a line with a new word appended),
//!    5 warm-ups + 41 runs; each must find the note by that word (reported only: the check,
//!    the rescan of one folder, the query twice);
//! 6. `recent` (the default 20 sessions), 5 warm-ups + 41 runs;
//! 7. `git-rutter --version`, the cost of starting the process at all (reported only).
//!
//! It prints (and writes to `<target>/rutter-bench/index.md`) median, p95 and min against the
//! targets. A missed target is reported, not fatal; a failed command panics with its stderr.

#[path = "support/mod.rs"]
mod support;

use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Output;
use support::{
    flush_disks, machine, prepare, restore_vault, rutter_ok, stats_table, time_process, timed_runs,
    Env, Prepared, Stats, BIN, LARGE,
};

const COLD_RUNS: usize = 5;
const NO_CHANGE_RUNS: usize = 21;
const QUERY_RUNS: usize = 41;
const QUERY_WARMUP: usize = 5;

/// 3-word AND queries made of the words the generator places at fixed ranks.
const SEARCHES: [&str; 4] = [
    "decision latency ledger",
    "garden ledger decision",
    "latency garden decision",
    "ledger garden latency",
];

const TARGET_COLD_MS: f64 = 1500.0;
const TARGET_NO_CHANGE_MS: f64 = 60.0;
/// Issue 9: a 3-word search with its freshness check, nothing changed.
const TARGET_SEARCH_MS: f64 = 15.0;
const TARGET_RECENT_MS: f64 = 20.0;

fn main() {
    // `cargo test --benches` runs this binary without `--bench`: do nothing then.
    if !std::env::args().any(|a| a == "--bench") {
        println!("index benchmark: run it with `cargo bench --bench index`");
        return;
    }
    let env = Env::new();
    let large = prepare(&env, &LARGE);
    let vault = restore_vault(&large);

    let mut stats = vec![cold_reindex(&env, &vault)];
    let index_mb = index_size(&vault) as f64 / 1e6;
    stats.push(forced_reindex(&env, &vault));
    stats.push(no_change_refresh(&env, &vault));
    stats.push(search(&env, &vault));
    let note = &large.refs[0];
    stats.push(show(&env, &vault, note));
    stats.push(search_after_edit(&env, &vault, note));
    stats.push(recent(&env, &vault));
    stats.push(baseline(&env));

    let report = render(&stats, &large, index_mb);
    print!("\n{report}");
    let out = env.root.join("index.md");
    fs::write(&out, &report).expect("write index.md");
    println!("\nwritten to {}", out.display());
}

// ---------------------------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------------------------

/// Deletes the index, then times `reindex`, which builds it from nothing.
fn cold_reindex(env: &Env, vault: &Path) -> Stats {
    let label = "cold reindex (index deleted)";
    println!("{label}: 1 warm-up + {COLD_RUNS} runs...");
    let ms = timed_runs(1, COLD_RUNS, |_| {
        delete_index(vault);
        flush_disks();
        let (took, out) = rutter_ok(env, vault, &["reindex"]);
        expect_stdout(&out, "reindex", "built: a new index");
        took
    });
    Stats::of(label, ms, Some(TARGET_COLD_MS))
}

/// `reindex --force` over an existing, current index: drops and rebuilds every table.
fn forced_reindex(env: &Env, vault: &Path) -> Stats {
    let label = "`reindex --force` over an existing index";
    println!("{label}: {COLD_RUNS} runs...");
    let ms = timed_runs(0, COLD_RUNS, |_| {
        flush_disks();
        let (took, out) = rutter_ok(env, vault, &["reindex", "--force"]);
        expect_stdout(&out, "reindex --force", "reindex complete: ");
        took
    });
    Stats::of(label, ms, None)
}

/// `reindex` right after a reindex: every note and day file stat'ed, none re-read.
fn no_change_refresh(env: &Env, vault: &Path) -> Stats {
    let label = "no-change refresh (`reindex`)";
    println!("{label}: 2 warm-ups + {NO_CHANGE_RUNS} runs...");
    flush_disks();
    let ms = timed_runs(2, NO_CHANGE_RUNS, |_| {
        let (took, out) = rutter_ok(env, vault, &["reindex"]);
        expect_stdout(
            &out,
            "reindex",
            "changed: 0 note(s) re-read, 0 removed, 0 day file(s) re-read",
        );
        took
    });
    Stats::of(label, ms, Some(TARGET_NO_CHANGE_MS))
}

/// `search` with a 3-word AND query; every run must find at least one note.
fn search(env: &Env, vault: &Path) -> Stats {
    let label = "`search` (3-word AND, with the freshness check)";
    println!("{label}: {QUERY_WARMUP} warm-ups + {QUERY_RUNS} runs...");
    let ms = timed_runs(QUERY_WARMUP, QUERY_RUNS, |i| {
        let query = SEARCHES[i % SEARCHES.len()];
        let mut args = vec!["search"];
        args.extend(query.split(' '));
        let (took, out) = rutter_ok(env, vault, &args);
        expect_stdout(&out, &format!("search {query}"), "1. ");
        took
    });
    Stats::of(label, ms, Some(TARGET_SEARCH_MS))
}

/// `show` of one note: the freshness check and one lookup.
fn show(env: &Env, vault: &Path, note: &str) -> Stats {
    let label = "`show` (freshness check + one note)";
    println!("{label}: {QUERY_WARMUP} warm-ups + {QUERY_RUNS} runs...");
    let ms = timed_runs(QUERY_WARMUP, QUERY_RUNS, |_| {
        let (took, out) = rutter_ok(env, vault, &["show", note]);
        expect_stdout(&out, &format!("show {note}"), note);
        took
    });
    Stats::of(label, ms, None)
}

/// `search` for a word appended to a note just before: the check finds the note's folder
/// changed, the folder is rescanned and the note read again.
fn search_after_edit(env: &Env, vault: &Path, note: &str) -> Stats {
    let label = "`search` right after an edit in place (one folder rescanned)";
    println!("{label}: {QUERY_WARMUP} warm-ups + {QUERY_RUNS} runs...");
    let ms = timed_runs(QUERY_WARMUP, QUERY_RUNS, |i| {
        let word = format!("freshnessprobe{i}");
        let mut f = fs::OpenOptions::new()
            .append(true)
            .open(vault.join(note))
            .expect("open the note to edit");
        writeln!(f, "\nAlso {word}.").expect("append to the note");
        drop(f);
        let (took, out) = rutter_ok(env, vault, &["search", &word]);
        expect_stdout(&out, &format!("search {word}"), note);
        took
    });
    Stats::of(label, ms, None)
}

/// `recent`: the 20 most recent sessions, after refreshing the day files.
fn recent(env: &Env, vault: &Path) -> Stats {
    let label = "`recent` (20 sessions)";
    println!("{label}: {QUERY_WARMUP} warm-ups + {QUERY_RUNS} runs...");
    let ms = timed_runs(QUERY_WARMUP, QUERY_RUNS, |_| {
        let (took, out) = rutter_ok(env, vault, &["recent"]);
        expect_stdout(&out, "recent", " — ");
        took
    });
    Stats::of(label, ms, Some(TARGET_RECENT_MS))
}

/// `git-rutter --version`: process start-up and exit alone.
fn baseline(env: &Env) -> Stats {
    let label = "baseline: `git-rutter --version`";
    println!("{label}: {QUERY_WARMUP} warm-ups + {QUERY_RUNS} runs...");
    let ms = timed_runs(QUERY_WARMUP, QUERY_RUNS, |_| {
        let (took, out) = time_process(env.command(BIN).arg("--version"), b"");
        assert!(out.status.success(), "git-rutter --version failed: {out:?}");
        took
    });
    Stats::of(label, ms, None)
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Panics with the command's output unless its stdout contains `needle`.
fn expect_stdout(out: &Output, what: &str, needle: &str) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(needle),
        "`git-rutter {what}` did not print {needle:?}; stdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The index database and its SQLite side files.
fn index_files(vault: &Path) -> [PathBuf; 3] {
    let dir = vault.join(".git/rutter");
    ["index.sqlite", "index.sqlite-wal", "index.sqlite-shm"].map(|f| dir.join(f))
}

fn delete_index(vault: &Path) {
    for f in index_files(vault) {
        if f.exists() {
            support::remove(&f);
        }
    }
}

/// Bytes of the index files.
fn index_size(vault: &Path) -> u64 {
    index_files(vault)
        .iter()
        .filter_map(|f| fs::metadata(f).ok())
        .map(|m| m.len())
        .sum()
}

// ---------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------

/// The markdown report: machine, vault, timings against the targets.
fn render(stats: &[Stats], large: &Prepared, index_mb: f64) -> String {
    let mut s = String::from("# git-rutter index benchmark\n\n");
    let _ = writeln!(s, "{}\n", machine());
    let _ = writeln!(
        s,
        "Vault: {} ({} notes, {} day files, {}); index after a cold reindex: {index_mb:.0} MB.\n",
        large.spec.name,
        large.spec.notes,
        large.spec.days,
        if large.cached { "cached" } else { "generated" }
    );
    s.push_str(&stats_table(stats));
    s
}
