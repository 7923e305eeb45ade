//! The private index `.git/rutter/records.index`: the record files as the tip holds them, each at
//! its path in the working tree, so that plain `git diff` shows what `git rutter diff` shows
//! (`GIT_INDEX_FILE=.git/rutter/records.index git diff -- _librarian`). The diff itself is the
//! audit's (`audit::diff`).

use super::oid::ToGit;
use super::{Store, StoreError};
use std::collections::HashSet;

/// File name of the private index under `.git/rutter/`.
pub(crate) const PRIVATE_INDEX: &str = "records.index";

impl Store {
    /// Writes the private index from the tip's tree (only `_librarian/` paths).
    pub fn write_private_index(&self) -> Result<std::path::PathBuf, StoreError> {
        // The state folder is opened without following a symlink and the old index removed
        // through it; libgit2 then writes the new one by path (a lock file and a rename, never
        // through a link at the final name).
        let dir = crate::fsx::Dir::open_private(self.worktree_state_dir())?;
        dir.remove(PRIVATE_INDEX)?;
        let path = dir.path().join(PRIVATE_INDEX);
        let mut index = git2::Index::open(&path)?;
        if let Some(tip) = self.tip()? {
            let tree = self.repo.find_commit(tip.to_git())?.tree()?;
            index.read_tree(&tree)?;
            // Only record files, each at its path in the working tree: a day file the ref keeps
            // in a year folder is staged at its path in the sessions folder, unless that path
            // holds one already (that one is the record file; spec/ref-layout.md).
            let stored: Vec<git2::IndexEntry> = index.iter().collect();
            let names: HashSet<Vec<u8>> = stored.iter().map(|e| e.path.clone()).collect();
            for e in stored {
                let path = String::from_utf8_lossy(&e.path).into_owned();
                let flat = crate::records::paths::from_year_path(&path);
                if e.path.starts_with(b"_librarian/") && flat.is_none() {
                    continue;
                }
                index.remove(std::path::Path::new(&path), 0)?;
                match flat {
                    Some(flat) if !names.contains(flat.as_bytes()) => {
                        index.add(&git2::IndexEntry {
                            path: flat.into_bytes(),
                            ..e
                        })?;
                    }
                    _ => {}
                }
            }
        }
        index.write()?;
        Ok(path)
    }
}
