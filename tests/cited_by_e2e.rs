//! `git rutter cited-by` with the real binary on real git vaults (spec/cited-by.md): the
//! decisions that cited a note through a rename (the identity ledger) and an in-place edit,
//! `-p` against the copy the ref keeps (or git's history, or neither), the paths it takes, the
//! decisions it leaves out, and its refusals. JSON is decoded, never matched as text.

use crate::common;
use common::*;

/// A git vault whose Notes/a.md two decisions cited (the second with Notes/b.md), on two days.
fn cited_vault() -> Env {
    let env = Env::git_vault();
    for (ts, summary, refs) in [
        (
            "2026-11-30T10:00:00.000Z",
            "Chose the alpha plan.",
            &["Notes/a.md"][..],
        ),
        (
            "2026-12-01T09:30:00.000Z",
            "Kept alpha beside beta.",
            &["Notes/b.md", "Notes/a.md"][..],
        ),
    ] {
        let r = env.capture_at(ts, summary, refs);
        assert!(r.stderr.contains("committed"), "{}", r.stderr);
    }
    env
}

/// `cited-by ARGS --json`, decoded; the command must succeed.
fn cited_json(env: &Env, args: &[&str]) -> json::CitedBy {
    let mut all = vec!["cited-by", "--json"];
    all.extend_from_slice(args);
    let r = env.rutter(&all);
    assert_eq!(r.code, 0, "{}", r.stderr);
    json::decode(&r.stdout)
}

fn summaries(v: &json::CitedBy) -> Vec<&str> {
    v.summaries()
}

#[test]
fn cited_by_lists_the_decisions_newest_first_with_what_the_note_is_now() {
    let env = cited_vault();
    let v = cited_json(&env, &["Notes/a.md"]);
    assert_eq!(v.path, "Notes/a.md");
    assert_eq!(
        summaries(&v),
        ["Kept alpha beside beta.", "Chose the alpha plan."]
    );
    let newest = &v.decisions[0];
    assert_eq!(newest.id, "20261201T093000000Z");
    assert_eq!(newest.day, "2026-12-01");
    assert_eq!(newest.project.as_deref(), Some("vault"));
    assert_eq!(newest.status, "committed");
    assert_eq!(newest.cited.path, "Notes/a.md");
    assert!(!newest.renamed);
    assert!(!newest.changed);
    assert_eq!(v.changed_since, 0);
    assert_eq!(v.sha256, newest.cited.hash);
    assert_eq!(newest.diff, None, "no -p, no diff: {newest:?}");
    assert_eq!(newest.cited_version, None, "no -p: {newest:?}");
    let b = cited_json(&env, &["Notes/b.md"]);
    assert_eq!(summaries(&b), ["Kept alpha beside beta."]);
}

#[test]
fn cited_by_follows_a_rename_through_the_identity_ledger() {
    let env = cited_vault();
    env.git(&["mv", "Notes/a.md", "Notes/alpha.md"]);
    env.git(&["commit", "-qm", "rename"]);
    // No reindex: cited-by notices the rename itself, binds it by its hash and records that.
    let r = env.rutter(&["cited-by", "Notes/alpha.md"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.starts_with("Notes/alpha.md is cited by 2 recorded decisions, the latest on 2026-12-01; the note has not changed since any of them.\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("   cited as Notes/a.md@sha256:ebe877e (renamed to Notes/alpha.md; unchanged since capture)"),
        "{}",
        r.stdout
    );
    assert!(env
        .read("_librarian/note-identity.md")
        .contains("exact-hash: Notes/a.md -> Notes/alpha.md"));
    let v = cited_json(&env, &["Notes/alpha.md"]);
    for d in &v.decisions {
        assert_eq!(d.cited.path, "Notes/a.md", "{d:?}");
        assert_eq!((d.renamed, d.changed), (true, false));
    }
    // The old path is no note: exit 1, nothing on stdout, and the message names the new one.
    let old = env.rutter(&["cited-by", "Notes/a.md", "--json"]);
    assert_eq!(old.code, 1, "{}", old.stderr);
    assert_eq!(old.stdout, "");
    assert!(
        old.stderr.contains("binds it to Notes/alpha.md")
            && old.stderr.contains("`git rutter cited-by Notes/alpha.md`"),
        "{}",
        old.stderr
    );
}

#[test]
fn cited_by_sees_an_in_place_edit_and_p_diffs_against_the_kept_copy() {
    let env = cited_vault();
    env.write("Notes/a.md", &format!("{NOTE_A}Decision: alpha it is.\n"));
    let v = cited_json(&env, &["-p", "Notes/a.md"]);
    assert_eq!(v.changed_since, 2);
    for d in &v.decisions {
        assert!(d.changed, "{d:?}");
        assert_eq!(d.cited_version.as_deref(), Some("kept"), "{d:?}");
        let diff = d.diff.as_deref().unwrap();
        assert!(
            diff.starts_with("--- Notes/a.md@sha256:ebe877e (as cited)\n+++ Notes/a.md (now)\n"),
            "{diff}"
        );
        assert!(
            diff.contains("\n The alpha note.\n+Decision: alpha it is.\n"),
            "{diff}"
        );
    }
    let r = env.rutter(&["cited-by", "-p", "Notes/a.md"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("the note changed since all of them."),
        "{}",
        r.stdout
    );
    assert_eq!(
        r.stdout.matches("+Decision: alpha it is.").count(),
        1,
        "one diff per version: {}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("(The same cited version as 20261201T093000, above.)"),
        "{}",
        r.stdout
    );
}

#[test]
fn without_a_kept_copy_p_reads_git_history_or_says_none_was_kept() {
    let env = Env::git_vault();
    env.git(&["config", "rutter.keepCited", "false"]);
    // Notes/a.md is committed on the user's branch at the version cited; Notes/c.md never is.
    env.write("Notes/c.md", "# Gamma\n\nFirst.\n");
    let r = env.capture_at(
        "2026-11-30T10:00:00.000Z",
        "Cited both.",
        &["Notes/a.md", "Notes/c.md"],
    );
    assert!(r.stderr.contains("committed"), "{}", r.stderr);
    env.write("Notes/a.md", "# Alpha\n\nRewritten.\n");
    env.write("Notes/c.md", "# Gamma\n\nSecond.\n");
    let a = cited_json(&env, &["-p", "Notes/a.md"]);
    assert_eq!(a.decisions[0].cited_version.as_deref(), Some("history"));
    assert!(a.decisions[0]
        .diff
        .as_deref()
        .unwrap()
        .contains("-The alpha note.\n+Rewritten.\n"));
    let c = cited_json(&env, &["-p", "Notes/c.md"]);
    assert_eq!(c.decisions[0].cited_version.as_deref(), Some("missing"));
    assert_eq!(c.decisions[0].diff, None);
    let r = env.rutter(&["cited-by", "-p", "Notes/c.md"]);
    assert!(
        r.stdout
            .contains("    (No copy of the cited version was kept: rutter.keepCited was false"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_path_is_taken_as_show_takes_it() {
    let env = cited_vault();
    let notes = env.vault.join("Notes");
    for given in ["a.md", "./a.md", "../Notes/a.md", "Notes/a.md"] {
        let r = env.rutter_in(&notes, &["cited-by", "--json", given]);
        assert_eq!(r.code, 0, "{given}: {}", r.stderr);
        let v: json::CitedBy = json::decode(&r.stdout);
        assert_eq!(v.path, "Notes/a.md", "{given}");
    }
    let absolute = env.vault.join("Notes/a.md");
    let v = cited_json(&env, &[absolute.to_str().unwrap()]);
    assert_eq!(v.path, "Notes/a.md");
}

#[test]
fn retracted_decisions_are_left_out_and_a_new_capture_counts_at_once() {
    let env = cited_vault();
    assert_eq!(summaries(&cited_json(&env, &["Notes/a.md"])).len(), 2);
    let r = env.rutter(&["retract", "20261130T100000", "--reason", "Not a decision."]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = env.capture_at(
        "2026-12-02T08:00:00.000Z",
        "Settled alpha.",
        &["Notes/a.md"],
    );
    assert!(r.stderr.contains("committed"), "{}", r.stderr);
    assert_eq!(
        summaries(&cited_json(&env, &["Notes/a.md"])),
        ["Settled alpha.", "Kept alpha beside beta."]
    );
}

#[test]
fn what_is_no_note_is_refused_and_a_note_nobody_cited_is_not() {
    let env = cited_vault();
    for path in [
        "Notes/nothing.md",
        "../outside.md",
        "_librarian/note-identity.md",
    ] {
        let r = env.rutter(&["cited-by", path]);
        assert_eq!(r.code, 1, "{path}: {}", r.stderr);
        assert_eq!(r.stdout, "", "{path}");
        assert!(
            r.stderr.starts_with("git-rutter: Note not found: "),
            "{path}: {}",
            r.stderr
        );
        // One line: the message, then what to do (spec/output.md, "Errors and hints").
        assert!(
            r.stderr
                .trim_end()
                .ends_with(". `git rutter search WORDS` finds notes by their content."),
            "{}",
            r.stderr
        );
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    }
    env.write("Notes/c.md", "# Gamma\n");
    let r = env.rutter(&["cited-by", "Notes/c.md"]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "No recorded decision cites Notes/c.md.\n")
    );
    let v = cited_json(&env, &["Notes/c.md"]);
    assert!(v.decisions.is_empty(), "{v:?}");
    let bad = env.rutter(&["cited-by"]);
    assert_eq!(
        bad.code, 2,
        "a missing PATH is a usage error: {}",
        bad.stderr
    );
}

#[test]
fn the_help_teaches_and_the_manual_has_a_page() {
    let env = Env::bare();
    let r = env.rutter(&["cited-by", "--help"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for words in [
        "Usage: git rutter cited-by [OPTIONS] <PATH>",
        "through renames",
        "changed since capture",
        "-p, --patch",
        "rutter.keepCited=false",
        "Retracted decisions are left out",
        "--json",
    ] {
        assert!(r.stdout.contains(words), "{words}: {}", r.stdout);
    }
    let page = env.rutter(&["man", "cited-by"]);
    assert_eq!(page.code, 0, "{}", page.stderr);
    assert!(
        page.stdout.contains(".TH GIT-RUTTER-CITED-BY 1 "),
        "{}",
        page.stdout
    );
    let main = env.rutter(&["man"]).stdout;
    assert!(main.contains("git\\-rutter\\-cited\\-by(1)"), "{main}");
}

#[test]
fn a_rename_with_an_edit_is_offered_until_confirmed_then_listed_as_changed() {
    let env = cited_vault();
    env.git(&["mv", "Notes/a.md", "Notes/alpha.md"]);
    env.write(
        "Notes/alpha.md",
        &format!("{NOTE_A}Decision: alpha it is.\n"),
    );
    env.git(&["commit", "-qam", "rename and decide"]);
    let r = env.rutter(&["cited-by", "Notes/alpha.md"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .starts_with("No recorded decision cites Notes/alpha.md.\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("`git rutter identity confirm Notes/a.md Notes/alpha.md` binds it"),
        "{}",
        r.stdout
    );
    let v = cited_json(&env, &["Notes/alpha.md"]);
    assert_eq!(v.unresolved[0].from, "Notes/a.md");
    assert!(v.unresolved[0]
        .evidence
        .as_deref()
        .unwrap()
        .starts_with("git: renamed in "));
    let r = env.rutter(&["identity", "confirm", "Notes/a.md", "Notes/alpha.md"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = cited_json(&env, &["-p", "Notes/alpha.md"]);
    assert_eq!(summaries(&v).len(), 2);
    assert_eq!(v.changed_since, 2);
    assert!(v.unresolved.is_empty(), "{v:?}");
    assert!(v.decisions[0]
        .diff
        .as_deref()
        .unwrap()
        .contains("+Decision: alpha it is.\n"));
}

#[test]
fn outside_git_the_decisions_are_listed_unverified_and_p_says_there_is_no_record() {
    let env = Env::bare();
    env.write("Notes/a.md", NOTE_A);
    let r = env.capture_at(
        "2026-11-30T10:00:00.000Z",
        "Kept notes outside git.",
        &["Notes/a.md"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    env.write("Notes/a.md", &format!("{NOTE_A}Edited.\n"));
    let r = env.rutter(&["cited-by", "-p", "Notes/a.md"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("is not a git repository, so these entries are read from the day files as they are (unverified)"), "{}", r.stderr);
    assert!(
        r.stdout
            .contains("— Kept notes outside git.\n   cited Notes/a.md@"),
        "no mark: {}",
        r.stdout
    );
    assert!(
        r.stdout.contains(
            "(No record to read the cited version from: the vault is not a git repository.)"
        ),
        "{}",
        r.stdout
    );
    let v = cited_json(&env, &["-p", "Notes/a.md"]);
    assert_eq!(v.decisions[0].status, "unverified");
    assert_eq!(v.decisions[0].cited_version.as_deref(), Some("missing"));
}

/// A note whose name holds a line break, its second line made to read as git-rutter's own.
const FORGER: &str = "Notes/nl\ngit-rutter: FAKE LINE.md";
/// The name as every terminal line shows it.
const FORGER_SHOWN: &str = "Notes/nl\\u{000A}git-rutter: FAKE LINE.md";

#[test]
fn a_line_break_in_one_field_is_shown_escaped_wherever_the_field_is_printed() {
    let env = Env::git_vault();
    env.write(FORGER, "# nl\n\nThe forger note.\n");
    env.git(&["add", "-A", "Notes"]);
    env.git(&["commit", "-qm", "a name with a line break"]);
    let r = env.capture_at(
        "2026-11-30T10:00:00.000Z",
        "Cites a name with a break.",
        &[FORGER],
    );
    assert!(r.stderr.contains("committed"), "{}", r.stderr);
    // A forged line (no capture wrote it) whose summary, project and client break lines too.
    let day = env.first_day();
    let entry = serde_json::json!({
        "id": "20261130T110000000Z-zz-0001", "session_id": "forged",
        "time": "2026-11-30T11:00:00.000Z", "summary": "forged\ngit-rutter: FAKE SUMMARY\r\u{2028}",
        "client": "claude\ngit-rutter: FAKE CLIENT", "workspace": {"cwd": "/w", "project": "p\ngit-rutter: FAKE PROJECT"},
        "refs": [{"path": FORGER, "hash": "sha256:00"}],
    });
    let mut text = env.read(&day);
    text.push_str(&format!(
        "- 11:00:00 — forged <!-- rutter:entry {entry} -->\n"
    ));
    env.write(&day, &text);
    // The note edited since, so -p has a diff to show under it.
    env.write(FORGER, "# nl\n\nThe forger note, edited.\n");
    for args in [
        &["cited-by", FORGER][..],
        &["cited-by", "-p", FORGER],
        &["recent"],
        &["recent", "--all"],
        &["recent", "--grep", "forged"],
        &["log"],
        &["search", "forger"],
        &["show", FORGER],
    ] {
        let r = env.rutter(args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        let forged: Vec<&str> = r
            .stdout
            .lines()
            .filter(|l| l.trim_start().starts_with("git-rutter: FAKE"))
            .collect();
        assert!(
            forged.is_empty(),
            "{args:?} printed a forged line: {forged:?}\n{}",
            r.stdout
        );
        assert!(
            !r.stdout.contains('\u{2028}') && !r.stdout.contains('\r'),
            "{args:?}"
        );
        if args[0] != "log" {
            assert!(r.stdout.contains(FORGER_SHOWN), "{args:?}: {}", r.stdout);
        }
    }
    let log = env.rutter(&["log"]).stdout;
    assert!(
        log.contains("forged\\u{000A}git-rutter: FAKE SUMMARY\\u{000D}\\u{2028}"),
        "{log}"
    );
    let recent = env.rutter(&["recent"]).stdout;
    assert!(
        recent.contains("[p\\u{000A}git-rutter: FAKE PROJECT]"),
        "{recent}"
    );
    assert!(
        recent.contains("(claude\\u{000A}git-rutter: FAKE CLIENT)"),
        "{recent}"
    );
    // The JSON keeps each value as it is.
    let v = cited_json(&env, &[FORGER]);
    assert_eq!(v.path, FORGER);
}

/// A decision that cited a note through a symlink to it (capture keeps the link's name, as the
/// reference did) is listed when cited-by is asked by that name: the index holds no link as a
/// note, so before it said the link "is no note now" and was unresolved. A link leading out of
/// the vault, into `.git` or nowhere is still no note.
#[test]
fn cited_by_a_symlinks_name_lists_the_decisions_that_cited_the_note_through_it() {
    use std::os::unix::fs::symlink;
    let env = cited_vault();
    let root = env.vault.clone();
    symlink("Notes/a.md", root.join("link.md")).unwrap();
    let r = env.capture_at(
        "2026-12-02T08:00:00.000Z",
        "Cited through the link.",
        &["link.md"],
    );
    assert!(r.stderr.contains("committed"), "{}", r.stderr);
    let r = env.rutter(&["cited-by", "link.md"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .starts_with("Notes/a.md is cited by 3 recorded decisions, the latest on 2026-12-02;"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("   cited as link.md@sha256:")
            && r.stdout
                .contains(" (a link to Notes/a.md; unchanged since capture)\n"),
        "{}",
        r.stdout
    );
    let v = cited_json(&env, &["link.md"]);
    assert_eq!(v.path, "Notes/a.md");
    assert_eq!(
        summaries(&v),
        [
            "Cited through the link.",
            "Kept alpha beside beta.",
            "Chose the alpha plan."
        ]
    );
    let linked = &v.decisions[0];
    assert_eq!(linked.cited.path, "link.md");
    assert!(!linked.renamed, "a link is no rename: {linked:?}");
    assert!(!linked.changed);
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("o.md"), "# Out\n").unwrap();
    symlink(outside.path().join("o.md"), root.join("out.md")).unwrap();
    symlink(".git/config", root.join("cfg.md")).unwrap();
    symlink("nowhere.md", root.join("dangling.md")).unwrap();
    for path in ["out.md", "cfg.md", "dangling.md"] {
        let r = env.rutter(&["cited-by", path]);
        assert_eq!(r.code, 1, "{path}: {}", r.stdout);
        assert!(
            r.stderr.starts_with("git-rutter: Note not found: "),
            "{path}: {}",
            r.stderr
        );
    }
}
