//! `git rutter install-git-hooks` with real git and real hooks: what the hooks refuse, what
//! they let through without starting the binary, how they live beside the user's own hooks,
//! and how they fail open (spec/git-hooks.md).

use crate::common;
use common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

const DAY: &str = "_librarian/sessions/2026-11-30.md";

/// A vault with two committed entries on one day.
fn vault() -> Env {
    let env = Env::git_vault();
    for (i, s) in ["First decision.", "Second decision."].iter().enumerate() {
        let r = capture(&env, i, s);
        assert!(r.stderr.contains("committed"), "{}", r.stderr);
    }
    env
}

fn capture(env: &Env, minute: usize, summary: &str) -> Run {
    let ts = format!("2026-11-30T10:{minute:02}:00.000Z");
    env.capture_at(&ts, summary, &["Notes/a.md"])
}

/// The vault with the hooks installed.
fn hooked() -> Env {
    let env = vault();
    let r = env.rutter(&["install-git-hooks"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    env
}

fn hook_path(env: &Env, name: &str) -> PathBuf {
    env.vault.join(".git/hooks").join(name)
}

fn canonical_bin() -> String {
    std::fs::canonicalize(BIN).unwrap().display().to_string()
}

/// Points both installed blocks at `bin` instead of the real binary.
fn repoint(env: &Env, dir: &Path, bin: &str) {
    for name in ["pre-commit", "reference-transaction"] {
        let p = dir.join(name);
        let text = std::fs::read_to_string(&p).unwrap();
        let from = format!("'{}'", canonical_bin());
        assert!(text.contains(&from), "{text}");
        std::fs::write(&p, text.replace(&from, &format!("'{bin}'"))).unwrap();
    }
    let _ = env;
}

/// Wraps the binary in a script that logs each call to `spy.log`; returns the log path.
fn spy(env: &Env) -> PathBuf {
    let log = env.root().join("spy.log");
    let script = env.root().join("spy");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            canonical_bin()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    repoint(
        env,
        &env.vault.join(".git/hooks"),
        &script.display().to_string(),
    );
    log
}

/// Tracks the record files on the user's branch (the user chose to, with `git add -f`).
fn track_records(env: &Env) {
    env.git(&["add", "-f", "_librarian"]);
    env.git(&["commit", "-qm", "track records"]);
}

fn edit(env: &Env, from: &str, to: &str) {
    let text = env.read(DAY);
    assert!(text.contains(from));
    env.write(DAY, &text.replacen(from, to, 1));
}

fn head(env: &Env) -> String {
    env.git(&["rev-parse", "HEAD"])
}

fn tip(env: &Env) -> String {
    env.git(&["rev-parse", "refs/rutter/records"])
}

#[test]
fn install_writes_the_shipped_blocks_once() {
    let env = vault();
    let r = env.rutter(&["install-git-hooks"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("pre-commit: created .git/hooks/pre-commit"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("reference-transaction: created"),
        "{}",
        r.stdout
    );
    for name in ["pre-commit", "reference-transaction"] {
        let shipped = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("git-hooks")
                .join(name),
        )
        .unwrap();
        let want = shipped.replace("@GIT_RUTTER_BIN@", &format!("'{}'", canonical_bin()));
        let p = hook_path(&env, name);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), want, "{name}");
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o755, "{name}");
    }
    let before = std::fs::read(hook_path(&env, "pre-commit")).unwrap();
    let r = env.rutter(&["install-git-hooks"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("is up to date"), "{}", r.stdout);
    assert_eq!(
        std::fs::read(hook_path(&env, "pre-commit")).unwrap(),
        before
    );
    let r = env.rutter(&["install-git-hooks", "--uninstall"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("it held only the git-rutter block"),
        "{}",
        r.stdout
    );
    assert!(!exists(&hook_path(&env, "pre-commit")));
    assert!(!exists(&hook_path(&env, "reference-transaction")));
}

#[test]
fn unrelated_commits_and_ref_updates_never_start_the_binary() {
    let env = hooked();
    let log = spy(&env);
    env.write("Notes/c.md", "# C\n");
    env.git(&["add", "Notes/c.md"]);
    env.git(&["commit", "-qm", "a note"]);
    env.git(&["branch", "side"]);
    env.git(&["tag", "v1"]);
    env.git(&["update-ref", "refs/heads/other", "HEAD"]);
    env.git(&["update-ref", "-d", "refs/heads/other"]);
    assert!(!exists(&log), "{}", std::fs::read_to_string(&log).unwrap());
    track_records(&env);
    let calls = std::fs::read_to_string(&log).unwrap();
    assert_eq!(calls, "hook pre-commit staged\n");
}

#[test]
fn an_edited_committed_record_is_refused_and_appending_is_allowed() {
    let env = hooked();
    track_records(&env);
    let mut text = env.read(DAY);
    text.push_str("A line of my own, appended.\n");
    env.write(DAY, &text);
    env.git(&["add", "-f", DAY]);
    env.git(&["commit", "-qm", "append"]);

    edit(&env, "Second decision.", "Second decision, revised.");
    let before = head(&env);
    for args in [
        &["commit", "-qam", "edit"][..],
        &["commit", "-qm", "edit", "--", DAY],
    ] {
        let r = env.git_with(args, &[]);
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains("commit refused"), "{}", r.stderr);
        assert!(r.stderr.contains(DAY), "{}", r.stderr);
        assert!(
            r.stderr.contains("entry 20261130T100100000Z"),
            "{}",
            r.stderr
        );
        assert!(r.stderr.contains("git commit --no-verify"), "{}", r.stderr);
        assert!(r.stderr.contains("git rutter restore"), "{}", r.stderr);
        assert_eq!(head(&env), before);
    }
    env.git(&["add", "-f", DAY]);
    assert_eq!(env.git_with(&["commit", "-qm", "edit"], &[]).code, 1);
    assert_eq!(head(&env), before);
    env.git(&["commit", "-qm", "edit anyway", "--no-verify"]);
    assert_ne!(head(&env), before);
}

#[test]
fn deleting_a_committed_record_file_is_refused() {
    let env = hooked();
    track_records(&env);
    env.git(&["rm", "-q", "--cached", DAY]);
    let r = env.git_with(&["commit", "-qm", "drop"], &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!("{DAY}: deleted")),
        "{}",
        r.stderr
    );
}

#[test]
fn rewinding_or_deleting_the_ref_is_refused_unless_allowed() {
    let env = hooked();
    let top = tip(&env);
    let r = env.git_with(
        &["update-ref", "refs/rutter/records", "refs/rutter/records~1"],
        &[],
    );
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("refused to move refs/rutter/records"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("RUTTER_ALLOW_REWIND=1"), "{}", r.stderr);
    assert_eq!(tip(&env), top);

    let r = env.git_with(&["update-ref", "-d", "refs/rutter/records"], &[]);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("refused to delete refs/rutter/records"),
        "{}",
        r.stderr
    );
    assert_eq!(tip(&env), top);

    let allow = [("RUTTER_ALLOW_REWIND", "1")];
    let r = env.git_with(
        &["update-ref", "refs/rutter/records", "refs/rutter/records~1"],
        &allow,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("RUTTER_ALLOW_REWIND=1: allowed"),
        "{}",
        r.stderr
    );
    assert_ne!(tip(&env), top);

    // Forward again with git itself: a fast-forward needs no override.
    let r = env.git_with(&["update-ref", "refs/rutter/records", top.trim()], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(tip(&env), top);
}

#[test]
fn capture_and_maintenance_still_work_with_the_hooks() {
    let env = hooked();
    let before = tip(&env);
    let r = capture(&env, 5, "Third decision.");
    assert!(r.stderr.contains("committed"), "{}", r.stderr);
    assert_ne!(tip(&env), before);
    for args in [&["pack-refs", "--all"][..], &["gc", "-q"]] {
        let r = env.git_with(args, &[]);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert!(!r.stderr.contains("refused"), "{args:?}: {}", r.stderr);
        // The loose copy was pruned: the hook let git pack-refs delete it.
        assert!(!exists(&env.vault.join(".git/refs/rutter/records")));
    }
    let r = capture(&env, 6, "Fourth decision.");
    assert!(r.stderr.contains("committed"), "{}", r.stderr);
    assert_eq!(env.rutter(&["verify", "--full"]).code, 0);
}

#[test]
fn existing_hooks_are_kept_run_after_the_block_and_read_the_same_stdin() {
    let env = vault();
    let user_pre = "#!/bin/sh\n# my checks\necho pre >> .git/user-pre.log\n";
    let user_rt = "#!/bin/sh\n{ echo \"== $1\"; cat; } >> .git/user-rt.log\n";
    for (name, text) in [("pre-commit", user_pre), ("reference-transaction", user_rt)] {
        std::fs::write(hook_path(&env, name), text).unwrap();
        let p = std::fs::Permissions::from_mode(0o755);
        std::fs::set_permissions(hook_path(&env, name), p).unwrap();
    }
    let r = env.rutter(&["install-git-hooks"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("added the git-rutter block"),
        "{}",
        r.stdout
    );
    let installed = std::fs::read_to_string(hook_path(&env, "pre-commit")).unwrap();
    assert!(
        installed.starts_with("#!/bin/sh\n# >>> git-rutter START"),
        "{installed}"
    );
    assert!(installed
        .ends_with("# <<< git-rutter END <<<\n# my checks\necho pre >> .git/user-pre.log\n"));
    let twice = env.rutter(&["install-git-hooks"]);
    assert!(twice.stdout.contains("is up to date"), "{}", twice.stdout);
    assert_eq!(
        std::fs::read_to_string(hook_path(&env, "pre-commit")).unwrap(),
        installed
    );

    track_records(&env);
    let old = tip(&env);
    capture(&env, 7, "Third decision.");
    let new = tip(&env);
    let (old, new) = (old.trim(), new.trim());
    let rewind = ["update-ref", "refs/rutter/records", old, new];
    env.git_with(&rewind, &[("RUTTER_ALLOW_REWIND", "1")]);
    env.git(&["update-ref", "refs/rutter/records", new, old]);
    assert_eq!(env.read(".git/user-pre.log"), "pre\n");
    let rt = env.read(".git/user-rt.log");
    let blocks: Vec<&str> = rt.split("== ").filter(|b| !b.is_empty()).collect();
    let forward = format!("{old} {new} refs/rutter/records\n");
    assert!(
        blocks.contains(&format!("prepared\n{forward}").as_str()),
        "{rt}"
    );
    assert!(
        blocks.contains(&format!("committed\n{forward}").as_str()),
        "{rt}"
    );
    let prepared = blocks
        .iter()
        .filter(|b| b.starts_with("prepared\n"))
        .count();
    let committed = blocks
        .iter()
        .filter(|b| b.starts_with("committed\n"))
        .count();
    assert_eq!(prepared, committed, "{rt}");
    for b in blocks.iter().filter(|b| b.starts_with("prepared\n")) {
        let twin = b.replacen("prepared", "committed", 1);
        assert!(
            blocks.contains(&twin.as_str()),
            "{b:?} has no committed twin in {rt}"
        );
    }

    let r = env.rutter(&["install-git-hooks", "--uninstall"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(hook_path(&env, "pre-commit")).unwrap(),
        user_pre
    );
    let rt_hook = std::fs::read_to_string(hook_path(&env, "reference-transaction")).unwrap();
    assert_eq!(rt_hook, user_rt);
}

#[test]
fn core_hooks_path_is_respected() {
    let env = vault();
    env.git(&["config", "core.hooksPath", ".githooks"]);
    let r = env.rutter(&["install-git-hooks"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("created .githooks/pre-commit"),
        "{}",
        r.stdout
    );
    assert!(exists(&env.vault.join(".githooks/reference-transaction")));
    assert!(!exists(&hook_path(&env, "pre-commit")));
    let r = env.git_with(&["update-ref", "-d", "refs/rutter/records"], &[]);
    assert_ne!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("refused to delete"), "{}", r.stderr);

    let shared = env.root().join("shared-hooks");
    env.git(&["config", "core.hooksPath", &shared.display().to_string()]);
    let r = env.rutter(&["install-git-hooks"]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stderr.contains("lies outside this repository"),
        "{}",
        r.stderr
    );
    assert!(!exists(&shared));
}

#[test]
fn a_missing_binary_fails_open_with_a_warning() {
    let env = hooked();
    let gone = env.root().join("moved-away/git-rutter");
    repoint(
        &env,
        &env.vault.join(".git/hooks"),
        &gone.display().to_string(),
    );
    track_records(&env);
    edit(&env, "Second decision.", "Second decision, revised.");
    let r = env.git_with(&["commit", "-qam", "edit"], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("is not executable; records not checked"),
        "{}",
        r.stderr
    );
    let r = env.git_with(
        &["update-ref", "refs/rutter/records", "refs/rutter/records~1"],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("refs/rutter/records not checked"),
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
}

#[test]
fn symlinked_hooks_are_followed_inside_the_repository_only() {
    let env = vault();
    let inside = env.vault.join("tools/pre-commit");
    env.write("tools/pre-commit", "#!/bin/sh\necho mine\n");
    std::fs::set_permissions(&inside, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink(&inside, hook_path(&env, "pre-commit")).unwrap();
    let outside = env.root().join("shared-reference-transaction");
    std::fs::write(&outside, "#!/bin/sh\necho shared\n").unwrap();
    std::os::unix::fs::symlink(&outside, hook_path(&env, "reference-transaction")).unwrap();

    let r = env.rutter(&["install-git-hooks"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout.contains("pre-commit: added the git-rutter block"),
        "{}",
        r.stdout
    );
    assert!(r.stderr.contains("outside this repository"), "{}", r.stderr);
    let meta = std::fs::symlink_metadata(hook_path(&env, "pre-commit")).unwrap();
    assert!(meta.file_type().is_symlink());
    assert!(env
        .read("tools/pre-commit")
        .contains("# >>> git-rutter START"));
    assert_eq!(
        std::fs::read_to_string(&outside).unwrap(),
        "#!/bin/sh\necho shared\n"
    );
}

#[test]
fn hooks_the_block_cannot_join_are_left_alone() {
    let env = vault();
    let python = "#!/usr/bin/env python3\nprint('mine')\n";
    std::fs::write(hook_path(&env, "pre-commit"), python).unwrap();
    let p = std::fs::Permissions::from_mode(0o755);
    std::fs::set_permissions(hook_path(&env, "pre-commit"), p).unwrap();
    std::fs::write(
        hook_path(&env, "reference-transaction"),
        "#!/bin/sh\nexit 1\n",
    )
    .unwrap();
    let p = std::fs::Permissions::from_mode(0o644);
    std::fs::set_permissions(hook_path(&env, "reference-transaction"), p).unwrap();
    let r = env.rutter(&["install-git-hooks"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("not a POSIX shell"), "{}", r.stderr);
    assert!(
        r.stderr.contains("not executable, so git ignores it"),
        "{}",
        r.stderr
    );
    assert_eq!(
        std::fs::read_to_string(hook_path(&env, "pre-commit")).unwrap(),
        python
    );
}

#[test]
fn the_hook_command_fails_open_and_stays_hidden() {
    let env = vault();
    let elsewhere = env.root().join("not-a-repo");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let mut c = env.cmd();
    c.current_dir(&elsewhere)
        .env("GIT_CEILING_DIRECTORIES", env.root());
    let r = run_with_stdin(c.args(["hook", "pre-commit"]), b"");
    assert_eq!(r.code, 0);
    assert!(r.stderr.contains("could not check"), "{}", r.stderr);
    let mut c = env.cmd();
    let r = run_with_stdin(
        c.args(["hook", "reference-transaction", "prepared"]),
        b"not hex refs/rutter/records\n",
    );
    assert_eq!(r.code, 0);
    assert!(r.stderr.contains("could not check"), "{}", r.stderr);
    let help = env.rutter(&["--help"]);
    assert!(help.stdout.contains("install-git-hooks"), "{}", help.stdout);
    assert!(!help.stdout.contains("\n  hook "), "{}", help.stdout);
}

/// The pre-commit block as `install-git-hooks` wrote it before it named cited notes (the
/// shipped template of that version, byte for byte; `benches/hooks.rs` measures against it).
const PRE_COMMIT_BEFORE_CITED: &str = include_str!("fixtures/git-hooks/pre-commit-before-cited");

/// `git commit -qam MESSAGE` through the hooks (vault in LIBRARIAN_VAULT_PATH, as hooks see
/// it); may fail.
fn commit_all(env: &Env, message: &str) -> Run {
    env.git_with(&["commit", "-qam", message], &[])
}

/// The vault with the hooks installed and an index that has read the record (as any recall
/// command leaves one).
fn hooked_and_indexed() -> Env {
    let env = hooked();
    let r = env.rutter(&["reindex"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    env
}

#[test]
fn a_commit_that_changes_a_cited_note_says_so_in_one_line_and_goes_ahead() {
    let env = hooked_and_indexed();
    let line = "git-rutter: this commit changes Notes/a.md, which recorded decisions cited (`git rutter cited-by Notes/a.md` lists them).\n";
    env.write("Notes/a.md", &format!("{NOTE_A}Edited.\n"));
    let before = head(&env);
    let r = commit_all(&env, "edit a cited note");
    assert_eq!((r.code, r.stderr.as_str()), (0, line));
    assert_ne!(head(&env), before, "never blocks");

    // A note no decision cited: nothing said.
    env.write("Notes/b.md", &format!("{NOTE_B}Edited.\n"));
    let r = commit_all(&env, "edit an uncited note");
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));

    // A decision captured after the index last read the record counts at once.
    let r = env.capture_at("2026-11-30T11:00:00.000Z", "Cited beta.", &["Notes/b.md"]);
    assert!(r.stderr.contains("committed"), "{}", r.stderr);
    env.write("Notes/b.md", &format!("{NOTE_B}Edited twice.\n"));
    env.write("Notes/a.md", &format!("{NOTE_A}Edited twice.\n"));
    let r = commit_all(&env, "edit both");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stderr,
        "git-rutter: this commit changes 2 notes that recorded decisions cited: Notes/a.md, Notes/b.md (`git rutter cited-by PATH` lists them).\n"
    );

    // A rename changes the cited path; adding a note never starts the check.
    env.git(&["mv", "Notes/a.md", "Notes/alpha.md"]);
    env.write("Notes/new.md", "# New\n");
    env.git(&["add", "Notes/new.md"]);
    let r = commit_all(&env, "rename");
    assert_eq!((r.code, r.stderr.as_str()), (0, line));

    // Without an index there is nothing to ask: the commit goes ahead, silently.
    std::fs::remove_file(env.vault.join(".git/rutter/index.sqlite")).unwrap();
    env.write("Notes/b.md", NOTE_B);
    let r = commit_all(&env, "no index");
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert!(
        !exists(&env.vault.join(".git/rutter/index.sqlite")),
        "the hook builds no index"
    );
}

#[test]
fn a_refused_record_edit_stays_refused_beside_a_cited_note() {
    let env = hooked_and_indexed();
    track_records(&env);
    edit(&env, "Second decision.", "Second decision, revised.");
    env.write("Notes/a.md", &format!("{NOTE_A}Edited.\n"));
    env.git(&["add", "-f", DAY]);
    let before = head(&env);
    let r = commit_all(&env, "edit both");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("commit refused"), "{}", r.stderr);
    assert!(
        !r.stderr.contains("recorded decisions cited"),
        "{}",
        r.stderr
    );
    assert_eq!(head(&env), before);
}

#[test]
fn a_block_installed_before_keeps_working_and_installing_again_updates_it() {
    let env = vault();
    let r = env.rutter(&["reindex"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let pre_commit = hook_path(&env, "pre-commit");
    let old =
        PRE_COMMIT_BEFORE_CITED.replace("@GIT_RUTTER_BIN@", &format!("'{}'", canonical_bin()));
    std::fs::create_dir_all(pre_commit.parent().unwrap()).unwrap();
    std::fs::write(&pre_commit, &old).unwrap();
    std::fs::set_permissions(&pre_commit, std::fs::Permissions::from_mode(0o755)).unwrap();
    // The old block still refuses an edited record, and says nothing of notes.
    track_records(&env);
    env.write("Notes/a.md", &format!("{NOTE_A}Edited.\n"));
    let r = commit_all(&env, "edit a cited note");
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    edit(&env, "Second decision.", "Second decision, revised.");
    env.git(&["add", "-f", DAY]);
    let r = commit_all(&env, "edit a record");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("commit refused"), "{}", r.stderr);
    env.git(&["checkout", "HEAD", "--", DAY]);

    let r = env.rutter(&["install-git-hooks"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("pre-commit: updated the git-rutter block in"),
        "{}",
        r.stdout
    );
    let shipped =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("git-hooks/pre-commit"))
            .unwrap();
    assert_eq!(
        std::fs::read_to_string(&pre_commit).unwrap(),
        shipped.replace("@GIT_RUTTER_BIN@", &format!("'{}'", canonical_bin()))
    );
    env.write("Notes/a.md", &format!("{NOTE_A}Edited again.\n"));
    let r = commit_all(&env, "edit a cited note again");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("this commit changes Notes/a.md"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_commit_of_many_notes_reads_the_first_500_and_retracted_decisions_do_not_count() {
    let env = hooked();
    for i in 0..520 {
        env.write(&format!("Notes/bulk/n{i:03}.md"), &format!("# N{i}\n"));
    }
    env.git(&["add", "Notes/bulk"]);
    assert_eq!(commit_all(&env, "many notes").code, 0);
    for (minute, note) in [(20, "n007"), (21, "n008"), (22, "n510")] {
        let ts = format!("2026-11-30T10:{minute}:00.000Z");
        let r = env.capture_at(
            &ts,
            &format!("Cited {note}."),
            &[&format!("Notes/bulk/{note}.md")],
        );
        assert!(r.stderr.contains("committed"), "{}", r.stderr);
    }
    let r = env.rutter(&["retract", "20261130T102000", "--reason", "Not a decision."]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(env.rutter(&["reindex"]).code, 0);

    // Only a retracted decision cited this note.
    env.write("Notes/bulk/n007.md", "# N7, edited\n");
    let r = commit_all(&env, "edit n007");
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    // 521 notes changed: git's list is cut, and the line says what it read (Notes/a.md, then
    // n000 to n498; n510 lies beyond).
    for i in 0..520 {
        env.write(
            &format!("Notes/bulk/n{i:03}.md"),
            &format!("# N{i}, edited again\n"),
        );
    }
    env.write("Notes/a.md", &format!("{NOTE_A}Edited.\n"));
    let r = commit_all(&env, "edit everything");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stderr,
        "git-rutter: this commit changes at least 2 notes that recorded decisions cited (only the first 500 staged changes were read): Notes/a.md, Notes/bulk/n008.md (`git rutter cited-by PATH` lists them).\n"
    );
    // An edited record that sorts after the cut is still refused.
    track_records(&env);
    edit(&env, "Second decision.", "Second decision, revised.");
    for i in 0..520 {
        env.write(
            &format!("Notes/bulk/n{i:03}.md"),
            &format!("# N{i}, edited a third time\n"),
        );
    }
    let before = head(&env);
    let r = commit_all(&env, "edit everything and a record");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("commit refused") && r.stderr.contains(DAY),
        "{}",
        r.stderr
    );
    assert_eq!(head(&env), before);
}
