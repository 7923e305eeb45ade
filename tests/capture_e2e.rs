//! End to end: the real binary captures through the hook path into a real git vault, and the
//! real `git` reads what libgit2 wrote.

use crate::common;
use common::json::{decode, Recent, Status};
use common::*;
use std::time::Duration;

#[test]
fn a_capture_is_one_pure_append_commit_that_git_reads() {
    let env = Env::git_vault();
    let head_before = env.git(&["rev-parse", "HEAD"]);
    let branches_before = env.git(&["branch", "-a"]);
    let d = directive(
        "Chose alpha over beta for the launch.",
        &["Notes/a.md", "[[Notes/b.md|beta]]"],
    );
    let r = env.capture(
        &env.transcript_payload("t1", "S1", &d),
        &["--client", "claude"],
    );
    assert_eq!(r.code, 0);
    assert_eq!(r.stdout, "", "capture must print nothing on stdout");
    assert!(
        r.stderr
            .contains("[librarian-capture] captured 1 entry [myproj] into "),
        "{}",
        r.stderr
    );
    assert!(r
        .stderr
        .contains(&format!("in vault {}", env.vault.display())));
    let d2 = directive("Then wrote the launch plan.", &["Notes/a.md"]);
    env.capture(
        &env.transcript_payload("t2", "S1", &d2),
        &["--client", "claude"],
    );

    let log = env.git(&["log", "--format=%s", "refs/rutter/records"]);
    let subjects: Vec<&str> = log.lines().collect();
    assert_eq!(subjects.len(), 3, "{log}");
    assert!(subjects[0].starts_with("rutter: capture ") && subjects[0].ends_with(" [myproj]"));
    assert_eq!(subjects[2], "rutter: adopt");
    let patch = env.git(&[
        "log",
        "-p",
        "--format=",
        "refs/rutter/records",
        "--",
        "_librarian",
    ]);
    assert!(
        patch
            .lines()
            .all(|l| !l.starts_with('-') || l.starts_with("---")),
        "{patch}"
    );
    let trailers = env.git(&[
        "log",
        "-1",
        "--format=%(trailers:only,unfold)",
        "refs/rutter/records",
    ]);
    assert!(trailers.contains("Rutter-Entry: ") && trailers.contains("Rutter-Session: S1"));
    assert!(trailers.contains("Rutter-Client: claude") && trailers.contains("Rutter-Format: 2"));
    let reflog = env.git(&["reflog", "show", "--format=%gs", "refs/rutter/records"]);
    assert_eq!(reflog.lines().count(), 3, "{reflog}");
    let fsck = env.git(&["fsck", "--strict"]);
    assert!(!fsck.contains("error"), "{fsck}");

    let day = env.day_files()[0]
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .to_string();
    let committed = env.git(&[
        "show",
        &format!(
            "refs/rutter/records:_librarian/sessions/{}/{day}.md",
            &day[..4]
        ),
    ]);
    assert_eq!(
        committed,
        env.read(&format!("_librarian/sessions/{day}.md"))
    );
    assert!(committed.contains("Chose alpha over beta for the launch."));
    assert!(
        committed.contains("\"path\":\"Notes/b.md\""),
        "wikilink alias normalised"
    );
    let blob = env.git(&["hash-object", "Notes/a.md"]);
    assert!(committed.contains(&format!("\"blob\":\"{}\"", blob.trim())));
    assert!(env
        .git(&["ls-tree", "-r", "--name-only", "refs/rutter/records"])
        .contains("cited/"));

    assert_eq!(env.git(&["rev-parse", "HEAD"]), head_before);
    assert_eq!(env.git(&["branch", "-a"]), branches_before);
    assert_eq!(
        env.git(&["status", "--porcelain"]),
        "",
        "user's status untouched"
    );
}

#[test]
fn a_repeated_stop_firing_adds_nothing() {
    let env = Env::git_vault();
    let payload = env.transcript_payload("t", "S1", &directive("One decision.", &["Notes/a.md"]));
    env.capture(&payload, &[]);
    let before = env.all_records();
    let tip = env.git(&["rev-parse", "refs/rutter/records"]);
    for _ in 0..3 {
        let r = env.capture(&payload, &[]);
        assert!(
            r.stderr.contains(
                "directive unchanged for this session; already recorded, nothing appended."
            ),
            "{}",
            r.stderr
        );
    }
    assert_eq!(env.all_records(), before);
    assert_eq!(env.git(&["rev-parse", "refs/rutter/records"]), tip);
}

#[test]
fn dedupe_survives_a_lost_cache() {
    let env = Env::git_vault();
    let payload = env.transcript_payload("t", "S1", &directive("One decision.", &[]));
    env.capture(&payload, &[]);
    std::fs::remove_dir_all(env.vault.join(".git/rutter/dedupe")).unwrap();
    let r = env.capture(&payload, &[]);
    assert!(r.stderr.contains("directive unchanged"), "{}", r.stderr);
    assert_eq!(entry_lines(&env.all_records()), 1);
}

#[test]
fn fifty_concurrent_captures_each_land_exactly_once() {
    let env = Env::git_vault();
    let payloads: Vec<Vec<u8>> = (0..50)
        .map(|i| {
            env.transcript_payload(
                &format!("t{i}"),
                &format!("S{i}"),
                &directive(&format!("Decision number {i}."), &["Notes/a.md"]),
            )
        })
        .collect();
    let children: Vec<_> = payloads
        .iter()
        .map(|p| {
            let mut c = env.cmd();
            // Fifty debug-build captures on a loaded 2-core machine can queue for more than the
            // 2 s a capture waits for the lock; this test wants every one to take it (the
            // lockless path has its own test below).
            c.env("RUTTER_LOCK_WAIT_MS", "120000")
                .arg("capture")
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            let mut child = c.spawn().unwrap();
            use std::io::Write;
            child.stdin.take().unwrap().write_all(p).unwrap();
            child
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        assert!(out.stdout.is_empty());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("committed ") && !err.contains("not committed"),
            "every capture commits: {err}"
        );
    }
    let text = env.all_records();
    for i in 0..50 {
        assert_eq!(
            text.matches(&format!("\"summary\":\"Decision number {i}.\""))
                .count(),
            1,
            "decision {i}"
        );
    }
    let ids: std::collections::HashSet<String> = text
        .lines()
        .filter_map(|l| l.split("\"id\":\"").nth(1))
        .map(|s| s.split('"').next().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 50, "ids are unique");
    let commits = env.git(&["rev-list", "--count", "refs/rutter/records"]);
    assert_eq!(commits.trim(), "51");
    let committed = env.committed(&env.first_day());
    assert_eq!(committed, text);
    assert!(std::fs::read_dir(env.vault.join(".git/rutter/pending"))
        .unwrap()
        .next()
        .is_none());
}

#[test]
fn capture_never_guesses_the_vault_from_the_current_directory() {
    let env = Env::bare();
    let project = env.root().join("code/proj");
    std::fs::create_dir_all(&project).unwrap();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(&project)
            .env("HOME", &env.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(ok.status.success());
    };
    git(&["init", "-q"]);
    std::fs::create_dir_all(project.join("_librarian/sessions")).unwrap();
    let before: Vec<_> = walk(&project);
    let mut c = std::process::Command::new(BIN);
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .env("HOME", &env.home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .current_dir(&project)
        .arg("capture");
    let r = run_with_stdin(&mut c, br#"{"summary":"Should go nowhere.","refs":[]}"#);
    assert_eq!(r.code, 0);
    assert!(r.stderr.contains("no vault configured"), "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1);
    assert_eq!(
        walk(&project),
        before,
        "nothing written in the current repository"
    );
}

fn walk(p: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(p).unwrap().flatten() {
        let path = e.path();
        out.push(format!(
            "{} {}",
            path.display(),
            e.metadata().map(|m| m.len()).unwrap_or(0)
        ));
        if path.is_dir() {
            out.extend(walk(&path));
        }
    }
    out.sort();
    out
}

#[test]
fn a_non_git_vault_still_captures_and_hints_at_init() {
    let env = Env::bare();
    env.write("Notes/a.md", NOTE_A);
    let r = env.capture(
        br#"{"summary":"Plain vault decision.","refs":["Notes/a.md"],"session_id":"S"}"#,
        &[],
    );
    assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
    assert!(r.stderr.contains("git rutter init"), "{}", r.stderr);
    assert!(!env.vault.join(".git").exists());
    assert_eq!(entry_lines(&env.all_records()), 1);
    let r = env.capture(
        br#"{"summary":"Plain vault decision.","refs":["Notes/a.md"],"session_id":"S"}"#,
        &[],
    );
    assert!(r.stderr.contains("directive unchanged"), "{}", r.stderr);
}

#[test]
fn manual_capture_from_the_command_line() {
    let env = Env::git_vault();
    let r = env.rutter(&[
        "capture",
        "--summary",
        "Manual note of a decision.",
        "--ref",
        "Notes/a.md",
        "--session",
        "M1",
    ]);
    assert_eq!((r.code, r.stdout.as_str()), (0, ""));
    assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
    assert!(env.all_records().contains("\"session_id\":\"M1\""));
}

/// A ref typed by hand from a folder of the vault is taken relative to that folder, as `show`
/// and `cited-by` take a path (it was rejected as unresolvable and the entry kept no citation);
/// a vault-relative one from the root reads as before.
#[test]
fn a_manual_ref_is_taken_relative_to_the_folder_you_stand_in() {
    let env = Env::git_vault();
    let notes = env.vault.join("Notes");
    let r: Run = env
        .cmd()
        .current_dir(&notes)
        .args([
            "capture",
            "--summary",
            "Cited from the folder.",
            "--ref",
            "b.md",
        ])
        .output()
        .unwrap()
        .into();
    assert!(!r.stderr.contains("rejected"), "{}", r.stderr);
    assert!(
        env.all_records().contains("\"path\":\"Notes/b.md\""),
        "{}",
        env.all_records()
    );
    let r = env.rutter(&[
        "capture",
        "--summary",
        "Cited from the root.",
        "--ref",
        "Notes/a.md",
    ]);
    assert!(!r.stderr.contains("rejected"), "{}", r.stderr);
}

#[test]
fn recent_reads_back_what_was_captured() {
    let env = Env::git_vault();
    env.capture(
        &env.transcript_payload("t", "S1", &directive("First step.", &["Notes/a.md"])),
        &[],
    );
    env.capture(
        &env.transcript_payload("t2", "S1", &directive("Second step.", &[])),
        &[],
    );
    let r = env.rutter(&["recent"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("[myproj] — one session, 2 steps:"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("  · "), "{}", r.stdout);
    assert!(
        r.stdout.contains("     refs: Notes/a.md@sha256:"),
        "{}",
        r.stdout
    );
    let r = env.rutter(&["recent", "--json"]);
    let v: Recent = decode(&r.stdout);
    assert_eq!(v.sessions[0].steps[1].summary, "Second step.");
    let r = env.rutter(&["recent", "--project", "nope"]);
    assert_eq!(
        r.stdout.trim(),
        "No sessions recorded for project \"nope\"."
    );
    let empty = Env::git_vault();
    assert_eq!(
        empty.rutter(&["recent"]).stdout.trim(),
        "No recent sessions recorded yet."
    );
}

/// Captures that cannot take the lock (held here) still land, each with its own id even in the
/// same millisecond (`-p<pid>`), are journalled, and are committed by the next `git rutter commit`.
/// (Also issue 19's F-2 for the CLI: tests/mcp_burst_e2e.rs has the MCP server's bursts.)
#[test]
fn captures_without_the_lock_get_distinct_ids_and_commit_later() {
    const N: usize = 12;
    let env = Env::git_vault();
    let held = rutter::lock::Lock::acquire(&env.vault.join(".git/rutter"), Duration::from_secs(1))
        .unwrap();
    let children: Vec<_> = (0..N)
        .map(|i| {
            let mut c = env.cmd();
            c.env("RUTTER_LOCK_WAIT_MS", "50")
                .env("RUTTER_TIMESTAMP", "2026-11-30T10:00:00.000Z")
                .args(["capture", "--summary", &format!("Lockless decision {i}.")])
                .args(["--session", &format!("L{i}")])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            c.spawn().unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        assert!(err.contains("not committed yet (timed out"), "{err}");
    }
    drop(held);
    let text = env.all_records();
    let ids: Vec<String> = text
        .lines()
        .filter_map(|l| l.split("\"id\":\"").nth(1))
        .map(|s| s.split('"').next().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), N, "{text}");
    assert_eq!(
        text.matches("schema: session-record@2").count(),
        1,
        "one header: {text}"
    );
    let unique: std::collections::HashSet<&String> = ids.iter().collect();
    assert_eq!(unique.len(), N, "ids are unique: {ids:?}");
    // Each is stamped at the pinned instant, or just after the last line already in the file
    // (times only grow within a day file), and carries its process id.
    for id in &ids {
        let rest = id
            .strip_prefix("20261130T1000000")
            .unwrap_or_else(|| panic!("{id}"));
        let (ms, pid) = rest.split_once("Z-p").unwrap_or_else(|| panic!("{id}"));
        assert!(ms.len() == 2 && ms.parse::<usize>().unwrap() < N, "{id}");
        assert!(pid.chars().all(|c| c.is_ascii_digit()), "{id}");
    }
    let r = env.rutter(&["commit"]);
    assert!(
        r.stdout.contains(&format!("committed {N} entries")),
        "{}{}",
        r.stdout,
        r.stderr
    );
    assert_eq!(env.committed(&env.first_day()), text);
    assert_eq!(env.rutter(&["verify"]).code, 0);
}

/// The trial's F-5: a 60 KB directive (under the 64 KiB a directive may be) citing one note
/// 12,000 times made a 1.9 MB line the journal check refused, left `unverified` for good. Refs
/// are cited once each and at most 256 notes: what is captured is committed, and verify is clean.
#[test]
fn a_directive_citing_one_note_thousands_of_times_is_committed_with_it_once() {
    let env = Env::git_vault();
    env.write("a", "x\n");
    let refs: Vec<&str> = std::iter::repeat_n("a", 12_000).collect();
    let d = directive("Many refs to one note.", &refs);
    let size = d.to_string().len();
    assert!(
        (40_000..64 * 1024).contains(&size),
        "the trial's size: {size}"
    );
    let payload = env.transcript_payload("big", "big", &d);
    let r = env.capture(&payload, &["--client", "claude"]);
    assert_eq!(r.code, 0);
    assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
    assert!(r.stderr.contains("11999 duplicate ref(s)"), "{}", r.stderr);
    assert!(!r.stderr.contains("refused"), "{}", r.stderr);
    let e = &env.entries()[0];
    assert_eq!(e["refs"].as_array().unwrap().len(), 1, "{e}");
    assert!(env
        .committed(&env.first_day())
        .contains("Many refs to one note."));
    let v = env.rutter(&["verify", "--porcelain"]);
    assert_eq!(v.code, 0, "{}", v.stdout);
}

/// Past 256 distinct notes the rest are left out, with a message; the entry is committed.
#[test]
fn an_entry_cites_at_most_256_notes() {
    let env = Env::git_vault();
    let names: Vec<String> = (0..300).map(|i| format!("Notes/n{i:03}.md")).collect();
    for n in &names {
        env.write(n, &format!("# {n}\n"));
    }
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let r = run_with_stdin(
        env.cmd()
            .args([
                "capture",
                "--summary",
                "Cited three hundred notes.",
                "--session",
                "S",
            ])
            .args(refs.iter().flat_map(|r| ["--ref", r])),
        b"",
    );
    assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("44 ref(s) past the first 256 notes were left out"),
        "{}",
        r.stderr
    );
    let e = &env.entries()[0];
    assert_eq!(e["refs"].as_array().unwrap().len(), 256);
    let v = env.rutter(&["verify", "--porcelain"]);
    assert_eq!(v.code, 0, "{}", v.stdout);
}

/// Issue 20: a TypeScript-era `librarian-position` line is recognised and explained (positions
/// were retired in rutter 1.0), on stderr and in the hook-run log; nothing is written.
#[test]
fn a_position_line_is_explained_not_dropped_silently() {
    let env = Env::git_vault();
    let payload = serde_json::json!({
        "session_id": "pos",
        "hook_event_name": "Stop",
        "cwd": env.root().join("code").display().to_string(),
        "last_assistant_message": "Settled.\n\n<!-- librarian-position POSITION revise cadence: monthly digest instead of fortnightly essays -->",
    });
    let r = env.capture(payload.to_string().as_bytes(), &["--client", "codex"]);
    assert_eq!(r.code, 0);
    assert!(
        r.stderr
            .contains("1 `librarian-position` line(s) found: positions were retired in rutter 1.0"),
        "{}",
        r.stderr
    );
    assert!(
        !r.stderr.contains("no session directive found"),
        "{}",
        r.stderr
    );
    assert!(env.day_files().is_empty(), "nothing was written");
    let s: Status = decode(&env.rutter(&["status", "--json"]).stdout);
    assert!(
        s.last_runs[0].reason.contains("librarian-position"),
        "the hook-run log says why: {s:#?}"
    );
    // Beside a session line, the session line is captured and the position line explained.
    let both = serde_json::json!({
        "session_id": "pos2",
        "hook_event_name": "Stop",
        "cwd": env.root().join("code").display().to_string(),
        "last_assistant_message": "Done.\n\n<!-- librarian-position POSITION x -->\n<!-- librarian-session {\"summary\": \"Kept the session line.\"} -->",
    });
    let r = env.capture(both.to_string().as_bytes(), &["--client", "codex"]);
    assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
    assert!(r.stderr.contains("positions were retired"), "{}", r.stderr);
}
