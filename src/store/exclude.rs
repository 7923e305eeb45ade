//! Keeping `_librarian/` out of the user's `git status` (DESIGN §3): `init` lists it in
//! `.git/info/exclude`, unless the user tracks it on their branch.

use super::{Store, StoreError};
use crate::fsx::Dir;

/// Adds `/_librarian/` to `.git/info/exclude` unless it is there already or the user tracks
/// `_librarian/` on their branch. Returns whether the overlay is excluded.
pub fn exclude_overlay(store: &Store) -> Result<bool, StoreError> {
    if tracks_overlay(&store.repo) {
        return Ok(false);
    }
    // Opened relative to the git directory without following a symlink: a linked `info/` or
    // `info/exclude` (or one with a second name) is an error naming it, never written through.
    // git reads `info/exclude` from the common directory (shared by linked worktrees).
    let Some(info) = Dir::open(store.repo.commondir())?.open_dir("info", true)? else {
        return Ok(false);
    };
    // Read as bytes and only ever appended to: a file that is not UTF-8, or cannot be read, is
    // never replaced (an unreadable one is an error, not an empty file).
    let existing = info.read("exclude")?.unwrap_or_default();
    let listed = existing.split(|b| *b == b'\n').any(|l| {
        matches!(
            String::from_utf8_lossy(l).trim(),
            "/_librarian/" | "/_librarian" | "_librarian/" | "_librarian"
        )
    });
    if listed {
        return Ok(true);
    }
    let sep = if existing.is_empty() || existing.ends_with(b"\n") {
        ""
    } else {
        "\n"
    };
    let mut file = info.open_append("exclude")?;
    std::io::Write::write_all(
        &mut file.file,
        format!("{sep}# rutter: records live in refs/rutter/records\n/_librarian/\n").as_bytes(),
    )?;
    Ok(true)
}

fn tracks_overlay(repo: &git2::Repository) -> bool {
    let in_head = repo
        .head()
        .and_then(|h| h.peel_to_tree())
        .map(|t| t.get_name("_librarian").is_some())
        .unwrap_or(false);
    let in_index = repo
        .index()
        .map(|i| i.iter().any(|e| e.path.starts_with(b"_librarian/")))
        .unwrap_or(false);
    in_head || in_index
}
