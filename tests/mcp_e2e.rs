//! End to end for `git-rutter mcp` (spec/mcp.md): rmcp's own client spawning the built binary
//! (tools, schemas, instructions, errors, use log), and raw byte-level runs over the binary's
//! stdin/stdout (stdout purity, stdin EOF, start-up order, concurrency, vault resolution).

use crate::common;

use common::decoded::{Partial, Search};
use common::json::decode;
use common::Env;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use rutter::recall::uselog;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const SUMMARY: &str = "Decided the alpha approach.";
const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw-test","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const WAIT: Duration = Duration::from_secs(60);

/// A git vault with two notes, `init`, and one capture citing Notes/a.md.
fn vault() -> Env {
    let env = Env::git_vault();
    capture(&env, SUMMARY, "s1", &["--ref", "Notes/a.md"]);
    env
}

fn capture(env: &Env, summary: &str, session: &str, extra: &[&str]) {
    let out = env
        .cmd()
        .args(["capture", "--summary", summary, "--session", session])
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("captured 1 entry"), "{stderr}");
}

fn use_log(env: &Env) -> Vec<String> {
    uselog::read(&env.vault)
        .into_iter()
        .map(|(_, k)| k)
        .collect()
}

// ---- rmcp client ---------------------------------------------------------------------------

type Client = RunningService<RoleClient, ()>;

async fn connect(env: &Env, extra: &[(&str, &str)]) -> Client {
    let mut cmd = env.cmd();
    cmd.arg("mcp");
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let (transport, _) = TokioChildProcess::builder(tokio::process::Command::from(cmd))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    ().serve(transport).await.unwrap()
}

async fn call(client: &Client, tool: &str, args: Value) -> Result<CallToolResult, ServiceError> {
    let params = CallToolRequestParams::new(tool.to_string())
        .with_arguments(args.as_object().cloned().unwrap());
    client.call_tool(params).await
}

/// The single text block of a successful (not `isError`) result.
async fn text(client: &Client, tool: &str, args: Value) -> String {
    let result = call(client, tool, args).await.unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(result.content.len(), 1, "{result:?}");
    result.content[0].as_text().unwrap().text.clone()
}

/// The single text block of an `isError` tool result.
fn tool_error(result: Result<CallToolResult, ServiceError>) -> String {
    let result = result.unwrap();
    assert_eq!(result.is_error, Some(true), "{result:?}");
    assert_eq!(result.content.len(), 1, "{result:?}");
    result.content[0].as_text().unwrap().text.clone()
}

fn protocol_error(result: Result<CallToolResult, ServiceError>) -> (i32, String) {
    match result {
        Err(ServiceError::McpError(e)) => (e.code.0, e.message.into_owned()),
        other => panic!("expected a protocol error, got {other:?}"),
    }
}

#[tokio::test]
async fn lists_exactly_the_three_tools_with_their_exact_schemas() {
    let env = vault();
    let client = connect(&env, &[]).await;
    let info = client.peer_info().unwrap();
    let server = info.server_info.clone().unwrap();
    assert_eq!(
        (server.name.as_str(), server.version.as_str()),
        ("rutter", env!("CARGO_PKG_VERSION"))
    );
    let caps = serde_json::to_value(&info.capabilities).unwrap();
    assert_eq!(caps, json!({"tools": {}}), "tools capability only");
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 3);
    for tool in &tools {
        let listed = serde_json::to_value(tool).unwrap();
        assert_eq!(listed["inputSchema"]["additionalProperties"], json!(false));
    }
    // The contract is pinned in a golden file, not checked against the code that makes it: a
    // change to a name, a description or a schema is a change of this file, seen in review.
    let listed = serde_json::to_value(&tools).unwrap();
    let golden =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp/tools.json");
    if std::env::var_os("RUTTER_BLESS").is_some() {
        std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
        std::fs::write(
            &golden,
            serde_json::to_string_pretty(&listed).unwrap() + "\n",
        )
        .unwrap();
    }
    let want: Value = serde_json::from_str(&std::fs::read_to_string(&golden).unwrap()).unwrap();
    assert_eq!(
        listed,
        want,
        "the listed tools differ from {} (run with RUTTER_BLESS=1 to accept the new contract)",
        golden.display()
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn instructions_are_the_one_source_and_name_the_user_label() {
    let env = vault();
    let client = connect(&env, &[]).await;
    let got = client.peer_info().unwrap().instructions.clone().unwrap();
    assert_eq!(got, rutter::contract::instructions("the user"));
    client.cancel().await.unwrap();

    let client = connect(&env, &[("LIBRARIAN_USER_LABEL", "Ada")]).await;
    let got = client.peer_info().unwrap().instructions.clone().unwrap();
    assert!(got.contains("Ada's work"), "{got}");
    assert_eq!(got, rutter::contract::instructions("Ada"));
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools[0]
        .description
        .as_deref()
        .unwrap()
        .contains("Ada's notes vault"));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn each_tool_answers_with_one_text_block_and_the_use_log_counts_valid_calls() {
    let env = vault();
    let client = connect(&env, &[]).await;

    let hit = text(&client, "librarian-search", json!({"query": "alpha"})).await;
    assert!(hit.contains("Notes/a.md"), "{hit}");
    assert!(
        hit.contains("↩ prior engagement") && hit.contains(SUMMARY),
        "{hit}"
    );
    let plain = text(
        &client,
        "librarian-search",
        json!({"query": "beta", "limit": 3}),
    )
    .await;
    assert!(plain.contains("Notes/b.md") && !plain.contains("prior engagement"));
    let miss = text(&client, "librarian-search", json!({"query": "zebra"})).await;
    assert_eq!(miss, "No notes matched \"zebra\".");

    let note = text(&client, "librarian-get-note", json!({"path": "Notes/a.md"})).await;
    assert!(
        note.contains("Notes/a.md") && note.contains("The alpha note."),
        "{note}"
    );
    let gone = tool_error(call(&client, "librarian-get-note", json!({"path": "x"})).await);
    assert_eq!(
        gone, "Note not found: x",
        "a miss is a tool error, in the reference's words"
    );

    let recent = text(&client, "librarian-recent", json!({})).await;
    assert!(
        recent.contains(SUMMARY) && recent.contains("refs: Notes/a.md@sha256:"),
        "{recent}"
    );
    let none = text(&client, "librarian-recent", json!({"project": "nowhere"})).await;
    assert_eq!(none, "No sessions recorded for project \"nowhere\".");

    // A capture landing while the server runs shows in the next recent call.
    capture(&env, "Picked the second plan.", "s2", &[]);
    let again = text(&client, "librarian-recent", json!({"count": 1})).await;
    assert!(again.contains("Picked the second plan.") && !again.contains(SUMMARY));
    client.cancel().await.unwrap();

    let log = use_log(&env);
    let recents = log.iter().filter(|k| *k == "librarian-recent").count();
    let signals = log.iter().filter(|k| *k == "search-signal").count();
    assert_eq!((recents, signals, log.len()), (3, 1, 4), "{log:?}");
}

#[tokio::test]
async fn invalid_arguments_are_tool_errors_unknown_tools_protocol_errors_and_never_logged() {
    let env = vault();
    let client = connect(&env, &[]).await;
    let tail = ". Nothing was done; call it again with the arguments corrected (tools/list has the schema).";
    let why = tool_error(call(&client, "librarian-recent", json!({"window": 0})).await);
    assert_eq!(
        why,
        format!("Invalid arguments for librarian-recent: `window` must be an integer >= 1{tail}")
    );
    let why = tool_error(call(&client, "librarian-recent", json!({"days": 3})).await);
    assert_eq!(
        why,
        format!("Invalid arguments for librarian-recent: unknown argument `days`{tail}")
    );
    let why = tool_error(
        call(
            &client,
            "librarian-search",
            json!({"query": "a", "limit": 51}),
        )
        .await,
    );
    assert!(why.contains("`limit`"), "{why}");
    let why = tool_error(call(&client, "librarian-get-note", json!({})).await);
    assert!(
        why.starts_with("Invalid arguments for librarian-get-note: "),
        "{why}"
    );
    let (code, message) = protocol_error(call(&client, "librarian-positions", json!({})).await);
    assert_eq!(
        (code, message.as_str()),
        (-32601, "Unknown tool: librarian-positions")
    );
    // The connection is still usable.
    text(&client, "librarian-search", json!({"query": "beta"})).await;
    client.cancel().await.unwrap();
    assert!(use_log(&env).is_empty(), "{:?}", use_log(&env));
}

// ---- raw stdio -----------------------------------------------------------------------------

/// The server driven over raw pipes: every stdout line is checked to be a JSON-RPC frame.
struct Raw {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: mpsc::Receiver<(Instant, Value)>,
    stderr: mpsc::Receiver<(Instant, String)>,
}

impl Raw {
    fn spawn(mut cmd: Command) -> Raw {
        let mut child = cmd
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (out_tx, stdout) = mpsc::channel();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        std::thread::spawn(move || loop {
            let mut line = Vec::new();
            if out.read_until(b'\n', &mut line).unwrap() == 0 {
                break;
            }
            let _ = out_tx.send((Instant::now(), json_rpc(&line)));
        });
        let (err_tx, stderr) = mpsc::channel();
        let err = BufReader::new(child.stderr.take().unwrap());
        std::thread::spawn(move || {
            for line in err.lines() {
                let _ = err_tx.send((Instant::now(), line.unwrap()));
            }
        });
        let stdin = child.stdin.take();
        Raw {
            child,
            stdin,
            stdout,
            stderr,
        }
    }

    fn send(&mut self, frame: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(frame.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn next(&self) -> (Instant, Value) {
        self.stdout.recv_timeout(WAIT).expect("a reply")
    }

    /// Closes stdin, collects the rest of stdout and stderr, and returns the exit status.
    fn finish(mut self) -> (i32, Vec<Value>, Vec<String>) {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        let frames = self.stdout.iter().map(|(_, v)| v).collect();
        let lines = self.stderr.iter().map(|(_, l)| l).collect();
        (status.code().unwrap_or(-1), frames, lines)
    }
}

/// One stdout line: newline-terminated UTF-8 JSON with `"jsonrpc":"2.0"`, nothing else.
fn json_rpc(line: &[u8]) -> Value {
    let text = std::str::from_utf8(line).expect("stdout is UTF-8");
    assert!(text.ends_with('\n'), "a partial frame on stdout: {text:?}");
    let v: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text:?}"));
    assert_eq!(v["jsonrpc"], json!("2.0"), "{text}");
    v
}

fn call_frame(id: u64, tool: &str, args: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": args}})
    .to_string()
}

fn reply(frames: &[Value], id: u64) -> &Value {
    frames
        .iter()
        .find(|f| f["id"] == json!(id))
        .unwrap_or_else(|| panic!("no reply to {id} in {frames:?}"))
}

fn result_text(frame: &Value) -> &str {
    assert_eq!(
        frame["result"]["content"].as_array().unwrap().len(),
        1,
        "{frame}"
    );
    frame["result"]["content"][0]["text"].as_str().unwrap()
}

fn raw(env: &Env) -> Raw {
    Raw::spawn(env.cmd())
}

#[test]
fn stdout_carries_only_json_rpc_frames_even_after_malformed_input() {
    let env = vault();
    let mut s = raw(&env);
    s.send(INIT);
    assert_eq!(s.next().1["id"], json!(1));
    s.send(INITIALIZED);
    for junk in [
        "{not json}",
        "",
        "   ",
        "\u{1b}[31mhello",
        r#"{"foo":1}"#,
        "[1,2,3]",
        r#"{"jsonrpc":"2.0","id":99,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"no/such/method"}"#,
    ] {
        s.send(junk);
    }
    s.stdin
        .as_mut()
        .unwrap()
        .write_all(b"\xff\xfe\x00\n")
        .unwrap();
    s.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    s.send(&call_frame(
        3,
        "librarian-search",
        json!({"query": "alpha"}),
    ));
    let (code, frames, stderr) = s.finish();
    assert_eq!(code, 0, "{stderr:?}");
    assert_eq!(
        reply(&frames, 2)["result"]["tools"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    assert!(result_text(reply(&frames, 3)).contains("prior engagement"));
    assert_eq!(reply(&frames, 7)["error"]["code"], json!(-32601));
    assert!(
        frames.iter().any(|f| f["error"]["code"] == json!(-32600)),
        "valid JSON that is not a request gets an Invalid Request error: {frames:?}"
    );
    assert_eq!(
        stderr[0].split(';').next(),
        Some("[rutter] starting stdio server")
    );
    assert!(
        stderr.contains(&"[rutter] connected.".to_string()),
        "{stderr:?}"
    );
}

/// Writes `n` notes with frontmatter, a body and a wikilink (a vault whose index takes a while).
fn many_notes(env: &Env, n: usize) {
    for i in 0..n {
        let body: Vec<String> = (0..60)
            .map(|j| format!("word{} topic{}", (i * 7 + j) % 997, j % 13))
            .collect();
        env.write(
            &format!("Notes/d{}/n{i}.md", i % 40),
            &format!(
                "---\ntype: note\nstatus: active\n---\n# Note {i}\n\n{}\n\nSee [[n{}]].\n",
                body.join(" "),
                (i + 1) % n
            ),
        );
    }
}

#[test]
fn stdin_eof_answers_every_request_already_read_then_exits_0() {
    let env = vault();
    many_notes(&env, 2000);
    let mut s = raw(&env);
    s.send(INIT);
    s.send(INITIALIZED);
    s.send(&call_frame(2, "librarian-recent", json!({})));
    s.send(&call_frame(
        3,
        "librarian-search",
        json!({"query": "word5 topic5"}),
    ));
    s.send(&call_frame(
        4,
        "librarian-get-note",
        json!({"path": "Notes/d1/n1.md"}),
    ));
    let (code, frames, stderr) = s.finish();
    assert_eq!(code, 0, "{stderr:?}");
    assert_eq!(frames.len(), 4, "{frames:?}");
    assert!(reply(&frames, 1)["result"]["instructions"].is_string());
    assert!(result_text(reply(&frames, 2)).contains(SUMMARY));
    assert!(result_text(reply(&frames, 3)).starts_with("1. "));
    assert!(result_text(reply(&frames, 4)).starts_with("# Note 1\n"));
    assert_eq!(use_log(&env), ["librarian-recent"]);
}

#[test]
fn initialize_is_answered_while_the_index_is_still_being_built() {
    let env = Env::bare();
    many_notes(&env, 2000);
    // The build is held back (debug builds): the answer must come while it has not finished,
    // which the server's own "index ready" line on stderr tells (no clock is read).
    let mut cmd = env.cmd();
    cmd.env("RUTTER_INDEX_BUILD_DELAY_MS", "3000");
    let mut s = Raw::spawn(cmd);
    s.send(INIT);
    let (answered, init) = s.next();
    assert_eq!(init["result"]["serverInfo"]["name"], json!("rutter"));
    let said: Vec<String> = s.stderr.try_iter().map(|(_, l)| l).collect();
    assert!(
        !said.iter().any(|l| l.contains("index ready")),
        "initialize waited for the index: {said:?}"
    );
    s.send(INITIALIZED);
    s.send(&call_frame(
        2,
        "librarian-search",
        json!({"query": "word12"}),
    ));
    let (_, found) = s.next();
    assert!(result_text(&found).contains("Notes/"), "{found}");
    let ready = (0..10)
        .map_while(|_| s.stderr.recv_timeout(WAIT).ok())
        .find(|(_, l)| l.starts_with("[rutter] index ready"))
        .expect("an index-ready line")
        .0;
    assert!(
        answered < ready,
        "initialize was answered {:?} before the index was ready",
        ready - answered
    );
    assert_eq!(s.finish().0, 0);
}

#[test]
fn servers_and_captures_on_one_vault_lose_nothing_and_read_whole_records() {
    let env = vault();
    let summaries: Vec<String> = (0..10)
        .map(|i| format!("Concurrent step {i} landed."))
        .collect();
    let mut known: BTreeSet<String> = summaries.iter().cloned().collect();
    known.insert(SUMMARY.to_string());
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| recent_ten_times(&env, &known));
        }
        for (i, summary) in summaries.iter().enumerate() {
            let env = &env;
            scope.spawn(move || {
                std::thread::sleep(Duration::from_millis(20 * i as u64));
                capture(env, summary, &format!("c{i}"), &[]);
            });
        }
    });
    let lines = std::fs::read_to_string(env.vault.join(uselog::USE_LOG)).unwrap();
    assert_eq!(lines.lines().count(), 40, "{lines}");
    for line in lines.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["kind"], json!("librarian-recent"), "{line}");
    }
    let records = env.all_records();
    for s in &summaries {
        let entry = format!("\"summary\":\"{s}\"");
        assert_eq!(records.matches(&entry).count(), 1, "{s} recorded once");
    }
    for day in env.day_files() {
        let name = day.file_name().unwrap().to_string_lossy().into_owned();
        let committed = env.git(&[
            "show",
            &format!(
                "refs/rutter/records:_librarian/sessions/{}/{name}",
                &name[..4]
            ),
        ]);
        assert_eq!(
            committed,
            std::fs::read_to_string(&day).unwrap(),
            "{name} is committed"
        );
    }
}

/// One server making ten `librarian-recent` calls; every answer is whole.
fn recent_ten_times(env: &Env, known: &BTreeSet<String>) {
    let mut s = raw(env);
    s.send(INIT);
    s.next();
    s.send(INITIALIZED);
    for id in 2..12 {
        // Paced so the calls span the captures' arrival (0–180 ms).
        std::thread::sleep(Duration::from_millis(20));
        s.send(&call_frame(id, "librarian-recent", json!({"count": 50})));
        let (_, frame) = s.next();
        assert_eq!(frame["id"], json!(id));
        assert_eq!(frame["result"]["isError"], json!(false), "{frame}");
        for line in result_text(&frame).lines() {
            if line.is_empty() || line.starts_with(' ') {
                continue;
            }
            let (_, summary) = line.split_once(" — ").unwrap_or_else(|| panic!("{line}"));
            // Each step ends with its id (spec/mcp.md), after the marks.
            let summary = summary
                .rsplit_once(" (id ")
                .map_or(summary, |(before, _)| before);
            // A capture caught between its append and its commit is journalled: it reads as
            // pending. Never as unverified: the journal is written before the line.
            let summary = summary
                .strip_suffix(" [not committed yet]")
                .unwrap_or(summary);
            assert!(
                known.contains(summary),
                "a torn or unknown record: {line:?}"
            );
        }
    }
    let (code, _, stderr) = s.finish();
    assert_eq!(code, 0, "{stderr:?}");
}

/// Every path under `dir` with its size and modification time.
fn snapshot(dir: &Path) -> Vec<(String, u64, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let m = std::fs::symlink_metadata(e.path()).unwrap();
            if m.is_dir() {
                stack.push(e.path());
            }
            out.push((
                e.path().display().to_string(),
                m.len(),
                m.modified().unwrap(),
            ));
        }
    }
    out.sort();
    out
}

fn run_fatal(mut cmd: Command) -> (i32, String, String) {
    let mut child = cmd
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(format!("{INIT}\n").as_bytes());
    drop(stdin);
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().unwrap_or(-1), stdout, stderr)
}

#[test]
fn the_vault_is_never_taken_from_the_current_directory() {
    // A repository with rutter data that interactive commands would accept from the cwd.
    let project = Env::git_vault();
    capture(&project, SUMMARY, "s1", &[]);
    let before = snapshot(&project.vault);
    let mut cmd = project.cmd();
    cmd.env_remove("LIBRARIAN_VAULT_PATH")
        .current_dir(&project.vault);
    let (code, stdout, stderr) = run_fatal(cmd);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(stdout, "");
    assert!(
        stderr.starts_with("[rutter] fatal: no vault configured"),
        "{stderr}"
    );
    assert_eq!(
        snapshot(&project.vault),
        before,
        "nothing written in the project"
    );
}

#[test]
fn an_index_that_is_not_this_vaults_is_fatal_before_serving() {
    let a = vault();
    let b = vault();
    let db = a.root().join("shared.sqlite");
    let r = a
        .cmd()
        .env("LIBRARIAN_DB_PATH", &db)
        .arg("reindex")
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let mut cmd = b.cmd();
    cmd.env("LIBRARIAN_DB_PATH", &db);
    let (code, stdout, stderr) = run_fatal(cmd);
    assert_eq!((code, stdout.as_str()), (1, ""), "{stderr}");
    assert!(stderr.starts_with("[rutter] fatal: the index "), "{stderr}");
    assert!(stderr.contains("was built for the vault"), "{stderr}");

    let foreign = b.root().join("notes.txt");
    std::fs::write(&foreign, "not a database\n").unwrap();
    let mut cmd = b.cmd();
    cmd.env("LIBRARIAN_DB_PATH", &foreign);
    let (code, stdout, stderr) = run_fatal(cmd);
    assert_eq!((code, stdout.as_str()), (1, ""), "{stderr}");
    assert!(
        stderr.contains("is not an index git-rutter made"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&foreign).unwrap(),
        "not a database\n"
    );
}

#[test]
fn a_failed_background_refresh_makes_tool_calls_error_results() {
    let env = vault();
    let blocker = env.root().join("a-file");
    std::fs::write(&blocker, "").unwrap();
    let mut cmd = env.cmd();
    cmd.env("LIBRARIAN_DB_PATH", blocker.join("index.sqlite"));
    let mut s = Raw::spawn(cmd);
    s.send(INIT);
    s.send(INITIALIZED);
    s.send(&call_frame(2, "librarian-recent", json!({})));
    s.send(&call_frame(
        3,
        "librarian-search",
        json!({"query": "alpha"}),
    ));
    s.send(&call_frame(4, "librarian-recent", json!({"window": 0})));
    let (code, frames, stderr) = s.finish();
    assert_eq!(code, 0, "{stderr:?}");
    for id in [2, 3] {
        let r = &reply(&frames, id)["result"];
        assert_eq!(r["isError"], json!(true), "{r}");
        assert!(result_text(reply(&frames, id)).starts_with("the index is not available: "));
    }
    assert_eq!(reply(&frames, 4)["result"]["isError"], json!(true));
    assert!(result_text(reply(&frames, 4)).starts_with("Invalid arguments for librarian-recent: "));
    assert_eq!(
        use_log(&env),
        ["librarian-recent"],
        "a valid call is logged anyway"
    );
}

/// Calls `tool` until its text satisfies `done` or `deadline` passes; the last text.
async fn poll(
    client: &Client,
    tool: &str,
    args: Value,
    deadline: Duration,
    done: impl Fn(&str) -> bool,
) -> String {
    let started = Instant::now();
    loop {
        // Error results too: a note that went away is a tool error.
        let result = call(client, tool, args.clone()).await.unwrap();
        let got = result.content[0].as_text().unwrap().text.clone();
        if done(&got) || started.elapsed() > deadline {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Notes written, edited and deleted while a server runs, with the watcher and, in the
/// fallback, with the check before each call. The deadline is generous for a loaded machine:
/// the contract is the next call after an event (or after the 1 s check window).
#[tokio::test]
async fn notes_changed_while_the_server_runs_are_served_without_a_reindex() {
    for extra in [vec![], vec![("RUTTER_NO_WATCH", "1")]] {
        let env = vault();
        let client = connect(&env, &extra).await;
        let miss = text(&client, "librarian-search", json!({"query": "quokka"})).await;
        assert_eq!(miss, "No notes matched \"quokka\".", "{extra:?}");

        env.write(
            "Notes/new/deeper/quokka.md",
            "# Quokka\n\nA quokka was seen.\n",
        );
        let hit = poll(
            &client,
            "librarian-search",
            json!({"query": "quokka"}),
            WAIT,
            |t| t.contains("Notes/new/deeper/quokka.md"),
        )
        .await;
        assert!(hit.starts_with("1. Quokka\n"), "{extra:?}: {hit}");

        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(env.vault.join("Notes/a.md"))
            .unwrap();
        std::io::Write::write_all(&mut f, b"Also consider zucchini.\n").unwrap();
        drop(f);
        let note = poll(
            &client,
            "librarian-get-note",
            json!({"path": "Notes/a.md"}),
            WAIT,
            |t| t.contains("zucchini"),
        )
        .await;
        // The note as it is now, then the block of the decision that cited it before the edit.
        assert!(
            note.contains(
                "The alpha note.\nAlso consider zucchini.\n\n↩ Cited by 1 recorded decision, on "
            ),
            "{extra:?}: {note}"
        );
        assert!(
            note.ends_with(&format!(" — {SUMMARY} (changed since)")),
            "{extra:?}: {note}"
        );

        std::fs::remove_file(env.vault.join("Notes/b.md")).unwrap();
        let gone = poll(
            &client,
            "librarian-get-note",
            json!({"path": "Notes/b.md"}),
            WAIT,
            |t| t.starts_with("Note not found"),
        )
        .await;
        assert_eq!(gone, "Note not found: Notes/b.md", "{extra:?}");
        let miss = text(&client, "librarian-search", json!({"query": "beta"})).await;
        assert_eq!(miss, "No notes matched \"beta\".", "{extra:?}");
        client.cancel().await.unwrap();
    }
}

/// Search matches words, not meaning: a query no note holds whole is answered with the notes
/// that hold most of its words, each naming them, under a paragraph that says so and asks for
/// other words; the tool and the CLI say the same (spec/index.md, "Some of the words").
#[tokio::test]
async fn a_query_no_note_holds_whole_offers_the_notes_holding_most_of_it() {
    let env = vault();
    env.write(
        "Notes/email.md",
        "# Email provider\n\nThe newsletter moves to Buttondown, a mailing service.\n",
    );
    let want = "No note holds every word of \"newsletter mailing platform\"; none holds \"platform\". 1 note holds some of them, most words first. Search matches words, not meaning: to find more, search again with other words for the same idea.\n\n1. Email provider\n   Notes/email.md\n   # Email provider The «newsletter» moves to Buttondown, a «mailing» service.\n   holds 2 words: newsletter, mailing";
    let client = connect(&env, &[]).await;
    let tool = text(
        &client,
        "librarian-search",
        json!({"query": "newsletter mailing platform"}),
    )
    .await;
    assert_eq!(tool, want);
    client.cancel().await.unwrap();
    let cli = env.rutter(&["search", "newsletter", "mailing", "platform"]);
    assert_eq!((cli.code, cli.stdout.trim_end()), (1, want));
    let json = env.rutter(&["search", "--json", "newsletter", "mailing", "platform"]);
    let v: Search = decode(&json.stdout);
    assert_eq!(
        v.partial,
        Some(Partial {
            words: vec!["newsletter".into(), "mailing".into(), "platform".into()],
            missing: vec!["platform".into()],
            notes: 1
        })
    );
    assert_eq!(
        v.results[0].words.as_deref(),
        Some(&["newsletter".to_string(), "mailing".to_string()][..])
    );
    let whole = env.rutter(&["search", "--json", "newsletter", "mailing"]);
    let v: Search = decode(&whole.stdout);
    assert_eq!((whole.code, &v.partial), (0, &None));
    assert!(v.results[0].words.is_none(), "{v:?}");
    let none = env.rutter(&["search", "platform", "zebra"]);
    assert_eq!(
        (none.code, none.stdout.as_str()),
        (1, "No notes matched \"platform zebra\".\n")
    );
}
