//! The purges the record holds, as `verify` shows them (spec/purge.md, "What verify and recall
//! show"): one `purged` line each, information and never a failure. The rewrite a purge made is
//! not a finding because the purge carried the witness log and the reflog through it; any other
//! rewrite still is.

use super::finding::{Finding, Kind};
use crate::objectid::ObjectId;
use crate::records::{paths, purge};
use crate::store::{Store, StoreError};

/// One `purged` finding per purge of the ledger at `tip`.
pub fn check(store: &Store, tip: ObjectId) -> Result<Vec<Finding>, StoreError> {
    let tree = store.tree_of(tip)?;
    let Some(bytes) = store.trees()?.blob_at(tree, paths::PURGES)? else {
        return Ok(vec![]);
    };
    Ok(purge::read(&bytes)
        .into_iter()
        .map(|p| {
            let on = p.time.get(..10).unwrap_or("");
            let mut f = Finding::new(
                Kind::Purged,
                &p.purge,
                &p.line,
                format!(
                    "entry {} ({}) was purged on {on}: {}; its line is in no commit of the record",
                    p.purge,
                    p.day,
                    crate::records::text::field_safe(&p.reason)
                ),
            );
            f.entry = Some(p.purge);
            f.day = Some(p.day);
            f
        })
        .collect())
}
