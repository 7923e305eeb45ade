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
//! 4. per case, restores the vault from its snapshot; before each timed run appends one turn
//!    (a prompt, then an assistant message whose directive has a unique summary, so dedupe
//!    never short-circuits, and cites the fixture's two notes), then feeds the Stop payload on
//!    stdin;
//! 5. runs 5 warm-ups and the measured captures per case, and prints (and writes to
//!    `<target>/rutter-bench/capture.md`) median, p95 and min against the DESIGN §9 targets.
//!    A missed target is reported, not fatal; a failed capture panics (non-zero exit).
//!
//! A third case captures into the large vault from the fixture's own ~0.8 MB transcript, to
//! show the transcript's size does not matter. A fourth makes each turn a long agentic one:
//! 32 tool calls whose results hold 64 KiB each (about 2 MB of transcript read back to the
//! prompt) and three directives, captured as three entries in one commit. Issue 13's growth
//! row captures into a third vault of 1,000 notes and 36,500 day files (a hundred years; its
//! ~0.8 GB of day files take several minutes to generate and adopt the first time, then are
//! cached like the others) and reports its median against the large vault's. A last row times
//! `git-rutter --version`, the cost of starting the process at all.
//!
//! With `RUTTER_BENCH_BASE=BIN` (an older `git-rutter`, or a revision such as `main`, built once:
//! `support/base.rs`), every case also captures with BIN, into its own copy of the vault
//! (`<vault's dir>/base-vault`, restored from the same snapshot) from its own copy of the
//! transcript, each turn appended to both, interleaved with this build run by run, the order
//! alternating (`support/ab.rs`). The base's row is printed under this build's and a last table
//! gives the change in time, CPU and peak memory; the targets are judged on this build's rows.

#[path = "support/mod.rs"]
mod support;

use std::fmt::Write as _;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use support::ab::{self, Builds, THIS};
use support::{
    base_len_file, canonical, machine, measured, median_p95_min, prepare, restore_vault, utf8, Env,
    Prepared, Spec, LARGE, SMALL,
};

const WARMUP: usize = 5;
const DEFAULT_RUNS: usize = 41;
const PAYLOAD_CWD: &str = "/home/user/work/proj-alpha";
const TARGET_LARGE_MEDIAN_MS: f64 = 15.0;
/// Issue 13's stricter capture target (the hook, 50 MB transcript).
const TARGET_ISSUE13_MEDIAN_MS: f64 = 6.0;
const TARGET_RATIO: f64 = 1.5;
/// Issue 13: a capture on the 36,500-day vault within 1.5× the 3,650-day (large) figure.
const TARGET_GROWTH_RATIO: f64 = 1.5;

/// Issue 13's growth vault: ten times the large vault's days, a tenth of its notes.
const GROWTH: Spec = Spec {
    name: "growth",
    notes: 1_000,
    days: 36_500,
};

/// One measured capture case.
struct Case {
    label: String,
    /// Each build's vault and transcript (this build's first; the base's own copies after).
    sides: Vec<Side>,
    session: String,
    refs: Vec<String>,
    /// The shape of each appended turn.
    turn: TurnShape,
}

/// What one appended turn holds besides its prompt.
#[derive(Clone, Copy)]
struct TurnShape {
    /// Tool calls, each followed by a result of [`TOOL_OUTPUT`] bytes, before the directives.
    tool_calls: usize,
    directives: usize,
}

const SHORT_TURN: TurnShape = TurnShape {
    tool_calls: 0,
    directives: 1,
};
const LONG_TURN: TurnShape = TurnShape {
    tool_calls: 32,
    directives: 3,
};
const TOOL_OUTPUT: usize = 64 * 1024;

/// Where one build captures: its vault and the transcript it reads.
struct Side {
    vault: PathBuf,
    transcript: PathBuf,
}

/// The figures of one case, in milliseconds (peak in MiB).
struct Stats {
    label: String,
    transcript: String,
    runs: usize,
    median: f64,
    p95: f64,
    min: f64,
    /// The median of the process's own CPU time (user + system).
    cpu: f64,
    /// The largest peak resident memory of a run.
    peak_mib: f64,
}

impl Stats {
    /// The row's medians, for the A/B change table.
    fn figures(&self) -> ab::Figures {
        ab::Figures {
            ms: self.median,
            cpu_ms: self.cpu,
            peak_mib: self.peak_mib,
        }
    }
}

/// One measured process: spawn to exit, its CPU time and its peak memory (`wait4`).
struct Run {
    wall: Duration,
    cpu: Duration,
    peak_kib: u64,
}

impl From<&support::Measured> for Run {
    fn from(m: &support::Measured) -> Run {
        Run {
            wall: m.took,
            cpu: m.cpu,
            peak_kib: m.peak_kib,
        }
    }
}

fn main() {
    // `cargo test --benches` runs this binary without `--bench`: do nothing then.
    if !std::env::args().any(|a| a == "--bench") {
        println!("capture benchmark: run it with `cargo bench --bench capture`");
        return;
    }
    let env = Env::new();
    let runs = runs_from_env();
    let builds = Builds::from_env(&env);
    let small = prepare(&env, &SMALL);
    let large = prepare(&env, &LARGE);

    let mut stats = vec![measure(
        &env,
        &builds,
        &big_transcript_case(&builds, &small),
        runs,
    )];
    let large_case = big_transcript_case(&builds, &large);
    stats.push(measure(&env, &builds, &large_case, runs));
    let fixture_case = fixture_transcript_case(&builds, &large);
    stats.push(measure(&env, &builds, &fixture_case, runs));
    let long_case = Case {
        label: "large vault, 50 MB transcript, long turns of 3 directives".into(),
        turn: LONG_TURN,
        ..big_transcript_case(&builds, &large)
    };
    stats.push(measure(&env, &builds, &long_case, runs));
    let growth = prepare(&env, &GROWTH);
    let growth_case = Case {
        label: "growth vault (1,000 notes, 36,500 day files), 50 MB transcript".into(),
        ..big_transcript_case(&builds, &growth)
    };
    stats.push(measure(&env, &builds, &growth_case, runs));
    stats.push(measure_baseline(&env, &builds, runs));

    let report = render(&builds, &stats, &[&small, &large, &growth]);
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

// ---------------------------------------------------------------------------------------------
// Cases and measurement
// ---------------------------------------------------------------------------------------------

/// The vault, restored, with its ~50 MB transcript cut back to its base length; for the base,
/// its own copy of both (`base-vault`, `transcript-50mb-base.jsonl`).
fn big_transcript_case(builds: &Builds, p: &Prepared) -> Case {
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
    let this = Side {
        vault: restore_vault(p),
        transcript: canonical(&p.big_transcript),
    };
    Case {
        label: format!("{} vault, 50 MB transcript", p.spec.name),
        sides: with_base(builds, this, p, "transcript-50mb-base.jsonl"),
        session: format!("bench-capture-{}", p.spec.name),
        refs: p.refs.clone(),
        turn: SHORT_TURN,
    }
}

/// `this`, and with a base its own side: a copy of the prepared vault as `init` left it and of
/// `this`'s transcript, named `transcript` beside the vault.
fn with_base(builds: &Builds, this: Side, p: &Prepared, transcript: &str) -> Vec<Side> {
    let base = (builds.len() > 1).then(|| {
        let copy = p.dir.join(transcript);
        fs::copy(&this.transcript, &copy).expect("copy the transcript for the base");
        Side {
            vault: ab::copy_of(p, "base-vault"),
            transcript: canonical(&copy),
        }
    });
    std::iter::once(this).chain(base).collect()
}

/// The vault, restored, with a fresh copy of the fixture's own (~0.8 MB) transcript.
fn fixture_transcript_case(builds: &Builds, p: &Prepared) -> Case {
    let copy = p.dir.join("transcript-fixture.jsonl");
    fs::copy(p.fixtures.join("transcript-large.jsonl"), &copy)
        .expect("copy the fixture transcript");
    let this = Side {
        vault: restore_vault(p),
        transcript: canonical(&copy),
    };
    Case {
        label: format!("{} vault, fixture transcript", p.spec.name),
        sides: with_base(builds, this, p, "transcript-fixture-base.jsonl"),
        session: format!("bench-capture-{}", p.spec.name),
        refs: p.refs.clone(),
        turn: SHORT_TURN,
    }
}

/// Warm-ups, then `runs` timed captures of each build, interleaved run by run, the order
/// alternating; each build's row (this build's first).
fn measure(env: &Env, builds: &Builds, case: &Case, runs: usize) -> Vec<Stats> {
    println!("{}: {WARMUP} warm-up + {runs} runs...", case.label);
    let ms = timings(builds, runs, |b, tag| {
        capture_once(env, builds.bin(b), case, &case.sides[b], tag)
    });
    let size = fs::metadata(&case.sides[THIS].transcript)
        .expect("stat the transcript")
        .len();
    let transcript = format!("{:.1}", size as f64 / 1e6);
    ms.into_iter()
        .enumerate()
        .map(|(b, r)| summarise(&builds.label(b, &case.label), &transcript, r))
        .collect()
}

/// `git-rutter --version` through the same harness: process start-up and exit alone.
fn measure_baseline(env: &Env, builds: &Builds, runs: usize) -> Vec<Stats> {
    let label = "baseline: `git-rutter --version`";
    println!("{label}: {WARMUP} warm-up + {runs} runs...");
    let ms = timings(builds, runs, |b, _| {
        let m = measured(env.command(utf8(builds.bin(b))).arg("--version"), b"");
        assert!(
            m.out.status.success(),
            "git-rutter --version failed: {:?}",
            m.out
        );
        Run::from(&m)
    });
    ms.into_iter()
        .enumerate()
        .map(|(b, r)| summarise(&builds.label(b, label), "–", r))
        .collect()
}

/// `runs` rounds after `WARMUP` unmeasured ones, each round a call `once(b, tag)` of every
/// build (the order alternating), with a tag unique to the call; each build's runs.
fn timings(builds: &Builds, runs: usize, once: impl Fn(usize, &str) -> Run) -> Vec<Vec<Run>> {
    let nonce = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_nanos();
    ab::interleaved(builds.len(), WARMUP, runs, |b, i| {
        let tag = match i < WARMUP {
            true => format!("warm-up {nonce}-{i}-{b}"),
            false => format!("run {nonce}-{}-{b}", i - WARMUP),
        };
        once(b, &tag)
    })
}

/// Median, nearest-rank p95 and min of the wall times, the median CPU time, the largest peak.
fn summarise(label: &str, transcript: &str, runs: Vec<Run>) -> Stats {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let sorted = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v
    };
    let wall = sorted(runs.iter().map(|r| ms(r.wall)).collect());
    let cpu = sorted(runs.iter().map(|r| ms(r.cpu)).collect());
    let (median, p95, min) = median_p95_min(&wall);
    Stats {
        label: label.to_owned(),
        transcript: transcript.to_owned(),
        runs: wall.len(),
        median,
        p95,
        min,
        cpu: median_p95_min(&cpu).0,
        peak_mib: runs.iter().map(|r| r.peak_kib).max().unwrap_or(0) as f64 / 1024.0,
    }
}

/// Appends a turn whose directives have unique summaries to `side`'s transcript, then times
/// one capture with `bin` into `side`'s vault; panics
/// unless it captured all of them and committed with every ref resolved.
fn capture_once(env: &Env, bin: &Path, case: &Case, side: &Side, tag: &str) -> Run {
    append_turn(&side.transcript, case.turn, tag, &case.refs);
    let payload = serde_json::json!({
        "session_id": case.session,
        "transcript_path": side.transcript,
        "cwd": PAYLOAD_CWD,
        "hook_event_name": "Stop",
    });
    let mut cmd = env.command(utf8(bin));
    cmd.args(["capture", "--client", "claude"])
        .env("LIBRARIAN_VAULT_PATH", &side.vault);
    let m = measured(&mut cmd, payload.to_string().as_bytes());
    let out = &m.out;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let captured = match case.turn.directives {
        1 => "captured 1 entry ".to_string(),
        n => format!("captured {n} entries "),
    };
    assert!(
        out.status.success()
            && stderr.contains(&captured)
            && stderr.contains("committed ")
            && !stderr.contains("rejected"),
        "capture failed ({}, {tag}), {}; stderr:\n{stderr}",
        case.label,
        out.status
    );
    Run::from(&m)
}

/// One Claude Code turn: a prompt, `shape.tool_calls` tool calls with their results, then an
/// assistant message streamed one block per line whose text blocks end with the directives.
fn append_turn(transcript: &Path, shape: TurnShape, tag: &str, refs: &[String]) {
    use serde_json::json;
    let mut lines = vec![json!({
        "type": "user", "isSidechain": false,
        "message": {"role": "user", "content": format!("Next step ({tag}).")},
    })];
    let output = "x".repeat(TOOL_OUTPUT);
    for i in 0..shape.tool_calls {
        let id = format!("toolu_{i}");
        lines.push(json!({
            "type": "assistant", "isSidechain": false,
            "message": {"id": format!("msg_tool_{i}"), "role": "assistant",
                        "content": [{"type": "tool_use", "id": id, "name": "Bash", "input": {"command": "make"}}]},
        }));
        lines.push(json!({
            "type": "user", "isSidechain": false,
            "message": {"role": "user", "content": [{"tool_use_id": id, "type": "tool_result", "content": output}]},
        }));
    }
    let mut blocks = vec![json!({"type": "text", "text": "Done.\n\n"})];
    for k in 0..shape.directives {
        let directive = json!({
            "summary": format!("Bench capture {tag}, decision {k}: kept the latency figures."),
            "refs": refs,
        });
        blocks.push(
            json!({"type": "text", "text": format!("<!-- librarian-session {directive} -->\n")}),
        );
    }
    for block in blocks {
        lines.push(json!({
            "type": "assistant", "isSidechain": false,
            "message": {"id": format!("msg_{tag}"), "role": "assistant", "content": [block]},
        }));
    }
    let mut text = String::new();
    for line in lines {
        text.push_str(&line.to_string());
        text.push('\n');
    }
    let mut f = OpenOptions::new()
        .append(true)
        .open(transcript)
        .expect("open the transcript");
    f.write_all(text.as_bytes()).expect("append the turn");
}

// ---------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------

/// The markdown report: machine, timings, targets, setup costs.
fn render(builds: &Builds, stats: &[Vec<Stats>], vaults: &[&Prepared]) -> String {
    let mut s = String::from("# git-rutter capture benchmark\n\n");
    let _ = writeln!(s, "{}\n", machine());
    s.push_str(
        "| case | transcript MB | runs | median ms | p95 ms | min ms | CPU ms (median) | peak MiB (max) |\n",
    );
    s.push_str("|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for st in stats.iter().flatten() {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.1} |",
            st.label, st.transcript, st.runs, st.median, st.p95, st.min, st.cpu, st.peak_mib
        );
    }
    s.push_str(
        "\nPeak memory is the child's `ru_maxrss`, which starts from the benchmark's own size at \
         the spawn (fork and exec carry the high-water mark over): the `--version` row is that floor.\n",
    );
    s.push('\n');
    s.push_str(&render_targets(
        &stats[0][THIS],
        &stats[1][THIS],
        &stats[4][THIS],
    ));
    let rows: Vec<&Stats> = stats.iter().flatten().collect();
    let changes = ab::changes_of(builds, &rows, |st| (st.label.as_str(), st.figures()));
    s.push_str(&ab::change_table(builds, &changes));
    s.push('\n');
    s.push_str(&render_setup(vaults));
    s
}

fn render_targets(small: &Stats, large: &Stats, growth: &Stats) -> String {
    let ratio = large.median / small.median;
    let growth_ratio = growth.median / large.median;
    let verdict = |ok: bool| if ok { "PASS" } else { "FAIL" };
    let mut s = String::from("| target | measured | result |\n|---|---:|---|\n");
    let _ = writeln!(
        s,
        "| large median ≤ {TARGET_LARGE_MEDIAN_MS} ms | {:.2} ms | {} |",
        large.median,
        verdict(large.median <= TARGET_LARGE_MEDIAN_MS)
    );
    let _ = writeln!(
        s,
        "| large median ≤ {TARGET_ISSUE13_MEDIAN_MS} ms (issue 13) | {:.2} ms | {} |",
        large.median,
        verdict(large.median <= TARGET_ISSUE13_MEDIAN_MS)
    );
    let _ = writeln!(
        s,
        "| large / small median ≤ {TARGET_RATIO} | {ratio:.2} | {} |",
        verdict(ratio <= TARGET_RATIO)
    );
    let _ = writeln!(
        s,
        "| growth (36,500 days) / large (3,650 days) median ≤ {TARGET_GROWTH_RATIO} (issue 13) | {growth_ratio:.2} ({:.2} ms) | {} |",
        growth.median,
        verdict(growth_ratio <= TARGET_GROWTH_RATIO)
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
