//! `git rutter sync` (spec/sync.md), in-process: the refusals that say what to run, and what a
//! setup, a fast-forward and a merge report. Two machines share a bare remote in the run's
//! temporary folder; their writer ids are written beforehand, so file names are the same on
//! every run.

use super::two_sessions;
use crate::common::*;
use std::path::{Path, PathBuf};

/// The first machine (`two_sessions`'s vault, writer `laptop-0001`) with `origin`, a bare
/// remote holding its notes branch and no records yet.
fn with_remote() -> (Env, PathBuf) {
    let env = two_sessions();
    let remote = env.root().join("remote.git");
    env.git(&["clone", "-q", "--bare", ".", remote.to_str().unwrap()]);
    env.git(&["remote", "add", "origin", remote.to_str().unwrap()]);
    std::fs::write(env.vault.join(".git/rutter/machine"), "laptop-0001\n").unwrap();
    (env, remote)
}

/// A second machine (writer `desktop-0002`) cloned from `remote` after the first pushed,
/// prepared with `init` and set up for sync.
fn second_machine(env: &Env, remote: &Path) -> PathBuf {
    let dir = env.root().join("desktop");
    env.git(&[
        "clone",
        "-q",
        remote.to_str().unwrap(),
        dir.to_str().unwrap(),
    ]);
    let init = env.here_at(&dir, &["init"]);
    assert_eq!(init.status, 0, "{init}");
    std::fs::write(dir.join(".git/rutter/machine"), "desktop-0002\n").unwrap();
    let setup = env.here_at(&dir, &["sync", "--setup", "origin"]);
    assert_eq!(setup.status, 0, "{setup}");
    dir
}

/// A manual capture into the vault `dir` at `ts`.
fn capture_into(env: &Env, dir: &Path, ts: &str, summary: &str) {
    let mut c = env.cmd();
    c.env("LIBRARIAN_VAULT_PATH", dir)
        .env("RUTTER_TIMESTAMP", ts)
        .current_dir(dir)
        .args(["capture", "--summary", summary, "--session", "S"]);
    let r = run_with_stdin(&mut c, b"");
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn sync_without_a_remote_says_how_to_set_one_up() {
    let env = two_sessions();
    insta::assert_snapshot!(env.here(&["sync"]));
}

#[test]
fn sync_with_a_remote_the_vault_does_not_have() {
    let env = two_sessions();
    insta::assert_snapshot!(env.here(&["sync", "backup"]));
}

#[test]
fn sync_with_a_remote_not_set_up_for_rutter() {
    let (env, _) = with_remote();
    insta::assert_snapshot!(env.here(&["sync", "origin"]));
}

#[test]
fn sync_of_a_vault_without_records() {
    let env = Env::snap_bare();
    env.write("Notes/a.md", NOTE_A);
    env.git(&["init", "-q", "-b", "main"]);
    let remote = env.root().join("remote.git");
    env.git(&["init", "-q", "--bare", remote.to_str().unwrap()]);
    env.git(&["remote", "add", "origin", remote.to_str().unwrap()]);
    insta::assert_snapshot!(env.here(&["sync", "--setup", "origin"]));
}

#[test]
fn sync_setup_sends_the_records_to_an_empty_remote() {
    let (env, _) = with_remote();
    insta::assert_snapshot!(env.here(&["sync", "--setup", "origin"]));
}

#[test]
fn sync_again_is_up_to_date() {
    let (env, _) = with_remote();
    assert_eq!(env.here(&["sync", "--setup", "origin"]).status, 0);
    insta::assert_snapshot!(env.here(&["sync"]));
}

#[test]
fn sync_takes_in_what_only_the_remote_has_as_a_fast_forward() {
    let (env, remote) = with_remote();
    assert_eq!(env.here(&["sync", "--setup", "origin"]).status, 0);
    let desktop = second_machine(&env, &remote);
    capture_into(
        &env,
        &desktop,
        "2026-12-01T08:30:00.000Z",
        "Decided on the desktop.",
    );
    assert_eq!(env.here_at(&desktop, &["sync"]).status, 0);
    insta::assert_snapshot!(env.here(&["sync"]));
}

#[test]
fn sync_merges_when_both_machines_added_entries() {
    let (env, remote) = with_remote();
    assert_eq!(env.here(&["sync", "--setup", "origin"]).status, 0);
    let desktop = second_machine(&env, &remote);
    capture_into(
        &env,
        &desktop,
        "2026-12-01T08:30:00.000Z",
        "Decided on the desktop.",
    );
    capture_into(
        &env,
        &env.vault,
        "2026-12-01T08:40:00.000Z",
        "Decided on the laptop.",
    );
    assert_eq!(env.here_at(&desktop, &["sync"]).status, 0);
    let merged = env.here(&["sync"]);
    let after = env.here(&["recent", "-n", "2", "--since", "2026-12-01"]);
    insta::assert_snapshot!(format!("{merged}{after}"));
}

#[test]
fn sync_json_carries_the_hints_of_its_warnings() {
    let (env, remote) = with_remote();
    assert_eq!(env.here(&["sync", "--setup", "origin"]).status, 0);
    let desktop = second_machine(&env, &remote);
    capture_into(
        &env,
        &desktop,
        "2026-12-01T08:30:00.000Z",
        "Decided on the desktop.",
    );
    assert_eq!(env.here_at(&desktop, &["sync"]).status, 0);
    // The file sync brings is already here, with other text: it is left as it is.
    env.write(
        "_librarian/sessions/2026-12-01.desktop-0002.md",
        "written by hand\n",
    );
    insta::assert_snapshot!(env.here(&["sync", "--json"]));
}
