//! The writes besides appending a line: creating or adopting the ref (`init`), starting its
//! reflog and its evidence (`init`), starting it at a clone's remote records, moving it (sync's
//! fast-forward and merge), a seal commit, and moving journal records along with a line sync
//! moved. Each is a [`Recorder`] method: the session holds the capture lock.

use super::Recorder;
use crate::clock::Instant;
use crate::objectid::ObjectId;
use crate::store::adopt::Adoption;
use crate::store::StoreError;

impl Recorder<'_> {
    /// Creates the record ref when it is missing, adopting the working record files.
    pub(crate) fn ensure_ref(&self, now: Instant) -> Result<Adoption, StoreError> {
        self.store()?.ensure_ref(now)
    }

    /// [`Recorder::ensure_ref`] for `init`, handing `each` every file the adoption reads (its
    /// path and bytes) as it is read.
    pub(crate) fn adopt(
        &self,
        now: Instant,
        each: &mut dyn FnMut(&str, Vec<u8>),
    ) -> Result<Adoption, StoreError> {
        self.store()?.ensure_ref_seeing(now, each)
    }

    /// Turns on the record ref's reflog (creating it) and tells gc never to expire it.
    pub(crate) fn configure_reflog(&self) -> Result<(), StoreError> {
        self.store()?.configure_reflog()
    }

    /// Starts the record ref's reflog and the witness log at its tip when this machine has
    /// neither (a ref fetched by hand): the tip, and why it could not be witnessed when it could
    /// not; `None` when there is no ref or the machine has evidence already.
    pub(crate) fn seed_evidence_if_fresh(
        &self,
    ) -> Result<Option<(ObjectId, Option<String>)>, StoreError> {
        self.store()?.seed_evidence_if_fresh()
    }

    /// Starts the missing record ref at a clone's remote records `tip` (fetched from `remote`
    /// and checked); why the tip could not be witnessed, when it could not.
    pub(crate) fn start_ref_at(
        &self,
        remote: &str,
        tip: ObjectId,
    ) -> Result<Option<String>, StoreError> {
        self.store()?.start_ref_at(remote, tip)
    }

    /// Moves the record ref from `from` to `to` (compare-and-swap), with `message` in its
    /// reflog.
    pub(crate) fn advance_ref(
        &self,
        from: ObjectId,
        to: ObjectId,
        message: &str,
    ) -> Result<(), StoreError> {
        self.store()?.advance_ref(from, to, message)
    }

    /// Signs the history with an empty seal commit when its tip is not signed yet.
    pub(crate) fn seal(
        &self,
        now: Instant,
    ) -> Result<Option<(ObjectId, Option<String>)>, StoreError> {
        self.store()?.seal(now)
    }

    /// Moves the journal records of `path` that lay after the old committed bytes (`from`) by
    /// `shift`, so `git rutter commit` finds each line where sync's checkout put it. A record
    /// that also wrote the header of a new file keeps only what it wrote after it. Best effort:
    /// a record whose offset is stale is still committed, from the journal, as a diverged file.
    pub(crate) fn shift_pending(&self, path: &str, from: u64, shift: i64) {
        let Ok(Some(journal)) = self.journal() else {
            return;
        };
        let Ok((records, _)) = journal.list() else {
            return;
        };
        for (name, mut rec) in records {
            let end = rec.offset + rec.bytes.len() as u64;
            if rec.path != path || end <= from || shift == 0 {
                continue;
            }
            if rec.offset < from {
                let cut = (from - rec.offset) as usize;
                let Some(rest) = rec.bytes.get(cut..) else {
                    continue;
                };
                rec.bytes = rest.to_string();
                rec.offset = from;
                // What is left of a header is no append's framing, and the journal refuses a
                // record whose bytes are not its line as appended (spec/ref-layout.md): keep
                // the line alone, at its own offset.
                let plain = format!("{}\n", rec.line);
                if rec.bytes != plain && rec.bytes.ends_with(&plain) {
                    rec.offset += (rec.bytes.len() - plain.len()) as u64;
                    rec.bytes = plain;
                }
            }
            rec.offset = (rec.offset as i64 + shift).max(0) as u64;
            let _ = journal.rewrite(&name, &rec);
        }
    }
}
