//! `git rutter timeline` (spec/timeline.md), in-process: what it says on stderr when it writes
//! the page to a file, and its refusals. The page itself is checked by decoding its data
//! (`tests/timeline_e2e.rs`) and in a browser (`tests/timeline_browser.py`).

use super::two_sessions;
use crate::common::*;

#[test]
fn timeline_writes_the_page_and_says_where() {
    let env = two_sessions();
    let page = env.root().join("timeline.html");
    insta::assert_snapshot!(env.here(&["timeline", "-o", page.to_str().unwrap()]));
    assert!(std::fs::read_to_string(&page)
        .unwrap()
        .starts_with("<!DOCTYPE html>"));
}

#[test]
fn timeline_of_one_project_since_a_day() {
    let env = two_sessions();
    let page = env.root().join("timeline.html");
    insta::assert_snapshot!(env.here(&[
        "timeline",
        "--since",
        "2026-12-01",
        "--project",
        "myproj",
        "-o",
        page.to_str().unwrap()
    ]));
}

#[test]
fn timeline_never_replaces_a_file_it_did_not_write() {
    let env = two_sessions();
    let note = env.vault.join("Notes/a.md");
    insta::assert_snapshot!(env.here(&["timeline", "-o", note.to_str().unwrap()]));
    assert_eq!(std::fs::read_to_string(&note).unwrap(), NOTE_A);
}

#[test]
fn timeline_never_writes_into_the_record() {
    let env = two_sessions();
    let day = env.vault.join("_librarian/sessions/timeline.html");
    insta::assert_snapshot!(env.here(&["timeline", "-o", day.to_str().unwrap()]));
    assert!(!day.exists());
}

#[test]
fn timeline_never_makes_a_folder() {
    let env = two_sessions();
    let page = env.root().join("no/such/folder/timeline.html");
    insta::assert_snapshot!(env.here(&["timeline", "-o", page.to_str().unwrap()]));
    assert!(!env.root().join("no").exists());
}

#[test]
fn timeline_with_a_bad_date_is_a_usage_error() {
    let env = two_sessions();
    insta::assert_snapshot!(env.here(&["timeline", "--since", "last blue moon"]));
}

#[test]
fn timeline_outside_git_says_why_the_decisions_are_unverified() {
    let env = Env::snap_bare();
    env.write("Notes/a.md", NOTE_A);
    let r = env.capture_at("2026-11-30T10:00:00.000Z", "Kept notes outside git.", &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let page = env.root().join("timeline.html");
    insta::assert_snapshot!(env.here(&["timeline", "-o", page.to_str().unwrap()]));
}
