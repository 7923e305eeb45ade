//! The one record-write path (DESIGN §2.7, §5): every write to the record and its working
//! files goes through a [`Recorder`], a session that holds the capture lock, the store and the
//! pending journal for as long as it lives. To add a writer, open one here and use (or add) a
//! method of it; a function that needs the lock held takes a `&Recorder`, so the compiler checks
//! that it is.
//!
//! - Opening: [`Recorder::lock`] (a git vault) or [`Recorder::lock_vault`] (one that may not be
//!   a git repository) wait for the lock ([`crate::lock::INTERACTIVE_WAIT`] for commands run by
//!   hand). A capture opens a [`Capture`] ([`crate::lock::DEFAULT_WAIT`]): the Recorder, or,
//!   when the lock could not be had in time, the journal alone, so the capture still lands its
//!   lines and leaves their commit to the next one. A reader that wants several things read
//!   together takes a [`Snapshot`] ([`Recorder::try_snapshot`]) and reads without the lock when
//!   it cannot be had.
//! - A line goes in one order: the ref exists (adopting the working record files when it did
//!   not), a journal record of the line, one `O_APPEND` write to the record file ([`append`]),
//!   then one commit of everything journalled ([`Recorder::commit`], [`commit`],
//!   [`compose`]), so a line is never in the working tree without a commit or a journal record
//!   that lets the next capture or `git rutter commit` commit it. [`Recorder::append_record`]
//!   is the whole sequence for whole lines (a retraction, [`retract`]; the identity ledger's
//!   bindings; verify's acknowledgements); a capture takes the steps one by one through its
//!   [`append::Appender`], after [`Recorder::replay_pending`] placed what earlier captures
//!   left in the journal or aside ([`replay`], [`aside`]).
//! - The other writes are Recorder methods too: a purge and the purges sync takes ([`purge`]),
//!   `init`'s adoption, a clone's first ref, sync's ref moves and the journal records its
//!   checkout moves, a seal ([`moves`]); `restore` ([`restore`]).
//!
//! Nothing outside this module takes the capture lock or writes the journal
//! (`tests/architecture.rs`).

pub(crate) mod append;
pub(crate) mod aside;
mod commit;
pub(crate) mod compose;
mod moves;
pub(crate) mod purge;
pub(crate) mod replay;
pub(crate) mod restore;
pub(crate) mod retract;
mod session;

pub(crate) use append::Journalling;
pub(crate) use commit::CommitOutcome;
pub(crate) use session::{Capture, Recorder};

use crate::clock::Instant;
use crate::fsx::FsError;
use crate::journal::{PendingAppend, RecordKind};
use crate::overlay::OverlayError;
use crate::records::{dayfile, ledger};
use crate::store::StoreError;
use append::Appender;

/// Why [`Recorder::append_record`] did not record its lines.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RecordError {
    /// Nothing was appended (the journal or the record file could not take the first line).
    #[error(transparent)]
    NotAppended(#[from] FsError),
    /// The record file's folder is refused (a symlink, or not a record path).
    #[error(transparent)]
    Refused(#[from] OverlayError),
    /// The ref could not be created before appending: nothing was appended.
    #[error(transparent)]
    NoRef(StoreError),
    /// The lines are appended and journalled, and the commit failed: the next capture or
    /// `git rutter commit` commits them.
    #[error("{0}")]
    NotCommitted(StoreError),
}

impl crate::hint::Hinted for RecordError {
    fn hint(&self) -> Option<String> {
        match self {
            RecordError::NoRef(e) | RecordError::NotCommitted(e) => e.hint(),
            RecordError::NotAppended(_) | RecordError::Refused(_) => None,
        }
    }
}

/// One line for [`Recorder::append_record`]: its text and the id its journal record names (an entry's,
/// a retraction's, a binding's id, or an acknowledgement's instant).
#[derive(Debug, Clone)]
pub(crate) struct RecordLine {
    pub text: String,
    pub id: String,
    /// The entry a retraction retracts.
    pub retracts: Option<String>,
}

/// The record file [`Recorder::append_record`] appends to: its kind, its vault-relative path (a day file,
/// the identity ledger or the acknowledgements) and the day its journal records name.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RecordFile<'a> {
    pub kind: RecordKind,
    pub path: &'a str,
    pub day: &'a str,
}

impl Recorder<'_> {
    /// Appends `lines` to the record file `file` and commits them, signed when `sign`. In a
    /// vault that is no git repository the lines are only appended.
    pub(crate) fn append_record(
        &self,
        file: RecordFile<'_>,
        lines: &[RecordLine],
        now: Instant,
        sign: bool,
    ) -> Result<CommitOutcome, RecordError> {
        if let Ok(s) = self.store() {
            s.ensure_ref(now).map_err(RecordError::NoRef)?;
        }
        let journal = self.journal()?;
        let appender = Appender::new(journal, true, self.store().ok());
        let (dir, name) = crate::overlay::folder(self.root(), file.path, true)?;
        let header = header(file.kind, file.day);
        for l in lines {
            let rec = PendingAppend {
                retracts: l.retracts.clone(),
                ..PendingAppend::new(file.kind, file.path, file.day, &l.id)
            };
            appender
                .append(&dir, name, &header, &l.text, rec, Journalling::Required)
                .map_err(|n| n.error)?;
        }
        match self.store() {
            Ok(_) => self
                .commit(&[], now, sign)
                .map_err(RecordError::NotCommitted),
            Err(_) => Ok(CommitOutcome::default()),
        }
    }
}

/// The bytes a new record file of `kind` starts with.
fn header(kind: RecordKind, day: &str) -> String {
    match kind {
        RecordKind::Capture | RecordKind::Retract => dayfile::header(day),
        RecordKind::Identity => ledger::header(),
        RecordKind::Ack => String::new(),
    }
}
