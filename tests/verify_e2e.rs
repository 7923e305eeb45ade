//! Tampering, every way a user or a script could, each on a fresh vault: `verify` exits 1 and
//! names the entry and the kind; a clean vault with pending lines exits 0.

use crate::common;
use common::json::{decode, LogRow, Recent, Verify};
use common::*;

/// A vault with three committed entries on one day.
fn vault() -> (Env, String) {
    let env = Env::git_vault();
    for (i, s) in ["First decision.", "Second decision.", "Third decision."]
        .iter()
        .enumerate()
    {
        let ts = format!("2026-11-30T10:0{i}:00.000Z");
        let r = env.capture_at(&ts, s, &["Notes/a.md"]);
        assert!(r.stderr.contains("committed"), "{}", r.stderr);
    }
    let day = "_librarian/sessions/2026-11-30.md".to_string();
    let r = env.rutter(&["verify"]);
    assert_eq!(r.code, 0, "a fresh vault verifies clean: {}", r.stdout);
    (env, day)
}

/// The first 12 hex digits of the blob the record ref's tip holds for the day file `day`
/// (kept in its year's folder there): what names an incident to that file in a finding's id.
fn committed_blob(env: &Env, day: &str) -> String {
    let name = day.rsplit('/').next().unwrap();
    let in_ref = format!(
        "refs/rutter/records:_librarian/sessions/{}/{name}",
        &name[..4]
    );
    env.git(&["rev-parse", &in_ref]).trim()[..12].to_string()
}

fn verify(env: &Env) -> (i32, Verify) {
    let r = env.rutter(&["verify", "--json"]);
    (r.code, decode(&r.stdout))
}

/// `(kind, entry)` of each finding (`""`: it names no entry).
fn kinds(v: &Verify) -> Vec<(String, String)> {
    v.findings
        .iter()
        .map(|f| (f.kind.clone(), f.entry.clone().unwrap_or_default()))
        .collect()
}

fn assert_names(env: &Env, kind: &str, entry: &str) {
    let (code, v) = verify(env);
    assert_eq!(code, 1, "{v:#?}");
    let k = kinds(&v);
    assert!(
        k.iter().any(|(k, e)| k == kind && e.contains(entry)),
        "want {kind} naming {entry:?}, got {k:?}"
    );
}

fn edit(env: &Env, day: &str, from: &str, to: &str) {
    let text = env.read(day);
    assert!(text.contains(from));
    env.write(day, &text.replacen(from, to, 1));
}

#[test]
fn an_edited_summary_is_named_with_its_commit() {
    let (env, day) = vault();
    edit(
        &env,
        &day,
        "\"summary\":\"Second decision.\"",
        "\"summary\":\"Second decision, revised.\"",
    );
    // `--full` checks the working tree on a thread beside the history walk, and names the
    // commit once the walk has learnt it: the same finding.
    for args in [&["verify", "--json"][..], &["verify", "--full", "--json"]] {
        let r = env.rutter(args);
        assert_eq!(r.code, 1, "{args:?}: {}", r.stdout);
        let v: Verify = decode(&r.stdout);
        let f = &v.findings[0];
        assert_eq!(f.kind, "edited");
        assert_eq!(f.entry.as_deref(), Some("20261130T100100000Z"));
        assert_eq!(f.day.as_deref(), Some("2026-11-30"));
        let commit = f.commit.as_deref().unwrap();
        let msg = env.git(&["log", "-1", "--format=%B", commit]);
        assert!(
            msg.contains("Rutter-Entry: 20261130T100100000Z"),
            "{args:?}: the named commit added that entry: {msg}"
        );
        assert!(f.diff.as_deref().unwrap().contains("+- 10:01:00"));
    }
}

/// One `sed` over a day file edits every entry: each finding shows its own entry's lines, not
/// the whole file's diff again (a 28-entry file gave 11 findings of 20 lines each).
#[test]
fn each_edited_entry_shows_its_own_change() {
    let (env, day) = vault();
    env.write(&day, &env.read(&day).replace(" decision.", " DECISION."));
    let (code, v) = verify(&env);
    assert_eq!(code, 1, "{v:#?}");
    assert_eq!(v.findings.len(), 3, "{v:#?}");
    for f in &v.findings {
        let diff = f.diff.as_deref().unwrap();
        let id = f.entry.as_deref().unwrap();
        let changed: Vec<&str> = diff
            .lines()
            .filter(|l| l.starts_with("-- ") || l.starts_with("+- "))
            .collect();
        assert_eq!(changed.len(), 2, "{diff}");
        assert!(changed.iter().all(|l| l.contains(id)), "{diff}");
    }
}

#[test]
fn a_changed_hash_digit_is_found() {
    let (env, day) = vault();
    let text = env.read(&day);
    let at = text.rfind("\"hash\":\"sha256:").unwrap() + 15;
    let mut bytes = text.into_bytes();
    bytes[at] = if bytes[at] == b'0' { b'1' } else { b'0' };
    env.write(&day, &String::from_utf8(bytes).unwrap());
    assert_names(&env, "edited", "20261130T100200000Z");
}

#[test]
fn reordered_lines_are_found() {
    let (env, day) = vault();
    let text = env.read(&day);
    let mut lines: Vec<&str> = text.lines().collect();
    let n = lines.len();
    lines.swap(n - 1, n - 2);
    env.write(&day, &(lines.join("\n") + "\n"));
    let (code, v) = verify(&env);
    assert_eq!(code, 1);
    let named: Vec<String> = kinds(&v)
        .into_iter()
        .filter(|(k, _)| k == "edited")
        .map(|(_, e)| e)
        .collect();
    assert!(
        named
            .iter()
            .any(|e| e == "20261130T100100000Z" || e == "20261130T100200000Z"),
        "a moved entry is named: {named:?}"
    );
}

#[test]
fn a_deleted_line_is_found() {
    let (env, day) = vault();
    let text = env.read(&day);
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !l.contains("Second decision."))
        .collect();
    env.write(&day, &(kept.join("\n") + "\n"));
    assert_names(&env, "edited", "20261130T100100000Z");
}

#[test]
fn a_deleted_truncated_or_symlinked_day_file_is_found() {
    let (env, day) = vault();
    let path = env.vault.join(&day);
    std::fs::remove_file(&path).unwrap();
    let (code, v) = verify(&env);
    assert_eq!((code, kinds(&v)[0].0.as_str()), (1, "deleted"), "{v:#?}");
    let r = env.rutter(&["restore"]);
    assert!(
        r.stdout
            .contains("restored _librarian/sessions/2026-11-30.md"),
        "{}",
        r.stdout
    );
    assert_eq!(verify(&env).0, 0);

    let text = env.read(&day);
    env.write(&day, &text[..text.len() - 40]);
    assert_names(&env, "truncated", "20261130T100200000Z");
    env.rutter(&["restore"]);

    let elsewhere = env.root().join("elsewhere.md");
    std::fs::rename(&path, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
    let (code, v) = verify(&env);
    assert_eq!((code, kinds(&v)[0].0.as_str()), (1, "symlink"), "{v:#?}");
}

/// A day file renamed by hand to another day's name: `verify` names the file once, with the day
/// it belongs to (not one finding per header line and entry), beside the committed file it
/// left; `recent` shows each entry once, from its own day's record.
#[test]
fn a_day_file_renamed_to_another_days_name_is_one_finding_and_recent_shows_it_once() {
    let (env, day) = vault();
    env.capture_at("2026-12-01T09:00:00.000Z", "Later decision.", &[]);
    let moved = "_librarian/sessions/2026-12-05.md";
    std::fs::rename(env.vault.join(&day), env.vault.join(moved)).unwrap();
    let (code, v) = verify(&env);
    assert_eq!(code, 1, "{v:#?}");
    let found: Vec<(String, Option<String>)> = v.kinds();
    assert_eq!(
        found,
        [
            ("unparseable".to_string(), Some(moved.to_string())),
            ("deleted".to_string(), Some(day.clone()))
        ],
        "{v:#?}"
    );
    let detail = &v.finding("unparseable").detail;
    assert!(
        detail.contains("holds the day file of 2026-11-30 (its header and 3 of the lines committed in _librarian/sessions/2026-11-30.md)")
            && detail.contains("move this file back to it"),
        "{detail}"
    );
    let recent: Recent = decode(&env.rutter(&["recent", "--json"]).stdout);
    let ids: Vec<(String, String)> = recent
        .sessions
        .iter()
        .flat_map(|s| s.steps.iter().map(|st| (st.id.clone(), st.status.clone())))
        .collect();
    assert_eq!(ids.len(), 4, "each entry once: {ids:?}");
    assert!(
        ids.iter()
            .filter(|(id, _)| id.starts_with("20261130"))
            .all(|(_, s)| s == "deleted"),
        "{ids:?}"
    );
    let log: Vec<LogRow> = decode(&env.rutter(&["log", "--all", "--json"]).stdout);
    let statuses: Vec<&str> = log.iter().map(|r| r.status.as_str()).collect();
    assert_eq!(
        statuses,
        ["committed", "deleted", "deleted", "deleted"],
        "{log:#?}"
    );

    // A line added by hand to the renamed file is still its own finding.
    let text = env.read(moved);
    env.write(
        moved,
        &format!("{text}{}\n", hand_line("20261205T100000000Z", "Typed.")),
    );
    let (_, v) = verify(&env);
    assert!(
        v.kinds()
            .contains(&("unverified".to_string(), Some(moved.to_string()))),
        "{v:#?}"
    );
}

#[test]
fn a_forged_line_in_the_middle_is_found() {
    let (env, day) = vault();
    let text = env.read(&day);
    let second = text
        .lines()
        .find(|l| l.contains("Second decision."))
        .unwrap();
    let forged = second
        .replace("Second decision.", "Forged decision.")
        .replace("20261130T100100000Z", "20261130T100130000Z");
    env.write(
        &day,
        &text.replacen(second, &format!("{forged}\n{second}"), 1),
    );
    // An entry no commit ever held is unverified, inserted or appended (it read `edited`
    // before verify followed records::status, which log and recall apply).
    assert_names(&env, "unverified", "20261130T100130000Z");
}

#[test]
fn a_rewritten_history_is_found_even_with_a_clean_reflog() {
    let (env, day) = vault();
    let committed = env.committed(&day);
    let edited = committed.replace(
        "\"summary\":\"First decision.\"",
        "\"summary\":\"First decision, quietly changed.\"",
    );
    forge_commit_with(&env, &day, &edited, "looks like a capture");
    env.write(&day, &edited);
    assert_names(&env, "history-rewrite", "20261130T100000000Z");
    let full = env.rutter(&["verify", "--full", "--porcelain"]);
    assert!(full.stdout.contains("history-rewrite"), "{}", full.stdout);
}

#[test]
fn moving_the_ref_backwards_is_found() {
    let (env, _) = vault();
    env.git(&["update-ref", "refs/rutter/records", "refs/rutter/records~2"]);
    let (code, v) = verify(&env);
    assert_eq!(code, 1);
    let k: Vec<String> = kinds(&v).into_iter().map(|(k, _)| k).collect();
    assert!(
        k.contains(&"ref-rewind".to_string()) && k.contains(&"ref-not-descendant".to_string()),
        "{k:?}"
    );
    let detail = v.finding("ref-rewind").detail.clone();
    assert!(
        detail.contains("moved from") && detail.contains(" at 20"),
        "when, from and to: {detail}"
    );
}

#[test]
fn tips_witnessed_since_the_last_verify_are_checked_against_the_commits_since_it() {
    // verify ran in vault(); three more captures are witnessed; the ref is then moved back to
    // the first of them. The history walk from the verified tip covers that one only: the
    // other two must still be named as tips the ref no longer descends from (they are found
    // among the commits since the verified tip, or not at all), and `log` over the same state
    // (which walks no history) reports nothing twice and nothing missing.
    let (env, _) = vault();
    for (i, s) in ["Fourth.", "Fifth.", "Sixth."].iter().enumerate() {
        let r = env.capture_at(&format!("2026-11-30T11:0{i}:00.000Z"), s, &["Notes/a.md"]);
        assert!(r.stderr.contains("committed"), "{}", r.stderr);
    }
    let tips: Vec<String> = env
        .read(".git/rutter/tips")
        .lines()
        .map(str::to_string)
        .collect();
    let [.., fourth, fifth, sixth] = tips.as_slice() else {
        panic!("{tips:?}")
    };
    let log = env.rutter(&["log", "-n", "10"]);
    assert_eq!(log.code, 0, "{}", log.stderr);
    assert!(log.stdout.contains("Sixth."), "{}", log.stdout);
    env.git(&["update-ref", "refs/rutter/records", fourth]);
    let (code, v) = verify(&env);
    assert_eq!(code, 1, "{v:#?}");
    let named: Vec<String> = v
        .findings
        .iter()
        .filter(|f| f.kind == "ref-not-descendant")
        .map(|f| f.commit.clone().unwrap())
        .collect();
    assert_eq!(named.len(), 2, "{v:#?}");
    for tip in [fifth, sixth] {
        assert!(
            named.iter().any(|n| tip.starts_with(n.as_str())),
            "{tip}: {v:#?}"
        );
    }
    assert!(
        !named.iter().any(|n| fourth.starts_with(n.as_str())),
        "{v:#?}"
    );
}

#[test]
fn a_missing_reflog_cannot_be_checked() {
    let (env, _) = vault();
    std::fs::remove_file(env.vault.join(".git/logs/refs/rutter/records")).unwrap();
    let (code, v) = verify(&env);
    assert_eq!(code, 1);
    assert_eq!(kinds(&v)[0].0, "ref-unverifiable");
    let detail = &v.findings[0].detail;
    assert!(detail.contains("cannot check"), "{detail}");
    let id = v.findings[0].id.clone();
    assert!(
        id.starts_with("ref-unverifiable:refs/rutter/records:reflog@"),
        "the incident is the loss of the prefix the last verify accepted: {id}"
    );
    assert!(
        detail.contains(&format!("git rutter verify --ack {id} --reason")),
        "the finding names the exact acknowledgement: {detail}"
    );
    // Following the advice exactly (keep a reflog again, acknowledge) is one acknowledgement:
    // the reflog shorter than that prefix once entries come again is the same incident.
    assert_eq!(env.rutter(&["init"]).code, 0);
    let r = env.rutter(&["verify", "--ack", &id, "--reason", "expired by hand"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    env.capture_at("2026-11-30T11:00:00.000Z", "After the expiry.", &[]);
    let (code, v) = verify(&env);
    assert_eq!(code, 0, "{v:#?}");
    assert!(
        v.findings
            .iter()
            .all(|f| f.acknowledged.is_some() || f.kind == "pending"),
        "{v:#?}"
    );
}

#[test]
fn pending_lines_are_clean_and_reported() {
    let (env, day) = vault();
    std::fs::write(env.vault.join(".git/refs/rutter/records.lock"), "held").unwrap();
    env.rutter(&[
        "capture",
        "--summary",
        "Waiting to be committed.",
        "--session",
        "S",
    ]);
    let (code, v) = verify(&env);
    assert_eq!(code, 0, "{v:#?}");
    assert_eq!(kinds(&v)[0].0, "pending");
    assert!(v.findings[0].detail.contains("journalled"));
    let r = env.rutter(&["verify"]);
    assert!(
        r.stdout.contains("verify: clean") && r.stdout.contains("1 pending line(s)"),
        "{}",
        r.stdout
    );
    // The line gone from its day file (a file the capture could not write, here removed):
    // the journal still holds it, so it is still pending, as `log` says.
    let sessions = env.vault.join("_librarian/sessions");
    for e in std::fs::read_dir(&sessions).unwrap().flatten() {
        if !day.ends_with(&*e.file_name().to_string_lossy()) {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
    let r = env.rutter(&["verify"]);
    assert!(r.stdout.contains("1 pending line(s)"), "{}", r.stdout);
}

#[test]
fn an_acknowledged_finding_stops_failing_but_stays_listed() {
    let (env, day) = vault();
    edit(
        &env,
        &day,
        "\"summary\":\"Second decision.\"",
        "\"summary\":\"Second decision, revised.\"",
    );
    let (_, v) = verify(&env);
    let id = v.findings[0].id.clone();
    let r = env.rutter(&[
        "verify",
        "--ack",
        &id,
        "--reason",
        "I fixed a typo by hand.",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (code, v) = verify(&env);
    assert_eq!(code, 0, "{v:#?}");
    assert_eq!(
        v.findings[0].acknowledged.as_deref(),
        Some("I fixed a typo by hand.")
    );
    assert!(env
        .git(&["log", "-1", "--format=%s", "refs/rutter/records"])
        .starts_with("rutter: ack"));
    let log = env.rutter(&["log"]);
    assert!(log.stdout.contains("edited after commit"), "{}", log.stdout);
}

#[test]
fn real_git_agrees_through_the_private_index() {
    let (env, day) = vault();
    let r = env.rutter(&["diff"]);
    assert_eq!(r.code, 0);
    let git_diff = |env: &Env| -> String {
        let out = std::process::Command::new("git")
            .args(["diff", "--name-only", "--", "_librarian"])
            .env(
                "GIT_INDEX_FILE",
                env.vault.join(".git/rutter/records.index"),
            )
            .current_dir(&env.vault)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(git_diff(&env), "", "clean: git sees no difference either");
    edit(&env, &day, "Third decision.", "Third decision!");
    let r = env.rutter(&["diff"]);
    assert_eq!(r.code, 0, "a difference is not a failure, as git diff");
    assert_eq!(env.rutter(&["diff", "--exit-code"]).code, 1);
    assert!(
        r.stdout.contains("-- 10:02:00") && r.stdout.contains("+- 10:02:00"),
        "{}",
        r.stdout
    );
    assert_eq!(git_diff(&env).trim(), day);
    assert_eq!(verify(&env).0, 1);
}

#[test]
fn changed_notes_are_reported_with_notes() {
    let (env, _) = vault();
    env.write("Notes/a.md", "# Alpha\n\nRewritten since it was cited.\n");
    let r = env.rutter(&["verify", "--notes"]);
    assert_eq!(
        r.code, 0,
        "a changed note is not a damaged record: {}",
        r.stdout
    );
    assert!(
        r.stdout.contains("Notes/a.md changed in place since entry"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("-The alpha note.")
            && r.stdout.contains("+Rewritten since it was cited."),
        "{}",
        r.stdout
    );
}

/// An object of the history that cannot be read (its loose file lost) is a `corrupt-object`
/// finding naming the commit, not a crash; that stored bytes still match their ids is `git
/// fsck`'s check (spec/verify.md).
#[test]
fn an_unreadable_object_of_the_history_is_found() {
    let (env, day) = vault();
    let middle = env.git(&["rev-parse", "--short=7", "refs/rutter/records~1"]);
    let blob = env.git(&[
        "rev-parse",
        &format!("refs/rutter/records~1:{}", in_ref(&day)),
    ]);
    let blob = blob.trim();
    let loose = env
        .vault
        .join(".git/objects")
        .join(&blob[..2])
        .join(&blob[2..]);
    assert!(loose.exists(), "captures write loose objects");
    std::fs::remove_file(&loose).unwrap();
    let r = env.rutter(&["verify", "--full", "--json"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let v: Verify = decode(&r.stdout);
    let corrupt = v.finding("corrupt-object");
    assert_eq!(
        corrupt.commit.as_deref(),
        Some(middle.trim()),
        "{corrupt:#?}"
    );
}

/// The witness-log finding of a verify, if any: `(id, detail)`.
fn witness_finding(v: &Verify) -> Option<(String, String)> {
    v.findings
        .iter()
        .find(|f| f.id.contains(":tips@"))
        .map(|f| (f.id.clone(), f.detail.clone()))
}

#[test]
fn a_deleted_witness_log_cannot_be_checked_until_acknowledged() {
    let (env, _) = vault();
    let tips = env.vault.join(".git/rutter/tips");
    std::fs::remove_file(&tips).unwrap();
    let (code, v) = verify(&env);
    assert_eq!(code, 1, "{v:#?}");
    let (id, detail) = witness_finding(&v).expect("a witness finding");
    assert!(
        detail.contains(".git/rutter/tips is missing") && detail.contains("cannot check"),
        "{detail}"
    );
    assert!(
        detail.contains(&format!("git rutter verify --ack {id} --reason")),
        "{detail}"
    );
    // The next capture writes a new log; it is still not the one verify read before.
    env.capture_at("2026-11-30T11:00:00.000Z", "After the loss.", &[]);
    let (code, v) = verify(&env);
    assert_eq!(code, 1, "{v:#?}");
    assert_eq!(witness_finding(&v).map(|(i, _)| i), Some(id.clone()));
    let r = env.rutter(&[
        "verify",
        "--ack",
        &id,
        "--reason",
        "cleaned .git by mistake",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (code, v) = verify(&env);
    assert_eq!(code, 0, "acknowledged: {v:#?}");
    env.capture_at("2026-11-30T12:00:00.000Z", "Later still.", &[]);
    let (code, v) = verify(&env);
    assert_eq!(code, 0, "{v:#?}");
    assert_eq!(
        witness_finding(&v),
        None,
        "the log read after the ack is the new baseline"
    );
}

#[test]
fn a_truncated_or_rewritten_witness_log_is_found() {
    let (env, _) = vault();
    let tips = env.vault.join(".git/rutter/tips");
    let original = std::fs::read_to_string(&tips).unwrap();
    let lines: Vec<&str> = original.lines().collect();
    assert!(lines.len() >= 3, "{original}");
    std::fs::write(&tips, format!("{}\n", lines[..lines.len() - 1].join("\n"))).unwrap();
    let (code, v) = verify(&env);
    assert_eq!(code, 1, "{v:#?}");
    let (_, detail) = witness_finding(&v).expect("a witness finding");
    assert!(
        detail.contains("is shorter than the last verify read"),
        "{detail}"
    );
    // Same length, one tip swapped for another commit id: rewritten.
    let (env, _) = vault();
    let tips = env.vault.join(".git/rutter/tips");
    let original = std::fs::read_to_string(&tips).unwrap();
    let first = original.lines().next().unwrap().to_string();
    let last = original.lines().last().unwrap().to_string();
    std::fs::write(&tips, original.replacen(&first, &last, 1)).unwrap();
    let (code, v) = verify(&env);
    assert_eq!(code, 1, "{v:#?}");
    let (_, detail) = witness_finding(&v).expect("a witness finding");
    assert!(
        detail.contains("was rewritten since the last verify"),
        "{detail}"
    );
}

#[test]
fn an_object_replaced_through_git_replace_is_found() {
    let (env, day) = vault();
    let spec = format!("refs/rutter/records:{}", in_ref(&day));
    let blob = env.git(&["rev-parse", &spec]).trim().to_string();
    let forged = env
        .committed(&day)
        .replace("Second decision.", "Forged decision.");
    let forged_path = env.root().join("forged.md");
    std::fs::write(&forged_path, &forged).unwrap();
    let fake = env
        .git(&["hash-object", "-w", forged_path.to_str().unwrap()])
        .trim()
        .to_string();
    env.git(&["replace", &blob, &fake]);
    assert!(
        env.committed(&day).contains("Forged decision."),
        "git now shows the forgery"
    );
    let (code, v) = verify(&env);
    assert_eq!(code, 1, "{v:#?}");
    let f = v.finding("replaced-object");
    let detail = &f.detail;
    assert!(
        detail.contains(&format!("git replace -d {blob}")),
        "{detail}"
    );
    assert!(
        !kinds(&v).iter().any(|(k, _)| k == "edited"),
        "verify reads the true objects"
    );
    env.git(&["replace", "-d", &blob]);
    assert_eq!(verify(&env).0, 0);
}

#[test]
fn a_same_size_edit_with_its_mtime_put_back_is_found() {
    let (env, day) = vault();
    let path = env.vault.join(&day);
    let (code, _) = verify(&env);
    assert_eq!(code, 0, "the clean file is now remembered by its stat");
    let before = std::fs::metadata(&path).unwrap();
    let text = env
        .read(&day)
        .replacen("Second decision.", "Second decisioN.", 1);
    std::fs::write(&path, &text).unwrap();
    // Put the mtime back (what `touch -d` would do); only the ctime still tells.
    let mtime =
        std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_nanos(use_mtime_ns(&before));
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let after = std::fs::metadata(&path).unwrap();
    assert_eq!(
        (after.len(), use_mtime_ns(&after)),
        (before.len(), use_mtime_ns(&before))
    );
    assert_names(&env, "edited", "20261130T100100000Z");
}

fn use_mtime_ns(m: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    (m.mtime() as u64) * 1_000_000_000 + m.mtime_nsec() as u64
}

#[test]
fn a_symlinked_witness_log_is_never_written_through() {
    let (env, _) = vault();
    let tips = env.vault.join(".git/rutter/tips");
    let outside = env.root().join("outside-tips");
    std::fs::rename(&tips, &outside).unwrap();
    let before = std::fs::read(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, &tips).unwrap();
    let r = env.capture_at("2026-11-30T11:00:00.000Z", "Captured past a symlink.", &[]);
    assert!(
        r.stderr.contains("committed"),
        "the capture still commits: {}",
        r.stderr
    );
    assert_eq!(
        std::fs::read(&outside).unwrap(),
        before,
        "nothing written through the link"
    );
    let (code, v) = verify(&env);
    assert_eq!(code, 1, "{v:#?}");
    let (_, detail) = witness_finding(&v).expect("a witness finding");
    assert!(detail.contains("symbolic link"), "{detail}");
}

#[test]
fn verify_while_captures_land_reports_no_rewind() {
    let (env, _) = vault();
    let env = std::sync::Arc::new(env);
    let writer = {
        let env = env.clone();
        std::thread::spawn(move || {
            for i in 0..25 {
                let r = env.capture_at(
                    &format!("2026-11-30T12:{:02}:00.000Z", i),
                    &format!("Landing while verify runs {i}."),
                    &[],
                );
                assert!(r.stderr.contains("committed"), "{}", r.stderr);
            }
        })
    };
    let mut runs = 0;
    while !writer.is_finished() || runs < 3 {
        let (_, v) = verify(&env);
        let k = kinds(&v);
        assert!(
            !k.iter().any(|(k, _)| k.starts_with("ref-")),
            "no ref finding while captures land: {v:#?}"
        );
        runs += 1;
    }
    writer.join().unwrap();
    assert_eq!(verify(&env).0, 0);
}

/// The trial's F-6: a capture that lands between verify's read of the tip and its look at the
/// working tree (appended, committed, its journal record removed) is not an `unverified` line:
/// verify looks again under the lock before it reports one.
#[test]
fn a_capture_landing_while_verify_reads_is_not_unverified() {
    let (env, _) = vault();
    // Verify creates `paused` once it has read the tip and waits until it is gone.
    let paused = env.root().join("verify-paused");
    let mut slow = env.cmd();
    slow.env("RUTTER_VERIFY_WORKTREE_PAUSE", &paused)
        .args(["verify", "--porcelain"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut verifying = slow.spawn().unwrap();
    common::wait_until(
        "verify to have read the tip",
        std::time::Duration::from_secs(60),
        || {
            let ended = verifying.try_wait().unwrap();
            assert!(ended.is_none(), "verify ended before its pause: {ended:?}");
            paused.exists()
        },
    );
    let r = env.capture_at("2026-11-30T12:00:00.000Z", "Landed during verify.", &[]);
    assert!(r.stderr.contains("committed"), "{}", r.stderr);
    std::fs::remove_file(&paused).unwrap();
    let out = verifying.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !stdout.contains("unverified"),
        "an in-flight line is not unverified: {stdout}"
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    // A line no capture wrote is still reported, after the second look too.
    let day = env.first_day();
    let text = env.read(&day);
    let forged = text
        .lines()
        .rev()
        .find(|l| l.contains("Landed during verify."))
        .unwrap()
        .replace("Landed during verify.", "Typed by hand.")
        .replace("20261130T120000", "20261130T130000");
    env.write(&day, &format!("{text}{forged}\n"));
    let (code, v) = verify(&env);
    assert_eq!(code, 1, "{v:#?}");
    assert!(kinds(&v).iter().any(|(k, _)| k == "unverified"), "{v:#?}");
}

#[test]
fn log_never_moves_the_audit_watermark_and_clean_says_what_was_checked() {
    let (env, _) = vault();
    let again = env.rutter(&["verify"]);
    assert!(
        again
            .stdout
            .contains("verify: clean (no new commit since the last verify; `--full` re-checks all"),
        "{}",
        again.stdout
    );
    env.capture_at("2026-11-30T11:00:00.000Z", "One more.", &[]);
    assert_eq!(env.rutter(&["log"]).code, 0);
    let r = env.rutter(&["verify"]);
    assert!(
        r.stdout.contains("verify: clean (1 new commit(s) checked"),
        "log left the new commit to verify: {}",
        r.stdout
    );
    let full = env.rutter(&["verify", "--full"]);
    assert!(
        full.stdout.contains(" commit(s) checked") && !full.stdout.contains("new commit"),
        "{}",
        full.stdout
    );
}

/// `log` keeps what it learnt of which commit added each entry (`entries-tip`), so the next
/// `log` walks only the commits since, while the audit's watermark (`tip`) stays where the last
/// verify left it; the commit `log` names is the one that added the entry.
#[test]
fn log_remembers_the_entries_it_learnt_without_moving_the_watermark() {
    let (env, _) = vault();
    let state = || env.read(".git/rutter/verify/state");
    let watermark = |s: &str| {
        s.lines()
            .find(|l| l.starts_with("tip "))
            .map(str::to_string)
    };
    let before = watermark(&state());
    env.capture_at("2026-11-30T11:00:00.000Z", "Learnt by log.", &[]);
    let tip = env
        .git(&["rev-parse", "refs/rutter/records"])
        .trim()
        .to_string();
    let r = env.rutter(&["log", "--json", "-n", "1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let after = state();
    assert_eq!(watermark(&after), before, "{after}");
    assert!(after.contains(&format!("entries-tip {tip}")), "{after}");
    let rows: Vec<LogRow> = decode(&r.stdout);
    assert_eq!(rows[0].summary, "Learnt by log.");
    assert_eq!(rows[0].commit.as_deref(), Some(tip.as_str()), "{rows:#?}");
    // verify still checks the new commit, and then moves both.
    let v = env.rutter(&["verify"]);
    assert!(
        v.stdout.contains("verify: clean (1 new commit(s) checked"),
        "{}",
        v.stdout
    );
    assert!(state().contains(&format!("tip {tip}")));
}

/// `log` names each entry's commit through the index beside the verify cache's `entries` file
/// (written by verify, and by `log` when it had to read the file whole): the same commits when
/// the index is deleted, truncated, garbage or older than the file (then the file is read whole
/// and the index written anew); an index sealed for the file is what is read.
#[test]
fn log_names_the_same_commits_whatever_became_of_the_entries_index() {
    let env = Env::git_vault();
    let mut tips = Vec::new();
    let days = ["2026-11-28", "2026-11-29", "2026-11-30", "2026-12-01"];
    for day in &days[..3] {
        let r = env.capture_at(&format!("{day}T10:00:00.000Z"), &format!("On {day}."), &[]);
        assert!(r.stderr.contains("committed"), "{}", r.stderr);
        tips.push(
            env.git(&["rev-parse", "refs/rutter/records"])
                .trim()
                .to_string(),
        );
    }
    assert_eq!(env.rutter(&["verify"]).code, 0);
    let index = env.vault.join(".git/rutter/verify/entries-index");
    assert!(index.exists(), "verify writes the index with the file");
    let named = || {
        let r = env.rutter(&["log", "--json"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let mut rows: Vec<(String, Option<String>)> = decode::<Vec<LogRow>>(&r.stdout)
            .into_iter()
            .map(|r| (r.day, r.commit))
            .collect();
        rows.sort();
        rows
    };
    let want = |tips: &[String]| -> Vec<(String, Option<String>)> {
        let pairs = days.iter().zip(tips);
        pairs
            .map(|(d, t)| (d.to_string(), Some(t.clone())))
            .collect()
    };
    assert_eq!(named(), want(&tips));
    std::fs::remove_file(&index).unwrap();
    assert_eq!(named(), want(&tips), "deleted");
    assert!(index.exists(), "log writes the index it had to do without");
    let whole = std::fs::read(&index).unwrap();
    std::fs::write(&index, &whole[..whole.len() / 2 + 1]).unwrap();
    assert_eq!(named(), want(&tips), "truncated");
    std::fs::write(&index, b"garbage, not an index").unwrap();
    assert_eq!(named(), want(&tips), "garbage");
    // Older than the file: a capture since, learnt by a log that appended to both.
    let older = std::fs::read(&index).unwrap();
    let r = env.capture_at("2026-12-01T10:00:00.000Z", "On 2026-12-01.", &[]);
    assert!(r.stderr.contains("committed"), "{}", r.stderr);
    tips.push(
        env.git(&["rev-parse", "refs/rutter/records"])
            .trim()
            .to_string(),
    );
    assert_eq!(named(), want(&tips));
    assert!(
        std::fs::read(&index).unwrap().len() > older.len(),
        "appended to"
    );
    std::fs::write(&index, &older).unwrap();
    assert_eq!(named(), want(&tips), "stale");
    // An index sealed for the file as it is, holding no runs: no line is read.
    let entries = env.vault.join(".git/rutter/verify/entries");
    let m = std::fs::metadata(&entries).unwrap();
    use std::os::unix::fs::MetadataExt;
    let mut seal = b"\xffrutidx1".to_vec();
    seal.extend_from_slice(&m.len().to_le_bytes());
    seal.extend_from_slice(&m.ino().to_le_bytes());
    let ctime = m.ctime() * 1_000_000_000 + m.ctime_nsec();
    seal.extend_from_slice(&ctime.to_le_bytes());
    std::fs::write(&index, &seal).unwrap();
    let rows = named();
    assert!(rows.iter().all(|(_, c)| c.is_none()), "{rows:?}");
}

/// An entry line typed into a day file by hand, in the record format.
fn hand_line(id: &str, summary: &str) -> String {
    format!(
        "- 12:00:00 — {summary} <!-- rutter:entry {{\"id\":\"{id}\",\"time\":\"2026-11-30T12:00:00.000Z\",\"summary\":\"{summary}\",\"refs\":[]}} -->\n"
    )
}

/// A complete entry line no capture wrote (in no journal record) is `unverified`, a finding
/// that counts, in a committed day file and in one the ref does not have; `git rutter commit`
/// names it, exits 1 and never commits it; a journalled line beside it stays `pending`.
#[test]
fn a_line_no_capture_wrote_is_unverified_and_never_committed() {
    let (env, day) = vault();
    let mut text = env.read(&day);
    text.push_str(&hand_line("20261130T120000000Z", "Typed by hand."));
    env.write(&day, &text);
    let new_day = "_librarian/sessions/2026-12-01.md";
    let header = "---\ncollection: librarian.sessions\nschema: session-record@2\nday: '2026-12-01'\n---\n# Sessions - 2026-12-01\n\n";
    env.write(
        new_day,
        &format!(
            "{header}{}",
            hand_line("20261201T120000000Z", "Also by hand.")
        ),
    );
    let (code, v) = verify(&env);
    assert_eq!(code, 1, "{v:#?}");
    let mut k = kinds(&v);
    k.sort();
    assert_eq!(
        k,
        [
            ("unverified".to_string(), "20261130T120000000Z".to_string()),
            ("unverified".to_string(), "20261201T120000000Z".to_string()),
        ]
    );
    let id = "unverified:_librarian/sessions/2026-11-30.md:20261130T120000000Z";
    let f = v
        .findings
        .iter()
        .find(|f| f.id == id)
        .expect("named by its id");
    assert_eq!(f.day.as_deref(), Some("2026-11-30"));
    let detail = &f.detail;
    assert!(
        detail.contains("no capture wrote") && detail.contains("delete the line"),
        "{detail}"
    );

    // Recall and log classify the same lines the same way (records::status).
    for id in ["20261130T120000000Z", "20261201T120000000Z"] {
        let log = env.rutter(&["log", "--json", id]);
        let rows: Vec<LogRow> = decode(&log.stdout);
        assert_eq!(rows[0].status, "unverified", "{id}: {}", log.stdout);
    }

    let tip = env.git(&["rev-parse", "refs/rutter/records"]);
    let r = env.rutter(&["commit"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stdout, "nothing to commit\n");
    assert!(
        r.stderr.contains(
            "git-rutter: _librarian/sessions/2026-11-30.md holds 20261130T120000000Z, a line no capture wrote; it was not committed. Run `git rutter verify` for what to do.\n"
        ) && r.stderr.contains("2026-12-01.md holds 20261201T120000000Z"),
        "{}",
        r.stderr
    );
    assert_eq!(env.git(&["rev-parse", "refs/rutter/records"]), tip);
    let committed = env.git(&["show", &format!("refs/rutter/records:{}", in_ref(&day))]);
    assert!(!committed.contains("Typed by hand."));

    // The acknowledged line stops failing verify's count for it, and stays listed.
    let ack = env.rutter(&["verify", "--ack", id, "--reason", "kept as a note"]);
    assert_eq!(ack.code, 0, "{}", ack.stderr);
    let (_, v) = verify(&env);
    let f = v.findings.iter().find(|f| f.id == id).unwrap();
    assert_eq!(f.acknowledged.as_deref(), Some("kept as a note"));
}

/// `_librarian/sessions/` (or `_librarian/`) moved elsewhere and linked back reads through the
/// link as intact to anything that follows it: verify names the folder as a `symlink`.
#[test]
fn a_record_folder_replaced_by_a_symlink_is_reported_as_such() {
    for folder in ["_librarian/sessions", "_librarian"] {
        let (env, _day) = vault();
        let real = env.vault.join(folder);
        let moved = env.root().join("moved-away");
        std::fs::rename(&real, &moved).unwrap();
        std::os::unix::fs::symlink(&moved, &real).unwrap();
        let (code, v) = verify(&env);
        assert_eq!(code, 1, "{v:#?}");
        let findings = &v.findings;
        assert_eq!(findings.len(), 1, "{v:#?}");
        assert_eq!(findings[0].kind, "symlink");
        assert_eq!(findings[0].id, format!("symlink:{folder}:folder"));
        let detail = &findings[0].detail;
        assert!(
            detail.starts_with(&format!(
                "{folder}/ was replaced by a symbolic link, holding "
            )),
            "{detail}"
        );
        std::fs::remove_file(&real).unwrap();
        std::fs::rename(&moved, &real).unwrap();
        assert_eq!(
            verify(&env).0,
            0,
            "{folder}: the folder back in place is clean"
        );
    }
}

/// A capture appended after a line typed by hand: the hand line now sits among committed ones.
/// It is still `unverified` (not `edited`: no commit ever held it), with the same finding id,
/// as log classifies it; deleting it makes verify clean.
#[test]
fn a_hand_line_a_capture_landed_after_stays_unverified() {
    let (env, day) = vault();
    let hand = hand_line("20261130T120000000Z", "Typed by hand.");
    let before = env.read(&day);
    env.write(&day, &format!("{before}{hand}"));
    let r = env.capture_at("2026-11-30T13:00:00.000Z", "Captured after.", &[]);
    assert!(r.stderr.contains("committed"), "{}", r.stderr);
    let (code, v) = verify(&env);
    assert_eq!(code, 1, "{v:#?}");
    assert_eq!(
        kinds(&v),
        [("unverified".to_string(), "20261130T120000000Z".to_string())]
    );
    assert_eq!(
        v.findings[0].id,
        "unverified:_librarian/sessions/2026-11-30.md:20261130T120000000Z"
    );
    assert!(v.findings[0]
        .diff
        .as_deref()
        .unwrap()
        .contains("+- 12:00:00 — Typed by hand."));
    let log = env.rutter(&["log", "--json", "20261130T120000000Z"]);
    let rows: Vec<LogRow> = decode(&log.stdout);
    assert_eq!(rows[0].status, "unverified", "{}", log.stdout);
    env.write(&day, &env.read(&day).replace(&hand, ""));
    assert_eq!(verify(&env).0, 0);
}

/// A capture whose commit failed, after a hand line the user acknowledged: its line is pending
/// (journalled), not "edited after commit", and verify stays clean (it said edited, exit 1, and
/// status advised `restore`). `commit` then commits it.
#[test]
fn a_capture_waiting_for_its_commit_after_a_hand_line_is_pending_not_edited() {
    let (env, day) = vault();
    let hand = hand_line("20261130T120000000Z", "Typed by hand.");
    env.write(&day, &format!("{}{hand}", env.read(&day)));
    let ack = "unverified:_librarian/sessions/2026-11-30.md:20261130T120000000Z";
    let r = env.rutter(&["verify", "--ack", ack, "--reason", "kept on purpose"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let lock = env.vault.join(".git/refs/rutter/records.lock");
    std::fs::write(&lock, "").unwrap();
    let r = env.capture_at("2026-11-30T13:00:00.000Z", "Captured while locked.", &[]);
    assert!(r.stderr.contains("not committed yet"), "{}", r.stderr);
    let (code, v) = verify(&env);
    assert_eq!(code, 0, "{v:#?}");
    let pending: Vec<&str> = v
        .findings
        .iter()
        .filter(|f| f.kind == "pending")
        .map(|f| f.id.as_str())
        .collect();
    assert_eq!(
        pending,
        ["pending:_librarian/sessions/2026-11-30.md:20261130T130000000Z"],
        "{v:#?}"
    );
    assert!(!v.findings.iter().any(|f| f.kind == "edited"), "{v:#?}");
    std::fs::remove_file(&lock).unwrap();
    assert_eq!(env.rutter(&["commit"]).code, 0);
    let (code, v) = verify(&env);
    assert!(
        code == 0 && !v.findings.iter().any(|f| f.kind == "pending"),
        "{v:#?}"
    );
}

/// The reflog finding `verify` made about a changed prefix: `(id, detail)`.
fn reflog_finding(v: &Verify) -> Option<(String, String)> {
    v.findings
        .iter()
        .find(|f| f.id.contains(":reflog@"))
        .map(|f| (f.id.clone(), f.detail.clone()))
}

#[test]
fn a_rewritten_or_shortened_reflog_is_found_and_checked_whole() {
    let (env, _) = vault();
    let log = env.vault.join(".git/logs/refs/rutter/records");
    let state = env.vault.join(".git/rutter/verify/state");
    let accepted = std::fs::read(&log).unwrap().len();
    assert!(
        std::fs::read_to_string(&state)
            .unwrap()
            .contains(&format!("reflog-seen {accepted} ")),
        "verify remembers the reflog it accepted"
    );
    // Lines appended since are checked alone; an untouched prefix is clean.
    env.capture_at("2026-11-30T10:05:00.000Z", "Fourth decision.", &[]);
    assert_eq!(verify(&env).0, 0);
    let accepted = std::fs::read(&log).unwrap().len();

    // An old line rewritten into a rewind, the length unchanged: counting entries (what an
    // incremental verify did before) never looked at it again.
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let (c1, c2) = (&lines[1][41..81], &lines[2][41..81]);
    let forged = lines[2].replacen(&format!("{c1} {c2}"), &format!("{c2} {c1}"), 1);
    assert_ne!(forged, lines[2]);
    std::fs::write(&log, text.replacen(lines[2], &forged, 1)).unwrap();
    assert_eq!(std::fs::read(&log).unwrap().len(), accepted);
    let (code, v) = verify(&env);
    assert_eq!(code, 1, "{v:#?}");
    let (id, detail) = reflog_finding(&v).expect("a reflog finding");
    assert_eq!(
        id,
        format!("ref-unverifiable:refs/rutter/records:reflog@{accepted}")
    );
    assert!(
        detail.contains("was rewritten since the last verify"),
        "{detail}"
    );
    assert!(detail.contains(&format!("git rutter verify --ack {id} --reason")));
    assert!(
        kinds(&v).iter().any(|(k, _)| k == "ref-rewind"),
        "the whole reflog is checked again: {v:#?}"
    );
    // It stays a finding until acknowledged.
    assert!(reflog_finding(&verify(&env).1).is_some());
    let r = env.rutter(&["verify", "--ack", &id, "--reason", "I edited it by hand."]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (_, v) = verify(&env);
    let f = v
        .findings
        .iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("{v:#?}"));
    assert_eq!(f.acknowledged.as_deref(), Some("I edited it by hand."));
    // Accepted now: the next run checks only what is appended.
    assert_eq!(verify(&env).0, 0);

    // A reflog cut short is found too.
    let (env, _) = vault();
    let log = env.vault.join(".git/logs/refs/rutter/records");
    let text = std::fs::read_to_string(&log).unwrap();
    let kept: Vec<&str> = text.lines().collect();
    std::fs::write(&log, format!("{}\n", kept[..kept.len() - 1].join("\n"))).unwrap();
    let (code, v) = verify(&env);
    assert_eq!(code, 1, "{v:#?}");
    let (_, detail) = reflog_finding(&v).expect("a reflog finding");
    assert!(
        detail.contains("is shorter than the last verify read"),
        "{detail}"
    );
}

/// A vault whose history rewrites, after its first entries, an entry added earlier, then
/// appends three more captures.
fn a_rewrite_midway() -> Env {
    let (env, day) = vault();
    let committed = env.committed(&day);
    let edited = committed.replace(
        "\"summary\":\"First decision.\"",
        "\"summary\":\"Changed.\"",
    );
    forge_commit_with(&env, &day, &edited, "forged");
    env.write(&day, &edited);
    for i in 0..3 {
        let ts = format!("2026-11-30T11:0{i}:00.000Z");
        env.capture_at(&ts, &format!("Later decision {i}."), &[]);
    }
    env
}

/// `verify --full --json` with the environment variables `vars` set: the run and its report.
fn verify_full_with(env: &Env, vars: &[(&str, &str)]) -> (Run, Verify) {
    let mut c = env.cmd();
    c.args([
        "--vault",
        env.vault.to_str().unwrap(),
        "verify",
        "--full",
        "--json",
    ]);
    c.envs(vars.iter().copied());
    let r = run_with_stdin(&mut c, b"");
    let v: Verify = decode(&r.stdout);
    (r, v)
}

#[test]
fn a_history_checked_on_two_threads_gives_the_same_findings() {
    // A rewrite in the later half of the walk of an entry added in the earlier half: the split
    // walk must still name the commit that added it.
    let env = a_rewrite_midway();
    // Two threads take chunks of the walk in turn: of one commit, of three, or one half each.
    let run = |from: &str, chunk: &str| {
        let vars = [
            ("RUTTER_VERIFY_PARALLEL_FROM", from),
            ("RUTTER_VERIFY_CHUNK", chunk),
        ];
        let (r, v) = verify_full_with(&env, &vars);
        (r.code, v.findings, v.commits_checked)
    };
    let one = run("1000000", "1024");
    assert!(one.2 >= 8, "{one:#?}");
    for chunk in ["1", "3", "4"] {
        let two = run("2", chunk);
        assert_eq!(
            one, two,
            "chunks of {chunk}: the same findings, in the same order"
        );
    }
    let rewrite = one.1.iter().find(|f| f.kind == "history-rewrite");
    let rewrite = rewrite.unwrap_or_else(|| panic!("{:#?}", one.1));
    let added_by = rewrite.commit.as_deref().unwrap();
    let msg = env.git(&["log", "-1", "--format=%B", added_by]);
    assert!(msg.contains("Rutter-Entry: 20261130T100000000Z"), "{msg}");
}

#[test]
fn a_history_read_from_its_packs_gives_the_same_findings() {
    let env = a_rewrite_midway();
    // The walk reads through libgit2 (a short history), or through the packs from the first
    // commit: on loose objects (nothing to read there), and packed by git every way it packs.
    let run = |packs_from: &str| {
        let vars = [
            ("RUTTER_VERIFY_PACKS_FROM", packs_from),
            ("RUTTER_PACKS_TRACE", "1"),
        ];
        let (r, v) = verify_full_with(&env, &vars);
        let served = r
            .stderr
            .lines()
            .find_map(|l| l.strip_prefix("git-rutter: packs: "))
            .map(|l| l.split(' ').next().unwrap().parse::<usize>().unwrap());
        ((r.code, v.findings, v.commits_checked), served)
    };
    let (through_libgit2, none) = run("1000000");
    assert_eq!(none, None, "a short walk reads no pack");
    assert!(through_libgit2
        .1
        .iter()
        .any(|f| f.kind == "history-rewrite"));
    let (loose, served) = run("1");
    assert_eq!((&loose, served), (&through_libgit2, Some(0)));
    for how in [
        &["repack", "-a", "-d", "-f", "-q"][..],
        &[
            "-c",
            "repack.useDeltaBaseOffset=false",
            "repack",
            "-a",
            "-d",
            "-f",
            "-q",
            "--depth=1",
        ],
        &["gc", "-q"],
    ] {
        env.git(how);
        let (packed, served) = run("1");
        assert_eq!(packed, through_libgit2, "after git {how:?}");
        assert!(served.unwrap() > 10, "after git {how:?}: {served:?}");
    }
}

/// A commit on the tip whose tree holds `day` as `edited`, set as the ref's tip with reflog
/// message `why` (the working file is left alone).
fn forge_commit_with(env: &Env, day: &str, edited: &str, why: &str) {
    let forged = Forged {
        writes: &[(&in_ref(day), edited)],
        message: "rutter: capture 2026-11-30",
        why,
        ..Default::default()
    };
    forged.commit(env);
}

/// The review's §b 4: a record file or a note whose mtime is past 2262 (ext4 and xfs allow it)
/// never overflows a stamp: verify, recent and search run as before.
#[test]
fn files_from_after_2262_are_stamped_without_overflow() {
    let (env, day) = vault();
    let far = std::time::UNIX_EPOCH + std::time::Duration::from_secs(10_413_792_000);
    for rel in [day.as_str(), "Notes/a.md"] {
        let f = std::fs::File::options()
            .write(true)
            .open(env.vault.join(rel))
            .unwrap();
        f.set_times(std::fs::FileTimes::new().set_modified(far))
            .unwrap();
    }
    for args in [
        &["verify"][..],
        &["recent", "--no-pager"],
        &["search", "alpha"],
    ] {
        let r = env.rutter(args);
        assert_eq!(r.code, 0, "{args:?}: {}{}", r.stdout, r.stderr);
        assert!(!r.stderr.contains("panicked"), "{args:?}: {}", r.stderr);
    }
}

/// A line in the local history that the intake would refuse from a remote (a summary longer
/// than a capture keeps, here forged into the ref by hand) is an `out-of-grammar` finding of
/// the commit that added it, in an ordinary run and with `--full`; it can be acknowledged.
#[test]
fn a_line_outside_the_record_grammar_in_the_history_is_named() {
    let (env, day) = vault();
    let mut text = env.read(&day);
    let summary = "é".repeat(2001);
    text.push_str(&format!(
        "- 12:00:00 — x <!-- rutter:entry {{\"id\":\"20261130T120000000Z\",\"time\":\"2026-11-30T12:00:00.000Z\",\"summary\":\"{summary}\",\"refs\":[]}} -->\n"
    ));
    forge_commit_with(&env, &day, &text, "rutter: capture");
    env.write(&day, &text);
    let tip = env.git(&["rev-parse", "--short=7", "refs/rutter/records"]);
    for args in [&["verify", "--json"][..], &["verify", "--full", "--json"]] {
        let r = env.rutter(args);
        assert_eq!(r.code, 1, "{args:?}: {}", r.stdout);
        let v: Verify = decode(&r.stdout);
        let f = v.finding("out-of-grammar");
        assert_eq!(f.commit.as_deref(), Some(tip.trim()));
        assert_eq!(f.path.as_deref(), Some(day.as_str()));
        let detail = &f.detail;
        assert!(
            detail.contains(&format!("added line 11 of {day} outside the record grammar: an entry line with a summary of 2001 characters, over the 2000 a capture keeps")),
            "{detail}"
        );
    }
    let human = env.rutter(&["verify"]);
    assert!(
        human.stdout.contains("history out-of-grammar: "),
        "{}",
        human.stdout
    );
}

/// The use log is committed only up to a line the record grammar refuses (an event stamped in
/// the year 9999): no machine publishes what another would refuse to take in. `verify` names
/// the line; once it is deleted, the next commit takes the rest.
#[test]
fn use_log_lines_the_grammar_refuses_are_held_back_and_named() {
    let (env, _) = vault();
    let log = "_librarian/stateful-use.jsonl";
    let event = |ts: &str| format!("{{\"ts\":\"{ts}\",\"kind\":\"librarian-recent\"}}\n");
    let (good, future, later) = (
        event("2026-11-30T10:05:00.000Z"),
        event("9999-12-31T23:59:59.999Z"),
        event("2026-11-30T10:06:00.000Z"),
    );
    env.write(log, &format!("{good}{future}{later}"));
    let commit = |env: &Env| {
        let r = env
            .cmd()
            .args(["commit"])
            .env("RUTTER_TIMESTAMP", "2026-11-30T10:10:00.000Z")
            .output()
            .unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    };
    commit(&env);
    assert_eq!(env.committed(log), good);
    let r = env.rutter(&["verify", "--json"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    let v: Verify = decode(&r.stdout);
    assert!(
        v.findings.iter().any(|f| f.detail.contains("a use-log line the record does not take (its `ts` 9999-12-31T23:59:59.999Z is more than a day after this machine's clock")),
        "{}",
        r.stdout
    );
    env.write(log, &format!("{good}{later}"));
    commit(&env);
    assert_eq!(env.committed(log), format!("{good}{later}"));
    assert_eq!(env.rutter(&["verify"]).code, 0);
}

/// F-4 of the 2026-12-04 trial: `--ack` takes only a finding the current run reports, with a
/// reason that is not empty; anything else exits 1 and commits nothing, so an acknowledgement
/// made in advance cannot hide a later deletion with that predictable id.
#[test]
fn an_acknowledgement_names_a_finding_of_this_run_and_says_why() {
    let (env, day) = vault();
    let commits = |env: &Env| env.git(&["rev-list", "--count", "refs/rutter/records"]);
    let before = commits(&env);
    let deleted = format!("deleted:{day}:{}", committed_blob(&env, &day));
    let refused = [
        (deleted.as_str(), "routine", "verify reports no finding now"),
        ("", "x", "verify reports no finding now"),
        ("anything at all", "", "the reason is empty"),
        ("anything at all", "   ", "the reason is empty"),
    ];
    for (id, reason, why) in refused {
        let r = env.rutter(&["verify", "--ack", id, "--reason", reason]);
        assert_eq!(r.code, 1, "{id:?} {reason:?}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(why), "{id:?}: {}", r.stderr);
        assert!(r.stderr.contains("othing was committed"), "{}", r.stderr);
        assert_eq!(commits(&env), before, "{id:?}: a commit was made");
    }
    assert!(!exists(&env.vault.join("_librarian/verify-acks.jsonl")));
    // The deletion the refused ack named is found.
    std::fs::remove_file(env.vault.join(&day)).unwrap();
    let (code, v) = verify(&env);
    assert_eq!(code, 1, "{v:#?}");
    assert_eq!(v.findings[0].id, deleted);
    // An id the run does not report is refused naming the ones it does.
    let r = env.rutter(&[
        "verify",
        "--ack",
        "deleted:other:0123456789ab",
        "--reason",
        "x",
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!("The findings now: {deleted}.")),
        "{}",
        r.stderr
    );
    assert_eq!(commits(&env), before);
    // The finding itself is acknowledged and committed, once.
    let r = env.rutter(&[
        "verify",
        "--ack",
        &deleted,
        "--reason",
        "moved the day by hand",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r
        .stdout
        .starts_with(&format!("acknowledged {deleted} (committed ")));
    assert_eq!(
        env.git(&["log", "-1", "--format=%s", "refs/rutter/records"])
            .trim(),
        "rutter: ack"
    );
    let (code, v) = verify(&env);
    assert_eq!(code, 0, "{v:#?}");
    assert_eq!(
        v.findings[0].acknowledged.as_deref(),
        Some("moved the day by hand")
    );
    let after = commits(&env);
    let r = env.rutter(&["verify", "--ack", &deleted, "--reason", "again"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("acknowledged already (moved the day by hand)"),
        "{}",
        r.stderr
    );
    assert_eq!(commits(&env), after);
}

/// Record files copied into a repository that has no `refs/rutter/records` (or captured before
/// `init`) hold nothing committed: `verify` cannot check them and says so (exit 1, never
/// "clean"), `diff` shows each as new, and once `init` adopts them both are quiet. A repository
/// with no record file and no ref is clean.
#[test]
fn record_files_without_a_record_ref_cannot_be_verified_and_diff_shows_them_new() {
    let (recorded, day) = vault();
    let env = Env::bare();
    env.write("Notes/a.md", NOTE_A);
    env.git(&["init", "-q", "-b", "main"]);
    env.git(&["add", "Notes"]);
    env.git(&["commit", "-qm", "notes"]);
    let empty = env.rutter(&["verify"]);
    assert_eq!(empty.code, 0, "{}", empty.stdout);
    assert!(
        empty.stdout.contains("no refs/rutter/records yet"),
        "{}",
        empty.stdout
    );
    let bytes = std::fs::read(recorded.vault.join(&day)).unwrap();
    env.write(&day, std::str::from_utf8(&bytes).unwrap());
    let (code, v) = verify(&env);
    assert_eq!(code, 1);
    assert_eq!(kinds(&v), [("ref-unverifiable".to_string(), String::new())]);
    assert_eq!(
        v.findings[0].id,
        "ref-unverifiable:refs/rutter/records:missing"
    );
    assert!(v.findings[0].detail.contains("`git rutter init` adopts it"));
    let diff = env.rutter(&["diff", "--exit-code"]);
    assert_eq!(diff.code, 1, "{}", diff.stderr);
    assert!(
        diff.stdout
            .starts_with(&format!("--- /dev/null\n+++ b/{day}\n")),
        "{}",
        diff.stdout
    );
    assert_eq!(env.rutter(&["init"]).code, 0);
    let (code, v) = verify(&env);
    assert_eq!(code, 0, "{:?}", kinds(&v));
    assert_eq!(env.rutter(&["diff", "--exit-code"]).code, 0);
}

/// An acknowledgement covers the incident it named, not the next one with the same shape: the
/// id of text that is no record line names that text (not only its length), and the id of a
/// deletion names the committed version that went missing, so deleting the file again once it
/// has grown is a new finding.
#[test]
fn an_acknowledgement_never_covers_a_later_incident_of_the_same_kind() {
    let (env, day) = vault();
    let path = env.vault.join(&day);
    let committed = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{committed}hand added junk\n")).unwrap();
    let (_, v) = verify(&env);
    let junk = v.findings[0].id.clone();
    assert!(junk.starts_with(&format!("unparseable:{day}:")), "{junk}");
    let r = env.rutter(&["verify", "--ack", &junk, "--reason", "my scratch note"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let with_ack = std::fs::read_to_string(&path).unwrap();
    // Other text of the same length in its place.
    let other = with_ack.replace("hand added junk\n", "other junk 1234\n");
    std::fs::write(&path, &other).unwrap();
    let (code, v) = verify(&env);
    assert_eq!(code, 1, "{v:#?}");
    assert!(v
        .findings
        .iter()
        .any(|f| f.kind == "unparseable" && f.id != junk && f.acknowledged.is_none()));
    // A deletion acknowledged, the file restored and grown, then deleted again.
    std::fs::write(&path, with_ack.replace("hand added junk\n", "")).unwrap();
    assert_eq!(verify(&env).0, 0);
    std::fs::remove_file(&path).unwrap();
    let (_, v) = verify(&env);
    let first = v.findings[0].id.clone();
    let r = env.rutter(&["verify", "--ack", &first, "--reason", "I deleted it"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(env.rutter(&["restore"]).code, 0);
    let r = env.capture_at(
        "2026-11-30T11:00:00.000Z",
        "Fourth decision.",
        &["Notes/a.md"],
    );
    assert!(r.stderr.contains("committed"), "{}", r.stderr);
    std::fs::remove_file(&path).unwrap();
    let (code, v) = verify(&env);
    assert_eq!(code, 1, "{v:#?}");
    let again = &v.findings[0];
    assert_eq!(again.kind, "deleted");
    assert_ne!(again.id, first);
    assert_eq!(again.acknowledged, None);
}
