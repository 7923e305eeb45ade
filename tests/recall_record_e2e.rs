//! End to end for "recall reads the record" and `retract` (spec/recall.md,
//! spec/record-format.md): the built binary on real git vaults, the real `git`, and rmcp's own
//! client for `librarian-recent`. A day file edited, deleted, emptied or hand-extended never
//! changes what recall serves, only how it marks it; a retraction hides an entry everywhere
//! while the record keeps it byte for byte.

use crate::common;

use common::json::{decode, LogRow, Recent};
use common::*;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::process::Stdio;

const D30: &str = "_librarian/sessions/2026-11-30.md";
const D29: &str = "_librarian/sessions/2026-11-29.md";

/// `(id, time, summary)` of the entries [`vault`] captures, oldest first; all in session S.
const ENTRIES: [(&str, &str, &str); 3] = [
    (
        "20261129T090000000Z",
        "2026-11-29T09:00:00.000Z",
        "Moved the launch to Friday.",
    ),
    (
        "20261130T100000000Z",
        "2026-11-30T10:00:00.000Z",
        "The journal stays private.",
    ),
    (
        "20261130T110000000Z",
        "2026-11-30T11:00:00.000Z",
        "Agreed a fortnightly cadence.",
    ),
];

const EDITED: &str = "The journal goes public.";
const MARK_EDITED: &str = "[edited after commit]";
const MARK_DELETED: &str = "[deleted from the working tree]";
const MARK_PENDING: &str = "[not committed yet]";
const MARK_UNVERIFIED: &str = "[unverified]";
const RESTORE_HINT: &str = "Entries marked [deleted from the working tree] are read from refs/rutter/records; run `git rutter restore` to put their day files back.";

/// A git vault with [`ENTRIES`] captured and committed (each citing Notes/a.md); verify clean.
fn vault() -> Env {
    let env = Env::git_vault();
    for (_, time, summary) in ENTRIES {
        let r = env.capture_at(time, summary, &["Notes/a.md"]);
        assert!(r.stderr.contains("to refs/rutter/records."), "{}", r.stderr);
    }
    assert_eq!(env.rutter(&["verify"]).code, 0);
    env
}

/// Runs the binary, checks it did not panic and exited 0.
fn ok(env: &Env, args: &[&str]) -> Run {
    let r = env.rutter(args);
    assert!(!r.stderr.contains("panicked"), "{args:?}: {}", r.stderr);
    assert_eq!(r.code, 0, "{args:?}: {}{}", r.stdout, r.stderr);
    r
}

/// `recent --json` as `(id, summary, status)` of every step, newest session first.
fn steps(env: &Env) -> Vec<(String, String, String)> {
    let recent: Recent = decode(&ok(env, &["recent", "--json"]).stdout);
    recent
        .steps()
        .map(|s| (s.id.clone(), s.summary.clone(), s.status.clone()))
        .collect()
}

fn step(i: usize, status: &str) -> (String, String, String) {
    let (id, _, summary) = ENTRIES[i];
    (id.into(), summary.into(), status.into())
}

/// Replaces the summary of the 2026-11-30 10:00 entry in the working day file, as `sed -i`
/// would (a new file renamed over the old one).
fn edit_summary(env: &Env) {
    let text = env.read(D30);
    let from = format!("\"summary\":\"{}\"", ENTRIES[1].2);
    assert!(text.contains(&from));
    let edited = text
        .replace(&from, &format!("\"summary\":\"{EDITED}\""))
        .replace(ENTRIES[1].2, EDITED);
    let tmp = env.vault.join("_librarian/sessions/.sed-tmp");
    std::fs::write(&tmp, edited).unwrap();
    std::fs::rename(tmp, env.vault.join(D30)).unwrap();
}

// ---- librarian-recent over rmcp's client -----------------------------------------------------

type Client = RunningService<RoleClient, ()>;

async fn connect(env: &Env) -> Client {
    let mut cmd = env.cmd();
    cmd.arg("mcp");
    let (transport, _) = TokioChildProcess::builder(tokio::process::Command::from(cmd))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    ().serve(transport).await.unwrap()
}

async fn tool_text(client: &Client, tool: &str, args: Value) -> String {
    let params = CallToolRequestParams::new(tool.to_string())
        .with_arguments(args.as_object().cloned().unwrap());
    let result = client.call_tool(params).await.unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    result.content[0].as_text().unwrap().text.clone()
}

/// `librarian-recent`'s text from a fresh server.
async fn mcp_recent(env: &Env) -> String {
    let client = connect(env).await;
    let text = tool_text(&client, "librarian-recent", json!({})).await;
    client.cancel().await.unwrap();
    text
}

// ---- edited, deleted, emptied, pending, unverified ------------------------------------------

#[tokio::test]
async fn an_edited_summary_is_served_as_committed_and_marked() {
    let env = vault();
    edit_summary(&env);
    let text = ok(&env, &["recent"]).stdout;
    assert!(
        text.contains(&format!(
            "  · 20261130T100000 2026-11-30 10:00:00 +0000 — {} {MARK_EDITED}\n",
            ENTRIES[1].2
        )),
        "{text}"
    );
    assert!(
        !text.contains(EDITED),
        "the edited text is never shown: {text}"
    );
    assert_eq!(text.matches(MARK_EDITED).count(), 1, "{text}");
    for other in [MARK_DELETED, MARK_PENDING, MARK_UNVERIFIED, RESTORE_HINT] {
        assert!(
            !text.contains(other),
            "only the edited entry is marked: {text}"
        );
    }
    assert_eq!(
        steps(&env),
        [
            step(0, "committed"),
            step(1, "edited after commit"),
            step(2, "committed")
        ]
    );
    let mcp = mcp_recent(&env).await;
    assert!(
        mcp.contains(&format!("[vault] — {} {MARK_EDITED}", ENTRIES[1].2)),
        "{mcp}"
    );
    assert!(!mcp.contains(EDITED), "{mcp}");
    let search = ok(&env, &["search", "alpha"]).stdout;
    assert!(
        search.contains(&format!(
            "↩ prior engagement 2026-11-30: \"{}\"",
            ENTRIES[2].2
        )),
        "{search}"
    );
    let log = ok(&env, &["log", ENTRIES[1].0]).stdout;
    assert!(
        log.contains("edited after commit") && log.contains(ENTRIES[1].2),
        "log and recall agree: {log}"
    );
}

#[tokio::test]
async fn a_deleted_day_file_keeps_recall_working_with_one_restore_hint() {
    let env = vault();
    std::fs::remove_file(env.vault.join(D30)).unwrap();
    std::fs::remove_file(env.vault.join(D29)).unwrap();
    let text = ok(&env, &["recent"]).stdout;
    for (_, _, summary) in ENTRIES {
        assert!(
            text.contains(&format!("— {summary} {MARK_DELETED}")),
            "{text}"
        );
    }
    assert_eq!(text.matches(RESTORE_HINT).count(), 1, "{text}");
    assert!(text.trim_end().ends_with(RESTORE_HINT), "{text}");
    assert_eq!(
        steps(&env),
        [step(0, "deleted"), step(1, "deleted"), step(2, "deleted")]
    );
    let search = ok(&env, &["search", "alpha"]).stdout;
    assert!(
        search.contains(&format!(
            "↩ prior engagement 2026-11-30: \"{}\" {MARK_DELETED}",
            ENTRIES[2].2
        )),
        "{search}"
    );
    let mcp = mcp_recent(&env).await;
    assert_eq!(mcp.matches(RESTORE_HINT).count(), 1, "{mcp}");
    assert!(
        mcp.contains(&format!("— {} {MARK_DELETED}", ENTRIES[0].2)),
        "{mcp}"
    );

    ok(&env, &["restore"]);
    let text = ok(&env, &["recent"]).stdout;
    assert!(
        !text.contains(MARK_DELETED) && !text.contains(RESTORE_HINT),
        "{text}"
    );
}

#[test]
fn an_emptied_day_file_hides_nothing() {
    let env = vault();
    std::fs::write(env.vault.join(D30), "").unwrap();
    assert_eq!(
        steps(&env),
        [
            step(0, "committed"),
            step(1, "edited after commit"),
            step(2, "edited after commit")
        ]
    );
}

#[test]
fn a_journalled_line_reads_not_committed_yet_and_a_hand_written_one_unverified() {
    let env = vault();
    let ref_lock = env.vault.join(".git/refs/rutter/records.lock");
    std::fs::write(&ref_lock, "held").unwrap();
    let r = env.capture_at("2026-11-30T12:00:00.000Z", "Waiting for the lock.", &[]);
    assert!(r.stderr.contains("not committed yet"), "{}", r.stderr);
    std::fs::remove_file(&ref_lock).unwrap();
    let forged = "- 13:00:00 — forged <!-- rutter:entry {\"id\":\"20261130T130000000Z\",\"session_id\":\"S\",\"time\":\"2026-11-30T13:00:00.000Z\",\"summary\":\"Hand-written decision.\",\"refs\":[]} -->\n";
    let mut text = env.read(D30);
    text.push_str(forged);
    env.write(D30, &text);

    let out = ok(&env, &["recent"]).stdout;
    assert!(
        out.contains(&format!("— Waiting for the lock. {MARK_PENDING}")),
        "{out}"
    );
    assert!(
        out.contains(&format!("— Hand-written decision. {MARK_UNVERIFIED}")),
        "{out}"
    );
    let by_id = |id: &str| {
        let got = steps(&env);
        got.into_iter()
            .find(|(i, ..)| i == id)
            .map(|(_, summary, status)| (summary, status))
            .unwrap()
    };
    let (pending, unverified) = ("20261130T120000000Z", "20261130T130000000Z");
    assert_eq!(
        by_id(pending),
        ("Waiting for the lock.".into(), "pending".into())
    );
    assert_eq!(
        by_id(unverified),
        ("Hand-written decision.".into(), "unverified".into())
    );
    // The journalled line's text is the journal's: an edit of it in the day file changes nothing.
    let tampered = env
        .read(D30)
        .replace("Waiting for the lock.", "Tampered while waiting.");
    env.write(D30, &tampered);
    assert_eq!(by_id(pending).0, "Waiting for the lock.");

    // `commit` commits the journal's line, not the tampered one, which now reads as an edit.
    // It names the hand-written line, which it never commits, and exits 1 (it left the line
    // out silently, exit 0, before).
    let c = env.rutter(&["commit"]);
    assert_eq!(c.code, 1, "{}", c.stderr);
    assert!(c.stdout.starts_with("committed 1 entry "), "{}", c.stdout);
    assert!(
        c.stderr.contains(
            "_librarian/sessions/2026-11-30.md holds 20261130T130000000Z, a line no capture wrote; it was not committed."
        ),
        "{}",
        c.stderr
    );
    assert_eq!(
        by_id(pending),
        ("Waiting for the lock.".into(), "edited after commit".into())
    );
    assert!(env
        .committed(D30)
        .contains("\"summary\":\"Waiting for the lock.\""));
    assert_eq!(by_id(unverified).1, "unverified");
}

/// An older day file edited in place (its folder's mtime unchanged, so the quick refresh trusts
/// the folder) is marked by the very next `recent`: the days it shows are checked.
#[test]
fn an_older_day_file_edited_in_place_is_marked_at_once() {
    let env = vault();
    for day in ["2026-12-01", "2026-12-02"] {
        env.capture_at(
            &format!("{day}T08:00:00.000Z"),
            &format!("Later on {day}."),
            &[],
        );
    }
    let sessions = env.vault.join("_librarian/sessions");
    age(&sessions);
    ok(&env, &["recent"]);
    let text = env.read(D29).replace("Friday", "Monday");
    std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(env.vault.join(D29))
        .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()))
        .unwrap();
    age(&sessions);
    let out = ok(&env, &["recent"]).stdout;
    assert!(
        out.contains(&format!("— {} {MARK_EDITED}", ENTRIES[0].2)),
        "{out}"
    );
}

/// Sets a path's mtime far in the past.
fn age(path: &std::path::Path) {
    use rustix::fs::{utimensat, AtFlags, Timespec, Timestamps, CWD};
    let old = Timespec {
        tv_sec: 1_700_000_000,
        tv_nsec: 0,
    };
    let times = Timestamps {
        last_access: old,
        last_modification: old,
    };
    utimensat(CWD, path, &times, AtFlags::empty()).unwrap();
}

#[test]
fn deleting_the_index_keeps_recall_marked() {
    let env = vault();
    edit_summary(&env);
    std::fs::remove_file(env.vault.join(D29)).unwrap();
    let r = ok(
        &env,
        &[
            "retract",
            ENTRIES[2].0,
            "--reason",
            "Not decided after all.",
        ],
    );
    assert!(r.stdout.starts_with("retracted "), "{}", r.stdout);
    let before = (
        ok(&env, &["recent"]).stdout,
        ok(&env, &["recent", "--json"]).stdout,
        ok(&env, &["log", "--json"]).stdout,
        ok(&env, &["search", "alpha"]).stdout,
    );
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(env.vault.join(format!(".git/rutter/index.sqlite{suffix}")));
    }
    let search = ok(&env, &["search", "alpha"]).stdout;
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(env.vault.join(format!(".git/rutter/index.sqlite{suffix}")));
    }
    let after = (
        ok(&env, &["recent"]).stdout,
        ok(&env, &["recent", "--json"]).stdout,
        ok(&env, &["log", "--json"]).stdout,
        search,
    );
    assert_eq!(before, after);
    assert!(before.0.contains(MARK_EDITED) && before.0.contains(MARK_DELETED));
    assert!(!before.0.contains(ENTRIES[2].2), "{}", before.0);
}

/// The trial's §10: a confirmed binding reads as confirmed right after the index is deleted.
#[test]
fn a_confirmed_binding_survives_a_deleted_index() {
    let env = vault();
    std::fs::rename(
        env.vault.join("Notes/a.md"),
        env.vault.join("Notes/alpha.md"),
    )
    .unwrap();
    env.write(
        "Notes/alpha.md",
        &format!("{NOTE_A}\nEdited after the move.\n"),
    );
    ok(&env, &["reindex"]);
    ok(
        &env,
        &["identity", "confirm", "Notes/a.md", "Notes/alpha.md"],
    );
    let confirmed = ok(&env, &["recent"]).stdout;
    assert!(
        confirmed.contains("(renamed to Notes/alpha.md; changed since capture)"),
        "{confirmed}"
    );
    std::fs::remove_file(env.vault.join(".git/rutter/index.sqlite")).unwrap();
    assert_eq!(ok(&env, &["recent"]).stdout, confirmed);
}

#[test]
fn a_vault_without_a_record_reads_its_day_files_unmarked() {
    let env = Env::bare();
    env.write("Notes/a.md", NOTE_A);
    let r = env.capture_at("2026-11-30T10:00:00.000Z", "No git here.", &["Notes/a.md"]);
    assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
    let r = ok(&env, &["recent"]);
    assert!(r.stdout.contains("— No git here.\n"), "{}", r.stdout);
    assert!(!r.stdout.contains(MARK_UNVERIFIED), "{}", r.stdout);
    assert_eq!(
        r.stderr.matches("is not a git repository").count(),
        1,
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("git rutter init"), "{}", r.stderr);
    assert_eq!(steps(&env)[0].2, "unverified");
}

// ---- retract ---------------------------------------------------------------------------------

#[tokio::test]
async fn retract_hides_an_entry_from_recall_and_log_says_why() {
    let env = vault();
    let day_before = env.read(D30);
    let tip_before = env.git(&["rev-parse", "refs/rutter/records"]);
    let r = env
        .cmd()
        .env("RUTTER_TIMESTAMP", "2026-12-01T09:00:00.000Z")
        .args([
            "retract",
            ENTRIES[2].0,
            "--reason",
            "The cadence was an example in a code fence.",
        ])
        .output()
        .unwrap();
    let r: Run = r.into();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let commit = env
        .git(&["rev-parse", "refs/rutter/records"])
        .trim()
        .to_string();
    assert_eq!(
        r.stdout,
        format!(
            "retracted {} (2026-11-30 11:00:00: {}); recorded in refs/rutter/records as {}\n",
            ENTRIES[2].0,
            ENTRIES[2].2,
            &commit[..12]
        )
    );

    // The commit is one pure addition to today's day file, with its own subject and trailers.
    let message = env.git(&["log", "-1", "--format=%B", "refs/rutter/records"]);
    let line = format!(
        "- 09:00:00 — retracted {}: The cadence was an example in a code fence. <!-- rutter:retract {{\"id\":\"20261201T090000000Z\",\"retracts\":\"{}\",\"time\":\"2026-12-01T09:00:00.000Z\",\"reason\":\"The cadence was an example in a code fence.\"}} -->",
        ENTRIES[2].0, ENTRIES[2].0
    );
    assert_eq!(
        message,
        format!("rutter: retract 2026-12-01\n\n{line}\n\nRutter-Retraction: 20261201T090000000Z\nRutter-Retracts: {}\nRutter-Format: 2\n\n", ENTRIES[2].0)
    );
    let diff = env.git(&[
        "diff",
        "--numstat",
        tip_before.trim(),
        "refs/rutter/records",
    ]);
    assert!(
        diff.trim_end()
            .ends_with("_librarian/sessions/2026/2026-12-01.md"),
        "{diff}"
    );
    assert!(
        diff.lines().all(|l| l.split('\t').nth(1) == Some("0")),
        "only additions: {diff}"
    );
    assert!(env
        .read("_librarian/sessions/2026-12-01.md")
        .ends_with(&format!("{line}\n")));
    assert_eq!(
        env.read(D30),
        day_before,
        "the entry's line stays byte for byte"
    );
    assert_eq!(env.committed(D30), day_before);

    // Recall hides it everywhere.
    assert_eq!(steps(&env), [step(0, "committed"), step(1, "committed")]);
    let text = ok(&env, &["recent"]).stdout;
    assert!(!text.contains(ENTRIES[2].2), "{text}");
    let mcp = mcp_recent(&env).await;
    assert!(
        !mcp.contains(ENTRIES[2].2) && mcp.contains(ENTRIES[1].2),
        "{mcp}"
    );
    let search = ok(&env, &["search", "alpha"]).stdout;
    assert!(
        search.contains(&format!(
            "↩ prior engagement 2026-11-30: \"{}\"",
            ENTRIES[1].2
        )),
        "the engagement falls back to the newest entry not retracted: {search}"
    );

    // log says why, with the retraction's commit.
    let log = ok(&env, &["log", ENTRIES[2].0]).stdout;
    assert!(
        log.ends_with(&format!(
            " retracted             {}  {}  (retracted in {}: The cadence was an example in a code fence.)\n",
            ENTRIES[2].0, ENTRIES[2].2, &commit[..7]
        )),
        "{log}"
    );
    let rows: Vec<LogRow> = decode(&ok(&env, &["log", "--json", ENTRIES[2].0]).stdout);
    assert_eq!(rows[0].status, "retracted");
    let retraction = rows[0].retraction.as_ref().unwrap();
    assert_eq!(
        (
            retraction.id.as_str(),
            retraction.day.as_str(),
            retraction.time.as_str(),
            retraction.reason.as_str(),
            retraction.commit.as_deref()
        ),
        (
            "20261201T090000000Z",
            "2026-12-01",
            "2026-12-01T09:00:00.000Z",
            "The cadence was an example in a code fence.",
            Some(commit.as_str())
        )
    );

    // The record verifies clean, for git and for rutter, incrementally and in full.
    assert_eq!(ok(&env, &["verify"]).code, 0);
    assert_eq!(ok(&env, &["verify", "--full"]).code, 0);
    let fsck = env.git(&["fsck", "--strict"]);
    assert!(!fsck.contains("error"), "{fsck}");
}

#[test]
fn retract_refuses_unknown_malformed_unverified_and_repeated_ids() {
    let env = vault();
    let forged = "- 13:00:00 — forged <!-- rutter:entry {\"id\":\"20261130T130000000Z\",\"time\":\"2026-11-30T13:00:00.000Z\",\"summary\":\"Hand-written.\",\"refs\":[]} -->\n";
    let mut text = env.read(D30);
    text.push_str(forged);
    env.write(D30, &text);
    let tip = env.git(&["rev-parse", "refs/rutter/records"]);
    let files = env.all_records();
    let refused = |args: &[&str], code: i32, message: &str| {
        let r = env.rutter(args);
        assert_eq!(
            (r.code, r.stdout.as_str()),
            (code, ""),
            "{args:?}: {}",
            r.stderr
        );
        assert_eq!(r.stderr, format!("git-rutter: {message}\n"), "{args:?}");
        assert_eq!(
            env.git(&["rev-parse", "refs/rutter/records"]),
            tip,
            "{args:?}"
        );
        assert_eq!(env.all_records(), files, "{args:?} wrote nothing");
    };
    refused(
        &["retract", "20260101T000000000Z", "--reason", "x"],
        1,
        "no entry 20260101T000000000Z in refs/rutter/records or the pending journal; nothing was retracted. `git rutter log` lists the entries.",
    );
    refused(
        &["retract", "../../etc/passwd", "--reason", "x"],
        1,
        "\"../../etc/passwd\" is not an entry id (one looks like 20261130T073141112Z, or its start as `recent` shows it: at least 15 characters); `git rutter log` lists them.",
    );
    refused(
        &["retract", "20261130T130000000Z", "--reason", "x"],
        1,
        "entry 20261130T130000000Z is only in the working day file 2026-11-30.md, not in the record (unverified); nothing was retracted. `git rutter verify` shows how it got there.",
    );
    refused(
        &["retract", ENTRIES[0].0, "--reason", " \t\n"],
        2,
        "the reason is empty; say why the entry is retracted with --reason TEXT.",
    );
    let first = env
        .cmd()
        .env("RUTTER_TIMESTAMP", "2026-12-01T09:00:00.000Z")
        .args(["retract", ENTRIES[0].0, "--reason", "Wrong\nline."])
        .output()
        .unwrap();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let tip = env.git(&["rev-parse", "refs/rutter/records"]);
    let files = env.all_records();
    let again = env.rutter(&["retract", ENTRIES[0].0, "--reason", "Again."]);
    assert_eq!((again.code, again.stdout.as_str()), (1, ""));
    assert_eq!(
        again.stderr,
        format!("git-rutter: entry {} is already retracted (by 20261201T090000000Z on 2026-12-01: Wrong line.); nothing changed.\n", ENTRIES[0].0)
    );
    assert_eq!(env.git(&["rev-parse", "refs/rutter/records"]), tip);
    assert_eq!(env.all_records(), files, "retracting twice changes nothing");
}

/// A retraction the ref lock kept from committing is journalled: recall honours it at once,
/// verify counts it as a pending line (not a finding), and `commit` commits it.
#[test]
fn a_pending_retraction_is_honoured_and_committed_later() {
    let env = vault();
    let ref_lock = env.vault.join(".git/refs/rutter/records.lock");
    std::fs::write(&ref_lock, "held").unwrap();
    let r = env.rutter(&["retract", ENTRIES[1].0, "--reason", "Premature.", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("journalled but not committed yet"),
        "{}",
        r.stderr
    );
    let v: common::decoded::Retract = common::json::decode(&r.stdout);
    assert_eq!(
        (v.entry.as_str(), v.commit, v.reason.as_str()),
        (ENTRIES[1].0, None, "Premature.")
    );
    assert_eq!(v.hints, ["`git rutter commit` commits it."], "{}", r.stdout);
    std::fs::remove_file(&ref_lock).unwrap();
    assert_eq!(steps(&env), [step(0, "committed"), step(2, "committed")]);
    let verify = env.rutter(&["verify"]);
    assert_eq!(verify.code, 0, "{}", verify.stdout);
    assert!(
        verify.stdout.contains("1 pending line(s)"),
        "{}",
        verify.stdout
    );
    let log = ok(&env, &["log", ENTRIES[1].0]).stdout;
    assert!(
        log.contains("(retracted in a pending commit: Premature.)"),
        "{log}"
    );
    assert!(ok(&env, &["commit"])
        .stdout
        .starts_with("committed 1 entry"));
    let commit = env.git(&["rev-parse", "--short=7", "refs/rutter/records"]);
    let log = ok(&env, &["log", ENTRIES[1].0]).stdout;
    assert!(
        log.contains(&format!("(retracted in {}: Premature.)", commit.trim())),
        "{log}"
    );
    assert_eq!(env.rutter(&["verify"]).code, 0);
}

/// A retraction line in today's day file changes nothing for captures: the next one appends
/// after it, dedupe still knows what the session recorded, and verify stays clean.
#[test]
fn captures_after_a_retraction_append_and_dedupe_as_before() {
    let env = vault();
    let at = |ts: &str, args: &[&str]| -> Run {
        env.cmd()
            .env("RUTTER_TIMESTAMP", ts)
            .args(args)
            .output()
            .unwrap()
            .into()
    };
    let r = at(
        "2026-11-30T12:00:00.000Z",
        &["retract", ENTRIES[1].0, "--reason", "Said in jest."],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let again = env.capture_at("2026-11-30T12:30:00.000Z", ENTRIES[2].2, &["Notes/a.md"]);
    assert!(
        again.stderr.contains("already recorded"),
        "{}",
        again.stderr
    );
    let next = env.capture_at("2026-11-30T13:00:00.000Z", "Chose the red cover.", &[]);
    assert!(
        next.stderr.contains("to refs/rutter/records."),
        "{}",
        next.stderr
    );
    let text = env.read(D30);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[lines.len() - 2].contains("<!-- rutter:retract "),
        "{text}"
    );
    assert!(
        lines[lines.len() - 1].contains("Chose the red cover."),
        "{text}"
    );
    assert_eq!(env.committed(D30), text);
    assert_eq!(ok(&env, &["verify"]).code, 0);
    let got: Vec<String> = steps(&env).into_iter().map(|(id, ..)| id).collect();
    assert!(!got.contains(&ENTRIES[1].0.to_string()), "{got:?}");
    assert_eq!(got.len(), 3, "{got:?}");
}

/// The record cache as the index holds it: every row of its four tables, in key order, and
/// the `meta` rows that say what it reflects.
fn record_cache(env: &Env) -> Vec<String> {
    let db = rusqlite::Connection::open(env.vault.join(".git/rutter/index.sqlite")).unwrap();
    let mut out = Vec::new();
    for q in [
        "SELECT * FROM day_files ORDER BY file",
        "SELECT * FROM entries ORDER BY file, seq",
        "SELECT * FROM entry_refs ORDER BY file, seq, path",
        "SELECT * FROM retractions ORDER BY file, seq",
        "SELECT * FROM meta WHERE key IN ('records_tip', 'sessions_mtime') ORDER BY key",
    ] {
        let mut stmt = db.prepare(q).unwrap();
        let n = stmt.column_count();
        let rows = stmt
            .query_map([], |r| {
                let cells: Vec<String> = (0..n)
                    .map(|i| format!("{:?}", r.get_ref(i).unwrap()))
                    .collect();
                Ok(cells.join("|"))
            })
            .unwrap();
        out.extend(rows.map(Result::unwrap));
    }
    out
}

fn delete_index(env: &Env) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(env.vault.join(format!(".git/rutter/index.sqlite{suffix}")));
    }
}

/// A new index fills its record cache on a second thread into a database of its own, copied in
/// (spec/index.md, "Building"): it holds row for row what a rebuild in one transaction holds,
/// and a side build that fails, or a copy that fails half-way, leaves the cache for the first
/// refresh to fill, with the same answers.
#[test]
fn a_new_index_built_beside_its_notes_holds_what_a_rebuild_holds() {
    let env = vault();
    edit_summary(&env);
    std::fs::remove_file(env.vault.join(D29)).unwrap();
    ok(&env, &["retract", ENTRIES[2].0, "--reason", "Not decided."]);
    ok(&env, &["reindex", "--force"]);
    let rebuilt = record_cache(&env);
    assert!(rebuilt.len() > 5, "{rebuilt:?}");
    let answers = |env: &Env| {
        (
            ok(env, &["recent", "--json"]).stdout,
            ok(env, &["log", "--json"]).stdout,
        )
    };
    let expected = answers(&env);
    delete_index(&env);
    // What a build killed part-way left behind goes with the next build; no process has this id.
    for left in ["index.building-2147483646", "index.records-2147483646"] {
        std::fs::write(env.vault.join(".git/rutter").join(left), "half a database").unwrap();
    }
    let r = ok(&env, &["reindex"]);
    assert!(r.stdout.contains("built: a new index"), "{}", r.stdout);
    assert_eq!(record_cache(&env), rebuilt);
    assert_eq!(answers(&env), expected);
    let leftovers: Vec<_> = std::fs::read_dir(env.vault.join(".git/rutter"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("records-") || n.contains("building-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // A side build stopped after its first day, its rest filled by the building thread (a
    // vault of few notes and many days); and that rest failing.
    for point in [
        "index-side-build",
        "index-side-copy",
        "index-side-stop",
        "index-side-stop,index-side-rest",
    ] {
        delete_index(&env);
        let mut c = env.cmd();
        c.env("RUTTER_FAILPOINTS", point)
            .env("RUTTER_INDEX_TRACE", "1")
            .arg("reindex");
        let r: Run = c.output().unwrap().into();
        assert_eq!(r.code, 0, "{point}: {}", r.stderr);
        assert_eq!(record_cache(&env), rebuilt, "{point}");
        assert_eq!(answers(&env), expected, "{point}");
        // Who filled the cache: the side build alone, or its first day and the building thread
        // the rest; nobody when the fill failed (the first refresh did).
        let said = |by_side: usize, after: usize| {
            r.stderr.contains(&format!(
                "record cache: {by_side} day file(s) by the side build, {after} after it"
            ))
        };
        let db = rusqlite::Connection::open(env.vault.join(".git/rutter/index.sqlite")).unwrap();
        let days: i64 = db
            .query_row("SELECT count(*) FROM day_files", [], |r| r.get(0))
            .unwrap();
        let days = days as usize;
        assert!(days > 2, "{days}");
        match point {
            "index-side-stop" => assert!(said(1, days - 1), "{}", r.stderr),
            _ => assert!(!r.stderr.contains("record cache:"), "{}", r.stderr),
        }
    }
    let r = {
        delete_index(&env);
        let mut c = env.cmd();
        c.env("RUTTER_INDEX_TRACE", "1").arg("reindex");
        Run::from(c.output().unwrap())
    };
    assert!(
        r.stderr.contains("day file(s) by the side build"),
        "{}",
        r.stderr
    );
}

/// Processes that find no index at once build it one at a time: the others wait for the
/// build's lock and open what it built (two builds renamed over each other would share one
/// WAL file and corrupt the index: the MCP servers of several clients start together).
#[test]
fn processes_that_find_no_index_at_once_build_it_once() {
    let env = vault();
    for round in 0..3 {
        delete_index(&env);
        let runs: Vec<Run> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..6)
                .map(|i| {
                    let env = &env;
                    scope.spawn(move || match i % 2 {
                        0 => env.rutter(&["reindex"]),
                        _ => env.rutter(&["recent", "--json"]),
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for r in &runs {
            assert_eq!(r.code, 0, "round {round}: {}{}", r.stdout, r.stderr);
        }
        let built = runs
            .iter()
            .filter(|r| r.stdout.contains("built: a new index"))
            .count();
        assert!(built <= 1, "round {round}: built {built} times");
        let db = rusqlite::Connection::open(env.vault.join(".git/rutter/index.sqlite")).unwrap();
        let check: String = db
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(check, "ok", "round {round}");
        assert_eq!(steps(&env).len(), 3, "round {round}");
    }
}

// ---- what recall serves of lines no capture could write -------------------------------------

/// An entry line of 2026-11-30 in session `sid`, its id `n` seconds after 12:00.
fn forged_line(n: u32, sid: &str, summary: &str, project: &str, path: &str) -> String {
    let json = json!({
        "id": format!("20261130T12{:02}{:02}000Z", n / 60, n % 60),
        "session_id": sid,
        "time": format!("2026-11-30T12:{:02}:{:02}.000Z", n / 60, n % 60),
        "summary": summary,
        "refs": [{"path": path, "hash": format!("sha256:{}", "0".repeat(64))}],
        "workspace": {"cwd": "/w", "project": project},
    });
    format!("- 12:00:00 — forged <!-- rutter:entry {json} -->\n")
}

/// Lines already in the record that no capture could have written (taken from a remote before
/// the intake held them to the record grammar, or forged into the ref by hand) are served with
/// every field cut at its bound and marked: `recent`, `recent --json` and `librarian-recent`,
/// whose whole answer stays within 64 KiB and says when it was cut.
#[tokio::test]
async fn readers_serve_every_field_within_its_bound_whatever_the_record_holds() {
    let env = vault();
    let huge = "B".repeat(5 << 20);
    let mut text = env.read(D30);
    text.push_str(&forged_line(
        0,
        "big",
        &huge,
        &"P".repeat(3000),
        &"n".repeat(5000),
    ));
    for n in 1..60 {
        text.push_str(&forged_line(
            n,
            &format!("s{n}"),
            &"w".repeat(2000),
            "p",
            "Notes/a.md",
        ));
    }
    Forged {
        writes: &[("_librarian/sessions/2026/2026-11-30.md", &text)],
        message: "rutter: capture 2026-11-30",
        why: "forged",
        ..Default::default()
    }
    .commit(&env);
    env.write(D30, &text);
    let cut = format!("… [cut: {} more characters]", (5 << 20) - 2000);
    let r = ok(&env, &["recent", "--no-pager", "-n", "100"]);
    assert!(r.stdout.len() < 400_000, "{}", r.stdout.len());
    assert!(
        r.stdout.contains(&format!("{}{cut}", "B".repeat(2000))),
        "the summary is cut"
    );
    assert!(
        r.stdout.contains("[cut: 2488 more characters]"),
        "the project is cut"
    );
    assert!(
        r.stdout.contains("[cut: 3976 more characters]"),
        "the path is cut"
    );
    let recent: Recent = decode(&ok(&env, &["recent", "--json", "-n", "100"]).stdout);
    let big = recent
        .sessions
        .iter()
        .find(|s| s.session_id.as_deref() == Some("big"))
        .unwrap();
    let step = &big.steps[0];
    assert!(
        step.summary == format!("{}{cut}", "B".repeat(2000)),
        "--json cuts the summary"
    );
    let project = step.workspace.as_ref().unwrap().project.as_str();
    assert_eq!(
        project,
        format!("{}… [cut: 2488 more characters]", "P".repeat(512))
    );
    let all = ok(&env, &["recent", "--no-pager", "--all"]);
    assert!(all.stdout.len() < 400_000, "{}", all.stdout.len());
    assert!(all.stdout.contains(&cut), "--all cuts as recent does");
    let client = connect(&env).await;
    let text = tool_text(&client, "librarian-recent", json!({"count": 100})).await;
    assert!(text.len() <= 64 << 10, "{}", text.len());
    assert!(
        text.contains("[This answer was cut to 64 KiB: the newest"),
        "{}",
        &text[text.len() - 300..]
    );
    let one = json!({"project": "P".repeat(3000)});
    let text = tool_text(&client, "librarian-recent", one).await;
    client.cancel().await.unwrap();
    assert!(text.len() < 20_000, "{}", text.len());
    assert!(text.contains(&cut), "the summary is cut");
    assert!(
        text.contains("[cut: 3976 more characters]"),
        "the path is cut"
    );
}
