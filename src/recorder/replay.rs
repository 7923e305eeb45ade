//! Replaying what is pending: lines the pending journal holds but the working file does not
//! (the file could not take them), and entries written aside ([`super::aside`]). Each capture
//! that holds the lock, and `git rutter commit`, runs this first
//! ([`Recorder::replay_pending`]): every such line is appended to its day file (deduped as a
//! capture is), journalled, and committed with the run's commit; a carrier is removed only once
//! its lines are journalled or committed. What still cannot be placed waits, and the messages
//! say where and why.

use super::append::{entry_record, Appender, Journalling};
use super::aside::unique_id;
use super::Recorder;
use crate::fsx::{Dir, FsError};
use crate::journal::{Journal, PendingAppend, RecordKind};
use crate::records::standing::contains_line;
use crate::records::{dayfile, ledger, line, paths, Entry};
use crate::store::Store;
use std::collections::BTreeMap;
use std::path::Path;

/// The session dedupe a replay asks (a capture's cache of what each session recorded): a
/// carried entry its session recorded already is dropped, not appended again.
pub(crate) trait Dedupe {
    /// Whether `entry`'s session recorded it already in the day file `file` of `dir`.
    fn seen(&mut self, dir: &Dir, file: &str, entry: &Entry) -> bool;
    /// `entry` was appended to `dir/file`, which is `end` bytes long now.
    fn record(&mut self, dir: &Dir, file: &str, entry: &Entry, end: u64);
    /// Writes what was learnt.
    fn save(&mut self);
}

/// What a replay of earlier captures did.
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
pub(crate) const STALE_TEMP: std::time::Duration = std::time::Duration::from_secs(60);

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

impl Recorder<'_> {
    /// Replays what the journal and the aside folders carry, asking `dedupe` whether a carried
    /// entry's session recorded it already. The run's commit ([`Recorder::commit`] with
    /// [`Earlier::in_memory`]) then holds what was placed; [`Earlier::finish`] removes the aside
    /// files it emptied.
    pub(crate) fn replay_pending(&self, dedupe: &mut dyn Dedupe) -> Earlier {
        let journal = self.journal().ok().flatten();
        let mut run = Replay {
            root: self.root(),
            state_dir: self.state_dir(),
            git: self.git(),
            store: self.store().ok(),
            appender: self.appender(),
            dedupe,
            out: Earlier::default(),
            waiting: BTreeMap::new(),
        };
        if let Some(j) = journal {
            run.replay_journal(j);
        }
        run.replay_aside();
        run.dedupe.save();
        run.finish()
    }
}

/// One replay: where it writes and what it found.
struct Replay<'a> {
    root: &'a Path,
    state_dir: &'a Path,
    git: bool,
    store: Option<&'a Store>,
    appender: Appender<'a>,
    dedupe: &'a mut dyn Dedupe,
    out: Earlier,
    /// How many lines wait, by place and why.
    waiting: BTreeMap<(String, String), usize>,
}

impl Replay<'_> {
    /// What was done, with one message per place where lines still wait.
    fn finish(mut self) -> Earlier {
        for ((place, why), n) in std::mem::take(&mut self.waiting) {
            let (what, it) = match n {
                1 => ("1 earlier entry waits".to_string(), "it"),
                n => (format!("{n} earlier entries wait"), "them"),
            };
            self.out.waiting.push(format!(
                "{what} in {place}: the record file cannot take {it} ({why}); fix that, then run `git rutter commit`."
            ));
        }
        self.out
    }

    fn wait(&mut self, place: &str, why: String) {
        *self.waiting.entry((place.to_string(), why)).or_default() += 1;
    }

    /// Journal records whose line the working file does not hold.
    fn replay_journal(&mut self, journal: &Journal) {
        let Ok((records, _)) = journal.list() else {
            return;
        };
        let place = journal.path().display().to_string();
        for (name, rec) in records {
            // The journal check admits record paths only; the folder is still reached through
            // the one confined mapping.
            let (dir, file) = match crate::overlay::folder(self.root, &rec.path, true) {
                Ok(found) => found,
                Err(e) => {
                    self.wait(&place, e.to_string());
                    continue;
                }
            };
            let working = dir.read(file).ok().flatten().unwrap_or_default();
            if crate::journal::check::appended(&working, &rec)
                || committed(self.store, &rec.path, &rec.line)
                || in_flight(&rec.entry_id, journal.age(&name))
            {
                continue;
            }
            let entry = match rec.kind {
                RecordKind::Capture => line::parse(&rec.line).ok().flatten(),
                _ => None,
            };
            let file = file.to_string();
            match self.place_line(&dir, &file, entry.as_ref(), rec) {
                Placed::Duplicate => {
                    let _ = journal.remove(&[name]);
                    self.out.duplicates += 1;
                }
                Placed::Waiting(why) => self.wait(&place, why),
                placed => count(placed, &mut self.out),
            }
        }
    }

    /// Entries in the aside folders, file by file, under each folder's own lock (an aside
    /// writer that did not get the capture lock still takes it), so no line is appended to a
    /// file while it is read and removed.
    fn replay_aside(&mut self) {
        // Entries go to this vault's own day files once sync is set up (spec/sync.md).
        let writer = crate::machine::read(self.state_dir);
        for folder in super::aside::folders(self.root, self.state_dir) {
            let Ok(Some(dir)) = folder.open(false) else {
                continue;
            };
            let Ok(_lock) = crate::lock::Lock::on_dir(&dir, crate::lock::DEFAULT_WAIT) else {
                continue;
            };
            dir.sweep_temps(STALE_TEMP);
            let mut names: Vec<String> = dir
                .list()
                .unwrap_or_default()
                .into_iter()
                .filter(|n| paths::is_day_file(n))
                .collect();
            names.sort();
            for name in names {
                self.aside_file(&folder.path(), &dir, &name, writer.as_deref());
            }
        }
    }

    /// The aside file `name` of the folder `dir` (at `folder`): its entries placed, and the
    /// file removed once each is, or moved to `rejected/` when it holds what no capture writes
    /// aside.
    fn aside_file(&mut self, folder: &Path, dir: &Dir, name: &str, writer: Option<&str>) {
        let Ok(Some(bytes)) = dir.read(name) else {
            return;
        };
        let place = folder.join(name).display().to_string();
        let Some((day, _)) = paths::split_day_file_name(name) else {
            return;
        };
        let day_file = paths::day_file_name(day, writer);
        let (mut left, mut bad, mut in_memory) = (0, 0, false);
        for raw in super::aside::lines(day, &bytes) {
            // An aside file is input like a journal record: only entry lines of its own day
            // are carried into its day file.
            let entry = match line::parse(raw) {
                Ok(Some(e)) if e.time.get(..10) == Some(day) => e,
                _ => {
                    bad += 1;
                    continue;
                }
            };
            match self.aside_entry(&day_file, entry, raw) {
                Placed::Waiting(why) => {
                    left += 1;
                    self.wait(&place, why);
                }
                Placed::InMemory(rec) => {
                    in_memory = true;
                    count(Placed::InMemory(rec), &mut self.out);
                }
                placed => count(placed, &mut self.out),
            }
        }
        if bad > 0 {
            let note = refused_note(folder, dir, name, &place, day, bad);
            self.out.refused.push(note);
            return;
        }
        match (left, in_memory) {
            (0, false) => {
                let _ = dir.remove(name);
                let _ = dir.sync();
            }
            (0, true) => {
                if let Ok(d) = dir.try_clone() {
                    self.out.after_commit.push((d, name.to_string()));
                }
            }
            _ => {}
        }
    }

    /// One entry of an aside file, for the day file `name`: done when committed, journalled
    /// when its line is in the day file already, else appended like a capture.
    fn aside_entry(&mut self, name: &str, mut entry: Entry, raw: &str) -> Placed {
        let path = format!("{}/{name}", paths::SESSIONS_DIR);
        if committed(self.store, &path, raw) {
            return Placed::Done;
        }
        let dir = match open_folder(self.root, paths::SESSIONS_DIR) {
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
            // In the file already (appended, then neither journalled nor committed): journal
            // it.
            let rec = PendingAppend {
                offset: at as u64,
                bytes: format!("{raw}\n"),
                line: raw.to_string(),
                ..entry_record(&entry, &cited, name)
            };
            if !self.git {
                return Placed::Done;
            }
            return match self.appender.journal_line(&rec) {
                Some(Ok(())) => Placed::Done,
                _ => Placed::InMemory(Box::new(rec)),
            };
        }
        unique_id(&mut entry, Some(&dir), name);
        let rec = entry_record(&entry, &cited, name);
        let line = line::render(&entry);
        let rec = PendingAppend { line, ..rec };
        self.place_line(&dir, name, Some(&entry), rec)
    }

    /// Appends a carried line to `dir/file` unless its session recorded it already, journalling
    /// it.
    fn place_line(
        &mut self,
        dir: &Dir,
        file: &str,
        entry: Option<&Entry>,
        rec: PendingAppend,
    ) -> Placed {
        if entry.is_some_and(|e| self.dedupe.seen(dir, file, e)) {
            return Placed::Duplicate;
        }
        let header = match rec.kind {
            RecordKind::Capture | RecordKind::Retract => dayfile::header(&rec.day),
            RecordKind::Identity => ledger::header(),
            RecordKind::Ack => String::new(),
        };
        let line = rec.line.clone();
        match self
            .appender
            .append(dir, file, &header, &line, rec, Journalling::BestEffort)
        {
            Ok(a) => {
                if let Some(e) = entry {
                    self.dedupe.record(dir, file, e, a.end);
                }
                match (a.unjournalled, self.git && !self.appender.journalled()) {
                    (None, false) => Placed::Appended,
                    _ => Placed::InMemory(Box::new(a.rec)),
                }
            }
            Err(n) => Placed::Waiting(n.error.to_string()),
        }
    }
}

/// Why the aside file `name` of `dir` (at `folder`, `place` in messages) was set aside: it held
/// `bad` lines that are not entries of `day`.
fn refused_note(
    folder: &Path,
    dir: &Dir,
    name: &str,
    place: &str,
    day: &str,
    bad: usize,
) -> String {
    match dir.set_aside(name, super::aside::REJECTED) {
        Ok(kept) => format!(
            "{place} held {bad} line(s) that are not entries of {day} (garbage, another day's entry, or not an entry line); they were never written to a day file, and the file was moved to {} for you to look at.",
            folder.join(super::aside::REJECTED).join(kept).display()
        ),
        Err(e) => format!(
            "{place} holds {bad} line(s) that are not entries of {day}; they were never written to a day file, and the file could not be moved aside ({e}): delete it once you have looked at it."
        ),
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

/// The record folder `rel` of the vault (`_librarian/sessions`, `_librarian`), created when
/// missing, never through a symlink.
fn open_folder(root: &Path, rel: &str) -> Result<Dir, FsError> {
    Dir::open(root)?
        .open_dir(rel, true)?
        .ok_or_else(|| FsError::WrongKind(root.join(rel)))
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
