//! `git rutter show`: one indexed note, whole (get-note).

use crate::index::Index;
use crate::recall::search;
use std::path::PathBuf;

/// Print one note by its vault-relative path, as the index holds it.
///
/// Only indexed notes can be shown (markdown files found by the last reindex), so nothing
/// outside the vault and no other file can be read this way.
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
    let index = Index::open(&vault, false)?;
    let note = index.note(&args.path)?;
    if args.json {
        super::print_json(&serde_json::json!({ "path": args.path, "note": note }))?;
    } else {
        super::print(&search::render_note(&args.path, note.as_ref()))?;
    }
    Ok(if note.is_some() {
        super::EXIT_OK
    } else {
        super::EXIT_FINDING
    })
}
