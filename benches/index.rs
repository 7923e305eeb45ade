//! Index latency: `reindex`, `search` and `recent` as processes on the large generated vault
//! (10,000 notes, 3,650 day files), each timed from spawn to exit (DESIGN §9, rows 2-5).
//!
//! Run with `cargo bench --bench index` (needs `python3` and `git` on PATH). It shares the
//! vault, its cache under `<target>/rutter-bench/large/` and the hermetic environment with
//! `benches/capture.rs` (see `benches/support/`), puts the vault back as `init` left it (no
//! index), then measures, in this order:
//!
//! 1. cold reindex: the index files (`.git/rutter/index.sqlite`, `-wal`, `-shm`) deleted, then
//!    `git-rutter --vault V reindex`; 1 warm-up (it fills the page cache) + 5 runs, each after a
//!    run of its floor (issue 37): `sqlite3` bulk-loading the same notes (each file whole, read by
//!    the shell's `readfile`) into the same FTS5 table with the same bulk settings, in one
//!    transaction. The target is 1 s, or 1.25 × the floor's median when that is more; and
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
//! 6. `recent` (the default 20 sessions), 5 warm-ups + 41 runs; then `log --grep WORD` (issue 23:
//!    the newest 20 matches of one of three generator words) and plain `log`, 5 + 41 runs each;
//! 7. `recent --all` (every session, ~37,000), 1 warm-up + 7 runs, timed to its first line of
//!    output and to its exit (issue 13);
//! 8. `init` adopting the 3,650 day files: a fresh repository holding the large vault's
//!    `_librarian/sessions/` (adoption reads only the day files), 1 warm-up + 5 runs; then
//!    `log` after a `verify` and 600 captures (untimed), 5 warm-ups + 41 runs (reported only:
//!    the witnessed tips since the last `verify` are checked by every `log`);
//! 9. issue 23's growth in notes, on a vault of 50,000 notes and 30 day files (generated and
//!    cached as the large one, about two minutes the first time): a cold reindex, 3 runs
//!    (≤ 5 s, ≤ 100 MiB) interleaved with its `sqlite3` floor, and `search` as in 3 (≤ 1.5 × the
//!    10,000-note median) without and with an MCP server watching (as in 11; ≤ 1.25 × the
//!    10,000-note watched median).
//!    Then issue 37's growth in days, on the capture benchmark's growth vault (1,000 notes,
//!    36,500 day files, cached under `growth/`; about six minutes to generate): a cold
//!    reindex, 3 runs (≤ 3 s, ≤ 100 MiB), and `init` adopting its 36,500 day files, 1 run
//!    (≤ 5 s);
//! 10. `git-rutter --version`, the cost of starting the process at all (reported only);
//! 11. issue 37: `search` as in 3 and after an edit as in 5 with an MCP server watching the vault
//!     (`git-rutter mcp` started and left running; the command asks its watcher instead of a
//!     stat per note, spec/index.md "The watcher's answer"), on 10,000 notes (≤ 10 ms); then
//!     `search` as in 3 with this build's `git rutter watch` watching instead (the server's
//!     watcher alone, for when no AI client runs a server), on 10,000 and (in 9) 50,000 notes.
//!     Every watched `search` runs with `RUTTER_FRESHNESS_TRACE` and must say the watcher
//!     answered.
//!
//! `RUTTER_BENCH_INDEX=search` runs only 3-5, 10 and 11 on 10,000 notes, after one untimed
//! `reindex`; `RUTTER_BENCH_INDEX=build` runs only the building rows: 1, 8's `init`, 9's cold
//! reindex and the growth in days.
//!
//! Every run is also measured for the process's own CPU time and peak resident memory (`wait4`
//! rusage). It prints (and writes to `<target>/rutter-bench/index.md`) median, p95 and min, the
//! median CPU time and the largest peak memory against the targets. A missed target is reported,
//! not fatal; a failed command panics with its stderr.
//!
//! With `RUTTER_BENCH_BASE=BIN` (an older `git-rutter`, or a revision such as `main`, built once:
//! `support/base.rs`), every case but the floor also runs BIN, on its own copy of each vault
//! (`<vault's dir>/base-vault`, restored from the same snapshot; BIN builds its own index,
//! edits, captures and watches there, and adopts in `init-adopt-base`), interleaved with this
//! build run by run, the order alternating (`support/ab.rs`). The base's row is printed under
//! this build's and a last table gives the change in time, CPU and peak memory.

#[path = "support/mod.rs"]
mod support;

use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;
use support::ab::{self, Builds, THIS};
use support::{
    flush_disks, machine, measured, prepare, restore_vault, Env, Measured, Prepared, Spec, Stats,
    Usage, LARGE,
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

const ALL_RUNS: usize = 7;
const INIT_RUNS: usize = 5;

/// Issue 13: a cold build of the notes and the record cache in a second, in 100 MiB.
const TARGET_COLD_MS: f64 = 1000.0;
/// Issue 37: or within this many times the `sqlite3` floor (the same notes bulk-loaded into
/// the same FTS5 table), when that is more than [`TARGET_COLD_MS`].
const TARGET_FLOOR_RATIO: f64 = 1.25;
const TARGET_COLD_MIB: f64 = 100.0;
const TARGET_NO_CHANGE_MS: f64 = 60.0;
/// Issue 13: a 3-word search as a process, freshness check included, nothing changed.
const TARGET_SEARCH_MS: f64 = 10.0;
const TARGET_RECENT_MS: f64 = 20.0;
/// Issue 23: "what did we decide about X?" as `log --grep WORD`, in 20 ms and 30 MiB.
const TARGET_LOG_GREP_MS: f64 = 20.0;
const TARGET_LOG_GREP_MIB: f64 = 30.0;
/// The words `log --grep` looks for, one a run: the generator places them at fixed ranks.
const LOG_WORDS: [&str; 3] = ["latency", "ledger", "garden"];
/// Words in 4 to 7 of the large vault's 69,409 entries (the generator is seeded): the
/// question about something decided once, which walking every entry answered in 180 ms.
const RARE_WORDS: [&str; 3] = ["bikelmal", "depakelfe", "mibimer"];
/// `recent --all` to its last line (issue 23; issue 13 had 300 ms) and to its first (issue 13).
const TARGET_ALL_MS: f64 = 200.0;
const TARGET_ALL_FIRST_MS: f64 = 30.0;
/// Captures made before the `log` of [`log_after_captures`].
const CAPTURES_SINCE_VERIFY: usize = 600;
/// Issue 13: `init` adopting 3,650 day files.
const TARGET_INIT_MS: f64 = 500.0;

/// Issue 23's growth in notes: five times the large vault's notes, a month of day files.
const NOTES_50K: Spec = Spec {
    name: "notes-50k",
    notes: 50_000,
    days: 30,
};
const GROWTH_RUNS: usize = 3;
/// Issue 23: a cold build of 50,000 notes in 5 s (and the 100 MiB of the large vault's).
const TARGET_COLD_50K_MS: f64 = 5000.0;
/// Issue 23: `search` on 50,000 notes at most this many times its time on 10,000.
const TARGET_SEARCH_GROWTH: f64 = 1.5;
/// Issue 37: with a watcher, `search` on 50,000 notes at most this many times its 10,000.
const TARGET_WATCHED_GROWTH: f64 = 1.25;

/// Issue 37's growth in days: the capture benchmark's growth vault (the same name and
/// parameters, so one cache serves both).
const DAYS_36K: Spec = Spec {
    name: "growth",
    notes: 1_000,
    days: 36_500,
};
/// Issue 37: a cold build over 36,500 day files in 3 s; `init` adopting them in 5 s.
const TARGET_COLD_36K_MS: f64 = 3000.0;
const TARGET_INIT_36K_MS: f64 = 5000.0;

/// One case: its wall-time figures, the median CPU time and the largest peak memory of its
/// runs, and a memory target if it has one.
struct Row {
    stats: Stats,
    usage: Usage,
    mib_target: Option<f64>,
}

impl Row {
    /// The row of `runs` with wall times `wall` (the whole run, or up to its first line).
    fn of(
        label: &str,
        runs: &[Measured],
        wall: impl Fn(&Measured) -> Duration,
        target: Option<f64>,
    ) -> Row {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let usage = Usage::of_runs(
            runs.iter().map(|m| ms(m.cpu)).collect(),
            runs.iter().map(|m| m.peak_kib as f64 / 1024.0),
        );
        Row {
            stats: Stats::of(label, runs.iter().map(|m| ms(wall(m))).collect(), target),
            usage,
            mib_target: None,
        }
    }

    fn whole(label: &str, runs: &[Measured], target: Option<f64>) -> Row {
        Row::of(label, runs, |m| m.took, target)
    }

    /// Each build's row of one case (this build's first, the base's marked), from its runs as
    /// [`measured_runs`] returns them, with wall times `wall`.
    fn each(
        ab: &Ab,
        label: &str,
        runs: &[Vec<Measured>],
        wall: impl Fn(&Measured) -> Duration,
        target: Option<f64>,
    ) -> Vec<Row> {
        runs.iter()
            .enumerate()
            .map(|(b, r)| Row::of(&ab.builds.label(b, label), r, &wall, target))
            .collect()
    }

    /// [`Row::each`] timed from spawn to exit.
    fn wholes(ab: &Ab, label: &str, runs: &[Vec<Measured>], target: Option<f64>) -> Vec<Row> {
        Row::each(ab, label, runs, |m| m.took, target)
    }

    /// These rows with a memory target.
    fn with_mib(mut rows: Vec<Row>, mib: f64) -> Vec<Row> {
        for r in &mut rows {
            r.mib_target = Some(mib);
        }
        rows
    }

    /// The row's medians, for the A/B change table.
    fn figures(&self) -> (&str, ab::Figures) {
        let f = ab::Figures {
            ms: self.stats.median,
            cpu_ms: self.usage.cpu_ms,
            peak_mib: self.usage.peak_mib,
        };
        (self.stats.label.as_str(), f)
    }

    /// `met`, `missed` or `report only`, for time and memory together.
    fn verdict(&self) -> &'static str {
        self.stats
            .verdict_with_memory(self.usage.peak_mib, self.mib_target)
    }
}

/// The builds (this one, and the base with `RUTTER_BENCH_BASE`) and the vault each runs on.
struct Ab<'a> {
    builds: &'a Builds,
    vaults: Vec<PathBuf>,
}

impl<'a> Ab<'a> {
    /// `this` for this build; for the base, its own copy of `p` as `init` left it, named `name`.
    fn new(builds: &'a Builds, this: PathBuf, p: &Prepared, name: &str) -> Ab<'a> {
        let vaults = builds.vaults(this, || ab::copy_of(p, name));
        Ab { builds, vaults }
    }

    fn len(&self) -> usize {
        self.builds.len()
    }

    fn vault(&self, b: usize) -> &Path {
        &self.vaults[b]
    }

    /// `ARGS` with build `b` on its vault, measured; panics with its output unless it exits 0.
    fn run(&self, env: &Env, b: usize, args: &[&str]) -> Measured {
        let m = measured(&mut self.command(env, b, args), b"");
        ab::expect_success(
            &m.out,
            &format!("{} {args:?}", self.builds.bin(b).display()),
        );
        m
    }

    /// `bin --vault V ARGS` of build `b`, not yet run.
    fn command(&self, env: &Env, b: usize, args: &[&str]) -> std::process::Command {
        self.builds.command(env, b, self.vault(b), args)
    }
}

/// `runs` measured rounds of `once(b, i)` after `warmup` unmeasured ones, every build once a
/// round, the order alternating (`support/ab.rs`); `once` gets the build and the round's number,
/// warm-ups included. Returns each build's runs.
fn measured_runs(
    ab: &Ab,
    warmup: usize,
    runs: usize,
    mut once: impl FnMut(usize, usize) -> Measured,
) -> Vec<Vec<Measured>> {
    // Only the figures are kept: a child's `ru_maxrss` starts from this process's size when it
    // was spawned (fork and exec carry the high-water mark over), so the benchmark must stay small
    // (37,000 sessions of `recent --all` output kept eight times took it to 200 MiB).
    ab::interleaved(ab.len(), warmup, runs, |b, i| {
        let mut m = once(b, i);
        m.out.stdout = Vec::new();
        m.out.stderr = Vec::new();
        m
    })
}

/// This process's own peak resident memory in MiB: the floor under every peak figure.
fn own_peak_mib() -> f64 {
    let mut usage = unsafe { std::mem::zeroed::<libc::rusage>() };
    // SAFETY: `usage` is valid for writes.
    let ok = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } == 0;
    if ok {
        usage.ru_maxrss as f64 / 1024.0
    } else {
        f64::NAN
    }
}

fn main() {
    // `cargo test --benches` runs this binary without `--bench`: do nothing then.
    if !std::env::args().any(|a| a == "--bench") {
        println!("index benchmark: run it with `cargo bench --bench index`");
        return;
    }
    let env = Env::new();
    let large = prepare(&env, &LARGE);
    let builds = Builds::from_env(&env);
    let ab = Ab::new(&builds, restore_vault(&large), &large, "base-vault");
    let vault = ab.vault(THIS).to_path_buf();

    // `RUTTER_BENCH_INDEX=search` measures only the rows of the freshness check (`search`,
    // `show`, `search` after an edit) and the `--version` baseline, after one untimed build of
    // the index: the other rows take ~10 minutes on the 2-core VM.
    let only = std::env::var("RUTTER_BENCH_INDEX").unwrap_or_default();
    let only_search = only == "search";
    let mut stats = Vec::new();
    if only == "build" {
        stats.extend(cold_reindex(&env, &ab));
        stats.extend(init_adopt(&env, &ab));
        stats.extend(growth_in_notes(&env, &builds, None));
        stats.extend(growth_in_days(&env, &builds));
        let report = render(&builds, &stats, &large, index_size(&vault) as f64 / 1e6);
        print!("\n{report}");
        fs::write(env.root.join("index-build.md"), &report).expect("write index-build.md");
        return;
    }
    if only_search {
        println!("RUTTER_BENCH_INDEX=search: one untimed `reindex`, then the search rows only");
        for b in 0..ab.len() {
            support::delete_index(ab.vault(b));
            let m = ab.run(&env, b, &["reindex"]);
            expect_stdout(&m.out, "reindex", "built: a new index");
        }
    } else {
        stats.extend(cold_reindex(&env, &ab));
    }
    let index_mb = index_size(&vault) as f64 / 1e6;
    if !only_search {
        stats.extend(forced_reindex(&env, &ab));
        stats.extend(no_change_refresh(&env, &ab));
    }
    let rows = search(&env, &ab);
    let search_ms = rows[THIS].stats.median;
    stats.extend(rows);
    let note = &large.refs[0];
    stats.extend(show(&env, &ab, note));
    stats.extend(search_after_edit(&env, &ab, note, false));
    let watched_ms = {
        let _servers = Watching::start_each(&env, &ab, Watcher::Server);
        let rows = search_watched(&env, &ab, Watcher::Server, "", TARGET_SEARCH_MS);
        let ms = rows[THIS].stats.median;
        stats.extend(rows);
        stats.extend(search_after_edit(&env, &ab, note, true));
        ms
    };
    {
        let _watchers = Watching::start_each(&env, &ab, Watcher::Watch);
        let rows = search_watched(&env, &ab, Watcher::Watch, "", TARGET_SEARCH_MS);
        stats.extend(rows);
    }
    if !only_search {
        stats.extend(recent(&env, &ab));
        stats.extend(log_grep(&env, &ab));
        stats.extend(recent_all(&env, &ab));
        stats.extend(init_adopt(&env, &ab));
        stats.extend(log_after_captures(&env, &ab));
        stats.extend(growth_in_notes(
            &env,
            &builds,
            Some((search_ms, watched_ms)),
        ));
    }
    stats.extend(baseline(&env, &ab));

    let report = render(&builds, &stats, &large, index_mb);
    print!("\n{report}");
    let out = env.root.join("index.md");
    fs::write(&out, &report).expect("write index.md");
    println!("\nwritten to {}", out.display());
}

// ---------------------------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------------------------

/// Deletes the index, then times `reindex`, which builds it from nothing: the notes and the
/// record cache; each run after a run of its `sqlite3` floor ([`floor_run`]), so both meet the
/// same load. Returns the floor's row and the reindex's, whose target is [`TARGET_COLD_MS`] or
/// [`TARGET_FLOOR_RATIO`] × the floor's median, whichever is more.
fn cold_reindex(env: &Env, ab: &Ab) -> Vec<Row> {
    let label = "cold reindex (index deleted)";
    println!("{label}: 1 warm-up + {COLD_RUNS} runs, each after its `sqlite3` floor...");
    let (floor, runs) = with_floor(env, ab, 1, COLD_RUNS);
    let floor = Row::whole(FLOOR_LABEL, &floor, None);
    let target = TARGET_COLD_MS
        .max(TARGET_FLOOR_RATIO * floor.stats.median)
        .round();
    let rows = Row::wholes(ab, label, &runs, Some(target));
    let mut all = vec![floor];
    all.extend(Row::with_mib(rows, TARGET_COLD_MIB));
    all
}

/// What the floor rows are called.
const FLOOR_LABEL: &str = "floor: `sqlite3` bulk-loading the same notes into the same FTS5 table";

/// `runs` cold reindexes of each build's vault after `warmup` unmeasured ones, each round
/// preceded by a run of the floor (on this build's vault): the floor's runs and each build's
/// reindexes.
fn with_floor(
    env: &Env,
    ab: &Ab,
    warmup: usize,
    runs: usize,
) -> (Vec<Measured>, Vec<Vec<Measured>>) {
    let sql = floor_sql(ab.vault(THIS));
    let db = env.root.join("floor.sqlite");
    let mut floors = Vec::new();
    let reindexes = measured_runs(ab, warmup, runs, |b, i| {
        if b == THIS {
            let f = floor_run(&db, ab.vault(THIS), &sql);
            if i >= warmup {
                floors.push(f);
            }
        }
        support::delete_index(ab.vault(b));
        flush_disks();
        let m = ab.run(env, b, &["reindex"]);
        expect_stdout(&m.out, "reindex", "built: a new index");
        m
    });
    support::remove(&db);
    (floors, reindexes)
}

/// One run of the floor: `sqlite3` (on PATH) building a new database at `db` from `sql`, in
/// the vault's folder.
fn floor_run(db: &Path, vault: &Path, sql: &str) -> Measured {
    if db.exists() {
        support::remove(db);
    }
    flush_disks();
    let mut cmd = std::process::Command::new("sqlite3");
    cmd.arg(db).current_dir(vault);
    let mut m = measured(&mut cmd, sql.as_bytes());
    assert!(
        m.out.status.success() && m.out.stderr.is_empty(),
        "sqlite3 (the floor) failed: {}",
        String::from_utf8_lossy(&m.out.stderr)
    );
    m.out.stdout = Vec::new();
    m
}

/// The floor's script: the index's page size, no journal, its 16 MiB page cache, the notes'
/// FTS5 table with the bulk-load settings, and every `.md` file of the folders the walk enters
/// (hidden folders and `_librarian/` left out) inserted whole, in one transaction.
fn floor_sql(vault: &Path) -> String {
    let mut tops: Vec<(bool, String)> = fs::read_dir(vault)
        .expect("list the vault")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            Some((
                e.file_type().ok()?.is_dir(),
                e.file_name().into_string().ok()?,
            ))
        })
        .filter(|(_, n)| !n.starts_with('.') && n != "_librarian" && n != "node_modules")
        .collect();
    tops.sort();
    // A folder is walked by the shell's `fsdir`; a file at the top is named as it is.
    let sources: Vec<String> = tops
        .iter()
        .map(|(dir, name)| {
            let quoted = name.replace('\'', "''");
            match dir {
                true => format!("SELECT name FROM fsdir('{quoted}')"),
                false => format!("SELECT '{quoted}' AS name"),
            }
        })
        .collect();
    format!(
        "PRAGMA page_size=8192; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-16384;
BEGIN;
CREATE VIRTUAL TABLE notes_fts USING fts5(path UNINDEXED, title, body, tags, tokenize='porter unicode61');
INSERT INTO notes_fts(notes_fts, rank) VALUES('hashsize', 16777216);
INSERT INTO notes_fts(notes_fts, rank) VALUES('automerge', 0);
INSERT INTO notes_fts(path, title, body, tags)
    SELECT name, '', CAST(readfile(name) AS TEXT), '' FROM ({}) WHERE lower(name) LIKE '%.md';
INSERT INTO notes_fts(notes_fts, rank) VALUES('automerge', 4);
INSERT INTO notes_fts(notes_fts, rank) VALUES('hashsize', 1048576);
COMMIT;
",
        sources.join(" UNION ALL ")
    )
}

/// Issue 23's growth in notes, on a vault of 50,000 notes and 30 day files (generated once and
/// cached like the large one): a cold reindex after its floor, and (given the 10,000-note
/// rows' medians, `search_ms` and `watched_ms`) `search` against 1.5 times the first, and
/// issue 37's `search` with a watcher against 1.25 times the second.
fn growth_in_notes(env: &Env, builds: &Builds, search: Option<(f64, f64)>) -> Vec<Row> {
    let prepared = prepare(env, &NOTES_50K);
    let ab = Ab::new(builds, restore_vault(&prepared), &prepared, "base-vault");
    let label = "cold reindex, 50,000 notes (30 day files)";
    println!("{label}: {GROWTH_RUNS} runs, each after its `sqlite3` floor...");
    let (floor, runs) = with_floor(env, &ab, 0, GROWTH_RUNS);
    let cold = Row::wholes(&ab, label, &runs, Some(TARGET_COLD_50K_MS));
    let mut rows = vec![Row::whole(
        &format!("{FLOOR_LABEL}, 50,000 notes"),
        &floor,
        None,
    )];
    rows.extend(Row::with_mib(cold, TARGET_COLD_MIB));
    if let Some((search_ms, watched_ms)) = search {
        let label = format!(
            "`search` on 50,000 notes (≤ {TARGET_SEARCH_GROWTH}× the 10,000-note row's {search_ms:.2} ms)"
        );
        let target = (TARGET_SEARCH_GROWTH * search_ms * 100.0).round() / 100.0;
        rows.extend(search_row(env, &ab, &label, target));
        let target = (TARGET_WATCHED_GROWTH * watched_ms * 100.0).round() / 100.0;
        let label = format!(
            ", 50,000 notes (≤ {TARGET_WATCHED_GROWTH}× the 10,000-note row's {watched_ms:.2} ms)"
        );
        for kind in [Watcher::Server, Watcher::Watch] {
            let _watchers = Watching::start_each(env, &ab, kind);
            rows.extend(search_watched(env, &ab, kind, &label, target));
        }
    }
    rows
}

/// Issue 37's growth in days, on the capture benchmark's growth vault (1,000 notes, 36,500 day
/// files): a cold reindex, and `init` adopting the 36,500 day files.
fn growth_in_days(env: &Env, builds: &Builds) -> Vec<Row> {
    let prepared = prepare(env, &DAYS_36K);
    let ab = Ab::new(builds, restore_vault(&prepared), &prepared, "base-vault");
    let label = "cold reindex, 36,500 day files (1,000 notes)";
    println!("{label}: {GROWTH_RUNS} runs...");
    let runs = measured_runs(&ab, 0, GROWTH_RUNS, |b, _| {
        support::delete_index(ab.vault(b));
        flush_disks();
        let m = ab.run(env, b, &["reindex"]);
        expect_stdout(&m.out, "reindex", "built: a new index");
        m
    });
    let cold = Row::wholes(&ab, label, &runs, Some(TARGET_COLD_36K_MS));
    let mut rows = Row::with_mib(cold, TARGET_COLD_MIB);
    rows.extend(adopt_rows(env, &ab, 36_500, 0, 1, TARGET_INIT_36K_MS));
    rows
}

/// A `git-rutter mcp` watching `vault`, stdin held open, until dropped (then killed).
struct Watching(std::process::Child);

/// What keeps a vault's index current while a watched row runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Watcher {
    /// Each build's own `git-rutter mcp`.
    Server,
    /// This build's `git rutter watch` (the MCP server's watcher alone), on each build's vault:
    /// a base from before it asks it as it asks a server (the same socket and answers).
    Watch,
}

impl Watcher {
    fn label(self) -> &'static str {
        match self {
            Watcher::Server => "an MCP server",
            Watcher::Watch => "`git rutter watch`",
        }
    }
}

impl Watching {
    /// A watcher on each build's vault; see [`Watching::start`].
    fn start_each(env: &Env, ab: &Ab, kind: Watcher) -> Vec<Watching> {
        (0..ab.len())
            .map(|b| Watching::start(env, ab, b, kind))
            .collect()
    }

    /// Starts a watcher of `kind` on build `b`'s vault and waits until a command of build `b`
    /// says the watcher answered it.
    fn start(env: &Env, ab: &Ab, b: usize, kind: Watcher) -> Watching {
        let mut cmd = match kind {
            Watcher::Server => ab.command(env, b, &["mcp"]),
            Watcher::Watch => ab.builds.command(env, THIS, ab.vault(b), &["watch"]),
        };
        let child = cmd
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start the watcher");
        let server = Watching(child);
        let started = std::time::Instant::now();
        loop {
            let mut cmd = ab.command(env, b, &["show", "no/such/note.md"]);
            cmd.env("RUTTER_FRESHNESS_TRACE", "1");
            let said = measured(&mut cmd, b"").out.stderr;
            if String::from_utf8_lossy(&said).contains("freshness: watcher") {
                return server;
            }
            assert!(
                started.elapsed() < Duration::from_secs(600),
                "the watcher never answered: {}",
                String::from_utf8_lossy(&said)
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `search` as the `search` row, with a watcher of `kind` running: each run must say it asked
/// it.
fn search_watched(env: &Env, ab: &Ab, kind: Watcher, suffix: &str, target: f64) -> Vec<Row> {
    let label = format!(
        "`search` (3-word AND) with {} watching{suffix}",
        kind.label()
    );
    println!("{label}: {QUERY_WARMUP} warm-ups + {QUERY_RUNS} runs...");
    let runs = measured_runs(ab, QUERY_WARMUP, QUERY_RUNS, |b, i| {
        let query = SEARCHES[i % SEARCHES.len()];
        let mut args = vec!["search"];
        args.extend(query.split(' '));
        let m = watched_measured(env, ab, b, &args);
        expect_stdout(&m.out, &format!("search {query}"), "1. ");
        m
    });
    Row::wholes(ab, &label, &runs, Some(target))
}

/// A command of build `b` with `RUTTER_FRESHNESS_TRACE`, which must say the watcher answered.
fn watched_measured(env: &Env, ab: &Ab, b: usize, args: &[&str]) -> Measured {
    let mut cmd = ab.command(env, b, args);
    cmd.env("RUTTER_FRESHNESS_TRACE", "1");
    let m = measured(&mut cmd, b"");
    let said = String::from_utf8_lossy(&m.out.stderr);
    assert!(
        said.contains("freshness: watcher"),
        "`git-rutter {}` did not ask the watcher: {said}",
        args.join(" ")
    );
    m
}

/// `reindex --force` over an existing, current index: drops and rebuilds every table.
fn forced_reindex(env: &Env, ab: &Ab) -> Vec<Row> {
    let label = "`reindex --force` over an existing index";
    println!("{label}: {COLD_RUNS} runs...");
    let runs = measured_runs(ab, 0, COLD_RUNS, |b, _| {
        flush_disks();
        let m = ab.run(env, b, &["reindex", "--force"]);
        expect_stdout(&m.out, "reindex --force", "reindex complete: ");
        m
    });
    Row::wholes(ab, label, &runs, None)
}

/// `reindex` right after a reindex: every note and day file stat'ed, none re-read.
fn no_change_refresh(env: &Env, ab: &Ab) -> Vec<Row> {
    let label = "no-change refresh (`reindex`)";
    println!("{label}: 2 warm-ups + {NO_CHANGE_RUNS} runs...");
    flush_disks();
    let runs = measured_runs(ab, 2, NO_CHANGE_RUNS, |b, _| {
        let m = ab.run(env, b, &["reindex"]);
        expect_stdout(
            &m.out,
            "reindex",
            "changed: 0 note(s) re-read, 0 removed, 0 day file(s) re-read",
        );
        m
    });
    Row::wholes(ab, label, &runs, Some(TARGET_NO_CHANGE_MS))
}

/// `search` with a 3-word AND query; every run must find at least one note.
fn search(env: &Env, ab: &Ab) -> Vec<Row> {
    let label = "`search` (3-word AND, with the freshness check)";
    search_row(env, ab, label, TARGET_SEARCH_MS)
}

/// The `search` rows on the builds' vaults, under `label`, against `target` ms.
fn search_row(env: &Env, ab: &Ab, label: &str, target: f64) -> Vec<Row> {
    println!("{label}: {QUERY_WARMUP} warm-ups + {QUERY_RUNS} runs...");
    let runs = measured_runs(ab, QUERY_WARMUP, QUERY_RUNS, |b, i| {
        let query = SEARCHES[i % SEARCHES.len()];
        let mut args = vec!["search"];
        args.extend(query.split(' '));
        let m = ab.run(env, b, &args);
        expect_stdout(&m.out, &format!("search {query}"), "1. ");
        m
    });
    Row::wholes(ab, label, &runs, Some(target))
}

/// `show` of one note: the freshness check and one lookup.
fn show(env: &Env, ab: &Ab, note: &str) -> Vec<Row> {
    let label = "`show` (freshness check + one note)";
    println!("{label}: {QUERY_WARMUP} warm-ups + {QUERY_RUNS} runs...");
    let runs = measured_runs(ab, QUERY_WARMUP, QUERY_RUNS, |b, _| {
        let m = ab.run(env, b, &["show", note]);
        expect_stdout(&m.out, &format!("show {note}"), note);
        m
    });
    Row::wholes(ab, label, &runs, None)
}

/// `search` for a word appended to a note just before (reported only): the check finds the
/// note's folder changed, the folder is rescanned and the note read again; or, `watched`, the
/// command asks a running server's watcher, which must answer. Each build edits its own vault.
fn search_after_edit(env: &Env, ab: &Ab, note: &str, watched: bool) -> Vec<Row> {
    let label = match watched {
        false => "`search` right after an edit in place (one folder rescanned)",
        true => "`search` right after an edit in place, with an MCP server watching",
    };
    println!("{label}: {QUERY_WARMUP} warm-ups + {QUERY_RUNS} runs...");
    let runs = measured_runs(ab, QUERY_WARMUP, QUERY_RUNS, |b, i| {
        let word = format!("{}probe{i}", if watched { "watched" } else { "freshness" });
        let mut f = fs::OpenOptions::new()
            .append(true)
            .open(ab.vault(b).join(note))
            .expect("open the note to edit");
        writeln!(f, "\nAlso {word}.").expect("append to the note");
        drop(f);
        let m = match watched {
            true => watched_measured(env, ab, b, &["search", &word]),
            false => ab.run(env, b, &["search", &word]),
        };
        expect_stdout(&m.out, &format!("search {word}"), note);
        m
    });
    Row::wholes(ab, label, &runs, None)
}

/// `recent`: the 20 most recent sessions, after refreshing the day files.
fn recent(env: &Env, ab: &Ab) -> Vec<Row> {
    let label = "`recent` (20 sessions)";
    println!("{label}: {QUERY_WARMUP} warm-ups + {QUERY_RUNS} runs...");
    let runs = measured_runs(ab, QUERY_WARMUP, QUERY_RUNS, |b, _| {
        let m = ab.run(env, b, &["recent"]);
        expect_stdout(&m.out, "recent", " — ");
        m
    });
    Row::wholes(ab, label, &runs, Some(TARGET_RECENT_MS))
}

/// `log --grep WORD` (the newest 20 matches, with the commit that added each and its status),
/// and plain `log`, reported only.
fn log_grep(env: &Env, ab: &Ab) -> Vec<Row> {
    let grep_row = |label: &str, words: &[&str]| {
        println!("{label}: {QUERY_WARMUP} warm-ups + {QUERY_RUNS} runs...");
        let runs = measured_runs(ab, QUERY_WARMUP, QUERY_RUNS, |b, i| {
            let word = words[i % words.len()];
            let m = ab.run(env, b, &["log", "--grep", word]);
            expect_stdout(&m.out, "log --grep", "committed");
            m
        });
        let rows = Row::wholes(ab, label, &runs, Some(TARGET_LOG_GREP_MS));
        Row::with_mib(rows, TARGET_LOG_GREP_MIB)
    };
    // The first warm-up builds the words index (once per index; spec/recall.md).
    let mut rows = grep_row("`log --grep WORD` (20 newest matches)", &LOG_WORDS);
    rows.extend(grep_row(
        "`log --grep WORD`, a word in 4-7 entries",
        &RARE_WORDS,
    ));
    let label = "`log` (20 newest entries)";
    println!("{label}: {QUERY_WARMUP} warm-ups + {QUERY_RUNS} runs...");
    let runs = measured_runs(ab, QUERY_WARMUP, QUERY_RUNS, |b, _| {
        let m = ab.run(env, b, &["log"]);
        expect_stdout(&m.out, "log", "committed");
        m
    });
    rows.extend(Row::wholes(ab, label, &runs, None));
    rows
}

/// `log` after captures with no `verify` between (issue 23, fourth session: each tip witnessed
/// since the last `verify` was a graph walk of its own, so `log` grew with the square of the
/// captures since: 0.13 s after 600, 0.9 s after 1,800). A `verify`, then
/// `CAPTURES_SINCE_VERIFY` captures (untimed), then `log`; reported beside the plain `log` row.
/// Each build verifies and captures into its own vault. Last of the large vault's rows: the
/// captures stay until the next run restores it.
fn log_after_captures(env: &Env, ab: &Ab) -> Vec<Row> {
    let label = format!("`log` after {CAPTURES_SINCE_VERIFY} captures since the last `verify`");
    println!("{label}: the captures, then {QUERY_WARMUP} warm-ups + {QUERY_RUNS} runs...");
    for b in 0..ab.len() {
        let verified = ab.run(env, b, &["verify"]);
        expect_stdout(&verified.out, "verify", "verify: clean");
        for i in 0..CAPTURES_SINCE_VERIFY {
            let summary = format!("Bench decision {i}, taken with no verify since.");
            let args = [
                "capture",
                "--summary",
                &summary,
                "--session",
                "bench-log-since",
            ];
            ab.run(env, b, &args);
        }
    }
    let runs = measured_runs(ab, QUERY_WARMUP, QUERY_RUNS, |b, _| {
        let m = ab.run(env, b, &["log"]);
        expect_stdout(&m.out, "log", "with no verify since");
        m
    });
    Row::wholes(ab, &label, &runs, None)
}

/// `recent --all`: every session, timed to its first line and to its exit.
fn recent_all(env: &Env, ab: &Ab) -> Vec<Row> {
    let label = "`recent --all`";
    println!("{label}: 1 warm-up + {ALL_RUNS} runs...");
    let runs = measured_runs(ab, 1, ALL_RUNS, |b, _| {
        let m = ab.run(env, b, &["recent", "--all"]);
        expect_stdout(&m.out, "recent --all", " — ");
        m
    });
    let first = |m: &Measured| m.first_line.expect("recent --all printed a line");
    let mut rows = Row::each(
        ab,
        "`recent --all` to its first line",
        &runs,
        first,
        Some(TARGET_ALL_FIRST_MS),
    );
    rows.extend(Row::wholes(
        ab,
        "`recent --all` to its last line",
        &runs,
        Some(TARGET_ALL_MS),
    ));
    rows
}

/// `init` adopting the vault's 3,650 day files into a new record: each run in a fresh
/// repository holding a copy of `_librarian/sessions/` (the notes play no part in adoption).
fn init_adopt(env: &Env, ab: &Ab) -> Vec<Row> {
    adopt_rows(env, ab, 3_650, 1, INIT_RUNS, TARGET_INIT_MS)
}

/// `init` adopting the `days` day files of this build's vault, `runs` runs after `warmup`,
/// against `target` ms; each build in a repository of its own (`init-adopt`, `-base`).
fn adopt_rows(
    env: &Env,
    ab: &Ab,
    days: usize,
    warmup: usize,
    runs: usize,
    target: f64,
) -> Vec<Row> {
    let label = format!("`init` adopting {days} day files");
    println!("{label}: {warmup} warm-up + {runs} runs...");
    let works = ["init-adopt", "init-adopt-base"].map(|w| env.root.join(w));
    let runs = measured_runs(ab, warmup, runs, |b, _| {
        let work = &works[b];
        if work.exists() {
            fs::remove_dir_all(work).expect("remove the previous init vault");
        }
        let sessions = work.join("_librarian/sessions");
        fs::create_dir_all(&sessions).expect("create the init vault");
        let from = ab.vault(THIS).join("_librarian/sessions");
        for f in fs::read_dir(from).expect("list the day files") {
            let f = f.expect("a day file");
            fs::copy(f.path(), sessions.join(f.file_name())).expect("copy a day file");
        }
        env.run("git", &["init", "-q", "-b", "main"], work);
        flush_disks();
        let m = measured(&mut ab.builds.command(env, b, work, &["init"]), b"");
        ab::expect_success(&m.out, "init");
        let said = [&m.out.stdout, &m.out.stderr].map(|b| String::from_utf8_lossy(b).into_owned());
        assert!(
            said.concat().contains(&format!("adopting {days}")),
            "init did not adopt the {days} day files:\n{}",
            said.concat()
        );
        m
    });
    let rows = Row::wholes(ab, &label, &runs, Some(target));
    for work in works.iter().filter(|w| w.exists()) {
        support::remove(work);
    }
    rows
}

/// `git-rutter --version`: process start-up and exit alone.
fn baseline(env: &Env, ab: &Ab) -> Vec<Row> {
    let label = "baseline: `git-rutter --version`";
    println!("{label}: {QUERY_WARMUP} warm-ups + {QUERY_RUNS} runs...");
    let runs = measured_runs(ab, QUERY_WARMUP, QUERY_RUNS, |b, _| {
        let bin = support::utf8(ab.builds.bin(b));
        let m = measured(env.command(bin).arg("--version"), b"");
        ab::expect_success(&m.out, "git-rutter --version");
        m
    });
    Row::wholes(ab, label, &runs, None)
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

/// Bytes of the index files.
fn index_size(vault: &Path) -> u64 {
    support::index_files(vault)
        .iter()
        .filter_map(|f| fs::metadata(f).ok())
        .map(|m| m.len())
        .sum()
}

// ---------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------

/// The markdown report: machine, vault, timings against the targets.
fn render(builds: &Builds, rows: &[Row], large: &Prepared, index_mb: f64) -> String {
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
    let _ = writeln!(
        s,
        "Peak memory is each child's `ru_maxrss` (wait4), which starts from the benchmark's own \
         size when it spawns the child: the benchmark peaked at {:.1} MiB, a floor under every \
         peak figure.\n",
        own_peak_mib()
    );
    s.push_str(&rows_table(rows));
    let changes = ab::changes_of(builds, rows, Row::figures);
    s.push_str(&ab::change_table(builds, &changes));
    s
}

/// Wall time (median, p95, min), median CPU time and the largest peak memory of each case
/// against its targets.
fn rows_table(rows: &[Row]) -> String {
    let mut s = String::from(
        "| case | runs | median ms | p95 ms | min ms | CPU ms (median) | peak MiB (max) | target | result |\n",
    );
    s.push_str("|---|---:|---:|---:|---:|---:|---:|---|---|\n");
    for r in rows {
        let st = &r.stats;
        let target = st.targets_text(r.mib_target);
        let _ = writeln!(
            s,
            "| {} | {} | {:.2} | {:.2} | {:.2} | {:.1} | {:.1} | {target} | {} |",
            st.label,
            st.runs,
            st.median,
            st.p95,
            st.min,
            r.usage.cpu_ms,
            r.usage.peak_mib,
            r.verdict()
        );
    }
    s
}
