//! Writing a retraction: a journal record, one line appended to today's day file, then a commit,
//! the sequence a capture follows (DESIGN §2.7), so a retraction is never lost and never
//! rewrites a byte. The caller holds the capture lock and has checked that the entry is in the
//! record and not retracted yet.

use super::append::append_line;
use super::{Store, StoreError};
use crate::clock::Instant;
use crate::fsx::{Dir, FsError};
use crate::journal::{Journal, PendingAppend, RecordKind};
use crate::records::retraction::{self, Retraction};
use crate::records::{dayfile, paths};
use git2::Oid;

/// What a retraction did.
#[derive(Debug)]
pub struct Retracted {
    pub retraction: Retraction,
    /// The day file it was appended to.
    pub day: String,
    /// The record commit, when one was made.
    pub commit: Option<Oid>,
    /// Why the line is pending instead of committed.
    pub pending: Option<String>,
    /// Record files whose working copy was edited after commit.
    pub diverged: Vec<String>,
}

impl Store {
    /// Appends and commits a retraction of `entry_id` for `reason` (one inert line). The
    /// caller holds the capture lock.
    pub fn retract(
        &self,
        entry_id: &str,
        reason: &str,
        now: Instant,
    ) -> Result<Retracted, StoreError> {
        self.ensure_ref(now)?;
        let journal = Journal::open(self.state_dir())?;
        let sessions = Dir::open(self.root())?
            .open_dir(paths::SESSIONS_DIR, true)?
            .ok_or_else(|| FsError::WrongKind(self.root().join(paths::SESSIONS_DIR)))?;
        let day = now.day();
        // Once sync is set up, this vault appends only to its own day files (spec/sync.md).
        let writer = crate::machine::read(self.state_dir());
        let file = paths::day_file_name(&day, writer.as_deref());
        let r = Retraction {
            id: crate::records::ids::unique(
                &crate::records::ids::base(now, writer.as_deref(), None),
                &sessions.read(&file).ok().flatten().unwrap_or_default(),
            ),
            retracts: entry_id.to_string(),
            time: now.iso(),
            reason: reason.to_string(),
            extra: Default::default(),
        };
        let rec = PendingAppend {
            retracts: Some(entry_id.to_string()),
            ..PendingAppend::new(
                RecordKind::Retract,
                &format!("{}/{file}", paths::SESSIONS_DIR),
                &day,
                &r.id,
            )
        };
        let line = retraction::render(&r);
        append_line(
            &sessions,
            &file,
            &dayfile::header(&day),
            &line,
            Some(&journal),
            rec,
        )?;
        let mut out = Retracted {
            retraction: r,
            day,
            commit: None,
            pending: None,
            diverged: vec![],
        };
        match self.commit_pending(&journal, now, false) {
            Ok(done) => {
                out.commit = done.commit;
                out.diverged = done.diverged;
            }
            Err(e) => out.pending = Some(e.to_string()),
        }
        Ok(out)
    }
}
