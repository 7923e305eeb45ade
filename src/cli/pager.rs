//! The pager, as git runs one: long output on a terminal goes through `GIT_PAGER`, else git
//! config `core.pager`, else `PAGER`, else `less` (with `LESS=FRX`, so a short answer prints and
//! exits as if there were no pager). Only when stdout is a terminal and `--no-pager` was not
//! given; an empty pager or `cat` means none. stdout (fd 1) is pointed at the pager's stdin, so
//! every print reaches it; stderr stays on the terminal.

use std::io::{IsTerminal, Write};
use std::process::{Child, Command, Stdio};

/// A running pager; [`Pager::finish`] closes its input and waits for the user to quit it.
pub struct Pager {
    child: Child,
}

/// Starts the pager for a command whose output may be long, if one applies.
pub fn start(no_pager: bool) -> Option<Pager> {
    if no_pager || !std::io::stdout().is_terminal() {
        return None;
    }
    let command = pager_command()?;
    let mut child = Command::new("sh")
        .args(["-c", &command])
        .env(
            "LESS",
            std::env::var("LESS").unwrap_or_else(|_| "FRX".into()),
        )
        .env("LV", std::env::var("LV").unwrap_or_else(|_| "-c".into()))
        .stdin(Stdio::piped())
        .spawn()
        .ok()?;
    let input = child.stdin.take()?;
    if rustix::stdio::dup2_stdout(&input).is_err() {
        let _ = child.kill();
        let _ = child.wait();
        return None;
    }
    Some(Pager { child })
}

impl Pager {
    /// Flushes stdout, closes the pager's input (stdout then points at /dev/null) and waits for
    /// the pager to exit.
    pub fn finish(mut self) {
        let _ = std::io::stdout().flush();
        if let Ok(null) = std::fs::File::options().write(true).open("/dev/null") {
            let _ = rustix::stdio::dup2_stdout(&null);
        }
        let _ = self.child.wait();
    }
}

/// The pager to run, as git chooses it; `None` when paging is off (`""` or `cat`).
fn pager_command() -> Option<String> {
    let configured = std::env::var("GIT_PAGER")
        .ok()
        .or_else(core_pager)
        .or_else(|| std::env::var("PAGER").ok())
        .unwrap_or_else(|| "less".to_string());
    let trimmed = configured.trim();
    (!trimmed.is_empty() && trimmed != "cat").then(|| trimmed.to_string())
}

/// `core.pager` from git's config (the repository around the current directory, then global).
fn core_pager() -> Option<String> {
    crate::store::gitenv::config_string_here("core.pager")
}
