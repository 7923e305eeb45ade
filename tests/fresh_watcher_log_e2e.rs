//! The record cache through a running MCP server's watcher (spec/index.md, "The watcher's
//! answer"): with a server watching the sessions folder, `log --grep` stats no day file the
//! record did not move, and still finds a line appended by hand to an old day file a moment
//! ago, or a capture just made; without a server, or whenever it cannot vouch, every day file
//! is compared, with the same answer. `RUTTER_FRESHNESS_TRACE` says which source answered.

use crate::common;
use crate::fresh_watcher_e2e::{append, assert_by_watcher, traced, Server};
use common::json::{decode, LogRow};
use common::*;

/// The oldest of four days: neither among the newest two nor moved in the record by a capture,
/// so only a stat of every day file, or the watcher, finds an edit in it.
const OLD_DAY: &str = "_librarian/sessions/2026-11-27.md";

/// A vault with one committed capture on each of four days, indexed.
fn vault() -> Env {
    let env = Env::git_vault();
    for (day, summary) in [
        ("2026-11-27", "Chose the blue cover."),
        ("2026-11-28", "Moved the launch to Friday."),
        ("2026-11-29", "Published the first issue."),
        ("2026-11-30", "Agreed a fortnightly cadence."),
    ] {
        let r = env.capture_at(&format!("{day}T08:00:00.000Z"), summary, &[]);
        assert!(r.stderr.contains("to refs/rutter/records."), "{}", r.stderr);
    }
    let r = env.rutter(&["reindex"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    env
}

/// Appends an entry line by hand to the oldest day file (no commit holds it: `unverified`).
fn append_to_old_day(env: &Env, id: &str, summary: &str) {
    let time = format!(
        "{}-{}-{}T{}:{}:{}.000Z",
        &id[..4],
        &id[4..6],
        &id[6..8],
        &id[9..11],
        &id[11..13],
        &id[13..15]
    );
    let line = format!(
        "- {} — {summary} <!-- rutter:entry {{\"id\":\"{id}\",\"time\":\"{time}\",\"summary\":\"{summary}\",\"refs\":[]}} -->\n",
        &time[11..19]
    );
    append(env, OLD_DAY, &line);
}

/// `log --grep WORD --json`: each row's summary and status, and the source that answered.
fn grep(env: &Env, word: &str) -> (Vec<(String, String)>, String) {
    let (run, source) = traced(env, &["log", "--grep", word, "--json"]);
    assert_eq!(run.code, 0, "{word}: {}{}", run.stdout, run.stderr);
    let rows: Vec<LogRow> = decode(&run.stdout);
    let rows = rows.into_iter().map(|r| (r.summary, r.status)).collect();
    (rows, source)
}

fn unverified(summary: &str) -> Vec<(String, String)> {
    vec![(summary.to_string(), "unverified".to_string())]
}

#[test]
fn a_line_appended_to_an_old_day_file_and_a_capture_are_found_through_the_watcher() {
    let env = vault();
    let _server = Server::start(&env, "");
    assert_eq!(grep(&env, "kohlrabi"), (vec![], "watcher (events)".into()));
    append_to_old_day(&env, "20261127T120000000Z", "Kohlrabi by hand.");
    assert_eq!(
        grep(&env, "kohlrabi"),
        (unverified("Kohlrabi by hand."), "watcher (events)".into())
    );
    // Edited again in place, a moment later: the row is as the file is now.
    append_to_old_day(&env, "20261127T130000000Z", "Kohlrabi again.");
    let (rows, source) = grep(&env, "kohlrabi");
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(source, "watcher (events)");
    // A capture on a new day (a new day file, the record moved).
    let r = env.capture_at("2026-12-01T08:00:00.000Z", "Zucchini by capture.", &[]);
    assert!(r.stderr.contains("to refs/rutter/records."), "{}", r.stderr);
    let (rows, source) = grep(&env, "zucchini");
    assert_eq!(rows, [("Zucchini by capture.".into(), "committed".into())]);
    assert_eq!(source, "watcher (events)");
    // A day file removed by hand: its committed entry now reads deleted.
    std::fs::remove_file(env.vault.join(OLD_DAY)).unwrap();
    let (rows, source) = grep(&env, "blue");
    assert_eq!(rows, [("Chose the blue cover.".into(), "deleted".into())]);
    assert_eq!(source, "watcher (events)");
}

#[test]
fn without_a_server_or_after_it_is_killed_every_day_file_is_compared_with_the_same_answer() {
    let env = vault();
    append_to_old_day(&env, "20261127T120000000Z", "Kohlrabi by hand.");
    assert_eq!(
        grep(&env, "kohlrabi"),
        (
            unverified("Kohlrabi by hand."),
            "full check (no watcher is running)".into()
        )
    );
    let server = Server::start(&env, "");
    append_to_old_day(&env, "20261127T130000000Z", "Fennel by hand.");
    let (watched, source) = grep(&env, "by hand");
    assert_eq!(source, "watcher (events)");
    server.kill_9();
    append_to_old_day(&env, "20261127T140000000Z", "Celeriac by hand.");
    let (rows, source) = grep(&env, "by hand");
    assert_eq!(source, "full check (no watcher is running)");
    let mut want = watched.clone();
    want.push(("Celeriac by hand.".into(), "unverified".into()));
    let sorted = |mut v: Vec<(String, String)>| {
        v.sort();
        v
    };
    assert_eq!(sorted(rows), sorted(want));
    assert_eq!(watched.len(), 2, "{watched:?}");
}

#[test]
fn a_cookie_not_heard_in_time_means_every_day_file_is_compared() {
    let env = vault();
    let _server = Server::start(&env, "watch-cookie-lost");
    append_to_old_day(&env, "20261127T120000000Z", "Kohlrabi by hand.");
    assert_eq!(
        grep(&env, "kohlrabi"),
        (
            unverified("Kohlrabi by hand."),
            "full check (the watcher declined: its cookie was not heard in time)".into()
        )
    );
}

#[test]
fn a_lost_event_queue_makes_the_server_compare_every_day_first() {
    let env = vault();
    let _server = Server::start(&env, "watch-overflow");
    append_to_old_day(&env, "20261127T120000000Z", "Kohlrabi by hand.");
    let (rows, source) = grep(&env, "kohlrabi");
    assert_eq!(rows, unverified("Kohlrabi by hand."));
    assert_by_watcher(&source);
}

#[test]
fn a_cache_rebuilt_under_the_server_is_compared_whole_before_it_vouches() {
    let env = vault();
    let _server = Server::start(&env, "");
    let r = env.rutter(&["reindex", "--force"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    append_to_old_day(&env, "20261127T120000000Z", "Kohlrabi by hand.");
    assert_eq!(
        grep(&env, "kohlrabi"),
        (
            unverified("Kohlrabi by hand."),
            "watcher (full-check)".into()
        )
    );
    append_to_old_day(&env, "20261127T130000000Z", "Fennel by hand.");
    assert_eq!(
        grep(&env, "fennel"),
        (unverified("Fennel by hand."), "watcher (events)".into())
    );
}

#[test]
fn a_sessions_folder_made_after_the_server_started_is_watched() {
    let env = Env::git_vault();
    let r = env.rutter(&["reindex"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!env.vault.join("_librarian/sessions").exists());
    let _server = Server::start(&env, "");
    let r = env.capture_at("2026-11-27T08:00:00.000Z", "Chose the blue cover.", &[]);
    assert!(r.stderr.contains("to refs/rutter/records."), "{}", r.stderr);
    let (rows, source) = grep(&env, "blue");
    assert_eq!(rows, [("Chose the blue cover.".into(), "committed".into())]);
    assert_by_watcher(&source);
    append_to_old_day(&env, "20261127T120000000Z", "Kohlrabi by hand.");
    assert_eq!(
        grep(&env, "kohlrabi"),
        (unverified("Kohlrabi by hand."), "watcher (events)".into())
    );
}
