//! The locked part of a capture: for each entry of a turn, a unique id, dedupe, journal and one
//! appended line; then one commit for all of them.
//!
//! Order matters for "a capture is never lost" (DESIGN §2.7): each entry's journal record is
//! written before its line is appended, and the records are removed only after the commit moved
//! the ref. When a step fails, the line still lands somewhere durable, in this order: its day
//! file, else the pending journal, else the aside folders ([`super::aside`]); and before its own
//! entries, each capture that holds the lock completes earlier ones ([`super::complete`]).

use super::dedupe::DedupeCache;
use crate::clock::{self, Instant};
use crate::fsx::{Dir, FsError};
use crate::journal::{Journal, PendingAppend, RecordKind, Refused};
use crate::lock::{self, Lock};
use crate::recorder::append::{append_line, refused};
use crate::recorder::Journalling;
use crate::records::{dayfile, ids, line, paths, Entry};
use crate::store::Store;
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
    pub earlier: super::complete::Earlier,
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
    let state = vault.state_dir();
    let (guard, lock_problem) = match Lock::acquire(&state, lock::DEFAULT_WAIT) {
        Ok(g) => (Some(g), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let locked = guard.is_some();
    let first = pinned.unwrap_or_else(clock::now);
    let store = vault.git_dir.as_ref().map(|_| Store::open(vault));
    let mut written = Written::default();
    if let (Some(Ok(s)), true) = (&store, locked) {
        if let Err(e) = s.ensure_ref(first) {
            written.pending = Some(e.to_string());
        }
    }
    // A journal that cannot be opened does not stop the capture: the day file still takes the
    // line, and the commit takes it from memory.
    let journal = match vault.git_dir {
        Some(_) => crate::recorder::open_journal(&state)
            .map_err(|e| written.journal_problem = Some(e.to_string()))
            .ok(),
        None => None,
    };
    written.journal = Some(state.join("pending"));
    let mut cache = CacheSlot::default();
    let open_store = store.as_ref().and_then(|s| s.as_ref().ok());
    if locked {
        written.earlier =
            super::complete::complete(vault, open_store, journal.as_ref(), &mut cache);
    }
    let target = Target {
        vault,
        locked,
        journal: journal.as_ref(),
        writer: crate::machine::read(&state),
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
        let commit = Commit {
            store,
            journal: journal.as_ref(),
            locked,
            lock_problem,
            now: last,
        };
        commit.run(&extra, &mut written);
    }
    if written.commit.is_some() {
        written.earlier.finish();
    } else {
        keep_unjournalled(vault, unjournalled, &mut written);
        // Lines left in the journal are its to keep: make them survive a power loss, or say
        // they may not (docs/security.md, "Power loss").
        if let Some(Err(e)) = journal.as_ref().map(|j| j.sync()) {
            written.journal_problem = Some(format!(
                "the pending journal could not be flushed to disk ({e}); a power loss now could lose these lines"
            ));
        }
    }
    Ok(written)
}

/// Lines that are in their day file but neither journalled nor committed are written aside
/// too, so the next capture or `git rutter commit` commits them.
fn keep_unjournalled(vault: &Vault, lines: Vec<(Entry, PendingAppend)>, w: &mut Written) {
    if vault.git_dir.is_none() {
        return;
    }
    for (entry, _) in lines {
        match super::aside::write(vault, entry) {
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
    /// The capture lock is held, so the dedupe cache may be refreshed and updated.
    locked: bool,
    journal: Option<&'a Journal>,
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

    /// Writes the watermarks (the cache writes nothing when it was loaded without the lock).
    pub(crate) fn save(&mut self) {
        if let Some((_, mut cache)) = self.loaded.take() {
            cache.save();
        }
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
    let who = (target.writer.as_deref(), target.locked);
    stamp(&mut entry, now, sessions.as_ref().ok(), &file, who);
    let cache = cache.for_file(vault, target.locked, sessions.as_ref().ok(), &file);
    if cache.seen(&entry) {
        return Ok(Outcome::Duplicate);
    }
    let rec = pending_record(&entry, &draft.cited, &file);
    let line = line::render(&entry);
    let header = dayfile::header(&day);
    let sessions = match sessions {
        Ok(d) => d,
        Err(e) => return carry(target, entry, rec, &line, &header, e),
    };
    let mode = Journalling::BestEffort {
        locked: target.locked,
    };
    match append_line(&sessions, &file, &header, &line, target.journal, rec, mode) {
        Ok(a) => {
            if target.locked {
                cache.record(&entry, &file, a.end);
            }
            let entry_id = entry.id.clone();
            if a.unjournalled.is_some() || (target.journal.is_none() && vault.git_dir.is_some()) {
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
    if let (Some(j), false) = (target.journal, refused(&e)) {
        rec.offset = 0;
        rec.line = line.to_string();
        rec.bytes = crate::records::append_bytes(0, true, header, line);
        if crate::recorder::append::add(j, &rec).is_ok() {
            return Ok(Outcome::Journalled {
                day: rec.day,
                entry_id: entry.id,
                why: e.to_string(),
            });
        }
    }
    aside(target.vault, entry, e.to_string())
}

/// Writes the entry aside ([`super::aside`]); an error only when no folder took it.
fn aside(vault: &Vault, entry: Entry, why: String) -> Result<Outcome, WriteError> {
    match super::aside::write(vault, entry) {
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

/// Suffixes the entry's id with `-2`, `-3`, … while the last 64 KiB of `dir/file` hold it.
pub(super) fn unique_id(entry: &mut Entry, dir: Option<&Dir>, file: &str) {
    let bytes = dir
        .and_then(|d| d.read(file).ok().flatten())
        .unwrap_or_default();
    entry.id = ids::unique(&entry.id, &bytes);
}

/// The journal record of an entry (offset and bytes are filled in by the append).
pub(super) fn pending_record(e: &Entry, cited: &[(String, String)], file: &str) -> PendingAppend {
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

/// The commit at the end of a capture.
struct Commit<'a> {
    store: Option<Result<Store, crate::store::StoreError>>,
    journal: Option<&'a Journal>,
    locked: bool,
    lock_problem: Option<String>,
    now: Instant,
}

impl Commit<'_> {
    fn run(self, extra: &[PendingAppend], written: &mut Written) {
        let Some(store) = self.store else {
            return;
        };
        let store = match store {
            Ok(s) => s,
            Err(e) => {
                written.pending = Some(e.to_string());
                return;
            }
        };
        if !self.locked {
            written.pending = self.lock_problem;
            return;
        }
        let result = crate::recorder::commit(&store, self.journal, extra, self.now, false);
        match result {
            Ok(out) => {
                written.commit = out.commit.map(|o| o.to_string());
                written.diverged = out.diverged;
                written.refused = out.refused;
                written.unwitnessed = out.unwitnessed;
                written.pending = None;
            }
            Err(e) => written.pending = Some(e.to_string()),
        }
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
