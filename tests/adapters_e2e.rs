//! End to end: each client's realistic Stop payload (tests/fixtures/clients/<client>/, written
//! from the clients' public hook documentation or captured payload shapes) fed to the built
//! binary as its hook runs it, `capture --client NAME`: the turn's directives land as entries
//! with the client's label, and only them (not an earlier turn's, a subagent's, a tool's output
//! or an example in code). Truncated and malformed payloads and events that are not a main
//! agent's stop capture nothing, with exit 0 and an empty stdout. A repository that opted out
//! (`git config rutter.capture false`) is skipped, saying how to turn it back on.

use crate::common;
use common::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

const BEDS: &str = "Chose raised beds over in-ground rows for the vegetable garden, because the clay soil drains badly.";
const SEEDS: &str =
    "Ordered the tomato and bean seeds for the spring planting; the order is due on 20 March.";

fn fixture(client: &str, name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/clients")
        .join(client)
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The project the session runs in: a git repository `garden` with an origin remote.
fn project(env: &Env) -> PathBuf {
    let dir = env.root().join("code/garden");
    if !dir.join(".git").exists() {
        std::fs::create_dir_all(&dir).unwrap();
        env.git_in(&dir, &["init", "-q", "-b", "main"]);
        env.git_in(
            &dir,
            &[
                "remote",
                "add",
                "origin",
                "https://dev:secret@git.example.com/dev/garden.git",
            ],
        );
    }
    dir
}

/// A fixture payload with some fields replaced (paths of this test's files).
fn payload(client: &str, name: &str, set: Value) -> Vec<u8> {
    let mut v: Value = serde_json::from_str(&fixture(client, name)).unwrap();
    let obj = v.as_object_mut().unwrap();
    for (k, field) in set.as_object().unwrap() {
        if field.is_null() {
            obj.remove(k);
        } else {
            obj.insert(k.clone(), field.clone());
        }
    }
    v.to_string().into_bytes()
}

/// Runs the hook command of `client` with `stdin` and extra environment variables.
fn hook(env: &Env, client: &str, stdin: &[u8], vars: &[(&str, &Path)]) -> Run {
    let mut c = env.cmd();
    c.args(["capture", "--client", client]);
    for (k, v) in vars {
        c.env(k, v);
    }
    let r = run_with_stdin(&mut c, stdin);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "", "stdout must stay empty");
    r
}

/// Asserts that the run's stderr holds `text`.
fn said(r: &Run, text: &str) {
    assert!(r.stderr.contains(text), "wanted {text:?} in:\n{}", r.stderr);
}

/// The newest run in the hook-run log (spec/status.md).
fn last_run(env: &Env) -> Value {
    let log = std::fs::read_to_string(env.vault.join(".git/rutter/hook-runs.jsonl")).unwrap();
    serde_json::from_str(log.lines().last().unwrap()).unwrap()
}

/// `(summary, client)` of every entry, in file order.
fn landed(env: &Env) -> Vec<(String, String)> {
    env.entries()
        .iter()
        .map(|e| {
            (
                e["summary"].as_str().unwrap().to_string(),
                e["client"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn want(summaries: &[&str], client: &str) -> Vec<(String, String)> {
    summaries
        .iter()
        .map(|s| (s.to_string(), client.to_string()))
        .collect()
}

/// The entries carry the session's workspace, with the remote's credentials stripped.
fn assert_workspace(env: &Env, project_dir: &Path) {
    for e in env.entries() {
        assert_eq!(e["workspace"]["project"], "garden", "{e}");
        assert_eq!(e["workspace"]["cwd"], project_dir.display().to_string());
        assert_eq!(
            e["workspace"]["repo"],
            "https://git.example.com/dev/garden.git"
        );
    }
}

#[test]
fn claude_code_captures_the_turn_from_its_transcript() {
    let env = Env::git_vault();
    let cwd = project(&env);
    let transcript = env.root().join("transcript.jsonl");
    std::fs::write(&transcript, fixture("claude", "transcript.jsonl")).unwrap();
    let stdin = payload(
        "claude",
        "stop.json",
        json!({"transcript_path": transcript, "cwd": cwd}),
    );
    let r = hook(&env, "claude", &stdin, &[]);
    said(&r, "captured 2 entries [garden]");
    assert_eq!(landed(&env), want(&[BEDS, SEEDS], "claude"));
    assert_workspace(&env, &cwd);
    // The Stop fires again: nothing new.
    let r = hook(&env, "claude", &stdin, &[]);
    said(&r, "all 2 directives of this turn are unchanged");
    assert_eq!(landed(&env).len(), 2);
}

#[test]
fn codex_captures_its_final_message() {
    let env = Env::git_vault();
    let cwd = project(&env);
    let r = hook(
        &env,
        "codex",
        &payload("codex", "stop.json", json!({"cwd": cwd})),
        &[],
    );
    said(&r, "captured 2 entries [garden]");
    assert_eq!(landed(&env), want(&[BEDS, SEEDS], "codex"));
    assert_workspace(&env, &cwd);
    let r = hook(
        &env,
        "codex",
        &payload("codex", "stop-null-message.json", json!({"cwd": cwd})),
        &[],
    );
    said(&r, "no session directive found; nothing captured.");
}

#[test]
fn grok_and_muse_capture_their_final_message() {
    let env = Env::git_vault();
    let cwd = project(&env);
    let grok = payload(
        "grok",
        "stop.json",
        json!({"cwd": cwd, "workspaceRoot": cwd}),
    );
    let r = hook(&env, "grok", &grok, &[]);
    said(&r, "captured 1 entry [garden]");
    let muse = payload("muse", "stop.json", json!({"cwd": cwd}));
    let r = hook(&env, "muse", &muse, &[]);
    said(&r, "captured 1 entry [garden]");
    let mut both = want(&[BEDS], "grok");
    both.extend(want(&[SEEDS], "muse"));
    assert_eq!(landed(&env), both);
    assert_workspace(&env, &cwd);
}

#[test]
fn gemini_cli_captures_the_response_of_the_turn() {
    let env = Env::git_vault();
    let cwd = project(&env);
    let stdin = payload("gemini", "stop.json", json!({"cwd": cwd}));
    let r = hook(&env, "gemini", &stdin, &[]);
    said(&r, "captured 2 entries [garden]");
    assert_eq!(landed(&env), want(&[BEDS, SEEDS], "gemini"));
    assert_workspace(&env, &cwd);
    assert_eq!(
        env.entries()[0]["session_id"],
        "6a1f0c2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b"
    );
    // The retry of a turn a hook rejected fires AfterAgent again: nothing new.
    let retry = payload(
        "gemini",
        "stop.json",
        json!({"cwd": cwd, "stop_hook_active": true}),
    );
    let r = hook(&env, "gemini", &retry, &[]);
    said(&r, "all 2 directives of this turn are unchanged");
}

#[test]
fn cursor_captures_the_agents_response_in_its_first_workspace() {
    let env = Env::git_vault();
    let cwd = project(&env);
    let other = env.root().join("code/other");
    std::fs::create_dir_all(&other).unwrap();
    let stdin = payload(
        "cursor",
        "stop.json",
        json!({"workspace_roots": [cwd, other]}),
    );
    let r = hook(&env, "cursor", &stdin, &[]);
    said(&r, "captured 2 entries [garden]");
    assert_eq!(landed(&env), want(&[BEDS, SEEDS], "cursor"));
    assert_workspace(&env, &cwd);
    assert_eq!(
        env.entries()[0]["session_id"],
        "c7a9e0f2-41d3-4b6a-9e58-2f0d1c3b4a65"
    );
    // Cursor on Windows sends a byte-order mark first: the same turn, already recorded.
    let r = hook(
        &env,
        "cursor",
        fixture("cursor", "stop-bom.json").as_bytes(),
        &[],
    );
    said(&r, "all 2 directives of this turn are unchanged");
}

#[test]
fn windsurf_captures_the_cascade_response_in_the_workspace_it_runs_in() {
    let env = Env::git_vault();
    let cwd = project(&env);
    // Cascade runs a hook in the workspace root; its payload names no directory.
    let mut c = env.cmd();
    c.current_dir(&cwd)
        .args(["capture", "--client", "windsurf"]);
    let r = run_with_stdin(&mut c, fixture("windsurf", "stop.json").as_bytes());
    assert_eq!((r.code, r.stdout.as_str()), (0, ""), "{}", r.stderr);
    said(&r, "captured 2 entries [garden]");
    assert_eq!(landed(&env), want(&[BEDS, SEEDS], "windsurf"));
    assert_workspace(&env, &cwd);
    assert_eq!(
        env.entries()[0]["session_id"],
        "b3e1c5d7-9f20-4a86-b4c2-6d8e0f1a2b3c"
    );
}

#[test]
fn opencode_captures_what_its_plugin_hands_over() {
    let env = Env::git_vault();
    let cwd = project(&env);
    let stdin = payload("opencode", "stop.json", json!({"cwd": cwd}));
    let r = hook(&env, "opencode", &stdin, &[]);
    said(&r, "captured 2 entries [garden]");
    assert_eq!(landed(&env), want(&[BEDS, SEEDS], "opencode"));
    assert_workspace(&env, &cwd);
}

/// A vault, the project, and a Copilot home holding the fixture's session log `events` (all of
/// it, or the part written before the final message), with the Stop payload naming that log.
struct Copilot {
    env: Env,
    cwd: PathBuf,
    home: PathBuf,
    log: PathBuf,
    stdin: Vec<u8>,
}

fn copilot(events: &str) -> Copilot {
    let env = Env::git_vault();
    let cwd = project(&env);
    let home = env.root().join("copilot-home");
    let id = "6f1d2c3b-8a47-4e59-b0c2-7d9e1f3a5b68";
    let log = home.join("session-state").join(id).join("events.jsonl");
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    std::fs::write(&log, fixture("copilot", events)).unwrap();
    let stdin = payload(
        "copilot",
        "stop.json",
        json!({"cwd": cwd, "transcriptPath": log}),
    );
    Copilot {
        env,
        cwd,
        home,
        log,
        stdin,
    }
}

#[test]
fn copilot_reads_the_current_turn_of_its_event_log() {
    let Copilot {
        env,
        cwd,
        home,
        stdin,
        ..
    } = copilot("events.jsonl");
    // The log named by the payload.
    let r = hook(&env, "copilot", &stdin, &[]);
    said(&r, "captured 2 entries [garden]");
    assert_eq!(landed(&env), want(&[BEDS, SEEDS], "copilot"));
    assert_workspace(&env, &cwd);
    // Found from the session id under $COPILOT_HOME, in the VS Code-compatible shape: the same
    // turn, already recorded.
    let stdin = payload(
        "copilot",
        "stop-vscode.json",
        json!({"cwd": cwd, "transcript_path": null}),
    );
    let r = hook(&env, "copilot", &stdin, &[("COPILOT_HOME", &home)]);
    said(&r, "all 2 directives of this turn are unchanged");
}

#[test]
fn copilot_waits_for_a_final_message_written_after_the_hook_started() {
    let Copilot {
        env, log, stdin, ..
    } = copilot("events-unfinished.jsonl");
    // The final message is appended only once the hook runs (and a moment later, so that it
    // has read the unfinished log): the hook must wait for it, not find it there.
    let (running, hook_started) = std::sync::mpsc::channel::<()>();
    let appender = std::thread::spawn(move || {
        hook_started.recv().unwrap();
        std::thread::sleep(Duration::from_millis(400));
        let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        std::io::Write::write_all(&mut f, fixture("copilot", "events-final.jsonl").as_bytes())
            .unwrap();
    });
    // A wait far longer than the append takes, so a loaded machine cannot make it flaky; the
    // hook returns as soon as the final message is there.
    let mut c = env.cmd();
    c.args(["capture", "--client", "copilot"])
        .env("RUTTER_TURN_WAIT_MS", "30000");
    let r = run_with_stdin_and(&mut c, &stdin, || running.send(()).unwrap());
    appender.join().unwrap();
    assert_eq!((r.code, r.stdout.as_str()), (0, ""), "{}", r.stderr);
    said(&r, "captured 2 entries [garden]");
    assert_eq!(landed(&env), want(&[BEDS, SEEDS], "copilot"));
}

#[test]
fn copilot_captures_what_was_written_when_the_wait_runs_out_and_says_so() {
    let Copilot {
        env, cwd, stdin, ..
    } = copilot("events-unfinished.jsonl");
    let mut c = env.cmd();
    c.args(["capture", "--client", "copilot"])
        .env("RUTTER_TURN_WAIT_MS", "300");
    let r = run_with_stdin(&mut c, &stdin);
    assert_eq!((r.code, r.stdout.as_str()), (0, ""), "{}", r.stderr);
    said(
        &r,
        "the turn's final message was not in the events.jsonl within",
    );
    assert_eq!(landed(&env), want(&[BEDS], "copilot"));
    // A log that never appears: one line, nothing captured.
    let stdin = payload(
        "copilot",
        "stop.json",
        json!({"cwd": cwd, "transcriptPath": env.root().join("missing/events.jsonl")}),
    );
    let r = run_with_stdin(&mut c, &stdin);
    said(&r, "cannot read transcript");
    said(&r, "nothing captured.");
}

const AGY_CONVERSATION: &str = "ec33ebf9-0cba-4100-8142-c61503f6c587";

/// Writes the fixture's full transcript into `logs`, feeds agy's Stop payload with `path` as its
/// `transcriptPath` (none when `None`) and checks that the turn landed.
fn agy_captures(env: &Env, logs: &Path, path: Option<PathBuf>) {
    let cwd = project(env);
    std::fs::create_dir_all(logs).unwrap();
    std::fs::write(
        logs.join("transcript_full.jsonl"),
        fixture("agy", "transcript_full.jsonl"),
    )
    .unwrap();
    let stdin = payload(
        "agy",
        "stop.json",
        json!({"workspacePaths": [cwd], "transcriptPath": path}),
    );
    let r = hook(env, "agy", &stdin, &[]);
    said(&r, "captured 2 entries [garden]");
    assert_eq!(landed(env), want(&[BEDS, SEEDS], "agy"));
    assert_workspace(env, &cwd);
    assert_eq!(env.entries()[0]["session_id"], AGY_CONVERSATION);
}

#[test]
fn agy_reads_the_current_turn_of_its_full_transcript() {
    let env = Env::git_vault();
    let logs = env.root().join("brain/ec33ebf9/.system_generated/logs");
    // The shortened transcript the payload names holds only the prompt; the full one beside it
    // holds the turn.
    std::fs::create_dir_all(&logs).unwrap();
    let short = logs.join("transcript.jsonl");
    std::fs::write(
        &short,
        "{\"step_index\":0,\"source\":\"USER_EXPLICIT\",\"type\":\"USER_INPUT\",\"content\":\"x\"}\n",
    )
    .unwrap();
    agy_captures(&env, &logs, Some(short));
}

#[test]
fn agy_finds_the_transcript_of_the_conversation_under_home() {
    let env = Env::git_vault();
    let logs = env
        .home
        .join(".gemini/antigravity-cli/brain")
        .join(AGY_CONVERSATION)
        .join(".system_generated/logs");
    agy_captures(&env, &logs, None);
}

#[test]
fn truncated_malformed_and_subagent_payloads_capture_nothing() {
    let env = Env::git_vault();
    let cases: &[(&str, &str, &str)] = &[
        ("claude", "stop-truncated.json", "stdin is not a JSON hook payload; nothing captured."),
        ("claude", "stop-malformed.json", "stdin is not a claude Stop payload (`transcript_path`: invalid type: integer `42`, expected a string); nothing captured."),
        ("claude", "subagent-stop.json", "this claude event is not the end of a main agent's turn; nothing captured."),
        ("codex", "stop-truncated.json", "stdin is not a JSON hook payload; nothing captured."),
        ("codex", "stop-malformed.json", "stdin is not a codex Stop payload ("),
        ("codex", "subagent-stop.json", "this codex event is not the end of a main agent's turn; nothing captured."),
        ("grok", "stop-truncated.json", "stdin is not a JSON hook payload; nothing captured."),
        ("grok", "stop-malformed.json", "stdin is not a grok Stop payload ("),
        ("grok", "subagent-stop.json", "this grok event is not the end of a main agent's turn; nothing captured."),
        ("copilot", "stop-truncated.json", "stdin is not a JSON hook payload; nothing captured."),
        ("copilot", "stop-malformed.json", "stdin is not a copilot Stop payload ("),
        ("agy", "stop-truncated.json", "stdin is not a JSON hook payload; nothing captured."),
        ("agy", "stop-malformed.json", "stdin is not an agy Stop payload ("),
        ("muse", "stop-truncated.json", "stdin is not a JSON hook payload; nothing captured."),
        ("muse", "stop-malformed.json", "stdin is not a muse Stop payload ("),
        ("cursor", "stop-truncated.json", "stdin is not a JSON hook payload; nothing captured."),
        ("cursor", "stop-malformed.json", "stdin is not a cursor Stop payload ("),
        ("cursor", "stop-event.json", "this cursor event is not the end of a main agent's turn; nothing captured."),
        ("gemini", "stop-truncated.json", "stdin is not a JSON hook payload; nothing captured."),
        ("gemini", "stop-malformed.json", "stdin is not a gemini Stop payload ("),
        ("opencode", "stop-truncated.json", "stdin is not a JSON hook payload; nothing captured."),
        ("opencode", "stop-malformed.json", "stdin is not an opencode Stop payload ("),
        ("windsurf", "stop-truncated.json", "stdin is not a JSON hook payload; nothing captured."),
        ("windsurf", "pre-user-prompt.json", "this windsurf event is not the end of a main agent's turn; nothing captured."),
        ("windsurf", "stop-malformed.json", "stdin is not a windsurf Stop payload ("),
    ];
    for (client, name, line) in cases {
        let r = hook(&env, client, fixture(client, name).as_bytes(), &[]);
        assert!(
            r.stderr.contains(&format!("[librarian-capture] {line}")),
            "{client} {name}: {}",
            r.stderr
        );
        said(&r, "in vault ");
    }
    assert!(env.day_files().is_empty(), "nothing may be written");
    // The last one, a subagent's stop, is logged as skipped; a malformed payload as malformed.
    assert_eq!(last_run(&env)["outcome"], "malformed");
    hook(
        &env,
        "grok",
        fixture("grok", "subagent-stop.json").as_bytes(),
        &[],
    );
    let run = last_run(&env);
    assert_eq!(
        (&run["outcome"], &run["session"]),
        (
            &json!("skipped"),
            &json!("0198f3a2-aaaa-7c10-8b42-000000000001")
        )
    );
}

#[test]
fn a_repository_that_opted_out_is_skipped_until_it_opts_back_in() {
    let env = Env::git_vault();
    let cwd = project(&env);
    env.git_in(&cwd, &["config", "rutter.capture", "false"]);
    let stdin = payload("codex", "stop.json", json!({"cwd": cwd.join("src")}));
    let r = hook(&env, "codex", &stdin, &[]);
    let shown = cwd.display();
    said(&r, &format!("[librarian-capture] capture is turned off in {shown} (git config rutter.capture is false there); nothing captured. To capture sessions there again, run `git -C {shown} config --unset rutter.capture`."));
    assert!(env.day_files().is_empty());
    // The hook-run log says it was skipped on purpose, without naming the repository.
    let run = last_run(&env);
    assert_eq!(
        (&run["outcome"], &run["client"]),
        (&json!("skipped"), &json!("codex"))
    );
    assert!(!run["reason"].as_str().unwrap().contains("garden"), "{run}");
    // Manual captures from there are skipped too.
    let mut c = env.cmd();
    c.current_dir(&cwd)
        .args(["capture", "--summary", "By hand.", "--session", "m"]);
    let r = run_with_stdin(&mut c, b"");
    said(&r, "capture is turned off in");
    assert!(env.day_files().is_empty());
    // The command the message gives turns it back on.
    env.git_in(&cwd, &["config", "--unset", "rutter.capture"]);
    let r = hook(&env, "codex", &stdin, &[]);
    said(&r, "captured 2 entries [garden]");
    // A value that is not a boolean refuses, and names the value.
    env.git_in(&cwd, &["config", "rutter.capture", "perhaps"]);
    let r = hook(
        &env,
        "grok",
        &payload("grok", "stop.json", json!({"cwd": cwd})),
        &[],
    );
    said(&r, "rutter.capture is \"perhaps\" in");
    assert_eq!(landed(&env).len(), 2);
}

/// Claude Code's payload names a transcript that cannot be read (moved, not written yet, a
/// path of another machine) but carries the turn's final message: its directives are captured
/// and stderr says the transcript was not read; without such a message nothing is.
#[test]
fn a_claude_turn_whose_transcript_is_missing_is_captured_from_the_payloads_message() {
    let env = Env::git_vault();
    let gone = env.root().join("gone.jsonl");
    let stdin = payload("claude", "stop.json", json!({"transcript_path": gone}));
    let r = hook(&env, "claude", &stdin, &[]);
    assert!(
        r.stderr.contains("cannot read transcript")
            && r.stderr
                .contains("captured the directives of the payload's final message"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
    let bare = payload(
        "claude",
        "stop.json",
        json!({"transcript_path": gone, "last_assistant_message": null}),
    );
    let r = hook(&env, "claude", &bare, &[]);
    assert!(r.stderr.contains("; nothing captured."), "{}", r.stderr);
}
