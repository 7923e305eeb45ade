//! `git rutter show`: one indexed note, whole (get-note).

use crate::index::Index;
use crate::recall::{reindex, search};
use std::path::PathBuf;

/// Print one note by its vault-relative path, as it is now.
///
/// Only notes the index holds can be shown (markdown files in the vault, outside skipped
/// folders; changes since the last reindex are picked up first), so nothing outside the vault
/// and no other file can be read this way.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The note's path, exactly as search shows it.
    pub path: String,
    /// Print the note as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command; a missing note is exit status 1.
pub fn run(vault: Option<PathBuf>, args: Args) -> anyhow::Result<i32> {
    let vault = super::interactive_vault(vault.as_deref())?;
    let building = super::progress::Progress::index_build(&vault);
    let mut index = Index::open(&vault, false)?;
    drop(building);
    let (note, _) = index.read_fresh(
        |index| index.note(&args.path),
        |index, notes| reindex::identity_after_rescan(&vault, index, notes).map(drop),
    )?;
    if args.json {
        super::print_json(&serde_json::json!({ "path": args.path, "note": note }))?;
    } else if note.is_some() {
        super::print(&search::render_note(&args.path, note.as_ref()))?;
    } else {
        // A miss is a message, not output (as `git show` of a missing path): stderr, exit 1.
        eprintln!(
            "{}",
            crate::records::text::terminal_safe(&search::render_note(&args.path, None))
        );
    }
    Ok(if note.is_some() {
        super::EXIT_OK
    } else {
        super::EXIT_FINDING
    })
}
