//! The secret scanner (`records::secrets::mask`, spec/secrets.md) on what a capture masks and on
//! the worst inputs for each of its rules: a 2,000-character summary (the longest a capture
//! keeps), clean and with two secrets; 1 MiB of the generator's notes and day files (a large
//! cited note); and 1 MiB of each adversarial shape (many candidates, long runs, unclosed
//! blocks, marks), which must stay linear.
//!
//! Run with `cargo bench --bench secrets` (the notes row needs `python3`). Each case is masked
//! in rounds (3 warm-ups, then 31 measured) in this process; a row gives the median, p95 and min
//! of one mask's thread CPU time (so a busy shared machine's waits are left out), and the
//! median wall time. For scale it first times a loop that only classifies every byte of the
//! summary, the least any scan of it costs. Targets: a summary within a few microseconds, a MiB
//! of notes well under 10 ms (capture's whole budget is 6 ms). A missed target is reported, not
//! fatal. The table is also written to `<target>/rutter-bench/secrets.md`.

#[path = "support/mod.rs"]
mod support;

use rutter::records::secrets::mask;
use std::fmt::Write as _;
use std::time::Instant;
use support::{machine, median_p95_min, BIN};

const RUNS: usize = 31;
const WARMUP: usize = 3;
const MIB: usize = 1 << 20;

/// This thread's CPU time, in seconds.
fn cpu() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// One case: `rounds` calls of `f` per run; the CPU and wall seconds of one call, per run.
fn measure(rounds: u32, mut f: impl FnMut()) -> (Vec<f64>, Vec<f64>) {
    let (mut cpus, mut walls) = (Vec::new(), Vec::new());
    for run in 0..WARMUP + RUNS {
        let (c, w) = (cpu(), Instant::now());
        for _ in 0..rounds {
            f();
        }
        if run >= WARMUP {
            cpus.push((cpu() - c) / f64::from(rounds));
            walls.push(w.elapsed().as_secs_f64() / f64::from(rounds));
        }
    }
    cpus.sort_by(f64::total_cmp);
    walls.sort_by(f64::total_cmp);
    (cpus, walls)
}

fn summary_2000() -> String {
    let words = "Decided the index keeps entries by project so the brief reads the newest \
                 sessions first; the token refresh stays in the sidecar, password reset mails a \
                 link, commit 1f87b77 and sha256:9c56cc51b374c3ba189210d5b6d4bf57790d351c96c47c0 \
                 cited, see https://example.com/docs/recall?x=1 and Notes/Plan.md. ";
    let mut s = words.repeat(2_000 / words.len() + 1);
    s.truncate(2_000);
    s
}

/// 1 MiB of a generated vault's notes and day files, when python3 can run the generator.
fn notes_mib() -> Option<String> {
    let dir = tempfile::tempdir().ok()?;
    let vault = dir.path().join("vault");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tools/gen_vault.py");
    let ok = std::process::Command::new("python3")
        .arg(script)
        .arg("--out")
        .arg(&vault)
        .args(["--notes", "200", "--days", "120", "--seed", "35"])
        .args(["--end-date", "2026-12-04"])
        .stdout(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        return None;
    }
    let mut files = Vec::new();
    let mut dirs = vec![vault];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(d).ok()?.flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut text = String::new();
    for f in files {
        if text.len() >= MIB {
            break;
        }
        text.push_str(&std::fs::read_to_string(f).unwrap_or_default());
    }
    let mut cut = text.len().min(MIB);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    Some(text)
}

/// Each rule's worst input, a MiB of one piece repeated.
fn adversarial() -> Vec<(&'static str, String)> {
    let repeat = |s: &str| s.repeat(MIB / s.len() + 1);
    vec![
        (
            "prose words",
            repeat("the quick brown fox jumps over a lazy dog "),
        ),
        ("one long word", "a".repeat(MIB)),
        (
            "tokens back to back",
            repeat("ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5 "),
        ),
        ("token= repeated", repeat("token=")),
        ("token: repeated", repeat("token:")),
        (
            "secret assignments",
            repeat("api_key=f3Kq9ZpX2mVt7LsW4nRb "),
        ),
        ("quoted names", repeat("token \"")),
        (
            "BEGIN without END",
            repeat("-----BEGIN RSA PRIVATE KEY-----\n"),
        ),
        (
            "BEGIN with key material",
            repeat("-----BEGIN RSA PRIVATE KEY-----MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgO "),
        ),
        ("scheme separators", repeat("://")),
        ("userinfo", repeat("s://u:p@")),
        (
            "long userinfo",
            format!("https://{}", "u:p".repeat(MIB / 3)),
        ),
        ("JWT parts", repeat("eyJhbGciOiJIUzI1NiJ9.")),
        ("bearer", repeat("Bearer ")),
        ("dotted base64", repeat("SG.abc.")),
        ("digits and colons", repeat("1234567890:AA")),
        ("marks", repeat("[redacted:secret]")),
        ("open marks", repeat("[redacted:")),
    ]
}

fn main() {
    // `cargo test --benches` runs this binary without `--bench`: do nothing then.
    if !std::env::args().any(|a| a == "--bench") {
        println!("secrets benchmark: run it with `cargo bench --bench secrets`");
        return;
    }
    let mut report = String::from(
        "| case | bytes | CPU median | p95 | min | wall median | target |\n|---|---|---|---|---|---|---|\n",
    );
    let mut row =
        |name: &str, bytes: usize, rounds: u32, target_us: Option<f64>, f: &mut dyn FnMut()| {
            let (cpus, walls) = measure(rounds, f);
            let (median, p95, min) = median_p95_min(&cpus);
            let us = |s: f64| match s < 1e-3 {
                true => format!("{:.1} µs", s * 1e6),
                false => format!("{:.2} ms", s * 1e3),
            };
            let verdict = match target_us {
                Some(t) if median * 1e6 <= t => format!("≤ {} ✓", us(t * 1e-6)),
                Some(t) => format!("≤ {} ✗", us(t * 1e-6)),
                None => "linear".into(),
            };
            let line = format!(
                "| {name} | {bytes} | {} | {} | {} | {} | {verdict} |\n",
                us(median),
                us(p95),
                us(min),
                us(walls[walls.len() / 2])
            );
            print!("{line}");
            report.push_str(&line);
        };
    let summary = summary_2000();
    row(
        "classify every byte (floor)",
        summary.len(),
        2_000,
        None,
        &mut || {
            let n = std::hint::black_box(summary.as_bytes())
                .iter()
                .filter(|c| c.is_ascii_alphanumeric())
                .count();
            std::hint::black_box(n);
        },
    );
    row(
        "summary, clean",
        summary.len(),
        2_000,
        Some(20.0),
        &mut || {
            std::hint::black_box(mask(std::hint::black_box(&summary)));
        },
    );
    let dirty = format!(
        "{} ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5 password=Summer2024!",
        &summary[..1_930]
    );
    row(
        "summary, 2 secrets",
        dirty.len(),
        2_000,
        Some(20.0),
        &mut || {
            std::hint::black_box(mask(std::hint::black_box(&dirty)));
        },
    );
    match notes_mib() {
        Some(notes) => row(
            "generated notes",
            notes.len(),
            5,
            Some(10_000.0),
            &mut || {
                std::hint::black_box(mask(std::hint::black_box(&notes)));
            },
        ),
        None => println!("(python3 could not run tools/gen_vault.py: no notes row)"),
    }
    for (name, text) in adversarial() {
        row(name, text.len(), 2, None, &mut || {
            std::hint::black_box(mask(std::hint::black_box(&text)));
        });
    }
    let _ = writeln!(report, "\n{}", machine());
    println!("{}", machine());
    // `<target>/rutter-bench/secrets.md`, beside the other benchmarks' reports.
    let target = std::path::Path::new(BIN).parent().and_then(|p| p.parent());
    if let Some(out) = target.map(|t| t.join("rutter-bench")) {
        if std::fs::create_dir_all(&out).is_ok() {
            let _ = std::fs::write(out.join("secrets.md"), report);
        }
    }
}
