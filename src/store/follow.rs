//! The narrow git questions rename following asks (`recall::renames`): HEAD and a commit's tree
//! and first parent, an entry at a path in a tree, where git's rename detection says a name
//! went (between two trees, or from HEAD to the working tree), the files `git status` sees, and
//! libgit2's similarity of some bytes to others. How the answers are put together, and what
//! counts as evidence, is the caller's.

use super::oid::{ToGit, ToId};
use super::{Store, StoreError};
use crate::objectid::ObjectId;
use git2::{
    Delta, Diff, DiffFindOptions, DiffFormat, DiffOptions, ErrorCode, ObjectType, Odb, Repository,
    StatusOptions,
};
use std::path::Path;

/// git's default similarity threshold for renames and copies, in percent.
const SIMILARITY_THRESHOLD: u16 = 50;
/// Sources libgit2 may try per rename target within one diff.
const RENAME_LIMIT: usize = 10_000;

/// What a tree entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryKind {
    Blob,
    Tree,
    /// A submodule (gitlink) or anything else.
    Other,
}

impl Store {
    /// The work tree's root, `None` for a bare repository.
    pub(crate) fn workdir(&self) -> Option<&Path> {
        self.repo.workdir()
    }

    /// HEAD's commit, `None` when HEAD is unborn or missing.
    pub(crate) fn head_commit(&self) -> Result<Option<ObjectId>, StoreError> {
        match self.repo.head().and_then(|h| h.peel_to_commit()) {
            Ok(c) => Ok(Some(c.id().to_id())),
            Err(e) if matches!(e.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Commit `id`'s tree and first parent (the parent is not read).
    pub(crate) fn tree_and_first_parent(
        &self,
        id: ObjectId,
    ) -> Result<(ObjectId, Option<ObjectId>), StoreError> {
        let commit = self.repo.find_commit(id.to_git())?;
        let parent = commit.parent_id(0).ok().map(ToId::to_id);
        Ok((commit.tree_id().to_id(), parent))
    }

    /// The entry at the slash-separated `path` in tree `tree`: its id and kind, `None` when
    /// there is none (a tree that cannot be read is an error).
    pub(crate) fn tree_entry(
        &self,
        tree: ObjectId,
        path: &str,
    ) -> Result<Option<(ObjectId, EntryKind)>, StoreError> {
        let tree = self.repo.find_tree(tree.to_git())?;
        let Ok(entry) = tree.get_path(Path::new(path)) else {
            return Ok(None);
        };
        let kind = match entry.kind() {
            Some(ObjectType::Blob) => EntryKind::Blob,
            Some(ObjectType::Tree) => EntryKind::Tree,
            _ => EntryKind::Other,
        };
        Ok(Some((entry.id().to_id(), kind)))
    }

    /// Where git's rename detection (exact and by similarity, at git's default threshold) says
    /// `from` went between the trees `old` and `new`, if anywhere.
    pub(crate) fn renamed_between(
        &self,
        old: ObjectId,
        new: ObjectId,
        from: &str,
    ) -> Result<Option<String>, StoreError> {
        let diff = self.repo.diff_tree_to_tree(
            Some(&self.repo.find_tree(old.to_git())?),
            Some(&self.repo.find_tree(new.to_git())?),
            Some(DiffOptions::new().ignore_submodules(true)),
        )?;
        Ok(renamed_to(diff, from, &mut find_options())?)
    }

    /// Where `name` (in the tree `head_tree`, missing on disk) went in the working tree,
    /// untracked files included.
    pub(crate) fn renamed_in_workdir(
        &self,
        head_tree: ObjectId,
        name: &str,
    ) -> Result<Option<String>, StoreError> {
        let mut opts = DiffOptions::new();
        opts.include_untracked(true)
            .recurse_untracked_dirs(true)
            .ignore_submodules(true);
        let tree = self.repo.find_tree(head_tree.to_git())?;
        let diff = self
            .repo
            .diff_tree_to_workdir_with_index(Some(&tree), Some(&mut opts))?;
        Ok(renamed_to(diff, name, find_options().for_untracked(true))?)
    }

    /// Every file git's status sees (tracked or untracked, not ignored, not deleted from the
    /// working tree), with whether it changed since HEAD or is untracked.
    pub(crate) fn working_statuses(&self) -> Result<Vec<(String, bool)>, StoreError> {
        let mut opts = StatusOptions::new();
        opts.include_untracked(true)
            .recurse_untracked_dirs(true)
            .include_unmodified(true)
            .exclude_submodules(true);
        let statuses = self.repo.statuses(Some(&mut opts))?;
        let mut out = Vec::new();
        for entry in statuses.iter() {
            let Ok(p) = entry.path() else {
                continue;
            };
            let status = entry.status();
            if status.is_wt_deleted() {
                continue;
            }
            out.push((p.to_string(), !status.is_empty()));
        }
        Ok(out)
    }
}

/// Runs rename detection on `diff` and returns where `from` was renamed to, if anywhere.
fn renamed_to(
    mut diff: Diff<'_>,
    from: &str,
    find: &mut DiffFindOptions,
) -> Result<Option<String>, git2::Error> {
    diff.find_similar(Some(find))?;
    Ok(diff
        .deltas()
        .find(|d| {
            d.status() == Delta::Renamed && d.old_file().path_bytes() == Some(from.as_bytes())
        })
        .and_then(|d| d.new_file().path_bytes().map(<[u8]>::to_vec))
        .and_then(|b| String::from_utf8(b).ok()))
}

/// Renames, exact and by similarity, at git's default threshold.
fn find_options() -> DiffFindOptions {
    let mut find = DiffFindOptions::new();
    find.renames(true)
        .rename_threshold(SIMILARITY_THRESHOLD)
        .rename_limit(RENAME_LIMIT);
    find
}

/// `(index into targets, similarity)` for every target at least as similar to `source` as
/// git's copy threshold, by libgit2's copy detection in an in-memory repository (nothing is
/// written to any object database on disk).
pub(crate) fn similarity_scores(
    source: &[u8],
    targets: &[(String, Vec<u8>)],
) -> Result<Vec<(usize, u16)>, StoreError> {
    let odb = Odb::new()?;
    odb.add_new_mempack_backend(1)?;
    let mem = Repository::from_odb(odb)?;
    let src = mem.blob(source)?;
    let mut old = mem.treebuilder(None)?;
    old.insert("cited", src, 0o100644)?;
    let old = mem.find_tree(old.write()?)?;
    let mut new = mem.treebuilder(Some(&old))?;
    for (i, (_, bytes)) in targets.iter().enumerate() {
        new.insert(format!("t{i}"), mem.blob(bytes)?, 0o100644)?;
    }
    let new = mem.find_tree(new.write()?)?;
    let mut diff = mem.diff_tree_to_tree(
        Some(&old),
        Some(&new),
        Some(DiffOptions::new().include_unmodified(true)),
    )?;
    let mut find = DiffFindOptions::new();
    find.copies(true)
        .copies_from_unmodified(true)
        .copy_threshold(SIMILARITY_THRESHOLD)
        .rename_limit(RENAME_LIMIT);
    diff.find_similar(Some(&mut find))?;
    Ok(copy_scores(&diff)?)
}

/// Reads each copy's similarity from the raw diff format (`... C072\tcited\tt5`), the one
/// place git2 exposes libgit2's `similarity` field.
fn copy_scores(diff: &Diff<'_>) -> Result<Vec<(usize, u16)>, git2::Error> {
    let mut scores = Vec::new();
    diff.print(DiffFormat::Raw, |delta, _, line| {
        if delta.status() != Delta::Copied {
            return true;
        }
        let index = delta
            .new_file()
            .path()
            .and_then(|p| p.to_str())
            .and_then(|p| p.strip_prefix('t'))
            .and_then(|i| i.parse::<usize>().ok());
        if let (Some(i), Some(score)) = (index, raw_similarity(line.content())) {
            scores.push((i, score));
        }
        true
    })?;
    Ok(scores)
}

/// The similarity in a raw diff line: the digits after the status letter, e.g. `R072` → 72.
fn raw_similarity(line: &[u8]) -> Option<u16> {
    let head = line.split(|b| *b == b'\t').next()?;
    let status = head.rsplit(|b| *b == b' ').next()?;
    std::str::from_utf8(status.get(1..)?).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_similarity_reads_the_status_digits() {
        let line = b":100644 100644 abc... def... C072\tcited\tt5\n";
        assert_eq!(raw_similarity(line), Some(72));
        assert_eq!(
            raw_similarity(b":100644 100644 a b R100\tx\ty\n"),
            Some(100)
        );
        assert_eq!(raw_similarity(b":100644 100644 a b M\tx\n"), None);
    }
}
