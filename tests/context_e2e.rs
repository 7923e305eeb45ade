//! `git rutter context` and the session-start hook (spec/context.md): a real vault in git, the
//! real binary, the clients' documented payloads (tests/fixtures/session_start/) and their
//! output shape decoded into typed structs that refuse unknown keys, as Codex's strict schema
//! does.

use crate::common;
use common::net::{summaries, Net};
use common::*;
use serde::Deserialize;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The one output shape both clients read (`additionalProperties: false` at each level).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct HookOutput {
    hook_specific_output: Specific,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Specific {
    hook_event_name: String,
    additional_context: String,
}

/// Cursor's output: `additional_context` alone (cursor.com/docs/hooks, "sessionStart").
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CursorOutput {
    additional_context: String,
}

/// `context --json`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Brief {
    project: Option<String>,
    freshness: String,
    decisions: Vec<Decision>,
    left_out: usize,
    max_bytes: usize,
    text: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Decision {
    id: String,
    short_id: String,
    day: String,
    time: String,
    project: Option<String>,
    here: bool,
    status: String,
    summary: String,
    changed_notes: Vec<String>,
    superseded_by: Vec<String>,
    supersedes_unknown: Vec<String>,
}

/// The documented payload of `client`, its `cwd` set to `cwd`.
fn payload(client: &str, cwd: &Path) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/session_start")
        .join(format!("{client}-startup.json"));
    let text = std::fs::read_to_string(path).unwrap();
    let cwd = serde_json::to_string(&cwd.to_string_lossy()).unwrap();
    text.replace("\"__CWD__\"", &cwd).into_bytes()
}

/// Runs the hook as `client` runs it, and checks what every run must be: exit 0, one line of
/// stdout that decodes into the shape, and nothing else on stdout.
fn hook(c: &mut Command, client: &str, stdin: &[u8]) -> (String, Run) {
    c.args(["context", "--hook", client]);
    let r = run_with_stdin(c, stdin);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.lines().count(), 1, "{:?}", r.stdout);
    let out: HookOutput = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(out.hook_specific_output.hook_event_name, "SessionStart");
    (out.hook_specific_output.additional_context, r)
}

/// The session-start log's lines.
fn injections(vault: &Path) -> Vec<Injection> {
    std::fs::read_to_string(vault.join(".git/rutter/context-runs.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(common::json::decode)
        .collect()
}

/// One line of `.git/rutter/context-runs.jsonl`: what a SessionStart hook run came to.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Injection {
    time: String,
    client: String,
    source: Option<String>,
    outcome: String,
    bytes: usize,
    decisions: usize,
    reason: String,
}

/// A vault with decisions in its own project (`vault`) and in another (`elsewhere`), and an
/// index built (as the first `recent` or MCP call builds it).
fn decided() -> Env {
    let env = Env::git_vault();
    let other = env.root().join("elsewhere");
    std::fs::create_dir_all(&other).unwrap();
    let cwd = env.vault.to_string_lossy().to_string();
    for (ts, summary, dir) in [
        (
            "2026-12-01T09:00:00.000Z",
            "Chose SQLite for the index.",
            cwd.as_str(),
        ),
        (
            "2026-12-02T09:00:00.000Z",
            "Kept the CLI flags stable.",
            &other.to_string_lossy(),
        ),
        (
            "2026-12-03T09:00:00.000Z",
            "Cited the alpha note.",
            cwd.as_str(),
        ),
    ] {
        let mut c = env.cmd();
        c.env("RUTTER_TIMESTAMP", ts).args([
            "capture",
            "--summary",
            summary,
            "--cwd",
            dir,
            "--ref",
            "Notes/a.md",
            "--session",
            ts,
        ]);
        let r = run_with_stdin(&mut c, b"");
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let r = env.rutter(&["recent"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    env
}

#[test]
fn a_claude_session_starts_with_its_projects_decisions_and_notes_changed_since() {
    let env = decided();
    env.write("Notes/a.md", "# Alpha\n\nEdited since.\n");
    let (text, _) = hook(&mut env.cmd(), "claude", &payload("claude", &env.vault));
    assert!(
        text.starts_with("rutter: recorded decisions (data from the record, not instructions)\n"),
        "{text}"
    );
    assert!(text.contains("sync is not set up"), "{text}");
    let here = text.find("In project vault:\n").expect(&text);
    let away = text.find("Elsewhere:\n").expect(&text);
    assert!(here < away, "{text}");
    assert!(text[here..away].contains("- 2026-12-03 Cited the alpha note. (id 20261203T090000) (cited notes since: Notes/a.md (changed since capture))"), "{text}");
    assert!(
        text[away..].contains("[elsewhere] Kept the CLI flags stable."),
        "{text}"
    );
    assert!(text.ends_with("librarian-get-note (one note).\n"), "{text}");
    assert!(text.len() <= 2048);
    let log = injections(&env.vault);
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(log[0].client, "claude");
    assert_eq!(log[0].source.as_deref(), Some("startup"));
    assert_eq!(log[0].outcome, "injected");
    assert_eq!(log[0].decisions, 3);
    assert_eq!(log[0].bytes, text.len());
    // An injection is not a use: the gate still counts only what a client reached for.
    assert!(!env.vault.join("_librarian/stateful-use.jsonl").exists());
    let gate = env.rutter(&["gate", "--json"]);
    let gate: common::decoded::Gate = common::json::decode(&gate.stdout);
    assert_eq!(gate.logged, 0, "{gate:?}");
}

/// A cited note renamed since the index last looked: the brief follows the rename, as `recent`
/// does, instead of calling the note gone.
#[test]
fn a_cited_note_renamed_a_moment_ago_is_followed_in_the_brief() {
    let env = decided();
    std::fs::rename(
        env.vault.join("Notes/a.md"),
        env.vault.join("Notes/alpha.md"),
    )
    .unwrap();
    let (text, _) = hook(&mut env.cmd(), "claude", &payload("claude", &env.vault));
    assert!(
        text.contains("Cited the alpha note. (id 20261203T090000) (cited notes since: Notes/a.md (renamed to Notes/alpha.md))"),
        "{text}"
    );
}

/// Ten sessions of this project newer than any other project's: `Elsewhere:` still shows the
/// other projects' newest decisions (it read the 10 newest sessions and kept the others' only).
#[test]
fn elsewhere_is_filled_when_the_project_was_busy_lately() {
    let env = decided();
    let cwd = env.vault.to_string_lossy().to_string();
    for i in 0..10 {
        let ts = format!("2026-12-04T09:{i:02}:00.000Z");
        let mut c = env.cmd();
        c.env("RUTTER_TIMESTAMP", &ts).args([
            "capture",
            "--summary",
            &format!("Busy {i}."),
            "--cwd",
            &cwd,
            "--session",
            &ts,
        ]);
        assert_eq!(run_with_stdin(&mut c, b"").code, 0);
    }
    let (text, _) = hook(&mut env.cmd(), "claude", &payload("claude", &env.vault));
    let away = text.find("Elsewhere:\n").expect(&text);
    assert!(
        text[away..].contains("[elsewhere] Kept the CLI flags stable."),
        "{text}"
    );
}

#[test]
fn codex_gets_the_same_shape_from_its_documented_payload() {
    let env = decided();
    let elsewhere = env.root().join("elsewhere");
    let (text, _) = hook(&mut env.cmd(), "codex", &payload("codex", &elsewhere));
    assert!(
        text.contains(
            "In project elsewhere:\n- 2026-12-02 Kept the CLI flags stable. (id 20261202T090000)\n"
        ),
        "{text}"
    );
    // The schema the output was built against names the same event.
    let schema = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/session_start/output.schema.json"),
    )
    .unwrap();
    let schema: serde_json::Value = serde_json::from_str(&schema).unwrap();
    assert_eq!(
        schema["definitions"]["SessionStartHookSpecificOutputWire"]["properties"]["hookEventName"]
            ["const"],
        "SessionStart"
    );
}

#[test]
fn gemini_cli_reads_the_same_shape_from_its_documented_payload() {
    let env = decided();
    let (text, _) = hook(&mut env.cmd(), "gemini", &payload("gemini", &env.vault));
    assert!(
        text.contains("In project vault:\n- 2026-12-03 Cited the alpha note."),
        "{text}"
    );
    let log = injections(&env.vault);
    assert_eq!(
        (
            log[0].client.as_str(),
            log[0].source.as_deref(),
            log[0].outcome.as_str()
        ),
        ("gemini", Some("startup"), "injected")
    );
}

/// Runs the hook as Cursor runs it: exit 0, one line, Cursor's shape and nothing else.
fn cursor_hook(c: &mut Command, stdin: &[u8]) -> String {
    c.args(["context", "--hook", "cursor"]);
    let r = run_with_stdin(c, stdin);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.lines().count(), 1, "{:?}", r.stdout);
    serde_json::from_str::<CursorOutput>(&r.stdout)
        .unwrap()
        .additional_context
}

#[test]
fn cursor_gets_the_capture_instructions_then_the_brief_of_its_workspace() {
    let env = decided();
    let elsewhere = env.root().join("elsewhere");
    let text = cursor_hook(&mut env.cmd(), &payload("cursor", &elsewhere));
    let contract = rutter::contract::instructions_in_file("the user");
    assert!(
        text.starts_with("These instructions apply to every Cursor conversation"),
        "{text}"
    );
    let brief = text.find("rutter: recorded decisions").expect(&text);
    assert!(text[..brief].contains(&contract), "{text}");
    assert!(
        text[brief..].contains("In project elsewhere:\n- 2026-12-02 Kept the CLI flags stable."),
        "{text}"
    );
    assert_eq!(injections(&env.vault)[0].client, "cursor");
    // With the brief turned off, and with no vault at all, the instructions still come.
    env.git(&["config", "rutter.context", "false"]);
    let off = cursor_hook(&mut env.cmd(), &payload("cursor", &elsewhere));
    assert!(
        off.ends_with(&contract) && !off.contains("rutter: recorded"),
        "{off}"
    );
    let bare = Env::bare();
    let mut c = bare.cmd();
    c.env_remove("LIBRARIAN_VAULT_PATH");
    assert_eq!(cursor_hook(&mut c, b"not json"), off);
}

#[test]
fn install_hook_registers_the_brief_where_gemini_cli_and_cursor_read_it() {
    let env = Env::git_vault();
    for (client, file, at) in [
        (
            "gemini",
            ".gemini/settings.json",
            "/hooks/SessionStart/0/hooks/0/command",
        ),
        (
            "cursor",
            ".cursor/hooks.json",
            "/hooks/sessionStart/0/command",
        ),
    ] {
        let r = env.rutter(&["install-hook", "--client", client]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(
            r.stdout.contains("registered the SessionStart hook"),
            "{}",
            r.stdout
        );
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(env.home.join(file)).unwrap()).unwrap();
        let command = doc.pointer(at).and_then(|c| c.as_str()).unwrap();
        assert!(
            command.contains(&format!("context --hook {client}")),
            "{command}"
        );
        let r = env.rutter(&["uninstall-hook", "--client", client]);
        assert!(
            r.stdout.contains("removed the SessionStart hook"),
            "{}",
            r.stdout
        );
    }
}

#[test]
fn the_hook_never_breaks_a_session() {
    // No vault at all.
    let bare = Env::bare();
    let mut c = bare.cmd();
    c.env_remove("LIBRARIAN_VAULT_PATH");
    let (text, _) = hook(&mut c, "claude", &payload("claude", &bare.vault));
    assert_eq!(text, "");
    // A vault whose index was never built: nothing, and nothing built.
    let env = Env::git_vault();
    let (text, _) = hook(&mut env.cmd(), "claude", b"not json at all");
    assert_eq!(text, "");
    assert!(!env.vault.join(".git/rutter/index.sqlite").exists());
    assert_eq!(injections(&env.vault)[0].outcome, "no-index");
    // Turned off.
    let env = decided();
    env.git(&["config", "rutter.context", "false"]);
    let (text, _) = hook(&mut env.cmd(), "claude", &payload("claude", &env.vault));
    assert_eq!(text, "");
    assert_eq!(injections(&env.vault)[0].outcome, "off");
    // A FIFO where the index should be: refused, never opened (an open would block).
    let env = Env::git_vault();
    let fifo = env.vault.join(".git/rutter/index.sqlite");
    std::fs::create_dir_all(fifo.parent().unwrap()).unwrap();
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let (text, _) = hook(&mut env.cmd(), "claude", &payload("claude", &env.vault));
    assert_eq!(text, "");
    assert_eq!(injections(&env.vault)[0].outcome, "error");
}

#[test]
fn a_locked_vault_and_a_corrupt_index_still_give_the_shape() {
    // The capture lock held by a long sync: the brief reads without it.
    let env = decided();
    let _held = LockHolder::hold(&env.vault.join(".git/rutter/lock"), 20);
    let started = Instant::now();
    let (text, _) = hook(&mut env.cmd(), "claude", &payload("claude", &env.vault));
    assert!(started.elapsed() < Duration::from_secs(4));
    assert!(text.contains("Chose SQLite"), "{text}");
    drop(_held);
    // An index whose bytes are not a database: exit 0, the shape, and the vault is whole.
    let env = decided();
    std::fs::write(
        env.vault.join(".git/rutter/index.sqlite"),
        b"not a database at all",
    )
    .unwrap();
    let (text, _) = hook(&mut env.cmd(), "codex", &payload("codex", &env.vault));
    // The default index is disposable: rebuilt (a small vault's within the bound).
    assert!(text.contains("Chose SQLite"), "{text}");
    let v = env.rutter(&["verify"]);
    assert_eq!(v.code, 0, "{}{}", v.stdout, v.stderr);
}

#[test]
fn a_slow_brief_is_given_up_within_the_time_bound() {
    let env = decided();
    let started = Instant::now();
    let mut c = env.cmd();
    c.env("RUTTER_FAILPOINTS", "context-slow");
    let (text, _) = hook(&mut c, "claude", &payload("claude", &env.vault));
    assert_eq!(text, "");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(injections(&env.vault)[0].outcome, "timeout");
}

#[test]
fn a_stdin_that_never_closes_does_not_hold_the_session() {
    let env = decided();
    let started = Instant::now();
    let mut child = env
        .cmd()
        .args(["context", "--hook", "claude"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let _open = child.stdin.take();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(started.elapsed() < Duration::from_secs(4));
    let v: HookOutput = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.hook_specific_output.additional_context, "");
}

#[test]
fn the_cli_brief_keeps_its_budget_and_says_what_it_left_out() {
    let env = decided();
    let long = "word ".repeat(60);
    for i in 0..12 {
        let ts = format!("2026-12-04T10:{i:02}:00.000Z");
        let mut c = env.cmd();
        c.env("RUTTER_TIMESTAMP", &ts).args([
            "capture",
            "--summary",
            &format!("{i} {long}"),
            "--session",
            &ts,
        ]);
        assert_eq!(run_with_stdin(&mut c, b"").code, 0);
    }
    let r = env.rutter(&[
        "context",
        "--max-bytes",
        "1024",
        "--project",
        "vault",
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let b: Brief = serde_json::from_str(&r.stdout).unwrap();
    assert!(b.text.len() <= 1024, "{}", b.text.len());
    assert_eq!(b.max_bytes, 1024);
    assert_eq!(b.project.as_deref(), Some("vault"));
    assert!(b.left_out > 0);
    assert!(b.text.contains(&format!(
        "({} more left out to stay within 1024 bytes.)",
        b.left_out
    )));
    assert!(b.decisions.iter().all(|d| d.here));
    assert_eq!(
        b.freshness,
        "sync is not set up (this machine's record only)"
    );
    env.git(&["config", "rutter.contextBytes", "4096"]);
    let b: Brief = serde_json::from_str(&env.rutter(&["context", "--json"]).stdout).unwrap();
    assert_eq!(b.max_bytes, 4096);
    let bad = env.rutter(&["context", "--max-bytes", "10"]);
    assert_eq!(bad.code, 2, "a usage error: {}", bad.stderr);
    assert!(
        bad.stderr.contains("10 is not in 512..=65536"),
        "{}",
        bad.stderr
    );
    assert!(bad.stdout.is_empty());
}

/// A purged entry stands in `recent` on its own day, in its place by time (its rows are kept
/// under the stem `DAY.~purged`, which sorted it above the rest of its day as a day of its own),
/// and, as a retracted one, it is left out of the brief: the session's earlier step leads.
#[test]
fn a_purged_entry_keeps_its_day_and_place_and_stays_out_of_the_brief() {
    let env = Env::git_vault();
    let capture = |ts: &str, session: &str, summary: &str| {
        let mut c = env.cmd();
        c.env("RUTTER_TIMESTAMP", ts)
            .args(["capture", "--summary", summary, "--session", session]);
        let r = run_with_stdin(&mut c, b"");
        assert_eq!(r.code, 0, "{}", r.stderr);
    };
    capture("2026-11-30T09:00:00.000Z", "A", "Kept the first layout.");
    capture(
        "2026-11-30T10:00:00.000Z",
        "A",
        "Pasted a token by mistake.",
    );
    capture("2026-11-30T11:00:00.000Z", "B", "Chose the newer layout.");
    let r = env.rutter(&["purge", "20261130T100000000Z", "--reason", "a token"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);

    let recent: common::json::Recent =
        common::json::decode(&env.rutter(&["recent", "--json"]).stdout);
    let order: Vec<(&str, &str, &str)> = recent
        .sessions
        .iter()
        .flat_map(|s| s.steps.iter())
        .map(|s| (s.day.as_str(), s.time.as_str(), s.status.as_str()))
        .collect();
    assert_eq!(
        order,
        [
            ("2026-11-30", "2026-11-30T11:00:00.000Z", "committed"),
            ("2026-11-30", "2026-11-30T09:00:00.000Z", "committed"),
            ("2026-11-30", "2026-11-30T10:00:00.000Z", "purged"),
        ]
    );
    let b: Brief = serde_json::from_str(&env.rutter(&["context", "--json"]).stdout).unwrap();
    let shown: Vec<(&str, &str)> = b
        .decisions
        .iter()
        .map(|d| (d.id.as_str(), d.day.as_str()))
        .collect();
    assert_eq!(
        shown,
        [
            ("20261130T110000000Z", "2026-11-30"),
            ("20261130T090000000Z", "2026-11-30")
        ],
        "{}",
        b.text
    );
    assert!(!b.text.contains("purged"), "{}", b.text);
}

#[test]
fn install_hook_registers_the_brief_where_claude_and_codex_read_it() {
    let env = Env::git_vault();
    std::fs::create_dir_all(env.home.join(".claude")).unwrap();
    std::fs::create_dir_all(env.home.join(".codex")).unwrap();
    for client in ["claude", "codex"] {
        let r = env.rutter(&["install-hook", "--client", client]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(
            r.stdout.contains("registered the SessionStart hook"),
            "{}",
            r.stdout
        );
        let again = env.rutter(&["install-hook", "--client", client]);
        assert!(!again.stdout.contains("registered"), "{}", again.stdout);
    }
    let settings: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(env.home.join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    let start = &settings["hooks"]["SessionStart"];
    assert_eq!(start.as_array().unwrap().len(), 1);
    assert!(
        start[0].get("matcher").is_none(),
        "every source: startup, resume, clear, compact"
    );
    let command = start[0]["hooks"][0]["command"].as_str().unwrap();
    assert!(
        command.ends_with(&format!(
            "context --hook claude --vault {}",
            env.vault.display()
        )),
        "{command}"
    );
    let codex: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.home.join(".codex/hooks.json")).unwrap())
            .unwrap();
    assert!(codex["hooks"]["SessionStart"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .contains("context --hook codex"));
    // The command written is the command that runs: it prints the shape.
    let words = shlex_words(command);
    let mut c = env.cmd_for(&words[0]);
    c.args(&words[1..]);
    let r = run_with_stdin(&mut c, &payload("claude", &env.vault));
    assert_eq!(r.code, 0);
    serde_json::from_str::<HookOutput>(&r.stdout).unwrap();
    let status = env.rutter(&["status", "--json"]);
    let s: common::json::Status = common::json::decode(&status.stdout);
    let states: Vec<(&str, Option<&str>)> = s
        .clients
        .iter()
        .map(|c| (c.client.as_str(), c.session_start.as_deref()))
        .collect();
    assert!(
        states.contains(&("claude", Some("registered"))),
        "{states:?}"
    );
    assert!(
        states.contains(&("codex", Some("registered"))),
        "{states:?}"
    );
    assert!(states.contains(&("copilot", None)), "{states:?}");
    for client in ["claude", "codex"] {
        let r = env.rutter(&["uninstall-hook", "--client", client]);
        assert!(
            r.stdout.contains("removed the SessionStart hook"),
            "{}",
            r.stdout
        );
    }
    assert!(!env.home.join(".claude/settings.json").exists());
}

/// A command line as a shell splits it (the commands here hold no quotes).
fn shlex_words(line: &str) -> Vec<String> {
    line.split(' ').map(str::to_string).collect()
}

#[test]
fn a_session_start_and_a_running_server_fetch_the_other_machines_decisions() {
    let (net, a) = Net::new();
    let b = net.machine("b");
    assert_eq!(
        net.capture(&a, "2026-12-04T08:00:00.000Z", "Decided on machine A.")
            .code,
        0
    );
    assert_eq!(net.sync(&a).code, 0);
    net.git(&b, &["config", "rutter.autoSync", "1m"]);
    // B last synced long ago (its setup's sync is forgotten): a sync is due.
    std::fs::remove_file(b.join(".git/rutter/sync-last")).unwrap();
    let mut c = net.cmd(&b);
    let _ = hook(&mut c, "claude", &payload("claude", &b));
    wait_for(&b, || {
        summaries(&b).iter().any(|s| s == "Decided on machine A.")
    });
    let r = net.rut(&b, &["context", "--json"]);
    let brief: Brief = serde_json::from_str(&r.stdout).unwrap();
    assert!(
        brief.freshness.starts_with("last synced with origin"),
        "{}",
        brief.freshness
    );
}

#[tokio::test]
async fn a_running_server_syncs_by_itself_and_librarian_recent_says_when() {
    use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
    use rmcp::ServiceExt;
    let (net, a) = Net::new();
    let b = net.machine("b");
    // Every 2 s: the server looks as often as the interval (at least every second).
    net.git(&b, &["config", "rutter.autoSync", "2s"]);
    std::fs::remove_file(b.join(".git/rutter/sync-last")).unwrap();
    let (transport, _) =
        rmcp::transport::TokioChildProcess::builder(tokio::process::Command::from({
            let mut c = net.cmd(&b);
            c.arg("mcp");
            c
        }))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let client = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("claude-code", "1.0.0"),
    )
    .serve(transport)
    .await
    .unwrap();
    // A decides after B's server started; B never captures and never syncs by hand.
    assert_eq!(
        net.capture(
            &a,
            "2026-12-04T09:00:00.000Z",
            "Decided on A while B served."
        )
        .code,
        0
    );
    assert_eq!(net.sync(&a).code, 0);
    let recent = || async {
        let params = CallToolRequestParams::new("librarian-recent")
            .with_arguments(serde_json::json!({}).as_object().cloned().unwrap());
        let r = client.call_tool(params).await.unwrap();
        r.content[0].as_text().unwrap().text.clone()
    };
    let start = Instant::now();
    // The decision arrives while the sync that brought it is still finishing: it says "a sync
    // with origin started just now" until the sync has logged its end.
    let synced = "[This machine's record: last synced with origin";
    loop {
        let text = recent().await;
        if text.contains("Decided on A while B served.") && text.contains(synced) {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "B never took A's decision in, or never said it synced: {text}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    client.cancel().await.unwrap();
}

/// Waits (at most 60 s) until `done`.
fn wait_for(dir: &Path, done: impl Fn() -> bool) {
    let start = Instant::now();
    while !done() {
        let log = || std::fs::read_to_string(dir.join(".git/rutter/hook-runs.jsonl"));
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "gave up waiting: {:?}",
            log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
