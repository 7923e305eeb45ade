//! Completion that knows the data (clap_complete's dynamic completion): note paths for `show`
//! and `cited-by`, entry ids for `retract` and `log`, remotes for `sync`. The shell asks the
//! binary at each TAB (`GIT_RUTTER_COMPLETE=bash git-rutter -- WORDS`); `git rutter completions
//! SHELL` prints the script that does. The vault is found as for a command run by hand; a
//! completer never writes, never builds the index, and offers nothing when it cannot answer at
//! once.

use clap_complete::engine::CompletionCandidate;
use std::ffi::OsStr;

/// The environment variable that asks the binary for completions.
pub const VAR: &str = "GIT_RUTTER_COMPLETE";

fn vault() -> Option<crate::vault::Vault> {
    crate::vault::resolve(None, true).ok()
}

/// Note paths of the index starting with what was typed.
pub(crate) fn note_paths(current: &OsStr) -> Vec<CompletionCandidate> {
    let (Some(typed), Some(vault)) = (current.to_str(), vault()) else {
        return Vec::new();
    };
    crate::index::complete::note_paths(&vault, typed)
        .into_iter()
        .map(CompletionCandidate::new)
        .collect()
}

/// Entry ids starting with what was typed, newest first, each with its summary as help.
pub(crate) fn entry_ids(current: &OsStr) -> Vec<CompletionCandidate> {
    let (Some(typed), Some(vault)) = (current.to_str(), vault()) else {
        return Vec::new();
    };
    crate::index::complete::entry_ids(&vault, typed)
        .into_iter()
        .map(|(id, summary)| {
            let help: String = summary.chars().take(60).collect();
            let help = crate::records::text::terminal_safe(&help).into_owned();
            CompletionCandidate::new(id).help(Some(help.into()))
        })
        .collect()
}

/// The vault's git remotes starting with what was typed.
pub(crate) fn remotes(current: &OsStr) -> Vec<CompletionCandidate> {
    let (Some(typed), Some(vault)) = (current.to_str(), vault()) else {
        return Vec::new();
    };
    crate::store::remote_names(&vault)
        .into_iter()
        .filter(|r| r.starts_with(typed))
        .map(CompletionCandidate::new)
        .collect()
}

/// The registration script for `shell`, calling `completer` (this binary) at each TAB.
pub(crate) fn registration(
    shell: clap_complete::Shell,
    completer: &str,
) -> std::io::Result<Vec<u8>> {
    use clap_complete::env::{Bash, Elvish, EnvCompleter, Fish, Powershell, Zsh};
    let adapter: &dyn EnvCompleter = match shell {
        clap_complete::Shell::Bash => &Bash,
        clap_complete::Shell::Zsh => &Zsh,
        clap_complete::Shell::Fish => &Fish,
        clap_complete::Shell::Elvish => &Elvish,
        clap_complete::Shell::PowerShell => &Powershell,
        _ => &Bash,
    };
    let mut out = Vec::new();
    adapter.write_registration(VAR, "git-rutter", "git-rutter", completer, &mut out)?;
    Ok(out)
}
