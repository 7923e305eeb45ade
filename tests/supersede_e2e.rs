//! Supersede (spec/recall.md, "Supersede"): a decision that names the earlier entries it
//! replaces, through a Claude Code transcript's directive, through `librarian-record`, and
//! across a sync; recall, `log`, `cited-by`, the timeline, the brief and the MCP tools mark the
//! older entry; an id that names no entry is kept and shown; retracting the newer entry makes
//! the older current again. Real git vaults, the real binary, rmcp's own client.

use crate::common;
use common::json::{decode, CitedBy, LogRow, Recent, Step};
use common::net::Net;
use common::*;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::transport::TokioChildProcess;
use rmcp::ServiceExt;
use serde_json::{json, Value};
use std::process::Stdio;

/// Every step of `recent --json`, with the keys supersede adds.
fn steps(env: &Env) -> Vec<Step> {
    let r = env.rutter(&["recent", "--json", "-n", "100"]);
    // `--all` streams its sessions with the same supersede links, byte for byte.
    let all = env.rutter(&["recent", "--json", "--all"]);
    assert_eq!(all.stdout, r.stdout);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let recent: Recent = decode(&r.stdout);
    recent.sessions.into_iter().flat_map(|s| s.steps).collect()
}

fn step<'a>(all: &'a [Step], summary: &str) -> &'a Step {
    all.iter().find(|s| s.summary == summary).unwrap()
}

/// Captures `directive` through a Claude Code Stop payload (its transcript), at `ts`.
fn claude_turn(env: &Env, session: &str, ts: &str, directive: &Value) {
    let payload = env.transcript_payload(session, session, directive);
    let mut c = env.cmd();
    c.env("RUTTER_TIMESTAMP", ts)
        .args(["capture", "--client", "claude"]);
    let r = run_with_stdin(&mut c, &payload);
    assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
}

/// The short id `recent` shows for the step `summary`.
fn short_id(env: &Env, summary: &str) -> String {
    let out = env.rutter(&["recent"]).stdout;
    let line = out.lines().find(|l| l.contains(summary)).unwrap();
    line.split(' ').next().unwrap().to_string()
}

#[test]
fn a_directive_that_names_a_short_id_marks_the_older_decision_everywhere() {
    let env = Env::git_vault();
    claude_turn(
        &env,
        "s1",
        "2026-12-01T09:00:00.000Z",
        &directive("Store the index in Postgres.", &["Notes/a.md"]),
    );
    let old = short_id(&env, "Store the index in Postgres.");
    let mut newer = directive("Store the index in SQLite instead of Postgres.", &[]);
    newer["supersedes"] = json!([old, "20250101T000000"]);
    claude_turn(&env, "s2", "2026-12-02T09:00:00.000Z", &newer);

    // The line names the whole id the short one starts, and keeps the one that names nothing.
    let all = steps(&env);
    let (o, n) = (
        step(&all, "Store the index in Postgres."),
        step(&all, "Store the index in SQLite instead of Postgres."),
    );
    assert_eq!(
        n.supersedes.as_deref(),
        Some(&[o.id.clone(), "20250101T000000".into()][..])
    );
    assert_eq!(o.superseded_by, std::slice::from_ref(&n.id));
    assert_eq!(n.supersedes_unknown, ["20250101T000000"]);
    assert!(n.superseded_by.is_empty());

    let recent = env.rutter(&["recent"]).stdout;
    let newer_id = short_id(&env, "instead of Postgres");
    assert!(
        recent.contains(&format!(
            "Store the index in Postgres. [superseded by {newer_id}]"
        )),
        "{recent}"
    );
    assert!(
        recent.contains("[supersedes 20250101T000000: no such entry]"),
        "{recent}"
    );
    // Newest first: the newer decision leads.
    assert!(recent.find("instead of Postgres").unwrap() < recent.find("in Postgres.").unwrap());

    let log = env.rutter(&["log"]).stdout;
    assert!(
        log.contains(&format!(
            "Store the index in Postgres.  (superseded by {})",
            n.id
        )),
        "{log}"
    );
    let log: Vec<LogRow> = decode(&env.rutter(&["log", "--json"]).stdout);
    let older = log.iter().find(|r| r.id == o.id).unwrap();
    assert_eq!(older.superseded_by, std::slice::from_ref(&n.id));

    let cited = env.rutter(&["cited-by", "Notes/a.md"]).stdout;
    assert!(
        cited.contains(&format!("[superseded by {newer_id}]")),
        "{cited}"
    );
    let cited: CitedBy = decode(&env.rutter(&["cited-by", "--json", "Notes/a.md"]).stdout);
    let older = cited.decisions.iter().find(|d| d.id == o.id).unwrap();
    assert_eq!(older.superseded_by, std::slice::from_ref(&n.id));
    assert_eq!(older.supersedes, None);

    let page = env.rutter(&["timeline"]).stdout;
    assert!(
        page.contains(&format!("[superseded by {newer_id}]")),
        "timeline page"
    );

    let brief = env.rutter(&["context", "--project", "vault"]).stdout;
    assert!(
        brief.contains(&format!(
            "Store the index in Postgres. [superseded by {newer_id}] (id {old})"
        )),
        "{brief}"
    );
    // git itself reads what was written.
    env.git(&["fsck", "--no-progress"]);
}

#[test]
fn retracting_the_newer_decision_makes_the_older_current_again() {
    let env = Env::git_vault();
    assert_eq!(
        env.capture_at("2026-12-01T09:00:00.000Z", "Ship on Fridays.", &[])
            .code,
        0
    );
    let old = short_id(&env, "Ship on Fridays.");
    let mut c = env.cmd();
    c.env("RUTTER_TIMESTAMP", "2026-12-02T09:00:00.000Z")
        .args(["capture"]);
    let payload = json!({"summary": "Ship on Mondays, not Fridays.", "refs": [], "supersedes": [old], "session_id": "T"});
    let r = run_with_stdin(&mut c, payload.to_string().as_bytes());
    assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
    assert!(!step(&steps(&env), "Ship on Fridays.")
        .superseded_by
        .is_empty());
    let newer = short_id(&env, "Ship on Mondays");
    let r = env.rutter(&["retract", &newer, "--reason", "Mondays were a typo."]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let all = steps(&env);
    assert!(step(&all, "Ship on Fridays.").superseded_by.is_empty());
    assert!(!env.rutter(&["recent"]).stdout.contains("superseded"));
}

#[tokio::test]
async fn librarian_record_supersedes_and_librarian_recent_shows_ids_and_marks() {
    let env = Env::git_vault();
    assert_eq!(
        env.capture_at("2026-12-01T09:00:00.000Z", "Use tabs.", &[])
            .code,
        0
    );
    let mut cmd = env.cmd();
    cmd.args(["mcp", "--allow-record"]);
    let (transport, _) = TokioChildProcess::builder(tokio::process::Command::from(cmd))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let client = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("codex", "1.0.0"),
    )
    .serve(transport)
    .await
    .unwrap();
    let call = |name: &'static str, args: Value| {
        let client = &client;
        async move {
            let params =
                CallToolRequestParams::new(name).with_arguments(args.as_object().cloned().unwrap());
            let r = client.call_tool(params).await.unwrap();
            r.content[0].as_text().unwrap().text.clone()
        }
    };
    let before = call("librarian-recent", json!({})).await;
    let line = before.lines().find(|l| l.contains("Use tabs.")).unwrap();
    let id = line
        .rsplit_once("(id ")
        .unwrap()
        .1
        .trim_end_matches(')')
        .to_string();
    assert!(id.starts_with("20261201T09"), "{line}");
    let recorded = call(
        "librarian-record",
        json!({"summary": "Use spaces, not tabs.", "supersedes": [id]}),
    )
    .await;
    assert!(recorded.contains("captured 1 entry"), "{recorded}");
    let after = call("librarian-recent", json!({})).await;
    let old = after.lines().find(|l| l.contains("Use tabs.")).unwrap();
    assert!(old.contains("[superseded by "), "{after}");
    let bad = client
        .call_tool(
            CallToolRequestParams::new("librarian-record").with_arguments(
                json!({"summary": "x", "supersedes": "not a list"})
                    .as_object()
                    .cloned()
                    .unwrap(),
            ),
        )
        .await
        .unwrap();
    assert_eq!(bad.is_error, Some(true));
    client.cancel().await.unwrap();
}

#[test]
fn a_supersede_made_on_one_machine_marks_the_entry_on_the_other() {
    let (net, a) = Net::new();
    let b = net.machine("b");
    assert_eq!(
        net.capture(&a, "2026-12-01T09:00:00.000Z", "Deploy from CI only.")
            .code,
        0
    );
    assert_eq!(net.sync(&a).code, 0);
    assert_eq!(net.sync(&b).code, 0);
    let recent = net.rut(&b, &["recent"]).stdout;
    let old = recent
        .lines()
        .find(|l| l.contains("Deploy from CI only."))
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .to_string();
    let mut c = net.cmd(&b);
    c.env("RUTTER_TIMESTAMP", "2026-12-02T09:00:00.000Z")
        .args(["capture"]);
    let payload = json!({"summary": "Deploy from CI or by hand in an outage.", "supersedes": [old], "session_id": "B"});
    let r = run_with_stdin(&mut c, payload.to_string().as_bytes());
    assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
    assert_eq!(net.sync(&b).code, 0);
    assert_eq!(net.sync(&a).code, 0);
    let on_a = net.rut(&a, &["recent"]).stdout;
    assert!(
        on_a.contains("Deploy from CI only. [superseded by "),
        "{on_a}"
    );
    let v = net.rut(&a, &["verify", "--full"]);
    assert_eq!(v.code, 0, "{}{}", v.stdout, v.stderr);
}
