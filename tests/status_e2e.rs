//! `git rutter status` end to end: the real binary in a temporary HOME with real client
//! configuration written by `install-hook`, hooks fired through the command they register, and
//! the hook-run log they leave. A healthy setup exits 0, also with notes changed since the index
//! (information: the next search reads them); a missing hook, a failed last hook run and a vault
//! without notes are findings (exit 1) that say what to do; the vault
//! is named with the reason it was chosen; `--json` decodes to the shape spec/status.md gives.

use crate::common;

use common::json::{decode, Status, WorkingChange};
use common::{run_with_stdin, Env, Run, BIN};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn canonical_bin() -> String {
    Path::new(BIN).canonicalize().unwrap().display().to_string()
}

/// `git-rutter ARGS` in `dir` with no vault in the environment (found as a person's command
/// finds it).
fn rutter_in(env: &Env, dir: &Path, args: &[&str]) -> Run {
    let mut c = env.cmd();
    c.env_remove("LIBRARIAN_VAULT_PATH")
        .current_dir(dir)
        .args(args);
    run_with_stdin(&mut c, b"")
}

/// `git-rutter status` in the vault, with `extra` arguments.
fn status(env: &Env, extra: &[&str]) -> Run {
    let mut args = vec!["status"];
    args.extend_from_slice(extra);
    rutter_in(env, &env.vault, &args)
}

fn status_json(env: &Env) -> (i32, Status) {
    let r = status(env, &["--json"]);
    (r.code, decode(&r.stdout))
}

/// Installs the Claude Code hook and registers its MCP server as `claude mcp add` would.
fn register_claude(env: &Env) {
    let r = run_with_stdin(env.cmd().args(["install-hook", "--client", "claude"]), b"");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let state = serde_json::json!({"mcpServers": {"rutter": {"type": "stdio", "command": canonical_bin(), "args": ["mcp"], "env": {}}}});
    std::fs::write(env.home.join(".claude.json"), state.to_string()).unwrap();
}

/// The Stop hook command registered in `~/.claude/settings.json`.
fn claude_hook(env: &Env) -> String {
    let settings: Value =
        serde_json::from_slice(&std::fs::read(env.home.join(".claude/settings.json")).unwrap())
            .unwrap();
    settings
        .pointer("/hooks/Stop/0/hooks/0/command")
        .and_then(Value::as_str)
        .unwrap()
        .to_string()
}

/// Runs a hook command through `sh` as a client would, with `payload` on stdin and `vault` in
/// the environment (or none).
fn fire(env: &Env, command: &str, payload: &[u8], vault: Option<&Path>) -> Run {
    let mut sh = Command::new("sh");
    sh.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &env.home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .args(["-c", command]);
    if let Some(v) = vault {
        sh.env("LIBRARIAN_VAULT_PATH", v);
    }
    let r = run_with_stdin(&mut sh, payload);
    assert_eq!(r.code, 0, "a hook always exits 0: {}", r.stderr);
    r
}

/// A vault set up as the docs say: repository, global `rutter.vault`, the Claude Code hook and
/// server, a built index, and one capture through the registered hook.
fn healthy() -> Env {
    let env = Env::git_vault();
    env.git(&[
        "config",
        "--global",
        "rutter.vault",
        &env.vault.display().to_string(),
    ]);
    register_claude(&env);
    assert_eq!(env.rutter(&["reindex"]).code, 0);
    let payload = env.transcript_payload(
        "t1",
        "s1",
        &common::directive("Decided status is the first check.", &["Notes/a.md"]),
    );
    let r = fire(&env, &claude_hook(&env), &payload, None);
    assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
    env
}

#[test]
fn a_healthy_setup_exits_0_and_names_the_vault_and_why() {
    let env = healthy();
    let r = status(&env, &[]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let vault = env.vault.display().to_string();
    assert!(
        r.stdout
            .contains(&format!("vault:    {vault} (from the current repository)")),
        "{}",
        r.stdout
    );
    assert!(r
        .stdout
        .contains("hooks and the MCP server find the same vault"));
    assert!(r.stdout.contains("no findings"), "{}", r.stdout);
    let claude = r
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("Claude Code"))
        .unwrap();
    assert!(claude.contains("MCP registered"), "{claude}");
    assert!(claude.contains(": captured"), "{claude}");
    assert!(
        r.stdout.contains("captured     captured 1 entry into"),
        "{}",
        r.stdout
    );
    assert_eq!(r.stderr, "");
}

#[test]
fn the_vault_is_named_with_the_reason_it_was_chosen() {
    let env = healthy();
    let (_, here) = status_json(&env);
    assert_eq!(here.vault().source, "current-repository");
    let elsewhere = env.root().join("code/site");
    std::fs::create_dir_all(&elsewhere).unwrap();
    env.git_in(&elsewhere, &["init", "-q"]);
    let r = rutter_in(&env, &elsewhere, &["status"]);
    let vault = env.vault.display().to_string();
    assert!(
        r.stdout
            .contains(&format!("vault:    {vault} (from git config rutter.vault)")),
        "{}",
        r.stdout
    );
    assert_eq!(
        r.stderr, "",
        "status names the vault itself, without the notice"
    );
    let r = run_with_stdin(
        env.cmd().current_dir(&elsewhere).args(["status", "--json"]),
        b"",
    );
    let json: Status = decode(&r.stdout);
    assert_eq!(json.vault().source, "env");
    assert_eq!(json.vault().reason, "LIBRARIAN_VAULT_PATH");
    let r = rutter_in(&env, &elsewhere, &["status", "--json", "--vault", &vault]);
    let json: Status = decode(&r.stdout);
    assert_eq!(json.vault().source, "flag");
}

#[test]
fn no_hook_registered_is_a_finding_naming_install_hook() {
    let env = Env::git_vault();
    std::fs::create_dir_all(env.home.join(".claude")).unwrap();
    let r = status(&env, &[]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout
            .contains("No AI client runs git-rutter's Stop hook, so nothing is captured."),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("Run `git rutter setup` (it registers every client found here), or `git rutter install-hook --client claude` for the client you use."),
        "{}",
        r.stdout
    );
    assert!(r
        .stdout
        .contains("Claude Code        installed, no git-rutter hook"));
    assert!(r.stdout.contains("Codex              not installed"));
    let (code, json) = status_json(&env);
    assert_eq!(code, 1);
    assert!(!json.healthy);
    assert!(json.kinds().contains(&"hook-missing"));
}

/// A project that registers the hook in its own `.claude/settings.json` (Claude Code runs it
/// beside the user's): `status` run in that project counts it, names the file and finds nothing
/// missing; run outside it, the finding stands.
#[test]
fn a_hook_registered_in_the_projects_claude_settings_counts_in_that_project() {
    let env = Env::git_vault();
    std::fs::create_dir_all(env.home.join(".claude")).unwrap();
    let r = run_with_stdin(env.cmd().args(["install-hook", "--client", "claude"]), b"");
    assert_eq!(r.code, 0, "{}", r.stderr);
    // The team's file holds the hook; the user's own does not.
    let project = env.home.join("work/app");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::fs::create_dir_all(project.join("src")).unwrap();
    env.git_in(&project, &["init", "-q"]);
    let settings = project.join(".claude/settings.json");
    std::fs::rename(env.home.join(".claude/settings.json"), &settings).unwrap();
    let inside = env.rutter_in(&project.join("src"), &["status"]);
    let shown = format!(
        "Claude Code        git-rutter hook in {} (this project only)",
        settings.display()
    );
    assert!(inside.stdout.contains(&shown), "{}", inside.stdout);
    assert!(
        !inside
            .stdout
            .contains("No AI client runs git-rutter's Stop hook"),
        "{}",
        inside.stdout
    );
    let json: Status = decode(&env.rutter_in(&project, &["status", "--json"]).stdout);
    assert!(
        !json.kinds().contains(&"hook-missing"),
        "{:?}",
        json.kinds()
    );
    let claude = json.clients.iter().find(|c| c.client == "claude").unwrap();
    assert_eq!(claude.project_hook.as_deref(), settings.to_str());
    assert!(json
        .clients
        .iter()
        .filter(|c| c.client != "claude")
        .all(|c| c.project_hook.is_none()));
    let outside = status(&env, &["--json"]);
    let json: Status = decode(&outside.stdout);
    assert!(json.kinds().contains(&"hook-missing"), "{:?}", json.kinds());
}

#[test]
fn a_failed_last_hook_run_is_a_finding() {
    let env = healthy();
    // The hook fires in a session started without the vault: nothing in the environment and no
    // global setting, so it finds no vault; the run is logged outside any vault.
    env.git(&["config", "--global", "--unset", "rutter.vault"]);
    let r = fire(&env, &claude_hook(&env), b"{\"session_id\":\"s2\"}", None);
    assert!(r.stderr.contains("no vault configured"), "{}", r.stderr);
    assert!(env
        .home
        .join(".local/state/rutter/hook-runs.jsonl")
        .is_file());
    let r = status(&env, &[]);
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.contains("Claude Code's last hook run, at "),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("failed (no-vault): no vault configured"));
    let (_, json) = status_json(&env);
    let f = json.finding("last-run-failed");
    assert_eq!(f.client.as_deref(), Some("claude"));
    assert!(f.todo.contains("git rutter init --global"), "{f:?}");
    let f = json.finding("hook-no-vault");
    assert!(f.todo.contains("--client claude --vault PATH"));
    let claude = &json.clients[0];
    let last_run = claude.last_run.as_ref().unwrap();
    assert_eq!(last_run.outcome, "no-vault");
    assert_eq!(last_run.vault, None);
    assert_eq!(claude.last_capture.as_ref().unwrap().outcome, "captured");
    // Once a run captures again, the finding is gone.
    env.git(&[
        "config",
        "--global",
        "rutter.vault",
        &env.vault.display().to_string(),
    ]);
    let payload = env.transcript_payload(
        "t3",
        "s3",
        &common::directive("Decided the vault is set again.", &[]),
    );
    fire(&env, &claude_hook(&env), &payload, None);
    let (code, json) = status_json(&env);
    assert_eq!(code, 0, "{json:#?}");
    // The hook's environment names a vault that is gone (a client's settings `env`): the advice
    // names the variable, which `init --global` cannot outrank.
    let gone = env.root().join("moved-away");
    fire(
        &env,
        &claude_hook(&env),
        b"{\"session_id\":\"s4\"}",
        Some(&gone),
    );
    let (_, json) = status_json(&env);
    let f = json.finding("last-run-failed");
    assert!(
        f.todo.starts_with("The hook sees LIBRARIAN_VAULT_PATH naming no usable vault, and it outranks `git rutter init --global`"),
        "{f:?}"
    );
}

#[test]
fn an_acknowledged_failed_run_is_no_finding() {
    let env = healthy();
    env.capture(b"this is not a payload", &["--client", "claude"]);
    let (code, json) = status_json(&env);
    assert_eq!(code, 1);
    assert!(json.kinds().contains(&"last-run-failed"));
    assert_eq!(json.runs_acked, None);
    let r = status(&env, &["--ack-runs"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("acknowledged"), "{}", r.stderr);
    assert!(
        r.stdout.contains("malformed"),
        "the run stays in the list: {}",
        r.stdout
    );
    assert!(env.home.join(".local/state/rutter/runs-acked").is_file());
    let (code, json) = status_json(&env);
    assert_eq!(code, 0, "{json:#?}");
    let acked = json.runs_acked.as_deref().unwrap();
    assert!(acked.ends_with('Z'), "{acked}");
    // A run failing after the acknowledgement (once the clock has passed it) is a finding again.
    let acked = rutter::clock::parse_instant(acked).unwrap();
    common::wait_until(
        "the clock to pass the acknowledgement",
        std::time::Duration::from_secs(10),
        || {
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
            now.unwrap().as_millis() as i64 > acked.0
        },
    );
    env.capture(b"still not a payload", &["--client", "claude"]);
    let (code, json) = status_json(&env);
    assert_eq!(code, 1, "{json:#?}");
    assert!(json.kinds().contains(&"last-run-failed"));
    // A forged acknowledgement file is read as none.
    std::fs::write(
        env.home.join(".local/state/rutter/runs-acked"),
        "not a time",
    )
    .unwrap();
    assert_eq!(status_json(&env).1.runs_acked, None);
}

#[test]
fn status_shows_local_times_unless_utc() {
    let env = healthy();
    let at = |tz: &str, extra: &[&str]| -> String {
        let mut c = env.cmd();
        c.env("TZ", tz)
            .current_dir(&env.vault)
            .arg("status")
            .args(extra);
        String::from_utf8_lossy(&c.output().unwrap().stdout).into_owned()
    };
    let la = at("America/Los_Angeles", &[]);
    let record = la.lines().find(|l| l.starts_with("record:")).unwrap();
    assert!(
        record.contains(" -0800, ") || record.contains(" -0700, "),
        "{record}"
    );
    let utc = at("America/Los_Angeles", &["--utc"]);
    let record = utc.lines().find(|l| l.starts_with("record:")).unwrap();
    assert!(record.contains(" UTC, "), "{record}");
    let kolkata = at("Asia/Kolkata", &[]);
    assert!(kolkata.contains(" +0530"), "hook runs too: {kolkata}");
}

#[test]
fn a_broken_payload_is_a_failed_run_with_what_to_check() {
    let env = healthy();
    let r = env.capture(b"this is not a payload", &["--client", "claude"]);
    assert_eq!(r.code, 0);
    let (code, json) = status_json(&env);
    assert_eq!(code, 1);
    let f = json.finding("last-run-failed");
    assert!(f.message.contains("(malformed)"), "{f:?}");
    assert!(
        f.todo
            .contains("git rutter install-hook --client claude --dry-run"),
        "{f:?}"
    );
    assert_eq!(json.last_runs[0].outcome, "malformed");
    assert_eq!(json.last_runs[1].outcome, "captured");
}

/// Issue 32, item 8: notes new and edited since the index are information, not a finding (the
/// next search reads them by itself): a healthy vault stays exit 0, and `--json` still says how
/// the notes differ.
#[test]
fn a_stale_index_is_information_and_status_stays_green() {
    let env = healthy();
    env.write("Notes/c.md", "# Gamma\n\nA new note.\n");
    env.write(
        "Notes/a.md",
        "# Alpha\n\nThe alpha note, edited and longer.\n",
    );
    let r = status(&env, &[]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("; 1 new, 1 changed, 0 removed since (the next search reads them)\n"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("no findings"), "{}", r.stdout);
    let (code, json) = status_json(&env);
    assert_eq!(code, 0, "{json:#?}");
    assert!(json.healthy);
    let stale = json.index().stale.unwrap();
    assert_eq!((stale.new, stale.changed), (1, 1));
    assert_eq!(json.findings, []);
    // The next search catches up by itself.
    assert_eq!(env.rutter(&["search", "gamma"]).code, 0);
    let (_, json) = status_json(&env);
    assert_eq!(json.index().notes, Some(3));
    assert_eq!(json.index().stale.unwrap().changed, 0);
}

#[test]
fn a_vault_without_notes_is_probably_the_wrong_folder() {
    let env = Env::bare();
    env.git(&["init", "-q", "-b", "main"]);
    assert_eq!(env.rutter(&["init"]).code, 0);
    let (code, json) = status_json(&env);
    assert_eq!(code, 1);
    let f = json.finding("no-notes");
    assert!(
        f.message
            .contains("holds no markdown notes: probably the wrong folder"),
        "{f:?}"
    );
    assert_eq!(json.index().vault_notes, 0);
}

#[test]
fn a_typescript_hook_and_a_missing_program_are_findings() {
    let env = Env::git_vault();
    let settings = env.home.join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(
        &settings,
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/home/me/rutter/hooks/librarian-stop.sh"}]}]}}"#,
    )
    .unwrap();
    let (_, json) = status_json(&env);
    let f = json.finding("reference-hook");
    assert!(f.message.contains("rewrites whole day files"));
    assert_eq!(
        f.todo,
        "Run `git rutter install-hook --client claude`: it replaces that hook."
    );
    assert_eq!(json.clients[0].hook.state, "reference");
    let gone = env.root().join("old/git-rutter");
    std::fs::write(
        &settings,
        format!(
            r#"{{"hooks": {{"Stop": [{{"hooks": [{{"type": "command", "command": "{} capture --client claude"}}]}}]}}}}"#,
            gone.display()
        ),
    )
    .unwrap();
    let (_, json) = status_json(&env);
    let f = json.finding("hook-program-missing");
    assert!(f.message.contains("is not an executable file"), "{f:?}");
    assert!(!json.clients[0].hook.program_ok);
}

#[test]
fn the_json_shape_is_stable() {
    let env = healthy();
    // Decoding holds the shape: every key there (`null` when it has no value, never missing),
    // none unknown, each of its type.
    let (code, json) = status_json(&env);
    assert_eq!(code, 0, "{json:#?}");
    let vault = env.vault.display().to_string();
    assert_eq!(json.vault().path, vault);
    assert!(json.vault().git);
    assert_eq!(json.hooks_vault.as_ref().unwrap().source, "git-config");
    assert!(json.record().ref_exists);
    assert_eq!(json.record().pending, 0);
    assert_eq!(json.index().notes, Some(2));
    assert_eq!(json.index().stale.unwrap().new, 0);
    let names: Vec<&str> = json.clients.iter().map(|c| c.client.as_str()).collect();
    assert_eq!(
        names,
        [
            "claude", "codex", "grok", "copilot", "agy", "muse", "cursor", "gemini", "opencode",
            "windsurf"
        ]
    );
    let claude = &json.clients[0];
    assert_eq!(claude.hook.state, "registered");
    assert_eq!(claude.mcp.state, "registered");
    assert!(claude.up_to_date);
    assert_eq!(claude.last_capture.as_ref().unwrap().entries, 1);
    assert_eq!(json.clients[1].hook.state, "missing");
    assert_eq!(json.runs_logged, 1);
    let run = &json.last_runs[0];
    assert_eq!(run.client.as_deref(), Some("claude"));
    assert_eq!(run.session.as_deref(), Some("s1"));
    assert_eq!(run.vault.as_deref(), Some(vault.as_str()));
    assert_eq!(json.findings, []);
}

#[test]
fn every_capture_is_logged_where_its_vault_keeps_state() {
    let env = Env::git_vault();
    let r = env.capture(b"{\"session_id\":\"x\"}", &["--client", "codex"]);
    assert!(r.stderr.contains("no session directive found"));
    let log: PathBuf = env.vault.join(".git/rutter/hook-runs.jsonl");
    let text = std::fs::read_to_string(&log).unwrap();
    let run: common::json::Run = decode(text.lines().last().unwrap());
    assert_eq!(run.outcome, "no-directive");
    assert_eq!(run.client.as_deref(), Some("codex"));
    assert_eq!(run.session.as_deref(), Some("x"));
    assert!(
        !text.contains("librarian-session"),
        "no summary text is logged"
    );
    let before = env.all_records();
    let r = env.capture(br#"{"summary":"Decided logging.","refs":[]}"#, &[]);
    assert!(r.stderr.contains("captured 1 entry"));
    assert_ne!(env.all_records(), before);
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text.lines().count(), 2);
    assert!(!text.contains("Decided logging"), "{text}");
}

#[test]
fn a_registered_hook_without_its_server_is_a_finding() {
    let env = healthy();
    std::fs::remove_file(env.home.join(".claude.json")).unwrap();
    let (_, json) = status_json(&env);
    let f = json.finding("mcp-missing");
    assert_eq!(f.client.as_deref(), Some("claude"));
    let todo = &f.todo;
    assert!(
        todo.starts_with("Run `claude mcp add rutter --scope user -- "),
        "{todo}"
    );
    // Copilot CLI's server entry needs a vault: installed with none known, the hook is there
    // and the server is not.
    env.git(&["config", "--global", "--unset", "rutter.vault"]);
    let r = rutter_in(&env, &env.root(), &["install-hook", "--client", "copilot"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (_, json) = status_json(&env);
    let copilot = json
        .findings
        .iter()
        .find(|f| f.kind == "mcp-missing" && f.client.as_deref() == Some("copilot"))
        .unwrap_or_else(|| panic!("{json:#?}"));
    assert_eq!(
        copilot.todo,
        "Run `git rutter install-hook --client copilot --vault PATH` with your notes vault: the server entry needs it."
    );
    assert_eq!(json.clients[3].mcp.state, "missing");
}

/// With no usable vault configured, a client's registration still reads as it is: Copilot's
/// server entry (which names its own vault) is registered, and Muse Code's folder says it is
/// installed (status said "MCP missing" and "not installed").
#[test]
fn registrations_read_the_same_when_no_vault_is_usable() {
    let env = healthy();
    let r = run_with_stdin(env.cmd().args(["install-hook", "--client", "copilot"]), b"");
    assert_eq!(r.code, 0, "{}", r.stderr);
    std::fs::create_dir_all(env.home.join(".config/muse")).unwrap();
    let r = env
        .cmd()
        .env("LIBRARIAN_VAULT_PATH", "/nonexistent")
        .args(["status", "--json"])
        .output()
        .unwrap();
    let json: Status = decode(&String::from_utf8(r.stdout).unwrap());
    let copilot = json.client("copilot");
    assert_eq!(copilot.mcp.state, "registered", "{copilot:#?}");
    assert!(json.client("muse").installed, "{json:#?}");
}

/// A client file kept by a dotfiles manager (a symbolic link) is read as the client reads it:
/// a hook the user added by hand, as install-hook's refusal tells them to, is registered, so
/// status no longer sends them back to install-hook, which still never edits through the link.
#[test]
fn a_linked_client_file_is_read_through_its_link() {
    let env = healthy();
    let settings = env.home.join(".claude/settings.json");
    let kept = env.home.join("dotfiles/claude-settings.json");
    std::fs::create_dir_all(kept.parent().unwrap()).unwrap();
    std::fs::rename(&settings, &kept).unwrap();
    std::os::unix::fs::symlink(&kept, &settings).unwrap();
    let (code, json) = status_json(&env);
    assert_eq!(code, 0, "{json:#?}");
    let claude = &json.clients[0];
    assert_eq!(
        (claude.client.as_str(), claude.hook.state.as_str()),
        ("claude", "registered"),
        "{json:#?}"
    );
    assert!(claude.refusals.is_empty() && claude.up_to_date, "{json:#?}");
    let r = run_with_stdin(env.cmd().args(["install-hook", "--client", "claude"]), b"");
    assert!(r.stderr.contains("is a symbolic link"), "{}", r.stderr);
    assert!(std::fs::symlink_metadata(&settings)
        .unwrap()
        .file_type()
        .is_symlink());
    // A link to a FIFO is never read (status would wait forever): the file reads as unreadable.
    std::fs::remove_file(&settings).unwrap();
    let fifo = env.home.join("dotfiles/fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    std::os::unix::fs::symlink(&fifo, &settings).unwrap();
    let (_, json) = status_json(&env);
    assert_eq!(json.clients[0].hook.state, "unreadable", "{json:#?}");
}

#[test]
fn pending_lines_and_a_vault_outside_git_are_findings() {
    let env = healthy();
    let lock = env.vault.join(".git/refs/rutter/records.lock");
    std::fs::write(&lock, "").unwrap();
    let r = env.capture(
        br#"{"summary":"Decided while the ref is locked.","refs":[]}"#,
        &["--client", "claude"],
    );
    assert!(r.stderr.contains("not committed yet"), "{}", r.stderr);
    let (_, json) = status_json(&env);
    assert_eq!(json.record().pending, 1);
    assert!(json
        .finding("pending")
        .todo
        .starts_with("Run `git rutter commit`"));
    assert_eq!(json.last_runs[0].outcome, "captured");
    assert!(json.last_runs[0].reason.ends_with(", not committed yet"));
    std::fs::remove_file(&lock).unwrap();
    assert_eq!(env.rutter(&["commit"]).code, 0);
    let (code, json) = status_json(&env);
    assert_eq!(code, 0, "{json:#?}");

    let plain = Env::bare();
    plain.write("Notes/a.md", common::NOTE_A);
    let r = plain.rutter(&["status", "--json"]);
    let json: Status = decode(&r.stdout);
    assert!(!json.vault().git);
    assert!(json.record.is_none());
    let f = json.finding("not-git");
    assert_eq!(
        f.todo,
        format!("Run `git rutter init {}`.", plain.vault.display())
    );
}

#[test]
fn a_hook_with_wrong_arguments_is_logged_as_a_failed_run() {
    let env = healthy();
    let r = env.capture(b"{}", &["--client", "claude", "--no-such-flag"]);
    assert_eq!(r.code, 0);
    assert!(r.stderr.contains("nothing captured"), "{}", r.stderr);
    let (_, json) = status_json(&env);
    let f = json.finding("last-run-failed");
    assert_eq!(f.client.as_deref(), Some("claude"));
    assert!(
        f.message.contains(
            "(malformed): invalid arguments: error: unexpected argument '--no-such-flag'"
        ),
        "{f:?}"
    );
}

/// A Claude Code transcript whose current turn holds `text` as the assistant's reply; the Stop
/// payload for it.
fn turn_payload(env: &Env, name: &str, text: &str) -> Vec<u8> {
    let path = env.root().join(format!("transcripts/{name}.jsonl"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let user = serde_json::json!({"type":"user","message":{"role":"user","content":"go on"}});
    let asst = serde_json::json!({"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":text}]}});
    std::fs::write(&path, format!("{user}\n{asst}\n")).unwrap();
    serde_json::json!({"session_id": name, "transcript_path": path, "cwd": env.root(), "hook_event_name": "Stop"})
        .to_string()
        .into_bytes()
}

#[test]
fn a_turn_is_logged_as_one_run_with_its_outcome() {
    let env = healthy();
    let hook = claude_hook(&env);
    let two = "Done.\n<!-- librarian-session {\"summary\":\"Decided A.\",\"refs\":[]} -->\nAlso:\n<!-- librarian-session {\"summary\":\"Decided B.\",\"refs\":[]} -->";
    let r = fire(&env, &hook, &turn_payload(&env, "two", two), None);
    assert!(r.stderr.contains("captured 2 entries"), "{}", r.stderr);
    fire(&env, &hook, &turn_payload(&env, "two", two), None);
    let broken = "<!-- librarian-session {\"summary\": \"no closing quote} -->";
    fire(&env, &hook, &turn_payload(&env, "broken", broken), None);
    let (_, json) = status_json(&env);
    let runs = &json.last_runs;
    let seen: Vec<(&str, usize)> = runs[..3]
        .iter()
        .map(|r| (r.outcome.as_str(), r.entries))
        .collect();
    assert_eq!(seen, [("malformed", 0), ("deduped", 0), ("captured", 2)]);
    assert_eq!(
        runs[0].reason,
        "the session directive of this turn is not valid JSON"
    );
    assert_eq!(json.clients[0].last_capture.as_ref().unwrap().entries, 2);
    assert_eq!(
        json.finding("last-run-failed").client.as_deref(),
        Some("claude")
    );
}

/// The record line counts the commits since the last `verify` (walking back from the tip no
/// further than the verified one), and says so in words.
#[test]
fn the_commits_since_the_last_verify_are_counted() {
    let env = healthy();
    assert_eq!(env.rutter(&["verify"]).code, 0);
    let (_, s) = status_json(&env);
    assert_eq!(s.record.unwrap().commits_since_verify, Some(0));
    assert!(status(&env, &[]).stdout.contains("verified at the tip"));
    for (n, text) in ["Decided a second line.", "Decided a third line."]
        .iter()
        .enumerate()
    {
        let directive = common::directive(text, &["Notes/a.md"]);
        let payload = env.transcript_payload(&format!("t{}", n + 2), "s1", &directive);
        let r = fire(&env, &claude_hook(&env), &payload, None);
        assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
    }
    let (_, s) = status_json(&env);
    assert_eq!(s.record.unwrap().commits_since_verify, Some(2));
    let human = status(&env, &[]).stdout;
    assert!(human.contains("2 commits since the last verify"), "{human}");
}

/// `status` sees what `verify` would find in the working tree (a day file deleted or edited
/// after commit), so a check that runs `status` is not told all is well; an acknowledged
/// change, a capture's own append and a restored file are no finding.
#[test]
fn record_files_changed_in_the_working_tree_are_a_finding_as_verify_finds_them() {
    let env = healthy();
    assert_eq!(env.rutter(&["verify"]).code, 0);
    let day = std::fs::read_dir(env.vault.join("_librarian/sessions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "md"))
        .unwrap();
    let rel = day.strip_prefix(&env.vault).unwrap().display().to_string();
    // A capture's append since the verify is no change.
    let payload = env.transcript_payload(
        "t2",
        "s1",
        &common::directive("Decided a second line.", &["Notes/a.md"]),
    );
    assert!(fire(&env, &claude_hook(&env), &payload, None)
        .stderr
        .contains("captured 1 entry"));
    let (code, s) = status_json(&env);
    assert_eq!((code, s.record().working_changes.len()), (0, 0), "{s:#?}");
    let text = std::fs::read_to_string(&day).unwrap();
    std::fs::write(
        &day,
        text.replace("status is the first", "status is the last"),
    )
    .unwrap();
    let (code, s) = status_json(&env);
    assert_eq!(code, 1);
    assert_eq!(
        s.record().working_changes,
        [WorkingChange {
            kind: "edited".into(),
            path: rel.clone()
        }]
    );
    let human = status(&env, &[]).stdout;
    assert!(
        human.contains("1 commit since the last verify; 1 record file changed in the working tree"),
        "{human}"
    );
    assert!(
        human.contains(&format!(
            "record files differ from their commit: {rel} (edited after commit)"
        )),
        "{human}"
    );
    std::fs::remove_file(&day).unwrap();
    let (code, s) = status_json(&env);
    assert_eq!(code, 1);
    assert_eq!(s.record().working_changes[0].kind, "deleted");
    let id = env
        .rutter(&["verify", "--porcelain"])
        .stdout
        .lines()
        .find_map(|l| {
            l.split('\t')
                .find(|f| f.starts_with("deleted:"))
                .map(str::to_string)
        })
        .expect("verify names the deletion");
    let ack = env.rutter(&["verify", "--ack", &id, "--reason", "Moved it on purpose."]);
    assert_eq!(ack.code, 0, "{}", ack.stderr);
    let (code, s) = status_json(&env);
    assert_eq!((code, s.record().working_changes.len()), (0, 0), "{s:#?}");
}

/// Use-log lines an MCP read wrote wait for the next commit: `verify` counts them among its
/// pending lines, so `status` shows them too (it said `0 pending` beside verify's `2`), as no
/// finding: they wait by design.
#[test]
fn use_log_lines_waiting_for_the_next_commit_are_shown_as_no_finding() {
    let env = healthy();
    let line = "{\"ts\":\"2026-11-30T12:00:00.000Z\",\"kind\":\"librarian-recent\"}\n";
    let path = env.vault.join("_librarian/stateful-use.jsonl");
    let mut log = std::fs::read_to_string(&path).unwrap_or_default();
    log.push_str(line);
    log.push_str(line);
    std::fs::write(&path, log).unwrap();
    let (code, s) = status_json(&env);
    assert_eq!((code, s.record().use_log_waiting), (0, 2), "{s:#?}");
    let human = status(&env, &[]).stdout;
    assert!(
        human.contains("0 pending (2 use-log lines for the next commit)"),
        "{human}"
    );
    assert_eq!(env.rutter(&["commit"]).code, 0);
    let (_, s) = status_json(&env);
    assert_eq!(s.record().use_log_waiting, 0);
}

/// A file where the vault's `.git/rutter` folder belongs (put there by hand or by a broken
/// copy): every search and commit fails on it, so `status` names it with the move that
/// clears it, instead of a healthy report that suggests `reindex`.
#[test]
fn a_file_at_the_tools_own_folder_is_a_finding() {
    let env = Env::git_vault();
    let state = env.vault.join(".git/rutter");
    std::fs::remove_dir_all(&state).unwrap();
    std::fs::write(&state, "garbage\n").unwrap();
    let (code, s) = status_json(&env);
    assert_eq!(code, 1);
    assert!(s.kinds().contains(&"state-unusable"), "{:?}", s.kinds());
    let r = status(&env, &[]);
    assert!(
        r.stdout
            .contains(&format!("{} is not a folder", state.display()))
            && r.stdout.contains(&format!("mv {} ", state.display())),
        "{}",
        r.stdout
    );
    std::fs::remove_file(&state).unwrap();
    let (_, s) = status_json(&env);
    assert!(!s.kinds().contains(&"state-unusable"), "{:?}", s.kinds());
}

/// `rutter.sign` set to a word git reads as no boolean leaves commits unsigned without a word
/// from `commit` or a capture: `status` names it; a boolean (or git's integers) is no finding.
#[test]
fn an_unreadable_rutter_sign_is_a_finding() {
    let env = Env::git_vault();
    env.git(&["config", "rutter.sign", "maybe"]);
    let (code, s) = status_json(&env);
    assert_eq!(code, 1);
    assert!(s.kinds().contains(&"sign-invalid"), "{:?}", s.kinds());
    let r = status(&env, &[]);
    assert!(
        r.stdout.contains("git config rutter.sign is \"maybe\""),
        "{}",
        r.stdout
    );
    for fine in ["false", "no", "0"] {
        env.git(&["config", "rutter.sign", fine]);
        let (_, s) = status_json(&env);
        assert!(
            !s.kinds().contains(&"sign-invalid"),
            "{fine}: {:?}",
            s.kinds()
        );
    }
}

/// A second vault, a git repository holding one note, beside the test's own.
fn second_vault(env: &Env) -> PathBuf {
    let nv = env.root().join("new-vault");
    std::fs::create_dir_all(&nv).unwrap();
    std::fs::write(nv.join("x.md"), "# x\n").unwrap();
    env.git_in(&nv, &["init", "-q", "-b", "main"]);
    env.git_in(&nv, &["add", "-A"]);
    env.git_in(&nv, &["commit", "-qm", "notes"]);
    nv
}

/// The trial's vault switch: Cursor's hook names the vault configured when it was installed;
/// after `rutter.vault` moves to another vault, status names both and the command that moves
/// the hook, and that command clears the finding.
#[test]
fn a_hook_that_names_another_vault_than_the_configured_one_is_a_finding() {
    let env = Env::git_vault();
    let old = env.vault.display().to_string();
    env.git(&["config", "--global", "rutter.vault", &old]);
    let r = rutter_in(&env, &env.root(), &["install-hook", "--client", "cursor"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (code, json) = status_json(&env);
    assert!(json.findings.iter().all(|f| f.kind != "hook-vault-differs"));
    assert_eq!(code, 0, "{:#?}", json.findings);
    let new = second_vault(&env).display().to_string();
    env.git(&["config", "--global", "rutter.vault", &new]);
    let (code, json) = status_json(&env);
    assert_eq!(code, 1);
    let f = json.finding("hook-vault-differs");
    assert_eq!(f.client.as_deref(), Some("cursor"));
    assert!(
        f.message
            .contains(&format!("captures into {old}, not into {new}"))
            && f.message.contains("git config rutter.vault"),
        "{f:?}"
    );
    assert!(
        f.todo.starts_with(&format!(
            "Run `git rutter install-hook --client cursor` to move the hook (and its MCP server) to {new}"
        )),
        "{f:?}"
    );
    assert!(
        json.findings
            .iter()
            .all(|f| f.kind != "registration-incomplete"),
        "one finding says it: {:#?}",
        json.findings
    );
    let r = rutter_in(&env, &env.root(), &["install-hook", "--client", "cursor"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (code, json) = status_json(&env);
    assert_eq!(code, 0, "{:#?}", json.findings);
}
