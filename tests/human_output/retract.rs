//! `git rutter retract` (spec/recall.md, "Retraction"), in-process: the line it prints, its
//! JSON, and each refusal with its hint.

use super::two_sessions;
use crate::common::*;

#[test]
fn retract_prints_what_it_retracted_and_where_it_is_recorded() {
    let env = two_sessions();
    insta::assert_snapshot!(env.here(&["retract", "20261130T100000", "--reason", "wrong choice"]));
}

#[test]
fn retract_json() {
    let env = two_sessions();
    insta::assert_snapshot!(env.here(&[
        "retract",
        "20261130T100000000Z",
        "--reason",
        "wrong choice",
        "--json"
    ]));
}

#[test]
fn retract_of_what_is_not_an_entry_id() {
    let env = two_sessions();
    insta::assert_snapshot!(env.here(&["retract", "yesterday", "--reason", "x"]));
}

#[test]
fn retract_of_an_id_no_entry_has() {
    let env = two_sessions();
    insta::assert_snapshot!(env.here(&["retract", "20250101T000000", "--reason", "x"]));
}

#[test]
fn retract_of_a_short_id_two_entries_share() {
    let env = Env::snap_vault();
    env.capture_at("2026-11-30T10:00:00.100Z", "One.", &[]);
    env.capture_at("2026-11-30T10:00:00.200Z", "Two.", &[]);
    insta::assert_snapshot!(env.here(&["retract", "20261130T100000", "--reason", "x"]));
}

#[test]
fn retract_twice_changes_nothing_the_second_time() {
    let env = two_sessions();
    let first = env.here(&["retract", "20261130T100000", "--reason", "wrong choice"]);
    assert_eq!(first.status, 0, "{first}");
    insta::assert_snapshot!(env.here(&["retract", "20261130T100000", "--reason", "again"]));
}

#[test]
fn retract_with_an_empty_reason_is_a_usage_error() {
    let env = two_sessions();
    insta::assert_snapshot!(env.here(&["retract", "20261130T100000", "--reason", "  "]));
}

#[test]
fn retract_of_an_unverified_line_is_refused() {
    let env = super::with_a_hand_typed_line();
    insta::assert_snapshot!(env.here(&["retract", "20261130T113000000Z", "--reason", "x"]));
}

#[test]
fn retract_outside_git_cannot_run() {
    let env = Env::snap_bare();
    env.write("Notes/a.md", NOTE_A);
    env.capture_at("2026-11-30T10:00:00.000Z", "Kept notes outside git.", &[]);
    insta::assert_snapshot!(env.here(&["retract", "20261130T100000", "--reason", "x"]));
}

#[test]
fn retract_into_an_edited_day_file_keeps_the_committed_bytes_and_says_so() {
    let env = two_sessions();
    let today = "_librarian/sessions/2026-12-01.md";
    let text = env.read(today);
    env.write(today, &text.replace("Moved the docs", "Moved all docs"));
    insta::assert_snapshot!(env.here(&[
        "retract",
        "20261130T100000",
        "--reason",
        "wrong choice",
        "--json"
    ]));
}
