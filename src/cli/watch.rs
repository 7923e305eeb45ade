//! `git rutter watch`: the watcher of a running MCP server, alone ([`crate::mcp::standalone`]);
//! and `rutter.watch`, which has a command that found no watcher start one in the background.

use super::{CommandResult, Exit, Ui};
use crate::clock::{parse_interval, show_interval, IntervalError};
use crate::setup::settings;
use crate::store::Store;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Keep the vault's index current, so commands stat no note.
///
/// `search`, `show`, `recent`, `log`, `cited-by` and `status` make sure the index holds every
/// note as it is now. A running MCP server watches the vault and tells them so at once;
/// without one they check every note themselves (a stat each: the more notes, the longer it
/// takes). This command is that watcher without the MCP server, for the times no AI client
/// runs one: it watches until stopped (Ctrl-C), or with --idle, until no command has asked for
/// that long. At most one runs per vault.
///
/// `git config [--global] rutter.watch 30m` (`true`: 30m) has a command that finds no watcher
/// start `git rutter watch --idle 30m` in the background as it ends, so the next command is
/// answered at once.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Stop once no command has asked for this long (30s, 15m, 2h, 1d).
    #[arg(long, value_name = "INTERVAL", value_parser = idle)]
    pub idle: Option<Duration>,
}

/// Why `--idle` does not read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum IdleError {
    #[error("an idle time of none: leave --idle out to watch until stopped")]
    None,
    #[error(transparent)]
    Interval(#[from] IntervalError),
}

fn idle(raw: &str) -> Result<Duration, IdleError> {
    parse_interval(raw)?.ok_or(IdleError::None)
}

/// Runs the command: 0 once idle, 1 when another watcher watches the vault, 2 when it could
/// not run.
pub fn run(ui: &mut Ui, vault: Option<PathBuf>, args: Args) -> CommandResult {
    let vault = super::interactive_vault(ui, vault.as_deref())?;
    let watching = crate::mcp::standalone::start(&vault)?;
    let until = match args.idle {
        Some(idle) => format!("until no command has asked for {}", show_interval(idle)),
        None => "until stopped (Ctrl-C)".to_string(),
    };
    let root = crate::records::text::one_line_safe(&vault.root.to_string_lossy());
    ui.warn(format_args!(
        "git-rutter: watching {root} for commands, {until}."
    ));
    watching.until_idle(args.idle)?;
    Ok(Exit::Clean)
}

/// When a fresh read of this command found no watcher and `rutter.watch` asks for one: starts
/// `git-rutter --vault ROOT watch --idle INTERVAL` in its own process group, its streams
/// closed, and returns at once. Says nothing, fails nothing: a watcher that does not start
/// only leaves the next command to check the notes itself.
pub(crate) fn start_if_wanted() {
    let Some(root) = crate::index::watcher::take_unwatched() else {
        return;
    };
    let Ok(vault) = crate::vault::resolve(Some(&root), false) else {
        return;
    };
    let Ok(store) = Store::open(&vault) else {
        return;
    };
    let set = store.config_string(settings::WATCH_KEY);
    if let Some(Ok(Some(idle))) = set.as_deref().map(settings::watch_idle) {
        spawn(&vault.root, idle);
    }
}

/// Starts `git-rutter --vault ROOT watch --idle IDLE` detached; the command ends at once and
/// leaves it to init.
fn spawn(root: &Path, idle: Duration) {
    let _ = crate::detached::start(
        root,
        &["--no-pager", "watch", "--idle", &show_interval(idle)],
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_idle_time_reads_as_rutter_autosync_does_and_none_is_refused() {
        assert_eq!(idle("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(idle("2h").unwrap(), Duration::from_secs(7200));
        assert!(idle("0")
            .unwrap_err()
            .to_string()
            .contains("leave --idle out"));
        assert!(idle("soon")
            .unwrap_err()
            .to_string()
            .contains("not an interval"));
    }
}
