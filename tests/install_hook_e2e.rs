//! `git rutter install-hook` / `uninstall-hook` end to end: the real binary writing into a
//! temporary HOME, for all ten clients (the four added with issue 34 also have a round trip each
//! in tests/clients_e2e.rs). Installing twice leaves one registration and changes no
//! byte; the registered command really captures with the client's label; stale paths and
//! TypeScript-reference hooks are replaced in place; foreign, unparseable and symlinked files are
//! refused and left byte-identical; uninstall takes out only what install put in.

use crate::common;

use common::decoded::InstallHook;
use common::json::decode;
use common::{run_with_stdin, Env, Run, BIN};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const CLIENTS: [&str; 10] = [
    "claude", "codex", "grok", "copilot", "agy", "muse", "cursor", "gemini", "opencode", "windsurf",
];

/// Runs `git-rutter ARGS` with the vault in LIBRARIAN_VAULT_PATH (as a hook would see it).
fn rutter(env: &Env, args: &[&str]) -> Run {
    run_with_stdin(env.cmd().args(args), b"")
}

/// Runs `git-rutter ARGS` with no vault configured anywhere.
fn rutter_without_vault(env: &Env, args: &[&str]) -> Run {
    run_with_stdin(env.cmd().env_remove("LIBRARIAN_VAULT_PATH").args(args), b"")
}

fn install(env: &Env, client: &str) -> Run {
    rutter(env, &["install-hook", "--client", client])
}

/// Every file under `dir` (symlinks as their target text), by path.
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.map(Result::unwrap) {
            let p = e.path();
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                stack.push(p);
            } else if ft.is_symlink() {
                let target = std::fs::read_link(&p).unwrap();
                out.insert(p, format!("-> {}", target.display()).into_bytes());
            } else {
                let bytes = std::fs::read(&p).unwrap();
                out.insert(p, bytes);
            }
        }
    }
    out
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The hook file of each client and the JSON pointer of its first command (OpenCode's is its
/// plugin, whose command is no JSON member).
fn hook_of(env: &Env, client: &str) -> (PathBuf, &'static str) {
    let h = &env.home;
    match client {
        "claude" => (
            h.join(".claude/settings.json"),
            "/hooks/Stop/0/hooks/0/command",
        ),
        "codex" => (h.join(".codex/hooks.json"), "/hooks/Stop/0/hooks/0/command"),
        "grok" => (
            h.join(".grok/hooks/rutter.json"),
            "/hooks/Stop/0/hooks/0/command",
        ),
        "copilot" => (
            h.join(".copilot/hooks/rutter.json"),
            "/hooks/agentStop/0/bash",
        ),
        "agy" => (
            h.join(".gemini/config/hooks.json"),
            "/git-rutter/Stop/0/command",
        ),
        "muse" => (
            h.join(".config/muse/settings.json"),
            "/hooks/Stop/0/hooks/0/command",
        ),
        "cursor" => (
            h.join(".cursor/hooks.json"),
            "/hooks/afterAgentResponse/0/command",
        ),
        "gemini" => (
            h.join(".gemini/settings.json"),
            "/hooks/AfterAgent/0/hooks/0/command",
        ),
        "opencode" => (h.join(".config/opencode/plugins/git-rutter.js"), ""),
        "windsurf" => (
            h.join(".codeium/windsurf/hooks.json"),
            "/hooks/post_cascade_response/0/command",
        ),
        _ => unreachable!(),
    }
}

/// How many git-rutter capture commands `text` holds (as a shell line, or as the OpenCode
/// plugin's JSON array).
fn registrations(text: &str) -> usize {
    text.matches("git-rutter capture --client").count()
        + text.matches(r#"git-rutter","capture","--client""#).count()
}

/// Whether `text` holds the capture command of `client`.
fn captures_for(text: &str, client: &str) -> bool {
    text.contains(&format!("capture --client {client}"))
        || text.contains(&format!(r#""capture","--client","{client}""#))
}

#[test]
fn installing_twice_leaves_one_registration_per_client_and_changes_nothing() {
    let env = Env::git_vault();
    for client in CLIENTS {
        let r = install(&env, client);
        assert_eq!(r.code, 0, "{client}: {}{}", r.stdout, r.stderr);
        assert!(r.stdout.contains("created "), "{client}: {}", r.stdout);
    }
    let once = tree(&env.home);
    for client in CLIENTS {
        let r = install(&env, client);
        assert_eq!(r.code, 0, "{client}: {}", r.stderr);
        assert!(
            r.stdout.contains("nothing to change"),
            "{client}: {}",
            r.stdout
        );
    }
    assert_eq!(tree(&env.home), once, "a second run changed a file");
    for client in CLIENTS {
        let (path, _) = hook_of(&env, client);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(registrations(&text), 1, "{client}: {text}");
        assert!(captures_for(&text, client), "{text}");
    }
    // The instruction files carry the capture contract from its one source.
    let contract = rutter_instructions();
    for rel in [
        ".codex/AGENTS.md",
        ".copilot/instructions/rutter.instructions.md",
        ".gemini/config/rules/rutter-capture.md",
        ".config/muse/AGENTS.md",
        ".gemini/GEMINI.md",
        ".config/opencode/AGENTS.md",
        ".codeium/windsurf/memories/global_rules.md",
    ] {
        let text = std::fs::read_to_string(env.home.join(rel)).unwrap();
        assert!(text.contains(&contract), "{rel} lacks the contract");
        assert_eq!(
            text.matches("<!-- BEGIN git-rutter -->").count(),
            1,
            "{rel}"
        );
    }
    let rule =
        std::fs::read_to_string(env.home.join(".gemini/config/rules/rutter-capture.md")).unwrap();
    assert!(rule.starts_with("---\ntrigger: always_on\n---\n"), "{rule}");
}

/// The capture contract as an instruction file carries it (the server named, not "This
/// server").
fn rutter_instructions() -> String {
    rutter::contract::instructions_in_file("the user")
}

#[test]
fn the_registered_command_captures_with_the_clients_label() {
    let env = Env::git_vault();
    // OpenCode's plugin runs its command itself: tests/clients_e2e.rs runs it under node.
    for client in CLIENTS.into_iter().filter(|c| *c != "opencode") {
        assert_eq!(install(&env, client).code, 0, "{client}");
        let (path, pointer) = hook_of(&env, client);
        let command = read_json(&path)
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap()
            .to_string();
        assert!(command.starts_with(&canonical_bin()), "{command}");
        // Muse, agy, Cursor and Windsurf get the vault written in (Muse clears the environment,
        // the editors start from a desktop): run those with no vault in the environment, as
        // the client would.
        let mut sh = std::process::Command::new("sh");
        sh.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &env.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .args(["-c", &command]);
        if !["muse", "agy", "cursor", "windsurf"].contains(&client) {
            sh.env("LIBRARIAN_VAULT_PATH", &env.vault);
        }
        let payload = serde_json::json!({
            "summary": format!("Decided to register {client} through install-hook."),
            "refs": ["Notes/a.md"],
            "session_id": format!("s-{client}"),
        });
        let r = run_with_stdin(&mut sh, payload.to_string().as_bytes());
        assert_eq!(r.code, 0, "{client}: {}", r.stderr);
        assert_eq!(r.stdout, "", "{client}: a hook prints nothing on stdout");
    }
    let records = env.all_records();
    for client in CLIENTS.into_iter().filter(|c| *c != "opencode") {
        let line = records
            .lines()
            .find(|l| l.contains(&format!("register {client} through")))
            .unwrap_or_else(|| panic!("{client} captured nothing:\n{records}"));
        assert!(line.contains(&format!("\"client\":\"{client}\"")), "{line}");
    }
}

fn canonical_bin() -> String {
    Path::new(BIN).canonicalize().unwrap().display().to_string()
}

#[test]
fn a_stale_binary_path_is_replaced_in_place() {
    let env = Env::bare();
    let settings = env.home.join(".claude/settings.json");
    let before = r#"{
  "model": "opus",
  "hooks": {
    "Stop": [
      { "hooks": [ { "type": "command", "command": "afplay /System/done.aiff" } ] },
      { "matcher": "", "hooks": [ { "type": "command", "command": "/old/place/git-rutter capture --client claude", "timeout": 20 } ] }
    ]
  }
}
"#;
    write(&settings, before);
    let r = install(&env, "claude");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("updated the hook from `/old/place/git-rutter capture --client claude`"),
        "{}",
        r.stdout
    );
    let v = read_json(&settings);
    let stop = v["hooks"]["Stop"].as_array().unwrap();
    assert_eq!(stop.len(), 2);
    assert_eq!(stop[0]["hooks"][0]["command"], "afplay /System/done.aiff");
    assert_eq!(
        stop[1]["hooks"][0]["command"],
        format!("{} capture --client claude", canonical_bin())
    );
    assert_eq!(
        stop[1]["hooks"][0]["timeout"], 20,
        "the user's timeout is kept"
    );
    assert_eq!(v["model"], "opus");
    let text = std::fs::read_to_string(&settings).unwrap();
    assert_eq!(registrations(&text), 1);
}

#[test]
fn typescript_reference_hooks_are_replaced_saying_so() {
    let env = Env::bare();
    let settings = env.home.join(".claude/settings.json");
    write(
        &settings,
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/home/me/rutter/hooks/librarian-stop.sh"}]}]}}"#,
    );
    // The reference wrote Grok's hook file whole; it is replaced, not refused.
    let grok = env.home.join(".grok/hooks/rutter.json");
    write(
        &grok,
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/usr/lib/node_modules/rutter-memory/hooks/librarian-stop.sh --client grok"}]}]}}"#,
    );
    for (client, path) in [("claude", &settings), ("grok", &grok)] {
        let r = install(&env, client);
        assert_eq!(r.code, 0, "{client}: {}", r.stderr);
        assert!(
            r.stdout.contains("replaced the TypeScript rutter hook"),
            "{}",
            r.stdout
        );
        assert!(
            r.stdout.contains("rewrites whole day files"),
            "{}",
            r.stdout
        );
        let text = std::fs::read_to_string(path).unwrap();
        assert!(!text.contains("librarian-stop.sh"), "{text}");
        assert_eq!(registrations(&text), 1, "{text}");
    }
}

#[test]
fn unparseable_foreign_and_broken_files_are_refused_and_left_byte_identical() {
    let env = Env::bare();
    let cases: [(&str, &str, &str, &str); 10] = [
        (
            "claude",
            ".claude/settings.json",
            "{ \"hooks\": { oops ",
            "is not valid JSON",
        ),
        (
            "codex",
            ".codex/config.toml",
            "[mcp_servers\nbroken = ",
            "is not valid TOML",
        ),
        (
            "grok",
            ".grok/hooks/rutter.json",
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}"#,
            "did not write",
        ),
        (
            "copilot",
            ".copilot/instructions/rutter.instructions.md",
            "# My own notes for Copilot\n",
            "was not written by git-rutter",
        ),
        (
            "agy",
            ".gemini/config/hooks.json",
            "[1, 2]",
            "is not a JSON object",
        ),
        (
            "muse",
            ".config/muse/AGENTS.md",
            "# Rules\n<!-- BEGIN git-rutter -->\nhalf a block\n",
            "~/.config/muse/AGENTS.md: a `<!-- BEGIN git-rutter -->` line without a `<!-- END git-rutter -->` line after it. Fix the file by hand.",
        ),
        (
            "cursor",
            ".cursor/mcp.json",
            r#"{"mcpServers": {"rutter": {"command": "/opt/other-rutter", "args": ["serve"]}}}"#,
            "which is not git-rutter",
        ),
        (
            "gemini",
            ".gemini/settings.json",
            "{\n  // my settings\n  \"theme\": \"GitHub\"\n}\n",
            "is not valid JSON",
        ),
        (
            "opencode",
            ".config/opencode/plugins/git-rutter.js",
            "export const Mine = async () => ({})\n",
            "was not written by git-rutter",
        ),
        (
            "windsurf",
            ".codeium/windsurf/hooks.json",
            r#"{"hooks": {"post_cascade_response": "say done"}}"#,
            "is not of the type the client expects",
        ),
    ];
    for (client, rel, text, why) in cases {
        write(&env.home.join(rel), text);
        let before = tree(&env.home);
        let r = install(&env, client);
        assert_eq!(r.code, 1, "{client}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(why), "{client}: {}", r.stderr);
        assert!(
            r.stderr.contains("nothing was changed"),
            "{client}: {}",
            r.stderr
        );
        assert_eq!(
            tree(&env.home),
            before,
            "{client}: a refused install wrote something"
        );
        let dry = rutter(&env, &["install-hook", "--client", client, "--dry-run"]);
        assert_eq!(dry.code, 1, "{client}: a dry run refuses too");
        let un = rutter(&env, &["uninstall-hook", "--client", client]);
        assert_eq!(
            tree(&env.home),
            before,
            "{client}: uninstall touched a foreign file ({})",
            un.stderr
        );
    }
}

#[test]
fn a_symlinked_config_is_refused() {
    let env = Env::bare();
    let target = env.root().join("dotfiles/settings.json");
    write(&target, "{\"theme\": \"dark\"}\n");
    std::fs::create_dir_all(env.home.join(".claude")).unwrap();
    std::os::unix::fs::symlink(&target, env.home.join(".claude/settings.json")).unwrap();
    let r = install(&env, "claude");
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("is a symbolic link"), "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "{\"theme\": \"dark\"}\n"
    );
    assert!(
        std::fs::symlink_metadata(env.home.join(".claude/settings.json"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn uninstall_removes_only_what_install_added() {
    let env = Env::bare();
    let h = &env.home;
    // The user's own files, in several layouts: each must come back byte for byte.
    let user_files = [
        (".claude/settings.json", "{\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"PreToolUse\": [\n            {\n                \"matcher\": \"Bash\",\n                \"hooks\": [{\"type\": \"command\", \"command\": \"check\"}]\n            }\n        ]\n    }\n}\n"),
        (".codex/hooks.json", "{\"hooks\":{\"Stop\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"notify\"}]}]}}"),
        (".codex/AGENTS.md", "# Global rules\n\nAlways answer in British English.\n"),
        (".codex/config.toml", "# Codex settings\nmodel = \"o4\" # fast\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\nargs = [\"--port\", \"0\"]\n"),
        (".copilot/mcp-config.json", "{\n\t\"mcpServers\": {\n\t\t\"github\": {\n\t\t\t\"type\": \"http\",\n\t\t\t\"url\": \"https://example.invalid/mcp\"\n\t\t}\n\t}\n}"),
        (".gemini/config/hooks.json", "{\n  \"lint\": {\n    \"Stop\": [\n      {\n        \"command\": \"make lint\"\n      }\n    ]\n  }\n}\n"),
        (".config/muse/settings.json", "{\n  \"theme\": \"light\"\n}\n"),
        (".config/muse/AGENTS.md", "No trailing blank line here.\n"),
        (".cursor/hooks.json", "{\"version\":1,\"hooks\":{\"stop\":[{\"command\":\"./audit.sh\",\"loop_limit\":10}]}}\n"),
        (".gemini/settings.json", "{\n  \"theme\": \"GitHub\",\n  \"hooks\": {\n    \"BeforeTool\": [\n      { \"matcher\": \"write_file\", \"hooks\": [{ \"type\": \"command\", \"command\": \"./check.sh\" }] }\n    ]\n  }\n}\n"),
        // Kept with CRLF (an editor's or `core.autocrlf`'s): the block takes its line ending.
        (".gemini/GEMINI.md", "# Context\r\n\r\nAnswer briefly.\r\n"),
        (".config/opencode/opencode.json", "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  \"mcp\": {\n    \"docs\": { \"type\": \"remote\", \"url\": \"https://example.invalid/mcp\" }\n  }\n}\n"),
        (".codeium/windsurf/mcp_config.json", "{\n  \"mcpServers\": {\n    \"github\": { \"serverUrl\": \"https://example.invalid/mcp\" }\n  }\n}\n"),
        // Without a final newline: it gains one with the block, and loses it with the block.
        (".codeium/windsurf/memories/global_rules.md", "Prefer small diffs."),
    ];
    for (rel, text) in user_files {
        write(&h.join(rel), text);
    }
    let before = tree(h);
    for client in CLIENTS {
        let r = install(&env, client);
        assert_eq!(r.code, 0, "{client}: {}", r.stderr);
    }
    for (rel, text) in user_files {
        assert_ne!(
            std::fs::read_to_string(h.join(rel)).unwrap(),
            text,
            "{rel} was not edited"
        );
    }
    // The user's content is still there after install.
    assert!(std::fs::read_to_string(h.join(".codex/config.toml"))
        .unwrap()
        .starts_with(user_files[3].1));
    assert!(std::fs::read_to_string(h.join(".codex/AGENTS.md"))
        .unwrap()
        .starts_with(user_files[2].1));
    let gemini = std::fs::read_to_string(h.join(".gemini/GEMINI.md")).unwrap();
    assert!(gemini.contains("git-rutter"), "{gemini:?}");
    assert_eq!(
        gemini.matches('\n').count(),
        gemini.matches("\r\n").count(),
        "the block in a CRLF file has a line ending of its own: {gemini:?}"
    );
    let again = install(&env, "gemini");
    assert!(
        again.stdout.contains(".gemini/GEMINI.md is up to date"),
        "{}",
        again.stdout
    );
    for client in CLIENTS {
        let r = rutter(&env, &["uninstall-hook", "--client", client]);
        assert_eq!(r.code, 0, "{client}: {}", r.stderr);
    }
    assert_eq!(
        tree(h),
        before,
        "uninstall left a trace or changed the user's bytes"
    );
    let again = rutter(&env, &["uninstall-hook", "--client", "claude"]);
    assert_eq!(again.code, 0);
    assert!(
        again.stdout.contains("holds no git-rutter entry"),
        "{}",
        again.stdout
    );
}

/// The sentences about each file, without the diffs: the lines a report indents by two.
fn file_sentences(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("  "))
        .filter(|l| l.starts_with(['~', 'w', 'c', 'r']) && l.contains(' '))
        .collect()
}

/// A dry run says what it would do, in every client's words ("would create …: register the Stop
/// hook …"), never what it did ("created …: registered …") under its "nothing was written"; the
/// run that writes says what it did.
#[test]
fn a_dry_run_says_what_it_would_do_and_a_run_what_it_did() {
    const DONE: [&str; 7] = [
        "registered ",
        "updated ",
        "replaced ",
        "added ",
        "removed ",
        "created ",
        "wrote ",
    ];
    let said_done = |s: &str| {
        s.split([':', '(', ';'])
            .any(|part| DONE.iter().any(|d| part.trim_start().starts_with(d)))
    };
    for client in CLIENTS {
        for verb in ["install-hook", "uninstall-hook"] {
            let env = Env::bare();
            if verb == "uninstall-hook" {
                assert_eq!(install(&env, client).code, 0, "{client}");
            }
            let dry = rutter(&env, &[verb, "--client", client, "--dry-run"]);
            assert_eq!(dry.code, 0, "{client} {verb}: {}", dry.stderr);
            let planned = file_sentences(&dry.stdout);
            assert!(
                planned.iter().any(|l| l.starts_with("would ")),
                "{client} {verb}: {}",
                dry.stdout
            );
            for line in &planned {
                assert!(!said_done(line), "{client} {verb} --dry-run: {line}");
            }
            let done = rutter(&env, &[verb, "--client", client]);
            assert_eq!(done.code, 0, "{client} {verb}: {}", done.stderr);
            let lines = file_sentences(&done.stdout);
            assert!(
                lines.iter().any(|l| said_done(l)),
                "{client} {verb}: {}",
                done.stdout
            );
            assert!(
                !lines.iter().any(|l| l.starts_with("would ")),
                "{}",
                done.stdout
            );
        }
    }
}

#[test]
fn dry_run_shows_the_diff_and_writes_nothing() {
    let env = Env::bare();
    let r = rutter(&env, &["install-hook", "--client", "codex", "--dry-run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("nothing was written"), "{}", r.stdout);
    assert!(r.stdout.contains("+++ ~/.codex/hooks.json"), "{}", r.stdout);
    assert!(r.stdout.contains("+[mcp_servers.rutter]"), "{}", r.stdout);
    assert!(tree(&env.home).is_empty(), "a dry run wrote a file");
    assert_eq!(install(&env, "codex").code, 0);
    let installed = tree(&env.home);
    let u = rutter(&env, &["uninstall-hook", "--client", "codex", "--dry-run"]);
    assert_eq!(u.code, 0);
    assert!(
        u.stdout.contains("-<!-- BEGIN git-rutter -->"),
        "{}",
        u.stdout
    );
    assert_eq!(
        tree(&env.home),
        installed,
        "an uninstall dry run changed a file"
    );
}

#[test]
fn client_home_variables_are_honoured() {
    let env = Env::bare();
    let alt = env.root().join("alt");
    for (client, var, rel) in [
        ("claude", "CLAUDE_CONFIG_DIR", "claude/settings.json"),
        ("codex", "CODEX_HOME", "codex/hooks.json"),
        ("grok", "GROK_HOME", "grok/hooks/rutter.json"),
        ("copilot", "COPILOT_HOME", "copilot/hooks/rutter.json"),
        ("gemini", "GEMINI_CLI_HOME", "gemini/.gemini/settings.json"),
        (
            "opencode",
            "XDG_CONFIG_HOME",
            "xdg/opencode/plugins/git-rutter.js",
        ),
    ] {
        let dir = alt.join(rel.split('/').next().unwrap());
        let r = run_with_stdin(
            env.cmd()
                .env(var, &dir)
                .args(["install-hook", "--client", client]),
            b"",
        );
        assert_eq!(r.code, 0, "{client}: {}", r.stderr);
        assert!(
            alt.join(rel).is_file(),
            "{client}: {var} not honoured:\n{}",
            r.stdout
        );
    }
    assert!(
        tree(&env.home).is_empty(),
        "something went to the default place"
    );
}

#[test]
fn the_vault_is_required_only_where_the_environment_is_cleared() {
    let env = Env::bare();
    let r = rutter_without_vault(&env, &["install-hook", "--client", "muse"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("--vault"), "{}", r.stderr);
    assert!(tree(&env.home).is_empty());
    let r = rutter_without_vault(&env, &["install-hook", "--client", "claude"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("git rutter init --global"),
        "{}",
        r.stdout
    );
    let vault = env.vault.display().to_string();
    let r = rutter_without_vault(
        &env,
        &["--vault", &vault, "install-hook", "--client", "muse"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let muse = read_json(&env.home.join(".config/muse/settings.json"));
    assert_eq!(
        muse["mcpServers"]["rutter"]["args"],
        serde_json::json!(["mcp", "--vault", vault])
    );
    // A later run without --vault keeps the vault already written into the hook.
    let again = rutter_without_vault(&env, &["install-hook", "--client", "muse"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(
        again.stdout.contains("nothing to change"),
        "{}",
        again.stdout
    );
}

#[test]
fn json_output_reports_status_and_files() {
    let env = Env::bare();
    let r = rutter(&env, &["install-hook", "--client", "copilot", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: InstallHook = decode(&r.stdout);
    assert_eq!(v.status, "changed");
    assert_eq!(v.client, "copilot");
    assert_eq!(v.actions(), ["create", "create", "create"]);
    let again: InstallHook =
        decode(&rutter(&env, &["install-hook", "--client", "copilot", "--json"]).stdout);
    assert_eq!(again.status, "unchanged");
    assert_eq!(again.actions(), ["none", "none", "none"]);
    let bad = rutter(&env, &["install-hook", "--client", "vscode"]);
    assert_eq!(bad.code, 2, "an unknown client is a usage error");
}

#[test]
fn the_snippets_in_hooks_are_what_install_hook_writes() {
    let env = Env::bare();
    for client in CLIENTS {
        assert_eq!(install(&env, client).code, 0, "{client}");
    }
    let bin = canonical_bin();
    let vault = env.vault.display().to_string();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (snippet, rel) in [
        ("claude.json", ".claude/settings.json"),
        ("codex.json", ".codex/hooks.json"),
        ("codex-config.toml", ".codex/config.toml"),
        ("grok.json", ".grok/hooks/rutter.json"),
        ("copilot.json", ".copilot/hooks/rutter.json"),
        ("copilot-mcp-config.json", ".copilot/mcp-config.json"),
        ("agy.json", ".gemini/config/hooks.json"),
        ("muse.json", ".config/muse/settings.json"),
        ("cursor.json", ".cursor/hooks.json"),
        ("cursor-mcp.json", ".cursor/mcp.json"),
        ("gemini.json", ".gemini/settings.json"),
        ("opencode.json", ".config/opencode/opencode.json"),
        ("windsurf.json", ".codeium/windsurf/hooks.json"),
        (
            "windsurf-mcp_config.json",
            ".codeium/windsurf/mcp_config.json",
        ),
    ] {
        let shipped = std::fs::read_to_string(repo.join("hooks").join(snippet))
            .unwrap()
            .replace("/ABSOLUTE/PATH/TO/git-rutter", &bin)
            .replace("/ABSOLUTE/PATH/TO/notes", &vault);
        let written = std::fs::read_to_string(env.home.join(rel)).unwrap();
        assert_eq!(
            shipped, written,
            "hooks/{snippet} drifted from what install-hook writes"
        );
    }
}

/// The test's PATH without any folder that holds a `git-rutter`, so git and the shell's own
/// tools are found and git-rutter is not.
fn path_without_git_rutter() -> String {
    let path = std::env::var("PATH").unwrap_or_default();
    let kept: Vec<&str> = path
        .split(':')
        .filter(|dir| !dir.is_empty() && !Path::new(dir).join("git-rutter").exists())
        .collect();
    kept.join(":")
}

/// One of the plugin's hook commands, run as Claude Code runs a command hook (`bash -c`, the
/// documented default shell: https://code.claude.com/docs/en/hooks, "Command hook fields") with
/// the payload on stdin and only `PATH` to find git-rutter by.
fn plugin_hook(env: &Env, command: &str, path: &str, payload: &[u8]) -> Run {
    let mut bash = std::process::Command::new("bash");
    bash.env_clear()
        .env("PATH", path)
        .env("HOME", &env.home)
        .env("LIBRARIAN_VAULT_PATH", &env.vault)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .args(["-c", command]);
    run_with_stdin(&mut bash, payload)
}

#[test]
fn the_claude_code_plugin_runs_capture_from_path_and_fails_open() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let plugin = repo.join("plugins/claude-code");
    let manifest = read_json(&plugin.join(".claude-plugin/plugin.json"));
    assert_eq!(manifest["name"], "rutter");
    let command = |event: &str| {
        manifest
            .pointer(&format!("/hooks/{event}/0/hooks/0/command"))
            .and_then(Value::as_str)
            .unwrap()
            .to_string()
    };
    let market = read_json(&repo.join(".claude-plugin/marketplace.json"));
    assert_eq!(market["plugins"][0]["source"], "./plugins/claude-code");
    let env = Env::git_vault();
    let bin_dir = Path::new(BIN).parent().unwrap().display().to_string();
    // No git-rutter on PATH (git and the shell's own tools still are): nothing on stdout,
    // exit 0, and one line on stderr that names what is missing and how to get it.
    let without = path_without_git_rutter();
    let without_bin = without.as_str();
    let with_bin = format!("{bin_dir}:{without}");
    let payload =
        br#"{"summary": "Decided to ship the Claude Code plugin.", "refs": [], "session_id": "p"}"#;
    for (path, captured) in [(without_bin, false), (with_bin.as_str(), true)] {
        let r = plugin_hook(&env, &command("Stop"), path, payload);
        assert_eq!((r.code, r.stdout.as_str()), (0, ""), "{}", r.stderr);
        assert_eq!(
            env.all_records().contains("ship the Claude Code plugin"),
            captured
        );
        if !captured {
            assert!(
                r.stderr.contains("git-rutter is not on PATH"),
                "{}",
                r.stderr
            );
            assert!(
                r.stderr.contains("cargo install --locked git-rutter"),
                "{}",
                r.stderr
            );
        }
    }
    assert!(env.all_records().contains("\"client\":\"claude\""));
    // The session-start brief: the client's shape when git-rutter is on PATH, nothing otherwise.
    assert!(rutter(&env, &["recent"]).code == 0);
    let start = br#"{"hook_event_name": "SessionStart", "source": "startup"}"#;
    for (path, briefed) in [(without_bin, false), (with_bin.as_str(), true)] {
        let r = plugin_hook(&env, &command("SessionStart"), path, start);
        assert_eq!(r.code, 0, "{}", r.stderr);
        match briefed {
            false => {
                assert_eq!(r.stdout, "");
                assert!(
                    r.stderr.contains("git-rutter is not on PATH"),
                    "{}",
                    r.stderr
                );
            }
            true => {
                let v: Value = serde_json::from_str(&r.stdout).unwrap();
                let text = v.pointer("/hookSpecificOutput/additionalContext").unwrap();
                assert!(
                    text.as_str()
                        .unwrap()
                        .contains("ship the Claude Code plugin"),
                    "{v}"
                );
            }
        }
    }
}

/// The plugin's MCP server command, started as Claude Code starts a stdio server (the program
/// and its arguments, no shell of its own): without git-rutter on PATH it fails at once and
/// says why on stderr; with it, it is `git-rutter mcp` and answers `initialize`.
#[test]
fn the_claude_code_plugin_server_says_when_git_rutter_is_missing() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = read_json(&repo.join("plugins/claude-code/.claude-plugin/plugin.json"));
    let server = &manifest["mcpServers"]["rutter"];
    let program = server["command"].as_str().unwrap();
    let args: Vec<&str> = server["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let env = Env::git_vault();
    let bin_dir = Path::new(BIN).parent().unwrap().display().to_string();
    let start = |path: &str, stdin: &[u8]| {
        let mut cmd = std::process::Command::new(program);
        cmd.env_clear()
            .env("PATH", path)
            .env("HOME", &env.home)
            .env("LIBRARIAN_VAULT_PATH", &env.vault)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .args(&args);
        run_with_stdin(&mut cmd, stdin)
    };
    let without = path_without_git_rutter();
    let missing = start(&without, b"");
    assert_eq!((missing.code, missing.stdout.as_str()), (127, ""));
    assert!(
        missing.stderr.contains("git-rutter is not on PATH")
            && missing.stderr.contains("MCP server cannot start"),
        "{}",
        missing.stderr
    );
    let init = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","#,
        r#""capabilities":{},"clientInfo":{"name":"plugin-test","version":"0"}}}"#,
        "\n"
    );
    let found = start(&format!("{bin_dir}:{without}"), init.as_bytes());
    let reply: Value = serde_json::from_str(found.stdout.lines().next().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {} {}", found.stdout, found.stderr));
    assert_eq!(reply["id"], 1, "{reply}");
    assert!(
        reply.pointer("/result/serverInfo/name").is_some(),
        "{reply}"
    );
}

#[test]
fn an_empty_settings_file_opens_up_and_comes_back_empty() {
    let env = Env::bare();
    let settings = env.home.join(".claude/settings.json");
    write(&settings, "{}\n");
    assert_eq!(install(&env, "claude").code, 0);
    let text = std::fs::read_to_string(&settings).unwrap();
    assert!(
        text.starts_with("{\n  \"hooks\": {\n    \"Stop\": [\n"),
        "{text}"
    );
    assert_eq!(
        rutter(&env, &["uninstall-hook", "--client", "claude"]).code,
        0
    );
    // Nothing else was in it, so the file goes (it held only `{}`, which says nothing).
    assert!(!settings.exists());
}

/// The trial's F-8: a copy of the binary under another name writes its own path into every
/// command; installing twice from it changes no byte, and uninstalling from it takes its entries
/// out, for every client.
#[test]
fn a_binary_of_another_name_knows_what_it_wrote() {
    let env = Env::bare();
    let bin = env.root().join("bin/rutter-bin");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    std::fs::copy(BIN, &bin).unwrap();
    // The hermetic environment of the tests' own commands, for the renamed copy.
    let run = |args: &[&str]| {
        let c = env.cmd();
        let mut cmd = std::process::Command::new(&bin);
        cmd.env_clear();
        for (k, v) in c.get_envs() {
            if let Some(v) = v {
                cmd.env(k, v);
            }
        }
        cmd.current_dir(env.root()).args(args);
        run_with_stdin(&mut cmd, b"")
    };
    for client in CLIENTS {
        let first = run(&["install-hook", "--client", client]);
        assert_eq!(first.code, 0, "{client}: {}{}", first.stdout, first.stderr);
        let after_first = tree(&env.home);
        let second = run(&["install-hook", "--client", client]);
        assert_eq!(
            second.code, 0,
            "{client}: {}{}",
            second.stdout, second.stderr
        );
        assert_eq!(
            tree(&env.home),
            after_first,
            "{client}: the second install changed bytes"
        );
        let status: common::json::Status = common::json::decode(&run(&["status", "--json"]).stdout);
        let hook = &status.client(client).hook;
        assert_eq!(hook.state, "registered", "{client}: {hook:#?}");
        assert!(
            hook.program_ok && hook.program.as_deref() == Some(bin.to_str().unwrap()),
            "{client}: {hook:#?}"
        );
        let gone = run(&["uninstall-hook", "--client", client]);
        assert_eq!(gone.code, 0, "{client}: {}{}", gone.stdout, gone.stderr);
        let left: String = tree(&env.home)
            .values()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect();
        assert!(!left.contains("rutter-bin capture"), "{client}: {left}");
    }
}

/// The trial's F-10: a line the user added inside the marked block is never silently deleted:
/// uninstall leaves the block (exit 1), naming the line, and a later install refuses; the file
/// stays byte for byte.
#[test]
fn a_marked_block_the_user_edited_is_refused_with_its_line() {
    let env = Env::bare();
    assert_eq!(install(&env, "codex").code, 0);
    let agents = env.home.join(".codex/AGENTS.md");
    let text = std::fs::read_to_string(&agents).unwrap();
    let edited = text.replace(
        "<!-- END git-rutter -->",
        "MY OWN NOTE INSIDE THE BLOCK\n<!-- END git-rutter -->",
    );
    std::fs::write(&agents, &edited).unwrap();
    for args in [
        &["uninstall-hook", "--client", "codex"][..],
        &["install-hook", "--client", "codex"],
    ] {
        let r = rutter(&env, args);
        assert_eq!(r.code, 1, "{args:?}: {}{}", r.stdout, r.stderr);
        let said = format!("{}{}", r.stdout, r.stderr);
        assert!(
            said.contains("block was changed since git-rutter wrote it (the line \"MY OWN NOTE INSIDE THE BLOCK\" is not its text)"),
            "{args:?}: {said}"
        );
        assert_eq!(std::fs::read_to_string(&agents).unwrap(), edited);
    }
    // Moved out of the block, the note stays and the block goes.
    let moved = edited.replace("MY OWN NOTE INSIDE THE BLOCK\n", "") + "\nMY OWN NOTE\n";
    std::fs::write(&agents, &moved).unwrap();
    let r = rutter(&env, &["uninstall-hook", "--client", "codex"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let after = std::fs::read_to_string(&agents).unwrap();
    assert!(
        after.contains("MY OWN NOTE") && !after.contains("BEGIN git-rutter"),
        "{after}"
    );
}

/// A client file with a second name is refused (a rename would break the link), as every other
/// hard-linked file is; nothing is written.
#[test]
fn a_hard_linked_client_file_is_refused() {
    let env = Env::bare();
    let settings = env.home.join(".claude/settings.json");
    write(&settings, "{\"theme\": \"dark\"}\n");
    let other = env.root().join("dotfiles-settings.json");
    std::fs::hard_link(&settings, &other).unwrap();
    let r = install(&env, "claude");
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("hard link"), "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(&other).unwrap(),
        "{\"theme\": \"dark\"}\n"
    );
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        "{\"theme\": \"dark\"}\n"
    );
}

/// The trial's F-11: a file that cannot be written stops the install before anything is
/// written; a write that fails part-way names the files already changed, and running again
/// completes the registration.
#[test]
fn an_install_that_cannot_finish_says_what_it_changed() {
    let env = Env::bare();
    let before = tree(&env.home);
    let r = run_with_stdin(
        env.cmd()
            .env("RUTTER_FAILPOINTS", "client-write:config.toml")
            .args(["install-hook", "--client", "codex"]),
        b"",
    );
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("config.toml cannot be written"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("nothing was changed for Codex"),
        "{}",
        r.stderr
    );
    assert_eq!(tree(&env.home), before, "nothing was written");
    let r = run_with_stdin(
        env.cmd()
            .env("RUTTER_FAILPOINTS", "client-apply:config.toml")
            .args(["install-hook", "--client", "codex"]),
        b"",
    );
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("already changed for Codex:"),
        "{}",
        r.stderr
    );
    assert!(
        !r.stderr.contains("(os error 28): No space"),
        "said once: {}",
        r.stderr
    );
    // status says what install-hook would still do, as a plan.
    let st = rutter(&env, &["status"]);
    assert!(
        st.stdout
            .contains("install-hook would still change: ~/.codex/config.toml: register the MCP"),
        "{}{}",
        st.stdout,
        st.stderr
    );
    let r = install(&env, "codex");
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let again = install(&env, "codex");
    assert!(again.stdout.contains("up to date"), "{}", again.stdout);
}

#[test]
fn a_client_not_installed_here_is_named_before_its_folders_are_made() {
    let env = Env::git_vault();
    let dry = rutter(&env, &["install-hook", "--client", "grok", "--dry-run"]);
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    assert!(
        dry.stderr
            .contains("Grok does not look installed here (no ~/.grok)"),
        "{}",
        dry.stderr
    );
    assert!(
        dry.stderr
            .contains("install-hook would prepare its files anyway"),
        "{}",
        dry.stderr
    );
    assert!(!env.home.join(".grok").exists(), "a dry run makes nothing");
    let r = install(&env, "grok");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("does not look installed"), "{}", r.stderr);
    assert!(env.home.join(".grok").is_dir(), "prepared anyway");
    // Installed now (its folder exists): nothing more to say, and JSON says so.
    let again = install(&env, "grok");
    assert!(
        !again.stderr.contains("does not look installed"),
        "{}",
        again.stderr
    );
    let json = rutter(
        &env,
        &["install-hook", "--client", "codex", "--dry-run", "--json"],
    );
    let v: InstallHook = decode(&json.stdout);
    assert!(!v.installed, "{v:?}");
    assert!(v.dry_run);
    assert_eq!(json.stderr, "", "JSON runs say it in the JSON only");
}

/// The trial's vault switch: a hook that names its vault (Cursor's, from the configuration)
/// follows the vault configured now when install-hook runs again without `--vault`, saying so
/// and how to keep the old one; with no vault configured, the installed one is kept.
#[test]
fn a_vault_switch_moves_a_hook_that_names_the_old_vault() {
    let env = Env::git_vault();
    assert_eq!(install(&env, "cursor").code, 0);
    let (hooks, pointer) = hook_of(&env, "cursor");
    let old = env.vault.display().to_string();
    let command = || {
        read_json(&hooks)
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap()
            .to_string()
    };
    assert!(command().ends_with(&format!("--vault {old}")));
    let nv = env.root().join("new-vault");
    std::fs::create_dir_all(&nv).unwrap();
    std::fs::write(nv.join("x.md"), "# x\n").unwrap();
    env.git_in(&nv, &["init", "-q", "-b", "main"]);
    let new = nv.display().to_string();
    let r = run_with_stdin(
        env.cmd()
            .env("LIBRARIAN_VAULT_PATH", &nv)
            .args(["install-hook", "--client", "cursor"]),
        b"",
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        command().ends_with(&format!("--vault {new}")),
        "{}",
        command()
    );
    assert!(
        r.stdout.contains(&format!(
            "in place of {old}, the vault the installed hook named: captures now go to {new}. To keep {old}, run this again with `--vault {old}`."
        )),
        "{}",
        r.stdout
    );
    let mcp = read_json(&env.home.join(".cursor/mcp.json"));
    assert_eq!(
        mcp["mcpServers"]["rutter"]["env"]["LIBRARIAN_VAULT_PATH"],
        Value::from(new.as_str())
    );
    // With no vault configured, the one the hook names is kept.
    let r = rutter_without_vault(&env, &["install-hook", "--client", "cursor"]);
    assert!(r.stdout.contains("nothing to change"), "{}", r.stdout);
    assert!(
        r.stdout.contains("kept from the installed hook"),
        "{}",
        r.stdout
    );
}

/// The trial's CRLF and BOM files: a CRLF `config.toml` and `settings.json` keep CRLF on every
/// line (ours too), a byte-order mark stays, and uninstall gives each file back byte for byte;
/// a TOML file of mixed endings, which the TOML editor would make all LF, is refused whole.
#[test]
fn crlf_and_bom_client_files_keep_their_endings_and_come_back_byte_for_byte() {
    let env = Env::bare();
    let toml = env.home.join(".codex/config.toml");
    let settings = env.home.join(".claude/settings.json");
    let cases: [(&str, &Path, &str); 3] = [
        (
            "codex",
            &toml,
            "# my config\r\nmodel = \"o3\"\r\n\r\n[profiles.fast]\r\nmodel = \"o4-mini\"\r\n",
        ),
        ("codex", &toml, "\u{feff}# my config\nmodel = \"o3\"\n"),
        ("claude", &settings, "{\r\n  \"model\": \"opus\"\r\n}\r\n"),
    ];
    for (client, path, text) in cases {
        write(path, text);
        let r = install(&env, client);
        assert_eq!(r.code, 0, "{client}: {}{}", r.stdout, r.stderr);
        let installed = std::fs::read_to_string(path).unwrap();
        assert!(installed.contains("rutter"), "{installed}");
        assert_eq!(
            installed.starts_with('\u{feff}'),
            text.starts_with('\u{feff}'),
            "{installed:?}"
        );
        if text.contains('\r') {
            assert_eq!(
                installed.matches("\r\n").count(),
                installed.matches('\n').count(),
                "every line CRLF: {installed:?}"
            );
        } else {
            assert!(!installed.contains('\r'), "{installed:?}");
        }
        assert!(install(&env, client).stdout.contains("nothing to change"));
        let r = rutter(&env, &["uninstall-hook", "--client", client]);
        assert_eq!(r.code, 0, "{client}: {}{}", r.stdout, r.stderr);
        assert_eq!(std::fs::read_to_string(path).unwrap(), text, "{client}");
    }
    let mixed = "a = 1\r\nb = 2\n";
    write(&toml, mixed);
    let r = install(&env, "codex");
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("mixes CRLF and LF line endings"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read_to_string(&toml).unwrap(), mixed);
}

/// The trial's changed word: a block whose line the user changed does not keep uninstall from
/// taking out the hook and the server; the block stays, named with its changed line (cut at a
/// word, with `…`), with advice to delete it by hand, and the exit status says something is
/// left (1); `--json` lists it under `left`.
#[test]
fn uninstall_takes_out_what_it_can_and_names_a_changed_block_it_left() {
    let env = Env::bare();
    assert_eq!(install(&env, "codex").code, 0);
    let agents = env.home.join(".codex/AGENTS.md");
    let text = std::fs::read_to_string(&agents).unwrap();
    assert!(text.contains("\nEverything these tools return"), "{text}");
    let edited = text.replace(
        "\nEverything these tools return",
        "\nAll that these tools return",
    );
    std::fs::write(&agents, &edited).unwrap();
    let dry = rutter(
        &env,
        &["uninstall-hook", "--client", "codex", "--dry-run", "--json"],
    );
    assert_eq!(dry.code, 1, "{}{}", dry.stdout, dry.stderr);
    let v: InstallHook = decode(&dry.stdout);
    assert_eq!(v.left.len(), 1, "{v:?}");
    assert!(v.left[0].contains("so uninstall would leave it"), "{v:?}");
    let r = rutter(&env, &["uninstall-hook", "--client", "codex"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains(
            "~/.codex/AGENTS.md: the git-rutter block was changed since git-rutter wrote it (the line \"All that these tools return"
        ) && r.stdout.contains("…\" is not its text), so it was left in the file. Delete it by hand, from the `<!-- BEGIN git-rutter -->` line to the `<!-- END git-rutter -->` line"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("Move your own lines"), "{}", r.stdout);
    assert_eq!(std::fs::read_to_string(&agents).unwrap(), edited);
    assert!(!env.home.join(".codex/hooks.json").exists(), "hook removed");
    assert!(
        !env.home.join(".codex/config.toml").exists(),
        "server removed"
    );
}

/// Codex's config.toml holding the TypeScript reference's server under a name of its own
/// (`codex mcp add rutter-memory -- npx -y rutter-memory`): install removes it beside adding
/// ours, keeping the user's other lines, and says so; two memory servers no longer answer.
#[test]
fn codex_drops_the_reference_server_under_any_name() {
    let env = Env::bare();
    let config = env.home.join(".codex/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, "# mine\nmodel = \"o3\"\n\n[mcp_servers.rutter-memory]\ncommand = \"npx\"\nargs = [\"-y\", \"rutter-memory\"]\n\n[mcp_servers.other]\ncommand = \"other-server\"\nargs = [\"--db\", \"rutter-memory.db\", \"stdio.js\"]\n").unwrap();
    let status: common::json::Status = decode(&rutter(&env, &["status", "--json"]).stdout);
    assert_eq!(status.client("codex").mcp.state, "reference");
    let r = install(&env, "codex");
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains(
            "removed the TypeScript rutter MCP server `rutter-memory` (`npx -y rutter-memory`)"
        ),
        "{}",
        r.stdout
    );
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(!text.contains("[mcp_servers.rutter-memory]"), "{text}");
    // A server of the user's whose arguments mention the name is theirs, and kept.
    assert!(text.contains("\"rutter-memory.db\""), "{text}");
    assert!(
        text.starts_with("# mine\nmodel = \"o3\"\n") && text.contains("[mcp_servers.other]"),
        "{text}"
    );
    assert!(text.contains("[mcp_servers.rutter]"), "{text}");
}

/// Copilot CLI's server entry moved to another vault: said as its environment changing, not as
/// an update "to" the command it already runs.
#[test]
fn a_vault_switch_in_a_server_entry_is_said_as_its_environment() {
    let env = Env::bare();
    let (one, two) = (env.root().join("one"), env.root().join("two"));
    for v in [&one, &two] {
        std::fs::create_dir_all(v).unwrap();
    }
    let install_for = |v: &Path| {
        rutter(
            &env,
            &[
                "install-hook",
                "--client",
                "copilot",
                "--vault",
                v.to_str().unwrap(),
            ],
        )
    };
    assert_eq!(install_for(&one).code, 0);
    let r = install_for(&two);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let want = format!(
        "updated the MCP server `rutter`'s environment to LIBRARIAN_VAULT_PATH={}",
        two.canonicalize().unwrap().display()
    );
    assert!(r.stdout.contains(&want), "{}", r.stdout);
}

/// A hook command of ours the user customised (an environment prefix, a redirection) is kept
/// as written, and said to be; one that only names an old path is still rewritten; uninstall
/// removes either.
#[test]
fn a_customised_hook_command_is_kept_as_written() {
    let env = Env::bare();
    let settings = env.home.join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let mine = format!(
        "LIBRARIAN_USER_LABEL=me {} capture --client claude 2>>/tmp/rutter.log",
        canonical_bin()
    );
    let doc =
        serde_json::json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": mine}]}]}});
    std::fs::write(&settings, doc.to_string()).unwrap();
    let r = install(&env, "claude");
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains(&format!("~/.claude/settings.json holds your own version of the hook command ({mine}); it is kept as you wrote it.")),
        "{}",
        r.stdout
    );
    let after: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
    assert_eq!(
        after.pointer("/hooks/Stop/0/hooks/0/command"),
        Some(&serde_json::json!(mine))
    );
    assert_eq!(
        after
            .pointer("/hooks/Stop")
            .and_then(|v| v.as_array())
            .map(Vec::len),
        Some(1)
    );
    let r = rutter(&env, &["uninstall-hook", "--client", "claude"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(!settings.exists(), "{}", r.stdout);

    let old = serde_json::json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/old/place/git-rutter capture --client claude"}]}]}});
    std::fs::write(&settings, old.to_string()).unwrap();
    assert_eq!(install(&env, "claude").code, 0);
    let after: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
    let cmd = after
        .pointer("/hooks/Stop/0/hooks/0/command")
        .and_then(|v| v.as_str())
        .unwrap();
    assert!(cmd.starts_with(&canonical_bin()), "{cmd}");
}

/// OpenCode's plugin edited by the user is left, as an edited block is: uninstall removes the
/// server and the instructions, names the plugin with the way to remove it, and exits 1.
#[test]
fn uninstall_leaves_an_edited_opencode_plugin_and_removes_the_rest() {
    let env = Env::bare();
    assert_eq!(install(&env, "opencode").code, 0);
    let plugin = env.home.join(".config/opencode/plugins/git-rutter.js");
    let edited = format!(
        "{}// my change\n",
        std::fs::read_to_string(&plugin).unwrap()
    );
    std::fs::write(&plugin, &edited).unwrap();
    let r = rutter(&env, &["uninstall-hook", "--client", "opencode"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("~/.config/opencode/plugins/git-rutter.js: it was edited since git-rutter wrote it, so it was left. Delete it by hand (`rm ~/.config/opencode/plugins/git-rutter.js`)"),
        "{}",
        r.stdout
    );
    assert_eq!(std::fs::read_to_string(&plugin).unwrap(), edited);
    let config = env.home.join(".config/opencode/opencode.json");
    assert!(!config.exists(), "server removed");
    assert!(
        !env.home.join(".config/opencode/AGENTS.md").exists(),
        "instructions removed"
    );
}

/// The trial's leftover `{ "version": 1 }`: Cursor's hooks.json that install created (its
/// `version` came with our handler) is removed by uninstall with the handler; one with hooks of
/// the user's keeps them and its `version`.
#[test]
fn cursor_uninstall_removes_the_hooks_file_it_created() {
    let env = Env::bare();
    let hooks = env.home.join(".cursor/hooks.json");
    assert_eq!(install(&env, "cursor").code, 0);
    assert!(hooks.is_file());
    let r = rutter(&env, &["uninstall-hook", "--client", "cursor"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("removed ~/.cursor/hooks.json ("),
        "{}",
        r.stdout
    );
    assert!(!hooks.exists(), "{:?}", std::fs::read_to_string(&hooks));
    let mine = "{\n  \"version\": 1,\n  \"hooks\": {\n    \"afterFileEdit\": [\n      {\n        \"command\": \"./fmt.sh\"\n      }\n    ]\n  }\n}\n";
    write(&hooks, mine);
    assert_eq!(install(&env, "cursor").code, 0);
    assert_eq!(
        rutter(&env, &["uninstall-hook", "--client", "cursor"]).code,
        0
    );
    assert_eq!(std::fs::read_to_string(&hooks).unwrap(), mine);
}

/// The trial's read-only settings.json: a dry run checks that each file it would change can be
/// written, as the run does, and refuses alike (exit 2, the same message) instead of promising
/// a change the run cannot make. (A read-only file does not stop root, so the fail point stands
/// in for it.)
#[test]
fn a_dry_run_refuses_a_file_the_run_cannot_write() {
    let env = Env::bare();
    write(&env.home.join(".claude/settings.json"), "{}\n");
    let run = |extra: &[&str]| {
        let mut args = vec!["install-hook", "--client", "claude"];
        args.extend_from_slice(extra);
        run_with_stdin(
            env.cmd()
                .env("RUTTER_FAILPOINTS", "client-write:settings.json")
                .args(&args),
            b"",
        )
    };
    let real = run(&[]);
    let dry = run(&["--dry-run"]);
    assert_eq!(real.code, 2, "{}{}", real.stdout, real.stderr);
    assert_eq!(dry.code, real.code, "{}{}", dry.stdout, dry.stderr);
    assert!(
        dry.stderr
            .contains("~/.claude/settings.json cannot be written")
            && dry.stderr.contains("nothing was changed for Claude Code."),
        "{}",
        dry.stderr
    );
    assert_eq!(dry.stderr, real.stderr);
    assert!(!dry.stdout.contains("would change"), "{}", dry.stdout);
}

/// The trial's `--dry-run --json` that said `changed`: a dry run's status is `would-change` and
/// its changes are said as a plan, as the human dry run says them; the run then says them done.
#[test]
fn a_dry_run_in_json_says_would_change_in_the_planned_words() {
    let env = Env::bare();
    let args = ["install-hook", "--client", "codex", "--json"];
    let dry: InstallHook = decode(&rutter(&env, &[&args[..], &["--dry-run"]].concat()).stdout);
    assert!(dry.dry_run);
    assert_eq!(dry.status, "would-change");
    let planned = &dry.files[0].changes[0];
    assert!(planned.starts_with("register the Stop hook `"), "{planned}");
    assert!(tree(&env.home).is_empty(), "a dry run writes nothing");
    let done: InstallHook = decode(&rutter(&env, &args).stdout);
    assert_eq!(done.status, "changed");
    assert!(
        done.files[0].changes[0].starts_with("registered the Stop hook `"),
        "{:?}",
        done.files[0]
    );
    let again: InstallHook = decode(&rutter(&env, &[&args[..], &["--dry-run"]].concat()).stdout);
    assert_eq!(again.status, "unchanged");
}

/// The trial's long Windsurf rules: Windsurf reads the first 6,000 characters of
/// `global_rules.md`, so a block appended past them is said apart on stderr (and in `--json`'s
/// `problems`) with how much room to make, and `status` reports it (`rules-past-cap`); a short
/// file says nothing of it.
#[test]
fn windsurf_rules_that_push_the_block_past_the_cap_are_said_and_reported() {
    let env = Env::git_vault();
    let rules = env.home.join(".codeium/windsurf/memories/global_rules.md");
    write(&rules, "- keep it short\n");
    let r = install(&env, "windsurf");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("reads only the first"), "{}", r.stderr);
    let long: String = (0..140)
        .map(|i| format!("- rule number {i}: always write tidy code\n"))
        .collect();
    write(&rules, &long);
    let r = install(&env, "windsurf");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("global_rules.md is 8,")
            && r.stderr.contains("Windsurf reads only the first 6,000: Cascade sees only the first part of the capture instructions")
            && r.stderr.contains("Shorten your own rules in that file to at most 3,"),
        "{}",
        r.stderr
    );
    let json: InstallHook =
        decode(&rutter(&env, &["install-hook", "--client", "windsurf", "--json"]).stdout);
    assert_eq!(json.problems.len(), 1, "{json:?}");
    assert_eq!(json.problems[0]["kind"], "rules-past-cap");
    let status: common::json::Status = decode(&rutter(&env, &["status", "--json"]).stdout);
    let f = status.finding("rules-past-cap");
    assert_eq!(f.client.as_deref(), Some("windsurf"));
    assert!(f.message.contains("nothing is captured"), "{f:?}");
}

/// The trial's JSONC and BOM settings: the refusal says what the file holds that JSON does not
/// allow (comments, a byte-order mark) and what to do, and the file keeps its bytes.
#[test]
fn a_jsonc_or_bom_settings_file_is_refused_saying_why() {
    let env = Env::bare();
    let settings = env.home.join(".gemini/settings.json");
    for (text, says) in [
        (
            "{\n  // comment\n  \"theme\": \"dark\"\n}\n",
            "~/.gemini/settings.json is not valid JSON: it holds comments (`//` or `/* */`) (JSON with comments, JSONC), which git-rutter does not edit",
        ),
        (
            "\u{feff}{\"theme\": \"dark\"}\n",
            "~/.gemini/settings.json is not valid JSON: it starts with a byte-order mark (U+FEFF), which JSON does not allow. Save it as UTF-8 without one, then run again (nothing was changed;",
        ),
    ] {
        write(&settings, text);
        let r = install(&env, "gemini");
        assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(says), "{}", r.stderr);
        assert_eq!(std::fs::read_to_string(&settings).unwrap(), text);
    }
}

/// The trial's `restart Claude Code` after `nothing to change`: a restart reads only what a run
/// changed, so a run that changed nothing does not ask for one.
#[test]
fn a_run_that_changes_nothing_asks_for_no_restart() {
    let env = Env::bare();
    for (client, restart) in [
        ("claude", "restart Claude Code"),
        ("opencode", "start OpenCode again"),
        ("windsurf", "reload Windsurf"),
    ] {
        let first = install(&env, client);
        assert!(first.stdout.contains(restart), "{client}: {}", first.stdout);
        let again = install(&env, client);
        assert!(
            again.stdout.contains("nothing to change") && !again.stdout.contains(restart),
            "{client}: {}",
            again.stdout
        );
    }
}

/// `--vault` naming a folder no `init` prepared (a typo, the notes' parent folder): the hook is
/// written as asked, with a warning naming `git rutter init` for that folder; a prepared vault
/// gets none.
#[test]
fn a_vault_flag_naming_no_prepared_vault_is_warned_of() {
    let env = Env::git_vault();
    let plain = env.root().join("not-a-vault");
    std::fs::create_dir_all(&plain).unwrap();
    let plain = plain.display().to_string();
    let r = rutter_without_vault(
        &env,
        &["--vault", &plain, "install-hook", "--client", "claude"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("is no git-rutter vault yet")
            && r.stderr.contains(&format!("Run `git rutter init {plain}`")),
        "{}",
        r.stderr
    );
    let vault = env.vault.display().to_string();
    let r = rutter_without_vault(
        &env,
        &["--vault", &vault, "install-hook", "--client", "claude"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("no git-rutter vault"), "{}", r.stderr);
}
