//! Find a decision (issue "recall only what was recorded", part 5): `log --grep/--since/--until`,
//! the same on `recent`, and `librarian-recent`'s `query`, on the built binary and a real git
//! vault, with rmcp's client for the MCP tool.

use crate::common;

use common::json::{decode, LogRow, Recent};
use common::*;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use rmcp::ServiceExt;
use serde_json::{json, Value};
use std::process::Stdio;

/// Four decisions over four days, two projects, one citing a cadence note.
fn vault() -> Env {
    let env = Env::git_vault();
    env.write("Notes/publishing-cadence.md", "# Cadence\n");
    let captures = [
        (
            "2026-11-20T09:00:00.000Z",
            "User chose a fortnightly cadence for the newsletter.",
            vec!["Notes/publishing-cadence.md"],
        ),
        (
            "2026-11-25T09:00:00.000Z",
            "Moved the garden beds to the south fence.",
            vec![],
        ),
        (
            "2026-11-28T09:00:00.000Z",
            "Survey results: readers want shorter issues.",
            vec!["Notes/a.md"],
        ),
        (
            "2026-11-30T09:00:00.000Z",
            "Kept the CADENCE but dropped the digest.",
            vec![],
        ),
    ];
    for (ts, summary, refs) in captures {
        let r = env.capture_at(ts, summary, &refs);
        assert!(r.stderr.contains("committed"), "{}", r.stderr);
    }
    env
}

/// The summaries `log --json ARGS` lists, newest first.
fn log_summaries(env: &Env, args: &[&str]) -> Vec<String> {
    let mut all = vec!["log", "--json"];
    all.extend_from_slice(args);
    let r = env.rutter(&all);
    assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    let rows: Vec<LogRow> = decode(&r.stdout);
    rows.into_iter().map(|r| r.summary).collect()
}

/// The summaries `recent --json ARGS` shows.
fn recent_summaries(env: &Env, args: &[&str]) -> Vec<String> {
    let mut all = vec!["recent", "--json"];
    all.extend_from_slice(args);
    let r = env.rutter(&all);
    assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    let recent: Recent = decode(&r.stdout);
    recent.summaries().into_iter().map(String::from).collect()
}

#[test]
fn log_grep_finds_a_decision_by_a_word_of_its_summary_project_or_path() {
    let env = vault();
    assert_eq!(
        log_summaries(&env, &["--grep", "cadence"]),
        [
            "Kept the CADENCE but dropped the digest.",
            "User chose a fortnightly cadence for the newsletter."
        ]
    );
    assert_eq!(
        log_summaries(&env, &["--grep", "cadence", "--grep", "FORTNIGHTLY"]),
        ["User chose a fortnightly cadence for the newsletter."],
        "every word of every --grep must match"
    );
    assert_eq!(
        log_summaries(&env, &["--grep", "publishing-cadence.md"]),
        ["User chose a fortnightly cadence for the newsletter."],
        "cited paths are searched"
    );
    assert_eq!(
        log_summaries(&env, &["--grep", "cadence weekly"]),
        Vec::<String>::new()
    );
    let text = env.rutter(&["log", "--grep", "nothing like this", "--client", "codex"]);
    assert_eq!(
        (text.code, text.stdout.trim()),
        (
            0,
            "no record matches --grep 'nothing like this' --client codex"
        )
    );
}

#[test]
fn since_and_until_bound_log_and_recent_by_day() {
    let env = vault();
    assert_eq!(
        log_summaries(&env, &["--since", "2026-11-25", "--until", "2026-11-28"]),
        [
            "Survey results: readers want shorter issues.",
            "Moved the garden beds to the south fence."
        ]
    );
    assert_eq!(
        recent_summaries(&env, &["--since", "2026-11-28"]),
        [
            "Survey results: readers want shorter issues.",
            "Kept the CADENCE but dropped the digest."
        ],
        "one session, its steps oldest first"
    );
    assert_eq!(
        recent_summaries(&env, &["--grep", "cadence", "--until", "2026-11-29"]),
        ["User chose a fortnightly cadence for the newsletter."]
    );
    let (n, positional) = (
        env.rutter(&["recent", "-n", "1"]),
        env.rutter(&["recent", "1"]),
    );
    assert_eq!(
        (n.code, &n.stdout),
        (0, &positional.stdout),
        "-n as git log has it"
    );
    assert_eq!(
        env.rutter(&["recent", "-n", "1", "2"]).code,
        2,
        "one count, not two"
    );
    // Relative bounds count back from today: every entry here is older than today.
    assert!(log_summaries(&env, &["--since", "0d"]).is_empty());
    assert_eq!(log_summaries(&env, &["--since", "100000d"]).len(), 4);
    assert!(log_summaries(&env, &["--until", "10000w"]).is_empty());
    assert!(log_summaries(&env, &["--since", "yesterday"]).is_empty());
    for (bad, why) in [
        (
            "next tuesday",
            "is not a date: use YYYY-MM-DD, a day and time",
        ),
        ("3x", "is not a date: use YYYY-MM-DD, a day and time"),
        ("2026-02-30", "is not a date: the calendar has no such day"),
        (
            "1000000d",
            "is not a date git-rutter reads: it counts back past the year 0",
        ),
    ] {
        let r = env.rutter(&["log", "--since", bad]);
        assert_eq!(r.code, 2, "{bad}");
        assert!(r.stderr.contains(why), "{}", r.stderr);
        assert_eq!(env.rutter(&["recent", "--until", bad]).code, 2, "{bad}");
    }
    let none = env.rutter(&["recent", "--grep", "zucchini"]);
    assert!(
        none.stdout
            .contains("No recorded sessions match \"zucchini\""),
        "{}",
        none.stdout
    );
}

#[tokio::test]
async fn librarian_recent_answers_what_did_we_decide_about_the_cadence() {
    let env = vault();
    let mut cmd = env.cmd();
    cmd.arg("mcp");
    let (transport, _) = TokioChildProcess::builder(tokio::process::Command::from(cmd))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let client = ().serve(transport).await.unwrap();
    let call = |args: Value| {
        CallToolRequestParams::new("librarian-recent".to_string())
            .with_arguments(args.as_object().cloned().unwrap())
    };
    let result = client
        .call_tool(call(json!({"query": "Cadence"})))
        .await
        .unwrap();
    let text = result.content[0].as_text().unwrap().text.clone();
    assert!(text.contains("User chose a fortnightly cadence"), "{text}");
    assert!(text.contains("Kept the CADENCE"), "{text}");
    assert!(!text.contains("garden"), "{text}");
    // Any query text is an answer, never an error: NUL, quotes, SQL, a huge word list.
    let hostile = format!("\u{0}'\" OR 1=1 -- {}", "word ".repeat(20_000));
    let result = client
        .call_tool(call(json!({"query": hostile})))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let bad = client.call_tool(call(json!({"query": 3}))).await.unwrap();
    assert_eq!(
        bad.is_error,
        Some(true),
        "a query that is not a string is a tool error: {bad:?}"
    );
    client.cancel().await.unwrap();
}

#[test]
fn times_show_in_the_local_zone_with_their_offset_unless_utc() {
    let env = vault();
    let run = |args: &[&str], tz: &str| {
        let out = env.cmd().env("TZ", tz).args(args).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // 2026-11-20 09:00 UTC is 01:00 in Los Angeles, the same day; 2026-11-30 09:00 too.
    let la = run(&["recent"], "America/Los_Angeles");
    assert!(
        la.contains("2026-11-20 01:00:00 -0800 — User chose a fortnightly"),
        "{la}"
    );
    let tokyo = run(&["log", "--grep", "garden"], "Asia/Tokyo");
    assert!(
        tokyo.contains(" 2026-11-25 18:00:00 +0900 committed"),
        "{tokyo}"
    );
    let utc = run(&["recent", "--utc"], "Asia/Tokyo");
    assert!(utc.contains("2026-11-20 09:00:00 — User chose"), "{utc}");
    let rows: Vec<LogRow> = decode(&run(&["log", "--json", "--grep", "garden"], "Asia/Tokyo"));
    assert!(
        rows.iter().any(|r| r.time == "2026-11-25T09:00:00.000Z"),
        "JSON stays UTC: {rows:#?}"
    );
}

/// A zone named by `TZ` takes the rules built into git-rutter, never a system database's
/// (spec/recall.md, "Times"): a `TZDIR` whose `America/Los_Angeles` is a +05:00 zone changes
/// nothing. Reading the system's database cost every command a listing of all its files.
#[test]
fn a_named_zone_takes_the_bundled_rules_not_the_systems() {
    let env = vault();
    let tzdir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tzdir.path().join("America")).unwrap();
    let fake =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tz/Etc-GMT-5.tzif");
    std::fs::copy(fake, tzdir.path().join("America/Los_Angeles")).unwrap();
    let out = env
        .cmd()
        .env("TZ", "America/Los_Angeles")
        .env("TZDIR", tzdir.path())
        .arg("recent")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("2026-11-20 01:00:00 -0800 — User chose a fortnightly"),
        "{text}"
    );
    assert!(!text.contains("+0500"), "{text}");
}

/// With an index, `log --grep` reads only the day files its record cache names: what it lists
/// is what a scan of every day file lists, for an entry captured after the index was built, an
/// entry edited after commit (shown with its committed summary), a retraction recorded on a
/// later day, and a client or project filter alone.
#[test]
fn log_grep_through_the_index_lists_what_a_full_scan_lists() {
    let env = vault();
    let scan = |args: &[&str]| log_summaries(&env, args);
    let asked: [&[&str]; 6] = [
        &["--grep", "cadence"],
        &["--grep", "garden"],
        &["--project", "nothing"],
        &[],
        &["-n", "2"],
        &["--since", "2026-11-26", "-n", "1"],
    ];
    let without_index: Vec<Vec<String>> = asked.iter().map(|a| scan(a)).collect();
    assert_eq!(env.rutter(&["reindex"]).code, 0);
    for (args, want) in asked.iter().zip(&without_index) {
        assert_eq!(&scan(args), want, "{args:?}");
    }
    // Captured after the index was built: found all the same (the cache is brought up to date).
    let r = env.capture_at("2026-12-01T09:00:00.000Z", "A late cadence change.", &[]);
    assert!(r.stderr.contains("committed"), "{}", r.stderr);
    assert_eq!(scan(&["--grep", "late"]), ["A late cadence change."]);
    // Edited after commit: listed by its committed summary, status edited.
    let day = "_librarian/sessions/2026-11-25.md";
    let text = env.read(day);
    env.write(
        day,
        &text.replace("Moved the garden beds", "Moved the pond"),
    );
    let rows = env.rutter(&["log", "--json", "--grep", "garden"]);
    let v: Vec<LogRow> = decode(&rows.stdout);
    assert_eq!(v[0].summary, "Moved the garden beds to the south fence.");
    assert_eq!(v[0].status, "edited after commit", "{v:#?}");
    // Retracted on a later day: the retraction is found in its own day file.
    let id = v[0].id.clone();
    env.write(day, &text);
    let mut c = env.cmd();
    c.env("RUTTER_TIMESTAMP", "2026-12-02T09:00:00.000Z").args([
        "retract",
        &id,
        "--reason",
        "the beds stayed",
    ]);
    let r = run_with_stdin(&mut c, b"");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows = env.rutter(&["log", "--json", "--grep", "garden"]);
    let v: Vec<LogRow> = decode(&rows.stdout);
    assert_eq!(v[0].status, "retracted", "{v:#?}");
}

/// The index is a cache on disk, not authority: a day-file name in it that is no day-file stem
/// (`../outside`) never becomes a path `log` reads, even when a file waits there.
#[test]
fn log_reads_no_path_a_tampered_index_names() {
    let env = vault();
    assert_eq!(env.rutter(&["reindex"]).code, 0);
    assert_eq!(log_summaries(&env, &["--grep", "cadence"]).len(), 2);
    let day = env.read("_librarian/sessions/2026-11-30.md");
    assert!(!day.is_empty());
    env.write(
        "_librarian/outside.md",
        &day.replace(
            "Kept the CADENCE but dropped the digest.",
            "Planted outside.",
        ),
    );
    let db = rusqlite::Connection::open(env.vault.join(".git/rutter/index.sqlite")).unwrap();
    let changed = db
        .execute(
            "UPDATE entries SET file = '../outside', grep = grep || ' planted' WHERE day = '2026-11-30'",
            [],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(db);
    assert_eq!(
        log_summaries(&env, &["--grep", "planted"]),
        Vec::<String>::new()
    );
    let text = env.rutter(&["log", "--grep", "planted"]);
    assert!(!text.stdout.contains("Planted"), "{}", text.stdout);
}
