//! Every capture committed exactly once under load (issue 19, item 1; the trial's F-2): bursts
//! of `librarian-record` calls into `git-rutter mcp --allow-record` (rmcp's own client, the
//! built binary), several servers and CLI captures at once, and calls made while another
//! process holds the capture lock. Each ends with every entry in the day files once, every id
//! distinct, every entry committed once, and `verify` clean.

use crate::common;

use common::{run_with_stdin, Env, LockHolder};
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::json;
use std::collections::{BTreeMap, HashSet};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

type Client = RunningService<RoleClient, ClientConfig>;

async fn connect(env: &Env) -> Client {
    connect_with_pid(env).await.0
}

/// The server and its process id.
async fn connect_with_pid(env: &Env) -> (Client, u32) {
    let mut cmd = env.cmd();
    cmd.current_dir(env.root()).args(["mcp", "--allow-record"]);
    let (transport, _) = TokioChildProcess::builder(tokio::process::Command::from(cmd))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = transport.id().unwrap();
    let info = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("claude-code", "1.0.0"),
    );
    (info.serve(transport).await.unwrap(), pid)
}

/// Children of `pid` that exited and were never reaped (state `Z` in /proc).
fn zombies_of(pid: u32) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`; comm may hold spaces, so read after its last `)`.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r.trim()) else {
            continue;
        };
        let mut f = rest.split(' ');
        let (state, ppid) = (f.next(), f.next().and_then(|p| p.parse::<u32>().ok()));
        if state == Some("Z") && ppid == Some(pid) {
            out.push(stat);
        }
    }
    out
}

/// `n` `librarian-record` calls sent at once on one connection, summaries `<tag> <k>`; every
/// one must be answered without an error.
async fn burst(client: &Client, tag: &str, n: usize) {
    let mut calls = tokio::task::JoinSet::new();
    for k in 0..n {
        let peer = client.peer().clone();
        let args = json!({"summary": format!("{tag} {k}: decided under load.")});
        calls.spawn(async move {
            let params = CallToolRequestParams::new("librarian-record")
                .with_arguments(args.as_object().cloned().unwrap());
            peer.call_tool(params).await
        });
    }
    while let Some(done) = calls.join_next().await {
        let result = done.unwrap().unwrap();
        assert_ne!(result.is_error, Some(true), "{result:?}");
    }
}

/// Every entry line of the working day files: summary → ids (one per line holding it).
fn working_entries(env: &Env) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for e in env.entries() {
        out.entry(e["summary"].as_str().unwrap().to_string())
            .or_default()
            .push(e["id"].as_str().unwrap().to_string());
    }
    out
}

/// Every summary in `want` is in the day files exactly once, every id is distinct, every line
/// is committed once, nothing is pending, and verify is clean.
fn all_committed_once(env: &Env, want: &[String]) {
    let r = env.rutter(&["commit"]);
    assert!(r.code == 0, "commit: {}{}", r.stdout, r.stderr);
    let entries = working_entries(env);
    let mut ids = HashSet::new();
    for s in want {
        let held = entries
            .get(s)
            .unwrap_or_else(|| panic!("{s} is in no day file"));
        assert_eq!(
            held.len(),
            1,
            "{s} is in the day files {} times",
            held.len()
        );
        assert!(
            ids.insert(held[0].clone()),
            "the id {} is given twice",
            held[0]
        );
    }
    let committed: String = env
        .day_files()
        .iter()
        .map(|p| {
            let rel = format!(
                "_librarian/sessions/{}",
                p.file_name().unwrap().to_string_lossy()
            );
            env.committed(&rel)
        })
        .collect();
    for s in want {
        let n = committed.matches(&format!("\"summary\":\"{s}\"")).count();
        assert_eq!(n, 1, "{s} is committed {n} times");
    }
    let v = env.rutter(&["verify", "--porcelain"]);
    let diff = env.rutter(&["diff"]).stdout;
    assert_eq!(v.code, 0, "verify: {}{}\ndiff:\n{diff}", v.stdout, v.stderr);
    env.git(&["fsck", "--strict", "--no-dangling"]);
}

fn summaries(tag: &str, n: usize) -> Vec<String> {
    (0..n)
        .map(|k| format!("{tag} {k}: decided under load."))
        .collect()
}

#[tokio::test]
async fn a_thousand_record_calls_into_one_server_are_each_committed_once() {
    let env = Env::git_vault();
    let (client, pid) = connect_with_pid(&env).await;
    burst(&client, "one", 1_000).await;
    // Every 256th commit starts `git gc --auto`: the server reaps it (the review's §b 8).
    let started = Instant::now();
    while !zombies_of(pid).is_empty() && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        zombies_of(pid),
        Vec::<String>::new(),
        "no gc is left a zombie"
    );
    client.cancel().await.unwrap();
    all_committed_once(&env, &summaries("one", 1_000));
}

#[tokio::test]
async fn three_servers_and_cli_captures_at_once_each_commit_every_entry_once() {
    let env = Env::git_vault();
    let clients = [
        connect(&env).await,
        connect(&env).await,
        connect(&env).await,
    ];
    let cli = {
        let env_cmd = |k: usize| {
            let mut c = env.cmd();
            c.args([
                "capture",
                "--summary",
                &format!("cli {k}: decided under load."),
            ])
            .args(["--session", &format!("cli-{k}")]);
            c
        };
        (0..100).map(env_cmd).collect::<Vec<Command>>()
    };
    let runner = std::thread::spawn(move || {
        let mut children = Vec::new();
        for mut c in cli {
            children.push(
                c.stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap(),
            );
        }
        for c in children {
            let out = c.wait_with_output().unwrap();
            assert!(out.status.success());
            let err = String::from_utf8_lossy(&out.stderr).to_string();
            assert!(err.contains("captured 1 entry"), "{err}");
        }
    });
    let (a, b, c) = (
        burst(&clients[0], "a", 300),
        burst(&clients[1], "b", 300),
        burst(&clients[2], "c", 300),
    );
    tokio::join!(a, b, c);
    runner.join().unwrap();
    for client in clients {
        client.cancel().await.unwrap();
    }
    let mut want = summaries("a", 300);
    want.extend(summaries("b", 300));
    want.extend(summaries("c", 300));
    want.extend(summaries("cli", 100));
    all_committed_once(&env, &want);
}

#[tokio::test]
async fn record_calls_while_the_lock_is_held_get_distinct_ids_and_are_committed_later() {
    let env = Env::git_vault();
    let client = connect(&env).await;
    let holder = LockHolder::hold(&env.vault.join(".git/rutter/lock"), 4);
    burst(&client, "held", 20).await;
    drop(holder);
    client.cancel().await.unwrap();
    let entries = working_entries(&env);
    let ids: HashSet<&String> = entries.values().flatten().collect();
    assert_eq!(ids.len(), 20, "{entries:?}");
    all_committed_once(&env, &summaries("held", 20));
    // The CLI's captures that time out too.
    let holder = LockHolder::hold(&env.vault.join(".git/rutter/lock"), 3);
    for k in 0..3 {
        let mut c = env.cmd();
        c.env("RUTTER_LOCK_WAIT_MS", "50").args([
            "capture",
            "--summary",
            &format!("cli held {k}: decided under load."),
            "--session",
            &format!("cli-held-{k}"),
        ]);
        let r = run_with_stdin(&mut c, b"");
        assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
    }
    drop(holder);
    all_committed_once(&env, &summaries("cli held", 3));
}
