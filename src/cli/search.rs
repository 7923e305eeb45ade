//! `git rutter search`: full-text search over the notes, with prior engagement.

use super::color::Palette;
use super::{CommandResult, Exit, Ui};
use crate::index::search::Filters;
use crate::recall::{reindex, search};
use std::path::PathBuf;

/// Search the notes: every word must match, best matches first.
///
/// When no note holds every word, the notes that hold most of them are shown instead, each
/// naming the words it holds (search again with other words for the same idea).
///
/// Exit status: 0 with hits that hold every word, 1 when none does (as `git grep`; the notes
/// holding some words are still shown), 2 when it could not run.
///
/// Each hit shows its title, type · status · created, path and a snippet; a note past sessions
/// cited also shows how many decisions cited it and the one closest to the query ("↩ prior
/// engagement"). Notes created, edited,
/// renamed or deleted since the last reindex are picked up first (a stat of each folder and
/// note; only what changed is read). Put `--` before a query that starts with `-`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The words to search for (the first 32 within 4 KiB are searched).
    #[arg(required = true, num_args = 1.., allow_hyphen_values = false)]
    pub query: Vec<String>,
    /// At most this many hits (1-50).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=50))]
    pub limit: u32,
    /// Only notes whose frontmatter `type` is exactly this.
    #[arg(long = "type", value_name = "TYPE")]
    pub note_type: Option<String>,
    /// Only notes whose frontmatter `status` is exactly this.
    #[arg(long)]
    pub status: Option<String>,
    /// Only notes whose frontmatter `domain` is exactly this.
    #[arg(long)]
    pub domain: Option<String>,
    /// Print the hits as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(ui: &mut Ui, vault: Option<PathBuf>, args: Args) -> CommandResult {
    let vault = super::interactive_vault(ui, vault.as_deref())?;
    let (mut index, building) = super::open_index(ui, &vault)?;
    let raw = args.query.join(" ");
    let (query, cut) = search::bounded(&raw);
    if let Some(cut) = cut {
        ui.warn(format_args!("git-rutter: {cut} Ask with fewer words."));
    }
    let filters = Filters {
        note_type: args.note_type,
        status: args.status,
        domain: args.domain,
    };
    search::ensure_records(&index)?;
    let (answer, _) = index.read_fresh(
        |index| search::search(index, query, args.limit as usize, &filters),
        |index, notes| reindex::identity_after_rescan(&vault, index, notes).map(drop),
    )?;
    // The first build reads every note in the first fresh read too: the line covers it.
    drop(building);
    if args.json {
        ui.print_json(&serde_json::json!({
            "query": query,
            "results": answer.results,
            "partial": answer.partial,
        }))?;
    } else {
        ui.print_painted(&search::render(query, &answer), Palette::marks)?;
    }
    // As `git grep`: 1 when no note holds every word, so a script can tell.
    Ok(Exit::findings_if(
        answer.results.is_empty() || answer.partial.is_some(),
    ))
}
