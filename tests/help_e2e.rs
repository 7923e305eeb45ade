//! Help that opens: `git rutter --help` and `git help rutter` show the generated manual through
//! real git and man, `capture --help` prints help (a hook's argument rule does not swallow it),
//! and the completion scripts complete through git's own bash completion.

use crate::common;

use common::{run_with_stdin, Env, Run, BIN};
use std::path::Path;
use std::process::Command;

/// Whether `man` is here; CI sets RUTTER_REQUIRE_MAN so the manual tests cannot skip there.
fn have_man() -> bool {
    let found = Command::new("man")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found || std::env::var_os("RUTTER_REQUIRE_MAN").is_none(),
        "man is required (RUTTER_REQUIRE_MAN is set)"
    );
    found
}

fn bin(env: &Env, args: &[&str]) -> Run {
    let mut c = env.cmd();
    c.args(args);
    run_with_stdin(&mut c, b"")
}

#[test]
fn git_help_and_dash_dash_help_open_the_installed_manual() {
    let env = Env::bare();
    let man1 = env.root().join("share/man/man1");
    let r = bin(&env, &["man", "--install", "--dir", man1.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let pages = std::fs::read_dir(&man1)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("git-rutter")
        })
        .count();
    let listed = bin(&env, &["--help"]).stdout;
    let commands = listed
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter(|l| !l.starts_with("   ") && !l.trim_start().starts_with("help "))
        .count();
    assert_eq!(
        pages,
        commands + 1,
        "one page per command plus git-rutter(1)"
    );
    for page in std::fs::read_dir(&man1).unwrap() {
        use std::os::unix::fs::PermissionsExt;
        let mode = page.unwrap().metadata().unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644, "every page is readable by every user");
    }
    if !have_man() {
        return;
    }
    for args in [&["rutter", "--help"][..], &["help", "rutter"][..]] {
        let bin_dir = Path::new(BIN).parent().unwrap();
        let path = format!(
            "{}:{}",
            bin_dir.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut git = Command::new("git");
        git.args(args)
            .env("PATH", path)
            .env("MANPATH", man1.parent().unwrap())
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .env("HOME", &env.home)
            .env("GIT_CONFIG_NOSYSTEM", "1");
        let r: Run = git.output().unwrap().into();
        assert_eq!(r.code, 0, "git {args:?}: {}", r.stderr);
        assert!(r.stdout.contains("GIT-RUTTER(1)"), "{}", r.stdout);
        assert!(r.stdout.contains("git-rutter-recent(1)"), "{}", r.stdout);
        assert!(r.stdout.contains("EXIT STATUS"), "{}", r.stdout);
    }
}

#[test]
fn the_default_install_folder_is_where_man_looks_for_a_binary_on_path() {
    let env = Env::bare();
    let r = bin(&env, &["man", "--install"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let bin_dir = Path::new(BIN).parent().unwrap();
    let want = bin_dir.parent().unwrap().join("share/man/man1");
    assert!(
        r.stdout.contains(&format!("to {}.", want.display())),
        "{}",
        r.stdout
    );
    if !have_man() {
        return;
    }
    let found: Run = Command::new("man")
        .args(["-w", "git-rutter"])
        .env_remove("MANPATH")
        .env("PATH", format!("{}:/usr/bin:/bin", bin_dir.display()))
        .output()
        .unwrap()
        .into();
    assert_eq!(
        found.stdout.trim(),
        want.join("git-rutter.1").display().to_string(),
        "{}",
        found.stderr
    );
}

#[test]
fn man_prints_one_page_per_command_and_refuses_an_unknown_one() {
    let env = Env::bare();
    let r = bin(&env, &["man"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with(".ie"), "{}", &r.stdout[..80]);
    assert!(r.stdout.contains(".TH GIT-RUTTER 1 "), "{}", r.stdout);
    assert_eq!(r.stdout.matches(".ds Aq").count(), 2, "one roff preamble");
    let recent = bin(&env, &["man", "recent"]);
    assert!(
        recent.stdout.contains(".TH GIT-RUTTER-RECENT 1 "),
        "{}",
        recent.stdout
    );
    assert!(recent.stdout.contains("\\-\\-days"), "{}", recent.stdout);
    let bad = bin(&env, &["man", "nonsense"]);
    assert_eq!(bad.code, 1);
    assert_eq!(bad.stdout, "");
    assert!(
        bad.stderr.contains("no command \"nonsense\""),
        "{}",
        bad.stderr
    );
    if have_man() {
        let page = env.root().join("git-rutter-recent.1");
        std::fs::write(&page, recent.stdout).unwrap();
        let shown: Run = Command::new("man")
            .args(["-l", page.to_str().unwrap()])
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "100")
            .output()
            .unwrap()
            .into();
        assert!(
            shown.stdout.contains("GIT-RUTTER-RECENT(1)"),
            "{}",
            shown.stdout
        );
        assert!(
            shown.stdout.contains("Git Rutter Manual"),
            "{}",
            shown.stdout
        );
    }
}

#[test]
fn capture_prints_its_help_on_stdout_and_still_never_fails() {
    let env = Env::bare();
    for flag in ["--help", "-h"] {
        for args in [
            vec!["capture", flag],
            vec!["--vault", "/nowhere", "capture", flag],
        ] {
            let r = bin(&env, &args);
            assert_eq!(r.code, 0, "{args:?}");
            assert!(
                r.stdout.contains("Usage: git rutter capture"),
                "{args:?}: {}",
                r.stdout
            );
            assert_eq!(r.stderr, "", "{args:?}");
        }
    }
    // A bad argument stays one stderr line and exit 0, wherever --vault stands.
    for args in [
        vec!["capture", "--bad"],
        vec!["--vault", "/nowhere", "capture", "--bad"],
    ] {
        let r = bin(&env, &args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert_eq!(r.stdout, "");
        assert!(
            r.stderr
                .starts_with("[librarian-capture] error: unexpected argument '--bad'"),
            "{}",
            r.stderr
        );
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    }
}

/// Runs bash with the generated completion script and `body`; returns stdout.
fn bash_with_completions(script: &Path, body: &str) -> String {
    bash_in(script, body, None)
}

/// [`bash_with_completions`] with the vault in LIBRARIAN_VAULT_PATH.
fn bash_in(script: &Path, body: &str, vault: Option<&Env>) -> String {
    let mut bash = Command::new("bash");
    if let Some(env) = vault {
        bash.env("LIBRARIAN_VAULT_PATH", &env.vault)
            .env("HOME", &env.home)
            .env("GIT_CONFIG_NOSYSTEM", "1");
    }
    let out = bash
        .args([
            "--norc",
            "-c",
            &format!("source {}; {body}", script.display()),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn bash_completions_complete_commands_and_options_also_after_git() {
    let env = Env::bare();
    let r = bin(&env, &["completions", "bash"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let script = env.root().join("git-rutter.bash");
    std::fs::write(&script, &r.stdout).unwrap();
    let direct = bash_with_completions(
        &script,
        "COMP_WORDS=(git-rutter rec); COMP_CWORD=1; _clap_complete_git_rutter git-rutter rec git-rutter; echo \"${COMPREPLY[*]}\"",
    );
    assert_eq!(direct.trim(), "recent");
    let option = bash_with_completions(
        &script,
        "COMP_WORDS=(git-rutter install-git-hooks --un); COMP_CWORD=2; _clap_complete_git_rutter git-rutter --un install-git-hooks; echo \"${COMPREPLY[*]}\"",
    );
    assert_eq!(option.trim(), "--uninstall");
    // git's completion calls _git_rutter with its own words/cword/cur/prev.
    let via_git = bash_with_completions(
        &script,
        "words=(git rutter recent --da); cword=3; cur=--da; prev=recent; _git_rutter; echo \"${COMPREPLY[*]}\"",
    );
    assert_eq!(via_git.trim(), "--days");
    for shell in ["zsh", "fish"] {
        let r = bin(&env, &["completions", shell]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(r.stdout.contains("git-rutter"), "{shell}");
    }
}

/// `git-rutter ARGS` on a pseudo-terminal (util-linux `script`), with man reading `manpath`;
/// returns what the terminal showed.
fn on_terminal(env: &Env, manpath: &Path, args: &str) -> String {
    let line = format!("{BIN} {args}");
    let out = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &env.home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("TERM", "dumb")
        .env("MANPATH", manpath)
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .env("MANWIDTH", "200")
        .current_dir(env.root())
        .output()
        .expect("util-linux script runs");
    String::from_utf8_lossy(&out.stdout).replace('\r', "")
}

#[test]
fn a_commands_long_help_opens_its_page_on_a_terminal_and_man_renders_there() {
    if !have_man() {
        return;
    }
    let env = Env::bare();
    let man1 = env.root().join("share/man/man1");
    assert_eq!(
        bin(&env, &["man", "--install", "--dir", man1.to_str().unwrap()]).code,
        0
    );
    let manpath = man1.parent().unwrap();
    let page = on_terminal(&env, manpath, "recent --help");
    assert!(page.contains("GIT-RUTTER-RECENT(1)"), "{page}");
    assert!(
        page.contains("[-n|--count N]") && page.contains("[--since DATE]"),
        "SYNOPSIS shows values: {page}"
    );
    let short = on_terminal(&env, manpath, "recent -h");
    assert!(
        short.contains("Usage: git rutter recent") && !short.contains("GIT-RUTTER-RECENT(1)"),
        "{short}"
    );
    // Off a terminal (a script reading it) --help stays clap's text.
    let piped = bin(&env, &["recent", "--help"]);
    assert!(
        piped.stdout.contains("Usage: git rutter recent"),
        "{}",
        piped.stdout
    );
    // A page that is not installed: the text, and a line saying how to install the manual.
    let bare = on_terminal(&env, &env.root().join("nowhere"), "log --help");
    assert!(bare.contains("Usage: git rutter log"), "{bare}");
    assert!(bare.contains("git rutter man --install"), "{bare}");
    // `man CMD` on a terminal renders the page instead of printing roff.
    let rendered = on_terminal(&env, manpath, "man recent");
    assert!(
        rendered.contains("GIT-RUTTER-RECENT(1)") && !rendered.contains(".TH"),
        "{rendered}"
    );
    // `git help rutter-recent` finds it too (git looks for gitrutter-recent).
    let bin_dir = Path::new(BIN).parent().unwrap();
    let r: Run = Command::new("git")
        .args(["help", "rutter-recent"])
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin_dir.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("MANPATH", manpath)
        .env("MANPAGER", "cat")
        .env("HOME", &env.home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap()
        .into();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("GIT-RUTTER-RECENT(1)"), "{}", r.stdout);
    // NAME says the tool's name once.
    let main = bin(&env, &["man"]).stdout;
    assert!(main.contains("git\\-rutter \\- keep an append"), "{main}");
}

#[test]
fn completion_knows_note_paths_entry_ids_and_remotes() {
    let env = Env::git_vault();
    env.write("Notes/alpha.md", "# Alpha\n");
    env.write("Notes/also.md", "# Also\n");
    env.write("Other/beta.md", "# Beta\n");
    let r = env.capture_at("2026-11-30T10:00:00.000Z", "Chose alpha.", &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    env.git(&["remote", "add", "backup", "/nowhere"]);
    env.git(&["remote", "add", "laptop", "/nowhere"]);
    let r = bin(&env, &["completions", "bash"]);
    let script = env.root().join("git-rutter.bash");
    std::fs::write(&script, &r.stdout).unwrap();
    let complete = |words: &str, cword: usize, cur: &str| {
        bash_in(
            &script,
            &format!("COMP_WORDS=({words}); COMP_CWORD={cword}; _clap_complete_git_rutter git-rutter '{cur}' x; echo \"${{COMPREPLY[*]}}\""),
            Some(&env),
        )
    };
    // No index yet: a TAB never builds one, so nothing is offered.
    assert_eq!(complete("git-rutter show Notes/a", 2, "Notes/a").trim(), "");
    assert!(!env.vault.join(".git/rutter/index.sqlite").exists());
    assert_eq!(bin(&env, &["reindex"]).code, 0);
    assert_eq!(
        complete("git-rutter show Notes/a", 2, "Notes/a").trim(),
        "Notes/a.md Notes/alpha.md Notes/also.md"
    );
    assert_eq!(
        complete("git-rutter cited-by Notes/al", 2, "Notes/al").trim(),
        "Notes/alpha.md Notes/also.md"
    );
    assert_eq!(
        complete("git-rutter retract 2026", 2, "2026").trim(),
        "20261130T100000000Z"
    );
    assert_eq!(
        complete("git-rutter log 20261130", 2, "20261130").trim(),
        "20261130T100000000Z"
    );
    assert_eq!(complete("git-rutter sync l", 2, "l").trim(), "laptop");
    // Through git's own completion: `git rutter show Oth<TAB>`.
    let via_git = bash_in(
        &script,
        "words=(git rutter show Oth); cword=3; cur=Oth; prev=show; _git_rutter; echo \"${COMPREPLY[*]}\"",
        Some(&env),
    );
    assert_eq!(via_git.trim(), "Other/beta.md");
}
