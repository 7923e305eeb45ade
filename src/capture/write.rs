//! The written part of a capture: a [`Capture`] session opened on the vault, then for each
//! entry of a turn a unique id, dedupe, journal and one appended line; then one commit for all
//! of them.
//!
//! Order matters for "a capture is never lost" (DESIGN §2.7): each entry's journal record is
//! written before its line is appended, and the records are removed only after the commit moved
//! the ref. When a step fails, the line still lands somewhere durable, in this order: its day
//! file, else the pending journal, else the aside folders ([`crate::recorder::aside`]); and
//! before its own entries, each capture that holds the lock replays earlier ones
//! ([`crate::recorder::Recorder::replay_pending`]).

use super::dedupe::DedupeCache;
use crate::clock::{self, Instant};
use crate::fsx::{Dir, FsError};
use crate::journal::{PendingAppend, Refused};
use crate::lock;
use crate::recorder::append::{entry_record, refused, Appender};
use crate::recorder::replay::{Dedupe, Earlier};
use crate::recorder::{Capture, Journalling};
use crate::records::{dayfile, ids, line, paths, Entry};
use crate::store::{Store, StoreError};
use crate::vault::Vault;
use std::path::PathBuf;

/// An entry ready to be written; `id` and `time` are set under the lock.
pub(crate) struct Draft {
    pub entry: Entry,
    /// `(canonical vault-relative target, sha256 ref)` of refs small enough to copy.
    pub cited: Vec<(String, String)>,
}

/// What happened to one draft.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Appended to the day file `day` as `entry_id`.
    Appended { day: String, entry_id: String },
    /// Already recorded for this session: nothing written.
    Duplicate,
    /// The day file could not take the line (`why`); the pending journal holds it until the
    /// next capture or `git rutter commit` appends and commits it.
    Journalled {
        day: String,
        entry_id: String,
        why: String,
    },
    /// Neither the record path nor the journal could take it (`why`): the entry went to `path`.
    Aside { path: PathBuf, why: String },
}

/// What happened to the drafts of one capture.
#[derive(Debug, Default)]
pub(crate) struct Written {
    /// One outcome per draft, in order; fewer when `failed` stopped the batch.
    pub outcomes: Vec<Outcome>,
    /// The record commit, when one was made.
    pub commit: Option<String>,
    /// Why the lines are pending instead of committed.
    pub pending: Option<String>,
    /// Record files whose working copy was edited after commit.
    pub diverged: Vec<String>,
    /// The error that stopped the batch after some drafts were handled (the later ones were
    /// not written).
    pub failed: Option<String>,
    /// Earlier captures this one completed, or found still waiting.
    pub earlier: Earlier,
    /// Journal files the commit refused (moved to `pending/rejected/`), with why.
    pub refused: Vec<Refused>,
    /// Where the pending journal is (for messages).
    pub journal: Option<PathBuf>,
    /// Why the pending journal could not be used, when it could not.
    pub journal_problem: Option<String>,
    /// Where entries appended but neither journalled nor committed were written aside.
    pub kept_aside: Vec<PathBuf>,
    /// Why the new tip could not be witnessed in the witness log, when it could not.
    pub unwitnessed: Option<String>,
    /// The record's store the capture opened, kept for what follows the capture (the auto
    /// sync's settings), so a hook opens the repository once.
    pub store: Option<Store>,
}

impl Written {
    /// How many drafts ended as `want` says.
    pub(crate) fn count(&self, want: impl Fn(&Outcome) -> bool) -> usize {
        self.outcomes.iter().filter(|o| want(o)).count()
    }
}

/// Why a draft could not be written anywhere.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WriteError {
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("the entry could not be written anywhere: {0}")]
    Nowhere(String),
}

/// Writes the drafts into the vault in order, under the capture lock when it can be had, and
/// commits them together. Entry `k` is stamped `k` milliseconds after the first, so the
/// entries of one turn keep their order in every view sorted by time.
pub fn write(vault: &Vault, drafts: Vec<Draft>) -> Result<Written, WriteError> {
    write_at(vault, drafts, None)
}

/// Serialises the captures of one process (the MCP server's `librarian-record` calls run on
/// several threads): they never race each other for the capture lock, and one that writes
/// without it (the lock timed out) is alone in its process, so `-p<pid>` makes its id unique.
static GATE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// [`write`] with the first entry stamped `pinned` (tests), else at the clock once the capture
/// lock is had or given up on.
fn write_at(
    vault: &Vault,
    drafts: Vec<Draft>,
    pinned: Option<Instant>,
) -> Result<Written, WriteError> {
    // A capture that panicked while holding the gate left nothing half-done that the next one
    // relies on (the journal and the lock file are its state): take the gate anyway.
    let _gate = GATE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    crate::store::skip_read_verification();
    let store = vault.git_dir.as_ref().map(|_| Store::open(vault));
    let open_store = store.as_ref().and_then(|s| s.as_ref().ok());
    // A journal that cannot be opened does not stop the capture: the day file still takes the
    // line, and the commit takes it from memory.
    let (session, journal_problem) = Capture::open(vault, open_store, lock::DEFAULT_WAIT);
    let first = pinned.unwrap_or_else(clock::now);
    let mut written = Written {
        journal_problem: journal_problem.map(|e| e.to_string()),
        journal: Some(vault.state_dir().join("pending")),
        ..Written::default()
    };
    let mut cache = CacheSlot::default();
    if let Some(recorder) = session.recorder() {
        if open_store.is_some() {
            if let Err(e) = recorder.ensure_ref(first) {
                written.pending = Some(crate::hint::one_line(&e));
            }
        }
        written.earlier = recorder.replay_pending(&mut cache.dedupe(vault));
    }
    let target = Target {
        vault,
        appender: session.appender(),
        writer: crate::machine::read(&vault.state_dir()),
    };
    let mut unjournalled = Vec::new();
    let mut last = first;
    for (k, draft) in drafts.into_iter().enumerate() {
        last = Instant(first.0 + k as i64);
        match append_entry(&target, &mut cache, last, draft, &mut unjournalled) {
            Ok(outcome) => written.outcomes.push(outcome),
            Err(e) if written.outcomes.is_empty() => return Err(e),
            Err(e) => {
                written.failed = Some(e.to_string());
                break;
            }
        }
    }
    cache.save();
    let appended = written.count(|o| matches!(o, Outcome::Appended { .. }));
    let mut extra: Vec<PendingAppend> = std::mem::take(&mut written.earlier.in_memory);
    extra.extend(unjournalled.iter().map(|(_, rec)| rec.clone()));
    if appended + written.earlier.placed > 0 || !extra.is_empty() {
        commit(&session, store.as_ref(), &extra, last, &mut written);
    }
    if written.commit.is_some() {
        written.earlier.finish();
    } else {
        keep_unjournalled(vault, unjournalled, &mut written);
        // Lines left in the journal are its to keep: make them survive a power loss, or say
        // they may not (docs/security.md, "Power loss").
        if let Some(Err(e)) = session.appender().flush() {
            written.journal_problem = Some(format!(
                "the pending journal could not be flushed to disk ({e}); a power loss now could lose these lines"
            ));
        }
    }
    // The session (and with it the capture lock) ends before the store is handed on.
    drop(session);
    written.store = store.and_then(Result::ok);
    Ok(written)
}

/// Lines that are in their day file but neither journalled nor committed are written aside
/// too, so the next capture or `git rutter commit` commits them.
fn keep_unjournalled(vault: &Vault, lines: Vec<(Entry, PendingAppend)>, w: &mut Written) {
    if vault.git_dir.is_none() {
        return;
    }
    for (entry, _) in lines {
        match crate::recorder::aside::write(vault, entry) {
            Ok(path) => w.kept_aside.push(path),
            Err(e) => w.failed = Some(format!(
                "an entry is in its day file but could not be journalled, committed or written aside ({e}); once the disk is fixed, `git rutter verify` shows it as a line with no journal record"
            )),
        }
    }
}

/// Where the entries of one capture go.
struct Target<'a> {
    vault: &'a Vault,
    /// Appends and journals the lines; whether the capture lock is held (so the dedupe cache
    /// may be refreshed and updated).
    appender: Appender<'a>,
    /// This vault's writer id once sync is set up: entries go to its own day files
    /// (`YYYY-MM-DD.<id>.md`, spec/sync.md "One writer per file").
    writer: Option<String>,
}

/// The dedupe cache of the day file the batch appends to, loaded once for the batch and saved
/// at its end (its keys are written as each entry lands, so a later entry of the same turn sees
/// the earlier ones).
#[derive(Default)]
pub(crate) struct CacheSlot {
    loaded: Option<(String, DedupeCache)>,
}

impl CacheSlot {
    /// The cache, up to date for `file`; a batch that crosses midnight loads it again.
    pub(crate) fn for_file(
        &mut self,
        vault: &Vault,
        locked: bool,
        sessions: Option<&Dir>,
        file: &str,
    ) -> &mut DedupeCache {
        if self.loaded.as_ref().is_some_and(|(f, _)| f != file) {
            self.save();
        }
        let (_, cache) = self.loaded.get_or_insert_with(|| {
            let state = vault.worktree_state_dir();
            let cache = DedupeCache::load(&state, sessions, file, locked);
            (file.to_string(), cache)
        });
        cache
    }

    /// What a replay of earlier captures asks whether a carried entry is recorded already
    /// ([`crate::recorder::Recorder::replay_pending`]); the capture lock is held.
    pub(crate) fn dedupe<'a>(&'a mut self, vault: &'a Vault) -> SlotDedupe<'a> {
        SlotDedupe { vault, slot: self }
    }

    /// Writes the watermarks (the cache writes nothing when it was loaded without the lock).
    pub(crate) fn save(&mut self) {
        if let Some((_, mut cache)) = self.loaded.take() {
            cache.save();
        }
    }
}

/// The dedupe a replay of earlier captures asks: a cache slot, under the lock
/// ([`CacheSlot::dedupe`]).
pub(crate) struct SlotDedupe<'a> {
    vault: &'a Vault,
    slot: &'a mut CacheSlot,
}

impl Dedupe for SlotDedupe<'_> {
    fn seen(&mut self, dir: &Dir, file: &str, entry: &Entry) -> bool {
        self.slot
            .for_file(self.vault, true, Some(dir), file)
            .seen(entry)
    }

    fn record(&mut self, dir: &Dir, file: &str, entry: &Entry, end: u64) {
        self.slot
            .for_file(self.vault, true, Some(dir), file)
            .record(entry, file, end);
    }

    fn save(&mut self) {
        self.slot.save();
    }
}

/// Stamps the entry, checks dedupe and appends it; when the day file cannot take it, the line
/// goes to the journal, else aside. An entry appended without a journal record is added to
/// `unjournalled`, for the commit to take from memory.
fn append_entry(
    target: &Target<'_>,
    cache: &mut CacheSlot,
    now: Instant,
    draft: Draft,
    unjournalled: &mut Vec<(Entry, PendingAppend)>,
) -> Result<Outcome, WriteError> {
    let vault = target.vault;
    let mut entry = draft.entry;
    let day = now.day();
    let file = paths::day_file_name(&day, target.writer.as_deref());
    let sessions = open_sessions(vault);
    let locked = target.appender.locked();
    let who = (target.writer.as_deref(), locked);
    stamp(&mut entry, now, sessions.as_ref().ok(), &file, who);
    let cache = cache.for_file(vault, locked, sessions.as_ref().ok(), &file);
    if cache.seen(&entry) {
        return Ok(Outcome::Duplicate);
    }
    let rec = entry_record(&entry, &draft.cited, &file);
    let line = line::render(&entry);
    let header = dayfile::header(&day);
    let sessions = match sessions {
        Ok(d) => d,
        Err(e) => return carry(target, entry, rec, &line, &header, e),
    };
    let mode = Journalling::BestEffort;
    match (target.appender).append(&sessions, &file, &header, &line, rec, mode) {
        Ok(a) => {
            if locked {
                cache.record(&entry, &file, a.end);
            }
            let entry_id = entry.id.clone();
            let journalled = target.appender.journalled();
            if a.unjournalled.is_some() || (!journalled && vault.git_dir.is_some()) {
                unjournalled.push((entry, a.rec));
            }
            Ok(Outcome::Appended { day, entry_id })
        }
        Err(n) if n.journalled => Ok(Outcome::Journalled {
            day,
            entry_id: entry.id,
            why: n.error.to_string(),
        }),
        Err(n) => aside(vault, entry, n.error.to_string()),
    }
}

/// `_librarian/sessions/`, created when missing (fail point `sessions-dir`).
fn open_sessions(vault: &Vault) -> Result<Dir, FsError> {
    let path = vault.root.join(paths::SESSIONS_DIR);
    crate::failpoint::check("sessions-dir").map_err(|e| FsError::Io {
        path: path.clone(),
        source: e,
    })?;
    Dir::open(&vault.root)?
        .open_dir(paths::SESSIONS_DIR, true)?
        .ok_or(FsError::WrongKind(path))
}

/// The sessions folder cannot be opened (`e`): the line goes to the journal when the folder
/// failed (a full disk, an unwritable vault), aside when it was refused (a symlink) or the
/// journal fails too.
fn carry(
    target: &Target<'_>,
    entry: Entry,
    mut rec: PendingAppend,
    line: &str,
    header: &str,
    e: FsError,
) -> Result<Outcome, WriteError> {
    if target.appender.journalled() && !refused(&e) {
        rec.offset = 0;
        rec.line = line.to_string();
        rec.bytes = crate::records::append_bytes(0, true, header, line);
        if let Some(Ok(())) = target.appender.journal_line(&rec) {
            return Ok(Outcome::Journalled {
                day: rec.day,
                entry_id: entry.id,
                why: e.to_string(),
            });
        }
    }
    aside(target.vault, entry, e.to_string())
}

/// Writes the entry aside ([`crate::recorder::aside`]); an error only when no folder took it.
fn aside(vault: &Vault, entry: Entry, why: String) -> Result<Outcome, WriteError> {
    match crate::recorder::aside::write(vault, entry) {
        Ok(path) => Ok(Outcome::Aside { path, why }),
        Err(e) => Err(WriteError::Nowhere(format!(
            "{why}; aside: {e}. Free some space or fix the permissions, then capture it again with `git rutter capture --summary`"
        ))),
    }
}

/// Sets the entry's time (after the day file's last record, so times only grow in a file) and
/// a vault-unique id (spec/record-format.md, "Entry ids", `records::ids`): the instant, the
/// writer's tag once sync is set up, `-p<pid>` without the lock (another process may stamp the
/// same millisecond meanwhile; calls within this process are serialised by [`GATE`]), then
/// `-N` while the day file's tail holds it.
fn stamp(
    entry: &mut Entry,
    now: Instant,
    sessions: Option<&Dir>,
    file: &str,
    (writer, locked): (Option<&str>, bool),
) {
    let bytes = sessions
        .and_then(|d| d.read(file).ok().flatten())
        .unwrap_or_default();
    // Times only grow within a day file (a turn's entries are stamped ahead of the clock).
    let now = ids::after_last(now, &bytes);
    entry.time = now.iso();
    let pid = (!locked).then(std::process::id);
    entry.id = ids::unique(&ids::base(now, writer, pid), &bytes);
}

/// The commit at the end of a capture, through its session: none outside a git vault, and
/// none without the capture lock (why it could not be had is why the lines are pending).
fn commit(
    session: &Capture<'_>,
    store: Option<&Result<Store, StoreError>>,
    extra: &[PendingAppend],
    now: Instant,
    written: &mut Written,
) {
    match store {
        None => return,
        Some(Err(e)) => {
            written.pending = Some(e.to_string());
            return;
        }
        Some(Ok(_)) => {}
    }
    let Some(recorder) = session.recorder() else {
        written.pending = session.missed().map(|e| e.to_string());
        return;
    };
    match recorder.commit(extra, now, false) {
        Ok(out) => {
            written.commit = out.commit.map(|o| o.to_string());
            written.diverged = out.diverged;
            written.refused = out.refused;
            written.unwitnessed = out.unwitnessed;
            written.pending = None;
        }
        // The store's hint says what to do about a locked ref.
        Err(e) => written.pending = Some(crate::hint::one_line(&e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draft(summary: &str) -> Draft {
        Draft {
            entry: Entry {
                id: String::new(),
                session_id: Some("S".into()),
                time: String::new(),
                summary: summary.into(),
                refs: vec![],
                workspace: None,
                client: None,
                supersedes: None,
                extra: Default::default(),
            },
            cited: vec![],
        }
    }

    /// A turn written across midnight: each entry lands in its own day's file, in order, dedupe
    /// spans the days and the turn, and one commit holds them all.
    #[test]
    fn a_batch_across_midnight_is_deduped_and_committed_once() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        let first = crate::clock::parse_instant("2026-11-30T23:59:59.998Z").unwrap();
        let (vault, _) = crate::setup::init(&root, first).unwrap();
        let drafts = ["A.", "B.", "C.", "A.", "C."].map(draft).into();
        let written = write_at(&vault, drafts, Some(first)).unwrap();
        let ids: Vec<&str> = written
            .outcomes
            .iter()
            .map(|o| match o {
                Outcome::Appended { entry_id, .. } => entry_id.as_str(),
                Outcome::Duplicate => "dup",
                Outcome::Aside { .. } => "aside",
                Outcome::Journalled { .. } => "journalled",
            })
            .collect();
        assert_eq!(
            ids,
            [
                "20261130T235959998Z",
                "20261130T235959999Z",
                "20261201T000000000Z",
                "dup",
                "dup"
            ]
        );
        assert!(
            written.commit.is_some() && written.pending.is_none(),
            "{written:?}"
        );
        let read = |day: &str| {
            let text = std::fs::read_to_string(root.join(format!("_librarian/sessions/{day}.md")))
                .unwrap();
            crate::records::dayfile::parse(text.as_bytes())
                .entries
                .into_iter()
                .map(|e| (e.summary, e.time))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            read("2026-11-30"),
            [
                ("A.".to_string(), "2026-11-30T23:59:59.998Z".to_string()),
                ("B.".to_string(), "2026-11-30T23:59:59.999Z".to_string())
            ]
        );
        assert_eq!(
            read("2026-12-01"),
            [("C.".to_string(), "2026-12-01T00:00:00.000Z".to_string())]
        );
        // The cache was saved: a later capture of the same turn finds every line recorded.
        let again = write_at(&vault, ["B.", "C."].map(draft).into(), Some(first)).unwrap();
        assert_eq!(again.outcomes, [Outcome::Duplicate, Outcome::Duplicate]);
        assert!(again.commit.is_none());
    }

    #[test]
    fn stamp_suffixes_an_id_taken_in_the_last_64_kib() {
        let t = tempfile::tempdir().unwrap();
        let sessions = Dir::open(t.path()).unwrap();
        let now = Instant(1_796_023_901_112);
        let file = format!("{}.md", now.day());
        let base = now.compact();
        let stamped = |bytes: &[u8]| {
            std::fs::write(t.path().join(&file), bytes).unwrap();
            let mut entry = Entry {
                id: String::new(),
                session_id: None,
                time: String::new(),
                summary: "s".into(),
                refs: vec![],
                workspace: None,
                client: None,
                supersedes: None,
                extra: Default::default(),
            };
            stamp(&mut entry, now, Some(&sessions), &file, (None, true));
            assert_eq!(entry.time, now.iso());
            entry.id
        };
        let taken = |id: &str| format!("x {{\"id\":\"{id}\",\"time\":\"t\"}} -->\n");
        assert_eq!(stamped(b""), base);
        let two = format!("{}\u{e9}\n{}", taken(&base), taken(&format!("{base}-2")));
        assert_eq!(stamped(two.as_bytes()), format!("{base}-3"));
        // Invalid UTF-8 around the id does not hide it.
        let mut raw = vec![0xff, 0xc3];
        raw.extend(taken(&base).bytes());
        raw.push(0xe2);
        assert_eq!(stamped(&raw), format!("{base}-2"));
        // An id before the last 64 KiB is not looked at.
        let old = format!("{}{}", taken(&base), "\n".repeat(64 * 1024));
        assert_eq!(stamped(old.as_bytes()), base);
    }
}
