//! `git rutter diff`: the record files in the working tree against refs/rutter/records.

use super::{CommandResult, Exit, Ui};
use crate::store::Store;
use std::path::PathBuf;

/// Show how the record files differ from what was committed (a unified diff).
///
/// Also refreshes a private index, .git/rutter/records.index, so plain git shows the same:
/// `GIT_INDEX_FILE=.git/rutter/records.index git diff -- _librarian`. Lines only added at the
/// end are pending (not committed yet); anything else is an edit `git rutter verify` reports.
/// A record file not committed at all yet is shown as new (plain git diff does not list it).
/// Exit status 0, as `git diff`; with --exit-code, 1 when something differs.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Exit with 1 when the record files differ from what was committed, 0 when they do not
    /// (as `git diff --exit-code`).
    #[arg(long)]
    pub exit_code: bool,
}

/// Runs the command.
pub fn run(ui: &mut Ui, vault: Option<PathBuf>, args: Args) -> CommandResult {
    let vault = super::interactive_vault(ui, vault.as_deref())?;
    let store = Store::open(&vault)?;
    store.write_private_index()?;
    let diff = crate::audit::diff::record_diff(&store)?;
    if diff.is_empty() {
        ui.warn("git-rutter: no differences: the record files match refs/rutter/records.");
        return Ok(Exit::Clean);
    }
    ui.print_painted(diff.trim_end(), |p, t| p.diff(t, 0))?;
    Ok(Exit::findings_if(args.exit_code))
}
