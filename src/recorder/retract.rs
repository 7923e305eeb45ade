//! Writing a retraction: a journal record, one line appended to today's day file, then a commit,
//! the sequence a capture follows (DESIGN §2.7), so a retraction is never lost and never
//! rewrites a byte. The caller has checked, under the session's lock, that the entry is in the
//! record and not retracted yet. It is one [`Recorder::append_record`].

use super::{RecordError, RecordFile, RecordLine, Recorder};
use crate::clock::Instant;
use crate::journal::RecordKind;
use crate::objectid::ObjectId;
use crate::records::paths;
use crate::records::retraction::{self, Retraction};
use crate::store::StoreError;

/// What a retraction did.
#[derive(Debug)]
pub(crate) struct Retracted {
    pub retraction: Retraction,
    /// The day file it was appended to.
    pub day: String,
    /// The record commit, when one was made.
    pub commit: Option<ObjectId>,
    /// Why the line is pending instead of committed.
    pub pending: Option<String>,
    /// Record files whose working copy was edited after commit.
    pub diverged: Vec<String>,
}

impl Recorder<'_> {
    /// Appends and commits a retraction of `entry_id` for `reason` (one inert line) to today's
    /// day file.
    pub(crate) fn retract(
        &self,
        entry_id: &str,
        reason: &str,
        now: Instant,
    ) -> Result<Retracted, StoreError> {
        retract(self, entry_id, reason, now)
    }
}

fn retract(
    rec: &Recorder<'_>,
    entry_id: &str,
    reason: &str,
    now: Instant,
) -> Result<Retracted, StoreError> {
    let store = rec.store()?;
    let day = now.day();
    // Once sync is set up, this vault appends only to its own day files (spec/sync.md).
    let writer = crate::machine::read(store.state_dir());
    let file = paths::day_file_name(&day, writer.as_deref());
    let path = format!("{}/{file}", paths::SESSIONS_DIR);
    let existing = crate::overlay::folder(store.root(), &path, false)
        .ok()
        .and_then(|(dir, name)| dir.read(name).ok().flatten())
        .unwrap_or_default();
    let r = Retraction {
        id: crate::records::ids::unique(
            &crate::records::ids::base(now, writer.as_deref(), None),
            &existing,
        ),
        retracts: entry_id.to_string(),
        time: now.iso(),
        reason: reason.to_string(),
        extra: Default::default(),
    };
    let line = RecordLine {
        text: retraction::render(&r),
        id: r.id.clone(),
        retracts: Some(entry_id.to_string()),
    };
    let mut out = Retracted {
        retraction: r,
        day: day.clone(),
        commit: None,
        pending: None,
        diverged: vec![],
    };
    let file = RecordFile {
        kind: RecordKind::Retract,
        path: &path,
        day: &day,
    };
    match rec.append_record(file, &[line], now, false) {
        Ok(done) => {
            out.commit = done.commit;
            out.diverged = done.diverged;
        }
        Err(RecordError::NotCommitted(e)) => out.pending = Some(crate::hint::one_line(&e)),
        Err(RecordError::NoRef(e)) => return Err(e),
        Err(RecordError::NotAppended(e)) => return Err(e.into()),
        Err(RecordError::Refused(e)) => return Err(e.into()),
    }
    Ok(out)
}
