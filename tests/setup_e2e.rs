//! `git rutter setup` (issue 34, part 4) as a new user runs it: the clients found in a HOME
//! that has Claude Code's and Codex's folders, the plan shown and nothing written without a
//! yes, every file written with `--yes` (and the client's own `claude mcp add` run when
//! `claude` is on PATH), `status` green at the end, a second run changing nothing.

use crate::common;
use common::*;
use std::os::unix::fs::PermissionsExt;

/// A `claude` on PATH that records its arguments and registers the server in `~/.claude.json`
/// as `claude mcp add --scope user` does.
fn fake_claude(env: &Env) -> std::path::PathBuf {
    let bin = env.root().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = r#"#!/bin/sh
echo "$@" >> "$HOME/claude-calls"
exe=""; seen=""
for a in "$@"; do
  if [ -n "$seen" ] && [ -z "$exe" ]; then exe="$a"; fi
  if [ "$a" = "--" ]; then seen=1; fi
done
printf '{"mcpServers":{"rutter":{"type":"stdio","command":"%s","args":["mcp"]}}}' "$exe" > "$HOME/.claude.json"
"#;
    let path = bin.join("claude");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

fn setup(env: &Env, args: &[&str], path: Option<&std::path::Path>) -> Run {
    let mut c = env.cmd();
    c.env_remove("LIBRARIAN_VAULT_PATH").arg("setup").args(args);
    if let Some(p) = path {
        let old = std::env::var("PATH").unwrap_or_default();
        c.env("PATH", format!("{}:{old}", p.display()));
    }
    run_with_stdin(&mut c, b"")
}

#[test]
fn setup_finds_the_clients_asks_writes_and_ends_green() {
    let env = Env::git_vault();
    std::fs::create_dir_all(env.home.join(".claude")).unwrap();
    std::fs::create_dir_all(env.home.join(".codex")).unwrap();
    let none = setup(&env, &[], None);
    assert_eq!(none.code, 1, "{}{}", none.stdout, none.stderr);
    assert!(
        none.stderr.contains("no vault is set up yet"),
        "{}",
        none.stderr
    );
    let r = env.rutter(&["init", "--global"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // No client runs the hook yet: init names the next step.
    assert!(
        r.stdout
            .contains("Next: `git rutter setup` registers git-rutter"),
        "{}",
        r.stdout
    );

    // Without a terminal and without --yes: the plan, and nothing written.
    let shown = setup(&env, &[], None);
    assert_eq!(shown.code, 1, "status has findings: {}", shown.stdout);
    assert!(
        shown.stdout.contains("Claude Code: would change"),
        "{}",
        shown.stdout
    );
    assert!(
        shown.stdout.contains("Codex: would change"),
        "{}",
        shown.stdout
    );
    assert!(
        !shown.stdout.contains("Grok"),
        "only the clients found: {}",
        shown.stdout
    );
    assert!(shown
        .stdout
        .contains("Nothing was written: run `git rutter setup --yes`"));
    assert!(!env.home.join(".claude/settings.json").exists());

    let bin = fake_claude(&env);
    let done = setup(&env, &["--yes"], Some(&bin));
    assert_eq!(done.code, 0, "{}{}", done.stdout, done.stderr);
    assert!(
        done.stdout.contains("Claude Code: changed"),
        "{}",
        done.stdout
    );
    assert!(
        done.stdout
            .contains("  ran: claude mcp add rutter --scope user"),
        "{}",
        done.stdout
    );
    assert!(
        done.stdout
            .ends_with("status: no findings: everything status checks is working.\n"),
        "{}",
        done.stdout
    );
    let settings = std::fs::read_to_string(env.home.join(".claude/settings.json")).unwrap();
    assert!(
        settings.contains("capture --client claude") && settings.contains("context --hook claude")
    );
    assert!(env.home.join(".codex/hooks.json").exists());
    let calls = std::fs::read_to_string(env.home.join("claude-calls")).unwrap();
    assert!(
        calls.starts_with("mcp add rutter --scope user -- "),
        "{calls}"
    );

    let again = setup(&env, &["--yes", "--json"], Some(&bin));
    assert_eq!(again.code, 0, "{}{}", again.stdout, again.stderr);
    let v: common::decoded::Setup = common::json::decode(&again.stdout);
    let outcomes: Vec<&str> = v.clients.iter().map(|c| c.outcome.as_str()).collect();
    assert!(outcomes.iter().all(|o| *o == "unchanged"), "{outcomes:?}");
    assert!(v.healthy, "{:?}", v.findings);
    // The claude MCP registration is there now: nothing to run again.
    assert_eq!(
        calls,
        std::fs::read_to_string(env.home.join("claude-calls")).unwrap()
    );
    // Set up: init again has no next step to name.
    let r = env.rutter(&["init", "--global"]);
    assert!(!r.stdout.contains("Next:"), "{}", r.stdout);
}

#[test]
fn named_clients_are_set_up_even_when_not_found_and_unknown_ones_refused() {
    let env = Env::git_vault();
    let r = env.rutter(&["init", "--global"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let unknown = setup(&env, &["--clients", "claude,nope"], None);
    assert_eq!(unknown.code, 2, "{}", unknown.stderr);
    assert!(
        unknown
            .stderr
            .contains("\"nope\" is not a client git-rutter knows"),
        "{}",
        unknown.stderr
    );
    let dry = setup(&env, &["--clients", "codex", "--dry-run"], None);
    assert!(dry.stdout.contains("Codex: would change"), "{}", dry.stdout);
    assert!(
        !env.home.join(".codex").exists(),
        "a dry run writes nothing"
    );
    let named = setup(&env, &["--clients", "codex"], None);
    assert!(named.stdout.contains("Codex: changed"), "{}", named.stdout);
    assert!(env.home.join(".codex/hooks.json").exists());
}

/// A vault set up with `init --global`, a Codex folder, and this binary copied into
/// `<root>/prefix/bin` as `cargo install` lays it out: the copy, and a PATH with its folder first.
fn installed_copy(env: &Env) -> (std::path::PathBuf, String) {
    std::fs::create_dir_all(env.home.join(".codex")).unwrap();
    assert_eq!(env.rutter(&["init", "--global"]).code, 0);
    let bin = env.root().join("prefix/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let exe = bin.join("git-rutter");
    std::fs::copy(BIN, &exe).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    (exe, path)
}

/// `git-rutter setup ARGS` run as the copy [`installed_copy`] made, with its PATH.
fn setup_as(env: &Env, exe: &std::path::Path, path: &str, args: &[&str]) -> Run {
    let mut c = env.cmd_for(exe.to_str().unwrap());
    c.env_remove("LIBRARIAN_VAULT_PATH")
        .env("PATH", path)
        .arg("setup")
        .args(args);
    run_with_stdin(&mut c, b"")
}

/// Whether `man` is on this machine's PATH.
fn has_man() -> bool {
    std::env::split_paths(&std::env::var_os("PATH").unwrap()).any(|d| d.join("man").is_file())
}

/// `git rutter --help` is git's `man git-rutter`: a binary installed where `cargo install` puts
/// it (a `bin/` folder on PATH) has no manual yet, so setup writes it beside the binary, where
/// man-db looks, and a second run has nothing left to do. Without `man` there is nothing to
/// install it for, and setup says nothing of it.
#[test]
fn setup_installs_the_manual_that_git_rutter_help_opens() {
    let env = Env::git_vault();
    let (exe, path) = installed_copy(&env);
    let run = |args: &[&str]| setup_as(&env, &exe, &path, args);
    let page = env.root().join("prefix/share/man/man1/git-rutter.1");

    let planned = run(&["--dry-run"]);
    let first = run(&["--yes"]);
    let json: common::decoded::Setup = common::json::decode(&run(&["--json"]).stdout);
    if !has_man() {
        assert!(!first.stdout.contains("Manual"), "{}", first.stdout);
        assert!(!page.exists());
        assert!(json.manual.is_none(), "{json:?}");
        return;
    }
    assert!(
        planned
            .stdout
            .contains("Manual:\n  write git-rutter(1) and a page per command into")
            && planned.stdout.contains("Nothing was written"),
        "{}",
        planned.stdout
    );
    assert!(
        first.stdout.contains("Manual: installed (")
            && first.stdout.contains("`git rutter --help` opens it."),
        "{}{}",
        first.stdout,
        first.stderr
    );
    assert!(std::fs::read_to_string(&page)
        .unwrap()
        .contains(".TH GIT-RUTTER 1"));
    let found = env
        .cmd_for("man")
        .env("PATH", &path)
        .args(["-w", "git-rutter"])
        .output()
        .unwrap();
    assert!(found.status.success(), "man -w: {found:?}");
    // Installed: nothing left to do, and --json says so with a null.
    assert!(json.manual.is_none(), "{json:?}");
    let again = run(&["--yes"]);
    assert!(!again.stdout.contains("Manual"), "{}", again.stdout);
}

/// A manual that cannot be written (a binary in a folder the user cannot write, here a file
/// where `share/` would be) is said, with the command that installs it elsewhere, and does not
/// make setup fail: the clients are what it is for.
#[test]
fn a_manual_that_cannot_be_written_is_said_and_does_not_fail_setup() {
    let env = Env::git_vault();
    let (exe, path) = installed_copy(&env);
    std::fs::write(env.root().join("prefix/share"), "not a folder").unwrap();
    let r = setup_as(&env, &exe, &path, &["--yes"]);
    if !has_man() {
        assert!(!r.stdout.contains("Manual"), "{}", r.stdout);
        return;
    }
    assert!(
        r.stdout.contains("Manual: not installed (")
            && r.stdout.contains("`git rutter man --install --dir DIR`"),
        "{}{}",
        r.stdout,
        r.stderr
    );
    assert!(
        r.stderr.contains("git-rutter: the manual: "),
        "{}",
        r.stderr
    );
    assert!(r.stdout.contains("Codex: changed"), "{}", r.stdout);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}
