//! The locked part of a capture: for each entry of a turn, a unique id, dedupe, journal and one
//! appended line; then one commit for all of them.
//!
//! Order matters for "a capture is never lost" (DESIGN §2.7): each entry's journal record is
//! written before its line is appended, and the records are removed only after the commit moved
//! the ref.

use super::dedupe::DedupeCache;
use crate::clock::{self, Instant};
use crate::fsx::{Dir, FsError};
use crate::lock::{self, Lock};
use crate::records::{dayfile, line, paths, Entry};
use crate::store::append::append_line;
use crate::store::journal::{Journal, PendingAppend, RecordKind};
use crate::store::Store;
use crate::vault::Vault;
use memchr::memmem;
use std::path::PathBuf;

/// An entry ready to be written; `id` and `time` are set under the lock.
pub struct Draft {
    pub entry: Entry,
    /// `(canonical vault-relative target, sha256 ref)` of refs small enough to copy.
    pub cited: Vec<(String, String)>,
}

/// What happened to one draft.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Appended to the day file `day` as `entry_id`.
    Appended { day: String, entry_id: String },
    /// Already recorded for this session: nothing written.
    Duplicate,
    /// The record path could not be written safely (`why`): the entry went to `path`.
    Aside { path: PathBuf, why: String },
}

/// What happened to the drafts of one capture.
#[derive(Debug, Default)]
pub struct Written {
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
}

impl Written {
    /// How many drafts ended as `want` says.
    pub fn count(&self, want: impl Fn(&Outcome) -> bool) -> usize {
        self.outcomes.iter().filter(|o| want(o)).count()
    }
}

/// Why no draft could be written at all.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Writes the drafts into the vault in order, under the capture lock when it can be had, and
/// commits them together. Entry `k` is stamped `k` milliseconds after the first, so the
/// entries of one turn keep their order in every view sorted by time.
pub fn write(vault: &Vault, drafts: Vec<Draft>) -> Result<Written, WriteError> {
    write_at(vault, drafts, clock::now())
}

/// [`write`] with the first entry stamped `first`.
fn write_at(vault: &Vault, drafts: Vec<Draft>, first: Instant) -> Result<Written, WriteError> {
    crate::store::skip_read_verification();
    let state = vault.state_dir();
    let (guard, lock_problem) = match Lock::acquire(&state, lock::DEFAULT_WAIT) {
        Ok(g) => (Some(g), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let store = vault.git_dir.as_ref().map(|_| Store::open(vault));
    let mut written = Written::default();
    if let (Some(Ok(s)), Some(_)) = (&store, &guard) {
        if let Err(e) = s.ensure_ref(first) {
            written.pending = Some(e.to_string());
        }
    }
    let journal = match vault.git_dir {
        Some(_) => Some(Journal::open(&state)?),
        None => None,
    };
    let target = Target {
        vault,
        locked: guard.is_some(),
        journal: journal.as_ref(),
        writer: crate::store::sync::machine::read(&state),
    };
    let mut last = first;
    let mut cache = CacheSlot::default();
    for (k, draft) in drafts.into_iter().enumerate() {
        last = Instant(first.0 + k as i64);
        match append_entry(&target, &mut cache, last, draft) {
            Ok(outcome) => written.outcomes.push(outcome),
            Err(e) if written.outcomes.is_empty() => return Err(e),
            Err(e) => {
                written.failed = Some(e.to_string());
                break;
            }
        }
    }
    cache.save();
    if written.count(|o| matches!(o, Outcome::Appended { .. })) > 0 {
        commit(
            store,
            journal,
            guard.is_some(),
            lock_problem,
            last,
            &mut written,
        );
    }
    Ok(written)
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
struct CacheSlot {
    loaded: Option<(String, DedupeCache, bool)>,
}

impl CacheSlot {
    /// The cache, up to date for `file`; a batch that crosses midnight loads it again.
    fn for_file(&mut self, target: &Target<'_>, sessions: &Dir, file: &str) -> &mut DedupeCache {
        if self.loaded.as_ref().is_some_and(|(f, _, _)| f != file) {
            self.save();
        }
        let (_, cache, _) = self.loaded.get_or_insert_with(|| {
            let state = target.vault.state_dir();
            let cache = DedupeCache::load(&state, target.locked.then_some(sessions), file);
            (file.to_string(), cache, target.locked)
        });
        cache
    }

    /// Writes the watermarks when the cache was loaded under the lock.
    fn save(&mut self) {
        if let Some((_, mut cache, true)) = self.loaded.take() {
            cache.save();
        }
    }
}

/// Stamps the entry, checks dedupe and appends it (or writes it aside when the record path is a
/// symlink or not a regular file).
fn append_entry(
    target: &Target<'_>,
    cache: &mut CacheSlot,
    now: Instant,
    draft: Draft,
) -> Result<Outcome, WriteError> {
    let vault = target.vault;
    let state = vault.state_dir();
    let mut entry = draft.entry;
    let sessions = match Dir::open(&vault.root)?.open_dir(paths::SESSIONS_DIR, true) {
        Ok(Some(d)) => d,
        Ok(None) => return Err(FsError::WrongKind(vault.root.join(paths::SESSIONS_DIR)).into()),
        Err(e @ (FsError::Symlink(_) | FsError::WrongKind(_))) => {
            return write_aside(&state, now, entry, e.to_string())
        }
        Err(e) => return Err(e.into()),
    };
    let file = paths::day_file_name(&now.day(), target.writer.as_deref());
    stamp(&mut entry, now, &sessions, &file, target.locked);
    let cache = cache.for_file(target, &sessions, &file);
    if cache.seen(&entry) {
        return Ok(Outcome::Duplicate);
    }
    let rec = pending_record(&entry, &draft.cited, &file);
    let header = dayfile::header(&now.day());
    let new_len = match append_line(
        &sessions,
        &file,
        &header,
        &line::render(&entry),
        target.journal,
        rec,
    ) {
        Ok(n) => n,
        Err(e @ (FsError::Symlink(_) | FsError::WrongKind(_))) => {
            return write_aside(&state, now, entry, e.to_string())
        }
        Err(e) => return Err(e.into()),
    };
    if target.locked {
        cache.record(&entry, &file, new_len, &sessions);
    }
    Ok(Outcome::Appended {
        day: now.day(),
        entry_id: entry.id,
    })
}

/// Sets the entry's time and a vault-unique id (a `-N` suffix when the millisecond is taken in
/// the last 64 KiB of the day file `file`). Without the lock another capture may stamp the same
/// millisecond at the same moment, so the id also carries this process's id (`-p<pid>`), unique
/// among running processes.
fn stamp(entry: &mut Entry, now: Instant, sessions: &Dir, file: &str, locked: bool) {
    entry.time = now.iso();
    let base = match locked {
        true => now.compact(),
        false => format!("{}-p{}", now.compact(), std::process::id()),
    };
    let bytes = sessions.read(file).ok().flatten().unwrap_or_default();
    let tail = &bytes[bytes.len().saturating_sub(64 * 1024)..];
    let taken = |id: &str| memmem::find(tail, format!("\"id\":\"{id}\"").as_bytes()).is_some();
    entry.id = base.clone();
    let mut n = 2;
    while taken(&entry.id) {
        entry.id = format!("{base}-{n}");
        n += 1;
    }
}

/// The journal record of an entry (offset and bytes are filled in by the append).
fn pending_record(e: &Entry, cited: &[(String, String)], file: &str) -> PendingAppend {
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

fn commit(
    store: Option<Result<Store, crate::store::StoreError>>,
    journal: Option<Journal>,
    locked: bool,
    lock_problem: Option<String>,
    now: Instant,
    written: &mut Written,
) {
    let (Some(store), Some(journal)) = (store, journal) else {
        return;
    };
    let store = match store {
        Ok(s) => s,
        Err(e) => {
            written.pending = Some(e.to_string());
            return;
        }
    };
    if !locked {
        written.pending = lock_problem;
        return;
    }
    match store.commit_pending(&journal, now, false) {
        Ok(out) => {
            written.commit = out.commit.map(|o| o.to_string());
            written.diverged = out.diverged;
            written.pending = None;
        }
        Err(e) => written.pending = Some(e.to_string()),
    }
}

/// Appends the entry to `<state>/aside/<day>.md` when the vault's record path is a symlink or
/// not a regular file; the vault is not touched.
fn write_aside(
    state: &std::path::Path,
    now: Instant,
    mut entry: Entry,
    why: String,
) -> Result<Outcome, WriteError> {
    entry.time = now.iso();
    entry.id = now.compact();
    let dir = state.join("aside");
    std::fs::create_dir_all(&dir)?;
    let root = Dir::open(&dir)?;
    let file = format!("{}.md", now.day());
    let header = dayfile::header(&now.day());
    append_line(
        &root,
        &file,
        &header,
        &line::render(&entry),
        None,
        pending_record(&entry, &[], &file),
    )?;
    Ok(Outcome::Aside {
        path: dir.join(file),
        why,
    })
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
        let (vault, _) = crate::store::setup::init(&root, first).unwrap();
        let drafts = ["A.", "B.", "C.", "A.", "C."].map(draft).into();
        let written = write_at(&vault, drafts, first).unwrap();
        let ids: Vec<&str> = written
            .outcomes
            .iter()
            .map(|o| match o {
                Outcome::Appended { entry_id, .. } => entry_id.as_str(),
                Outcome::Duplicate => "dup",
                Outcome::Aside { .. } => "aside",
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
            crate::records::dayfile::parse(day, text.as_bytes())
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
        let again = write_at(&vault, ["B.", "C."].map(draft).into(), first).unwrap();
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
                extra: Default::default(),
            };
            stamp(&mut entry, now, &sessions, &file, true);
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
