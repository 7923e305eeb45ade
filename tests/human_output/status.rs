//! `git rutter status` (spec/status.md): in-process where it reads only the vault, spawned where
//! it reads the hook-run log of its own HOME.

use super::two_sessions;
use crate::common::*;

/// A capture by Claude Code's hook at `ts` whose payload is `payload`.
fn hook_run(env: &Env, ts: &str, payload: &[u8]) {
    let mut c = env.cmd();
    c.env("RUTTER_TIMESTAMP", ts)
        .args(["capture", "--client", "claude"]);
    let r = run_with_stdin(&mut c, payload);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn status_of_a_working_setup_has_no_findings() {
    let env = two_sessions();
    insta::assert_snapshot!(env.spawned(&["status"]));
}

#[test]
fn status_names_a_failed_hook_run_as_a_finding() {
    let env = two_sessions();
    hook_run(&env, "2026-12-01T08:30:00.000Z", b"{not json");
    insta::assert_snapshot!(env.spawned(&["status", "--utc"]));
}

#[test]
fn status_ack_runs_acknowledges_failed_runs() {
    let env = two_sessions();
    hook_run(&env, "2026-12-01T08:30:00.000Z", b"{not json");
    insta::assert_snapshot!(env.spawned(&["status", "--ack-runs"]));
}

#[test]
fn status_without_a_vault() {
    let env = Env::snap_bare();
    let r = env.rutter_in(&env.root(), &["status"]);
    insta::assert_snapshot!(env.redact(snap::Output {
        stdout: r.stdout,
        stderr: r.stderr,
        status: r.code,
    }));
}

#[test]
fn status_when_hooks_find_no_vault() {
    let env = two_sessions();
    insta::assert_snapshot!(env.here(&["status"]));
}

#[test]
fn status_of_a_vault_outside_git() {
    let env = Env::snap_bare();
    env.write("Notes/a.md", NOTE_A);
    insta::assert_snapshot!(env.here(&["status"]));
}

/// Issue 32, item 8: notes created and edited since the last reindex are information (the next
/// search reads them), not a finding: status exits 0.
#[test]
fn status_shows_an_index_behind_the_notes_without_a_finding() {
    let env = two_sessions();
    let reindexed = env.here(&["reindex"]);
    assert_eq!(reindexed.status, 0, "{reindexed}");
    // When the index was written is its file's time: put at five minutes before now.
    let written = rutter::clock::parse_instant("2026-12-01T08:55:00.000Z").unwrap();
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(written.0 as u64);
    for name in ["index.sqlite", "index.sqlite-wal"] {
        if let Ok(f) = std::fs::File::options()
            .write(true)
            .open(env.vault.join(".git/rutter").join(name))
        {
            f.set_modified(at).unwrap();
        }
    }
    env.write("Notes/c.md", "# Gamma\n\nA new note.\n");
    env.write(
        "Notes/a.md",
        "# Alpha\n\nThe alpha note, edited since the reindex.\n",
    );
    insta::assert_snapshot!(env.here(&["status"]));
}

/// Issue 32, F-2: a copy of the vault (`cp -a`) carries an index naming the original; status
/// shows it is rebuilt at its next use (no finding), and the first reader says it rebuilt it.
#[test]
fn status_of_a_copied_vault_shows_its_index_is_rebuilt_at_next_use() {
    let env = two_sessions();
    let reindexed = env.here(&["reindex"]);
    assert_eq!(reindexed.status, 0, "{reindexed}");
    let copy = env.root().join("copy");
    let cp = std::process::Command::new("cp")
        .arg("-a")
        .arg(&env.vault)
        .arg(&copy)
        .status()
        .unwrap();
    assert!(cp.success());
    insta::assert_snapshot!("copied_status", env.here_at(&copy, &["status"]));
    insta::assert_snapshot!(
        "copied_first_recent",
        env.here_at(&copy, &["recent", "-n", "1"])
    );
}

/// One note and one entry are counted in the singular (`1 notes, 1 entries` before stop 52).
#[test]
fn status_counts_one_note_and_one_entry_in_the_singular() {
    let env = Env::snap_vault();
    std::fs::remove_file(env.vault.join("Notes/b.md")).unwrap();
    let r = env.capture_at("2026-11-30T10:00:00.000Z", "Chose SQLite.", &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(env.here(&["reindex"]).status, 0);
    let shown = env.here(&["status"]).stdout;
    assert!(
        shown.contains("index:    1 note, 1 entry, updated "),
        "{shown}"
    );
}
