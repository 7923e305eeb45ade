//! `git rutter restore`: put committed record files back.

use super::{cannot_run, CommandResult, Exit, Ui};
use crate::clock;
use crate::recorder::restore::Restored;
use crate::recorder::Recorder;
use crate::store::Store;
use std::path::PathBuf;

/// Rebuild missing record files from refs/rutter/records and undo edits to committed ones.
///
/// A missing day file, ledger or use log is written again from the ref. A file whose committed
/// bytes were changed (edited, truncated, replaced by a symlink) is first moved aside to
/// .git/rutter/aside/ (never deleted), then the committed version is written back. Lines still
/// waiting in the pending journal are appended again. Files that only gained new lines are left
/// as they are.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only the day files of this day (YYYY-MM-DD).
    #[arg(long, value_name = "DAY")]
    pub day: Option<String>,
}

/// Runs the command.
pub fn run(ui: &mut Ui, vault: Option<PathBuf>, args: Args) -> CommandResult {
    if let Some(d) = args.day.as_deref().filter(|d| !clock::is_day(d)) {
        return Err(cannot_run(format!("{d} is not a date (YYYY-MM-DD)")));
    }
    let vault = super::interactive_vault(ui, vault.as_deref())?;
    let store = Store::open(&vault)?;
    let recorder = Recorder::lock(&store, crate::lock::INTERACTIVE_WAIT)?;
    let done = recorder.restore(args.day.as_deref(), clock::now())?;
    if done.is_empty() {
        ui.print("nothing to restore: every committed record file is intact")?;
    }
    for r in done {
        match r {
            Restored::Recreated(p) => {
                ui.print(&format!("restored {p} from refs/rutter/records"))?
            }
            Restored::Replaced(p, aside) => ui.print(&format!(
                "restored {p}; the changed file was moved to {}",
                aside.display()
            ))?,
        }
    }
    Ok(Exit::Clean)
}
