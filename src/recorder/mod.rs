//! The one record-write path (DESIGN §2.7, §5). Every line git-rutter adds to the record goes
//! through here, in one order: the ref exists (adopting the working record files when it did
//! not), a journal record of the line, one `O_APPEND` write to the record file, then one commit
//! of everything journalled, so a line is never in the working tree without a commit or a
//! journal record that lets the next capture or `git rutter commit` commit it.
//!
//! [`append_record`] carries the whole protocol for writers of whole lines under the capture
//! lock: a retraction ([`retract`]), the identity ledger's bindings, verify's
//! acknowledgements. A capture, which must land its lines even when the lock, the journal or
//! the folder fails, takes the same steps one by one: [`open_journal`], [`append::append_line`]
//! with [`Journalling::BestEffort`], then [`commit`], as `git rutter commit` and `sync` replay
//! what is pending. Nothing outside this module opens the journal to write it or commits a
//! record (`tests/architecture.rs`).

pub(crate) mod append;
mod commit;
pub(crate) mod compose;
pub(crate) mod purge;
pub(crate) mod retract;

pub(crate) use append::Journalling;
pub(crate) use commit::{commit, CommitOutcome};

use crate::clock::Instant;
use crate::fsx::FsError;
use crate::journal::{Journal, PendingAppend, RecordKind};
use crate::overlay::OverlayError;
use crate::records::{dayfile, ledger};
use crate::store::{Store, StoreError};
use std::path::Path;

/// Why [`append_record`] did not record its lines.
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

/// One line for [`append_record`]: its text and the id its journal record names (an entry's,
/// a retraction's, a binding's id, or an acknowledgement's instant).
#[derive(Debug, Clone)]
pub(crate) struct RecordLine {
    pub text: String,
    pub id: String,
    /// The entry a retraction retracts.
    pub retracts: Option<String>,
}

/// The record file [`append_record`] appends to: its kind, its vault-relative path (a day file,
/// the identity ledger or the acknowledgements) and the day its journal records name.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RecordFile<'a> {
    pub kind: RecordKind,
    pub path: &'a str,
    pub day: &'a str,
}

/// Opens (creating) the pending journal of the state folder `state_dir`, refusing a symlinked
/// one: the only way a writer reaches it.
pub fn open_journal(state_dir: &Path) -> Result<Journal, FsError> {
    Journal::open(state_dir)
}

/// Appends `lines` to the record file `file` of the vault at `root` and commits them, signed
/// when `sign`. In a vault that is no git repository (`store` is `None`) the lines are only
/// appended. The caller holds the capture lock.
pub(crate) fn append_record(
    root: &Path,
    store: Option<&Store>,
    file: RecordFile<'_>,
    lines: &[RecordLine],
    now: Instant,
    sign: bool,
) -> Result<CommitOutcome, RecordError> {
    if let Some(s) = store {
        s.ensure_ref(now).map_err(RecordError::NoRef)?;
    }
    let journal = store.map(|s| open_journal(s.state_dir())).transpose()?;
    let (dir, name) = crate::overlay::folder(root, file.path, true)?;
    let header = header(file.kind, file.day);
    for l in lines {
        let rec = PendingAppend {
            retracts: l.retracts.clone(),
            ..PendingAppend::new(file.kind, file.path, file.day, &l.id)
        };
        let mode = Journalling::Required;
        append::append_line(&dir, name, &header, &l.text, journal.as_ref(), rec, mode)
            .map_err(|n| n.error)?;
    }
    match store {
        Some(s) => commit(s, journal.as_ref(), &[], now, sign).map_err(RecordError::NotCommitted),
        None => Ok(CommitOutcome::default()),
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
