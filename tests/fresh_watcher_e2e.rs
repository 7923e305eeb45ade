//! Freshness through a running MCP server's watcher (spec/index.md, "The watcher's answer"):
//! with a server watching, `search`, `show` and `recent` learn what changed from it instead of
//! a stat per note; without one, or whenever it cannot vouch for its index, they run the full
//! check. Every case answers as the notes are now; `RUTTER_FRESHNESS_TRACE` says which source
//! answered, so each test asserts the path taken, never a time.

use crate::common;
use common::*;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(60);

/// A running `git-rutter mcp` on the env's vault, stdin held open; killed when dropped.
pub(crate) struct Server(Child);

impl Server {
    pub(crate) fn start(env: &Env, failpoints: &str) -> Server {
        let mut cmd = env.cmd();
        cmd.arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if !failpoints.is_empty() {
            cmd.env("RUTTER_FAILPOINTS", failpoints);
        }
        let server = Server(cmd.spawn().unwrap());
        listening(env);
        server
    }

    /// Kills the server with SIGKILL (nothing of it runs its exit path) and reaps it.
    pub(crate) fn kill_9(mut self) {
        self.0.kill().unwrap();
        self.0.wait().unwrap();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub(crate) fn socket(env: &Env) -> PathBuf {
    env.vault.join(".git/rutter/index.sqlite.watch")
}

/// Waits until a server accepts connections on the socket (a dead one's file refuses them).
pub(crate) fn listening(env: &Env) {
    let socket = socket(env);
    wait_until("a server listening on the socket", WAIT, || {
        std::os::unix::net::UnixStream::connect(&socket).is_ok()
    });
}

/// `git-rutter ARGS` with the trace on: the run, and the source its trace line names.
pub(crate) fn traced(env: &Env, args: &[&str]) -> (Run, String) {
    let run: Run = env
        .cmd()
        .env("RUTTER_FRESHNESS_TRACE", "1")
        .args(args)
        .output()
        .unwrap()
        .into();
    let source = run
        .stderr
        .lines()
        .filter_map(|l| l.strip_prefix("git-rutter: freshness: "))
        .next_back()
        .unwrap_or_else(|| panic!("no freshness trace: {}", run.stderr))
        .to_string();
    (run, source)
}

pub(crate) fn vault() -> Env {
    let env = Env::git_vault();
    env.write("Other/c.md", "# Gamma\n\nThe gamma note.\n");
    let r = env.rutter(&["reindex"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    env
}

pub(crate) fn append(env: &Env, rel: &str, text: &str) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(env.vault.join(rel))
        .unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

/// The watcher answered. Whether the full check it runs after a folder event or a lost queue
/// ran in the command's `sync` (`full-check`) or in its background pass a moment before
/// (`events`) depends on timing; either way the answer holds the change (the caller checks it).
pub(crate) fn assert_by_watcher(source: &str) {
    assert!(
        ["watcher (full-check)", "watcher (events)"].contains(&source),
        "{source}"
    );
}

/// Searches for `word` and expects exactly `path` among the hits; the source that answered.
pub(crate) fn finds(env: &Env, word: &str, path: &str) -> String {
    let (run, source) = traced(env, &["search", "--json", word]);
    assert_eq!(run.code, 0, "{word}: {}{}", run.stdout, run.stderr);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let paths: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, [path], "{word}");
    source
}

#[test]
fn an_edit_a_moment_ago_is_found_through_the_watcher() {
    let env = vault();
    let _server = Server::start(&env, "");
    append(&env, "Notes/a.md", "Kohlrabi in place.\n");
    assert_eq!(finds(&env, "kohlrabi", "Notes/a.md"), "watcher (events)");
    env.write("Notes/new.md", "# New\n\nA zucchini note.\n");
    assert_eq!(finds(&env, "zucchini", "Notes/new.md"), "watcher (events)");
    let (shown, source) = traced(&env, &["show", "Notes/a.md"]);
    assert!(
        shown.stdout.contains("Kohlrabi in place."),
        "{}",
        shown.stdout
    );
    assert_eq!(source, "watcher (events)");
    // A folder made: every folder is watched again, by a full check in the server.
    env.write("Fresh/Deep/d.md", "# D\n\nA parsnip note.\n");
    assert_by_watcher(&finds(&env, "parsnip", "Fresh/Deep/d.md"));
    append(&env, "Fresh/Deep/d.md", "Turnip too.\n");
    assert_eq!(finds(&env, "turnip", "Fresh/Deep/d.md"), "watcher (events)");
}

#[test]
fn a_folder_swapped_for_another_of_the_same_name_is_watched_again() {
    let env = vault();
    let _server = Server::start(&env, "");
    std::fs::rename(env.vault.join("Notes"), env.vault.join("Moved")).unwrap();
    env.write("Notes/a.md", "# A again\n\nA radish note.\n");
    assert_by_watcher(&finds(&env, "radish", "Notes/a.md"));
    // The new Notes/ is a folder the first watch never saw: an edit in it is heard.
    append(&env, "Notes/a.md", "Beetroot.\n");
    assert_eq!(finds(&env, "beetroot", "Notes/a.md"), "watcher (events)");
    append(&env, "Moved/b.md", "Celeriac.\n");
    assert_eq!(finds(&env, "celeriac", "Moved/b.md"), "watcher (events)");
}

#[test]
fn without_a_server_the_full_check_answers() {
    let env = vault();
    append(&env, "Notes/a.md", "Kohlrabi in place.\n");
    assert_eq!(
        finds(&env, "kohlrabi", "Notes/a.md"),
        "full check (no watcher is running)"
    );
}

#[test]
fn a_server_killed_leaves_a_socket_that_refuses_and_the_full_check_answers() {
    let env = vault();
    let server = Server::start(&env, "");
    assert_eq!(finds(&env, "gamma", "Other/c.md"), "watcher (events)");
    server.kill_9();
    assert!(socket(&env).exists(), "SIGKILL leaves the socket file");
    append(&env, "Other/c.md", "Kohlrabi after the kill.\n");
    assert_eq!(
        finds(&env, "kohlrabi", "Other/c.md"),
        "full check (no watcher is running)"
    );
    // A new server replaces the dead one's socket and vouches again.
    let _again = Server::start(&env, "");
    append(&env, "Other/c.md", "Fennel.\n");
    assert_eq!(finds(&env, "fennel", "Other/c.md"), "watcher (events)");
}

#[test]
fn a_lost_event_queue_makes_the_server_check_everything_first() {
    let env = vault();
    let _server = Server::start(&env, "watch-overflow");
    append(&env, "Notes/b.md", "Kohlrabi in place.\n");
    assert_by_watcher(&finds(&env, "kohlrabi", "Notes/b.md"));
}

#[test]
fn a_cookie_not_heard_in_time_means_the_full_check() {
    let env = vault();
    let _server = Server::start(&env, "watch-cookie-lost");
    append(&env, "Notes/b.md", "Kohlrabi in place.\n");
    assert_eq!(
        finds(&env, "kohlrabi", "Notes/b.md"),
        "full check (the watcher declined: its cookie was not heard in time)"
    );
}

/// The number of notes `status` says the index holds ("N notes, M entries, updated …").
fn indexed_notes(status: &str) -> usize {
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix("index:"))
        .filter(|l| l.contains(", updated"))
        .unwrap_or_else(|| panic!("no index line: {status}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    assert!(matches!(words[1], "note," | "notes,"), "{line}");
    words[0].parse().unwrap()
}

#[test]
fn status_asks_the_watcher_and_counts_the_notes_as_they_are_now() {
    let env = vault();
    let (before, source) = traced(&env, &["status"]);
    assert!(source.starts_with("full check (no watcher"), "{source}");
    let notes = indexed_notes(&before.stdout);
    let _server = Server::start(&env, "");
    append(&env, "Notes/a.md", "Kohlrabi in place.\n");
    env.write("Notes/new.md", "# New\n\nA zucchini note.\n");
    let (after, source) = traced(&env, &["status"]);
    assert!(
        matches!(after.code, 0 | 1),
        "{}{}",
        after.stdout,
        after.stderr
    );
    assert_eq!(source, "watcher (events)");
    assert_eq!(indexed_notes(&after.stdout), notes + 1, "{}", after.stdout);
    assert!(
        after.stdout.contains("notes unchanged since"),
        "{}",
        after.stdout
    );
    // The edit is in the index the watcher vouched for.
    assert_eq!(finds(&env, "kohlrabi", "Notes/a.md"), "watcher (events)");
}

#[test]
fn a_vault_on_a_shared_file_system_is_never_vouched_for() {
    let env = vault();
    let _server = Server::start(&env, "watch-remote-fs");
    append(&env, "Notes/b.md", "Kohlrabi over the network.\n");
    assert_eq!(
        finds(&env, "kohlrabi", "Notes/b.md"),
        "full check (the watcher declined: the vault is on a shared file system (nfs), whose changes from other machines no watcher hears)"
    );
}

#[test]
fn an_index_rebuilt_under_the_server_is_checked_whole_before_it_vouches() {
    let env = vault();
    let _server = Server::start(&env, "");
    let r = env.rutter(&["reindex", "--force"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    append(&env, "Notes/a.md", "Kohlrabi after the rebuild.\n");
    assert_eq!(
        finds(&env, "kohlrabi", "Notes/a.md"),
        "watcher (full-check)"
    );
    append(&env, "Notes/a.md", "Fennel.\n");
    assert_eq!(finds(&env, "fennel", "Notes/a.md"), "watcher (events)");
}

#[test]
fn a_server_that_does_not_watch_declines_and_the_full_check_answers() {
    let env = vault();
    let mut cmd = env.cmd();
    cmd.arg("mcp")
        .env("RUTTER_NO_WATCH", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let _server = Server(cmd.spawn().unwrap());
    listening(&env);
    append(&env, "Notes/a.md", "Kohlrabi in place.\n");
    assert_eq!(
        finds(&env, "kohlrabi", "Notes/a.md"),
        "full check (the watcher declined: it does not watch the vault)"
    );
}
