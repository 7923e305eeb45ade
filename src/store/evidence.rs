//! The git lookups behind the evidence for where a dead reference went (`recall::renames`): the
//! kept copy of the cited bytes in the record ref, the blob a path held in HEAD's history with a
//! given sha256 (for `@1` refs), and HEAD's id for the candidate cache's key.

use super::oid::{ToGit, ToId};
use super::{tree::Trees, Store, StoreError};
use crate::objectid::ObjectId;
use std::collections::HashSet;

impl Store {
    /// The HEAD commit id, if there is one (part of the candidate cache key).
    pub(crate) fn head_id(&self) -> Option<String> {
        self.repo.head().ok()?.target().map(|o| o.to_string())
    }

    /// The kept copy `cited/<aa>/<sha256>` in the record ref, if any.
    pub(crate) fn cited_copy(&self, sha256: &str) -> Result<Option<ObjectId>, StoreError> {
        let Some(path) = crate::records::paths::cited_path(sha256) else {
            return Ok(None);
        };
        let Some(tip) = super::records_tip(&self.repo)? else {
            return Ok(None);
        };
        let tree = self.repo.find_commit(tip.to_git())?.tree_id();
        Ok(match Trees::new(&self.repo)?.entry(tree.to_id(), &path)? {
            Some((oid, false)) => Some(oid),
            _ => None,
        })
    }

    /// The blob that stood at `path` in HEAD's first-parent history (its newest `max` commits)
    /// with this sha256. No HEAD (an unborn branch) is none; any other git error is an error.
    pub(crate) fn blob_by_sha256(
        &self,
        path: &str,
        sha256: &str,
        max: usize,
    ) -> Result<Option<ObjectId>, StoreError> {
        let mut walk = self.repo.revwalk()?;
        match walk.push_head() {
            Ok(()) => {}
            Err(e)
                if matches!(
                    e.code(),
                    git2::ErrorCode::UnbornBranch | git2::ErrorCode::NotFound
                ) =>
            {
                return Ok(None)
            }
            Err(e) => return Err(e.into()),
        }
        walk.simplify_first_parent()?;
        let mut trees = Trees::new(&self.repo)?;
        let mut seen = HashSet::new();
        for oid in walk.take(max) {
            let tree = self.repo.find_commit(oid?)?.tree_id();
            let Some(blob) = trees.note_entry(tree.to_id(), path)? else {
                continue;
            };
            if !seen.insert(blob) {
                continue;
            }
            let content = self.repo.find_blob(blob.to_git())?;
            if crate::records::fingerprint::sha256_ref(content.content()) == sha256 {
                return Ok(Some(blob));
            }
        }
        Ok(None)
    }
}
