//! Bad input never breaks the hook: exit 0, one clear stderr line or an inert record, no lost
//! record and no rewritten byte.

use crate::common;
use common::json::{decode, Recent};
use common::*;
use std::io::Write;

fn assert_quiet_noop(env: &Env, r: &Run, expect: &str) {
    assert_eq!(r.code, 0);
    assert_eq!(r.stdout, "");
    assert!(
        r.stderr.contains(expect),
        "expected {expect:?} in {}",
        r.stderr
    );
    assert_eq!(entry_lines(&env.all_records()), 0);
}

#[test]
fn garbage_and_binary_stdin() {
    let env = Env::git_vault();
    assert_quiet_noop(
        &env,
        &env.capture(b"\x00\xff\xfe garbage {", &[]),
        "stdin is not a JSON hook payload",
    );
    assert_quiet_noop(
        &env,
        &env.capture(b"", &[]),
        "stdin is not a JSON hook payload",
    );
    assert_quiet_noop(&env, &env.capture(b"[1]", &[]), "not an object");
    assert_quiet_noop(
        &env,
        &env.capture(br#"{"summary":"x","refs":"Notes/a.md"}"#, &[]),
        "`refs` must be an array of strings",
    );
    assert_quiet_noop(
        &env,
        &env.capture(br#"{"summary":"  \n\t "}"#, &[]),
        "empty summary; no entry written.",
    );
    assert_quiet_noop(
        &env,
        &env.capture(br#"{"summary":"<one plain-English line>"}"#, &[]),
        "empty summary",
    );
    assert!(env.day_files().is_empty(), "no file created for nothing");
}

#[test]
fn bad_arguments_still_exit_zero() {
    let env = Env::git_vault();
    let r = run_with_stdin(env.cmd().args(["capture", "--bogus"]), b"{}");
    assert_eq!(r.code, 0);
    assert!(r.stderr.starts_with("[librarian-capture] "), "{}", r.stderr);
    assert_eq!(r.stdout, "");
}

#[test]
fn missing_binary_and_directory_transcripts() {
    let env = Env::git_vault();
    let missing =
        serde_json::json!({"session_id":"S","transcript_path": env.root().join("nope.jsonl")});
    assert_quiet_noop(
        &env,
        &env.capture(missing.to_string().as_bytes(), &[]),
        "cannot read transcript",
    );
    let dir = serde_json::json!({"session_id":"S","transcript_path": env.root()});
    assert_quiet_noop(
        &env,
        &env.capture(dir.to_string().as_bytes(), &[]),
        "not a regular file",
    );
    let bin = env.root().join("bin.jsonl");
    std::fs::write(
        &bin,
        (0..200_000u32)
            .map(|i| (i * 7919 % 251) as u8)
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    let p = serde_json::json!({"session_id":"S","transcript_path": bin});
    assert_quiet_noop(
        &env,
        &env.capture(p.to_string().as_bytes(), &[]),
        "no session directive found; nothing captured.",
    );
}

#[test]
fn a_one_gigabyte_transcript_is_not_read_whole() {
    let env = Env::git_vault();
    let path = env.root().join("huge.jsonl");
    let f = std::fs::File::create(&path).unwrap();
    f.set_len(1 << 30).unwrap();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    let text = "<!-- librarian-session {\"summary\":\"Found at the end of a huge file.\"} -->";
    let line = serde_json::json!({"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":text}]}});
    writeln!(f, "\n{line}").unwrap();
    let p = serde_json::json!({"session_id":"S","transcript_path": path});
    let started = std::time::Instant::now();
    let r = env.capture(p.to_string().as_bytes(), &[]);
    assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "sanity bound only"
    );
}

#[test]
fn user_text_is_never_captured() {
    let env = Env::git_vault();
    let path = env.root().join("t.jsonl");
    let text = "<!-- librarian-session {\"summary\":\"Pasted by the user.\"} -->";
    let user = serde_json::json!({"type":"user","message":{"role":"user","content":text}});
    std::fs::write(&path, format!("{user}\n")).unwrap();
    let p = serde_json::json!({"session_id":"S","transcript_path": path});
    assert_quiet_noop(
        &env,
        &env.capture(p.to_string().as_bytes(), &[]),
        "no session directive found",
    );
}

#[test]
fn refs_outside_the_vault_are_rejected_and_the_summary_kept() {
    let env = Env::git_vault();
    let outside = env.root().join("secret.md");
    std::fs::write(&outside, "secret").unwrap();
    std::os::unix::fs::symlink(&outside, env.vault.join("Notes/escape.md")).unwrap();
    let refs = [
        "../secret.md",
        outside.to_str().unwrap(),
        "Notes/escape.md",
        ".git/config",
        "Notes/missing.md",
        "Notes/a.md",
    ];
    let r = env.capture(
        directive_payload("Kept despite bad refs.", &refs).as_bytes(),
        &[],
    );
    assert!(
        r.stderr
            .contains("rejected unresolvable refs: ../secret.md, "),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("Notes/escape.md") && r.stderr.contains(".git/config"));
    let text = env.all_records();
    assert_eq!(entry_lines(&text), 1);
    assert!(
        text.contains("\"refs\":[{\"path\":\"Notes/a.md\""),
        "{text}"
    );
    assert!(!text.contains("secret"));
}

fn directive_payload(summary: &str, refs: &[&str]) -> String {
    serde_json::json!({"session_id":"S","summary":summary,"refs":refs}).to_string()
}

#[test]
fn forging_summaries_stay_one_inert_line() {
    let env = Env::git_vault();
    let forged = "ok -->\n- 00:00:00 — forged <!-- rutter:entry {\"id\":\"x\",\"time\":\"t\",\"summary\":\"forged\",\"refs\":[]} -->\r\n\u{2028}\u{202e}\u{1b}[31mred\u{0}";
    let r = env.capture(directive_payload(forged, &[]).as_bytes(), &[]);
    assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
    let text = env.all_records();
    assert_eq!(entry_lines(&text), 1, "{text}");
    assert_eq!(text.matches("<!-- rutter:entry ").count(), 1);
    let r = env.rutter(&["recent", "--json"]);
    let v: Recent = decode(&r.stdout);
    let summary = &v.sessions[0].steps[0].summary;
    assert!(summary.contains("forged") && !summary.contains('\n') && !summary.contains('\u{1b}'));
}

#[test]
fn a_directive_summary_may_contain_the_comment_end() {
    let env = Env::git_vault();
    let p = env.transcript_payload(
        "t",
        "S",
        &directive("Use --> as the arrow in the docs.", &[]),
    );
    env.capture(&p, &[]);
    assert!(
        env.all_records()
            .contains("\"summary\":\"Use --\\u003e as the arrow in the docs.\""),
        "{}",
        env.all_records()
    );
}

#[test]
fn a_long_summary_is_cut_and_warned_about() {
    let env = Env::git_vault();
    let long = "word ".repeat(700);
    let r = env.capture(directive_payload(&long, &[]).as_bytes(), &[]);
    assert!(
        r.stderr.contains(
            "summary is 700 words; the style contract asks for about 40 and no more than 60."
        ),
        "{}",
        r.stderr
    );
    let v: Recent = decode(&env.rutter(&["recent", "--json"]).stdout);
    assert_eq!(v.sessions[0].steps[0].summary.chars().count(), 1999);
}

#[test]
fn a_hand_broken_day_file_is_appended_to_never_rewritten() {
    let env = Env::git_vault();
    env.capture(directive_payload("First.", &[]).as_bytes(), &[]);
    let day = env.day_files()[0].clone();
    let mut broken = std::fs::read(&day).unwrap();
    broken
        .extend_from_slice(b"- hand typed junk <!-- rutter:entry {not json -->\n\xff\xfe partial");
    std::fs::write(&day, &broken).unwrap();
    let r = env.capture(directive_payload("Second.", &[]).as_bytes(), &[]);
    assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
    assert!(
        r.stderr.contains("was edited after it was committed"),
        "{}",
        r.stderr
    );
    let now = std::fs::read(&day).unwrap();
    assert!(now.starts_with(&broken), "no byte rewritten");
    assert_eq!(
        &now[broken.len()..broken.len() + 1],
        b"\n",
        "newline before the appended line"
    );
    let committed = env.git(&[
        "show",
        &format!(
            "refs/rutter/records:{}",
            in_ref(&format!(
                "_librarian/sessions/{}",
                day.file_name().unwrap().to_string_lossy()
            ))
        ),
    ]);
    assert!(
        !committed.contains("hand typed junk"),
        "the edit is not laundered into history"
    );
    assert!(committed.contains("\"summary\":\"Second.\""));
}

#[test]
fn a_symlinked_overlay_is_refused_and_the_entry_written_aside() {
    let env = Env::git_vault();
    let elsewhere = env.root().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, env.vault.join("_librarian")).unwrap();
    let r = env.capture(directive_payload("Aside.", &[]).as_bytes(), &[]);
    assert_eq!(r.code, 0);
    assert!(r.stderr.contains("written aside to"), "{}", r.stderr);
    assert!(
        std::fs::read_dir(&elsewhere).unwrap().next().is_none(),
        "nothing written through the link"
    );
    let aside = std::fs::read_dir(env.vault.join(".git/rutter/aside"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert!(std::fs::read_to_string(aside).unwrap().contains("Aside."));
}

#[test]
fn a_symlinked_day_file_is_refused() {
    let env = Env::git_vault();
    env.capture(directive_payload("First.", &[]).as_bytes(), &[]);
    let day = env.day_files()[0].clone();
    let target = env.root().join("target.md");
    std::fs::rename(&day, &target).unwrap();
    std::os::unix::fs::symlink(&target, &day).unwrap();
    let before = std::fs::read(&target).unwrap();
    let r = env.capture(directive_payload("Second.", &[]).as_bytes(), &[]);
    assert!(
        r.stderr.contains("symbolic link") && r.stderr.contains("written aside"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read(&target).unwrap(), before);
}

#[test]
fn a_stale_ref_lock_never_loses_a_capture() {
    let env = Env::git_vault();
    let lock = env.vault.join(".git/refs/rutter/records.lock");
    std::fs::write(&lock, "stale").unwrap();
    let r = env.capture(directive_payload("While locked.", &[]).as_bytes(), &[]);
    assert!(
        r.stderr.contains("captured 1 entry") && r.stderr.contains("not committed yet"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("records.lock"), "{}", r.stderr);
    assert!(env.all_records().contains("While locked."));
    assert_eq!(
        env.git(&["rev-list", "--count", "refs/rutter/records"])
            .trim(),
        "1"
    );
    std::fs::remove_file(&lock).unwrap();
    let r = env.rutter(&["commit"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("committed 1 entry"), "{}", r.stdout);
    let committed = env.committed(&env.first_day());
    assert_eq!(committed, env.all_records());
    assert_eq!(env.rutter(&["commit"]).stdout.trim(), "nothing to commit");
}

/// The review's §b 2: in a worktree of a bare repository (which stays the vault itself), the ref
/// lock lives in the common directory: a stale one stops the commit at once and is named,
/// rather than read as contention five times.
#[test]
fn a_stale_ref_lock_in_a_bare_repositorys_worktree_is_named() {
    let env = Env::git_vault();
    let bare = env.root().join("bare.git");
    env.git(&["clone", "-q", "--bare", ".", bare.to_str().unwrap()]);
    let wt = env.root().join("wt");
    env.git_in(
        &bare,
        &["worktree", "add", "-q", wt.to_str().unwrap(), "main"],
    );
    let r = env.rutter_in(&wt, &["init", "."]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    std::fs::write(bare.join("refs/rutter/records.lock"), "stale").unwrap();
    let mut c = env.cmd();
    c.env("LIBRARIAN_VAULT_PATH", &wt).args([
        "capture",
        "--summary",
        "While locked.",
        "--session",
        "W",
    ]);
    let r = run_with_stdin(&mut c, b"");
    assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
    assert!(
        r.stderr.contains("records.lock") && !r.stderr.contains("moved 5 times"),
        "{}",
        r.stderr
    );
}

/// A capture of `summary` that dies inside its update of the ref, holding `records.lock` (the
/// fail point `ref-update-killed`, as a SIGKILL there leaves it).
fn killed_capture(env: &Env, summary: &str, session: &str) {
    let mut c = env.cmd();
    c.env("RUTTER_FAILPOINTS", "ref-update-killed").args([
        "capture",
        "--summary",
        summary,
        "--session",
        session,
    ]);
    let r = run_with_stdin(&mut c, b"");
    assert_ne!(r.code, 0, "the fail point kills the capture: {}", r.stderr);
}

/// A capture killed while libgit2 moved the ref (the fail point dies holding `records.lock`,
/// as a SIGKILL there leaves it): the next writer finds the killed writer's intent file, moves
/// the lock aside as evidence and commits; nothing is lost and git agrees with the result.
#[test]
fn a_lock_left_by_a_killed_writer_is_moved_aside_and_nothing_is_lost() {
    let env = Env::git_vault();
    killed_capture(&env, "Killed mid-update.", "K");
    let lock = env.vault.join(".git/refs/rutter/records.lock");
    assert!(lock.exists(), "the killed writer left its lock");
    assert!(env.vault.join(".git/rutter/ref-update").exists());
    // A second writer killed while it waited on that lock must not hide whose lock it is.
    killed_capture(&env, "Killed while waiting.", "L");

    let r = env.capture(directive_payload("After the kill.", &[]).as_bytes(), &[]);
    assert!(r.stderr.contains("committed "), "{}", r.stderr);
    assert!(!lock.exists());
    assert!(!env.vault.join(".git/rutter/ref-update").exists());
    let aside: Vec<String> = std::fs::read_dir(env.vault.join(".git/rutter/stale-locks"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        aside.len() == 1 && aside[0].starts_with("records.lock."),
        "{aside:?}"
    );
    let committed = env.committed(&env.first_day());
    assert!(committed.contains("Killed mid-update."), "{committed}");
    assert!(committed.contains("After the kill."), "{committed}");
    assert!(committed.contains("Killed while waiting."), "{committed}");
    assert_eq!(committed, env.all_records());
    env.git(&["fsck", "--strict"]);
    assert_eq!(env.rutter(&["verify"]).code, 0);
}

/// The same intent file, but a lock made before it (another process's, not the killed
/// writer's): honoured and named, nothing moved.
#[test]
fn a_lock_older_than_the_killed_writers_intent_is_honoured() {
    let env = Env::git_vault();
    killed_capture(&env, "Killed mid-update.", "K");
    let lock = env.vault.join(".git/refs/rutter/records.lock");
    let older = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&lock)
        .unwrap()
        .set_modified(older)
        .unwrap();
    let r = env.capture(directive_payload("While locked.", &[]).as_bytes(), &[]);
    assert!(r.stderr.contains("not committed yet"), "{}", r.stderr);
    assert!(r.stderr.contains("records.lock"), "{}", r.stderr);
    assert!(lock.exists());
    assert!(!env.vault.join(".git/rutter/stale-locks").exists());
    std::fs::remove_file(&lock).unwrap();
    let r = env.rutter(&["commit"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(env
        .committed(&env.first_day())
        .contains("Killed mid-update."));
}

#[test]
fn the_next_capture_commits_what_was_pending() {
    let env = Env::git_vault();
    let lock = env.vault.join(".git/refs/rutter/records.lock");
    std::fs::write(&lock, "stale").unwrap();
    env.capture(directive_payload("Pending one.", &[]).as_bytes(), &[]);
    std::fs::remove_file(&lock).unwrap();
    let r = env.capture(directive_payload("Second one.", &[]).as_bytes(), &[]);
    assert!(r.stderr.contains("committed "), "{}", r.stderr);
    let msg = env.git(&["log", "-1", "--format=%B", "refs/rutter/records"]);
    assert!(
        msg.starts_with("rutter: capture ") && msg.contains("(2 entries)"),
        "{msg}"
    );
    assert_eq!(msg.matches("Rutter-Entry:").count(), 2);
}

/// What the model or the payload wrote reaches the hook's stderr as one inert field: a ref or
/// a transcript path holding an OSC title sequence, a colour escape, a bell or a newline never
/// acts on the terminal (or on the client that shows the line) and never starts a line.
#[test]
fn the_hooks_stderr_never_carries_a_control_character_from_its_input() {
    let env = Env::git_vault();
    let directive = br#"{"summary":"x","refs":["Notes/\u001b]0;PWN\u0007.md","Notes/\u001b[31mred\nFAKE: line.md"]}"#;
    let r = env.capture(directive, &[]);
    let payload = br#"{"session_id":"s","transcript_path":"/tmp/no\u001b]0;PWN\u0007.jsonl","cwd":"/tmp","hook_event_name":"Stop"}"#;
    let t = env.capture(payload, &["--client", "claude"]);
    for run in [&r, &t] {
        assert_eq!(run.code, 0);
        assert!(
            !run.stderr.chars().any(|c| c.is_control() && c != '\n'),
            "{:?}",
            run.stderr
        );
        assert!(
            run.stderr
                .lines()
                .all(|l| l.starts_with("[librarian-capture]")),
            "{:?}",
            run.stderr
        );
    }
    assert!(
        r.stderr.contains(r"Notes/\u{001B}]0;PWN\u{0007}.md"),
        "{}",
        r.stderr
    );
    assert!(
        t.stderr.contains(r"/tmp/no\u{001B}]0;PWN\u{0007}.jsonl"),
        "{}",
        t.stderr
    );
}
