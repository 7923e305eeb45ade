//! Output that says what you need next (issue 20, item 4): `recent` shows each entry's short
//! id (which `retract` and `log` take) and its client, refs show short hashes in text and in
//! `librarian-recent` (whole ones stay in JSON), `--client` on `recent` and `log`, `--project`
//! on `log`, and `show` prints a note's title once.

use crate::common;

use common::json::{decode, LogRow, Recent};
use common::*;

/// `capture --summary` at a pinned time, written by `client` from the folder `cwd`.
fn capture(env: &Env, ts: &str, summary: &str, client: &str, cwd: &str, refs: &[&str]) {
    let mut c = env.cmd();
    c.env("RUTTER_TIMESTAMP", ts).args([
        "capture",
        "--client",
        client,
        "--summary",
        summary,
        "--session",
        &format!("S-{summary}"),
        "--cwd",
        cwd,
    ]);
    for r in refs {
        c.args(["--ref", r]);
    }
    let r = run_with_stdin(&mut c, b"");
    assert_eq!(r.code, 0, "{}", r.stderr);
}

fn vault() -> Env {
    let env = Env::git_vault();
    env.write("Notes/cadence.md", "# Cadence\n\nFortnightly.\n");
    capture(
        &env,
        "2026-11-30T10:00:00.000Z",
        "Chose a fortnightly cadence.",
        "claude",
        "/w/newsletter",
        &["Notes/cadence.md"],
    );
    capture(
        &env,
        "2026-11-30T11:00:00.000Z",
        "Moved the beds south.",
        "codex",
        "/w/garden",
        &[],
    );
    // Two entries in one second: their short ids must tell them apart.
    capture(
        &env,
        "2026-11-30T12:00:00.100Z",
        "First of one second.",
        "agy",
        "/w/garden",
        &[],
    );
    capture(
        &env,
        "2026-11-30T12:00:00.900Z",
        "Second of one second.",
        "agy",
        "/w/garden",
        &[],
    );
    env
}

#[test]
fn recent_shows_short_ids_clients_and_short_hashes() {
    let env = vault();
    let r = env.rutter(&["recent"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let line = |summary: &str| -> String {
        r.stdout
            .lines()
            .find(|l| l.contains(summary))
            .unwrap_or_else(|| panic!("{summary}: {}", r.stdout))
            .to_string()
    };
    assert_eq!(
        line("Chose a fortnightly"),
        "20261130T100000 2026-11-30 10:00:00 +0000 [newsletter] (claude) — Chose a fortnightly cadence."
    );
    assert!(
        line("Moved the beds").starts_with("20261130T110000 "),
        "{}",
        r.stdout
    );
    assert!(
        line("First of one").starts_with("20261130T1200001 "),
        "{}",
        r.stdout
    );
    assert!(
        line("Second of one").starts_with("20261130T1200009 "),
        "{}",
        r.stdout
    );
    let refs = r.stdout.lines().find(|l| l.contains("refs:")).unwrap();
    let hash = refs.split("@sha256:").nth(1).unwrap();
    assert_eq!(hash.len(), 7, "a short hash: {refs}");
    // JSON keeps the whole hash.
    let json: Recent = decode(&env.rutter(&["recent", "--json"]).stdout);
    let hashes: Vec<&str> = json
        .steps()
        .flat_map(|s| &s.refs)
        .map(|r| r.hash.as_str())
        .collect();
    assert!(
        hashes
            .iter()
            .any(|h| h.starts_with(&format!("sha256:{hash}"))),
        "{hashes:?}"
    );
    let whole = env.entries()[0]["refs"][0]["hash"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(whole.len(), "sha256:".len() + 64);
    assert!(hashes.contains(&whole.as_str()), "{hashes:?}");
}

#[test]
fn retract_and_log_take_the_short_id_recent_shows() {
    let env = vault();
    let log = env.rutter(&["log", "20261130T110000"]);
    assert_eq!(log.code, 0, "{}", log.stderr);
    assert!(
        log.stdout.contains("Moved the beds south."),
        "{}",
        log.stdout
    );
    assert_eq!(log.stdout.lines().count(), 1, "{}", log.stdout);
    let ambiguous = env.rutter(&["log", "20261130T120000"]);
    assert_eq!(ambiguous.code, 1);
    assert!(
        ambiguous.stderr.contains("several entry ids"),
        "{}",
        ambiguous.stderr
    );
    let r = env.rutter(&["retract", "20261130T120000", "--reason", "test"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("20261130T120000100Z") && r.stderr.contains("20261130T120000900Z"),
        "{}",
        r.stderr
    );
    let r = env.rutter(&["retract", "20261130T1200009", "--reason", "Not a decision."]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("retracted 20261130T120000900Z"),
        "{}",
        r.stdout
    );
    let r = env.rutter(&["retract", "20261130T235959", "--reason", "x"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("no entry id starts with"), "{}", r.stderr);
    let recent = env.rutter(&["recent"]);
    assert!(
        !recent.stdout.contains("Second of one"),
        "{}",
        recent.stdout
    );
    // The retracted entry keeps its id (log still takes it): the short id stays unique.
    assert!(
        recent
            .stdout
            .contains("20261130T1200001 2026-11-30 12:00:00"),
        "{}",
        recent.stdout
    );
}

#[test]
fn client_and_project_filters() {
    let env = vault();
    let only = |args: &[&str]| -> Vec<String> {
        let r = env.rutter(args);
        assert_eq!(r.code, 0, "{}", r.stderr);
        [
            "Chose a fortnightly",
            "Moved the beds",
            "First of one",
            "Second of one",
        ]
        .iter()
        .filter(|s| r.stdout.contains(*s))
        .map(|s| s.to_string())
        .collect()
    };
    assert_eq!(only(&["recent", "--client", "codex"]), ["Moved the beds"]);
    assert_eq!(
        only(&["recent", "--client", "CLAUDE"]),
        ["Chose a fortnightly"]
    );
    assert_eq!(
        only(&["log", "--client", "agy"]),
        ["First of one", "Second of one"]
    );
    assert_eq!(
        only(&["log", "--project", "Garden"]),
        ["Moved the beds", "First of one", "Second of one"]
    );
    assert_eq!(
        only(&["log", "--project", "garden", "--client", "codex"]),
        ["Moved the beds"]
    );
    assert!(only(&["recent", "--client", "grok"]).is_empty());
    let json = env.rutter(&["log", "--json", "--client", "claude"]);
    let rows: Vec<LogRow> = decode(&json.stdout);
    assert_eq!(rows[0].client.as_deref(), Some("claude"));
    assert_eq!(rows[0].project.as_deref(), Some("newsletter"));
    assert_eq!(rows[0].refs[0].path, "Notes/cadence.md");
}

#[test]
fn show_prints_a_title_once() {
    let env = vault();
    assert_eq!(env.rutter(&["reindex"]).code, 0);
    let r = env.rutter(&["show", "Notes/cadence.md"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.matches("Cadence").count(), 1, "{}", r.stdout);
    assert!(
        r.stdout.contains("# Cadence\n\nFortnightly."),
        "{}",
        r.stdout
    );
}
