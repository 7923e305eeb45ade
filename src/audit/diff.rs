//! `git rutter diff`: the working tree's record files against `refs/rutter/records`, as a
//! unified diff: every record file that differs from the tip, then each one the tip does not
//! have yet (as a new file). Lines only added at the end are pending; anything else is an edit
//! `verify` reports (its working-tree check, [`super::worktree`]).

use crate::store::{Store, StoreError};
use std::collections::HashSet;

/// The unified diff of the record files against the tip (empty when they match, or when there
/// are none): without a record ref yet, every record file is new.
pub fn record_diff(store: &Store) -> Result<String, StoreError> {
    let mut out = String::new();
    let committed = match store.tip()? {
        Some(tip) => store.record_files(tip)?,
        None => Vec::new(),
    };
    for (path, blob) in &committed {
        let before = store.blob(*blob)?;
        let after = store.working(path).unwrap_or_default();
        out.push_str(&unified(&before, &after, &format!("a/{path}"), path));
    }
    let known: HashSet<&str> = committed.iter().map(|(p, _)| p.as_str()).collect();
    for path in store.uncommitted_record_files(&known) {
        let after = store.working(&path).unwrap_or_default();
        out.push_str(&unified(&[], &after, "/dev/null", &path));
    }
    Ok(out)
}

/// The unified diff of two versions of `path` (empty when they are equal).
fn unified(before: &[u8], after: &[u8], old_name: &str, path: &str) -> String {
    if before == after {
        return String::new();
    }
    crate::records::text::unified_diff(before, after, 3, (old_name, &format!("b/{path}")))
}
