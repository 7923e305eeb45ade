//! Completing captures that did not reach their day file: lines the pending journal holds but
//! the working file does not (the file could not take them), and entries written aside
//! ([`super::aside`]). Each capture that holds the lock, and `git rutter commit`, runs this
//! first: every such line is appended to its day file (deduped as a capture is), journalled,
//! and committed with the run's commit; a carrier is removed only once its lines are journalled
//! or committed. What still cannot be placed waits, and the messages say where and why.

use super::write::{pending_record, unique_id, CacheSlot};
use crate::fsx::{Dir, FsError};
use crate::journal::{Journal, PendingAppend, RecordKind};
use crate::recorder::append::append_line;
use crate::recorder::Journalling;
use crate::records::standing::contains_line;
use crate::records::{dayfile, ledger, line, paths, Entry};
use crate::store::Store;
use crate::vault::Vault;
use std::collections::BTreeMap;

/// What completing earlier captures did.
#[derive(Default)]
pub(crate) struct Earlier {
    /// Carried lines now in their day file (or other record file) and in this run's commit.
    pub placed: usize,
    /// Carried lines dropped because the session had recorded them already.
    pub duplicates: usize,
    /// One message per place where lines still wait, saying why and what to do.
    pub waiting: Vec<String>,
    /// One message per aside file that held lines no capture writes aside (not an entry line,
    /// or an entry of another day): the file was moved to `aside/rejected/`, those lines never
    /// reach a day file.
    pub refused: Vec<String>,
    /// Appends that could not be journalled: the commit takes them from memory.
    pub in_memory: Vec<PendingAppend>,
    /// Aside files whose lines are all in their day files, some only in memory: removed once
    /// the commit holds them ([`Earlier::finish`]).
    after_commit: Vec<(Dir, String)>,
}

impl std::fmt::Debug for Earlier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Earlier")
            .field("placed", &self.placed)
            .field("duplicates", &self.duplicates)
            .field("waiting", &self.waiting)
            .finish()
    }
}

impl Earlier {
    /// Removes the aside files whose lines the commit now holds.
    pub(crate) fn finish(&mut self) {
        for (dir, name) in self.after_commit.drain(..) {
            let _ = dir.remove(&name);
            let _ = dir.sync();
        }
    }
}

/// How old a temporary file must be before it is taken for a killed writer's leftover.
const STALE_TEMP: std::time::Duration = std::time::Duration::from_secs(60);

/// Removes what writers killed mid-write left in the record folders and the dedupe cache
/// (`git rutter commit` runs it; captures sweep only the journal and the aside folders, which
/// they list anyway). Returns how many files were removed.
pub fn sweep(vault: &Vault) -> usize {
    let mut removed = 0;
    if let Ok(root) = Dir::open(&vault.root) {
        for rel in [paths::SESSIONS_DIR, crate::vault::OVERLAY_DIR] {
            if let Ok(Some(d)) = root.open_dir(rel, false) {
                removed += d.sweep_temps(STALE_TEMP);
            }
        }
    }
    let dedupe =
        Dir::open_private(&vault.worktree_state_dir()).and_then(|d| d.open_dir("dedupe", false));
    if let Ok(Some(d)) = dedupe {
        removed += d.sweep_temps(STALE_TEMP);
    }
    removed
}

/// How one carried line ended.
enum Placed {
    /// Committed already, or in its file and journalled: nothing left to carry.
    Done,
    /// Appended now.
    Appended,
    /// Already recorded for its session: dropped.
    Duplicate,
    /// In its file, but only in memory: the commit must take it.
    InMemory(Box<PendingAppend>),
    /// Its file cannot take it (why).
    Waiting(String),
}

/// Completes what the journal and the aside folders carry. The caller holds the capture lock.
pub(crate) fn complete(
    vault: &Vault,
    store: Option<&Store>,
    journal: Option<&Journal>,
    slot: &mut CacheSlot,
) -> Earlier {
    let mut out = Earlier::default();
    let mut waiting: BTreeMap<(String, String), usize> = BTreeMap::new();
    if let Some(j) = journal {
        from_journal(vault, store, j, slot, &mut out, &mut waiting);
    }
    from_aside(vault, store, journal, slot, &mut out, &mut waiting);
    slot.save();
    for ((place, why), n) in waiting {
        let (what, it) = match n {
            1 => ("1 earlier entry waits".to_string(), "it"),
            n => (format!("{n} earlier entries wait"), "them"),
        };
        out.waiting.push(format!(
            "{what} in {place}: the record file cannot take {it} ({why}); fix that, then run `git rutter commit`."
        ));
    }
    out
}

/// Journal records whose line the working file does not hold.
fn from_journal(
    vault: &Vault,
    store: Option<&Store>,
    journal: &Journal,
    slot: &mut CacheSlot,
    out: &mut Earlier,
    waiting: &mut BTreeMap<(String, String), usize>,
) {
    let Ok((records, _)) = journal.list() else {
        return;
    };
    let place = journal.path().display().to_string();
    for (name, rec) in records {
        // The journal check admits record paths only; the folder is still reached through the
        // one confined mapping.
        let (dir, file) = match crate::overlay::folder(&vault.root, &rec.path, true) {
            Ok(found) => found,
            Err(e) => {
                *waiting.entry((place.clone(), e.to_string())).or_default() += 1;
                continue;
            }
        };
        let working = dir.read(file).ok().flatten().unwrap_or_default();
        if crate::journal::check::appended(&working, &rec)
            || committed(store, &rec.path, &rec.line)
            || in_flight(&rec.entry_id, journal.age(&name))
        {
            continue;
        }
        let entry = match rec.kind {
            RecordKind::Capture => line::parse(&rec.line).ok().flatten(),
            _ => None,
        };
        let file = file.to_string();
        match place_line(vault, &dir, &file, entry.as_ref(), rec, Some(journal), slot) {
            Placed::Duplicate => {
                let _ = journal.remove(&[name]);
                out.duplicates += 1;
            }
            Placed::Waiting(why) => *waiting.entry((place.clone(), why)).or_default() += 1,
            placed => count(placed, out),
        }
    }
}

/// How long a capture without the lock may take between its journal record and its append.
const IN_FLIGHT_MAX: std::time::Duration = std::time::Duration::from_secs(120);

/// Whether the entry id names a capture that ran without the lock (`…-p<pid>`) and is still
/// running: its journal record may be written before its append, so it is not a carried line.
/// A record older than [`IN_FLIGHT_MAX`] (`age`, from its file) is never in flight: its pid may
/// have been reused, or be another pid namespace's (a devcontainer and its host on one vault).
fn in_flight(id: &str, age: Option<std::time::Duration>) -> bool {
    if age.is_none_or(|a| a > IN_FLIGHT_MAX) {
        return false;
    }
    let pid = id.split('-').find_map(|part| {
        let digits = part.strip_prefix('p')?;
        digits.parse::<i32>().ok().filter(|_| !digits.is_empty())
    });
    pid.and_then(rustix::process::Pid::from_raw)
        .is_some_and(|p| rustix::process::test_kill_process(p).is_ok())
}

/// Entries in the aside folders, file by file, under each folder's own lock (an aside writer
/// that did not get the capture lock still takes it), so no line is appended to a file while
/// it is read and removed.
fn from_aside(
    vault: &Vault,
    store: Option<&Store>,
    journal: Option<&Journal>,
    slot: &mut CacheSlot,
    out: &mut Earlier,
    waiting: &mut BTreeMap<(String, String), usize>,
) {
    // Entries go to this vault's own day files once sync is set up (spec/sync.md).
    let writer = crate::machine::read(&vault.state_dir());
    for folder in super::aside::folders(vault) {
        let Ok(Some(dir)) = folder.open(false) else {
            continue;
        };
        let Ok(_lock) = crate::lock::Lock::on_dir(&dir, crate::lock::DEFAULT_WAIT) else {
            continue;
        };
        let folder = folder.path();
        dir.sweep_temps(STALE_TEMP);
        let mut names: Vec<String> = dir
            .list()
            .unwrap_or_default()
            .into_iter()
            .filter(|n| crate::records::paths::is_day_file(n))
            .collect();
        names.sort();
        for name in names {
            let Ok(Some(bytes)) = dir.read(&name) else {
                continue;
            };
            let place = folder.join(&name).display().to_string();
            let Some(day_file) = paths::split_day_file_name(&name)
                .map(|(day, _)| paths::day_file_name(day, writer.as_deref()))
            else {
                continue;
            };
            let (mut left, mut bad) = (0, 0);
            let mut in_memory = false;
            let day = paths::split_day_file_name(&name).map_or("", |(d, _)| d);
            for raw in aside_lines(day, &bytes) {
                // An aside file is input like a journal record: only entry lines of its own day
                // are carried into its day file.
                let entry = match line::parse(raw) {
                    Ok(Some(e)) if e.time.get(..10) == Some(day) => e,
                    _ => {
                        bad += 1;
                        continue;
                    }
                };
                match aside_entry(vault, store, journal, slot, &day_file, entry, raw) {
                    Placed::Waiting(why) => {
                        left += 1;
                        *waiting.entry((place.clone(), why)).or_default() += 1;
                    }
                    Placed::InMemory(rec) => {
                        in_memory = true;
                        count(Placed::InMemory(rec), out);
                    }
                    placed => count(placed, out),
                }
            }
            if bad > 0 {
                out.refused.push(match dir.set_aside(&name, super::aside::REJECTED) {
                    Ok(kept) => format!(
                        "{place} held {bad} line(s) that are not entries of {day} (garbage, another day's entry, or not an entry line); they were never written to a day file, and the file was moved to {} for you to look at.",
                        folder.join(super::aside::REJECTED).join(kept).display()
                    ),
                    Err(e) => format!(
                        "{place} holds {bad} line(s) that are not entries of {day}; they were never written to a day file, and the file could not be moved aside ({e}): delete it once you have looked at it."
                    ),
                });
                continue;
            }
            match (left, in_memory) {
                (0, false) => {
                    let _ = dir.remove(&name);
                    let _ = dir.sync();
                }
                (0, true) => {
                    if let Ok(d) = dir.try_clone() {
                        out.after_commit.push((d, name));
                    }
                }
                _ => {}
            }
        }
    }
}

/// The lines of an aside file of `day` after its day-file header (when it has one), blank lines
/// left out.
fn aside_lines<'a>(day: &str, bytes: &'a [u8]) -> impl Iterator<Item = &'a str> {
    let header = crate::records::dayfile::header(day);
    let body = bytes.strip_prefix(header.as_bytes()).unwrap_or(bytes);
    std::str::from_utf8(body)
        .map(str::lines)
        .into_iter()
        .flatten()
        .chain(std::str::from_utf8(body).is_err().then_some("\u{fffd}"))
        .filter(|l| !l.trim().is_empty())
}

fn count(placed: Placed, out: &mut Earlier) {
    match placed {
        Placed::Appended => out.placed += 1,
        Placed::Duplicate => out.duplicates += 1,
        Placed::InMemory(rec) => {
            out.placed += 1;
            out.in_memory.push(*rec);
        }
        Placed::Done | Placed::Waiting(_) => {}
    }
}

/// One entry of an aside file, for the day file `name`: done when committed, journalled when its
/// line is in the day file already, else appended like a capture.
fn aside_entry(
    vault: &Vault,
    store: Option<&Store>,
    journal: Option<&Journal>,
    slot: &mut CacheSlot,
    name: &str,
    mut entry: Entry,
    raw: &str,
) -> Placed {
    let path = format!("{}/{name}", paths::SESSIONS_DIR);
    if committed(store, &path, raw) {
        return Placed::Done;
    }
    let dir = match open_folder(vault, paths::SESSIONS_DIR) {
        Ok(d) => d,
        Err(e) => return Placed::Waiting(e.to_string()),
    };
    let working = dir.read(name).ok().flatten().unwrap_or_default();
    let cited: Vec<(String, String)> = entry
        .refs
        .iter()
        .map(|r| (r.path.clone(), r.hash.clone()))
        .collect();
    if let Some(at) = line_at(&working, raw.as_bytes()) {
        // In the file already (appended, then neither journalled nor committed): journal it.
        let rec = PendingAppend {
            offset: at as u64,
            bytes: format!("{raw}\n"),
            line: raw.to_string(),
            ..pending_record(&entry, &cited, name)
        };
        if vault.git_dir.is_none() {
            return Placed::Done;
        }
        return match journal.map(|j| crate::recorder::append::add(j, &rec)) {
            Some(Ok(())) => Placed::Done,
            _ => Placed::InMemory(Box::new(rec)),
        };
    }
    unique_id(&mut entry, Some(&dir), name);
    let rec = pending_record(&entry, &cited, name);
    let line = line::render(&entry);
    let rec = PendingAppend { line, ..rec };
    place_line(vault, &dir, name, Some(&entry), rec, journal, slot)
}

/// Appends a carried line to `dir/file` unless its session recorded it already, journalling it.
fn place_line(
    vault: &Vault,
    dir: &Dir,
    file: &str,
    entry: Option<&Entry>,
    rec: PendingAppend,
    journal: Option<&Journal>,
    slot: &mut CacheSlot,
) -> Placed {
    if let Some(e) = entry {
        if slot.for_file(vault, true, Some(dir), file).seen(e) {
            return Placed::Duplicate;
        }
    }
    let header = match rec.kind {
        RecordKind::Capture | RecordKind::Retract => dayfile::header(&rec.day),
        RecordKind::Identity => ledger::header(),
        RecordKind::Ack => String::new(),
    };
    let line = rec.line.clone();
    let mode = Journalling::BestEffort { locked: true };
    let journal = journal.filter(|_| vault.git_dir.is_some());
    match append_line(dir, file, &header, &line, journal, rec, mode) {
        Ok(a) => {
            if let Some(e) = entry {
                slot.for_file(vault, true, Some(dir), file)
                    .record(e, file, a.end);
            }
            match (a.unjournalled, vault.git_dir.is_some() && journal.is_none()) {
                (None, false) => Placed::Appended,
                _ => Placed::InMemory(Box::new(a.rec)),
            }
        }
        Err(n) => Placed::Waiting(n.error.to_string()),
    }
}

/// The record folder `rel` of the vault (`_librarian/sessions`, `_librarian`), created when
/// missing, never through a symlink.
fn open_folder(vault: &Vault, rel: &str) -> Result<Dir, FsError> {
    Dir::open(&vault.root)?
        .open_dir(rel, true)?
        .ok_or_else(|| FsError::WrongKind(vault.root.join(rel)))
}

fn committed(store: Option<&Store>, path: &str, line: &str) -> bool {
    store
        .and_then(|s| s.committed(path).ok().flatten())
        .is_some_and(|c| contains_line(&c, line.as_bytes()))
}

/// Where `line` starts as a whole line of `text`.
fn line_at(text: &[u8], line: &[u8]) -> Option<usize> {
    let mut start = 0;
    while let Some(pos) = memchr::memmem::find(&text[start..], line) {
        let at = start + pos;
        let after = at + line.len();
        if (at == 0 || text[at - 1] == b'\n') && (after == text.len() || text[after] == b'\n') {
            return Some(at);
        }
        start = at + 1;
    }
    None
}
