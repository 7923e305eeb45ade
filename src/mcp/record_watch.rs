//! The server's watcher hears the sessions folder too, and vouches for the record cache's day
//! files as it does for the notes (spec/index.md, "The watcher's answer"): each day file an
//! event names is refreshed before a command's `sync` is answered, and the index then holds the
//! server's token under [`watcher::RECORDS_TOKEN_KEY`]. A command that finds it there (`log`)
//! stats no day file the record did not move.
//!
//! What the record cache reads from the working tree is the day files directly in
//! `_librarian/sessions/` (their stats and bytes); the record's tip and the pending journal are
//! read by every refresh itself, so they need no watch.

use crate::index::entries::Scope;
use crate::index::watcher;
use crate::index::{Index, IndexError};
use crate::records::paths;
use crate::vault::Vault;
use notify::{RecommendedWatcher, RecursiveMode, Watcher};
use std::path::{Path, PathBuf};

/// What an event on `path` means for the record cache.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Heard {
    /// A day file changed, was made, removed or renamed: its stem.
    Day(String),
    /// The sessions folder itself, or `_librarian/`: every day is compared again.
    Folder,
}

/// The record cache's folders: `_librarian/` (where the sessions folder is made or renamed)
/// and the sessions folder.
fn folders(root: &Path) -> [PathBuf; 2] {
    let sessions = root.join(paths::SESSIONS_DIR);
    let librarian = sessions
        .parent()
        .map_or_else(|| root.to_path_buf(), Path::to_path_buf);
    [librarian, sessions]
}

/// Watches the record cache's folders (by path: a folder made or swapped since is watched
/// again). A folder that does not exist is skipped: the watch of its parent hears it made.
/// Whether every folder that exists is watched.
pub(super) fn watch(watcher: &mut RecommendedWatcher, root: &Path) -> bool {
    folders(root).iter().all(
        |dir| match watcher.watch(dir, RecursiveMode::NonRecursive) {
            Ok(()) => true,
            Err(e) => match e.kind {
                notify::ErrorKind::PathNotFound => true,
                notify::ErrorKind::Io(ref io) => io.kind() == std::io::ErrorKind::NotFound,
                _ => false,
            },
        },
    )
}

/// What an event on `path` says about the record cache; `None` when nothing.
pub(super) fn heard(root: &Path, path: &Path) -> Option<Heard> {
    let [librarian, sessions] = folders(root);
    if path == sessions || path == librarian {
        return Some(Heard::Folder);
    }
    if path.parent() != Some(sessions.as_path()) {
        return None;
    }
    let stem = path.file_name()?.to_str()?.strip_suffix(".md")?;
    paths::split_day_stem(stem).map(|_| Heard::Day(stem.to_string()))
}

/// Brings the record cache up to date for what was heard: the `days` named, or every day when
/// `full` or the index does not hold `token` (then the token is written). Whether every day was
/// compared.
pub(super) fn refresh(
    vault: &Vault,
    index: &mut Index,
    token: &str,
    days: &[String],
    full: bool,
) -> Result<bool, IndexError> {
    if full {
        disown(index)?;
    } else if days.is_empty() && owned(index, token)? {
        return Ok(false);
    }
    let src = crate::recall::source::Source::open(vault)?;
    let scope = Scope::Watched {
        token,
        days,
        claim: true,
    };
    Ok(!index.refresh_records(&src, scope)?.by_watcher)
}

/// Whether the index holds `token` for the record cache.
fn owned(index: &Index, token: &str) -> Result<bool, IndexError> {
    Ok(index.meta(watcher::RECORDS_TOKEN_KEY)?.as_deref() == Some(token))
}

/// Takes the server's word for the record cache back (an empty token matches no command's).
pub(super) fn disown(index: &Index) -> Result<(), IndexError> {
    index.set_meta(watcher::RECORDS_TOKEN_KEY, "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_name_day_files_and_the_record_folders_only() {
        let root = Path::new("/v");
        let at = |p: &str| heard(root, Path::new(p));
        assert_eq!(
            at("/v/_librarian/sessions/2026-11-30.md"),
            Some(Heard::Day("2026-11-30".into()))
        );
        assert_eq!(
            at("/v/_librarian/sessions/2026-11-30.laptop.md"),
            Some(Heard::Day("2026-11-30.laptop".into()))
        );
        assert_eq!(at("/v/_librarian/sessions"), Some(Heard::Folder));
        assert_eq!(at("/v/_librarian"), Some(Heard::Folder));
        assert_eq!(at("/v/_librarian/sessions/notes.txt"), None);
        assert_eq!(at("/v/_librarian/sessions/2026/2026-11-30.md"), None);
        assert_eq!(at("/v/_librarian/stateful-use.jsonl"), None);
        assert_eq!(at("/v/Notes/2026-11-30.md"), None);
    }
}
