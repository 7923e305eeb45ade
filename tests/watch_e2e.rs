//! `git rutter watch` and `rutter.watch` (spec/index.md, "A watcher of its own"): the MCP
//! server's watcher without the server, started by hand or by a command that found none, answers
//! commands as a server does, one per vault, and ends once no command has asked for its idle
//! time. `RUTTER_FRESHNESS_TRACE` says which source answered, so each test asserts the path
//! taken, never a time.

use crate::common;
use crate::fresh_watcher_e2e::{append, finds, listening, socket, vault, Server};
use common::json::{decode, Status};
use common::*;
use std::process::{Child, Stdio};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(60);

/// `git rutter watch ARGS` started in the background, its stderr kept.
fn watch(env: &Env, args: &[&str]) -> Child {
    env.cmd()
        .arg("watch")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits (at most a minute) for `child` to end by itself: its exit status and stderr. One that
/// does not end is killed, and the test fails.
fn ended(mut child: Child) -> (i32, String) {
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > WAIT {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "the watcher did not end by itself: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn git_rutter_watch_answers_commands_as_a_server_does_and_ends_once_idle() {
    let env = vault();
    let watcher = watch(&env, &["--idle", "3s"]);
    listening(&env);
    append(&env, "Notes/a.md", "Kohlrabi in place.\n");
    assert_eq!(finds(&env, "kohlrabi", "Notes/a.md"), "watcher (events)");
    env.write("Fresh/d.md", "# D\n\nA parsnip note.\n");
    crate::fresh_watcher_e2e::assert_by_watcher(&finds(&env, "parsnip", "Fresh/d.md"));
    // `status` says a watcher keeps the index current.
    let status: Status = decode(&env.rutter(&["status", "--json"]).stdout);
    assert!(status.index().watched, "{status:?}");
    let shown = env.rutter(&["status"]).stdout;
    assert!(
        shown.contains("notes unchanged since: a watcher keeps it current"),
        "{shown}"
    );

    // One per vault: a second is refused at once, naming the lock, with what to do.
    let second = env.rutter(&["watch"]);
    assert_eq!(second.code, 1, "{}", second.stderr);
    assert!(
        second
            .stderr
            .contains("another `git rutter watch` already watches"),
        "{}",
        second.stderr
    );
    assert!(second.stderr.contains("Nothing to do"), "{}", second.stderr);

    // Asked nothing for 3 s, it ends by itself, cleanly, and takes its socket with it.
    let (code, stderr) = ended(watcher);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("until no command has asked for 3s"),
        "{stderr}"
    );
    assert!(
        stderr.contains("no command asked for 3s: stopping."),
        "{stderr}"
    );
    assert!(!socket(&env).exists(), "the socket went with it");
    let status: Status = decode(&env.rutter(&["status", "--json"]).stdout);
    assert!(!status.index().watched, "{status:?}");
    append(&env, "Notes/a.md", "Fennel after it ended.\n");
    assert_eq!(
        finds(&env, "fennel", "Notes/a.md"),
        "full check (no watcher is running)"
    );
}

#[test]
fn with_rutter_watch_set_a_command_that_finds_no_watcher_starts_one() {
    let env = vault();
    env.git(&["config", "rutter.watch", "3s"]);
    append(&env, "Notes/a.md", "Kohlrabi in place.\n");
    // This command checks the notes itself, and starts a watcher as it ends.
    assert_eq!(
        finds(&env, "kohlrabi", "Notes/a.md"),
        "full check (no watcher is running)"
    );
    listening(&env);
    append(&env, "Notes/a.md", "Turnip too.\n");
    assert_eq!(finds(&env, "turnip", "Notes/a.md"), "watcher (events)");
    // The started watcher ends once idle, and nothing is left listening.
    wait_until("the started watcher ends once idle", WAIT, || {
        !socket(&env).exists()
    });
}

#[test]
fn an_idle_time_of_none_or_no_interval_is_a_usage_error() {
    let env = vault();
    for bad in ["0", "soon"] {
        let r = env.rutter(&["watch", "--idle", bad]);
        assert_eq!(r.code, 2, "{bad}: {}", r.stderr);
        assert!(r.stderr.contains("--idle"), "{bad}: {}", r.stderr);
    }
}

#[test]
fn a_vault_on_a_shared_file_system_is_refused_at_once() {
    let env = vault();
    let r: Run = env
        .cmd()
        .env("RUTTER_FAILPOINTS", "watch-remote-fs")
        .args(["watch", "--idle", "1d"])
        .output()
        .unwrap()
        .into();
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("lies on a shared file system (nfs)"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("Nothing to do"), "{}", r.stderr);
    assert!(!socket(&env).exists(), "nothing listens");
}

#[test]
fn a_server_started_beside_it_takes_the_socket_and_the_watcher_steps_aside() {
    let env = vault();
    let watcher = watch(&env, &[]);
    listening(&env);
    append(&env, "Notes/a.md", "Kohlrabi in place.\n");
    assert_eq!(finds(&env, "kohlrabi", "Notes/a.md"), "watcher (events)");
    // The newest binds the socket; the watcher, no longer asked, ends by itself (it had no
    // idle time), so its lock does not outlive its use.
    let _server = Server::start(&env, "");
    let (code, stderr) = ended(watcher);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("another watcher answers on this index's socket now: stopping."),
        "{stderr}"
    );
    append(&env, "Notes/a.md", "Turnip too.\n");
    assert_eq!(finds(&env, "turnip", "Notes/a.md"), "watcher (events)");
}

#[test]
fn an_idle_time_that_is_none_is_a_status_finding() {
    let env = vault();
    env.git(&["config", "rutter.watch", "banana"]);
    let r = env.rutter(&["status", "--json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let status: Status = decode(&r.stdout);
    assert_eq!(status.record().watch.as_deref(), Some("banana"));
    assert!(status.record().watch_error.is_some(), "{status:?}");
    let f = status.finding("watch-invalid");
    assert!(f.message.contains("\"banana\""), "{}", f.message);
    assert!(f.todo.contains("git config rutter.watch 30m"), "{}", f.todo);
    // An interval is no finding (`true` reads as one: the unit tests of `watch_idle`). The
    // watcher this status starts ends 3 s after its start, nothing having asked it.
    env.git(&["config", "rutter.watch", "3s"]);
    let status: Status = decode(&env.rutter(&["status", "--json"]).stdout);
    assert_eq!(status.record().watch.as_deref(), Some("3s"));
    assert_eq!(status.record().watch_error, None);
    assert!(!status.kinds().contains(&"watch-invalid"), "{status:?}");
}

/// Writes `n` small notes under `Bulk/`, a hundred to a folder.
fn bulk_notes(env: &Env, n: usize) {
    for i in 0..n {
        let dir = env.vault.join(format!("Bulk/{:03}", i / 100));
        if i % 100 == 0 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        std::fs::write(
            dir.join(format!("n{i}.md")),
            format!("# N{i}\n\nBulk note {i}.\n"),
        )
        .unwrap();
    }
}

#[test]
fn status_suggests_rutter_watch_from_20000_notes_with_no_watcher_until_it_is_set() {
    let env = vault();
    let held: Status = decode(&env.rutter(&["status", "--json"]).stdout);
    bulk_notes(&env, 19_999 - held.index().vault_notes);
    let r = env.rutter(&["reindex"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let below: Status = decode(&env.rutter(&["status", "--json"]).stdout);
    assert_eq!(below.index().vault_notes, 19_999);
    assert!(!below.index().watch_suggested, "{below:?}");

    env.write("Bulk/last.md", "# Last\n\nThe twenty-thousandth note.\n");
    let at: Status = decode(&env.rutter(&["status", "--json"]).stdout);
    assert_eq!(at.index().vault_notes, 20_000);
    assert!(at.index().watch_suggested, "{at:?}");
    let shown = env.rutter(&["status"]);
    assert!(
        shown.stdout.contains(
            "each search, show, log and status first checks all 20000 notes for changes: `git config rutter.watch 30m`"
        ),
        "{}",
        shown.stdout
    );
    // A suggestion, not a finding: it changes neither the findings nor the exit status.
    assert_eq!(at.findings, below.findings);
    assert_eq!(at.healthy, below.healthy);

    // Set, even to `off`, it is the user's choice: nothing more is suggested.
    env.git(&["config", "rutter.watch", "off"]);
    let off: Status = decode(&env.rutter(&["status", "--json"]).stdout);
    assert!(!off.index().watch_suggested, "{off:?}");
    assert!(!env.rutter(&["status"]).stdout.contains("rutter.watch"));
}
