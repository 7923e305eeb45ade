//! What the benchmarks share: the generated vaults (generation, `git-rutter init`, the cache
//! under `<target>/rutter-bench/` and its snapshot), the hermetic environment every git and
//! git-rutter command runs in, timing a process, and the machine line of the reports; the
//! interleaved A/B against `RUTTER_BENCH_BASE` (`ab.rs`, `base.rs`).
//!
//! Included by each bench binary with `#[path = "support/mod.rs"] mod support;`, so both use
//! the same cached vaults.

// Each bench binary uses only part of this module.
#![allow(dead_code)]

pub mod ab;
pub mod base;
pub mod server;

use std::fs::{self, File};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_git-rutter");
pub const SEED: u64 = 20260101;
pub const TRANSCRIPT_BYTES: u64 = 50 * 1024 * 1024;

/// One generated vault: its generator parameters.
pub struct Spec {
    pub name: &'static str,
    pub notes: u32,
    pub days: u32,
}

pub const SMALL: Spec = Spec {
    name: "small",
    notes: 100,
    days: 30,
};
pub const LARGE: Spec = Spec {
    name: "large",
    notes: 10_000,
    days: 3_650,
};

/// The hermetic environment every git and git-rutter command runs in.
pub struct Env {
    pub root: PathBuf,
    pub home: PathBuf,
    pub end_date: String,
}

/// What preparing a vault cost, in seconds (kept in `<dir>/SETUP` for cached runs).
pub struct Setup {
    pub generate: f64,
    pub git: f64,
    pub init: f64,
}

/// A generated, initialised vault.
pub struct Prepared {
    pub spec: &'static Spec,
    pub dir: PathBuf,
    pub vault: PathBuf,
    pub pristine: PathBuf,
    pub fixtures: PathBuf,
    pub big_transcript: PathBuf,
    pub refs: Vec<String>,
    pub setup: Setup,
    pub cached: bool,
}

impl Env {
    /// `<target>/rutter-bench`, found from the binary's path (`<target>/release/git-rutter`).
    pub fn new() -> Env {
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
    pub fn command(&self, program: &str) -> Command {
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
    pub fn run(&self, program: &str, args: &[&str], dir: &Path) {
        let out = self
            .command(program)
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
        ab::expect_success(&out, &format!("{program} {args:?}"));
    }
}

/// Today's date in UTC, `YYYY-MM-DD` (the real clock: a release build ignores RUTTER_TIMESTAMP).
pub fn today_utc() -> String {
    rutter::clock::now().day()
}

pub fn timed(f: impl FnOnce()) -> Duration {
    let t = Instant::now();
    f();
    t.elapsed()
}

// ---------------------------------------------------------------------------------------------
// Preparation (cached)
// ---------------------------------------------------------------------------------------------

/// Generates and initialises one vault and builds its big transcript, reusing what is cached.
pub fn prepare(env: &Env, spec: &'static Spec) -> Prepared {
    let dir = env.root.join(spec.name);
    // The layout line makes a vault initialised before the year folders be made again.
    let key = format!(
        "gen_vault.py --notes {} --days {} --seed {SEED} --end-date {}\nref layout: year folders\n",
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

pub fn utf8(p: &Path) -> &str {
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

pub fn base_len_file(transcript: &Path) -> PathBuf {
    transcript.with_extension("base-len")
}

// ---------------------------------------------------------------------------------------------
// Snapshot and restore
// ---------------------------------------------------------------------------------------------

/// Makes `dst` a copy of `src` again, touching only what differs: a file whose size or mtime
/// differs is copied back with its mtime, an entry `src` lacks is removed, and directory mtimes
/// are put back (the dedupe cache compares the sessions folder's mtime). A missing `dst` is
/// copied whole.
pub fn sync_tree(src: &Path, dst: &Path) {
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

pub fn remove(path: &Path) {
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
/// objects; no index), so every case starts from the same state whatever earlier runs
/// appended; then flushes dirty pages so writeback does not run during the measurement.
pub fn restore_vault(p: &Prepared) -> PathBuf {
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

/// The index database and its SQLite side files.
pub fn index_files(vault: &Path) -> [PathBuf; 3] {
    let dir = vault.join(".git/rutter");
    ["index.sqlite", "index.sqlite-wal", "index.sqlite-shm"].map(|f| dir.join(f))
}

/// Removes the vault's index, so the next `reindex` builds it from nothing.
pub fn delete_index(vault: &Path) {
    for f in index_files(vault) {
        if f.exists() {
            remove(&f);
        }
    }
}

/// `sync`.
pub fn flush_disks() {
    let ok = Command::new("sync").status().is_ok_and(|s| s.success());
    assert!(ok, "sync failed");
}

pub fn canonical(p: &Path) -> PathBuf {
    p.canonicalize()
        .unwrap_or_else(|e| panic!("canonicalize {}: {e}", p.display()))
}

// ---------------------------------------------------------------------------------------------
// Measurement and report
// ---------------------------------------------------------------------------------------------

/// Spawns `cmd`, writes `stdin` and waits for it; the time covers all three.
pub fn time_process(cmd: &mut Command, stdin: &[u8]) -> (Duration, Output) {
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

/// One process run as [`measured`] saw it.
pub struct Measured {
    /// Spawn to exit.
    pub took: Duration,
    /// Spawn to the first newline on stdout (`None`: it printed none).
    pub first_line: Option<Duration>,
    /// User and system CPU time of the process (`wait4`'s rusage).
    pub cpu: Duration,
    /// Peak resident memory of the process in KiB (`ru_maxrss`, the kernel's high-water mark).
    pub peak_kib: u64,
    pub out: Output,
}

/// Like [`time_process`], and also when the first line of stdout arrived (stdout is read as it
/// comes), and the child's CPU time and peak memory from its own rusage (`wait4`), so a figure
/// never mixes in another process.
pub fn measured(cmd: &mut Command, stdin: &[u8]) -> Measured {
    measured_keeping(cmd, stdin, true)
}

/// [`measured`] that reads stdout as it comes but keeps none of it (`out.stdout` is empty): a
/// child's peak memory starts from this process's own peak when it is spawned, so a large
/// output kept once would be the floor of every peak measured after it.
pub fn measured_discarding(cmd: &mut Command, stdin: &[u8]) -> Measured {
    measured_keeping(cmd, stdin, false)
}

// The child is reaped by `wait4` below, which std's `wait` would hide the rusage of.
#[allow(clippy::zombie_processes)]
fn measured_keeping(cmd: &mut Command, stdin: &[u8], keep: bool) -> Measured {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().expect("spawn git-rutter");
    let pid = child.id() as libc::pid_t;
    let mut pipe = child.stdin.take().expect("piped stdin");
    pipe.write_all(stdin).expect("write stdin");
    drop(pipe);
    let mut err_pipe = child.stderr.take().expect("piped stderr");
    let err = std::thread::spawn(move || {
        let mut buf = Vec::new();
        err_pipe.read_to_end(&mut buf).expect("read stderr");
        buf
    });
    let mut out_pipe = child.stdout.take().expect("piped stdout");
    let (mut stdout, mut first_line, mut chunk) = (Vec::new(), None, vec![0u8; 1 << 16]);
    loop {
        let n = out_pipe.read(&mut chunk).expect("read stdout");
        if n == 0 {
            break;
        }
        if first_line.is_none() && chunk[..n].contains(&b'\n') {
            first_line = Some(start.elapsed());
        }
        if keep {
            stdout.extend_from_slice(&chunk[..n]);
        }
    }
    let (mut status, mut usage) = (0, unsafe { std::mem::zeroed::<libc::rusage>() });
    // SAFETY: `pid` is our unreaped child; `status` and `usage` are valid for writes.
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let took = start.elapsed();
    assert_eq!(reaped, pid, "wait4 for git-rutter failed");
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    Measured {
        took,
        first_line,
        cpu: tv(usage.ru_utime) + tv(usage.ru_stime),
        peak_kib: usage.ru_maxrss as u64,
        out: Output {
            status: std::process::ExitStatus::from_raw(status),
            stdout,
            stderr: err.join().expect("the stderr reader"),
        },
    }
}

/// [`measured`] for `git-rutter --vault V <args>`; panics with its output unless it exits 0.
pub fn rutter_measured(env: &Env, vault: &Path, args: &[&str]) -> Measured {
    let mut cmd = env.command(BIN);
    cmd.args(["--vault", utf8(vault)]).args(args);
    let m = measured(&mut cmd, b"");
    assert!(
        m.out.status.success(),
        "git-rutter {args:?} failed ({}); stdout:\n{}\nstderr:\n{}",
        m.out.status,
        String::from_utf8_lossy(&m.out.stdout),
        String::from_utf8_lossy(&m.out.stderr)
    );
    m
}

/// One measured process: wall time from spawn to exit, its own CPU time (user + system) and
/// peak resident memory, from `wait4`; `output` is `None` when it was killed at the timeout.
pub struct Process {
    pub wall: Duration,
    pub cpu: Duration,
    pub peak_mib: f64,
    pub output: Option<Output>,
}

/// Spawns `cmd` (stdin closed, stdout and stderr drained on threads), reaps it with `wait4` for
/// its resource usage, and kills it after `timeout`.
// The child is reaped by `wait4` itself, which clippy cannot see.
#[allow(clippy::zombie_processes)]
pub fn measure_process(cmd: &mut Command, timeout: Duration) -> Process {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().expect("spawn the measured process");
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let pid = child.id() as libc::pid_t;
    // SAFETY: wait4 writes only the status and the rusage struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let mut status = 0;
    let mut killed = false;
    loop {
        let flags = if killed { 0 } else { libc::WNOHANG };
        let r = unsafe { libc::wait4(pid, &mut status, flags, &mut usage) };
        if r == pid {
            break;
        }
        assert!(r == 0, "wait4 failed: {}", std::io::Error::last_os_error());
        if start.elapsed() >= timeout {
            let _ = child.kill();
            killed = true;
        } else {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    let wall = start.elapsed();
    let t = |tv: libc::timeval| Duration::new(tv.tv_sec as u64, tv.tv_usec as u32 * 1000);
    let (stdout, stderr) = (
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default(),
    );
    Process {
        wall,
        cpu: t(usage.ru_utime) + t(usage.ru_stime),
        peak_mib: usage.ru_maxrss as f64 / 1024.0,
        output: (!killed).then(|| Output {
            status: std::process::ExitStatus::from_raw(status),
            stdout,
            stderr,
        }),
    }
}

/// Median, nearest-rank p95 and min of sorted timings.
pub fn median_p95_min(sorted: &[f64]) -> (f64, f64, f64) {
    let n = sorted.len();
    (sorted[n / 2], sorted[(n * 95).div_ceil(100) - 1], sorted[0])
}

/// `nproc`, `uname -r`, the CPU model, the git version and the date.
pub fn machine() -> String {
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

// ---------------------------------------------------------------------------------------------
// Shared by the MCP and verify benchmarks: timed runs, their figures and a table
// ---------------------------------------------------------------------------------------------

/// The figures of one case, in milliseconds, and its target (none: reported only).
pub struct Stats {
    pub label: String,
    pub runs: usize,
    pub median: f64,
    pub p95: f64,
    pub min: f64,
    pub target: Option<f64>,
    /// CPU time per run and peak memory, where the bench measured them (a server's, per call).
    pub usage: Option<Usage>,
}

/// What a process spent over a case: CPU milliseconds per run and its peak resident MiB.
#[derive(Clone, Copy)]
pub struct Usage {
    pub cpu_ms: f64,
    pub peak_mib: f64,
}

impl Usage {
    /// Over runs of a new process each: the median CPU time and the largest peak.
    pub fn of_runs(mut cpu_ms: Vec<f64>, peak_mib: impl IntoIterator<Item = f64>) -> Usage {
        cpu_ms.sort_by(f64::total_cmp);
        Usage {
            cpu_ms: cpu_ms.get(cpu_ms.len() / 2).copied().unwrap_or(0.0),
            peak_mib: peak_mib.into_iter().fold(0.0, f64::max),
        }
    }
}

impl Stats {
    /// Median, p95 and min of `ms` (any order).
    pub fn of(label: &str, mut ms: Vec<f64>, target: Option<f64>) -> Stats {
        ms.sort_by(f64::total_cmp);
        let (median, p95, min) = median_p95_min(&ms);
        Stats {
            label: label.to_owned(),
            runs: ms.len(),
            median,
            p95,
            min,
            target,
            usage: None,
        }
    }

    /// These figures with the CPU and peak memory measured over the same runs.
    pub fn with_usage(self, usage: Usage) -> Stats {
        Stats {
            usage: Some(usage),
            ..self
        }
    }

    /// `met`, `missed` or `report only`.
    pub fn verdict(&self) -> &'static str {
        match self.target {
            Some(t) if self.median <= t => "met",
            Some(_) => "missed",
            None => "report only",
        }
    }

    /// [`Stats::verdict`] with a memory target too: a row with either target is met only when
    /// its median time and its largest peak (`peak_mib`) meet both.
    pub fn verdict_with_memory(&self, peak_mib: f64, mib_target: Option<f64>) -> &'static str {
        match (self.verdict(), mib_target) {
            ("report only", None) => "report only",
            ("missed", _) => "missed",
            (_, Some(t)) if peak_mib > t => "missed",
            _ => "met",
        }
    }

    /// The targets as the tables print them: `≤ T ms`, `≤ M MiB`, both, or `–`.
    pub fn targets_text(&self, mib_target: Option<f64>) -> String {
        let mut target: Vec<String> = self.target.iter().map(|t| format!("≤ {t} ms")).collect();
        target.extend(mib_target.iter().map(|t| format!("≤ {t} MiB")));
        match target.is_empty() {
            true => "–".to_owned(),
            false => target.join(", "),
        }
    }
}

/// Milliseconds of `runs` calls of `once` after `warmup` unmeasured ones, in run order; `once`
/// gets the call's number, warm-ups included.
pub fn timed_runs(warmup: usize, runs: usize, mut once: impl FnMut(usize) -> Duration) -> Vec<f64> {
    for i in 0..warmup {
        once(i);
    }
    (warmup..warmup + runs)
        .map(|i| once(i).as_secs_f64() * 1e3)
        .collect()
}

/// A markdown table of the cases: runs, median, p95, min, target, result; with CPU per run and
/// peak memory when any case measured them.
pub fn stats_table<'a>(stats: impl IntoIterator<Item = &'a Stats>) -> String {
    let stats: Vec<&Stats> = stats.into_iter().collect();
    let usage = stats.iter().any(|st| st.usage.is_some());
    let mut s = String::from("| case | runs | median ms | p95 ms | min ms |");
    s.push_str(match usage {
        true => " CPU ms / run | peak MiB | target (median) | result |\n",
        false => " target (median) | result |\n",
    });
    s.push_str("|---|---:|---:|---:|---:|");
    s.push_str(if usage {
        "---:|---:|---|---|\n"
    } else {
        "---|---|\n"
    });
    for st in stats {
        let target = st.target.map_or("–".to_owned(), |t| format!("≤ {t} ms"));
        let columns = match (usage, st.usage) {
            (false, _) => String::new(),
            (true, Some(u)) => format!(" {:.2} | {:.1} |", u.cpu_ms, u.peak_mib),
            (true, None) => " – | – |".to_owned(),
        };
        s.push_str(&format!(
            "| {} | {} | {:.2} | {:.2} | {:.2} |{columns} {target} | {} |\n",
            st.label,
            st.runs,
            st.median,
            st.p95,
            st.min,
            st.verdict()
        ));
    }
    s
}

/// Runs `git-rutter --vault V <args>` in the hermetic environment, timed from spawn to exit;
/// panics with its output unless it exits 0.
pub fn rutter_ok(env: &Env, vault: &Path, args: &[&str]) -> (Duration, Output) {
    let mut cmd = env.command(BIN);
    cmd.args(["--vault", utf8(vault)]).args(args);
    let (took, out) = time_process(&mut cmd, b"");
    ab::expect_success(&out, &format!("git-rutter {args:?}"));
    (took, out)
}
