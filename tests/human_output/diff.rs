//! `git rutter diff` (spec/verify.md, "git rutter diff"), in-process.

use super::two_sessions;

const DAY: &str = "_librarian/sessions/2026-11-30.md";

#[test]
fn diff_without_differences_says_so_on_stderr() {
    let env = two_sessions();
    insta::assert_snapshot!(env.here(&["diff"]));
}

#[test]
fn diff_shows_an_edit_and_exits_0() {
    let env = two_sessions();
    let text = env.read(DAY);
    env.write(DAY, &text.replace("Chose SQLite", "Chose Postgres"));
    insta::assert_snapshot!(env.here(&["diff"]));
}

#[test]
fn diff_exit_code_is_1_when_something_differs() {
    let env = two_sessions();
    let text = env.read(DAY);
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !l.contains("Kept the schema"))
        .collect();
    env.write(DAY, &format!("{}\n", kept.join("\n")));
    insta::assert_snapshot!(env.here(&["diff", "--exit-code"]));
}

#[test]
fn diff_shows_a_deleted_day_file() {
    let env = two_sessions();
    std::fs::remove_file(env.vault.join("_librarian/sessions/2026-12-01.md")).unwrap();
    insta::assert_snapshot!(env.here(&["diff"]));
}

#[test]
fn diff_shows_a_record_file_not_committed_yet_as_new() {
    let env = two_sessions();
    let text = env.read("_librarian/sessions/2026-12-01.md");
    let line = text
        .lines()
        .find(|l| l.contains("rutter:entry"))
        .unwrap()
        .replace("Moved the docs to one folder.", "Typed into a new day.")
        .replace("20261201T080000000Z", "20261202T080000000Z")
        .replace("2026-12-01T08:00", "2026-12-02T08:00");
    let header: Vec<&str> = text
        .lines()
        .take_while(|l| !l.contains("rutter:entry"))
        .collect();
    let header = header.join("\n").replace("2026-12-01", "2026-12-02");
    env.write(
        "_librarian/sessions/2026-12-02.md",
        &format!("{header}\n{line}\n"),
    );
    insta::assert_snapshot!(env.here(&["diff"]));
}
