//! `git rutter reindex`: bring the index up to date and run the identity pass.

use super::{CommandResult, Exit, Ui};
use crate::recall::reindex::{self, Mode};
use std::path::PathBuf;

/// Update the search index and re-resolve cited notes that moved.
///
/// Re-reads the notes and day files that changed since the last run (by size and times), then
/// runs the identity pass: a dead cited path whose exact content (sha256) is now at exactly one
/// other path is bound to it (appended to _librarian/note-identity.md and committed); other dead
/// refs stay unresolved, with candidates from exact hashes and git's rename detection. The index
/// lives in .git/rutter/index.sqlite (LIBRARIAN_DB_PATH overrides) and can be deleted at any time.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Rebuild every table from nothing; also takes over an index built for another vault. A
    /// database git-rutter did not make (the TypeScript version's librarian.db behind
    /// LIBRARIAN_DB_PATH) is never written, not even with --force.
    #[arg(long)]
    pub force: bool,
}

/// Runs the command.
pub fn run(ui: &mut Ui, vault: Option<PathBuf>, args: Args) -> CommandResult {
    let vault = super::interactive_vault(ui, vault.as_deref())?;
    let started = std::time::Instant::now();
    // A reindex reads every note: the line covers opening and the whole pass, first run or not.
    let building = super::progress::Progress::index_build(ui, &vault).unwrap_or_else(|| {
        super::progress::Progress::start(ui, "reindexing the notes and records")
    });
    let mut index = crate::recall::source::open_index(&vault, args.force)?;
    let rebuilt_on_open = index.built.is_some();
    let report = reindex::refresh(
        &vault,
        &mut index,
        Mode::Full,
        args.force && !rebuilt_on_open,
    )?;
    drop(building);
    let n = &report.notes;
    let total = if rebuilt_on_open {
        index.note_count()?
    } else {
        n.indexed
    };
    ui.print(&format!(
        "[rutter] reindex complete: {total} notes indexed, {} skipped, {}ms",
        n.skipped,
        started.elapsed().as_millis()
    ))?;
    ui.print(&format!("  vault: {}", vault.root.display()))?;
    ui.print(&format!("  index: {}", index.path().display()))?;
    if let Some(why) = &index.built {
        ui.print(&format!("  built: {why}"))?;
    } else if !args.force {
        ui.print(&format!(
            "  changed: {} note(s) re-read, {} removed, {} day file(s) re-read",
            n.changed, n.removed, report.entries.files_read
        ))?;
    }
    if let Some(id) = &report.identity {
        let entries = if id.appended == 1 { "entry" } else { "entries" };
        ui.warn(format_args!(
            "[rutter] identity pass: {} dead ref(s) checked, {} bound, {} unresolved, {} ledger {entries} appended, {}ms",
            id.dead, id.bound, id.unresolved, id.appended, id.elapsed_ms
        ));
        if let Some(p) = &id.problem {
            ui.warn(format_args!(
                "[rutter] identity pass: new bindings were not recorded: {p}"
            ));
        }
    }
    Ok(Exit::Clean)
}
