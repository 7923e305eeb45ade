//! `git rutter cited-by` (spec/cited-by.md), in-process: the decisions that cited a note, newest
//! first, through a rename, with an edit in place and its diff, and each refusal.

use super::two_sessions;
use crate::common::*;

/// `two_sessions` with a third decision, on 2026-12-01, citing Notes/a.md again.
fn cited_twice() -> Env {
    let env = two_sessions();
    let r = env.capture_at(
        "2026-12-01T08:30:00.000Z",
        "Split the schema note.",
        &["Notes/a.md"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    env
}

#[test]
fn cited_by_lists_the_decisions_newest_first() {
    let env = cited_twice();
    insta::assert_snapshot!(env.here(&["cited-by", "Notes/a.md"]));
}

#[test]
fn cited_by_follows_a_rename_and_shows_an_edit_with_its_diff() {
    let env = cited_twice();
    env.git(&["mv", "Notes/a.md", "Notes/alpha.md"]);
    env.git(&["commit", "-qm", "rename"]);
    // The rename is bound (same content, another path), then the note is edited in place.
    let r = env.here(&["reindex"]);
    assert_eq!(r.status, 0, "{r}");
    env.write("Notes/alpha.md", &format!("{NOTE_A}A line added later.\n"));
    insta::assert_snapshot!(env.here(&["cited-by", "-p", "Notes/alpha.md"]));
}

#[test]
fn cited_by_names_a_rename_git_saw_but_nobody_confirmed() {
    let env = cited_twice();
    env.git(&["mv", "Notes/a.md", "Notes/alpha.md"]);
    env.write("Notes/alpha.md", &format!("{NOTE_A}A line added later.\n"));
    env.git(&["commit", "-qam", "rename and edit"]);
    insta::assert_snapshot!(env.here(&["cited-by", "Notes/alpha.md"]));
}

#[test]
fn cited_by_of_a_path_the_ledger_binds_elsewhere_names_the_note() {
    let env = cited_twice();
    env.git(&["mv", "Notes/a.md", "Notes/alpha.md"]);
    env.git(&["commit", "-qm", "rename"]);
    let r = env.here(&["reindex"]);
    assert_eq!(r.status, 0, "{r}");
    insta::assert_snapshot!(env.here(&["cited-by", "Notes/a.md"]));
}

#[test]
fn cited_by_of_a_note_no_decision_cited() {
    let env = two_sessions();
    env.write("Notes/c.md", "# Gamma\n");
    insta::assert_snapshot!(env.here(&["cited-by", "Notes/c.md"]));
}

#[test]
fn cited_by_of_a_path_that_is_no_note() {
    let env = two_sessions();
    insta::assert_snapshot!(env.here(&["cited-by", "Notes/nothing.md"]));
}

#[test]
fn cited_by_shows_a_line_break_in_a_name_escaped() {
    let env = two_sessions();
    let name = "Notes/nl\ngit-rutter: FAKE LINE.md";
    env.write(name, "# nl\n");
    env.git(&["add", "-A", "Notes"]);
    env.git(&["commit", "-qm", "a name with a line break"]);
    let r = env.capture_at(
        "2026-12-01T09:00:00.000Z",
        "Cites a name with a break.",
        &[name],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    env.write(name, "# nl\n\nEdited.\n");
    insta::assert_snapshot!(env.here(&["cited-by", "-p", name]));
    insta::assert_snapshot!(env.here(&["recent", "-n", "1"]));
}
