//! The ref's year folders (spec/ref-layout.md, "Year folders"): a history written before them
//! gets one commit that only moves its day files, every reader sees the same records before and
//! after, and `verify` finds a move that also changed a byte.

use crate::common;
use common::json::{decode, LogRow, Recent};
use common::*;
use std::process::Command;

/// Makes the debug binary write day files where versions before the year folders did.
const FLAT: (&str, &str) = ("RUTTER_FLAT_SESSIONS", "1");

fn flat(cmd: &mut Command) -> Run {
    run_with_stdin(cmd.env(FLAT.0, FLAT.1), b"")
}

/// A vault whose ref was written by an older version: two days in the flat sessions folder.
fn old_vault() -> Env {
    let env = Env::bare();
    env.write("Notes/a.md", NOTE_A);
    env.git(&["init", "-q", "-b", "main"]);
    env.git(&["add", "Notes"]);
    env.git(&["commit", "-qm", "notes"]);
    let r = flat(env.cmd().arg("init"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    for (ts, summary) in [
        ("2025-12-31T10:00:00.000Z", "Old year."),
        ("2026-11-29T10:00:00.000Z", "First decision."),
    ] {
        let r = flat(env.cmd().env("RUTTER_TIMESTAMP", ts).args([
            "capture",
            "--summary",
            summary,
            "--session",
            "S",
            "--ref",
            "Notes/a.md",
        ]));
        assert!(r.stderr.contains("committed"), "{}", r.stderr);
    }
    assert_eq!(
        day_paths(&env),
        [
            "_librarian/sessions/2025-12-31.md",
            "_librarian/sessions/2026-11-29.md"
        ]
    );
    env
}

fn day_paths(env: &Env) -> Vec<String> {
    env.git(&[
        "ls-tree",
        "-r",
        "--name-only",
        "refs/rutter/records",
        "_librarian/sessions",
    ])
    .lines()
    .map(str::to_string)
    .collect()
}

fn verify_clean(env: &Env) {
    let r = env.rutter(&["verify", "--json"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let full = env.rutter(&["verify", "--full", "--json"]);
    assert_eq!(full.code, 0, "{}{}", full.stdout, full.stderr);
    env.git(&["fsck", "--strict", "--no-progress"]);
}

fn summaries(env: &Env) -> Vec<String> {
    let r = env.rutter(&["log", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows: Vec<LogRow> = decode(&r.stdout);
    let mut out: Vec<String> = rows.into_iter().map(|r| r.summary).collect();
    out.sort();
    out
}

#[test]
fn an_old_flat_history_gets_one_layout_commit_and_verifies_clean() {
    let env = old_vault();
    verify_clean(&env);
    let before = summaries(&env);
    let old_tip = env.git(&["rev-parse", "refs/rutter/records"]);

    // The first capture of this version: one layout commit, then the capture on top of it.
    let r = env.capture_at(
        "2026-11-29T11:00:00.000Z",
        "Second decision.",
        &["Notes/a.md"],
    );
    assert!(r.stderr.contains("committed"), "{}", r.stderr);
    let subjects = env.git(&["log", "--format=%s", "-3", "refs/rutter/records"]);
    let subjects: Vec<&str> = subjects.lines().collect();
    assert_eq!(subjects[1], "rutter: layout", "{subjects:?}");
    assert!(
        subjects[0].starts_with("rutter: capture 2026-11-29"),
        "{subjects:?}"
    );
    assert_eq!(
        env.git(&["rev-parse", "refs/rutter/records~2"]),
        old_tip,
        "the layout commit sits on the old tip"
    );
    let moves = env.git(&[
        "diff",
        "--name-status",
        "-M",
        "refs/rutter/records~2",
        "refs/rutter/records~1",
    ]);
    let moves: Vec<&str> = moves.lines().collect();
    assert_eq!(
        moves,
        [
            "R100\t_librarian/sessions/2025-12-31.md\t_librarian/sessions/2025/2025-12-31.md",
            "R100\t_librarian/sessions/2026-11-29.md\t_librarian/sessions/2026/2026-11-29.md",
        ],
        "the layout commit only moves, byte for byte"
    );
    assert_eq!(
        day_paths(&env),
        [
            "_librarian/sessions/2025/2025-12-31.md",
            "_librarian/sessions/2026/2026-11-29.md"
        ]
    );
    let reflog = env.git(&["reflog", "show", "--format=%gs", "refs/rutter/records"]);
    assert!(
        !reflog.contains("rutter: layout"),
        "the ref moved once, to the capture: {reflog}"
    );

    // Every reader sees the same records, plus the new one.
    let mut want = before.clone();
    want.push("Second decision.".to_string());
    want.sort();
    assert_eq!(summaries(&env), want);
    let recent = env.rutter(&["recent", "--json", "--all"]);
    let shown: Recent = decode(&recent.stdout);
    for s in &want {
        assert!(
            shown.summaries().contains(&s.as_str()),
            "{s}: {}",
            recent.stdout
        );
    }
    assert!(
        shown.steps().all(|s| s.status == "committed"),
        "{}",
        recent.stdout
    );
    assert!(
        !recent.stdout.contains("not committed"),
        "{}",
        recent.stdout
    );
    let day = env.committed("_librarian/sessions/2026-11-29.md");
    assert_eq!(day, env.read("_librarian/sessions/2026-11-29.md"));
    verify_clean(&env);

    // `diff` and the private index show the working files as committed.
    let d = env.rutter(&["diff"]);
    assert_eq!((d.code, d.stdout.as_str()), (0, ""), "{}", d.stderr);
    let index = env.vault.join(".git/rutter/records.index");
    let plain = env.git_with(
        &["diff", "--stat", "--", "_librarian"],
        &[("GIT_INDEX_FILE", index.to_str().unwrap())],
    );
    assert_eq!(
        (plain.code, plain.stdout.as_str()),
        (0, ""),
        "{}",
        plain.stderr
    );

    // A new day goes to its year folder; no second layout commit.
    let r = env.capture_at("2026-11-30T09:00:00.000Z", "Third decision.", &[]);
    assert!(r.stderr.contains("committed"), "{}", r.stderr);
    assert!(day_paths(&env).contains(&"_librarian/sessions/2026/2026-11-30.md".to_string()));
    let layouts = env.git(&["log", "--format=%s", "refs/rutter/records"]);
    assert_eq!(layouts.matches("rutter: layout").count(), 1);
    verify_clean(&env);
}

#[test]
fn a_fresh_vault_keeps_day_files_in_year_folders_from_its_first_commit() {
    let env = Env::git_vault();
    let r = env.capture_at("2026-11-30T10:00:00.000Z", "A decision.", &["Notes/a.md"]);
    assert!(r.stderr.contains("committed"), "{}", r.stderr);
    assert_eq!(day_paths(&env), ["_librarian/sessions/2026/2026-11-30.md"]);
    let shown = env.git(&[
        "show",
        "refs/rutter/records:_librarian/sessions/2026/2026-11-30.md",
    ]);
    assert_eq!(shown, env.read("_librarian/sessions/2026-11-30.md"));
    let log = env.git(&["log", "--format=%s", "refs/rutter/records"]);
    assert!(!log.contains("rutter: layout"), "{log}");
    verify_clean(&env);
}

/// A commit on the tip that moves and writes what it is given, set as the ref's tip.
fn forge(env: &Env, moves: &[(&str, &str)], writes: &[(&str, &str)]) {
    let forged = Forged {
        moves,
        writes,
        message: "rutter: layout",
        why: "forged",
    };
    forged.commit(env);
}

fn kinds_failing(env: &Env) -> Vec<String> {
    let r = env.rutter(&["verify", "--full", "--json"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    finding_kinds(&r.stdout)
}

#[test]
fn a_move_into_a_year_folder_that_changes_a_byte_is_a_rewrite() {
    let env = old_vault();
    let flat_day = "_librarian/sessions/2026-11-29.md";
    let edited = env
        .read(flat_day)
        .replace("First decision.", "Forged decision.");
    forge(
        &env,
        &[(flat_day, "_librarian/sessions/2026/2026-11-29.md")],
        &[("_librarian/sessions/2026/2026-11-29.md", &edited)],
    );
    let kinds = kinds_failing(&env);
    assert!(kinds.iter().any(|k| k == "history-rewrite"), "{kinds:?}");
}

#[test]
fn a_day_file_in_the_sessions_folder_shadows_its_year_folder_and_is_checked() {
    let env = Env::git_vault();
    let r = env.capture_at("2026-11-30T10:00:00.000Z", "A decision.", &["Notes/a.md"]);
    assert!(r.stderr.contains("committed"), "{}", r.stderr);
    let day = "_librarian/sessions/2026-11-30.md";
    let forged = env.read(day).replace("A decision.", "Another decision.");
    // Beside the year folder's file, at the flat path readers look at first.
    forge(&env, &[], &[(day, &forged)]);
    let kinds = kinds_failing(&env);
    assert!(kinds.iter().any(|k| k == "history-rewrite"), "{kinds:?}");
    // A copy in the wrong year's folder is no record file: never shown.
    let env = Env::git_vault();
    let r = env.capture_at("2026-11-30T10:00:00.000Z", "A decision.", &["Notes/a.md"]);
    assert!(r.stderr.contains("committed"), "{}", r.stderr);
    forge(
        &env,
        &[],
        &[("_librarian/sessions/2025/2026-11-30.md", &forged)],
    );
    let recent = env.rutter(&["recent", "--all"]);
    assert!(
        !recent.stdout.contains("Another decision."),
        "{}",
        recent.stdout
    );
}
