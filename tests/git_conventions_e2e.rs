//! git's conventions (issue 20, item 2): `git -c KEY=VALUE rutter …` (`GIT_CONFIG_PARAMETERS`)
//! wins over every config file for `color.ui`, `core.pager` and `rutter.*`, as on a git command;
//! `--color=auto|always|never` on every command, and `CLICOLOR_FORCE`. Through the real `git`
//! dispatch: the built binary's folder is put on `PATH`.

use crate::common;

use common::{run_with_stdin, Env, BIN};
use std::path::Path;
use std::process::Command;

/// `git ARGS` with the built git-rutter on `PATH`, in the vault, with `extra` variables.
fn git(env: &Env, dir: &Path, args: &[&str], extra: &[(&str, &str)]) -> common::Run {
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut c = Command::new("git");
    c.env_clear()
        .env("PATH", path)
        .env("HOME", &env.home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("TZ", "UTC")
        .current_dir(dir)
        .args(args)
        .envs(extra.iter().copied());
    run_with_stdin(&mut c, b"")
}

fn vault_with_entry() -> Env {
    let env = Env::git_vault();
    let r = env.capture_at("2026-11-30T10:00:00.000Z", "Painted or not.", &[]);
    assert!(r.stderr.contains("committed"), "{}", r.stderr);
    env
}

const ESC: &str = "\x1b[";

#[test]
fn git_c_color_ui_and_the_color_flag_decide_as_git_does() {
    let env = vault_with_entry();
    let v = env.vault.clone();
    let log = |args: &[&str], extra: &[(&str, &str)]| {
        let r = git(&env, &v, args, extra);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        r.stdout
    };
    // Piped: no colour unless asked.
    assert!(!log(&["rutter", "log", "-n", "1"], &[]).contains(ESC));
    assert!(log(&["-c", "color.ui=always", "rutter", "log", "-n", "1"], &[]).contains(ESC));
    assert!(log(&["rutter", "log", "--color=always", "-n", "1"], &[]).contains(ESC));
    assert!(log(&["rutter", "--color", "log", "-n", "1"], &[]).contains(ESC));
    assert!(!log(
        &[
            "-c",
            "color.ui=always",
            "rutter",
            "log",
            "--color=never",
            "-n",
            "1"
        ],
        &[]
    )
    .contains(ESC));
    assert!(log(&["rutter", "log", "-n", "1"], &[("CLICOLOR_FORCE", "1")]).contains(ESC));
    assert!(!log(
        &["rutter", "log", "-n", "1"],
        &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]
    )
    .contains(ESC));
    assert!(
        log(
            &["rutter", "log", "--color=always", "-n", "1"],
            &[("NO_COLOR", "1")]
        )
        .contains(ESC),
        "the flag wins"
    );
    // `git -c` beats the repository's own config, as it does for git.
    env.git(&["config", "color.ui", "always"]);
    assert!(!log(&["-c", "color.ui=never", "rutter", "log", "-n", "1"], &[]).contains(ESC));
    // JSON is never painted.
    assert!(!log(
        &["rutter", "log", "--json", "--color=always", "-n", "1"],
        &[]
    )
    .contains(ESC));
}

#[test]
fn git_c_rutter_vault_names_the_vault() {
    let env = vault_with_entry();
    let other = env.root().join("other");
    std::fs::create_dir_all(other.join("Notes")).unwrap();
    std::fs::write(other.join("Notes/n.md"), "# N\n").unwrap();
    let r = env.rutter_in(&other, &["init", "."]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = env.rutter_in(
        &other,
        &[
            "--vault",
            ".",
            "capture",
            "--summary",
            "In the other vault.",
            "--session",
            "O",
        ],
    );
    assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
    env.git(&[
        "config",
        "--global",
        "rutter.vault",
        env.vault.to_str().unwrap(),
    ]);
    // From a folder outside any repository, as git dispatches it.
    let outside = env.root().join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    let plain = git(&env, &outside, &["rutter", "recent", "--no-pager"], &[]);
    assert!(plain.stdout.contains("Painted or not."), "{}", plain.stdout);
    let arg = format!("rutter.vault={}", other.display());
    let r = git(
        &env,
        &outside,
        &["-c", &arg, "rutter", "recent", "--no-pager"],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("In the other vault.") && !r.stdout.contains("Painted or not."),
        "{}",
        r.stdout
    );
}

#[test]
fn git_c_core_pager_is_the_pager_on_a_terminal() {
    let env = vault_with_entry();
    env.git(&["config", "--global", "core.pager", "sed s/^/GLOBAL:/"]);
    let bin_dir = Path::new(BIN).parent().unwrap();
    let line = "git -c core.pager='sed s/^/PAGED:/' rutter log -n 1";
    let out = Command::new("script")
        .args(["-qec", line, "/dev/null"])
        .env_clear()
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin_dir.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("HOME", &env.home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("TERM", "dumb")
        .current_dir(&env.vault)
        .output()
        .expect("util-linux script runs");
    let shown = String::from_utf8_lossy(&out.stdout).replace('\r', "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        shown.contains("PAGED:") && !shown.contains("GLOBAL:"),
        "{shown}"
    );
}

#[test]
fn config_lists_every_rutter_setting_with_its_origin_and_what_it_does() {
    let env = Env::git_vault();
    env.git(&["config", "rutter.sign", "true"]);
    env.git(&["config", "--global", "rutter.syncRemote", "backup"]);
    env.git(&["config", "rutter.syncRemote", "laptop"]);
    env.git(&["config", "rutter.sgin", "true"]);
    let mut c = env.cmd();
    c.args(["config"]);
    let r = run_with_stdin(&mut c, b"");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = &r.stdout;
    assert!(
        out.contains("rutter.sign = true   (local, file:.git/config)"),
        "{out}"
    );
    assert!(
        out.contains("rutter.syncRemote = backup   (global, file:"),
        "{out}"
    );
    assert!(
        out.contains(", overridden below)"),
        "the earlier value says it loses: {out}"
    );
    assert!(
        out.contains("rutter.syncRemote = laptop   (local, file:.git/config)"),
        "{out}"
    );
    assert!(
        out.contains("rutter.keepCited is not set (default true)"),
        "{out}"
    );
    assert!(
        out.contains("rutter.sgin = true") && out.contains("a typo?"),
        "{out}"
    );
    assert!(
        out.contains("signed with git's own signing setup"),
        "what it does: {out}"
    );
    // git -c counts, as for git's own commands.
    let mut c = env.cmd();
    c.env("GIT_CONFIG_PARAMETERS", "'rutter.keepcited=false'")
        .args(["config", "--json"]);
    let r = run_with_stdin(&mut c, b"");
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let kept = v["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["key"] == "rutter.keepCited")
        .unwrap();
    assert_eq!(kept["value"], "false", "{v}");
    assert_eq!(kept["set"][0]["scope"], "command", "{v}");
    assert_eq!(v["unknown"][0]["key"], "rutter.sgin", "{v}");
}
