//! `git rutter log` (spec/verify.md, "git rutter log"), in-process.

use super::two_sessions;
use crate::common::*;

/// [`two_sessions`] with the committed "Chose SQLite" entry edited in its day file.
fn with_an_edited_entry() -> Env {
    let env = two_sessions();
    let day = env.vault.join("_librarian/sessions/2026-11-30.md");
    let text = std::fs::read_to_string(&day).unwrap();
    std::fs::write(&day, text.replace("Chose SQLite", "Chose Postgres")).unwrap();
    env
}

#[test]
fn log_lists_entries_newest_first_with_commit_and_status() {
    let env = two_sessions();
    insta::assert_snapshot!(env.here(&["log"]));
}

#[test]
fn log_patch_shows_the_line_each_commit_added() {
    let env = two_sessions();
    insta::assert_snapshot!(env.here(&["log", "-p", "-n", "1"]));
}

#[test]
fn log_of_an_empty_record() {
    let env = Env::snap_vault();
    insta::assert_snapshot!(env.here(&["log"]));
}

#[test]
fn log_of_one_entry_by_its_short_id() {
    let env = two_sessions();
    insta::assert_snapshot!(env.here(&["log", "20261130T102000"]));
}

#[test]
fn log_of_an_unknown_entry_is_exit_1() {
    let env = two_sessions();
    insta::assert_snapshot!(env.here(&["log", "20250101T000000000Z"]));
}

#[test]
fn log_of_a_short_id_two_entries_share_is_exit_1() {
    let env = Env::snap_vault();
    env.capture_at("2026-11-30T10:00:00.100Z", "One.", &[]);
    env.capture_at("2026-11-30T10:00:00.200Z", "Two.", &[]);
    insta::assert_snapshot!(env.here(&["log", "20261130T100000"]));
}

#[test]
fn log_of_a_malformed_day_is_exit_2() {
    let env = two_sessions();
    insta::assert_snapshot!(env.here(&["log", "--day", "30.11.2026"]));
}

#[test]
fn log_shows_an_edited_entry_and_its_edit() {
    let env = with_an_edited_entry();
    insta::assert_snapshot!(env.here(&["log", "-p", "--day", "2026-11-30"]));
}

#[test]
fn log_shows_a_retracted_entry_with_why() {
    let env = two_sessions();
    let r = env.here(&[
        "retract",
        "20261130T100000",
        "--reason",
        "wrong index choice",
    ]);
    assert_eq!(r.status, 0, "{r}");
    insta::assert_snapshot!(env.here(&["log", "--utc"]));
}

#[test]
fn log_marks_a_line_no_capture_wrote_unverified() {
    let env = two_sessions();
    let day = env.vault.join("_librarian/sessions/2026-11-30.md");
    let text = std::fs::read_to_string(&day).unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("Kept the schema"))
        .unwrap()
        .replace("Kept the schema in one file.", "Typed by hand.")
        .replace("20261130T102000000Z", "20261130T113000000Z")
        .replace("10:20:00", "11:30:00");
    std::fs::write(&day, format!("{text}{line}\n")).unwrap();
    insta::assert_snapshot!(env.here(&["log", "--grep", "hand"]));
}

#[test]
fn log_on_a_terminal_paints_commit_ids_and_states() {
    let env = with_an_edited_entry();
    insta::assert_snapshot!(env.here_painted(&["log", "--day", "2026-11-30"]));
}

#[test]
fn log_oneline_is_the_commit_and_the_summary_as_git_log_oneline() {
    let env = with_an_edited_entry();
    insta::assert_snapshot!(env.here(&["log", "--oneline"]));
}

#[test]
fn log_oneline_on_a_terminal_paints_the_commit_and_a_status_it_shows() {
    let env = with_an_edited_entry();
    insta::assert_snapshot!(env.here_painted(&["log", "--oneline"]));
}
