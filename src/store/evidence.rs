//! Git's evidence for where a dead reference went, as the identity pass consumes it: finds the
//! cited blob (recorded, kept in `cited/`, or looked up by sha256 in history for `@1` refs) and
//! asks [`super::renames`] to follow it.

use super::oid::{ToGit, ToId};
use super::renames::{self, Limits};
use super::{tree::Trees, Store};
use crate::objectid::ObjectId;
use std::collections::HashSet;

/// Commits examined when looking for an `@1` ref's blob by its sha256.
const MAX_BLOB_SEARCH: usize = 2000;

impl Store {
    /// `(path, evidence)` candidates for the dead ref `path` cited with `sha256` (and, for `@2`
    /// entries, git blob id `blob`). A git error (an object that cannot be read) is an error, so
    /// the caller never caches it as "no candidates".
    pub(crate) fn git_candidates(
        &self,
        path: &str,
        blob: Option<&str>,
        sha256: &str,
    ) -> Result<Vec<(String, String)>, super::StoreError> {
        // A git error is an error (never cached as "no candidates"); only what is not there is
        // `None`.
        let cited_copy = self.cited_copy(sha256)?;
        let known = blob.and_then(|b| ObjectId::from_hex(b).ok());
        let blob = match known {
            Some(b) => Some(b),
            None => self.blob_by_sha256(path, sha256)?,
        };
        let blob = blob.or(cited_copy).unwrap_or(ObjectId::ZERO);
        let found =
            renames::rename_candidates(&self.repo, path, blob, cited_copy, Limits::default())?;
        Ok(found
            .into_iter()
            .map(|c| (c.path, c.evidence.describe()))
            .collect())
    }

    /// The HEAD commit id, if there is one (part of the candidate cache key).
    pub(crate) fn head_id(&self) -> Option<String> {
        self.repo.head().ok()?.target().map(|o| o.to_string())
    }

    /// The kept copy `cited/<aa>/<sha256>` in the record ref, if any.
    fn cited_copy(&self, sha256: &str) -> Result<Option<ObjectId>, git2::Error> {
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

    /// The blob that stood at `path` in HEAD's first-parent history with this sha256. No HEAD
    /// (an unborn branch) is none; any other git error is an error.
    fn blob_by_sha256(&self, path: &str, sha256: &str) -> Result<Option<ObjectId>, git2::Error> {
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
            Err(e) => return Err(e),
        }
        walk.simplify_first_parent()?;
        let mut trees = Trees::new(&self.repo)?;
        let mut seen = HashSet::new();
        for oid in walk.take(MAX_BLOB_SEARCH) {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The review's §b 3: a history that cannot be read is an error, not "no candidates".
    #[test]
    fn an_unreadable_history_is_an_error_not_no_candidates() {
        let t = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(t.path()).unwrap();
        std::fs::write(t.path().join("a.md"), "alpha\n").unwrap();
        let mut index = repo.index().unwrap();
        index.add_path(std::path::Path::new("a.md")).unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::now("t", "t@t").unwrap();
        repo.commit(Some("HEAD"), &sig, &sig, "notes", &tree, &[])
            .unwrap();
        let v = crate::vault::open(t.path(), crate::vault::VaultSource::Flag).unwrap();
        let store = Store::open(&v).unwrap();
        let sha = crate::records::fingerprint::sha256_ref(b"alpha\n");
        assert!(store.git_candidates("a.md", None, &sha).is_ok());
        // The tree of HEAD's commit is gone from the object database.
        let hex = tree.id().to_string();
        std::fs::remove_file(
            t.path()
                .join(".git/objects")
                .join(&hex[..2])
                .join(&hex[2..]),
        )
        .unwrap();
        let store = Store::open(&v).unwrap();
        assert!(store.git_candidates("a.md", None, &sha).is_err());
    }
}
