//! Purges crossing machines (spec/purge.md, "Across machines"): the purges a remote's record
//! holds that this machine has not taken are checked against this machine's own copy of the
//! remote's old history and taken; this machine's purges the remote has not are applied to the
//! fetched history before it is merged, and the push then replaces the remote's history with a
//! lease on the tip fetched.

use super::{Refusal, SyncError, SyncReport};
use crate::lock;
use crate::objectid::ObjectId;
use crate::recorder::purge::{self as recorder, PurgeError};
use crate::recorder::Recorder;
use crate::records::purge::{self, Purge};
use crate::store::{Store, StoreError};

/// What the sync takes in and how it pushes, once the purges are settled.
pub(crate) struct Crossing {
    /// The remote's tip, rewritten by this machine's purges it lacks.
    pub theirs: ObjectId,
    /// The remote tip a push must replace (a lease on it), when this machine's purges rewrote
    /// what the remote holds.
    pub lease: Option<ObjectId>,
}

/// Settles the purges between the local record and the fetched tip `fetched`; `seen` is the
/// remote's tip as this machine last fetched it (its own copy of the remote's old history).
pub(crate) fn cross(
    store: &Store,
    remote: &str,
    seen: Option<ObjectId>,
    fetched: ObjectId,
    report: &mut SyncReport,
) -> Result<Crossing, SyncError> {
    let local = store.tip()?.ok_or(SyncError::NoRecords)?;
    let ours = recorder::recorded(store, local)?;
    let theirs = recorder::recorded(store, fetched)?;
    let new: Vec<Purge> = missing_from(&theirs, &ours);
    let mine: Vec<Purge> = missing_from(&ours, &theirs);
    let rewritten = match mine.is_empty() {
        true => fetched,
        false => rewrite(store, fetched, &mine)?,
    };
    if !new.is_empty() {
        if let Some(old) = seen.filter(|o| *o != fetched) {
            check(store, remote, old, fetched, rewritten, &new, &mine)?;
        }
        let session = Recorder::lock(store, lock::INTERACTIVE_WAIT)?;
        session.take_purges(&new).map_err(|e| match e {
            PurgeError::Store(e) => SyncError::Store(e),
            other => SyncError::Shared(other.to_string()),
        })?;
        report
            .purges_taken
            .extend(new.iter().map(|p| p.purge.clone()));
    }
    report
        .purges_sent
        .extend(mine.iter().map(|p| p.purge.clone()));
    Ok(Crossing {
        theirs: rewritten,
        lease: (!mine.is_empty()).then_some(fetched),
    })
}

/// The purges of `a` that `b` does not hold (by entry id).
fn missing_from(a: &[Purge], b: &[Purge]) -> Vec<Purge> {
    a.iter()
        .filter(|p| !b.iter().any(|q| q.purge == p.purge))
        .cloned()
        .collect()
}

/// `tip` rewritten by `purges`.
fn rewrite(store: &Store, tip: ObjectId, purges: &[Purge]) -> Result<ObjectId, StoreError> {
    let r = store.rewrite(&[tip], &purge::removal_of(purges), &purge::ids(purges))?;
    Ok(r.get(tip).unwrap_or(tip))
}

/// The remote's new history must hold this machine's copy of its old one (`old`) minus exactly
/// the lines the purges name: `old` rewritten by every purge either side made is the fetched
/// tip (rewritten by this machine's own) or one of its ancestors.
fn check(
    store: &Store,
    remote: &str,
    old: ObjectId,
    fetched: ObjectId,
    rewritten: ObjectId,
    new: &[Purge],
    mine: &[Purge],
) -> Result<(), SyncError> {
    let all: Vec<Purge> = new.iter().chain(mine).cloned().collect();
    let expected = rewrite(store, old, &all)?;
    if expected == rewritten || store.descends(rewritten, expected)? {
        return Ok(());
    }
    let ids: Vec<&str> = new.iter().map(|p| p.purge.as_str()).collect();
    Err(SyncError::Refused {
        remote: remote.to_string(),
        tip: Some(fetched),
        refusal: Box::new(Refusal {
            commit: Some(crate::shortid::short(&fetched)),
            path: None,
            kind: Some("history-rewrite".into()),
            rule: format!(
                "its record history is not this machine's copy of it ({}) minus exactly the lines its purges of {} name",
                crate::shortid::short(&old),
                ids.join(", ")
            ),
        }),
    })
}
