//! The repository as a git hook sees it (`GIT_DIR`, and the `GIT_INDEX_FILE` that `git commit
//! -a` and `git commit PATH` set), with the narrow questions the hook checks ask of it: the
//! record ref's tip, the staged changes to committed record files, and the commit graph. What
//! a hook decides from the answers is `clients::guard`'s.

use super::oid::{ToGit, ToId};
use super::{records_tip, StoreError};
use crate::objectid::ObjectId;
use git2::{Delta, Repository};
use std::path::Path;

/// A staged change under `_librarian/` to a file the record ref holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StagedRecord {
    /// Its path in the working tree.
    pub path: String,
    /// Its bytes at the record ref's tip (found wherever the ref keeps day files).
    pub committed: Vec<u8>,
    /// Its staged bytes (empty when unreadable); `None` when the change deletes it.
    pub staged: Option<Vec<u8>>,
}

/// The repository git's environment names, opened as a hook runs.
pub(crate) struct HookRepo {
    repo: Repository,
}

impl HookRepo {
    /// Opens the repository git's environment names, honouring its `GIT_INDEX_FILE`.
    pub(crate) fn open_from_env() -> Result<HookRepo, StoreError> {
        Ok(HookRepo {
            repo: Repository::open_from_env()?,
        })
    }

    /// The tip of `refs/rutter/records`, if the ref exists.
    pub(crate) fn records_tip(&self) -> Result<Option<ObjectId>, StoreError> {
        Ok(records_tip(&self.repo)?)
    }

    /// The files under `_librarian/` the index changes against `HEAD` that the record ref's tip
    /// holds, in the diff's order (none without a record ref).
    pub(crate) fn staged_record_changes(&self) -> Result<Vec<StagedRecord>, StoreError> {
        let repo = &self.repo;
        let Some(tip) = records_tip(repo)? else {
            return Ok(Vec::new());
        };
        let records = repo.find_commit(tip.to_git())?.tree_id().to_id();
        let head = repo.head().ok().and_then(|h| h.peel_to_tree().ok());
        let index = repo.index()?;
        let mut opts = git2::DiffOptions::new();
        opts.pathspec(crate::records::paths::OVERLAY_DIR);
        let diff = repo.diff_tree_to_index(head.as_ref(), Some(&index), Some(&mut opts))?;
        let mut trees = super::tree::Trees::new(repo)?;
        let mut out = Vec::new();
        for delta in diff.deltas() {
            let gone = delta.status() == Delta::Deleted;
            let side = if gone {
                delta.old_file()
            } else {
                delta.new_file()
            };
            let Some(path) = side.path() else { continue };
            let path = path.to_string_lossy().into_owned();
            let Some(committed) = trees.blob_at(records, &path)? else {
                continue;
            };
            let staged = (!gone).then(|| {
                repo.find_blob(side.id())
                    .map(|b| b.content().to_vec())
                    .unwrap_or_default()
            });
            out.push(StagedRecord {
                path,
                committed,
                staged,
            });
        }
        Ok(out)
    }

    /// Whether `id` names a commit in the repository.
    pub(crate) fn is_commit(&self, id: ObjectId) -> bool {
        self.repo.find_commit(id.to_git()).is_ok()
    }

    /// Whether `commit` descends from `ancestor` (a commit is not its own descendant).
    pub(crate) fn descends(
        &self,
        commit: ObjectId,
        ancestor: ObjectId,
    ) -> Result<bool, StoreError> {
        Ok(self
            .repo
            .graph_descendant_of(commit.to_git(), ancestor.to_git())?)
    }

    /// The common git directory (shared by every worktree).
    pub(crate) fn common_dir(&self) -> &Path {
        self.repo.commondir()
    }
}
