//! Appending one line to a record file: journal record first (in a git vault), then a single
//! `O_APPEND` write, through an [`Appender`] a session hands out. The session commits
//! afterwards ([`super::Recorder::commit`]); a capture that timed out on the capture lock
//! appends without it (spec/capture.md).
//!
//! Each step can fail on its own (a full disk, an immutable or read-only file), and each
//! failure is reported with what was done, so the caller can put the line somewhere durable
//! (spec/capture.md, "When things go wrong"). Every step has a fail point for tests
//! ([`crate::failpoint`]).

use crate::failpoint;
use crate::fsx::{Dir, FsError};
use crate::journal::{Journal, PendingAppend, RecordKind};
use crate::records::{paths, Entry};
use crate::store::Store;
use std::io::{Seek, Write};

/// A line that reached the record file.
#[derive(Debug)]
pub(crate) struct Appended {
    /// The file's length after the append.
    pub end: u64,
    /// The journal record of the append (offset, bytes and line filled in).
    pub rec: PendingAppend,
    /// Why the journal record could not be written, when it could not: the line is in the file
    /// only, and the caller must commit it from `rec` or keep it elsewhere.
    pub unjournalled: Option<FsError>,
}

/// A line that did not reach the record file.
#[derive(Debug)]
pub(crate) struct NotAppended {
    /// Why the file could not take it.
    pub error: FsError,
    /// The journal holds the line: the next capture or `git rutter commit` appends it.
    pub journalled: bool,
}

/// Whether an append goes on when its journal record cannot be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Journalling {
    /// No journal record, no append (commands run by hand report the error).
    Required,
    /// The line is appended all the same (a capture: the file can take the line, so it must),
    /// and a file that cannot take it after the record was written leaves the line in the
    /// journal. Under the capture lock, a torn write of this append is cut back off.
    BestEffort,
}

/// What appends a line and journals it ([`super::Recorder::appender`], or a capture's that
/// missed the lock, [`super::Capture::appender`]): the journal, when there is one, whether
/// the capture lock is held, and under it the store, whose committed version of a record file
/// missing from the working tree is written back before the line (spec/capture.md, "A day file
/// deleted from the working tree").
#[derive(Clone, Copy)]
pub(crate) struct Appender<'a> {
    journal: Option<&'a Journal>,
    locked: bool,
    store: Option<&'a Store>,
}

impl<'a> Appender<'a> {
    pub(super) fn new(
        journal: Option<&'a Journal>,
        locked: bool,
        store: Option<&'a Store>,
    ) -> Appender<'a> {
        Appender {
            journal,
            locked,
            store,
        }
    }

    /// Whether the capture lock is held.
    pub(crate) fn locked(&self) -> bool {
        self.locked
    }

    /// Whether there is a journal to write (a git vault whose journal could be opened).
    pub(crate) fn journalled(&self) -> bool {
        self.journal.is_some()
    }

    /// Appends `line` to `dir/name` ([`append_line`]).
    pub(crate) fn append(
        &self,
        dir: &Dir,
        name: &str,
        header: &str,
        line: &str,
        rec: PendingAppend,
        mode: Journalling,
    ) -> Result<Appended, NotAppended> {
        let torn = (mode == Journalling::BestEffort).then_some(self.locked);
        let first = First {
            header,
            store: self.store.filter(|_| self.locked),
        };
        append_line(dir, name, first, line, self.journal, rec, torn)
    }

    /// Journals a line without appending it (it is in its file already, or the file cannot
    /// take it); `None` without a journal.
    pub(crate) fn journal_line(&self, rec: &PendingAppend) -> Option<Result<(), FsError>> {
        self.journal.map(|j| add(j, rec))
    }

    /// `fsync`s the journal's records ([`Journal::sync`]); `None` without a journal.
    pub(crate) fn flush(&self) -> Option<Result<(), FsError>> {
        self.journal.map(Journal::sync)
    }
}

/// What a record file missing from the working tree is first published holding: its committed
/// version when `store` (the capture lock held) has one at the tip, else `header` alone.
struct First<'s> {
    header: &'s str,
    store: Option<&'s Store>,
}

impl First<'_> {
    /// The bytes for the record file `path` (vault-relative).
    fn bytes(&self, path: &str) -> Vec<u8> {
        let committed = self.store.and_then(|s| s.committed(path).ok().flatten());
        match committed {
            Some(c) if !c.is_empty() => c,
            _ => self.header.as_bytes().to_vec(),
        }
    }
}

/// Appends `line` to `dir/name`. A missing file is first published holding its first bytes
/// ([`First`]: whole, so two captures that both find it missing never both write them); a newline is
/// written first when the file lacks a final one. `rec` describes the append for the journal
/// (its `offset`, `bytes` and `line` are filled in here, the offset corrected after the write
/// when another process appended in between). What each step did, or did not, is in
/// [`Appended`] and [`NotAppended`]; `best_effort` says the append goes on without its journal
/// record (`Some`), and whether the capture lock is held (`Some(true)`: a torn write is cut).
fn append_line(
    dir: &Dir,
    name: &str,
    first: First<'_>,
    line: &str,
    journal: Option<&Journal>,
    mut rec: PendingAppend,
    best_effort: Option<bool>,
) -> Result<Appended, NotAppended> {
    rec.line = line.to_string();
    let header = first.header;
    let mut target = match open_target(dir, name, || first.bytes(&rec.path)) {
        Ok(t) => t,
        Err(error) => {
            // The file cannot be opened: the journal is the line's next place (a refused,
            // symlinked or foreign file is the caller's to write aside instead).
            rec.offset = 0;
            rec.bytes = crate::records::append_bytes(0, true, header, line);
            let journalled = best_effort.is_some()
                && !refused(&error)
                && journal.is_some_and(|j| add(j, &rec).is_ok());
            return Err(NotAppended { error, journalled });
        }
    };
    let bytes = crate::records::append_bytes(target.len, target.ends_with_newline, header, line);
    rec.offset = target.len;
    rec.bytes = bytes.clone();
    let journalled = match journal.map(|j| add(j, &rec)) {
        None => Ok(false),
        Some(Ok(())) => Ok(true),
        Some(Err(e)) => Err(e),
    };
    let unjournalled = match (journalled, best_effort) {
        (Ok(_), _) => None,
        (Err(error), None) => {
            return Err(NotAppended {
                error,
                journalled: false,
            })
        }
        (Err(e), Some(_)) => Some(e),
    };
    let journalled = journal.is_some() && unjournalled.is_none();
    if let Err(e) = write(&mut target, bytes.as_bytes()) {
        if best_effort == Some(true) {
            cut_torn(&target, bytes.as_bytes());
        }
        return Err(NotAppended {
            error: FsError::Io {
                path: target.path.clone(),
                source: e,
            },
            journalled,
        });
    }
    // O_APPEND wrote at the end as it was then: later than `len` if another capture (without
    // the lock) appended since the open.
    let io = |e| FsError::Io {
        path: target.path.clone(),
        source: e,
    };
    let end = target.file.stream_position().map_err(io);
    let end = match end {
        Ok(end) => end,
        Err(_) => target.len + bytes.len() as u64,
    };
    let at = end - bytes.len() as u64;
    if at != rec.offset {
        rec.offset = at;
        if let (Some(j), true) = (journal, journalled) {
            // The record still names the old offset if this fails; commit finds the line by
            // its bytes (spec/ref-layout.md, "The pending journal").
            let _ = j.add(&rec);
        }
    }
    Ok(Appended {
        end,
        rec,
        unjournalled,
    })
}

/// The journal record of a captured entry `e` for the day file `file` (offset and bytes are
/// filled in by the append).
pub(crate) fn entry_record(e: &Entry, cited: &[(String, String)], file: &str) -> PendingAppend {
    let path = format!("{}/{file}", paths::SESSIONS_DIR);
    let day = paths::split_day_file_name(file).map_or(file, |(day, _)| day);
    PendingAppend {
        session_id: e.session_id.clone(),
        client: e.client.clone(),
        project: e.project().map(str::to_string),
        cited: cited.to_vec(),
        ..PendingAppend::new(RecordKind::Capture, &path, day, &e.id)
    }
}

/// Appends `line` to `dir/name` (publishing `header` first when the file is new) and `fsync`s
/// the file and the folder: the aside carriers, which have no journal behind them.
pub fn append_durable(dir: &Dir, name: &str, header: &str, line: &str) -> Result<(), FsError> {
    let mut target = open_target(dir, name, || header.as_bytes().to_vec())?;
    let bytes = crate::records::append_bytes(target.len, target.ends_with_newline, header, line);
    let io = |e| FsError::Io {
        path: target.path.clone(),
        source: e,
    };
    target.file.write_all(bytes.as_bytes()).map_err(io)?;
    target.file.sync_all().map_err(io)?;
    dir.sync()
}

/// Opens the record file for appending, publishing its `first` bytes when it is new.
fn open_target(
    dir: &Dir,
    name: &str,
    first: impl FnOnce() -> Vec<u8>,
) -> Result<crate::fsx::AppendFile, FsError> {
    let io = |e| FsError::Io {
        path: dir.path().join(name),
        source: e,
    };
    if let Some(t) = dir.open_append_existing(name)? {
        return Ok(t);
    }
    let first = first();
    if first.is_empty() {
        return dir.open_append(name);
    }
    failpoint::check("day-header").map_err(io)?;
    dir.publish_new(name, &first)?;
    dir.open_append(name)
}

/// A symlink, a file of another kind or a hard link: the record path is refused, not failing.
pub(crate) fn refused(e: &FsError) -> bool {
    matches!(
        e,
        FsError::Symlink(_) | FsError::WrongKind(_) | FsError::HardLink { .. }
    )
}

/// Writes `rec` to the journal (fail point `journal-write`).
fn add(journal: &Journal, rec: &PendingAppend) -> Result<(), FsError> {
    failpoint::check("journal-write").map_err(|e| FsError::Io {
        path: journal.path().to_path_buf(),
        source: e,
    })?;
    journal.add(rec).map(|_| ())
}

/// The append itself: one `write_all` (fail points `day-append`, and `day-append-torn`, which
/// writes half the bytes first).
fn write(target: &mut crate::fsx::AppendFile, bytes: &[u8]) -> std::io::Result<()> {
    failpoint::check("day-append")?;
    if failpoint::active("day-append-torn") {
        target.file.write_all(&bytes[..bytes.len() / 2])?;
        return Err(failpoint::full("day-append-torn"));
    }
    target.file.write_all(bytes)
}

/// Cuts off what a failed append wrote of `bytes` (a torn line), when the file ends with exactly
/// a prefix of them after its length at open: under the lock, no other capture appended since.
/// Those bytes were never a whole line, committed or journalled, so no record byte is rewritten.
fn cut_torn(target: &crate::fsx::AppendFile, bytes: &[u8]) {
    let Ok(meta) = target.file.metadata() else {
        return;
    };
    let written = meta.len().saturating_sub(target.len) as usize;
    if written == 0 || written > bytes.len() {
        return;
    }
    let mut tail = vec![0u8; written];
    let read = rustix::io::pread(&target.file, &mut tail, target.len);
    if read.is_ok_and(|n| n == written) && tail == bytes[..written] {
        let _ = target.file.set_len(target.len);
    }
}
