//! A clean start on a clone (DESIGN §3 `init`): a clone does not bring `refs/rutter/records`
//! along, so `init` fetches it from the remote when the remote has it, checks its whole history
//! with the audit's rules (a remote is input), and starts the ref's reflog and the tip witness
//! log at the tip the clone begins from, so `verify` has evidence from then on and a fresh clone
//! verifies clean.

use crate::audit::intake::{self, IntakeError, Refusal};
use crate::objectid::ObjectId;
use crate::recorder::Recorder;
use crate::store::clone::CloneFetch;
use crate::store::StoreError;

fn refusal(rule: String) -> Refusal {
    Refusal {
        commit: None,
        path: None,
        kind: None,
        rule,
    }
}

/// How a clone was started.
#[derive(Debug, Default, Clone)]
pub struct CloneStart {
    /// `(remote, tip)` when the records were fetched.
    pub fetched: Option<(String, ObjectId)>,
    /// Why they could not be fetched, when the remote could not be asked.
    pub problem: Option<String>,
    /// The reflog and witness log were started at this tip.
    pub seeded: Option<ObjectId>,
    /// Why the starting tip could not be witnessed in `.git/rutter/tips`, when it could not.
    pub unwitnessed: Option<String>,
    /// The remote's records were refused (`(remote, tip, why)`): no ref was made.
    pub refused: Option<(String, Option<ObjectId>, crate::audit::intake::Refusal)>,
}

/// Fetches `refs/rutter/records` from the clone's remote and creates the local ref there, when
/// the local ref is missing, the remote has one, and its history passes the audit's rules,
/// under `recorder`'s lock.
pub(crate) fn fetch_records_if_missing(recorder: &Recorder<'_>) -> Result<CloneStart, StoreError> {
    let store = recorder.store()?;
    let mut start = CloneStart::default();
    if store.tip()?.is_some() {
        return Ok(start);
    }
    let (remote, tip) = match store.fetch_clone_records()? {
        CloneFetch::NoRemote | CloneFetch::NotThere => return Ok(start),
        CloneFetch::Problem(why) => {
            start.problem = Some(why);
            return Ok(start);
        }
        CloneFetch::RefusedByGit(remote, said) => {
            let rule =
                format!("git's own object checks (fetch.fsckObjects) refused what it sent: {said}");
            start.refused = Some((remote, None, refusal(rule)));
            return Ok(start);
        }
        CloneFetch::Fetched(remote, tip) => (remote, tip),
    };
    // What the remote holds is input: the clone starts from it only when every commit passes
    // the audit's rules (spec/ref-layout.md, "`init`").
    match intake::check_incoming(store, tip, None) {
        Ok(_) => {}
        Err(IntakeError::Refused(why)) => {
            start.refused = Some((remote, Some(tip), why));
            return Ok(start);
        }
        Err(IntakeError::Store(e)) => return Err(e),
    }
    start.unwitnessed = recorder.start_ref_at(&remote, tip)?;
    start.fetched = Some((remote, tip));
    start.seeded = Some(tip);
    Ok(start)
}
