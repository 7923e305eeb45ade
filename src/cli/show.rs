//! `git rutter show`: one indexed note, whole (get-note).

use super::{user_error, CommandResult, Exit, Ui};
use crate::recall::{reindex, search};
use std::path::PathBuf;

/// Print one note by its vault-relative path, as it is now.
///
/// Only notes the index holds can be shown (markdown files in the vault, outside skipped
/// folders; changes since the last reindex are picked up first), so nothing outside the vault
/// and no other file can be read this way.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The note's path: vault-relative as search shows it, or relative to the current folder
    /// when you stand inside the vault (as `git show HEAD:./file`), or absolute inside it.
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(super::complete::note_paths))]
    pub path: String,
    /// Print the note as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command; a missing note is exit status 1.
pub fn run(ui: &mut Ui, vault: Option<PathBuf>, args: Args) -> CommandResult {
    let vault = super::interactive_vault(ui, vault.as_deref())?;
    let (mut index, building) = super::open_index(ui, &vault)?;
    // From a folder inside the vault a path is relative to it, as git takes paths; the
    // vault-relative path search shows still works there.
    let here = vault_relative(&vault.root, &args.path);
    let (found, _) = index.read_fresh(
        |index| match index.note(&here)? {
            Some(n) => Ok(Some((here.clone(), n))),
            None => Ok(index.note(&args.path)?.map(|n| (args.path.clone(), n))),
        },
        |index, notes| reindex::identity_after_rescan(&vault, index, notes).map(drop),
    )?;
    drop(building);
    let (path, note) = match found {
        Some((p, n)) => (p, Some(n)),
        None => (args.path.clone(), None),
    };
    let args = Args { path, ..args };
    if args.json {
        ui.print_json(&serde_json::json!({ "path": args.path, "note": note }))?;
        return Ok(Exit::findings_if(note.is_none()));
    }
    if note.is_none() {
        // A miss is a message, not output (as `git show` of a missing path): stderr, exit 1.
        return Err(
            user_error(crate::records::text::terminal_safe(&search::render_note(
                &args.path, None,
            )))
            .hinted("`git rutter search WORDS` finds notes by their content."),
        );
    }
    ui.print(&without_repeated_title(
        search::render_note(&args.path, note.as_ref()),
        note.as_ref(),
    ))?;
    Ok(Exit::Clean)
}

/// The note as `librarian-get-note` gives it, less its `# Title` header when the body starts
/// with that very heading (the terminal shows a title once).
fn without_repeated_title(text: String, note: Option<&crate::index::search::Note>) -> String {
    let Some(n) = note else { return text };
    let heading = format!("# {}", n.head.title);
    let first = n.body.lines().find(|l| !l.trim().is_empty());
    match (
        first.map(str::trim_end) == Some(heading.as_str()),
        text.split_once('\n'),
    ) {
        (true, Some((_, rest))) => rest.to_string(),
        _ => text,
    }
}

/// `path` as the vault-relative path the index knows. A path given from inside the vault (its
/// root or a folder below) or an absolute one inside it is taken relative to where it points,
/// as git takes paths; from outside, relative to the vault's root; `.` and `..` resolved by
/// text. A path that leaves the vault is left as given, and the index answers for it.
pub(super) fn vault_relative(root: &std::path::Path, path: &str) -> String {
    let given = std::path::Path::new(path);
    let joined = match given.is_absolute() {
        true => given.to_path_buf(),
        false => match std::env::current_dir()
            .ok()
            .and_then(|c| c.canonicalize().ok())
        {
            Some(cwd) if cwd.starts_with(root) => cwd.join(given),
            // From outside the vault a relative path is vault-relative; `./` and `..` inside
            // it are resolved all the same (one that leaves the vault is left as given).
            _ => root.join(given),
        },
    };
    let Some(rel) = lexical(&joined)
        .strip_prefix(root)
        .ok()
        .map(|p| p.to_path_buf())
    else {
        return path.to_string();
    };
    rel.to_str().map_or(path.to_string(), str::to_string)
}

/// `p` with `.` and `..` resolved by text (no symlink followed, none needed: the index answers
/// only for its own notes).
fn lexical(p: &std::path::Path) -> std::path::PathBuf {
    let mut out = std::path::PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}
