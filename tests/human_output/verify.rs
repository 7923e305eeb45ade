//! `git rutter verify` (spec/verify.md), in-process: the clean line, each finding's block, the
//! verdict and its hint, `--porcelain`, `--json`, `--ack`.

use super::two_sessions;
use crate::common::*;

const DAY: &str = "_librarian/sessions/2026-11-30.md";

/// `two_sessions` with the first summary edited in its day file after it was committed.
fn edited() -> Env {
    let env = two_sessions();
    let text = env.read(DAY);
    env.write(DAY, &text.replace("Chose SQLite", "Chose Postgres"));
    env
}

#[test]
fn verify_clean_says_what_it_checked() {
    let env = two_sessions();
    insta::assert_snapshot!(env.here(&["verify"]));
}

#[test]
fn verify_again_says_there_is_no_new_commit() {
    let env = two_sessions();
    assert_eq!(env.here(&["verify"]).status, 0);
    insta::assert_snapshot!(env.here(&["verify"]));
}

#[test]
fn verify_full_counts_every_commit() {
    let env = two_sessions();
    assert_eq!(env.here(&["verify"]).status, 0);
    insta::assert_snapshot!(env.here(&["verify", "--full"]));
}

#[test]
fn verify_names_an_edited_entry_with_its_commit_and_diff() {
    let env = edited();
    insta::assert_snapshot!(env.here(&["verify"]));
}

#[test]
fn verify_porcelain_is_one_line_per_finding() {
    let env = edited();
    insta::assert_snapshot!(env.here(&["verify", "--porcelain"]));
}

#[test]
fn verify_json_carries_the_hint_of_its_findings() {
    let env = edited();
    insta::assert_snapshot!(env.here(&["verify", "--json"]));
}

#[test]
fn verify_ack_commits_the_acknowledgement_and_the_finding_stops_failing() {
    let env = edited();
    let id = "edited:_librarian/sessions/2026-11-30.md:20261130T100000000Z";
    let porcelain = env.here(&["verify", "--porcelain"]);
    assert!(porcelain.stdout.contains(id), "{porcelain}");
    let acked = env.here(&["verify", "--ack", id, "--reason", "typo fixed by hand"]);
    let after = env.here(&["verify"]);
    insta::assert_snapshot!(format!("{acked}{after}"));
}

#[test]
fn verify_names_a_deleted_day_file() {
    let env = two_sessions();
    std::fs::remove_file(env.vault.join(DAY)).unwrap();
    insta::assert_snapshot!(env.here(&["verify"]));
}

#[test]
fn verify_names_a_line_no_capture_wrote() {
    let env = super::with_a_hand_typed_line();
    insta::assert_snapshot!(env.here(&["verify"]));
}

#[test]
fn verify_finds_a_rewritten_history() {
    let env = two_sessions();
    let committed = env.committed(DAY);
    let forged = committed.replace("Chose SQLite", "Chose Postgres");
    Forged {
        writes: &[(&in_ref(DAY), &forged)],
        message: "rutter: capture 2026-11-30",
        why: "looks like a capture",
        ..Default::default()
    }
    .commit(&env);
    env.write(DAY, &forged);
    insta::assert_snapshot!(env.here(&["verify"]));
}

#[test]
fn verify_outside_git_cannot_run() {
    let env = Env::snap_bare();
    env.write("Notes/a.md", NOTE_A);
    insta::assert_snapshot!(env.here(&["verify"]));
}

#[test]
fn verify_on_a_terminal_paints_the_verdict_and_findings() {
    let env = edited();
    insta::assert_snapshot!(env.here_painted(&["verify"]));
}
