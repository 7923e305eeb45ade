//! Git candidates for unresolved refs, cached in the index per `(path, blob)` while HEAD and
//! the note set stay the same, so a reindex on a long history does the git work once.

use crate::index::identity::{Candidate, DeadRef};
use crate::index::{Index, IndexError};
use crate::store::Store;
use crate::vault::Vault;

/// Looks up and caches git candidates during one identity pass.
pub(crate) struct GitCandidates<'i> {
    store: Option<Store>,
    index: &'i Index,
    state: String,
}

impl<'i> GitCandidates<'i> {
    /// Candidates come from the vault's repository; a non-git vault has none.
    pub fn new(vault: &Vault, index: &'i Index) -> Result<Self, IndexError> {
        crate::store::skip_read_verification();
        let store = Store::open(vault).ok();
        let head = store.as_ref().and_then(Store::head_id).unwrap_or_default();
        let state = format!("{head}/{}", index.notes_state()?);
        Ok(GitCandidates {
            store,
            index,
            state,
        })
    }

    /// The git candidates of one dead ref.
    pub fn for_ref(&mut self, d: &DeadRef) -> Result<Vec<Candidate>, IndexError> {
        let Some(store) = &self.store else {
            return Ok(vec![]);
        };
        let key = d.blob.clone().unwrap_or_else(|| d.hash.clone());
        if let Some(hit) = self
            .index
            .cached_git_candidates(&d.from, &key, &self.state)?
        {
            return Ok(hit);
        }
        // A git error is no answer: it is not cached as "no candidates", so the next pass asks
        // again.
        let Ok(found) = super::renames::git_candidates(store, &d.from, d.blob.as_deref(), &d.hash)
        else {
            return Ok(vec![]);
        };
        let found: Vec<Candidate> = found
            .into_iter()
            .map(|(path, evidence)| Candidate {
                path,
                evidence: Some(evidence),
            })
            .collect();
        self.index
            .cache_git_candidates(&d.from, &key, &self.state, &found)?;
        Ok(found)
    }
}
