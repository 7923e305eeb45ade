//! `git rutter recent` (spec/recall.md, "What recall shows"), in-process.

use super::two_sessions;
use crate::common::*;

#[test]
fn recent_shows_sessions_newest_first_with_short_ids_and_refs() {
    let env = two_sessions();
    insta::assert_snapshot!(env.here(&["recent"]));
}

#[test]
fn recent_with_a_count_shows_that_many_sessions() {
    let env = two_sessions();
    insta::assert_snapshot!(env.here(&["recent", "-n", "1"]));
}

#[test]
fn recent_utc_shows_times_as_recorded() {
    let env = two_sessions();
    insta::assert_snapshot!(env.here(&["recent", "--utc", "--project", "myproj"]));
}

#[test]
fn recent_brief_keeps_the_first_and_last_step() {
    let env = Env::snap_vault();
    for (ts, summary) in [
        ("2026-11-30T10:00:00.000Z", "First step."),
        ("2026-11-30T10:05:00.000Z", "Middle step."),
        ("2026-11-30T10:10:00.000Z", "Last step."),
    ] {
        env.capture_at(ts, summary, &[]);
    }
    insta::assert_snapshot!(env.here(&["recent", "--brief"]));
}

#[test]
fn recent_of_an_empty_record_says_so() {
    let env = Env::snap_vault();
    insta::assert_snapshot!(env.here(&["recent"]));
}

#[test]
fn recent_grep_that_matches_nothing() {
    let env = two_sessions();
    insta::assert_snapshot!(env.here(&["recent", "--grep", "postgres"]));
}

#[test]
fn recent_with_a_bad_date_is_a_usage_error() {
    let env = two_sessions();
    insta::assert_snapshot!(env.here(&["recent", "--since", "last blue moon"]));
}

#[test]
fn recent_outside_git_reads_the_day_files_and_says_why_unverified() {
    let env = Env::snap_bare();
    env.write("Notes/a.md", NOTE_A);
    let r = env.capture_at("2026-11-30T10:00:00.000Z", "Kept notes outside git.", &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    insta::assert_snapshot!(env.here(&["recent"]));
}

#[test]
fn recent_marks_an_edited_step_with_its_committed_text() {
    let env = two_sessions();
    let day = env.vault.join("_librarian/sessions/2026-11-30.md");
    let text = std::fs::read_to_string(&day).unwrap();
    std::fs::write(&day, text.replace("Chose SQLite", "Chose Postgres")).unwrap();
    insta::assert_snapshot!(env.here(&["recent", "-n", "2"]));
}

#[test]
fn recent_marks_steps_of_a_deleted_day_file_and_says_how_to_restore() {
    let env = two_sessions();
    std::fs::remove_file(env.vault.join("_librarian/sessions/2026-11-30.md")).unwrap();
    insta::assert_snapshot!(env.here(&["recent"]));
}

#[test]
fn recent_all_prints_every_session() {
    let env = two_sessions();
    insta::assert_snapshot!(env.here(&["recent", "--all"]));
}

#[test]
fn recent_of_one_client() {
    let env = two_sessions();
    insta::assert_snapshot!(env.here(&["recent", "--client", "Claude"]));
}

#[test]
fn recent_shows_a_renamed_note_where_it_is_now() {
    let env = two_sessions();
    env.git(&["mv", "Notes/a.md", "Notes/alpha.md"]);
    env.git(&["commit", "-qm", "rename"]);
    let reindexed = env.here(&["reindex"]);
    assert_eq!(reindexed.status, 0, "{reindexed}");
    insta::assert_snapshot!(env.here(&["recent", "--grep", "schema"]));
}
