//! The pager, as git runs one: long output on a terminal goes through `GIT_PAGER`, else git
//! config `core.pager`, else `PAGER`, else `less` (with `LESS=FRX`, so a short answer prints and
//! exits as if there were no pager). Only when stdout is a terminal and `--no-pager` was not
//! given ([`super::ui::Ui::start_pager`] decides that); an empty pager or `cat` means none. The
//! command's stdout handle becomes the pager's stdin; stderr stays on the terminal, and no
//! process the command starts inherits the pager's input.

use std::process::{Child, ChildStdin, Command, Stdio};

/// A running pager; [`Pager::wait`] (after its input was closed) waits for the user to quit it.
pub(crate) struct Pager {
    child: Child,
}

/// Starts the pager git's rules name, if any: the pager and the pipe to its stdin.
pub(crate) fn start() -> Option<(Pager, ChildStdin)> {
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
    match child.stdin.take() {
        Some(input) => Some((Pager { child }, input)),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            None
        }
    }
}

impl Pager {
    /// Waits for the pager to exit; its input must be closed first.
    pub(crate) fn wait(mut self) {
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
