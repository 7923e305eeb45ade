//! Help as git gives it: `git rutter CMD --help` opens git-rutter-CMD(1) on a terminal, as
//! `git CMD --help` opens git-CMD(1) (`-h` stays clap's short text, and off a terminal, where a
//! script reads it, `--help` is clap's text too); `git rutter man [CMD]` on a terminal shows the
//! page through `man` instead of printing roff.

use std::io::{IsTerminal, Write};
use std::process::{Command, Stdio};

/// `man`, by its absolute path on `PATH` (a relative entry never lets the current folder,
/// perhaps a vault holding others' files, choose it).
fn man() -> Option<Command> {
    crate::store::gitcli::program("man").map(Command::new)
}

/// Opens `page` (`git-rutter-recent`) with `man` when stdout is a terminal. `false` when it did
/// not (not a terminal, no `man`, the page not installed): the caller prints clap's help then,
/// and says once on stderr how to install the pages.
pub fn open_installed(page: &str) -> bool {
    if !std::io::stdout().is_terminal() {
        return false;
    }
    // `man -w` finds the page without showing it: a missing page is our fallback, not man's
    // "No manual entry" on the screen.
    let Some(found) = installed(page) else {
        return false;
    };
    if !found {
        eprintln!("git-rutter: {page}(1) is not installed, so here is the short form; `git rutter man --install` installs the manual.");
        return false;
    }
    man().is_some_and(|mut m| m.arg(page).status().is_ok_and(|s| s.success()))
}

/// Whether `man` finds `page` (`man -w`, nothing shown); `None` when there is no `man` to ask.
pub(crate) fn installed(page: &str) -> Option<bool> {
    let found = man()?
        .args(["-w", page])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    Some(found)
}

/// Shows the roff `page` through `man -l -` when stdout is a terminal; `false` when it did not
/// (not a terminal, or `man` could not run), so the caller prints the roff.
pub(crate) fn render_on_terminal(page: &[u8]) -> bool {
    if !std::io::stdout().is_terminal() {
        return false;
    }
    let Some(Ok(mut child)) = man().map(|mut m| m.args(["-l", "-"]).stdin(Stdio::piped()).spawn())
    else {
        return false;
    };
    if let Some(mut stdin) = child.stdin.take() {
        // A pager the user quits early closes the pipe: that is not an error.
        let _ = stdin.write_all(page);
    }
    child.wait().is_ok_and(|s| s.success())
}

/// Whether `args` (after the program name) ask a subcommand for its long help: `--help`
/// before any `--`, and a subcommand named. `-h` is the short text and never opens a page.
pub fn asks_long_help(args: &[std::ffi::OsString]) -> bool {
    args.iter()
        .skip(1)
        .map(|a| a.to_string_lossy())
        .take_while(|a| a != "--")
        .any(|a| a == "--help")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(args: &[&str]) -> Vec<std::ffi::OsString> {
        args.iter().map(Into::into).collect()
    }

    #[test]
    fn only_a_long_help_before_dash_dash_asks() {
        assert!(asks_long_help(&os(&["git-rutter", "recent", "--help"])));
        assert!(asks_long_help(&os(&[
            "git-rutter",
            "--vault",
            "v",
            "log",
            "--help"
        ])));
        assert!(!asks_long_help(&os(&["git-rutter", "recent", "-h"])));
        assert!(!asks_long_help(&os(&[
            "git-rutter",
            "search",
            "--",
            "--help"
        ])));
    }
}
