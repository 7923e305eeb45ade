//! End to end for `git-rutter mcp --allow-record` (spec/mcp.md, "Recording without a hook"):
//! rmcp's own client, named as a real client names itself, spawns the built binary. With the
//! flag, `librarian-record` records through the capture pipeline (entry, dedupe, one commit per
//! call, rejected refs, the repository opt-out) and the instructions gain one paragraph; without
//! it the tool list, the instructions and every answer stay as they were.

use crate::common;

use common::Env;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use rutter::contract::{instructions, instructions_for, RECORD_PARAGRAPH};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Stdio;

type Client = RunningService<RoleClient, ClientConfig>;

/// The server, started in `cwd` (the project, as clients start servers), for a client called
/// `name`.
async fn connect(env: &Env, name: &str, cwd: &Path, args: &[&str]) -> Client {
    let mut cmd = env.cmd();
    cmd.current_dir(cwd).arg("mcp").args(args);
    connect_command(cmd, name).await
}

/// A client named `name` over the stdio of `cmd`.
async fn connect_command(cmd: std::process::Command, name: &str) -> Client {
    let (transport, _) = TokioChildProcess::builder(tokio::process::Command::from(cmd))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let info = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new(name, "1.0.0"),
    );
    info.serve(transport).await.unwrap()
}

async fn record(client: &Client, args: Value) -> Result<CallToolResult, ServiceError> {
    let params = CallToolRequestParams::new("librarian-record")
        .with_arguments(args.as_object().cloned().unwrap());
    client.call_tool(params).await
}

fn text(result: &CallToolResult) -> String {
    assert_eq!(result.content.len(), 1, "{result:?}");
    result.content[0].as_text().unwrap().text.clone()
}

/// A project repository the client runs in.
fn project(env: &Env) -> std::path::PathBuf {
    let dir = env.root().join("code/garden");
    std::fs::create_dir_all(&dir).unwrap();
    env.git_in(&dir, &["init", "-q", "-b", "main"]);
    dir
}

fn commits(env: &Env) -> usize {
    env.git(&["rev-list", "--count", "refs/rutter/records"])
        .trim()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn with_the_flag_a_decision_is_recorded_once_with_the_clients_label() {
    let env = Env::git_vault();
    let cwd = project(&env);
    let before = commits(&env);
    let client = connect(&env, "claude-code", &cwd, &["--allow-record"]).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "librarian-search",
            "librarian-get-note",
            "librarian-recent",
            "librarian-record"
        ]
    );
    let listed = serde_json::to_value(&tools[3]).unwrap();
    assert_eq!(listed["annotations"]["readOnlyHint"], json!(false));
    assert_eq!(listed["inputSchema"]["required"], json!(["summary"]));
    let info = client.peer_info().unwrap();
    assert_eq!(
        info.instructions.as_deref(),
        Some(instructions_for("the user", true).as_str())
    );

    let args = json!({"summary": "Chose raised beds for the clay soil.", "refs": ["Notes/a.md", "Notes/gone.md"]});
    let first = record(&client, args.clone()).await.unwrap();
    assert_eq!(first.is_error, Some(false), "{first:?}");
    let said = text(&first);
    assert!(
        said.contains("rejected unresolvable refs: Notes/gone.md"),
        "{said}"
    );
    assert!(said.contains("captured 1 entry [garden] into "), "{said}");
    assert!(
        !said.contains("[librarian-capture]") && !said.contains("in vault"),
        "{said}"
    );
    let again = record(&client, args).await.unwrap();
    assert_eq!(
        text(&again),
        "rejected unresolvable refs: Notes/gone.md\ndirective unchanged for this session; already recorded, nothing appended."
    );
    client.cancel().await.unwrap();

    let entries = env.entries();
    assert_eq!(entries.len(), 1, "{entries:?}");
    let e = &entries[0];
    assert_eq!(e["summary"], "Chose raised beds for the clay soil.");
    assert_eq!(e["client"], "claude");
    assert_eq!(e["workspace"]["project"], "garden");
    assert_eq!(e["refs"].as_array().unwrap().len(), 1);
    assert!(e["session_id"].as_str().unwrap().starts_with("mcp-"), "{e}");
    // Each call is a run in the hook-run log, under the client's label and the session.
    let log = std::fs::read_to_string(env.vault.join(".git/rutter/hook-runs.jsonl")).unwrap();
    let runs: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let seen: Vec<(&str, &str)> = runs
        .iter()
        .map(|r| {
            (
                r["outcome"].as_str().unwrap(),
                r["client"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(seen, [("captured", "claude"), ("deduped", "claude")]);
    assert_eq!(runs[0]["session"], e["session_id"]);
    // Committed, as a hook's capture is, and the day file equals its committed blob.
    assert_eq!(commits(&env), before + 1);
    let day = env.first_day();
    assert_eq!(env.committed(&day), env.read(&day));
}

#[tokio::test]
async fn a_restarted_server_goes_on_with_its_clients_session_and_an_unknown_client_has_no_label() {
    let env = Env::git_vault();
    let cwd = project(&env);
    let args = json!({"summary": "Ordered the seeds."});
    // One client process (this test) starting the server twice: the second record of the same
    // line is deduplicated, as a re-fired hook's is.
    for want in ["captured 1 entry", "directive unchanged for this session"] {
        let client = connect(&env, "some-editor", &cwd, &["--allow-record"]).await;
        let r = record(&client, args.clone()).await.unwrap();
        assert!(text(&r).starts_with(want), "{want}: {r:?}");
        client.cancel().await.unwrap();
    }
    assert_eq!(env.entries().len(), 1);
    // Another client process (a shell between us and the server) is another session.
    let mut sh = env.cmd_for("sh");
    sh.current_dir(&cwd)
        .args(["-c", &format!("'{}' mcp --allow-record; :", common::BIN)]);
    let client = connect_command(sh, "some-editor").await;
    let r = record(&client, args.clone()).await.unwrap();
    assert!(text(&r).starts_with("captured 1 entry"), "{r:?}");
    client.cancel().await.unwrap();
    let entries = env.entries();
    assert_eq!(entries.len(), 2);
    assert!(
        entries.iter().all(|e| e.get("client").is_none()),
        "{entries:?}"
    );
    assert_ne!(entries[0]["session_id"], entries[1]["session_id"]);
}

#[tokio::test]
async fn invalid_arguments_are_tool_errors_and_an_opted_out_repository_is_not_recorded() {
    let env = Env::git_vault();
    let cwd = project(&env);
    env.git_in(&cwd, &["config", "rutter.capture", "false"]);
    let client = connect(&env, "codex-mcp-client", &cwd, &["--allow-record"]).await;
    for (bad, says) in [
        (json!({}), "missing required argument `summary`"),
        (json!({"summary": 3}), "`summary` must be a string"),
        (json!({"summary": "  "}), "`summary` is empty"),
        (
            json!({"summary": "S", "refs": "a.md"}),
            "`refs` must be an array",
        ),
    ] {
        let r = record(&client, bad.clone()).await.unwrap();
        assert_eq!(r.is_error, Some(true), "{bad}: {r:?}");
        let t = text(&r);
        assert!(
            t.starts_with("Invalid arguments for librarian-record: ") && t.contains(says),
            "{bad}: {t}"
        );
    }
    let r = record(&client, json!({"summary": "Private work."}))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(false));
    assert!(text(&r).starts_with("capture is turned off in "), "{r:?}");
    client.cancel().await.unwrap();
    assert!(env.day_files().is_empty());
}

#[tokio::test]
async fn without_the_flag_the_server_stays_read_only_and_its_instructions_unchanged() {
    let env = Env::git_vault();
    let cwd = project(&env);
    let client = connect(&env, "claude-code", &cwd, &[]).await;
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 3);
    assert!(tools.iter().all(|t| t.name != "librarian-record"));
    let info = client.peer_info().unwrap();
    assert_eq!(
        info.instructions.as_deref(),
        Some(instructions("the user").as_str())
    );
    assert!(!instructions("the user").contains(RECORD_PARAGRAPH));
    match record(&client, json!({"summary": "S"})).await {
        Err(ServiceError::McpError(e)) => {
            assert_eq!(e.code.0, -32601);
            assert_eq!(e.message, "Unknown tool: librarian-record");
        }
        other => panic!("{other:?}"),
    }
    client.cancel().await.unwrap();
    assert!(env.day_files().is_empty());
}

/// The trial's F-5 through the server: 20,000 refs to one note are cited once; the entry is
/// committed and verify is clean.
#[tokio::test]
async fn a_record_citing_one_note_twenty_thousand_times_cites_it_once() {
    let env = Env::git_vault();
    let cwd = project(&env);
    let client = connect(&env, "claude-code", &cwd, &["--allow-record"]).await;
    let refs: Vec<&str> = std::iter::repeat_n("Notes/a.md", 20_000).collect();
    let result = record(
        &client,
        json!({"summary": "Twenty thousand refs.", "refs": refs}),
    )
    .await
    .unwrap();
    let said = text(&result);
    assert_ne!(result.is_error, Some(true), "{said}");
    assert!(said.contains("19999 duplicate ref(s)"), "{said}");
    client.cancel().await.unwrap();
    let e = &env.entries()[0];
    assert_eq!(e["refs"].as_array().unwrap().len(), 1, "{e}");
    let v = env.rutter(&["verify", "--porcelain"]);
    assert_eq!(v.code, 0, "{}", v.stdout);
}

/// A credential in `librarian-record`'s summary is masked before it is written, and the tool's
/// answer says what was masked, never the secret (spec/secrets.md).
#[tokio::test]
async fn a_secret_given_to_librarian_record_is_masked_and_the_answer_says_so() {
    let env = Env::git_vault();
    let cwd = project(&env);
    let client = connect(&env, "claude-code", &cwd, &["--allow-record"]).await;
    let token = "sk-ant-api03-Zq8wX2mB7kR4tY6uI1oP3aS5dF9gH0jK2lL4zX6cV8bN1mQ3wE5rT7yU9iO-AbCdEfGh";
    let result = record(
        &client,
        json!({"summary": format!("Put the API key {token} into the CI secrets.")}),
    )
    .await
    .unwrap();
    let said = text(&result);
    assert_ne!(result.is_error, Some(true), "{said}");
    assert!(
        said.contains("masked a credential in the entry (anthropic-key)"),
        "{said}"
    );
    assert!(!said.contains("sk-ant-api03"), "{said}");
    client.cancel().await.unwrap();
    let e = &env.entries()[0];
    assert_eq!(
        e["summary"],
        "Put the API key [redacted:anthropic-key] into the CI secrets."
    );
    assert!(!env.all_records().contains("sk-ant-api03"));
}
