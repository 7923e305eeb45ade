//! The pre-commit hook on the large generated vault (10,000 notes, 3,650 day files): what the
//! block `install-git-hooks` writes costs a commit, against the block it replaced, which never
//! looked at notes (spec/cited-by.md, "The pre-commit line": at most 20 ms more).
//!
//! Run with `cargo bench --bench hooks` (needs `python3` and `git` on PATH). It shares the vault
//! and its cache with the other benchmarks (`benches/support/`), puts the vault back as `init`
//! left it, builds the index once (as any recall command leaves it), then for each case stages
//! the change and runs the hook file itself, as git runs it (in the top folder of the work tree),
//! with each block in turn (before, now, before, now, …, so the machine's drift hits both
//! alike), 3 warm-ups + 31 runs each:
//!
//! 1. one cited note edited (the block now prints its line);
//! 2. one note no decision cited edited (the binary runs and says nothing);
//! 3. one note added (neither block starts the binary);
//! 4. 100 notes edited, spread over the vault;
//! 5. every note edited (git lists 10,000 changes; the block passes the first 500 on).
//!
//! It prints (and writes to `<target>/rutter-bench/hooks.md`) each block's median, p95 and min,
//! and how much the new block adds (the difference of the medians) against the target. A missed
//! target is reported, not fatal; a run that cannot report panics.

#[path = "support/mod.rs"]
mod support;

use std::fmt::Write as _;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;
use support::{
    flush_disks, machine, prepare, restore_vault, rutter_ok, stats_table, time_process, utf8, Env,
    Stats, BIN, LARGE,
};

/// What a case changes in the vault before it stages everything.
type Change<'a> = &'a dyn Fn(&Path);

const RUNS: usize = 31;
const WARMUP: usize = 3;
/// What the new block may add to a commit's hook, in ms (spec/cited-by.md).
const TARGET_MS: f64 = 20.0;
/// The block before it named cited notes, as an earlier `install-git-hooks` wrote it.
const BEFORE: &str = include_str!("../tests/fixtures/git-hooks/pre-commit-before-cited");
/// The block now.
const NOW: &str = include_str!("../git-hooks/pre-commit");

fn main() {
    // `cargo test --benches` runs this binary without `--bench`: do nothing then.
    if !std::env::args().any(|a| a == "--bench") {
        println!("hooks benchmark: run it with `cargo bench --bench hooks`");
        return;
    }
    let env = Env::new();
    let large = prepare(&env, &LARGE);
    let vault = restore_vault(&large);
    rutter_ok(&env, &vault, &["reindex"]);
    let cited = cited_note(&env, &vault);
    let uncited = uncited_note(&env, &vault);
    println!("cited note: {cited}\nnote no decision cited: {uncited}");
    let hook = vault.join(".git/hooks/pre-commit");
    let bin = format!(
        "'{}'",
        Path::new(BIN).canonicalize().expect("the binary").display()
    );
    let blocks = [
        ("before", BEFORE.replace("@GIT_RUTTER_BIN@", &bin)),
        ("now", NOW.replace("@GIT_RUTTER_BIN@", &bin)),
    ];

    let mut stats = Vec::new();
    let mut added = Vec::new();
    let cases: [(&str, Change<'_>); 5] = [
        ("one cited note edited", &|v| append(v, &cited)),
        ("one note no decision cited edited", &|v| {
            append(v, &uncited)
        }),
        ("one note added", &|v| {
            fs::write(v.join("bench-added-note.md"), "# Added\n").expect("write a note")
        }),
        ("100 notes edited", &|v| {
            for note in tracked_notes(&env, v).iter().step_by(100) {
                append(v, note);
            }
        }),
        ("every note edited (10,000)", &|v| {
            for note in tracked_notes(&env, v) {
                append(v, &note);
            }
        }),
    ];
    // One round of every case first: right after the index build the first case measured
    // several milliseconds slower than the same case later (the machine settling after
    // writing hundreds of megabytes), which is no cost of the hook.
    for (_, change) in &cases {
        stage(&env, &vault, *change);
        for (_, text) in &blocks {
            for _ in 0..WARMUP {
                run_hook(&env, &vault, &hook, text);
            }
        }
        unstage(&env, &vault);
    }
    for (label, change) in cases {
        println!("{label}: {WARMUP} warm-ups + {RUNS} runs of each block...");
        stage(&env, &vault, change);
        let ms = interleaved(&env, &vault, &hook, &blocks);
        let now_says = run_hook(&env, &vault, &hook, &blocks[1].1).1;
        println!("  the block now printed: {:?}", now_says.trim_end());
        let [before, now] = ms;
        let before = Stats::of(&format!("{label}: block before"), before, None);
        let now = Stats::of(&format!("{label}: block now"), now, None);
        added.push((label, now.median - before.median));
        stats.push(before);
        stats.push(now);
        unstage(&env, &vault);
    }
    let _ = fs::remove_file(&hook);

    let mut report = String::from("# git-rutter pre-commit hook benchmark\n\n");
    let _ = writeln!(report, "{}\n", machine());
    report.push_str(&stats_table(&stats));
    report.push_str(
        "\n| case | the block now adds (medians) | target | result |\n|---|---:|---|---|\n",
    );
    for (label, ms) in added {
        let verdict = if ms <= TARGET_MS { "met" } else { "missed" };
        let _ = writeln!(
            report,
            "| {label} | {ms:.2} ms | ≤ {TARGET_MS} ms | {verdict} |"
        );
    }
    print!("\n{report}");
    let out = env.root.join("hooks.md");
    fs::write(&out, &report).expect("write hooks.md");
    println!("\nwritten to {}", out.display());
}

/// Makes a case's change and stages everything, then lets the writes settle.
fn stage(env: &Env, vault: &Path, change: Change<'_>) {
    change(vault);
    env.run("git", &["add", "-A"], vault);
    // The index build and the staging wrote hundreds of megabytes: their writeback must not
    // run during the measurement.
    flush_disks();
}

/// Puts the notes back as committed.
fn unstage(env: &Env, vault: &Path) {
    env.run("git", &["reset", "-q", "--hard", "HEAD"], vault);
    let _ = fs::remove_file(vault.join("bench-added-note.md"));
}

/// The milliseconds of each block's runs, the blocks taking turns.
fn interleaved(
    env: &Env,
    vault: &Path,
    hook: &Path,
    blocks: &[(&str, String); 2],
) -> [Vec<f64>; 2] {
    let mut ms = [Vec::new(), Vec::new()];
    for i in 0..WARMUP + RUNS {
        for (b, (_, text)) in blocks.iter().enumerate() {
            let (took, _) = run_hook(env, vault, hook, text);
            if i >= WARMUP {
                ms[b].push(took.as_secs_f64() * 1e3);
            }
        }
    }
    ms
}

/// Installs `text` as the pre-commit hook and runs it once; its time and stderr. It must allow.
fn run_hook(env: &Env, vault: &Path, hook: &Path, text: &str) -> (Duration, String) {
    if fs::read_to_string(hook).ok().as_deref() != Some(text) {
        fs::write(hook, text).expect("write the hook");
        fs::set_permissions(hook, fs::Permissions::from_mode(0o755)).expect("chmod the hook");
    }
    let mut cmd = env.command(utf8(hook));
    cmd.current_dir(vault).env("LIBRARIAN_VAULT_PATH", vault);
    let (took, out) = time_process(&mut cmd, b"");
    assert!(out.status.success(), "the hook refused: {out:?}");
    (took, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// A note the newest recorded decision cited.
fn cited_note(env: &Env, vault: &Path) -> String {
    let (_, out) = rutter_ok(env, vault, &["log", "-n", "50", "--json"]);
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("log --json");
    rows.as_array()
        .into_iter()
        .flatten()
        .flat_map(|r| r["refs"].as_array().cloned().unwrap_or_default())
        .filter_map(|r| r["path"].as_str().map(str::to_owned))
        .find(|p| vault.join(p).is_file())
        .expect("a recent decision cites a note")
}

/// A tracked note no decision cited.
fn uncited_note(env: &Env, vault: &Path) -> String {
    tracked_notes(env, vault)
        .into_iter()
        .find(|note| {
            let (_, out) = rutter_ok(env, vault, &["cited-by", "--json", note]);
            let v: serde_json::Value =
                serde_json::from_slice(&out.stdout).expect("cited-by --json");
            v["decisions"].as_array().is_some_and(Vec::is_empty)
        })
        .expect("a note no decision cited")
}

/// Every tracked markdown note, as git lists them.
fn tracked_notes(env: &Env, vault: &Path) -> Vec<String> {
    let out = env
        .command("git")
        .args(["ls-files", "-z", "--", "*.md"])
        .current_dir(vault)
        .output()
        .expect("git ls-files");
    out.stdout
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty() && !p.starts_with(b"_librarian/"))
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect()
}

/// Appends a line to the note at vault-relative `note`.
fn append(vault: &Path, note: &str) {
    let path: PathBuf = vault.join(note);
    let mut text = fs::read_to_string(&path).expect("read a note");
    text.push_str("\nEdited by the hooks benchmark.\n");
    fs::write(&path, text).expect("write a note");
}
