//! End to end for the audit commands beside `verify` (spec/verify.md, anchor §12): `log`,
//! `restore`, `diff` and `gate`, with the real binary on temp vaults that are real git
//! repositories. Outputs are compared whole, so a change of format or status fails here.

use crate::common;
use common::json::{decode, LogRow};
use common::*;
use serde_json::{json, Value};

const D28: &str = "_librarian/sessions/2026-11-28.md";
const D29: &str = "_librarian/sessions/2026-11-29.md";
const D30: &str = "_librarian/sessions/2026-11-30.md";
const D01: &str = "_librarian/sessions/2026-12-01.md";

/// The committed entries of [`vault`]: `(id, time, summary)`, oldest first.
const ENTRIES: [(&str, &str, &str); 4] = [
    (
        "20261128T080000000Z",
        "2026-11-28T08:00:00.000Z",
        "Chose the blue cover.",
    ),
    (
        "20261129T090000000Z",
        "2026-11-29T09:00:00.000Z",
        "Moved the launch to Friday.",
    ),
    (
        "20261130T100000000Z",
        "2026-11-30T10:00:00.000Z",
        "Published the first issue.",
    ),
    (
        "20261130T110000000Z",
        "2026-11-30T11:00:00.000Z",
        "Agreed a fortnightly cadence.",
    ),
];

/// A vault with [`ENTRIES`] captured and committed over three days; verify is clean.
fn vault() -> Env {
    let env = Env::git_vault();
    for (_, time, summary) in ENTRIES {
        let r = env.capture_at(time, summary, &["Notes/a.md"]);
        assert!(r.stderr.contains("to refs/rutter/records."), "{}", r.stderr);
    }
    let r = env.rutter(&["verify"]);
    assert_eq!(r.code, 0, "a fresh vault verifies clean: {}", r.stdout);
    env
}

/// Runs the binary and checks it did not panic.
fn run(env: &Env, args: &[&str]) -> Run {
    let r = env.rutter(args);
    assert!(
        !r.stderr.contains("panicked"),
        "{args:?} panicked: {}",
        r.stderr
    );
    r
}

/// Runs the binary with the clock pinned (RUTTER_TIMESTAMP, honoured in debug builds).
fn run_at(env: &Env, ts: &str, args: &[&str]) -> Run {
    let r: Run = env
        .cmd()
        .env("RUTTER_TIMESTAMP", ts)
        .args(args)
        .output()
        .unwrap()
        .into();
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    r
}

/// The full id of the commit whose trailer names `entry`.
fn commit_of(env: &Env, entry: &str) -> String {
    let out = env.git(&[
        "rev-list",
        "--grep",
        &format!("Rutter-Entry: {entry}"),
        "refs/rutter/records",
    ]);
    let ids: Vec<&str> = out.lines().collect();
    assert_eq!(ids.len(), 1, "one commit adds {entry}: {out}");
    ids[0].to_string()
}

/// The committed bytes of a record file.
fn committed(env: &Env, path: &str) -> Vec<u8> {
    let out = std::process::Command::new("git")
        .args(["show", &format!("refs/rutter/records:{}", in_ref(path))])
        .current_dir(&env.vault)
        .output()
        .unwrap();
    assert!(out.status.success(), "{path} is in the ref");
    out.stdout
}

fn bytes(env: &Env, path: &str) -> Vec<u8> {
    std::fs::read(env.vault.join(path)).unwrap()
}

/// An entry line as the record format writes it (spec/record-format.md), without refs.
fn entry_line(id: &str, time: &str, summary: &str) -> String {
    format!(
        "- {} — {summary} <!-- rutter:entry {{\"id\":\"{id}\",\"time\":\"{time}\",\"summary\":\"{summary}\",\"refs\":[]}} -->\n",
        &time[11..19]
    )
}

/// A line appended by hand: no commit and no journal record hold it, so it is `unverified`.
const HAND: (&str, &str, &str) = (
    "20261130T120000000Z",
    "2026-11-30T12:00:00.000Z",
    "Hand-appended pending decision.",
);
/// A capture made while the ref is locked: journalled, `pending`.
const JOURNALLED: (&str, &str, &str) = (
    "20261202T080000000Z",
    "2026-12-02T08:00:00.000Z",
    "Journalled while the ref was locked.",
);
const NEW_DAY: (&str, &str, &str) = (
    "20261201T080000000Z",
    "2026-12-01T08:00:00.000Z",
    "Pending on a day not committed yet.",
);

/// Appends a complete, parseable entry line to a day file by hand (not journalled: `unverified`).
fn append_by_hand(env: &Env) -> String {
    let line = entry_line(HAND.0, HAND.1, HAND.2);
    let mut text = env.read(D30);
    text.push_str(&line);
    env.write(D30, &text);
    line
}

/// Writes a day file the ref does not have yet, holding one entry line (by hand: `unverified`).
fn write_new_day(env: &Env) {
    let header = "---\ncollection: librarian.sessions\nschema: session-record@2\nday: '2026-12-01'\n---\n# Sessions - 2026-12-01\n\n";
    env.write(
        D01,
        &format!("{header}{}", entry_line(NEW_DAY.0, NEW_DAY.1, NEW_DAY.2)),
    );
}

/// Changes the summary of the 2026-11-29 entry in its day file.
fn edit_29(env: &Env) {
    let text = env.read(D29);
    let from = "\"summary\":\"Moved the launch to Friday.\"";
    assert!(text.contains(from));
    env.write(
        D29,
        &text.replace(from, "\"summary\":\"Moved the launch to Monday.\""),
    );
}

/// One `log` line: short commit, day, time and offset (the tests run in UTC), status padded to
/// 21, id, summary.
fn log_line(commit: Option<&str>, id: &str, time: &str, status: &str, summary: &str) -> String {
    let c = commit.map_or("-------".to_string(), |c| c[..7].to_string());
    let status = format!("{status:<21}");
    format!(
        "{c} {} {} +0000 {status} {id}  {summary}",
        &time[..10],
        &time[11..19]
    )
}

fn committed_line(env: &Env, i: usize, status: &str) -> String {
    let (id, time, summary) = ENTRIES[i];
    log_line(Some(&commit_of(env, id)), id, time, status, summary)
}

// ---- log -----------------------------------------------------------------------------------

#[test]
fn log_lists_committed_records_newest_first_with_their_commit() {
    let env = vault();
    let r = run(&env, &["log"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let want: Vec<String> = (0..4)
        .rev()
        .map(|i| committed_line(&env, i, "committed"))
        .collect();
    assert_eq!(r.stdout, want.join("\n") + "\n");
    assert_eq!(
        want[0],
        format!(
            "{} 2026-11-30 11:00:00 +0000 committed             20261130T110000000Z  Agreed a fortnightly cadence.",
            &commit_of(&env, ENTRIES[3].0)[..7]
        ),
        "the layout itself"
    );
    let two = run(&env, &["log", "-n", "2"]);
    assert_eq!(two.stdout, want[..2].join("\n") + "\n");
}

/// Hand-written lines (in a committed day file or a day file the ref does not have) are in no
/// commit and no journal record: `unverified` (they read `pending` before recall and `log`
/// shared one classifier, spec/recall.md); a capture the ref lock kept from committing is
/// journalled: `pending`.
#[test]
fn log_shows_pending_unverified_edited_and_deleted_records() {
    let env = vault();
    append_by_hand(&env);
    write_new_day(&env);
    edit_29(&env);
    std::fs::remove_file(env.vault.join(D28)).unwrap();
    let ref_lock = env.vault.join(".git/refs/rutter/records.lock");
    std::fs::write(&ref_lock, "held").unwrap();
    let cap = env.capture_at(JOURNALLED.1, JOURNALLED.2, &[]);
    assert!(cap.stderr.contains("not committed yet"), "{}", cap.stderr);
    std::fs::remove_file(&ref_lock).unwrap();
    let r = run(&env, &["log"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let want = [
        log_line(None, JOURNALLED.0, JOURNALLED.1, "pending", JOURNALLED.2),
        log_line(None, NEW_DAY.0, NEW_DAY.1, "unverified", NEW_DAY.2),
        log_line(None, HAND.0, HAND.1, "unverified", HAND.2),
        committed_line(&env, 3, "committed"),
        committed_line(&env, 2, "committed"),
        committed_line(&env, 1, "edited after commit"),
        committed_line(&env, 0, "deleted"),
    ];
    assert_eq!(r.stdout, want.join("\n") + "\n");
    // A count of exactly these reads their days through the index; a count past every entry
    // reads every day: the same rows.
    for n in ["7", "1000000"] {
        assert_eq!(run(&env, &["log", "-n", n]).stdout, r.stdout, "-n {n}");
    }
}

#[test]
fn log_keeps_a_line_added_to_an_edited_file() {
    let env = vault();
    let text = env.read(D30);
    env.write(
        D30,
        &text.replace("Published the first issue.", "Published nothing."),
    );
    append_by_hand(&env);
    let r = run(&env, &["log", "--day", "2026-11-30"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let want = [
        log_line(None, HAND.0, HAND.1, "unverified", HAND.2),
        committed_line(&env, 3, "committed"),
        committed_line(&env, 2, "edited after commit"),
    ];
    assert_eq!(
        r.stdout,
        want.join("\n") + "\n",
        "an uncommitted line is listed, never dropped: in no journal, it is unverified (it read \
         `edited after commit` before log and recall shared one classifier)"
    );
}

#[test]
fn log_of_one_entry_and_of_one_day() {
    let env = vault();
    append_by_hand(&env);
    write_new_day(&env);
    let one = run(&env, &["log", ENTRIES[2].0]);
    assert_eq!(one.code, 0, "{}", one.stderr);
    assert_eq!(one.stdout, committed_line(&env, 2, "committed") + "\n");
    let pending = run(&env, &["log", HAND.0]);
    assert_eq!(
        pending.stdout,
        log_line(None, HAND.0, HAND.1, "unverified", HAND.2) + "\n"
    );

    let day = run(&env, &["log", "--day", "2026-11-30"]);
    assert_eq!(day.code, 0, "{}", day.stderr);
    let want = [
        log_line(None, HAND.0, HAND.1, "unverified", HAND.2),
        committed_line(&env, 3, "committed"),
        committed_line(&env, 2, "committed"),
    ];
    assert_eq!(day.stdout, want.join("\n") + "\n");
    let new_day = run(&env, &["log", "--day", "2026-12-01"]);
    assert_eq!(
        new_day.stdout,
        log_line(None, NEW_DAY.0, NEW_DAY.1, "unverified", NEW_DAY.2) + "\n"
    );
    let empty = run(&env, &["log", "--day", "2026-10-01"]);
    assert_eq!(
        (empty.code, empty.stdout.as_str()),
        (0, "no record matches --day 2026-10-01\n")
    );
}

/// `-p`, as `git log -p`: each entry is followed by the line its commit added, as a patch of
/// its day file; an edited entry by its edit instead.
#[test]
fn log_p_shows_each_added_line_and_the_edit_of_an_edited_entry() {
    let env = vault();
    edit_29(&env);
    let committed_text = String::from_utf8(committed(&env, D29)).unwrap();
    let old = committed_text.lines().last().unwrap().to_string();
    let new = env.read(D29).lines().last().unwrap().to_string();
    let r = run(&env, &["log", "-p"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let added = |i: usize| {
        let (_, time, summary) = ENTRIES[i];
        let file = format!("_librarian/sessions/{}.md", &time[..10]);
        let line = env
            .read(&file)
            .lines()
            .find(|l| l.contains(summary))
            .unwrap()
            .to_string();
        [
            format!("    --- a/{file}"),
            format!("    +++ b/{file}"),
            format!("    +{line}"),
        ]
    };
    let mut want = vec![committed_line(&env, 3, "committed")];
    want.extend(added(3));
    want.push(committed_line(&env, 2, "committed"));
    want.extend(added(2));
    want.extend([
        committed_line(&env, 1, "edited after commit"),
        "    --- committed".to_string(),
        "    +++ working tree".to_string(),
        "    @@ -7,2 +7,2 @@".to_string(),
        "     ".to_string(),
        format!("    -{old}"),
        format!("    +{new}"),
        committed_line(&env, 0, "committed"),
    ]);
    want.extend(added(0));
    assert_eq!(r.stdout, want.join("\n") + "\n");
    let plain = run(&env, &["log"]);
    assert!(!plain.stdout.contains("+++"), "{}", plain.stdout);
}

#[test]
fn log_json_holds_every_field() {
    let env = vault();
    append_by_hand(&env);
    edit_29(&env);
    std::fs::remove_file(env.vault.join(D28)).unwrap();
    let r = run(&env, &["log", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows: Vec<LogRow> = decode(&r.stdout);
    assert_eq!(rows.len(), 5);
    let diff = rows[3]
        .diff
        .as_deref()
        .expect("an edited entry carries its diff");
    assert!(
        diff.starts_with("--- committed\n+++ working tree\n")
            && diff.contains("+- 09:00:00 [vault] — Moved the launch to Friday. ")
            && diff.contains("\"summary\":\"Moved the launch to Monday.\""),
        "{diff}"
    );
    // Each row names its day file, and carries its project, client (when known) and refs;
    // no row but the edited one a diff, and none a retraction or supersede links.
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row.file, format!("_librarian/sessions/{}.md", row.day));
        if row.id != HAND.0 {
            assert_eq!(row.project.as_deref(), Some("vault"), "{row:?}");
            assert_eq!(row.refs[0].path, "Notes/a.md", "{row:?}");
            assert!(row.refs[0].hash.starts_with("sha256:"), "{row:?}");
        }
        assert_eq!(
            row.client, None,
            "a manual capture names no client: {row:?}"
        );
        assert_eq!(row.diff.is_some(), i == 3, "{row:?}");
        assert!(
            row.retraction.is_none() && row.supersedes.is_none(),
            "{row:?}"
        );
        assert!(row.superseded_by.is_empty(), "{row:?}");
    }
    let entry = |i: usize, status: &'static str| {
        let (id, time, summary) = ENTRIES[i];
        (
            id,
            &time[..10],
            time,
            summary,
            status,
            Some(commit_of(&env, id)),
        )
    };
    let got: Vec<_> = rows
        .iter()
        .map(|r| {
            (
                r.id.as_str(),
                r.day.as_str(),
                r.time.as_str(),
                r.summary.as_str(),
                r.status.as_str(),
                r.commit.clone(),
            )
        })
        .collect();
    let want = [
        (HAND.0, "2026-11-30", HAND.1, HAND.2, "unverified", None),
        entry(3, "committed"),
        entry(2, "committed"),
        entry(1, "edited after commit"),
        entry(0, "deleted"),
    ];
    assert_eq!(got, want);
    let one: Vec<LogRow> = decode(&run(&env, &["log", "--json", ENTRIES[2].0]).stdout);
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].id, ENTRIES[2].0);
}

#[test]
fn log_refuses_an_unknown_entry_and_a_malformed_day() {
    let env = vault();
    let r = run(&env, &["log", "20260101T000000000Z"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.stdout, "");
    assert_eq!(
        r.stderr,
        "git-rutter: no entry 20260101T000000000Z in refs/rutter/records or the day files.\n"
    );
    // The start of ids too short to name one is said to be too short, not absent.
    let r = run(&env, &["log", &ENTRIES[2].0[..13]]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stderr,
        format!("git-rutter: {} is too short to name an entry: give at least 15 characters of its id, as `git rutter recent` shows them.\n", &ENTRIES[2].0[..13])
    );
    let r = run(&env, &["log", "--json", "nonsense"]);
    assert_eq!((r.code, r.stdout.as_str()), (1, ""));
    for bad in ["2026-11-31", "yesterday", "2026-1-5", "2026-11-30x"] {
        let r = run(&env, &["log", "--day", bad]);
        assert_eq!(r.code, 2, "{bad}");
        assert_eq!(r.stdout, "", "{bad}");
        assert_eq!(
            r.stderr,
            format!("git-rutter: {bad} is not a date (YYYY-MM-DD)\n")
        );
    }
    let both = run(&env, &["log", ENTRIES[0].0, "--day", "2026-11-28"]);
    assert_eq!(both.code, 2);
    assert!(
        both.stderr.contains("cannot be used with"),
        "{}",
        both.stderr
    );
}

#[test]
fn log_of_a_vault_without_records() {
    let env = Env::git_vault();
    // No count shows nothing, as with `recent`: a usage error, not "no records".
    let zero = run(&env, &["log", "-n", "0"]);
    assert_eq!(zero.code, 2, "{}", zero.stdout);
    assert!(zero.stderr.contains("0 is not in 1.."), "{}", zero.stderr);
    let r = run(&env, &["log"]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "no records\n"),
        "{}",
        r.stderr
    );
    assert_eq!(run(&env, &["log", "--json"]).stdout, "[]\n");
}

// ---- restore -------------------------------------------------------------------------------

#[test]
fn restore_rebuilds_a_deleted_day_file_byte_for_byte() {
    let env = vault();
    std::fs::remove_file(env.vault.join(D29)).unwrap();
    assert_eq!(run(&env, &["verify"]).code, 1);
    let r = run(&env, &["restore"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        format!("restored {D29} from refs/rutter/records\n")
    );
    assert_eq!(bytes(&env, D29), committed(&env, D29));
    assert!(!exists(&env.vault.join(".git/rutter/aside")));
    assert_eq!(run(&env, &["verify"]).code, 0);
    let again = run(&env, &["restore"]);
    assert_eq!(
        again.stdout,
        "nothing to restore: every committed record file is intact\n"
    );
}

/// `git clean -x` or `git stash --all` takes the day files away; the next capture or retract
/// into one writes its committed version back before its line (spec/capture.md), so the
/// earlier entries read as committed, not as edited after commit.
#[test]
fn a_capture_or_retract_into_a_deleted_day_file_puts_its_committed_lines_back_first() {
    let env = vault();
    for day in [D29, D30] {
        std::fs::remove_file(env.vault.join(day)).unwrap();
    }
    let before = (committed(&env, D29), committed(&env, D30));
    let r = env.capture_at("2026-11-29T18:00:00.000Z", "Kept the old lines.", &[]);
    assert!(r.stderr.contains("to refs/rutter/records."), "{}", r.stderr);
    let (id, _, _) = ENTRIES[2];
    let r = run_at(
        &env,
        "2026-11-30T18:00:00.000Z",
        &["retract", id, "--reason", "Not a decision."],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    for (day, before) in [(D29, before.0), (D30, before.1)] {
        let now = bytes(&env, day);
        assert!(now.starts_with(&before), "{day}: the committed lines first");
        assert!(
            now.len() > before.len(),
            "{day}: and the new line after them"
        );
        assert_eq!(now, committed(&env, day), "{day}: committed as it stands");
    }
    let v = run(&env, &["verify"]);
    assert_eq!(v.code, 0, "{}{}", v.stdout, v.stderr);
    let log = run(&env, &["log", "--oneline", "--day", "2026-11-29"]);
    assert!(!log.stdout.contains("edited"), "{}", log.stdout);
}

#[test]
fn restore_moves_an_edited_file_aside_and_puts_the_committed_one_back() {
    let env = vault();
    append_by_hand(&env);
    let text = env.read(D30);
    env.write(
        D30,
        &text.replace("Published the first issue.", "Published nothing."),
    );
    let edited = bytes(&env, D30);
    let r = run_at(&env, "2026-12-02T09:30:00.000Z", &["restore"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let aside = env
        .vault
        .join(".git/rutter/aside/2026-11-30.md.20261202T093000000Z");
    assert_eq!(
        r.stdout,
        format!(
            "restored {D30}; the changed file was moved to {}\n",
            aside.display()
        )
    );
    assert_eq!(
        std::fs::read(&aside).unwrap(),
        edited,
        "the edited file, its hand-appended line included, is kept aside"
    );
    assert_eq!(
        bytes(&env, D30),
        committed(&env, D30),
        "a line that is in no journal is not put back: it survives in the aside copy"
    );
    assert_eq!(run(&env, &["verify"]).code, 0);
    let log = run(&env, &["log", "--day", "2026-11-30"]);
    assert!(
        !log.stdout.contains(HAND.0)
            && log
                .stdout
                .contains("committed             20261130T100000000Z  Published the first issue."),
        "{}",
        log.stdout
    );
}

#[test]
fn restore_appends_journalled_pending_lines_again() {
    let env = vault();
    let ref_lock = env.vault.join(".git/refs/rutter/records.lock");
    std::fs::write(&ref_lock, "held").unwrap();
    let cap = env.capture_at("2026-11-30T12:30:00.000Z", "Waiting to be committed.", &[]);
    assert!(
        !cap.stderr.contains("to refs/rutter/records."),
        "{}",
        cap.stderr
    );
    std::fs::remove_file(&ref_lock).unwrap();
    let with_pending = env.read(D30);
    let pending_line = with_pending.lines().last().unwrap().to_string();
    assert!(pending_line.contains("Waiting to be committed."));
    env.write(
        D30,
        &with_pending.replace("Agreed a fortnightly cadence.", "Agreed nothing."),
    );
    let r = run(&env, &["restore", "--day", "2026-11-30"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r
        .stdout
        .starts_with(&format!("restored {D30}; the changed file was moved to ")));
    let mut want = committed(&env, D30);
    want.extend_from_slice(format!("{pending_line}\n").as_bytes());
    assert_eq!(
        String::from_utf8(bytes(&env, D30)).unwrap(),
        String::from_utf8(want).unwrap(),
        "the committed bytes, then the journalled line"
    );
    let v = run(&env, &["verify"]);
    assert_eq!(v.code, 0, "{}", v.stdout);
    assert!(v.stdout.contains("1 pending line(s)"), "{}", v.stdout);
    let log = run(&env, &["log", "-n", "1"]);
    assert!(
        log.stdout.starts_with("------- 2026-11-30 12:30:00 +0000 pending               20261130T123000000Z  Waiting to be committed."),
        "{}",
        log.stdout
    );
}

#[test]
fn restore_day_touches_only_that_day() {
    let env = vault();
    std::fs::remove_file(env.vault.join(D28)).unwrap();
    edit_29(&env);
    let edited = bytes(&env, D29);
    append_by_hand(&env);
    let grown = bytes(&env, D30);
    let r = run(&env, &["restore", "--day", "2026-11-28"]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (
            0,
            format!("restored {D28} from refs/rutter/records\n").as_str()
        )
    );
    assert_eq!(bytes(&env, D28), committed(&env, D28));
    assert_eq!(bytes(&env, D29), edited, "another day is left alone");
    assert!(!exists(&env.vault.join(".git/rutter/aside")));
    let none = run(&env, &["restore", "--day", "2026-10-01"]);
    assert_eq!(
        none.stdout,
        "nothing to restore: every committed record file is intact\n"
    );
    let r = run(&env, &["restore", "--day", "2026-11-29"]);
    assert!(
        r.stdout
            .starts_with(&format!("restored {D29}; the changed file was moved to ")),
        "{}",
        r.stdout
    );
    assert_eq!(bytes(&env, D29), committed(&env, D29));
    assert_eq!(
        bytes(&env, D30),
        grown,
        "a file that only gained lines is left alone"
    );
    // What is left is the hand-appended line: no capture wrote it, so it is unverified (a
    // finding since verify and recall share the rule; it read `pending` before).
    let v = run(&env, &["verify", "--porcelain"]);
    assert_eq!(v.code, 1, "{}", v.stdout);
    assert_eq!(
        v.stdout.lines().collect::<Vec<_>>(),
        [format!(
            "unverified\tunverified:{D30}:{}\t{D30}\t{}\t2026-11-30\t",
            HAND.0, HAND.0
        )]
    );
}

#[test]
fn restore_never_replaces_an_earlier_aside_copy() {
    let env = vault();
    let at = "2026-12-02T09:30:00.000Z";
    let mut kept = Vec::new();
    for word in ["first", "second"] {
        let text = env.read(D29);
        env.write(D29, &text.replace("Friday", word));
        kept.push(bytes(&env, D29));
        let r = run_at(&env, at, &["restore"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let dir = env.vault.join(".git/rutter/aside");
    let a = std::fs::read(dir.join("2026-11-29.md.20261202T093000000Z")).unwrap();
    let b = std::fs::read(dir.join("2026-11-29.md.20261202T093000000Z-2")).unwrap();
    assert_eq!(vec![a, b], kept, "both edited versions are still there");
}

#[test]
fn restore_refuses_a_malformed_day() {
    let env = vault();
    std::fs::remove_file(env.vault.join(D28)).unwrap();
    let r = run(&env, &["restore", "--day", "2026-11-31"]);
    assert_eq!((r.code, r.stdout.as_str()), (2, ""));
    assert_eq!(
        r.stderr,
        "git-rutter: 2026-11-31 is not a date (YYYY-MM-DD)\n"
    );
    assert!(!exists(&env.vault.join(D28)), "nothing was restored");
}

// ---- diff ----------------------------------------------------------------------------------

#[test]
fn diff_is_silent_and_exits_0_when_clean() {
    let env = vault();
    let r = run(&env, &["diff"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, ""));
    assert_eq!(
        r.stderr,
        "git-rutter: no differences: the record files match refs/rutter/records.\n"
    );
    assert!(exists(&env.vault.join(".git/rutter/records.index")));
}

#[test]
fn diff_shows_edits_pending_lines_deletions_and_new_files() {
    let env = vault();
    let old29 = env.read(D29).lines().last().unwrap().to_string();
    edit_29(&env);
    let new29 = env.read(D29).lines().last().unwrap().to_string();
    let pending = append_by_hand(&env);
    let d30 = env.read(D30);
    let l30: Vec<&str> = d30.lines().collect();
    let d28 = env.read(D28);
    std::fs::remove_file(env.vault.join(D28)).unwrap();
    write_new_day(&env);
    // As `git diff`: exit 0 whatever it shows; 1 with --exit-code.
    let r = run(&env, &["diff", "--exit-code"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let plain = run(&env, &["diff"]);
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    assert_eq!(plain.stdout, r.stdout);
    let mut want = format!("--- a/{D28}\n+++ b/{D28}\n@@ -1,8 +0,0 @@\n");
    for l in d28.lines() {
        want.push_str(&format!("-{l}\n"));
    }
    want.push_str(&format!(
        "--- a/{D29}\n+++ b/{D29}\n@@ -5,4 +5,4 @@\n ---\n # Sessions - 2026-11-29\n \n-{old29}\n+{new29}\n"
    ));
    want.push_str(&format!(
        "--- a/{D30}\n+++ b/{D30}\n@@ -7,3 +7,4 @@\n \n {}\n {}\n+{}",
        l30[7], l30[8], pending
    ));
    want.push_str(&format!("--- /dev/null\n+++ b/{D01}\n@@ -0,0 +1,8 @@\n"));
    for l in env.read(D01).lines() {
        want.push_str(&format!("+{l}\n"));
    }
    assert_eq!(r.stdout, want);
}

#[test]
fn diff_shows_a_use_log_not_committed_yet() {
    let env = vault();
    let line = "{\"ts\":\"2026-11-30T12:00:00.000Z\",\"kind\":\"librarian-recent\"}";
    env.write("_librarian/stateful-use.jsonl", &format!("{line}\n"));
    let r = run(&env, &["diff", "--exit-code"]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stdout,
        format!("--- /dev/null\n+++ b/_librarian/stateful-use.jsonl\n@@ -0,0 +1 @@\n+{line}\n")
    );
}

/// `commit` with no entry waiting but new use-log lines (an MCP read logs its use) commits
/// them and says so (it said `committed 0 entries` while it made a commit).
#[test]
fn commit_of_use_log_lines_alone_says_what_it_committed() {
    let env = vault();
    let line = "{\"ts\":\"2026-11-30T12:00:00.000Z\",\"kind\":\"librarian-recent\"}";
    env.write(USE_LOG, &format!("{line}\n"));
    let r = run_at(&env, "2026-11-30T12:05:00.000Z", &["commit"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.starts_with(
            "committed the use log's new lines (no entry waited) to refs/rutter/records as "
        ),
        "{}",
        r.stdout
    );
    assert_eq!(committed(&env, USE_LOG), format!("{line}\n").into_bytes());
    assert_eq!(run(&env, &["commit"]).stdout, "nothing to commit\n");
}

// ---- gate ----------------------------------------------------------------------------------

const USE_LOG: &str = "_librarian/stateful-use.jsonl";

/// Use-log lines in the reference's format (anchor §12), around ISO week boundaries, plus
/// an uncounted kind, foreign lines and a torn tail.
/// The clock the gate tests read the log at: what counts follows it.
const GATE_NOW: &str = "2026-12-01T09:00:00.000Z";

/// `ARGS` (a `gate` command) read at [`GATE_NOW`].
fn gate(env: &Env, args: &[&str]) -> Run {
    let mut c = env.cmd();
    c.env("RUTTER_TIMESTAMP", GATE_NOW).args(args);
    let r = run_with_stdin(&mut c, b"");
    assert!(!r.stderr.contains("panicked"), "{args:?}: {}", r.stderr);
    r
}

/// `gate --json` read at [`GATE_NOW`]: `logged` events with a plausible time, `outside` without.
fn gate_json(logged: usize, outside: usize, weeks: Value) -> Value {
    json!({
        "target": 3, "weeks": weeks, "logged": logged, "outside": outside,
        "counted_from": "2006-11-28T09:00:00.000Z", "counted_until": "2026-12-02T09:00:00.000Z",
    })
}

fn write_use_log(env: &Env) {
    let ev = |ts: &str, kind: &str| format!("{{\"ts\":\"{ts}\",\"kind\":\"{kind}\"}}\n");
    let text = [
        ev("2020-12-31T12:00:00.000Z", "librarian-recent"),
        ev("2021-01-03T23:59:59.999Z", "librarian-recent"),
        ev("2021-01-04T00:00:00.000Z", "search-signal"),
        ev("2026-07-26T23:59:59.999Z", "librarian-recent"),
        ev("2026-07-27T00:00:00.000Z", "librarian-recent"),
        ev("2026-07-28T10:00:00.000Z", "search-signal"),
        ev("2026-07-29T10:00:00.000Z", "librarian-positions"),
        ev("2026-07-29T11:00:00.000Z", "librarian-recent"),
        "not json\n".to_string(),
        "{\"kind\":\"librarian-recent\"}\n".to_string(),
        ev("2026-08-03T00:00:00.000Z", "librarian-recent"),
        ev("2026-08-09T23:59:59.999Z", "search-signal"),
        "{\"ts\":\"2026-08-1".to_string(),
    ]
    .concat();
    env.write(USE_LOG, &text);
}

#[test]
fn gate_without_a_log() {
    let env = vault();
    let r = gate(&env, &["gate"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "No use of the memory is logged yet: the MCP server logs each librarian-recent call and each search that finds an earlier decision.\n");
    let ranged = gate(&env, &["gate", "2026-01-01", "2026-12-31"]);
    assert_eq!(ranged.stdout, "No use of the memory is logged yet: the MCP server logs each librarian-recent call and each search that finds an earlier decision.\n");
    let reversed = gate(&env, &["gate", "2027-01-01", "2026-01-01"]);
    assert_eq!(reversed.code, 2, "{}", reversed.stderr);
    assert!(
        reversed
            .stderr
            .contains("FROM 2027-01-01 is after TO 2026-01-01"),
        "{}",
        reversed.stderr
    );
    for cmd in ["recent", "log", "timeline"] {
        let r = env.rutter(&[cmd, "--since", "2026-12-08", "--until", "2026-12-01"]);
        assert_eq!(r.code, 2, "{cmd}: {}", r.stderr);
        assert!(
            r.stderr
                .contains("--since 2026-12-08 is after --until 2026-12-01"),
            "{cmd}: {}",
            r.stderr
        );
    }
    let j: Value = serde_json::from_str(&gate(&env, &["gate", "--json"]).stdout).unwrap();
    assert_eq!(j, gate_json(0, 0, json!([])));
    env.write(
        USE_LOG,
        "{\"ts\":\"2026-07-29T10:00:00.000Z\",\"kind\":\"librarian-positions\"}\n",
    );
    assert_eq!(
        gate(&env, &["gate"]).stdout,
        "No use of the memory is logged yet: the MCP server logs each librarian-recent call and each search that finds an earlier decision.\n",
        "positions never count"
    );
}

#[test]
fn gate_counts_per_iso_week_as_the_reference_prints_it() {
    let env = vault();
    write_use_log(&env);
    let r = gate(&env, &["gate"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "How often your AI clients used their memory, week by week (each librarian-recent call and each search that found an earlier decision counts once; 3 or more a week means it is in use):\n  2020-W53 (from 2020-12-28): 2\n  2021-W01 (from 2021-01-04): 1\n  2026-W30 (from 2026-07-20): 1\n  2026-W31 (from 2026-07-27): 3  ✓ in use\n  2026-W32 (from 2026-08-03): 2\n"
    );
    let j: Value = serde_json::from_str(&gate(&env, &["gate", "--json"]).stdout).unwrap();
    let week =
        |w: &str, from: &str, n: usize| json!({"week": w, "from": from, "count": n, "met": n >= 3});
    assert_eq!(
        j,
        gate_json(
            9,
            0,
            json!([
                week("2020-W53", "2020-12-28", 2),
                week("2021-W01", "2021-01-04", 1),
                week("2026-W30", "2026-07-20", 1),
                week("2026-W31", "2026-07-27", 3),
                week("2026-W32", "2026-08-03", 2),
            ])
        )
    );
}

#[test]
fn gate_range_is_inclusive_utc_days() {
    let env = vault();
    write_use_log(&env);
    let from = gate(&env, &["gate", "2026-07-27"]);
    assert_eq!(
        from.stdout,
        "How often your AI clients used their memory, week by week (each librarian-recent call and each search that found an earlier decision counts once; 3 or more a week means it is in use):\n  2026-W31 (from 2026-07-27): 3  ✓ in use\n  2026-W32 (from 2026-08-03): 2\n"
    );
    let both = gate(&env, &["gate", "2026-07-27", "2026-08-03"]);
    assert_eq!(
        both.stdout,
        "How often your AI clients used their memory, week by week (each librarian-recent call and each search that found an earlier decision counts once; 3 or more a week means it is in use):\n  2026-W31 (from 2026-07-27): 3  ✓ in use\n  2026-W32 (from 2026-08-03): 1\n"
    );
    let year_end = gate(&env, &["gate", "2021-01-01", "2021-01-03"]);
    assert_eq!(
        year_end.stdout,
        "How often your AI clients used their memory, week by week (each librarian-recent call and each search that found an earlier decision counts once; 3 or more a week means it is in use):\n  2020-W53 (from 2020-12-28): 1\n"
    );
    let j: Value =
        serde_json::from_str(&gate(&env, &["gate", "2026-07-26", "2026-07-26", "--json"]).stdout)
            .unwrap();
    assert_eq!(
        j,
        gate_json(
            9,
            0,
            json!([{"week": "2026-W30", "count": 1, "met": false, "from": "2026-07-20"}])
        )
    );
}

#[test]
fn gate_range_without_events_says_so() {
    let env = vault();
    write_use_log(&env);
    // (A range whose FROM is after its TO is refused as such: `gate_without_a_log`.)
    for args in [
        &["gate", "2027-01-01"][..],
        &["gate", "2026-08-10", "2026-12-31"],
        &["gate", "2026-07-30", "2026-07-30"],
    ] {
        let r = gate(&env, args);
        assert_eq!(r.code, 0, "{args:?}");
        assert_eq!(
            r.stdout, "Your AI clients did not use their memory in the requested range.\n",
            "{args:?}"
        );
    }
    let j: Value =
        serde_json::from_str(&gate(&env, &["gate", "2027-01-01", "--json"]).stdout).unwrap();
    assert_eq!(j, gate_json(9, 0, json!([])));
}

#[test]
fn gate_refuses_bad_dates() {
    let env = vault();
    write_use_log(&env);
    for (args, bad) in [
        (&["gate", "2026-02-30"][..], "2026-02-30"),
        (&["gate", "2026-07-27", "27/07/2026"], "27/07/2026"),
        (&["gate", "2026-7-27"], "2026-7-27"),
        (&["gate", "last-week", "--json"], "last-week"),
    ] {
        let r = gate(&env, args);
        assert_eq!((r.code, r.stdout.as_str()), (2, ""), "{args:?}");
        assert_eq!(
            r.stderr,
            format!("git-rutter: {bad} is not a date (YYYY-MM-DD)\n"),
            "{args:?}"
        );
    }
}

#[test]
fn gate_leaves_out_a_use_no_clock_could_have_dated_and_says_so() {
    let env = vault();
    write_use_log(&env);
    let mut log = env.read(USE_LOG);
    log.push_str("\n{\"ts\":\"9999-12-31T23:59:59.999Z\",\"kind\":\"librarian-recent\"}\n");
    log.push_str("{\"ts\":\"1970-01-05T00:00:00.000Z\",\"kind\":\"search-signal\"}\n");
    log.push_str("{\"ts\":\"2026-12-03T10:00:00.000Z\",\"kind\":\"search-signal\"}\n");
    env.write(USE_LOG, &log);
    let r = gate(&env, &["gate"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "How often your AI clients used their memory, week by week (each librarian-recent call and each search that found an earlier decision counts once; 3 or more a week means it is in use):\n  2020-W53 (from 2020-12-28): 2\n  2021-W01 (from 2021-01-04): 1\n  2026-W30 (from 2026-07-20): 1\n  2026-W31 (from 2026-07-27): 3  ✓ in use\n  2026-W32 (from 2026-08-03): 2\n3 use events outside 2006-11-28 to 2026-12-02, not counted: dated after this machine's clock, or more than 20 years before it.\n"
    );
    let j: common::decoded::Gate = common::json::decode(&gate(&env, &["gate", "--json"]).stdout);
    assert_eq!((j.logged, j.outside), (9, 3));
    assert_eq!(j.weeks.len(), 5);
    assert!(!gate(&env, &["gate", "9999-01-01"])
        .stdout
        .contains("9999-W"));
}

// ---- terminal safety ----------------------------------------------------------------------

/// A forged pending line whose JSON summary carries terminal escapes (cursor up, erase line,
/// colour) and a bidi override: no human output lets them reach the terminal, and `--json`
/// keeps the exact value as JSON escapes.
#[test]
fn forged_control_characters_never_reach_the_terminal() {
    let env = vault();
    let evil = "\u{1b}[1A\u{1b}[2K\u{1b}[32mall committed\u{202e}\u{9b}";
    let json_summary = serde_json::to_string(evil).unwrap();
    let line = format!(
        "- 12:00:00 — forged <!-- rutter:entry {{\"id\":\"{}\",\"time\":\"{}\",\"summary\":{json_summary},\"refs\":[]}} -->\n",
        HAND.0, HAND.1
    );
    let mut text = env.read(D30);
    text.push_str(&line);
    env.write(D30, &text);
    for args in [
        &["log"][..],
        &["log", "-p"],
        &["recent"],
        &["verify"],
        &["verify", "--porcelain"],
        &["diff"],
    ] {
        let r = run(&env, args);
        let raw = r
            .stdout
            .chars()
            .find(|c| c.is_control() && *c != '\n' && *c != '\t' || *c == '\u{202e}');
        assert_eq!(raw, None, "{args:?} printed a raw control: {:?}", r.stdout);
    }
    let log = run(&env, &["log"]).stdout;
    assert!(
        log.contains("\\u{001B}[1A\\u{001B}[2K\\u{001B}[32mall committed\\u{202E}\\u{009B}"),
        "{log}"
    );
    let r = run(&env, &["log", "--json"]);
    assert!(!r.stdout.contains('\u{9b}') && !r.stdout.contains('\u{202e}'));
    let rows: Vec<LogRow> = decode(&r.stdout);
    let forged = rows.iter().find(|e| e.id == HAND.0).unwrap();
    assert_eq!(forged.summary, evil, "the JSON value is exact");
}

/// The review's §b 12: `log` never waits out a sync that holds the capture lock: it reads
/// without it after a short try, and says so (the holder is still holding it when log is done).
#[test]
fn log_does_not_wait_for_a_held_lock() {
    let env = Env::git_vault();
    let r = env.capture_at("2026-11-30T10:00:00.000Z", "Listed anyway.", &[]);
    assert!(r.stderr.contains("committed"), "{}", r.stderr);
    let mut holder = LockHolder::hold(&env.vault.join(".git/rutter/lock"), 20);
    let r = env.rutter(&["log", "--no-pager"]);
    let still_held = holder.still_holding();
    drop(holder);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("Listed anyway."), "{}", r.stdout);
    assert!(r.stderr.contains("best effort"), "{}", r.stderr);
    assert!(still_held, "log finished while the lock was held");
}
