//! `verify` latency (DESIGN §9, the `verify` row): incremental after a day of captures on the
//! large generated vault, and `--full` over a history of 70,000 record commits.
//!
//! Run with `cargo bench --bench verify` (needs `python3` and `git` on PATH). It shares the
//! large vault, its cache under `<target>/rutter-bench/large/` and the hermetic environment with
//! the other benches (see `benches/support/`), then measures:
//!
//! 1. **incremental**, 11 runs (`RUTTER_BENCH_RUNS` sets another count), each on the large vault put back as `init` left it: `verify`
//!    once (untimed as a target: it walks the adopt commit and reads every day file; reported),
//!    19 real captures (`git-rutter capture --summary … --session … --ref … --ref …`, a day's
//!    worth), `sync`, then the timed `verify`, which must report `clean (19 commit(s) checked`;
//!    then one more `verify` with nothing new (reported);
//! 2. **`--full`** over 70,000 commits: a vault built once and cached under
//!    `<target>/rutter-bench/verify-70k/` with `git fast-import` (a root `rutter: adopt` commit
//!    holding the large vault's 3,650 day files, then 70,000 `rutter: capture` commits each
//!    appending one `session-record@2` entry line to that day's file and adding the `cited/`
//!    copy of a note cited for the first time), with the reflog, `.git/rutter/tips` (every tip,
//!    as git-rutter writes it) and working-tree day files equal to the tip's, packed as git
//!    packs a vault (`git repack -a -d -f`, then `git gc`: fast-import's own chains of deltas
//!    are not what a vault holds) by this binary run again with `--prepare-big`, so the
//!    generator's memory is not the floor of the peaks measured after it. Then `verify --full`, 3 runs, each killed if still running after 10 minutes
//!    (the check of witnessed tips once walked the graph per tip: hours); it must exit 0,
//!    findings are printed and reported. One more run with `.git/rutter/tips` holding only the
//!    newest tip isolates the history, reflog and working-tree checks; the tips file is put
//!    back whole afterwards.
//!
//! `RUTTER_BENCH_VERIFY=incremental` leaves out the `--full` runs of 2 (the baseline
//! `verify --full` that sets up the incremental case still runs).
//!
//! It prints (and writes to `<target>/rutter-bench/verify.md`) median, p95 and min, the median
//! CPU time and the largest peak memory against the targets. A missed target (or findings on the
//! generated history) is reported, not fatal; a failed capture or setup command panics.
//!
//! With `RUTTER_BENCH_BASE=BIN` (an older `git-rutter`, or a revision such as `main`, built once:
//! `support/base.rs`), every timed case also runs BIN, on vaults of its own: a copy of the large
//! vault restored from the same snapshot before each of its runs (`large/base-vault`), and a
//! copy of the long history (`verify-70k/base-vault`, made again from this build's before the
//! `--full` rows), its captures made by BIN too; the runs alternate with this build's, the order
//! alternating (`support/ab.rs`). The base's row is printed under this build's and a last table
//! gives the change in time, CPU and peak memory.

#[path = "support/mod.rs"]
mod support;

use rutter::records::fingerprint::{blob_id, sha256_hex};
use std::fmt::Write as _;
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use support::ab::{self, Builds, Sample, THIS};
use support::{
    flush_disks, machine, measure_process, prepare, restore_vault, time_process, timed, utf8, Env,
    Prepared, Stats, Usage, LARGE,
};

const INCREMENTAL_RUNS: usize = 11;
const CAPTURES_PER_DAY: usize = 19;
const FULL_RUNS: usize = 3;
/// A `verify --full` still running after this long is killed and reported as such.
const FULL_TIMEOUT: Duration = Duration::from_secs(600);
const PAYLOAD_CWD: &str = "/home/user/work/proj-alpha";

/// The generated history: capture commits after the adopt commit, and distinct cited notes.
const COMMITS: usize = 70_000;
const NOTES: usize = 3_000;
/// Bump when the generator's output changes, to rebuild the cached vault (2: day files in year
/// folders, as git-rutter writes them since spec/ref-layout.md "Year folders"; 3: packed with
/// git's own deltas, [`pack_as_git_does`]).
const GENERATOR_VERSION: u32 = 3;
const IDENTITY: &str = "Bench User <bench@example.com>";
const ZERO: &str = "0000000000000000000000000000000000000000";

/// Issue 13's incremental target (DESIGN §9 had 200 ms); issue 23's `--full` targets (issue 13
/// had 5 s, DESIGN §9 30 s).
const TARGET_INCREMENTAL_MS: f64 = 50.0;
const TARGET_FULL_MS: f64 = 3_000.0;
const TARGET_FULL_PEAK_MIB: f64 = 150.0;

fn main() {
    // `cargo test --benches` runs this binary without `--bench`: do nothing then.
    if !std::env::args().any(|a| a == "--bench") {
        println!("verify benchmark: run it with `cargo bench --bench verify`");
        return;
    }
    let env = Env::new();
    let large = prepare(&env, &LARGE);
    // The child `prepare_big_apart` runs: it only builds the long history.
    if std::env::args().any(|a| a == PREPARE_BIG) {
        prepare_big(&env, &large);
        return;
    }
    let runs = std::env::var("RUTTER_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(INCREMENTAL_RUNS);
    let builds = Builds::from_env(&env);
    let stats = incremental(&env, &builds, &large, runs);
    let big = prepare_big_apart(&env, &large);
    // The base's own copy of the long history, made again from this build's before its runs.
    let big_vaults = builds.vaults(big.vault.clone(), || copy_big(&big));
    // `RUTTER_BENCH_VERIFY=incremental` leaves out the `--full` rows (four runs of 30-50 s on
    // the 2-core VM) when only the incremental ones are being measured.
    let only_incremental = std::env::var("RUTTER_BENCH_VERIFY").is_ok_and(|v| v == "incremental");
    let full = (!only_incremental).then(|| full(&env, &builds, &big_vaults));
    let big_rows = incremental_big(&env, &builds, &big_vaults, runs);

    let report = render(&builds, &stats, &big_rows, full.as_ref(), &big);
    print!("\n{report}");
    let out = env.root.join("verify.md");
    fs::write(&out, &report).expect("write verify.md");
    println!("\nwritten to {}", out.display());
}

// ---------------------------------------------------------------------------------------------
// Incremental verify after a day of captures
// ---------------------------------------------------------------------------------------------

/// The three rows of the incremental case: first verify after restore, after 19 captures, and
/// with nothing new; with a base, each followed by the base's (on its own copy of the vault,
/// restored the same way, its runs alternating with this build's).
fn incremental(env: &Env, builds: &Builds, large: &Prepared, runs: usize) -> Vec<Row> {
    println!(
        "incremental verify: {runs} runs of restore, verify, {CAPTURES_PER_DAY} \
         captures, verify (timed), verify..."
    );
    let nonce = nonce();
    let samples = ab::interleaved(builds.len(), 0, runs, |b, run| {
        let vault = match b {
            THIS => restore_vault(large),
            _ => ab::copy_of(large, "base-vault"),
        };
        let first = verify_clean(env, builds, b, &vault, &[], None);
        for k in 0..CAPTURES_PER_DAY {
            let tag = format!("{nonce}-{run}-{b}");
            capture(env, builds.bin(b), &vault, &large.refs, &tag, k);
        }
        flush_disks();
        let after = verify_clean(env, builds, b, &vault, &[], Some(CAPTURES_PER_DAY));
        let idle = verify_clean(env, builds, b, &vault, &[], Some(0));
        [first, after, idle]
    });
    let labels = [
        "first `verify` after `init` (adopt commit, 3,650 day files read)".to_owned(),
        format!("`verify` after {CAPTURES_PER_DAY} captures (incremental), large vault"),
        "`verify` again, nothing new".to_owned(),
    ];
    ab_rows(builds, &labels, &samples, &[None, None, None])
}

/// The rows of cases measured together (`samples[b][run][case]`), each case's this build's row
/// followed by the base's.
fn ab_rows<const N: usize>(
    builds: &Builds,
    labels: &[String; N],
    samples: &[Vec<[Sample; N]>],
    targets: &[Option<f64>; N],
) -> Vec<Row> {
    let mut rows = Vec::new();
    for (c, label) in labels.iter().enumerate() {
        for (b, runs) in samples.iter().enumerate() {
            let case: Vec<Sample> = runs.iter().map(|r| r[c]).collect();
            rows.push(Row::of(&builds.label(b, label), &case, targets[c]));
        }
    }
    rows
}

fn nonce() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_nanos()
}

/// The target row: on the 70,000-commit history, with a verify cache as a full `verify` left
/// it, 19 captures then the timed `verify` (and one more with nothing new). The files captures
/// change (the ref, its reflog, `.git/rutter/`, today's day file) are put back before each run.
/// With a base, the same on its own copy (`vaults[BASE]`), its runs alternating with this
/// build's.
fn incremental_big(env: &Env, builds: &Builds, vaults: &[PathBuf], runs: usize) -> Vec<Row> {
    println!("incremental verify on the {COMMITS}-commit history: a baseline `verify --full`...");
    let day = format!("_librarian/sessions/{}.md", env.end_date);
    let snaps: Vec<PathBuf> = vaults
        .iter()
        .enumerate()
        .map(|(b, vault)| snapshot(env, builds, b, vault, &day))
        .collect();
    println!("  {runs} runs of {CAPTURES_PER_DAY} captures, verify (timed), verify...");
    let nonce = nonce();
    let samples = ab::interleaved(builds.len(), 0, runs, |b, run| {
        let vault = &vaults[b];
        restore_snapshot(&snaps[b], vault, &day);
        for k in 0..CAPTURES_PER_DAY {
            let tag = format!("{nonce}-big-{run}-{b}");
            capture(env, builds.bin(b), vault, &[], &tag, k);
        }
        flush_disks();
        let after = verify_clean(env, builds, b, vault, &[], Some(CAPTURES_PER_DAY));
        let idle = verify_clean(env, builds, b, vault, &[], Some(0));
        [after, idle]
    });
    let labels = [
        format!(
            "`verify` after {CAPTURES_PER_DAY} captures (incremental), {} commits",
            COMMITS + 1
        ),
        format!("`verify` again, nothing new, {} commits", COMMITS + 1),
    ];
    ab_rows(
        builds,
        &labels,
        &samples,
        &[Some(TARGET_INCREMENTAL_MS), None],
    )
}

/// The files captures change: the ref and its reflog.
const REF_FILES: [&str; 2] = ["logs/refs/rutter/records", "refs/rutter/records"];

/// A baseline `verify --full` with build `b` on `vault`, then a snapshot of what captures
/// change, beside the vault (`incremental-snapshot`, `-base` for the base); returns its path.
fn snapshot(env: &Env, builds: &Builds, b: usize, vault: &Path, day: &str) -> PathBuf {
    let name = ["incremental-snapshot", "incremental-snapshot-base"][b];
    let snap = vault.parent().expect("a parent").join(name);
    if snap.exists() {
        support::remove(&snap);
    }
    verify_clean(env, builds, b, vault, &["--full"], None);
    fs::create_dir_all(snap.join("logs/refs/rutter")).expect("create the snapshot");
    fs::create_dir_all(snap.join("refs/rutter")).expect("create the snapshot");
    for k in REF_FILES {
        let from = vault.join(".git").join(k);
        if from.exists() {
            fs::copy(&from, snap.join(k)).expect("snapshot a ref file");
        }
    }
    if vault.join(day).exists() {
        fs::copy(vault.join(day), snap.join("day.md")).expect("snapshot the day file");
    }
    support::sync_tree(&vault.join(".git/rutter"), &snap.join("rutter"));
    snap
}

/// Puts back what [`snapshot`] kept of `vault`.
fn restore_snapshot(snap: &Path, vault: &Path, day: &str) {
    for k in REF_FILES {
        let (from, to) = (snap.join(k), vault.join(".git").join(k));
        if from.exists() {
            fs::copy(&from, &to).expect("restore a ref file");
        } else if to.exists() {
            support::remove(&to);
        }
    }
    if snap.join("day.md").exists() {
        fs::copy(snap.join("day.md"), vault.join(day)).expect("restore the day file");
    } else if vault.join(day).exists() {
        support::remove(&vault.join(day));
    }
    support::sync_tree(&snap.join("rutter"), &vault.join(".git/rutter"));
}

/// The `k`-th manual capture of run `run` (a session per 5 captures), with a unique summary
/// citing the fixture's two notes; panics unless it captured and committed.
fn capture(env: &Env, bin: &Path, vault: &Path, refs: &[String], run: &str, k: usize) {
    let tag = format!("{run}-{k}");
    let summary = format!("Bench verify {tag}: re-checked the record after the day's work.");
    let session = format!("bench-verify-{run}-{}", k / 5);
    let mut cmd = env.command(utf8(bin));
    cmd.args(["capture", "--summary", &summary, "--session", &session])
        .args(["--cwd", PAYLOAD_CWD])
        .env("LIBRARIAN_VAULT_PATH", vault);
    for r in refs {
        cmd.args(["--ref", r]);
    }
    let (_, out) = time_process(&mut cmd, b"");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success()
            && stderr.contains("captured 1 entry")
            && stderr.contains("committed ")
            && !stderr.contains("rejected"),
        "capture {tag} failed ({}); stderr:\n{stderr}",
        out.status
    );
}

/// Times `verify <args>` with build `b`; panics unless it exits 0 and, when given, checked that
/// many commits. Returns wall ms, CPU ms and peak MiB.
fn verify_clean(
    env: &Env,
    builds: &Builds,
    b: usize,
    vault: &Path,
    args: &[&str],
    commits: Option<usize>,
) -> Sample {
    let mut cmd = builds.command(env, b, vault, &["verify"]);
    cmd.args(args);
    let m = measure_process(&mut cmd, FULL_TIMEOUT);
    let out = m.output.as_ref().expect("verify finished in time");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let want = match commits {
        Some(0) => "verify: clean (no new commit since the last verify".to_owned(),
        Some(n) => format!("verify: clean ({n} new commit(s) checked"),
        None => "verify: clean (".to_owned(),
    };
    assert!(
        out.status.success() && stdout.contains(&want),
        "`{} verify` did not print {want:?} ({}); stdout:\n{stdout}\nstderr:\n{}",
        builds.bin(b).display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    Sample::from(&m)
}

/// A row of the report: the wall-time figures, and the median CPU time and largest peak memory.
struct Row {
    stats: Stats,
    usage: Usage,
    /// The largest peak memory allowed, when the row has a memory target.
    mib_target: Option<f64>,
}

impl Row {
    fn of(label: &str, samples: &[Sample], target: Option<f64>) -> Row {
        Row {
            stats: Stats::of(label, samples.iter().map(|s| s.wall_ms).collect(), target),
            usage: ab::usage(samples),
            mib_target: None,
        }
    }

    /// The row's medians, for the change table.
    fn figures(&self) -> ab::Figures {
        ab::Figures {
            ms: self.stats.median,
            cpu_ms: self.usage.cpu_ms,
            peak_mib: self.usage.peak_mib,
        }
    }
}

/// The report's table: wall median, p95, min, CPU median, peak memory, target and result.
fn table(rows: &[&Row]) -> String {
    let mut s = String::from(
        "| case | runs | median ms | p95 ms | min ms | CPU median ms | peak MiB | target (median) | result |\n",
    );
    s.push_str("|---|---:|---:|---:|---:|---:|---:|---|---|\n");
    for r in rows {
        let st = &r.stats;
        let target = st.targets_text(r.mib_target);
        let _ = writeln!(
            s,
            "| {} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.1} | {target} | {} |",
            st.label,
            st.runs,
            st.median,
            st.p95,
            st.min,
            r.usage.cpu_ms,
            r.usage.peak_mib,
            st.verdict_with_memory(r.usage.peak_mib, r.mib_target)
        );
    }
    s
}

// ---------------------------------------------------------------------------------------------
// `verify --full` over 70,000 commits
// ---------------------------------------------------------------------------------------------

/// The generated long history, ready to verify.
struct Big {
    vault: PathBuf,
    /// Seconds: generating and importing the history, then packing it ([`pack_as_git_does`]).
    generate: f64,
    gc: f64,
    pack_mb: f64,
    /// `cited/` copies in the tip's tree.
    cited: usize,
    cached: bool,
}

/// What `verify --full` said on the generated history.
enum Outcome {
    Clean(String),
    Findings(String),
}

/// The argument that makes this binary only build the long history ([`prepare_big_apart`]).
const PREPARE_BIG: &str = "--prepare-big";

/// The 70,000-commit vault, built when not cached by this binary run again with
/// [`PREPARE_BIG`]: a child's peak memory (`ru_maxrss`) starts from this process's own peak
/// when it is spawned, and the generator's (188 MiB) floored every peak measured after it.
fn prepare_big_apart(env: &Env, large: &Prepared) -> Big {
    let (dir, key) = big_key(env, large);
    let cached = big_cached(&dir, &key);
    if !cached {
        let exe = std::env::current_exe().expect("the benchmark's own path");
        let status = std::process::Command::new(exe)
            .args(["--bench", PREPARE_BIG])
            .status()
            .expect("run the benchmark to build the long history");
        assert!(
            status.success(),
            "building the long history failed: {status}"
        );
    }
    Big {
        cached,
        ..prepare_big(env, large)
    }
}

/// The long history's folder and the `KEY` naming the generator and the large vault it is made
/// from.
fn big_key(env: &Env, large: &Prepared) -> (PathBuf, String) {
    let large_key = fs::read_to_string(large.dir.join("KEY")).expect("read the large vault's KEY");
    let key = format!(
        "verify-70k generator v{GENERATOR_VERSION}: {COMMITS} commits, {NOTES} notes, every tip \
         witnessed; day files of {large_key}"
    );
    (env.root.join("verify-70k"), key)
}

fn big_cached(dir: &Path, key: &str) -> bool {
    fs::read_to_string(dir.join("KEY")).is_ok_and(|k| k == key) && dir.join("SETUP").is_file()
}

/// Packs the imported history as git packs a vault's objects, then `git gc` (its commit-graph,
/// its packed refs). `git fast-import` stores each new version of a day file as a delta on the
/// one before, in chains of up to 50, a layout git itself never writes and `git gc` keeps
/// (it reuses deltas): git's own packing (`git gc --auto`, which captures start) keeps the
/// newest version of a file whole and each older one as a delta on it. `git repack -f`
/// computes the deltas afresh as git does (docs/performance.md, "Stop 54").
fn pack_as_git_does(env: &Env, vault: &Path) {
    env.run("git", &["repack", "-a", "-d", "-f", "-q"], vault);
    env.run("git", &["gc", "-q"], vault);
}

/// Builds the 70,000-commit vault unless cached (its `KEY` names the generator and the large
/// vault it was made from).
fn prepare_big(env: &Env, large: &Prepared) -> Big {
    let (dir, key) = big_key(env, large);
    let vault = dir.join("vault");
    let cached = big_cached(&dir, &key);
    if !cached {
        println!("building the {COMMITS}-commit vault for `verify --full` (once, cached)...");
        if dir.exists() {
            support::remove(&dir);
        }
        fs::create_dir_all(&vault).expect("create the verify-70k vault");
        let generate = timed(|| generate_history(env, large, &dir, &vault));
        let gc = timed(|| pack_as_git_does(env, &vault));
        let setup = format!("{:.3} {:.3}", generate.as_secs_f64(), gc.as_secs_f64());
        fs::write(dir.join("SETUP"), setup).expect("write SETUP");
        fs::write(dir.join("KEY"), &key).expect("write KEY");
        flush_disks();
    }
    let setup = fs::read_to_string(dir.join("SETUP")).expect("read SETUP");
    let v: Vec<f64> = setup
        .split_whitespace()
        .map(|s| s.parse().expect("SETUP holds seconds"))
        .collect();
    Big {
        vault: support::canonical(&vault),
        generate: v[0],
        gc: v[1],
        pack_mb: pack_bytes(&vault) as f64 / 1e6,
        cited: git_out(
            env,
            &vault,
            &[
                "ls-tree",
                "-r",
                "--name-only",
                "refs/rutter/records",
                "cited",
            ],
        )
        .lines()
        .count(),
        cached,
    }
}

/// What the `--full` case measured.
struct Full {
    /// Every tip witnessed, as git-rutter writes them: the target row (then the base's).
    every_tip: Vec<Row>,
    /// Only the newest tip witnessed: the history, reflog and working-tree checks alone.
    newest_only: Vec<Row>,
    outcome: Outcome,
    tips: usize,
}

/// The base's own copy of the long history (`verify-70k/base-vault`), made again from this
/// build's vault as it is now (only what differs is copied).
fn copy_big(big: &Big) -> PathBuf {
    let copy = big.vault.parent().expect("a parent").join("base-vault");
    support::sync_tree(&big.vault, &copy);
    flush_disks();
    support::canonical(&copy)
}

/// Times `verify --full` with every tip in `.git/rutter/tips`, as git-rutter writes them
/// (`FULL_RUNS` runs, each killed after `FULL_TIMEOUT`: the witness check once cost a graph
/// walk per tip; a build killed once is not run again), then once with only the newest tip,
/// which leaves the history, reflog and working-tree checks. Each build on its own vault, the
/// runs alternating. This build's findings (or a failure) are reported with the output, not
/// fatal.
fn full(env: &Env, builds: &Builds, vaults: &[PathBuf]) -> Full {
    let all: Vec<String> = git_out(
        env,
        &vaults[THIS],
        &["rev-list", "--reverse", "refs/rutter/records"],
    )
    .lines()
    .map(str::to_owned)
    .collect();
    let newest = all.last().expect("the ref has commits").clone();

    let mut label = format!(
        "`verify --full`, {} commits, all {} tips witnessed",
        all.len(),
        all.len()
    );
    println!("{label}: {FULL_RUNS} runs...");
    for vault in vaults {
        write_tips(vault, &all);
    }
    let mut outcome = None;
    let mut killed = vec![false; builds.len()];
    let runs = ab::interleaved(builds.len(), 0, FULL_RUNS, |b, _| {
        if killed[b] {
            return None;
        }
        let (took, out) = verify_full(env, builds, b, &vaults[b]);
        match out {
            None => killed[b] = true,
            Some(out) if b == THIS => {
                outcome.get_or_insert_with(|| judge(&out, all.len()));
            }
            Some(_) => {}
        }
        Some(took)
    });
    if killed[THIS] {
        label.push_str(&format!(" (killed after {} s)", FULL_TIMEOUT.as_secs()));
    }

    let only = "`verify --full`, newest tip witnessed only";
    println!("{only}: 1 run...");
    for vault in vaults {
        write_tips(vault, std::slice::from_ref(&newest));
    }
    let mut last = None;
    let newest_runs = ab::interleaved(builds.len(), 0, 1, |b, _| {
        let (took, out) = verify_full(env, builds, b, &vaults[b]);
        if b == THIS {
            last = out.map(|o| judge(&o, all.len()));
        }
        took
    });
    for vault in vaults {
        write_tips(vault, &all);
    }
    let outcome = match (outcome, last) {
        (Some(Outcome::Clean(_)) | None, Some(findings @ Outcome::Findings(_))) => findings,
        (Some(first), _) => first,
        (None, Some(last)) => last,
        (None, None) => Outcome::Findings(format!(
            "every run was killed after {} s",
            FULL_TIMEOUT.as_secs()
        )),
    };
    if let Outcome::Findings(text) = &outcome {
        println!("`verify --full` did NOT report the generated history clean:\n{text}");
    }
    let every_tip = runs
        .iter()
        .enumerate()
        .map(|(b, r)| {
            let r: Vec<Sample> = r.iter().flatten().copied().collect();
            Row {
                mib_target: Some(TARGET_FULL_PEAK_MIB),
                ..Row::of(&builds.label(b, &label), &r, Some(TARGET_FULL_MS))
            }
        })
        .collect();
    let newest_only = newest_runs
        .iter()
        .enumerate()
        .map(|(b, r)| Row::of(&builds.label(b, only), r, None))
        .collect();
    Full {
        every_tip,
        newest_only,
        outcome,
        tips: all.len(),
    }
}

/// One timed `verify --full` with build `b`, with its output, or none when it was killed after
/// `FULL_TIMEOUT`.
fn verify_full(env: &Env, builds: &Builds, b: usize, vault: &Path) -> (Sample, Option<Output>) {
    let mut cmd = builds.command(env, b, vault, &["verify", "--full"]);
    let m = measure_process(&mut cmd, FULL_TIMEOUT);
    let sample = Sample::from(&m);
    let who = builds.who(b);
    match &m.output {
        Some(_) => println!(
            "  {who}{:.2} s ({:.2} s CPU, {:.0} MiB)",
            sample.wall_ms / 1e3,
            sample.cpu_ms / 1e3,
            sample.peak_mib
        ),
        None => println!("  {who}killed after {:.0} s", sample.wall_ms / 1e3),
    }
    (sample, m.output)
}

/// `.git/rutter/tips`: the witnessed tips, one hex id per line.
fn write_tips(vault: &Path, tips: &[String]) {
    let text: String = tips.iter().map(|t| format!("{t}\n")).collect();
    fs::write(vault.join(".git/rutter/tips"), text).expect("write .git/rutter/tips");
}

fn judge(out: &Output, commits: usize) -> Outcome {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let want = format!("verify: clean ({commits} commit(s) checked");
    if out.status.success() && stdout.contains(&want) {
        let last = stdout.lines().last().unwrap_or("").to_owned();
        return Outcome::Clean(last);
    }
    let mut text = format!("exit status {}; stdout (first 60 lines):\n", out.status);
    for l in stdout.lines().take(60) {
        text.push_str(l);
        text.push('\n');
    }
    let _ = write!(text, "stderr:\n{}", String::from_utf8_lossy(&out.stderr));
    Outcome::Findings(text)
}

/// Bytes under `.git/objects/pack`.
fn pack_bytes(vault: &Path) -> u64 {
    fs::read_dir(vault.join(".git/objects/pack"))
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

// ---------------------------------------------------------------------------------------------
// The history generator
// ---------------------------------------------------------------------------------------------

/// One synthetic note that entries cite: its path, bytes and fingerprints.
struct Note {
    path: String,
    bytes: Vec<u8>,
    sha256: String,
    blob: String,
}

/// A commit's reflog facts: when, and its subject.
struct Move {
    time: i64,
    subject: String,
}

/// `git init`, then a `git fast-import` of the adopt commit and the capture commits onto
/// `refs/rutter/records`; then the reflog, the tip witness log, the reflog's gc settings and
/// the working-tree day files, as `git-rutter init` and captures would have left them.
fn generate_history(env: &Env, large: &Prepared, dir: &Path, vault: &Path) {
    env.run("git", &["init", "-q", "-b", "main", "."], vault);
    for key in ["reflogExpire", "reflogExpireUnreachable"] {
        let name = format!("gc.refs/rutter/records.{key}");
        env.run("git", &["config", &name, "never"], vault);
    }
    let mut days = day_files(&large.pristine.join("_librarian/sessions"));
    let notes = notes();
    let marks = dir.join("marks");
    let mut child = env
        .command("git")
        .args(["fast-import", "--quiet", "--date-format=raw"])
        .arg(format!("--export-marks={}", utf8(&marks)))
        .current_dir(vault)
        .stdin(Stdio::piped())
        .spawn()
        .expect("spawn git fast-import");
    let mut moves = Vec::with_capacity(COMMITS + 1);
    {
        let pipe = child.stdin.take().expect("piped stdin");
        let mut w = BufWriter::with_capacity(1 << 20, pipe);
        moves.push(adopt_commit(&mut w, &days));
        let mut cited = vec![false; NOTES];
        let n_days = days.len();
        for (d, (day, content)) in days.iter_mut().enumerate() {
            let (lo, hi) = (d * COMMITS / n_days, (d + 1) * COMMITS / n_days);
            for k in 0..hi - lo {
                let i = lo + k;
                let e = entry(day, i, k, hi - lo, &notes);
                if !content.is_empty() && !content.ends_with(b"\n") {
                    content.push(b'\n');
                }
                content.extend_from_slice(e.line.as_bytes());
                content.push(b'\n');
                let fresh: Vec<&Note> = e
                    .refs
                    .iter()
                    .filter(|&&n| !std::mem::replace(&mut cited[n], true))
                    .map(|&n| &notes[n])
                    .collect();
                moves.push(capture_commit(&mut w, i + 2, day, content, &e, &fresh));
            }
        }
        w.flush().expect("write to git fast-import");
    }
    let status = child.wait().expect("wait for git fast-import");
    assert!(status.success(), "git fast-import failed: {status}");

    let ids = commit_ids(&marks, moves.len());
    write_reflog(vault, &ids, &moves);
    let tips: String = ids.iter().map(|id| format!("{id}\n")).collect();
    fs::create_dir_all(vault.join(".git/rutter")).expect("create .git/rutter");
    fs::write(vault.join(".git/rutter/tips"), tips).expect("write the tips");
    fs::write(vault.join(".git/info/exclude"), "/_librarian/\n").expect("write info/exclude");
    let sessions = vault.join("_librarian/sessions");
    fs::create_dir_all(&sessions).expect("create the sessions folder");
    for (day, content) in &days {
        fs::write(sessions.join(format!("{day}.md")), content).expect("write a day file");
    }
    let count = git_out(env, vault, &["rev-list", "--count", "refs/rutter/records"]);
    assert_eq!(
        count.trim(),
        (COMMITS + 1).to_string(),
        "commits on the ref"
    );
}

/// The day files of a vault's sessions folder, by day.
fn day_files(sessions: &Path) -> Vec<(String, Vec<u8>)> {
    let mut days: Vec<(String, Vec<u8>)> = fs::read_dir(sessions)
        .expect("read the large vault's sessions")
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let day = name.strip_suffix(".md")?.to_owned();
            Some((day, fs::read(e.path()).expect("read a day file")))
        })
        .collect();
    days.sort();
    assert!(!days.is_empty(), "no day files in {}", sessions.display());
    days
}

/// The notes the generated entries cite (2-4 KB of text each).
fn notes() -> Vec<Note> {
    (0..NOTES)
        .map(|n| {
            let mut rng = Rng(n as u64 ^ 0x5eed_0001);
            let mut text = format!("---\ntype: note\nstatus: active\n---\n# Bench note {n}\n\n");
            let paras = 4 + rng.below(5);
            for _ in 0..paras {
                let words = 40 + rng.below(40);
                text.push_str(&rng.sentence(words));
                text.push_str("\n\n");
            }
            let bytes = text.into_bytes();
            Note {
                path: format!("Notes/Bench/Note {n:04}.md"),
                sha256: sha256_hex(&bytes),
                blob: blob_id(&bytes),
                bytes,
            }
        })
        .collect()
}

/// One generated entry: its line (without `\n`), id, session, project, time and cited notes.
struct GenEntry {
    line: String,
    id: String,
    session: String,
    project: &'static str,
    time: i64,
    refs: Vec<usize>,
}

const PROJECTS: [&str; 3] = ["proj-alpha", "research-notes", "rutter"];

/// Entry `i` of the history, the `k`-th of `n` on `day`: spread over the day, 0-2 refs, in the
/// `session-record@2` line grammar (`spec/record-format.md`).
fn entry(day: &str, i: usize, k: usize, n: usize, notes: &[Note]) -> GenEntry {
    let mut rng = Rng(i as u64 ^ 0xbe9c_4a11);
    let secs = (k + 1) * 86_400 / (n + 1);
    let (hh, mm, ss, ms) = (
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        (i * 7919 + 123) % 1000,
    );
    let time = format!("{day}T{hh:02}:{mm:02}:{ss:02}.{ms:03}Z");
    let id = format!("{}T{hh:02}{mm:02}{ss:02}{ms:03}Z", day.replace('-', ""));
    let session = format!("bench-{day}-{}", k / 4);
    let project = PROJECTS[(i / 4) % PROJECTS.len()];
    let words = 12 + rng.below(20);
    let mut summary = rng.sentence(words);
    summary.insert_str(0, "Decided ");
    let refs: Vec<usize> = (0..i % 3).map(|j| (i * 37 + j * 1013) % NOTES).collect();

    let mut human = format!("- {hh:02}:{mm:02}:{ss:02} [{project}] — {summary}");
    let mut refs_json = Vec::new();
    for (j, &r) in refs.iter().enumerate() {
        let note = &notes[r];
        human.push_str(if j == 0 { " (refs: " } else { ", " });
        let _ = write!(human, "{}@sha256:{}", note.path, &note.sha256[..7]);
        refs_json.push(format!(
            "{{\"path\":{},\"hash\":\"sha256:{}\",\"blob\":\"{}\"}}",
            js(&note.path),
            note.sha256,
            note.blob
        ));
    }
    if !refs.is_empty() {
        human.push(')');
    }
    let json = format!(
        "{{\"id\":{},\"session_id\":{},\"time\":{},\"summary\":{},\"refs\":[{}],\
         \"workspace\":{{\"cwd\":{},\"project\":{}}},\"client\":\"claude\"}}",
        js(&id),
        js(&session),
        js(&time),
        js(&summary),
        refs_json.join(","),
        js(&format!("/home/dev/code/{project}")),
        js(project),
    );
    let line = format!("{human} <!-- rutter:entry {json} -->");
    let parsed = rutter::records::line::parse(&line)
        .unwrap_or_else(|e| panic!("generated an invalid entry line ({e}): {line}"))
        .unwrap_or_else(|| panic!("generated a line that is not an entry: {line}"));
    assert_eq!(parsed.id, id, "the parsed id of {line}");
    GenEntry {
        line,
        id,
        session,
        project,
        time: day_epoch(day) + secs as i64,
        refs,
    }
}

/// A JSON string of printable ASCII without `<`, `>` and `&` (all the generator produces).
fn js(s: &str) -> String {
    assert!(
        s.bytes()
            .all(|b| (0x20..0x7f).contains(&b) && !b"<>&".contains(&b)),
        "the generator only writes plain ASCII: {s:?}"
    );
    serde_json::to_string(s).expect("a string serialises")
}

/// The root commit: every day file, as `git-rutter init` adopts them.
fn adopt_commit(w: &mut impl Write, days: &[(String, Vec<u8>)]) -> Move {
    let time = day_epoch(&days[0].0);
    let msg = format!(
        "rutter: adopt\n\nAdopted {} existing record file(s) byte for byte.\n\nRutter-Format: 2\n",
        days.len()
    );
    commit_header(w, 1, time, &msg);
    for (day, content) in days {
        inline_file(w, &in_year(day), content);
    }
    w.write_all(b"\n").expect("write to git fast-import");
    Move {
        time,
        subject: "rutter: adopt".into(),
    }
}

/// One capture commit: the day file with its new line, and the first copies of cited notes.
fn capture_commit(
    w: &mut impl Write,
    mark: usize,
    day: &str,
    content: &[u8],
    e: &GenEntry,
    fresh: &[&Note],
) -> Move {
    let subject = format!("rutter: capture {day} [{}]", e.project);
    let msg = format!(
        "{subject}\n\n{}\n\nRutter-Entry: {}\nRutter-Session: {}\nRutter-Client: claude\n\
         Rutter-Format: 2\n",
        e.line, e.id, e.session
    );
    commit_header(w, mark, e.time, &msg);
    inline_file(w, &in_year(day), content);
    for note in fresh {
        let path = format!("cited/{}/{}", &note.sha256[..2], note.sha256);
        inline_file(w, &path, &note.bytes);
    }
    w.write_all(b"\n").expect("write to git fast-import");
    Move {
        time: e.time,
        subject,
    }
}

/// Where the ref keeps the day file of `day`: in the folder of its year.
fn in_year(day: &str) -> String {
    format!("_librarian/sessions/{}/{day}.md", &day[..4])
}

fn commit_header(w: &mut impl Write, mark: usize, time: i64, msg: &str) {
    write!(
        w,
        "commit refs/rutter/records\nmark :{mark}\nauthor {IDENTITY} {time} +0000\n\
         committer {IDENTITY} {time} +0000\ndata {}\n{msg}\n",
        msg.len()
    )
    .expect("write to git fast-import");
}

fn inline_file(w: &mut impl Write, path: &str, bytes: &[u8]) {
    write!(w, "M 100644 inline {path}\ndata {}\n", bytes.len())
        .and_then(|()| w.write_all(bytes))
        .and_then(|()| w.write_all(b"\n"))
        .expect("write to git fast-import");
}

/// The commit ids of marks 1..=n, from fast-import's marks file.
fn commit_ids(marks: &Path, n: usize) -> Vec<String> {
    let mut ids = vec![String::new(); n];
    for l in fs::read_to_string(marks).expect("read the marks").lines() {
        let (mark, id) = l.split_once(' ').expect("a marks line");
        let mark: usize = mark.trim_start_matches(':').parse().expect("a mark");
        if (1..=n).contains(&mark) {
            ids[mark - 1] = id.to_owned();
        }
    }
    assert!(ids.iter().all(|i| i.len() == 40), "a commit has no mark");
    ids
}

/// `.git/logs/refs/rutter/records`: one line per move of the ref, in git's reflog format.
fn write_reflog(vault: &Path, ids: &[String], moves: &[Move]) {
    let mut log = String::with_capacity(ids.len() * 160);
    for (i, (id, m)) in ids.iter().zip(moves).enumerate() {
        let old = if i == 0 { ZERO } else { &ids[i - 1] };
        let _ = writeln!(log, "{old} {id} {IDENTITY} {} +0000\t{}", m.time, m.subject);
    }
    let path = vault.join(".git/logs/refs/rutter/records");
    fs::create_dir_all(path.parent().expect("a parent")).expect("create the reflog folder");
    fs::write(path, log).expect("write the reflog");
}

fn git_out(env: &Env, dir: &Path, args: &[&str]) -> String {
    let out = env
        .command("git")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run git");
    assert!(out.status.success(), "git {args:?} failed: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Seconds since the epoch of `YYYY-MM-DD` 00:00 UTC.
fn day_epoch(day: &str) -> i64 {
    let p: Vec<i64> = day.split('-').map(|x| x.parse().expect("a date")).collect();
    let (y, m, d) = (p[0] - i64::from(p[1] <= 2), p[1], p[2]);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    (era * 146_097 + doe - 719_468) * 86_400
}

/// A small deterministic generator (splitmix64) for summaries and note text.
struct Rng(u64);

const WORDS: [&str; 32] = [
    "the",
    "ledger",
    "latency",
    "garden",
    "decision",
    "index",
    "cache",
    "record",
    "note",
    "and",
    "kept",
    "moved",
    "source",
    "canonical",
    "review",
    "budget",
    "schema",
    "draft",
    "merge",
    "of",
    "audit",
    "history",
    "for",
    "daily",
    "rename",
    "link",
    "vault",
    "with",
    "release",
    "plan",
    "test",
    "scope",
];

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// `words` words and a full stop.
    fn sentence(&mut self, words: usize) -> String {
        let mut s = String::new();
        for w in 0..words {
            if w > 0 {
                s.push(' ');
            }
            s.push_str(WORDS[self.below(WORDS.len())]);
        }
        s.push('.');
        s
    }
}

// ---------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------

fn render(
    builds: &Builds,
    incremental: &[Row],
    big_rows: &[Row],
    full: Option<&Full>,
    big: &Big,
) -> String {
    let mut s = String::from("# git-rutter verify benchmark\n\n");
    let _ = writeln!(s, "{}\n", machine());
    let _ = writeln!(
        s,
        "Incremental: the large vault ({} notes, {} day files) restored before each run; \
         {CAPTURES_PER_DAY} captures (`capture --summary`, 2 cited notes each) between the \
         first `verify` and the timed one.\n",
        LARGE.notes, LARGE.days,
    );
    // Each run's last round of captures stays on the ref: the history grows by 19 a run.
    let commits = full.map_or_else(|| format!("{}+", COMMITS + 1), |f| f.tips.to_string());
    let _ = writeln!(
        s,
        "`--full`: {} commits on `refs/rutter/records` (adopt + {COMMITS} captures, {} \
         cited copies), reflog of {} entries, packed ({:.0} MB of packs); {}.\n",
        commits,
        big.cited,
        commits,
        big.pack_mb,
        if big.cached {
            "cached".to_owned()
        } else {
            format!(
                "generated this run in {:.1} s + `git repack -f` and `git gc` {:.1} s",
                big.generate, big.gc
            )
        }
    );
    let mut rows: Vec<&Row> = incremental.iter().collect();
    rows.extend(big_rows);
    if let Some(full) = full {
        rows.extend(&full.every_tip);
        rows.extend(&full.newest_only);
    }
    s.push_str(&table(&rows));
    let changes = ab::changes_of(builds, &rows, |r| (r.stats.label.as_str(), r.figures()));
    s.push_str(&ab::change_table(builds, &changes));
    match full.map(|f| &f.outcome) {
        None => {
            let _ = writeln!(
                s,
                "\n`--full` rows left out (`RUTTER_BENCH_VERIFY=incremental`)."
            );
        }
        Some(Outcome::Clean(line)) => {
            let _ = writeln!(s, "\n`verify --full` on the generated history: `{line}`");
        }
        Some(Outcome::Findings(text)) => {
            let _ = writeln!(
                s,
                "\n**`verify --full` did not report the generated history clean:**\n\n```\n{text}\n```"
            );
        }
    }
    s
}
