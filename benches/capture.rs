//! Capture latency: one `git-rutter capture` through the Stop hook, timed from process spawn to
//! exit, including the read of the transcript, the append to today's day file and the commit to
//! `refs/rutter/records` (DESIGN §9, first row).
//!
//! Run with `cargo bench --bench capture` (needs `python3` and `git` on PATH; `RUTTER_BENCH_RUNS`
//! sets the measured runs per case, default 41). It:
//!
//! 1. generates two vaults with `tools/gen_vault.py` (small: 100 notes / 30 day files; large:
//!    10,000 notes / 3,650 day files; the last day is today, UTC, so captures append to an
//!    existing day file), cached under `<target>/rutter-bench/<name>/` and regenerated when the
//!    generator's parameters (the end date included) change or `MANIFEST.json` is missing;
//! 2. makes each a git repository as a user would (notes committed on `main`, then
//!    `git-rutter init`), in a hermetic environment (HOME under `<target>/rutter-bench/home`, no
//!    system git config), and keeps a snapshot of the result;
//! 3. builds a ~50 MB Claude Code transcript per vault from the fixture's lines (cached);
//! 4. per case, restores the vault from its snapshot; before each timed run appends one
//!    assistant line whose directive has a unique summary (so dedupe never short-circuits) and
//!    cites the fixture's two notes, then feeds the Stop payload on stdin;
//! 5. runs 5 warm-ups and the measured captures per case, and prints (and writes to
//!    `<target>/rutter-bench/capture.md`) median, p95 and min against the DESIGN §9 targets.
//!    A missed target is reported, not fatal; a failed capture panics (non-zero exit).
//!
//! A third case captures into the large vault from the fixture's own ~0.8 MB transcript, to
//! show the transcript's size does not matter; a last row times `git-rutter --version`, the
//! cost of starting the process at all.

use std::fmt::Write as _;
use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const BIN: &str = env!("CARGO_BIN_EXE_git-rutter");
const SEED: u64 = 20260101;
const WARMUP: usize = 5;
const DEFAULT_RUNS: usize = 41;
const TRANSCRIPT_BYTES: u64 = 50 * 1024 * 1024;
const PAYLOAD_CWD: &str = "/home/user/work/proj-alpha";
const TARGET_LARGE_MEDIAN_MS: f64 = 15.0;
const TARGET_RATIO: f64 = 1.5;

/// One generated vault: its generator parameters.
struct Spec {
    name: &'static str,
    notes: u32,
    days: u32,
}

const SMALL: Spec = Spec {
    name: "small",
    notes: 100,
    days: 30,
};
const LARGE: Spec = Spec {
    name: "large",
    notes: 10_000,
    days: 3_650,
};

/// The hermetic environment every git and git-rutter command runs in.
struct Env {
    root: PathBuf,
    home: PathBuf,
    end_date: String,
}

/// What preparing a vault cost, in seconds (kept in `<dir>/SETUP` for cached runs).
struct Setup {
    generate: f64,
    git: f64,
    init: f64,
}

/// A vault ready for captures.
struct Prepared {
    spec: &'static Spec,
    dir: PathBuf,
    vault: PathBuf,
    pristine: PathBuf,
    fixtures: PathBuf,
    big_transcript: PathBuf,
    refs: Vec<String>,
    setup: Setup,
    cached: bool,
}

/// One measured capture case.
struct Case {
    label: String,
    vault: PathBuf,
    transcript: PathBuf,
    session: String,
    refs: Vec<String>,
}

/// The figures of one case, in milliseconds.
struct Stats {
    label: String,
    transcript: String,
    runs: usize,
    median: f64,
    p95: f64,
    min: f64,
}

fn main() {
    // `cargo test --benches` runs this binary without `--bench`: do nothing then.
    if !std::env::args().any(|a| a == "--bench") {
        println!("capture benchmark: run it with `cargo bench --bench capture`");
        return;
    }
    let env = Env::new();
    let runs = runs_from_env();
    let small = prepare(&env, &SMALL);
    let large = prepare(&env, &LARGE);

    let small_case = big_transcript_case(&small);
    let mut stats = vec![measure(&small_case, runs, |tag| {
        capture_once(&env, &small_case, tag)
    })];
    let large_case = big_transcript_case(&large);
    stats.push(measure(&large_case, runs, |tag| {
        capture_once(&env, &large_case, tag)
    }));
    let fixture_case = fixture_transcript_case(&large);
    stats.push(measure(&fixture_case, runs, |tag| {
        capture_once(&env, &fixture_case, tag)
    }));
    stats.push(measure_baseline(&env, runs));

    let report = render(&stats, &[&small, &large]);
    print!("\n{report}");
    let out = env.root.join("capture.md");
    fs::write(&out, &report).expect("write capture.md");
    println!("\nwritten to {}", out.display());
}

/// `RUTTER_BENCH_RUNS`, else the default.
fn runs_from_env() -> usize {
    match std::env::var("RUTTER_BENCH_RUNS") {
        Ok(v) => v
            .parse()
            .ok()
            .filter(|&n| n > 0)
            .expect("RUTTER_BENCH_RUNS must be a positive integer"),
        Err(_) => DEFAULT_RUNS,
    }
}

impl Env {
    /// `<target>/rutter-bench`, found from the binary's path (`<target>/release/git-rutter`).
    fn new() -> Env {
        let target = Path::new(BIN)
            .parent()
            .and_then(Path::parent)
            .expect("the git-rutter binary lies in <target>/<profile>/");
        let root = target.join("rutter-bench");
        let home = root.join("home");
        fs::create_dir_all(home.join(".config")).expect("create the bench HOME");
        Env {
            root,
            home,
            end_date: today_utc(),
        }
    }

    /// A command with a cleared environment: PATH, the temp HOME, no system config, a fixed
    /// identity.
    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_DATA_HOME", self.home.join(".local/share"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Bench User")
            .env("GIT_AUTHOR_EMAIL", "bench@example.com")
            .env("GIT_COMMITTER_NAME", "Bench User")
            .env("GIT_COMMITTER_EMAIL", "bench@example.com")
            .current_dir(&self.home)
            .stdin(Stdio::null());
        c
    }

    /// Runs a setup command in `dir` to success, or panics with its output.
    fn run(&self, program: &str, args: &[&str], dir: &Path) {
        let out = self
            .command(program)
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
        assert!(
            out.status.success(),
            "{program} {args:?} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Today's date in UTC, `YYYY-MM-DD` (the real clock: a release build ignores RUTTER_TIMESTAMP).
fn today_utc() -> String {
    rutter::clock::now().day()
}

fn timed(f: impl FnOnce()) -> Duration {
    let t = Instant::now();
    f();
    t.elapsed()
}

// ---------------------------------------------------------------------------------------------
// Preparation (cached)
// ---------------------------------------------------------------------------------------------

/// Generates and initialises one vault and builds its big transcript, reusing what is cached.
fn prepare(env: &Env, spec: &'static Spec) -> Prepared {
    let dir = env.root.join(spec.name);
    let key = format!(
        "gen_vault.py --notes {} --days {} --seed {SEED} --end-date {}\n",
        spec.notes, spec.days, env.end_date
    );
    let (vault, pristine, fixtures) = (
        dir.join("vault"),
        dir.join("pristine"),
        dir.join("fixtures"),
    );
    let cached = fs::read_to_string(dir.join("KEY")).is_ok_and(|k| k == key)
        && pristine.join("MANIFEST.json").is_file()
        && dir.join("SETUP").is_file();
    if !cached {
        println!(
            "preparing the {} vault ({} notes, {} days; the large one takes about a minute)...",
            spec.name, spec.notes, spec.days
        );
        if dir.exists() {
            fs::remove_dir_all(&dir).expect("remove the stale bench vault");
        }
        fs::create_dir_all(&dir).expect("create the bench dir");
        let generate = timed(|| generate_vault(env, spec, &vault, &fixtures));
        let (git, init) = init_vault(env, &vault);
        sync_tree(&vault, &pristine);
        flush_disks();
        let setup = [generate, git, init].map(|d| format!("{:.3}", d.as_secs_f64()));
        fs::write(dir.join("SETUP"), setup.join(" ")).expect("write SETUP");
        fs::write(dir.join("KEY"), &key).expect("write KEY");
    }
    let big_transcript = dir.join("transcript-50mb.jsonl");
    ensure_big_transcript(&fixtures, &big_transcript);
    Prepared {
        spec,
        setup: read_setup(&dir),
        refs: cited_refs(&fixtures),
        dir,
        vault,
        pristine,
        fixtures,
        big_transcript,
        cached,
    }
}

/// `python3 tools/gen_vault.py ...` into `vault`, with its fixtures in `fixtures`.
fn generate_vault(env: &Env, spec: &Spec, vault: &Path, fixtures: &Path) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/gen_vault.py");
    let (notes, days, seed) = (
        spec.notes.to_string(),
        spec.days.to_string(),
        SEED.to_string(),
    );
    let args = [
        utf8(&script),
        "--out",
        utf8(vault),
        "--notes",
        &notes,
        "--days",
        &days,
        "--seed",
        &seed,
        "--end-date",
        &env.end_date,
        "--fixtures",
        utf8(fixtures),
    ];
    env.run("python3", &args, &env.root);
}

fn utf8(p: &Path) -> &str {
    p.to_str()
        .unwrap_or_else(|| panic!("{} is not UTF-8", p.display()))
}

/// Commits the notes (not `_librarian/`) on `main` and packs them in the foreground (what the
/// commit's detached `gc --auto` would do, racing the snapshot and the first runs), then runs
/// `git-rutter init`. Returns the time of the git part and of `init`. (The short pathspec
/// `:!_librarian` is rejected by git: `_` is reserved pathspec magic.)
fn init_vault(env: &Env, vault: &Path) -> (Duration, Duration) {
    let git = timed(|| {
        env.run("git", &["init", "-q", "-b", "main"], vault);
        let notes_only = ["add", "-A", "--", ".", ":(exclude)_librarian"];
        env.run("git", &notes_only, vault);
        env.run(
            "git",
            &["-c", "gc.auto=0", "commit", "-q", "-m", "notes"],
            vault,
        );
        env.run("git", &["gc", "-q"], vault);
    });
    let init = timed(|| env.run(BIN, &["--vault", utf8(vault), "init"], vault));
    (git, init)
}

fn read_setup(dir: &Path) -> Setup {
    let text = fs::read_to_string(dir.join("SETUP")).expect("read SETUP");
    let v: Vec<f64> = text
        .split_whitespace()
        .map(|s| s.parse().expect("SETUP holds seconds"))
        .collect();
    assert_eq!(v.len(), 3, "SETUP holds three figures: {text:?}");
    Setup {
        generate: v[0],
        git: v[1],
        init: v[2],
    }
}

/// The two note paths the fixture's directive cites.
fn cited_refs(fixtures: &Path) -> Vec<String> {
    let text = fs::read_to_string(fixtures.join("cited.json")).expect("read cited.json");
    let v: serde_json::Value = serde_json::from_str(&text).expect("cited.json is JSON");
    v["refs"]
        .as_array()
        .expect("cited.json has refs")
        .iter()
        .map(|r| r.as_str().expect("a ref is a string").to_owned())
        .collect()
}

/// Writes the fixture's non-final lines (all but its directive turn) over and over until the
/// file holds at least 50 MiB, unless done already. Its base length is kept beside it so each
/// case can cut off the lines earlier runs appended.
fn ensure_big_transcript(fixtures: &Path, path: &Path) {
    if base_len_file(path).is_file() {
        return;
    }
    let lines = fixture_lines(&fixtures.join("transcript-large.jsonl"));
    let body = lines[..lines.len() - 1].concat();
    let mut w = BufWriter::new(File::create(path).expect("create the big transcript"));
    let mut written = 0u64;
    while written < TRANSCRIPT_BYTES {
        w.write_all(body.as_bytes())
            .expect("write the big transcript");
        written += body.len() as u64;
    }
    w.flush().expect("flush the big transcript");
    fs::write(base_len_file(path), written.to_string()).expect("write the base length");
}

/// The fixture's lines, each with its `\n`.
fn fixture_lines(path: &Path) -> Vec<String> {
    let f = File::open(path).unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    BufReader::new(f)
        .lines()
        .map(|l| l.expect("read a fixture line") + "\n")
        .collect()
}

fn base_len_file(transcript: &Path) -> PathBuf {
    transcript.with_extension("base-len")
}

// ---------------------------------------------------------------------------------------------
// Snapshot and restore
// ---------------------------------------------------------------------------------------------

/// Makes `dst` a copy of `src` again, touching only what differs: a file whose size or mtime
/// differs is copied back with its mtime, an entry `src` lacks is removed, and directory mtimes
/// are put back (the dedupe cache compares the sessions folder's mtime). A missing `dst` is
/// copied whole.
fn sync_tree(src: &Path, dst: &Path) {
    if !dst.is_dir() {
        fs::create_dir(dst).unwrap_or_else(|e| panic!("create {}: {e}", dst.display()));
    }
    let mut wanted = std::collections::HashSet::new();
    for entry in read_dir(src) {
        let (from, to) = (entry.path(), dst.join(entry.file_name()));
        let kind = entry.file_type().expect("file type");
        if kind.is_dir() {
            sync_tree(&from, &to);
        } else if kind.is_file() {
            sync_file(&from, &to);
        } else {
            panic!(
                "{}: only files and directories are expected",
                from.display()
            );
        }
        wanted.insert(entry.file_name());
    }
    for entry in read_dir(dst) {
        if !wanted.contains(&entry.file_name()) {
            remove(&entry.path());
        }
    }
    copy_mtime(src, dst);
}

fn read_dir(dir: &Path) -> Vec<fs::DirEntry> {
    fs::read_dir(dir)
        .and_then(|rd| rd.collect())
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
}

/// Copies `from` over `to` unless both have the same size and mtime.
fn sync_file(from: &Path, to: &Path) {
    let a = fs::metadata(from).expect("stat a snapshot file");
    let same = fs::symlink_metadata(to)
        .is_ok_and(|b| b.is_file() && b.len() == a.len() && b.modified().ok() == a.modified().ok());
    if !same {
        if fs::symlink_metadata(to).is_ok() {
            remove(to);
        }
        fs::copy(from, to).unwrap_or_else(|e| panic!("copy to {}: {e}", to.display()));
        copy_mtime(from, to);
    }
}

fn remove(path: &Path) {
    let is_dir = fs::symlink_metadata(path).is_ok_and(|m| m.is_dir());
    let done = if is_dir {
        fs::remove_dir_all(path)
    } else {
        fs::remove_file(path)
    };
    done.unwrap_or_else(|e| panic!("remove {}: {e}", path.display()));
}

fn copy_mtime(from: &Path, to: &Path) {
    let modified = fs::metadata(from)
        .and_then(|m| m.modified())
        .expect("mtime");
    File::open(to)
        .and_then(|f| f.set_times(fs::FileTimes::new().set_modified(modified)))
        .unwrap_or_else(|e| panic!("set the mtime of {}: {e}", to.display()));
}

/// Puts back the vault as `init` left it (day file, ref, reflog, dedupe cache, journal, loose
/// objects), so every case starts from the same state whatever earlier runs appended; then
/// flushes dirty pages so writeback does not run during the measurement.
fn restore_vault(p: &Prepared) -> PathBuf {
    let took = timed(|| {
        sync_tree(&p.pristine, &p.vault);
        flush_disks();
    });
    println!(
        "restored the {} vault from its snapshot in {:.2} s",
        p.spec.name,
        took.as_secs_f64()
    );
    canonical(&p.vault)
}

/// `sync`.
fn flush_disks() {
    let ok = Command::new("sync").status().is_ok_and(|s| s.success());
    assert!(ok, "sync failed");
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize()
        .unwrap_or_else(|e| panic!("canonicalize {}: {e}", p.display()))
}

// ---------------------------------------------------------------------------------------------
// Cases and measurement
// ---------------------------------------------------------------------------------------------

/// The vault, restored, with its ~50 MB transcript cut back to its base length.
fn big_transcript_case(p: &Prepared) -> Case {
    let vault = restore_vault(p);
    let base: u64 = fs::read_to_string(base_len_file(&p.big_transcript))
        .expect("read the base length")
        .trim()
        .parse()
        .expect("the base length is a number");
    OpenOptions::new()
        .write(true)
        .open(&p.big_transcript)
        .and_then(|f| f.set_len(base))
        .expect("cut the big transcript back");
    Case {
        label: format!("{} vault, 50 MB transcript", p.spec.name),
        vault,
        transcript: canonical(&p.big_transcript),
        session: format!("bench-capture-{}", p.spec.name),
        refs: p.refs.clone(),
    }
}

/// The vault, restored, with a fresh copy of the fixture's own (~0.8 MB) transcript.
fn fixture_transcript_case(p: &Prepared) -> Case {
    let vault = restore_vault(p);
    let copy = p.dir.join("transcript-fixture.jsonl");
    fs::copy(p.fixtures.join("transcript-large.jsonl"), &copy)
        .expect("copy the fixture transcript");
    Case {
        label: format!("{} vault, fixture transcript", p.spec.name),
        vault,
        transcript: canonical(&copy),
        session: format!("bench-capture-{}", p.spec.name),
        refs: p.refs.clone(),
    }
}

/// Warm-ups, then `runs` timed calls of `once` (given a tag unique to the call).
fn measure(case: &Case, runs: usize, once: impl Fn(&str) -> Duration) -> Stats {
    println!("{}: {WARMUP} warm-up + {runs} runs...", case.label);
    let ms = timings(runs, once);
    let size = fs::metadata(&case.transcript)
        .expect("stat the transcript")
        .len();
    summarise(&case.label, &format!("{:.1}", size as f64 / 1e6), ms)
}

/// `git-rutter --version` through the same harness: process start-up and exit alone.
fn measure_baseline(env: &Env, runs: usize) -> Stats {
    let label = "baseline: `git-rutter --version`";
    println!("{label}: {WARMUP} warm-up + {runs} runs...");
    let ms = timings(runs, |_| {
        let (took, out) = time_process(env.command(BIN).arg("--version"), b"");
        assert!(out.status.success(), "git-rutter --version failed: {out:?}");
        took
    });
    summarise(label, "–", ms)
}

/// Milliseconds of `runs` calls after `WARMUP` unmeasured ones, sorted.
fn timings(runs: usize, once: impl Fn(&str) -> Duration) -> Vec<f64> {
    let nonce = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_nanos();
    for i in 0..WARMUP {
        once(&format!("warm-up {nonce}-{i}"));
    }
    let mut ms: Vec<f64> = (0..runs)
        .map(|i| once(&format!("run {nonce}-{i}")).as_secs_f64() * 1e3)
        .collect();
    ms.sort_by(f64::total_cmp);
    ms
}

/// Median, nearest-rank p95 and min of sorted timings.
fn summarise(label: &str, transcript: &str, ms: Vec<f64>) -> Stats {
    Stats {
        label: label.to_owned(),
        transcript: transcript.to_owned(),
        runs: ms.len(),
        median: ms[ms.len() / 2],
        p95: ms[(ms.len() * 95).div_ceil(100) - 1],
        min: ms[0],
    }
}

/// Appends a directive line with a unique summary, then times one capture; panics unless it
/// captured and committed with both refs resolved.
fn capture_once(env: &Env, case: &Case, tag: &str) -> Duration {
    let summary = format!("Bench capture {tag}: kept the latency figures.");
    append_directive(&case.transcript, &summary, &case.refs);
    let payload = serde_json::json!({
        "session_id": case.session,
        "transcript_path": case.transcript,
        "cwd": PAYLOAD_CWD,
        "hook_event_name": "Stop",
    });
    let mut cmd = env.command(BIN);
    cmd.args(["capture", "--client", "claude"])
        .env("LIBRARIAN_VAULT_PATH", &case.vault);
    let (took, out) = time_process(&mut cmd, payload.to_string().as_bytes());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success()
            && stderr.contains("captured 1 entry")
            && stderr.contains("committed ")
            && !stderr.contains("rejected"),
        "capture failed ({}, {tag}), {}; stderr:\n{stderr}",
        case.label,
        out.status
    );
    took
}

/// Spawns `cmd`, writes `stdin` and waits for it; the time covers all three.
fn time_process(cmd: &mut Command, stdin: &[u8]) -> (Duration, Output) {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().expect("spawn git-rutter");
    let mut pipe = child.stdin.take().expect("piped stdin");
    pipe.write_all(stdin).expect("write stdin");
    drop(pipe);
    let out = child.wait_with_output().expect("wait for git-rutter");
    (start.elapsed(), out)
}

/// One Claude Code assistant line whose text ends with a directive.
fn append_directive(transcript: &Path, summary: &str, refs: &[String]) {
    let directive = serde_json::json!({ "summary": summary, "refs": refs });
    let text = format!("Done.\n\n<!-- librarian-session {directive} -->");
    let line = serde_json::json!({
        "type": "assistant",
        "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
    });
    let mut f = OpenOptions::new()
        .append(true)
        .open(transcript)
        .expect("open the transcript");
    writeln!(f, "{line}").expect("append the directive line");
}

// ---------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------

/// The markdown report: machine, timings, targets, setup costs.
fn render(stats: &[Stats], vaults: &[&Prepared]) -> String {
    let mut s = String::from("# git-rutter capture benchmark\n\n");
    let _ = writeln!(s, "{}\n", machine());
    s.push_str("| case | transcript MB | runs | median ms | p95 ms | min ms |\n");
    s.push_str("|---|---:|---:|---:|---:|---:|\n");
    for st in stats {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.2} | {:.2} | {:.2} |",
            st.label, st.transcript, st.runs, st.median, st.p95, st.min
        );
    }
    s.push('\n');
    s.push_str(&render_targets(&stats[0], &stats[1]));
    s.push('\n');
    s.push_str(&render_setup(vaults));
    s
}

fn render_targets(small: &Stats, large: &Stats) -> String {
    let ratio = large.median / small.median;
    let verdict = |ok: bool| if ok { "PASS" } else { "FAIL" };
    let mut s = String::from("| DESIGN §9 target | measured | result |\n|---|---:|---|\n");
    let _ = writeln!(
        s,
        "| large median ≤ {TARGET_LARGE_MEDIAN_MS} ms | {:.2} ms | {} |",
        large.median,
        verdict(large.median <= TARGET_LARGE_MEDIAN_MS)
    );
    let _ = writeln!(
        s,
        "| large / small median ≤ {TARGET_RATIO} | {ratio:.2} | {} |",
        verdict(ratio <= TARGET_RATIO)
    );
    s
}

fn render_setup(vaults: &[&Prepared]) -> String {
    let mut s = String::from(
        "| vault | notes | day files | gen_vault.py s | git add + commit + gc s | git-rutter init s | this run |\n\
         |---|---:|---:|---:|---:|---:|---|\n",
    );
    for p in vaults {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.1} | {:.1} | {:.1} | {} |",
            p.spec.name,
            p.spec.notes,
            p.spec.days,
            p.setup.generate,
            p.setup.git,
            p.setup.init,
            if p.cached { "cached" } else { "generated" }
        );
    }
    s
}

/// `nproc`, `uname -r`, the CPU model, the git version and the date.
fn machine() -> String {
    let cmd = |p: &str, a: &[&str]| {
        Command::new(p)
            .args(a)
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_else(|| "?".into())
    };
    let cpu = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        })
        .unwrap_or_else(|| "?".into());
    format!(
        "Machine: {} cores (nproc), kernel {} (uname -r), {cpu}, {}; {} (UTC).",
        cmd("nproc", &[]),
        cmd("uname", &["-r"]),
        cmd("git", &["--version"]),
        today_utc()
    )
}
