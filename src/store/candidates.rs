//! Git's evidence for where a dead reference went, as the identity pass consumes it: finds the
//! cited blob (recorded, kept in `cited/`, or looked up by sha256 in history for `@1` refs) and
//! asks [`super::history`] to follow it.

use super::history::{self, Limits};
use super::{tree::Trees, Store};
use git2::Oid;
use std::collections::HashSet;

/// Commits examined when looking for an `@1` ref's blob by its sha256.
const MAX_BLOB_SEARCH: usize = 2000;

impl Store {
    /// `(path, evidence)` candidates for the dead ref `path` cited with `sha256` (and, for `@2`
    /// entries, git blob id `blob`). Any git error yields no candidates.
    pub fn git_candidates(
        &self,
        path: &str,
        blob: Option<&str>,
        sha256: &str,
    ) -> Result<Vec<(String, String)>, super::StoreError> {
        let cited_copy = self.cited_copy(sha256);
        let known = blob.and_then(|b| Oid::from_str(b).ok());
        let blob = known
            .or_else(|| self.blob_by_sha256(path, sha256))
            .or(cited_copy)
            .unwrap_or(Oid::ZERO_SHA1);
        let found =
            history::rename_candidates(&self.repo, path, blob, cited_copy, Limits::default())?;
        Ok(found
            .into_iter()
            .map(|c| (c.path, c.evidence.describe()))
            .collect())
    }

    /// The HEAD commit id, if there is one (part of the candidate cache key).
    pub fn head_id(&self) -> Option<String> {
        self.repo.head().ok()?.target().map(|o| o.to_string())
    }

    /// The kept copy `cited/<aa>/<sha256>` in the record ref, if any.
    fn cited_copy(&self, sha256: &str) -> Option<Oid> {
        let path = super::cited_path(sha256)?;
        let tip = self.tip().ok()??;
        let tree = self.repo.find_commit(tip).ok()?.tree_id();
        let (oid, is_dir) = Trees::new(&self.repo).ok()?.entry(tree, &path).ok()??;
        (!is_dir).then_some(oid)
    }

    /// The blob that stood at `path` in HEAD's first-parent history with this sha256.
    fn blob_by_sha256(&self, path: &str, sha256: &str) -> Option<Oid> {
        let mut walk = self.repo.revwalk().ok()?;
        walk.push_head().ok()?;
        walk.simplify_first_parent().ok()?;
        let mut trees = Trees::new(&self.repo).ok()?;
        let mut seen = HashSet::new();
        for oid in walk.take(MAX_BLOB_SEARCH).flatten() {
            let tree = self.repo.find_commit(oid).ok()?.tree_id();
            let Some(blob) = trees.note_entry(tree, path).ok().flatten() else {
                continue;
            };
            if !seen.insert(blob) {
                continue;
            }
            let content = self.repo.find_blob(blob).ok()?;
            if crate::records::fingerprint::sha256_ref(content.content()) == sha256 {
                return Some(blob);
            }
        }
        None
    }
}
