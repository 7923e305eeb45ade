//! The pager: on a terminal, `recent` (and log, search, show, cited-by, diff) go through GIT_PAGER /
//! core.pager / PAGER as git's commands do; `--no-pager`, a pipe, or `cat` turn it off.
//! A pseudo-terminal comes from util-linux `script`.

use crate::common;

use common::{Env, BIN};
use std::process::Command;

/// Runs `git-rutter ARGS` on a pseudo-terminal with `pager_env` set; returns what the terminal
/// showed.
fn on_terminal(env: &Env, pager_env: &[(&str, &str)], args: &str) -> String {
    let line = format!("{BIN} --vault {} {args}", env.vault.display());
    let mut c = Command::new("script");
    c.args(["-qec", &line, "/dev/null"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &env.home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("TERM", "dumb")
        .current_dir(&env.vault);
    for (k, v) in pager_env {
        c.env(k, v);
    }
    let out = c.output().expect("util-linux script runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).replace('\r', "")
}

#[test]
fn recent_on_a_terminal_goes_through_the_pager_unless_told_not_to() {
    let env = Env::git_vault();
    env.capture_at("2026-11-30T10:00:00.000Z", "Chose the paged answer.", &[]);
    let paged = on_terminal(&env, &[("GIT_PAGER", "sed s/^/PAGED:/")], "recent");
    assert!(
        paged.contains("PAGED:20261130T100000 2026-11-30 10:00:00"),
        "{paged}"
    );
    let pager_env = &[("PAGER", "sed s/^/PAGED:/")];
    assert!(
        on_terminal(&env, pager_env, "recent").contains("PAGED:"),
        "PAGER is honoured"
    );
    let plain = on_terminal(&env, pager_env, "--no-pager recent");
    assert!(
        plain.contains("Chose the paged answer.") && !plain.contains("PAGED:"),
        "{plain}"
    );
    let cat = on_terminal(
        &env,
        &[("GIT_PAGER", "cat"), ("PAGER", "sed s/^/PAGED:/")],
        "recent",
    );
    assert!(
        cat.contains("Chose the paged answer.") && !cat.contains("PAGED:"),
        "{cat}"
    );
    env.capture_at(
        "2026-11-30T10:05:00.000Z",
        "Cited the paged note.",
        &["Notes/a.md"],
    );
    let cited = on_terminal(&env, pager_env, "cited-by Notes/a.md");
    assert!(
        cited.contains("PAGED:Notes/a.md is cited by 1 recorded decision"),
        "cited-by pages as recent does: {cited}"
    );
    env.git(&["config", "--global", "core.pager", "sed s/^/CORE:/"]);
    let core = on_terminal(&env, pager_env, "log");
    assert!(
        core.contains("CORE:") && !core.contains("PAGED:"),
        "core.pager before PAGER: {core}"
    );
    // Not a terminal: never paged.
    let piped = env
        .cmd()
        .env("GIT_PAGER", "sed s/^/PAGED:/")
        .arg("recent")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&piped.stdout).contains("PAGED:"));
}

#[test]
fn long_work_says_what_it_is_doing_on_a_terminal_only() {
    let env = Env::git_vault();
    env.capture_at("2026-11-30T10:00:00.000Z", "Indexed later.", &[]);
    let shown = on_terminal(
        &env,
        &[("RUTTER_PROGRESS_AFTER_MS", "0")],
        "--no-pager recent",
    );
    assert!(
        shown.contains("git-rutter: building the search index (first run)… done in"),
        "{shown}"
    );
    // The line covers the first read too, and ends before the answer is printed.
    let (done, answer) = (
        shown.find(" done in ").unwrap(),
        shown.find("Indexed later.").unwrap(),
    );
    assert!(done < answer, "{shown}");
    // An explicit reindex says so too, first run or not.
    let again = on_terminal(&env, &[("RUTTER_PROGRESS_AFTER_MS", "0")], "reindex");
    assert!(
        again.contains("git-rutter: reindexing the notes and records… done in"),
        "{again}"
    );
    // Not a terminal: no progress line, whatever the delay.
    let env = Env::git_vault();
    let piped = env
        .cmd()
        .env("RUTTER_PROGRESS_AFTER_MS", "0")
        .args(["verify", "--full"])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&piped.stderr).contains("checking"));
}

/// Colour as git decides it: on a terminal (and through the pager on one), never through a
/// pipe, never with `NO_COLOR` or `color.ui=never`; `color.ui=always` colours a pipe too; JSON
/// is never painted; a summary's own escape sequence is shown escaped, not obeyed.
#[test]
fn colour_follows_the_terminal_no_color_and_color_ui() {
    const YELLOW: &str = "\u{1b}[33m";
    let env = Env::git_vault();
    env.capture_at(
        "2026-11-30T10:00:00.000Z",
        "Painted \u{1b}[31mred\u{1b}[0m by a hostile summary.",
        &[],
    );
    let shown = on_terminal(&env, &[], "--no-pager log");
    assert!(shown.contains(YELLOW), "{shown:?}");
    assert!(shown.contains("\u{1b}[32mcommitted"), "{shown:?}");
    assert!(
        !shown.contains("\u{1b}[31mred"),
        "the summary's escape is neutralised: {shown:?}"
    );
    let paged = on_terminal(&env, &[("GIT_PAGER", "sed s/^/PAGED:/")], "log");
    assert!(paged.contains(&format!("PAGED:{YELLOW}")), "{paged:?}");
    let none = on_terminal(&env, &[("NO_COLOR", "1")], "--no-pager log");
    assert!(!none.contains('\u{1b}'), "NO_COLOR: {none:?}");
    let json = on_terminal(&env, &[], "--no-pager log --json");
    assert!(!json.contains("\u{1b}["), "{json:?}");
    let piped = env.cmd().args(["log"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&piped.stdout).contains('\u{1b}'));
    env.git(&["config", "color.ui", "always"]);
    let piped = env.cmd().args(["log"]).output().unwrap();
    assert!(String::from_utf8_lossy(&piped.stdout).contains(YELLOW));
    env.git(&["config", "color.ui", "never"]);
    let never = on_terminal(&env, &[], "--no-pager log");
    assert!(!never.contains('\u{1b}'), "color.ui=never: {never:?}");
}
