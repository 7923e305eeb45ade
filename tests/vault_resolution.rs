//! Which vault a command uses (DESIGN §3, spec/vault.md): as git resolves a repository for
//! commands run by hand, never the current directory for hooks, and `init` prepares the folder
//! it is given or stands in, refusing to nest a repository in another one's work tree.

use crate::common;

use common::{run_with_stdin, Env, BIN};
use std::path::{Path, PathBuf};

/// A second vault beside the fixture's, initialised, with one captured entry.
fn second_vault(env: &Env, name: &str, summary: &str) -> PathBuf {
    let dir = env.root().join(name);
    std::fs::create_dir_all(dir.join("Notes")).unwrap();
    std::fs::write(dir.join("Notes/n.md"), "# N\n").unwrap();
    let r = env.rutter_in(&dir, &["init", "."]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = env.rutter_in(
        &dir,
        &[
            "--vault",
            ".",
            "capture",
            "--summary",
            summary,
            "--session",
            "S2",
        ],
    );
    assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
    dir
}

fn set_global_vault(env: &Env, vault: &Path) {
    env.git(&[
        "config",
        "--global",
        "rutter.vault",
        vault.to_str().unwrap(),
    ]);
}

#[test]
fn the_vault_you_stand_in_wins_over_the_global_setting() {
    let env = Env::git_vault();
    env.rutter(&[
        "capture",
        "--summary",
        "Decided in the global vault.",
        "--session",
        "S",
    ]);
    set_global_vault(&env, &env.vault);
    let other = second_vault(&env, "other", "Decided in the other vault.");
    let here = env.rutter_in(&other.join("Notes"), &["recent"]);
    assert_eq!(here.code, 0, "{}", here.stderr);
    assert!(
        here.stdout.contains("Decided in the other vault."),
        "{}",
        here.stdout
    );
    assert!(!here.stdout.contains("global vault"), "{}", here.stdout);
    assert!(!here.stderr.contains("using the vault"), "{}", here.stderr);
    // Outside any repository, the global setting is used, silently.
    let outside = env.root().join("plain");
    std::fs::create_dir_all(&outside).unwrap();
    let there = env.rutter_in(&outside, &["recent"]);
    assert!(
        there.stdout.contains("Decided in the global vault."),
        "{}",
        there.stdout
    );
    assert_eq!(there.stderr, "");
}

#[test]
fn a_code_repository_names_the_vault_it_did_not_choose_and_its_local_setting_wins() {
    let env = Env::git_vault();
    env.rutter(&[
        "capture",
        "--summary",
        "Decided in the global vault.",
        "--session",
        "S",
    ]);
    set_global_vault(&env, &env.vault);
    let code = env.root().join("code/site");
    std::fs::create_dir_all(&code).unwrap();
    env.git_in(&code, &["init", "-q"]);
    let r = env.rutter_in(&code, &["recent"]);
    assert!(
        r.stdout.contains("Decided in the global vault."),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr.contains(&format!(
            "using the vault {} (from git config rutter.vault), not the repository you are in ({})",
            env.vault.display(),
            code.display()
        )),
        "{}",
        r.stderr
    );
    let work = second_vault(&env, "work-notes", "Decided in the work vault.");
    env.git_in(&code, &["config", "rutter.vault", work.to_str().unwrap()]);
    let r = env.rutter_in(&code, &["recent"]);
    assert!(
        r.stdout.contains("Decided in the work vault."),
        "{}",
        r.stdout
    );
    assert!(!r.stderr.contains("using the vault"), "{}", r.stderr);
}

#[test]
fn capture_never_uses_the_current_directory() {
    let env = Env::git_vault();
    set_global_vault(&env, &env.vault);
    let other = second_vault(&env, "other", "Decided in the other vault.");
    let mut c = std::process::Command::new(BIN);
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .env("HOME", &env.home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .current_dir(&other)
        .arg("capture");
    let r = run_with_stdin(&mut c, br#"{"summary":"Hook ran inside the other vault."}"#);
    assert!(
        r.stderr
            .contains(&format!("in vault {}", env.vault.display())),
        "{}",
        r.stderr
    );
    assert!(env
        .all_records()
        .contains("Hook ran inside the other vault."));
}

/// As `git init`, `init` prepares the folder it is given, never the configured vault; with no
/// folder given, it refuses to prepare one that is not the configured vault (issue 20: a
/// TypeScript user's `git rutter init` in `~` made the home folder a repository), naming the
/// vault and the two commands. `init .` prepares it; a folder with no notes gets a warning and
/// never the suggestion to make it the global vault.
#[test]
fn init_prepares_the_current_directory_never_the_configured_vault() {
    let env = Env::git_vault();
    set_global_vault(&env, &env.vault);
    let fresh = env.root().join("fresh");
    std::fs::create_dir_all(&fresh).unwrap();
    let before = env.git(&["rev-parse", "refs/rutter/records"]);
    let r = env.rutter_in(&fresh, &["init"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let vault = env.vault.display().to_string();
    for said in [
        format!("git config rutter.vault names the vault {vault}, not this folder"),
        format!("run `git rutter init {vault}`"),
        "run `git rutter init .`".to_string(),
    ] {
        assert!(r.stderr.contains(&said), "{said}: {}", r.stderr);
    }
    assert!(!fresh.join(".git").exists(), "nothing was prepared");
    // With --global, the command that moves the hooks here keeps it.
    let r = env.rutter_in(&fresh, &["init", "--global"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr
            .contains("to make this folder your vault instead (hooks and the MCP server move to it), run `git rutter init . --global`"),
        "{}",
        r.stderr
    );
    assert!(!fresh.join(".git").exists(), "nothing was prepared");
    // The same with the vault exported, as a TypeScript user has it.
    let mut c = env.cmd();
    c.current_dir(&fresh).arg("init");
    let r = run_with_stdin(&mut c, b"");
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("LIBRARIAN_VAULT_PATH names the vault"),
        "{}",
        r.stderr
    );
    assert!(!fresh.join(".git").exists());
    // Named, it is prepared; holding no notes, with a warning and no --global suggestion.
    let r = env.rutter_in(&fresh, &["init", "."]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(fresh.join(".git").is_dir(), "{}", r.stdout);
    assert!(r.stderr.contains("holds no markdown notes"), "{}", r.stderr);
    assert!(!r.stderr.contains("--global"), "{}", r.stderr);
    // A folder of notes, named: the suggestion that hooks use another vault stays.
    let notes = env.root().join("other-notes");
    std::fs::create_dir_all(notes.join("Notes")).unwrap();
    std::fs::write(notes.join("Notes/n.md"), "# N\n").unwrap();
    let r = env.rutter_in(&notes, &["init", "."]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "hooks and the MCP server use the vault {vault} (from git config rutter.vault); run `git rutter init --global` here"
        )),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("no markdown notes"), "{}", r.stderr);
    // Re-running init in a folder that is a vault already is never refused.
    let r = env.rutter_in(&notes, &["init"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(env.git(&["rev-parse", "refs/rutter/records"]), before);
}

/// The refusal's commands are pasted as they are: a vault path with a space is quoted.
#[test]
fn init_names_a_configured_vault_with_a_space_as_one_shell_word() {
    let env = Env::git_vault();
    let spaced = env.root().join("my notes");
    std::fs::create_dir_all(spaced.join("Notes")).unwrap();
    std::fs::write(spaced.join("Notes/n.md"), "# N\n").unwrap();
    assert_eq!(env.rutter_in(&spaced, &["init", "."]).code, 0);
    set_global_vault(&env, &spaced);
    let fresh = env.root().join("fresh");
    std::fs::create_dir_all(&fresh).unwrap();
    let r = env.rutter_in(&fresh, &["init"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let quoted = format!("run `git rutter init '{}'`", spaced.display());
    assert!(r.stderr.contains(&quoted), "{quoted}: {}", r.stderr);
}

#[test]
fn init_refuses_to_nest_a_repository_unless_told() {
    let env = Env::bare();
    let code = env.root().join("code/site");
    let notes = code.join("docs/notes");
    std::fs::create_dir_all(&notes).unwrap();
    env.git_in(&code, &["init", "-q"]);
    let r = env.rutter_in(&notes, &["init"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(!notes.join(".git").exists());
    assert!(
        r.stderr.contains(&format!(
            "is inside the work tree of the git repository {}",
            code.display()
        )) && r
            .stderr
            .contains(&format!("git rutter init {}", code.display()))
            && r.stderr.contains("--nested"),
        "{}",
        r.stderr
    );
    assert_eq!(r.stdout, "");
    // Pointed at the outer repository's root, init uses that repository.
    let r = env.rutter_in(&notes, &["init", code.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    env.git_in(&code, &["rev-parse", "--verify", "refs/rutter/records"]);
    // Told --nested, it makes the folder a repository of its own.
    let r = env.rutter_in(&notes, &["init", "--nested"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(notes.join(".git").is_dir());
}

/// A `LIBRARIAN_VAULT_PATH` left pointing at a folder that is gone: every command and
/// `status` say how to fix that setting (not `init --global`, which the variable overrides),
/// and `init --global` warns that the variable still wins.
#[test]
fn a_vault_variable_naming_no_folder_says_to_fix_or_unset_it() {
    let env = Env::git_vault();
    let gone = env.root().join("gone");
    let run = |dir: &Path, args: &[&str]| -> common::Run {
        let mut c = env.cmd();
        c.env("LIBRARIAN_VAULT_PATH", &gone)
            .current_dir(dir)
            .args(args);
        run_with_stdin(&mut c, b"")
    };
    let r = run(&env.root(), &["recent"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("unset it (`unset LIBRARIAN_VAULT_PATH`"),
        "{}",
        r.stderr
    );
    let r = run(&env.root(), &["status"]);
    assert!(
        r.stdout
            .contains("Point LIBRARIAN_VAULT_PATH at your notes vault"),
        "{}",
        r.stdout
    );
    let r = run(&env.vault, &["init", "--global"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("LIBRARIAN_VAULT_PATH is set to")
            && r.stderr.contains("wins over rutter.vault"),
        "{}",
        r.stderr
    );
}

#[test]
fn the_root_folder_is_never_a_vault() {
    let env = Env::bare();
    let had = Path::new("/_librarian").exists();
    let mut c = env.cmd();
    c.env("LIBRARIAN_VAULT_PATH", "/").arg("capture");
    let r = run_with_stdin(&mut c, br#"{"summary":"Must not land in /."}"#);
    assert_eq!(r.code, 0);
    assert!(
        r.stderr.contains(
            "vault / (from LIBRARIAN_VAULT_PATH) is not a usable directory: it is a system folder"
        ),
        "{}",
        r.stderr
    );
    assert_eq!(
        Path::new("/_librarian").exists(),
        had,
        "nothing created in /"
    );
    let r = env.rutter_in(&env.vault, &["--vault", "/", "recent"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("is a system folder"), "{}", r.stderr);
}

/// A linked worktree given as the vault (issue 19, item 5) is its repository's main worktree:
/// one record, one set of day files (each worktree keeping its own made every capture of the
/// other look edited), and the hook and `status` say so.
#[test]
fn a_linked_worktree_resolves_to_its_main_worktree_and_says_so() {
    let env = Env::git_vault();
    let wt = env.root().join("wt");
    env.git(&["worktree", "add", "-q", wt.to_str().unwrap()]);
    let capture = |vault: &Path, summary: &str| {
        let mut c = env.cmd();
        c.env("LIBRARIAN_VAULT_PATH", vault).args([
            "capture",
            "--summary",
            summary,
            "--session",
            summary,
        ]);
        run_with_stdin(&mut c, b"")
    };
    let r = capture(&wt, "From the worktree.");
    assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
    let main = env.vault.display().to_string();
    assert!(
        r.stderr.contains(&format!(
            "in vault {main} (the main worktree of the linked worktree {})",
            wt.display()
        )),
        "{}",
        r.stderr
    );
    assert!(capture(&env.vault, "From the main worktree.")
        .stderr
        .contains("captured 1 entry"));
    assert!(
        !wt.join("_librarian").exists(),
        "no day files of the worktree's own"
    );
    let text = env.all_records();
    for s in ["From the worktree.", "From the main worktree."] {
        assert!(text.contains(s), "{s}: {text}");
    }
    for vault in [&wt, &env.vault] {
        let v = run_with_stdin(
            env.cmd()
                .env("LIBRARIAN_VAULT_PATH", vault)
                .args(["verify"]),
            b"",
        );
        assert_eq!(v.code, 0, "{}{}", v.stdout, v.stderr);
    }
    let s = run_with_stdin(
        env.cmd().env("LIBRARIAN_VAULT_PATH", &wt).args(["status"]),
        b"",
    );
    assert!(
        s.stdout
            .contains(&format!("which named its linked worktree {}", wt.display())),
        "{}",
        s.stdout
    );
}

/// The hook's stderr shows the vault path escaped, as stdout does: a folder name holding an
/// escape sequence or a newline cannot move the cursor or forge a line.
#[test]
fn the_hooks_stderr_escapes_the_vault_path() {
    let env = Env::bare();
    let vault = env.root().join("va\x1b[2Jult\nforged");
    std::fs::create_dir_all(&vault).unwrap();
    let mut c = env.cmd();
    c.env("LIBRARIAN_VAULT_PATH", &vault).args([
        "capture",
        "--summary",
        "Escaped.",
        "--session",
        "E",
    ]);
    let r = run_with_stdin(&mut c, b"");
    assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
    assert!(!r.stderr.contains('\x1b'), "{:?}", r.stderr);
    assert!(
        r.stderr.contains("va\\u{001B}[2Jult\\u{000A}forged"),
        "{:?}",
        r.stderr
    );
    assert!(
        !r.stderr.lines().any(|l| l.starts_with("forged")),
        "{:?}",
        r.stderr
    );
}
