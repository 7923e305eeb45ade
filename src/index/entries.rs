//! The record cache: every entry and retraction of every day as the record holds it (the day
//! file's bytes at the tip of `refs/rutter/records`, plus the pending journal), each with its
//! status against the working day file, so `recent` and enrichment never parse history and
//! never take text from a working file (spec/recall.md).
//!
//! The unit is a day file, keyed by its stem (`YYYY-MM-DD`, or `YYYY-MM-DD.<tag>` for one
//! writer's file of that day, spec/sync.md); its rows carry its day, so a day's files read as
//! one. A file is recomputed only when one of its three inputs changed: the committed blob it
//! was parsed from, the journal lines waiting for it, or the working file's stat. The index does
//! not touch git: recall hands it a [`RecordSource`].

pub(crate) use super::SourceError;
use super::{schema, watcher, IndexError};
use crate::fsx::Dir;
use crate::records::standing::{self, DayRecord, Status};
use crate::records::{fingerprint, paths, Entry};
use rusqlite::{params, OptionalExtension, Transaction};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::os::fd::AsFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use unicode_normalization::UnicodeNormalization;

/// A day file whose committed blob moved: its day and its blob at the tip (`None`: gone).
pub(crate) type Moved = (String, Option<String>);

/// What the index needs from the record; recall implements it over the store.
pub(crate) trait RecordSource {
    /// The tip of `refs/rutter/records`; `None` when there is no record (a vault that is not a
    /// git repository, or whose ref does not exist yet).
    fn tip(&self) -> Option<String>;
    /// `(day, blob id)` of every day file committed at the tip.
    fn committed_days(&self) -> Result<Vec<(String, String)>, SourceError>;
    /// The day files whose blob differs between the commit `since` and the tip: `(day, blob at
    /// the tip, None when gone)`. `None` when `since` cannot be compared (then every day is).
    fn changed_days(&self, since: &str) -> Result<Option<Vec<Moved>>, SourceError>;
    /// The bytes of a committed blob. `working` is the working file's content, when there is
    /// one: if it is that blob, it is returned without reading the object.
    fn committed_bytes(&self, blob: &str, working: Option<&[u8]>) -> Result<Vec<u8>, SourceError>;
    /// The lines the pending journal holds for each day file, in file order.
    fn pending(&self) -> &BTreeMap<String, Vec<String>>;
    /// The purges the purge ledger at the tip holds (spec/purge.md).
    fn purges(&self) -> Vec<crate::records::purge::Purge> {
        Vec::new()
    }
    /// A second handle on the same record, for another thread: the same tip and journal lines
    /// as this one (a snapshot, not read again), its own repository. `None` when it cannot be
    /// opened (a bulk load then reads every day on one thread).
    fn fork(&self) -> Option<Box<dyn RecordSource + Send>> {
        None
    }
    /// The day's committed blob and journal lines as they are now, read again (the journal
    /// first, then the tip). A capture journals its line before appending it and commits it
    /// before dropping the journal record, so a line found in a working file read *before*
    /// this call is in one or the other: a line the first snapshot did not explain (a capture
    /// landed in between) is judged against this one.
    fn reread(&self, day: &str) -> Result<(Option<String>, Vec<String>), SourceError>;
}

/// A vault without a record: no tip, nothing committed, nothing journalled (tests).
#[cfg(test)]
#[derive(Debug, Default)]
pub(crate) struct NoRecord {
    pending: BTreeMap<String, Vec<String>>,
}

#[cfg(test)]
impl RecordSource for NoRecord {
    fn tip(&self) -> Option<String> {
        None
    }
    fn committed_days(&self) -> Result<Vec<(String, String)>, SourceError> {
        Ok(vec![])
    }
    fn changed_days(&self, _: &str) -> Result<Option<Vec<Moved>>, SourceError> {
        Ok(None)
    }
    fn committed_bytes(&self, blob: &str, _: Option<&[u8]>) -> Result<Vec<u8>, SourceError> {
        Err(format!("no record holds the blob {blob}").into())
    }
    fn pending(&self) -> &BTreeMap<String, Vec<String>> {
        &self.pending
    }
    fn reread(&self, _: &str) -> Result<(Option<String>, Vec<String>), SourceError> {
        Ok((None, vec![]))
    }
}

/// What a refresh of the entries did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct EntriesRefresh {
    /// Days recomputed.
    pub files_read: usize,
    /// Days no longer in the record or the working tree.
    pub files_removed: usize,
    pub entries_read: usize,
    /// A watcher's word stood in for a stat of every day file ([`Scope::Watched`]).
    pub by_watcher: bool,
    /// A [`Scope::Cold`] fill stopped between two days: the cache holds a prefix of the days.
    pub stopped: bool,
}

impl EntriesRefresh {
    /// Adds what `other` did.
    pub(crate) fn absorb(&mut self, other: EntriesRefresh) {
        self.files_read += other.files_read;
        self.files_removed += other.files_removed;
        self.entries_read += other.entries_read;
    }

    /// Whether anything in the index changed.
    pub(crate) fn touched(&self) -> bool {
        self.files_read + self.files_removed > 0
    }
}

/// A working file's stat: size, mtime and ctime in ns, inode. Any write changes one of them.
type Stamp = (i64, i64, i64, i64);

/// The inputs a day's rows were computed from.
#[derive(Debug, Clone, PartialEq, Eq)]
struct DayKey {
    blob: Option<String>,
    journal: String,
    stamp: Option<Stamp>,
}

impl DayKey {
    /// The key of `day` as it is now: its committed `blob`, the journal lines `src` holds for it,
    /// its working file's `stamp`.
    fn of(src: &dyn RecordSource, day: &str, blob: Option<String>, stamp: Option<Stamp>) -> DayKey {
        DayKey {
            blob,
            journal: src
                .pending()
                .get(day)
                .map_or(String::new(), |l| journal_key(l)),
            stamp,
        }
    }

    /// Whether nothing holds the day: no commit, no journal line, no working file.
    fn is_empty(&self) -> bool {
        self.blob.is_none() && self.journal.is_empty() && self.stamp.is_none()
    }
}

/// How much of the working tree to look at.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Scope<'a> {
    /// Stat every day file.
    Full,
    /// As [`Scope::Full`], into an empty cache, stopping between two days once the flag is
    /// set (a cold build's notes are in, and its own thread does the rest, [`super::side`]).
    /// A stopped fill records neither the tip nor the sessions folder's mtime, so the refresh
    /// that finishes it compares every day.
    Cold(&'a AtomicBool),
    /// While the sessions folder's mtime is the one recorded at the last full scan (no day file
    /// added, removed or renamed; an mtime less than two seconds old is never trusted) and the
    /// record can say which day files moved since the last refresh, look only at those days,
    /// the two newest day files, the days with journal lines, and `days`.
    Quick(&'a [String]),
    /// A running watcher vouches for the sessions folder (spec/index.md, "The watcher's
    /// answer"): while the index holds its `token` under [`watcher::RECORDS_TOKEN_KEY`], read in
    /// this transaction, every day file changed since the cache was last brought up to date is
    /// among `days` (or was refreshed by the watcher's server itself), so what [`Scope::Quick`]
    /// looks at plus `days` is enough, whatever the sessions folder's mtime. Otherwise every
    /// day is compared, and with `claim` (the server's own refresh) the token is then written.
    Watched {
        token: &'a str,
        days: &'a [String],
        claim: bool,
    },
}

/// Brings `day_files`, `entries`, `entry_refs` and `retractions` in line with the record and
/// the working day files. A quick scope that can trust the sessions folder's mtime, or a watched
/// one whose watcher's token the index holds, and that knows what moved in the record since the
/// last refresh looks at a handful of days ([`targeted`]); anything else compares every day
/// ([`every_day`]).
pub(crate) fn refresh(
    tx: &Transaction<'_>,
    root: &Path,
    src: &dyn RecordSource,
    scope: Scope<'_>,
) -> Result<EntriesRefresh, IndexError> {
    let tip = src.tip().unwrap_or_default();
    let recorded = meta(tx, "records_tip")?;
    let sessions = Dir::open(root)
        .ok()
        .and_then(|d| d.open_dir(paths::SESSIONS_DIR, false).ok().flatten());
    let dir_mtime = sessions
        .as_ref()
        .and_then(|s| stat(s, "."))
        .map_or(0, |s| s.1);
    let trusted = meta(tx, "sessions_mtime")?.and_then(|v| v.parse().ok()) == Some(dir_mtime)
        && dir_mtime != 0;
    let moved = match recorded.as_deref() {
        Some(r) if r == tip => Some(vec![]),
        Some(r) if !r.is_empty() && !tip.is_empty() => {
            src.changed_days(r).map_err(IndexError::Record)?
        }
        _ => None,
    };
    let watched = match scope {
        Scope::Watched { token, .. } => {
            meta(tx, watcher::RECORDS_TOKEN_KEY)?.as_deref() == Some(token)
        }
        _ => false,
    };
    // The mtime vouches for a quick scope; only the watcher's token for a watched one.
    let vouched = match scope {
        Scope::Full | Scope::Cold(_) => false,
        Scope::Quick(_) => trusted,
        Scope::Watched { .. } => watched,
    };
    let mut report = match (scope, vouched, moved) {
        (Scope::Quick(also) | Scope::Watched { days: also, .. }, true, Some(moved)) => {
            targeted(tx, sessions.as_ref(), src, also, &moved)?
        }
        _ => {
            let stop = match scope {
                Scope::Cold(stop) => Some(stop),
                _ => None,
            };
            let report = every_day(
                tx,
                sessions.as_ref(),
                src,
                (&tip, recorded.as_deref()),
                stop,
            )?;
            if report.stopped {
                return Ok(report);
            }
            report
        }
    };
    report.by_watcher = watched;
    if let Scope::Watched {
        token, claim: true, ..
    } = scope
    {
        if !watched {
            set_meta(tx, watcher::RECORDS_TOKEN_KEY, token)?;
        }
    }
    if recorded.as_deref() != Some(tip.as_str()) {
        purged_rows(tx, src)?;
        set_meta(tx, "records_tip", &tip)?;
    }
    if dir_mtime != 0 && !racy(dir_mtime) && !trusted {
        set_meta(tx, "sessions_mtime", &dir_mtime.to_string())?;
    }
    Ok(report)
}

/// The quick path, while no day file was added, removed or renamed and the days whose blob
/// moved are known: only those days, the two newest day files, the days with journal lines (now
/// or at the last refresh) and the caller's `also` are looked at.
fn targeted(
    tx: &Transaction<'_>,
    sessions: Option<&Dir>,
    src: &dyn RecordSource,
    also: &[String],
    moved: &[Moved],
) -> Result<EntriesRefresh, IndexError> {
    // Keyed by day file stem: a day's files are `YYYY-MM-DD` and `YYYY-MM-DD.<tag>`.
    let mut days: BTreeSet<String> = moved.iter().map(|(d, _)| d.clone()).collect();
    for day in also {
        days.insert(day.clone());
        days.extend(files_of_day(tx, day)?);
    }
    days.extend(src.pending().keys().cloned());
    days.extend(column(
        tx,
        "SELECT file FROM day_files WHERE journal != ''",
    )?);
    days.extend(column(
        tx,
        "SELECT file FROM day_files WHERE size IS NOT NULL AND day IN
         (SELECT DISTINCT day FROM day_files WHERE size IS NOT NULL ORDER BY day DESC LIMIT 2)",
    )?);
    let mut report = EntriesRefresh::default();
    for day in &days {
        let before = key_of(tx, day)?;
        let blob = match moved.iter().find(|(d, _)| d == day) {
            Some((_, blob)) => blob.clone(),
            None => before.as_ref().and_then(|k| k.blob.clone()),
        };
        let key = DayKey::of(
            src,
            day,
            blob,
            sessions.and_then(|s| stat(s, &format!("{day}.md"))),
        );
        update_day(tx, sessions, src, day, before.as_ref(), key, &mut report)?;
    }
    Ok(report)
}

/// The full path: every committed day, every journalled day, every working day file. `tips`:
/// the record's tip and the one the cache reflects. With `stop`, the days are filled in order
/// until it is set ([`Scope::Cold`]).
fn every_day(
    tx: &Transaction<'_>,
    sessions: Option<&Dir>,
    src: &dyn RecordSource,
    (tip, recorded): (&str, Option<&str>),
    stop: Option<&AtomicBool>,
) -> Result<EntriesRefresh, IndexError> {
    // The working day files are listed and stat'ed on another thread while the cache's rows
    // are read here: the two take about as long.
    let (known, stamps) = std::thread::scope(|scope| {
        let stamps = scope.spawn(|| working_stamps(sessions));
        let known = known(tx);
        match stamps.join() {
            Ok(stamps) => known.map(|k| (k, stamps)),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })?;
    // `None`: the tip did not move, the known blobs are the committed ones.
    let committed: Option<HashMap<String, String>> = if recorded == Some(tip) {
        None
    } else if tip.is_empty() {
        Some(HashMap::new())
    } else {
        let days = src.committed_days().map_err(IndexError::Record)?;
        Some(days.into_iter().collect())
    };
    let mut days: HashSet<&str> = known.keys().map(String::as_str).collect();
    days.extend(committed.iter().flat_map(|c| c.keys().map(String::as_str)));
    days.extend(src.pending().keys().map(String::as_str));
    days.extend(stamps.keys().map(String::as_str));
    // In file order: a bulk load then appends to `entries` (keyed by file) instead of inserting
    // at random places, so a small page cache holds what it touches.
    let mut days: Vec<&str> = days.into_iter().collect();
    days.sort_unstable();
    let total = days.len();
    let stale: Vec<(&str, DayKey)> = days
        .into_iter()
        .map(|day| {
            let blob = match &committed {
                Some(c) => c.get(day).cloned(),
                None => known.get(day).and_then(|k| k.blob.clone()),
            };
            (day, DayKey::of(src, day, blob, stamps.get(day).copied()))
        })
        .filter(|(day, key)| known.get(*day) != Some(key))
        .collect();
    let mut report = EntriesRefresh::default();
    // The rows of a stale day the cache holds go first, while the record indexes find them.
    for (day, key) in stale.iter().filter(|(d, _)| known.contains_key(*d)) {
        delete_day(tx, day)?;
        if key.is_empty() {
            tx.prepare_cached("DELETE FROM day_files WHERE file = ?1")?
                .execute([day])?;
            report.files_removed += 1;
        }
    }
    let work: Vec<(&str, DayKey)> = stale.into_iter().filter(|(_, k)| !k.is_empty()).collect();
    // Filling most of the cache is a bulk load: indexes built at the end, a larger page cache.
    // So is a cache without its indexes (a cold build finishing what its side build began).
    let bulk = (work.len() > BULK_DAYS && work.len() * 2 > total) || !indexed(tx)?;
    if bulk {
        tx.execute_batch(schema::DROP_RECORD_INDEXES)?;
        tx.execute_batch(&format!("PRAGMA cache_size=-{BULK_CACHE_KIB}"))?;
    }
    match (work.len() > BULK_DAYS).then(|| src.fork()).flatten() {
        // Many days: each is read and classified on a thread of its own, ahead of the inserts.
        Some(reader) => pipelined(tx, sessions, reader, &work, stop, &mut report)?,
        None => {
            for (n, (day, key)) in work.into_iter().enumerate() {
                if stopped(stop, n) {
                    report.stopped = true;
                    break;
                }
                let (record, key) = read_day(sessions, src, day, key)?;
                put_day(tx, day, &DayRows::new(day, record), &key, &mut report)?;
            }
        }
    }
    if bulk {
        if !report.stopped {
            tx.execute_batch(schema::CREATE_RECORD_INDEXES)?;
        }
        tx.execute_batch("PRAGMA cache_size=-2000")?;
    }
    Ok(report)
}

/// Whether a fill that has put `done` days in should stop before the next: once `stop` is set,
/// after at least one day (so a stopped fill has always begun).
fn stopped(stop: Option<&AtomicBool>, done: usize) -> bool {
    done > 0 && stop.is_some_and(|s| s.load(Ordering::Relaxed))
}

/// Whether the record cache's indexes are in place (a bulk load drops them until its end).
fn indexed(tx: &Transaction<'_>) -> Result<bool, rusqlite::Error> {
    tx.prepare_cached(
        "SELECT 1 FROM sqlite_schema WHERE type = 'index' AND name = 'entries_by_rid'",
    )?
    .exists([])
}

/// Inserts one day's rows and the key they came from.
fn put_day(
    tx: &Transaction<'_>,
    day: &str,
    rows: &DayRows,
    key: &DayKey,
    report: &mut EntriesRefresh,
) -> Result<(), rusqlite::Error> {
    report.entries_read += insert_day(tx, day, rows)?;
    save_key(tx, day, key)?;
    report.files_read += 1;
    Ok(())
}

/// The stamp of every day file in the sessions folder, by stem.
fn working_stamps(sessions: Option<&Dir>) -> HashMap<String, Stamp> {
    let Some(dir) = sessions else {
        return HashMap::new();
    };
    let names = dir.list().unwrap_or_default();
    let mut stamps = HashMap::with_capacity(names.len());
    for name in names {
        if let (Some(day), Some(st)) = (day_of_file(&name), stat(dir, &name)) {
            stamps.insert(day.to_string(), st);
        }
    }
    stamps
}

/// More days than this into an empty cache are loaded in bulk.
const BULK_DAYS: usize = 64;
/// The page cache during a bulk load, in KiB: 8 MiB, so a cold build, which loads the record
/// cache beside the notes' own build (`index::side`), stays under its memory target (a larger
/// cache took no less time and most of the peak; docs/performance.md). Days load in file order,
/// so the rows append and the cache holds the pages being written; the rest spill to the file.
const BULK_CACHE_KIB: u32 = 8_192;

/// Days a bulk load's reader may run ahead of the inserts (each a parsed day file, ~20 entries).
const PIPELINE_DEPTH: usize = 64;

/// Inserts the rows of every day of `work` (none of which the cache holds), in order, while
/// `reader` reads and classifies them on another thread ([`read_day`]), at most
/// [`PIPELINE_DEPTH`] days ahead; until `stop` is set, if given. The rows are those
/// [`update_day`] inserts; the first error stops both.
fn pipelined(
    tx: &Transaction<'_>,
    sessions: Option<&Dir>,
    reader: Box<dyn RecordSource + Send>,
    work: &[(&str, DayKey)],
    stop: Option<&AtomicBool>,
    report: &mut EntriesRefresh,
) -> Result<(), IndexError> {
    std::thread::scope(|scope| {
        let (send, recv) = std::sync::mpsc::sync_channel(PIPELINE_DEPTH);
        let producer = scope.spawn(move || {
            for (day, key) in work {
                // The writer stopped (an error): so does the reading.
                // The rows' derived values are made here too, off the inserting thread.
                let read = read_day(sessions, reader.as_ref(), day, key.clone())
                    .map(|(record, key)| (DayRows::new(day, record), key));
                if send.send(read).is_err() {
                    break;
                }
            }
        });
        let mut written = Ok(());
        for (n, ((day, _), read)) in work.iter().zip(recv.iter()).enumerate() {
            if stopped(stop, n) {
                report.stopped = true;
                break;
            }
            written = read.and_then(|(rows, key)| Ok(put_day(tx, day, &rows, &key, report)?));
            if written.is_err() {
                break;
            }
        }
        drop(recv);
        if let Err(panic) = producer.join() {
            std::panic::resume_unwind(panic);
        }
        written
    })
}

/// Recomputes one day when its inputs differ from those its rows came from; removes it when
/// nothing holds it any more.
fn update_day(
    tx: &Transaction<'_>,
    sessions: Option<&Dir>,
    src: &dyn RecordSource,
    day: &str,
    before: Option<&DayKey>,
    key: DayKey,
    report: &mut EntriesRefresh,
) -> Result<(), IndexError> {
    if before == Some(&key) {
        return Ok(());
    }
    if key.is_empty() {
        if before.is_some() {
            delete_day(tx, day)?;
            tx.prepare_cached("DELETE FROM day_files WHERE file = ?1")?
                .execute([day])?;
            report.files_removed += 1;
        }
        return Ok(());
    }
    let (record, key) = read_day(sessions, src, day, key)?;
    if before.is_some() {
        delete_day(tx, day)?;
    }
    Ok(put_day(tx, day, &DayRows::new(day, record), &key, report)?)
}

/// The stems of the day files of `day` the index knows.
fn files_of_day(tx: &Transaction<'_>, day: &str) -> Result<Vec<String>, rusqlite::Error> {
    // A range of the primary key (a day's stems are the day and `day.<tag>`, which sort before
    // `day/`), not a scan of every row: `recent --all` names every day, and one scan per day
    // made its refresh quadratic (3,650 days: most of its time).
    let mut stmt = tx.prepare_cached(
        "SELECT file FROM day_files WHERE file >= ?1 AND file < ?1 || '/' AND day = ?1",
    )?;
    let rows = stmt.query_map([day], |r| r.get(0))?;
    rows.collect()
}

/// The first column of every row of `sql`.
fn column(tx: &Transaction<'_>, sql: &str) -> Result<Vec<String>, rusqlite::Error> {
    let mut stmt = tx.prepare_cached(sql)?;
    let rows = stmt.query_map([], |r| r.get(0))?;
    rows.collect()
}

/// The stem of a day file's name (`YYYY-MM-DD.md`, `YYYY-MM-DD.<tag>.md`): the key of its rows.
fn day_of_file(name: &str) -> Option<&str> {
    name.strip_suffix(".md")
        .filter(|stem| paths::split_day_stem(stem).is_some())
}

/// The day of a day file's stem, or of the stem a day's purged entries are kept under
/// ([`purged_stem`]): its rows are of that day, and sort among its entries by time.
fn day_of_stem(stem: &str) -> &str {
    let stem = stem.strip_suffix(PURGED_SUFFIX).unwrap_or(stem);
    paths::split_day_stem(stem).map_or(stem, |(day, _)| day)
}

/// The stat of a regular file `name` in `dir`, without following a symlink.
fn stat(dir: &Dir, name: &str) -> Option<Stamp> {
    use rustix::fs::{statat, AtFlags, FileType};
    let st = statat(dir.fd().as_fd(), name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
    let is_file = FileType::from_raw_mode(st.st_mode) == FileType::RegularFile;
    (is_file || name == ".").then_some((
        st.st_size as i64,
        crate::clock::ns(st.st_mtime, st.st_mtime_nsec),
        crate::clock::ns(st.st_ctime, st.st_ctime_nsec),
        st.st_ino as i64,
    ))
}

/// A fingerprint of a day's journal lines (`""` when there are none).
fn journal_key(lines: &[String]) -> String {
    match lines.is_empty() {
        true => String::new(),
        false => fingerprint::sha256_hex(lines.join("\n").as_bytes()),
    }
}

/// Classifies one day ([`classify_day`]), copies of other days' lines left out
/// ([`drop_copies`]).
fn read_day(
    sessions: Option<&Dir>,
    src: &dyn RecordSource,
    day: &str,
    key: DayKey,
) -> Result<(DayRecord, DayKey), IndexError> {
    let (mut record, key) = classify_day(sessions, src, day, key)?;
    drop_copies(src, day, &mut record)?;
    Ok((record, key))
}

/// Leaves out the unverified lines of the day file `stem` that are copies of lines committed
/// in the file of the day they were written on: a day file renamed or copied by hand, which
/// `verify` names once (spec/verify.md). Recall shows those entries from their own day's file,
/// once. Costs nothing unless an unverified line names another day.
fn drop_copies(
    src: &dyn RecordSource,
    stem: &str,
    record: &mut DayRecord,
) -> Result<(), IndexError> {
    standing::drop_copies(stem, record, |day| {
        let Some(blob) = src.reread(day).map_err(IndexError::Record)?.0 else {
            return Ok(None);
        };
        let bytes = src.committed_bytes(&blob, None);
        bytes.map(Some).map_err(IndexError::Record)
    })
}

/// Classifies one day from its committed bytes, working file and journal lines.
///
/// The record is read before the working file, so a capture that lands in between leaves a
/// working line the snapshot does not explain. Then the record is read again (see
/// [`RecordSource::reread`]) and the working file after it: every line of the first read is
/// explained by the second snapshot unless nobody recorded it, and every line that snapshot
/// committed is in the second read unless it was edited. A line only the second read has (yet
/// another capture) is left for the next refresh, which the key returned (the first stat, the
/// second snapshot) makes happen.
fn classify_day(
    sessions: Option<&Dir>,
    src: &dyn RecordSource,
    day: &str,
    key: DayKey,
) -> Result<(DayRecord, DayKey), IndexError> {
    let read = || match (key.stamp, sessions) {
        (Some(_), Some(s)) => s.read(&format!("{day}.md")).ok().flatten(),
        _ => None,
    };
    let working = read();
    let lines = src.pending().get(day).cloned().unwrap_or_default();
    let record = classify(src, key.blob.as_deref(), working.as_deref(), &lines)?;
    let unexplained = unverified_ids(&record);
    if unexplained.is_empty() {
        return Ok((record, key));
    }
    let (blob, lines) = src.reread(day).map_err(IndexError::Record)?;
    let again = DayKey {
        journal: journal_key(&lines),
        blob,
        stamp: key.stamp,
    };
    if again == key {
        return Ok((record, key));
    }
    let working = read();
    let mut record = classify(src, again.blob.as_deref(), working.as_deref(), &lines)?;
    let keep = |id: &String, s: &Status| *s != Status::Unverified || unexplained.contains(id);
    record.entries.retain(|(e, s)| keep(&e.id, s));
    record.retractions.retain(|(r, s)| keep(&r.id, s));
    Ok((record, again))
}

/// The ids of the entries and retractions no commit and no journal record explains.
fn unverified_ids(record: &DayRecord) -> BTreeSet<String> {
    let entries = record.entries.iter().map(|(e, s)| (&e.id, s));
    let retractions = record.retractions.iter().map(|(r, s)| (&r.id, s));
    entries
        .chain(retractions)
        .filter(|(_, s)| **s == Status::Unverified)
        .map(|(id, _)| id.clone())
        .collect()
}

/// [`standing::classify`] with the committed bytes of `blob` read through `src`.
fn classify(
    src: &dyn RecordSource,
    blob: Option<&str>,
    working: Option<&[u8]>,
    lines: &[String],
) -> Result<DayRecord, IndexError> {
    let committed = match blob {
        Some(b) => Some(
            src.committed_bytes(b, working)
                .map_err(IndexError::Record)?,
        ),
        None => None,
    };
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    Ok(standing::classify(committed.as_deref(), working, &lines))
}

/// The days the index holds, with the inputs their rows came from.
fn known(tx: &Transaction<'_>) -> Result<HashMap<String, DayKey>, rusqlite::Error> {
    let mut stmt = tx.prepare_cached(
        "SELECT file, blob, journal, size, mtime_ns, ctime_ns, ino FROM day_files",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, day_key(r, 1)?)))?;
    rows.collect()
}

/// The inputs one day's rows came from, if the index holds the day.
fn key_of(tx: &Transaction<'_>, day: &str) -> Result<Option<DayKey>, rusqlite::Error> {
    tx.prepare_cached(
        "SELECT blob, journal, size, mtime_ns, ctime_ns, ino FROM day_files WHERE file = ?1",
    )?
    .query_row([day], |r| day_key(r, 0))
    .optional()
}

/// A [`DayKey`] from the columns `blob, journal, size, mtime_ns, ctime_ns, ino` starting at `at`.
fn day_key(r: &rusqlite::Row<'_>, at: usize) -> Result<DayKey, rusqlite::Error> {
    let size: Option<i64> = r.get(at + 2)?;
    let stamp = match size {
        Some(size) => Some((size, r.get(at + 3)?, r.get(at + 4)?, r.get(at + 5)?)),
        None => None,
    };
    Ok(DayKey {
        blob: r.get(at)?,
        journal: r.get(at + 1)?,
        stamp,
    })
}

fn save_key(tx: &Transaction<'_>, day: &str, k: &DayKey) -> Result<(), rusqlite::Error> {
    let (size, mtime, ctime, ino) = match k.stamp {
        Some((a, b, c, d)) => (Some(a), Some(b), Some(c), Some(d)),
        None => (None, None, None, None),
    };
    tx.prepare_cached(
        "INSERT OR REPLACE INTO day_files(file, day, blob, journal, size, mtime_ns, ctime_ns, ino) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![day, day_of_stem(day), k.blob, k.journal, size, mtime, ctime, ino])?;
    Ok(())
}

fn meta(tx: &Transaction<'_>, key: &str) -> Result<Option<String>, rusqlite::Error> {
    tx.prepare_cached("SELECT value FROM meta WHERE key = ?1")?
        .query_row([key], |r| r.get(0))
        .optional()
}

/// The `meta` key of the next `entries.rid` to hand out.
pub(crate) const NEXT_RID: &str = "next_rid";

/// The next `entries.rid` to hand out: from `meta`, or past the largest in use should the
/// counter be missing (so a rid is never handed out twice).
fn next_rid(tx: &Transaction<'_>) -> Result<i64, rusqlite::Error> {
    if let Some(n) = meta(tx, NEXT_RID)?.and_then(|v| v.parse::<i64>().ok()) {
        return Ok(n);
    }
    tx.query_row("SELECT coalesce(max(rid), 0) + 1 FROM entries", [], |r| {
        r.get(0)
    })
}

fn set_meta(tx: &Transaction<'_>, key: &str, value: &str) -> Result<(), rusqlite::Error> {
    tx.prepare_cached("INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)")?
        .execute([key, value])?;
    Ok(())
}

/// An mtime within the last two seconds may still change without changing its value (the
/// file system's clock granularity), so it is not trusted for the quick check.
fn racy(mtime_ns: i64) -> bool {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0);
    now - mtime_ns < 2_000_000_000
}

/// The stem the rows of a day's purged entries are kept under: not a day file's (a tag never
/// holds `~`), so no day file's refresh touches them.
pub(crate) fn purged_stem(day: &str) -> String {
    format!("{day}{PURGED_SUFFIX}")
}

/// What [`purged_stem`] adds to a day.
pub(crate) const PURGED_SUFFIX: &str = ".~purged";

/// Replaces the rows that stand for purged entries with one per purge the ledger at the tip
/// holds (status `purged`, summary `purged on DATE: REASON`; spec/purge.md).
fn purged_rows(tx: &Transaction<'_>, src: &dyn RecordSource) -> Result<(), rusqlite::Error> {
    let old = column(
        tx,
        "SELECT DISTINCT file FROM entries WHERE file LIKE '%.~purged'",
    )?;
    for file in old {
        delete_day(tx, &file)?;
    }
    let mut by_day: BTreeMap<String, DayRecord> = BTreeMap::new();
    for p in src.purges() {
        by_day
            .entry(p.day.clone())
            .or_default()
            .entries
            .push((p.placeholder(), Status::Purged));
    }
    for (day, record) in by_day {
        let stem = purged_stem(&day);
        insert_day(tx, &stem, &DayRows::new(&stem, record))?;
    }
    Ok(())
}

/// Removes the rows of one day file (by its stem).
fn delete_day(tx: &Transaction<'_>, file: &str) -> Result<(), rusqlite::Error> {
    if super::grep::built(tx)? {
        super::grep::remove_file(tx, file)?;
    }
    for table in ["entries", "entry_refs", "retractions", "supersedes"] {
        tx.prepare_cached(&format!("DELETE FROM {table} WHERE file = ?1"))?
            .execute([file])?;
    }
    Ok(())
}

/// A day file's record with what its entries' rows derive from each entry: made before the
/// insert, so a bulk load makes it on its reading thread.
struct DayRows {
    record: DayRecord,
    derived: Vec<Derived>,
}

/// An entry's row values that are not its fields: its JSON, its `grep` text, its project's
/// comparison key and its session grouping key.
struct Derived {
    json: String,
    grep: String,
    project_key: Option<String>,
    group_key: String,
}

impl DayRows {
    /// The rows of the day file with the stem `file`.
    fn new(file: &str, record: DayRecord) -> DayRows {
        let derived = record
            .entries
            .iter()
            .enumerate()
            .map(|(seq, (e, _))| Derived {
                json: serde_json::to_string(e).unwrap_or_default(),
                grep: crate::records::filter::grep_text(e),
                project_key: e.project().map(project_key),
                group_key: group_key(e, file, seq),
            })
            .collect();
        DayRows { record, derived }
    }
}

/// Inserts one day file's entries (with their status) and its honoured retractions, keyed by
/// the file's stem and carrying its day; returns how many entries.
fn insert_day(tx: &Transaction<'_>, file: &str, rows: &DayRows) -> Result<usize, rusqlite::Error> {
    let DayRows { record, derived } = rows;
    let day = day_of_stem(file);
    let mut entry = tx.prepare_cached(
        "INSERT INTO entries(file, day, seq, id, session_id, project, project_key, time, group_key, json, status, grep, rid) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    )?;
    let words = super::grep::built(tx)?;
    let mut rid = next_rid(tx)?;
    let mut refs = tx.prepare_cached(
        "INSERT INTO entry_refs(file, day, seq, path, hash, blob) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for (seq, ((e, st), d)) in record.entries.iter().zip(derived).enumerate() {
        entry.execute(params![
            file,
            day,
            seq as i64,
            e.id,
            e.session_id,
            e.project(),
            d.project_key,
            e.time,
            d.group_key,
            d.json,
            st.as_str(),
            d.grep,
            rid
        ])?;
        if words {
            super::grep::add(tx, rid, &d.grep)?;
        }
        rid += 1;
        for r in &e.refs {
            refs.execute(params![file, day, seq as i64, r.path, r.hash, r.blob])?;
        }
        if st.is_recorded() {
            insert_claims(tx, file, day, seq, e)?;
        }
    }
    let mut retraction = tx.prepare_cached(
        "INSERT INTO retractions(file, day, seq, id, retracts, time, reason, status) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    let honoured = record.retractions.iter().filter(|(_, s)| s.is_recorded());
    for (seq, (r, st)) in honoured.enumerate() {
        let st = if *st == Status::Pending {
            "pending"
        } else {
            "committed"
        };
        retraction.execute(params![
            file, day, seq as i64, r.id, r.retracts, r.time, r.reason, st
        ])?;
    }
    set_meta(tx, NEXT_RID, &rid.to_string())?;
    Ok(record.entries.len())
}

/// The ids entry `e` (of `file`, at `seq`) names in its `supersedes`, one row each.
fn insert_claims(
    tx: &Transaction<'_>,
    file: &str,
    day: &str,
    seq: usize,
    e: &Entry,
) -> Result<(), rusqlite::Error> {
    let Some(named) = e.supersedes.as_deref().filter(|n| !n.is_empty()) else {
        return Ok(());
    };
    let mut claim = tx.prepare_cached(
        "INSERT INTO supersedes(file, day, seq, by_id, time, target) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for target in named {
        claim.execute(params![file, day, seq as i64, e.id, e.time, target])?;
    }
    Ok(())
}

/// The session grouping key of anchor §8: `[session_id, project]`, or the entry alone.
fn group_key(e: &Entry, day: &str, seq: usize) -> String {
    match e.session_id.as_deref().filter(|s| !s.is_empty()) {
        Some(sid) => serde_json::json!([sid, e.project()]).to_string(),
        None => format!("\u{0}{day}/{seq}"),
    }
}

/// How a project name is compared: NFC, lowercase, trimmed.
pub(crate) fn project_key(p: &str) -> String {
    p.trim().nfc().collect::<String>().to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{dayfile, line};
    use rustix::fs::{utimensat, AtFlags, Timespec, Timestamps, CWD};
    use std::cell::Cell;

    fn entry_line(id: &str) -> String {
        let e = Entry {
            id: id.into(),
            session_id: None,
            time: "2026-11-30T00:00:00.000Z".into(),
            summary: format!("s{id}"),
            refs: vec![],
            workspace: None,
            client: None,
            supersedes: None,
            extra: Default::default(),
        };
        line::render(&e)
    }

    fn age(path: &Path) {
        let old = Timespec {
            tv_sec: 1_700_000_000,
            tv_nsec: 0,
        };
        utimensat(
            CWD,
            path,
            &Timestamps {
                last_access: old,
                last_modification: old,
            },
            AtFlags::empty(),
        )
        .unwrap();
    }

    /// A record whose committed day files are given by hand; counts object reads. `later`: the
    /// day files as a second read finds them (a capture committed in between). Each tip read
    /// remembers the day files it had, for `changed_days`.
    #[derive(Default)]
    struct Fake {
        tip: Option<String>,
        days: BTreeMap<String, Vec<u8>>,
        pending: BTreeMap<String, Vec<String>>,
        later: Option<BTreeMap<String, Vec<u8>>>,
        reads: Cell<usize>,
        seen: std::cell::RefCell<HashMap<String, BTreeMap<String, Vec<u8>>>>,
    }

    impl RecordSource for Fake {
        fn tip(&self) -> Option<String> {
            if let Some(t) = &self.tip {
                self.seen.borrow_mut().insert(t.clone(), self.days.clone());
            }
            self.tip.clone()
        }
        fn changed_days(&self, since: &str) -> Result<Option<Vec<Moved>>, SourceError> {
            let seen = self.seen.borrow();
            let Some(old) = seen.get(since) else {
                return Ok(None);
            };
            let names: BTreeSet<&String> = old.keys().chain(self.days.keys()).collect();
            Ok(Some(
                names
                    .into_iter()
                    .filter(|d| old.get(*d) != self.days.get(*d))
                    .map(|d| {
                        (
                            d.clone(),
                            self.days.get(d).map(|b| fingerprint::sha256_hex(b)),
                        )
                    })
                    .collect(),
            ))
        }
        fn committed_days(&self) -> Result<Vec<(String, String)>, SourceError> {
            Ok(committed(&self.days))
        }
        fn committed_bytes(&self, blob: &str, _: Option<&[u8]>) -> Result<Vec<u8>, SourceError> {
            self.reads.set(self.reads.get() + 1);
            self.days
                .values()
                .chain(self.later.iter().flat_map(|l| l.values()))
                .find(|b| fingerprint::sha256_hex(b) == blob)
                .cloned()
                .ok_or_else(|| "missing".into())
        }
        fn pending(&self) -> &BTreeMap<String, Vec<String>> {
            &self.pending
        }
        fn reread(&self, day: &str) -> Result<(Option<String>, Vec<String>), SourceError> {
            let days = self.later.as_ref().unwrap_or(&self.days);
            let blob = days.get(day).map(|b| fingerprint::sha256_hex(b));
            Ok((blob, self.pending.get(day).cloned().unwrap_or_default()))
        }
    }

    /// `(day, blob id)` of day files given by hand, their sha256 standing for git's blob id.
    fn committed(days: &BTreeMap<String, Vec<u8>>) -> Vec<(String, String)> {
        days.iter()
            .map(|(d, b)| (d.clone(), fingerprint::sha256_hex(b)))
            .collect()
    }

    /// A record given by hand that a bulk load can fork for its reading thread (`forks`), or
    /// not (every day read on the writer's thread); `broken`: a day whose committed bytes
    /// cannot be read.
    #[derive(Clone, Default)]
    struct Plain {
        days: BTreeMap<String, Vec<u8>>,
        pending: BTreeMap<String, Vec<String>>,
        forks: bool,
        broken: Option<String>,
    }

    impl RecordSource for Plain {
        fn tip(&self) -> Option<String> {
            Some("tip".into())
        }
        fn committed_days(&self) -> Result<Vec<(String, String)>, SourceError> {
            Ok(committed(&self.days))
        }
        fn changed_days(&self, _: &str) -> Result<Option<Vec<Moved>>, SourceError> {
            Ok(None)
        }
        fn committed_bytes(&self, blob: &str, _: Option<&[u8]>) -> Result<Vec<u8>, SourceError> {
            self.days
                .iter()
                .find(|(d, b)| {
                    fingerprint::sha256_hex(b) == blob && self.broken.as_ref() != Some(*d)
                })
                .map(|(_, b)| b.clone())
                .ok_or_else(|| format!("cannot read {blob}").into())
        }
        fn pending(&self) -> &BTreeMap<String, Vec<String>> {
            &self.pending
        }
        fn fork(&self) -> Option<Box<dyn RecordSource + Send>> {
            self.forks
                .then(|| Box::new(self.clone()) as Box<dyn RecordSource + Send>)
        }
        fn reread(&self, day: &str) -> Result<(Option<String>, Vec<String>), SourceError> {
            let blob = self.days.get(day).map(|b| fingerprint::sha256_hex(b));
            Ok((blob, self.pending.get(day).cloned().unwrap_or_default()))
        }
    }

    /// Every row of every record cache table, as text, in a fixed order.
    fn dump(conn: &rusqlite::Connection) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        for table in [
            "day_files",
            "entries",
            "entry_refs",
            "retractions",
            "supersedes",
        ] {
            let mut stmt = conn.prepare(&format!("SELECT * FROM {table}")).unwrap();
            let n = stmt.column_count();
            let mut rows: Vec<Vec<String>> = stmt
                .query_map([], |r| {
                    let mut row = vec![table.to_string()];
                    for i in 0..n {
                        row.push(match r.get_ref(i)? {
                            rusqlite::types::ValueRef::Text(t) => {
                                String::from_utf8_lossy(t).into_owned()
                            }
                            other => format!("{other:?}"),
                        });
                    }
                    Ok(row)
                })
                .unwrap()
                .map(Result::unwrap)
                .collect();
            rows.sort();
            out.extend(rows);
        }
        out
    }

    /// The (day, id, status) of the `entries` rows of a [`dump`].
    fn rows_of(dump: &[Vec<String>]) -> Vec<(String, String, String)> {
        // Each row starts with its table's name: `entries`, file, day, seq, id, …, status (11).
        dump.iter()
            .filter(|r| r[0] == "entries")
            .map(|r| (r[2].clone(), r[4].clone(), r[11].clone()))
            .collect()
    }

    /// A bulk load (an empty cache, more than [`BULK_DAYS`] days) read on a second thread gives
    /// the rows the one-thread load gives, for days committed as they are, edited, deleted,
    /// only in the working tree and with journal lines; a day that cannot be read fails both.
    #[test]
    fn a_bulk_load_read_on_its_own_thread_gives_the_rows_of_one_thread() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("_librarian/sessions");
        std::fs::create_dir_all(&dir).unwrap();
        let mut src = Plain::default();
        for n in 0..BULK_DAYS + 30 {
            let day = format!("2026-{:02}-{:02}", 1 + n / 28, 1 + n % 28);
            let mut text = dayfile::append_bytes(0, true, &day, &entry_line(&format!("{day}a")));
            text.push_str(&format!("{}\n", entry_line(&format!("{day}b"))));
            if n % 7 != 3 {
                src.days.insert(day.clone(), text.clone().into_bytes());
            }
            match n % 7 {
                0 => text = text.replace(&format!("s{day}b"), "edited"),
                1 => text.push_str(&format!("{}\n", entry_line(&format!("{day}w")))),
                2 => {
                    let line = entry_line(&format!("{day}j"));
                    text.push_str(&format!("{line}\n"));
                    src.pending.insert(day.clone(), vec![line]);
                }
                _ => {}
            }
            if n % 7 != 4 {
                std::fs::write(dir.join(format!("{day}.md")), text).unwrap();
            }
        }
        let load = |src: &Plain| {
            let mut conn = db();
            let tx = conn.transaction().unwrap();
            let r = refresh(&tx, t.path(), src, Scope::Full);
            tx.commit().unwrap();
            r.map(|r| (r.files_read, r.entries_read, dump(&conn)))
        };
        let one = load(&src).unwrap();
        let two = load(&Plain {
            forks: true,
            ..src.clone()
        })
        .unwrap();
        assert_eq!(one, two);
        assert_eq!(one.0, BULK_DAYS + 30);
        let statuses: BTreeSet<String> = rows_of(&load(&src).unwrap().2)
            .into_iter()
            .map(|(_, _, s)| s)
            .collect();
        assert_eq!(
            statuses,
            [
                "committed",
                "deleted",
                "edited after commit",
                "pending",
                "unverified"
            ]
            .map(String::from)
            .into()
        );
        let broken = Plain {
            forks: true,
            broken: Some("2026-02-01".into()),
            ..src.clone()
        };
        assert!(load(&broken).is_err());
        assert!(load(&Plain {
            forks: false,
            ..broken
        })
        .is_err());
    }

    /// A refresh that finds most of the days changed, or more than a bulk's worth, reads them
    /// on the reading thread (and past half of the days as a bulk load, the indexes dropped and
    /// built again): the cache then holds what a load into an empty one holds, each stale day's
    /// old rows gone, a removed day file's day gone, the indexes in place.
    #[test]
    fn a_refill_of_many_stale_days_gives_the_rows_of_a_fresh_load() {
        let days = 3 * BULK_DAYS;
        for (changed, forks) in [
            (days * 2 / 3, true),
            (BULK_DAYS + 5, true),
            (days * 2 / 3, false),
        ] {
            let t = tempfile::tempdir().unwrap();
            let dir = t.path().join("_librarian/sessions");
            std::fs::create_dir_all(&dir).unwrap();
            let mut src = Plain {
                forks,
                ..Plain::default()
            };
            let name = |n: usize| format!("2025-{:02}-{:02}", 1 + n / 28, 1 + n % 28);
            for n in 0..days {
                let day = name(n);
                let text = dayfile::append_bytes(0, true, &day, &entry_line(&format!("{day}a")));
                src.days.insert(day.clone(), text.clone().into_bytes());
                std::fs::write(dir.join(format!("{day}.md")), text).unwrap();
            }
            let mut conn = db();
            run(&mut conn, t.path(), &src, Scope::Full);
            for n in 0..changed {
                let file = dir.join(format!("{}.md", name(n)));
                match n % 10 {
                    0 => std::fs::remove_file(&file).unwrap(),
                    _ => {
                        let mut text = std::fs::read_to_string(&file).unwrap();
                        text.push_str(&format!("{}\n", entry_line(&format!("{}w", name(n)))));
                        std::fs::write(&file, text).unwrap();
                    }
                }
            }
            let report = run(&mut conn, t.path(), &src, Scope::Full);
            assert_eq!(report.files_read, changed, "{changed}");
            let mut fresh = db();
            run(&mut fresh, t.path(), &src, Scope::Full);
            let without_rid = |conn: &rusqlite::Connection| -> Vec<Vec<String>> {
                let mut rows = dump(conn);
                for row in rows.iter_mut().filter(|r| r[0] == "entries") {
                    row.pop();
                }
                rows.sort();
                rows
            };
            assert_eq!(without_rid(&conn), without_rid(&fresh), "{changed}");
            let indexes: i64 = conn
                .query_row(
                    "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name LIKE 'entr%'",
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(indexes, 7, "{changed}");
        }
    }

    fn db() -> rusqlite::Connection {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch(crate::index::schema::CREATE).unwrap();
        conn.execute_batch(crate::index::schema::CREATE_RECORDS)
            .unwrap();
        conn.execute_batch(crate::index::schema::CREATE_RECORD_INDEXES)
            .unwrap();
        conn
    }

    fn run(
        conn: &mut rusqlite::Connection,
        root: &Path,
        src: &dyn RecordSource,
        scope: Scope<'_>,
    ) -> EntriesRefresh {
        let tx = conn.transaction().unwrap();
        let r = refresh(&tx, root, src, scope).unwrap();
        tx.commit().unwrap();
        r
    }

    fn rows(conn: &rusqlite::Connection) -> Vec<(String, String, String)> {
        conn.prepare("SELECT day, id, status FROM entries ORDER BY day, seq")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    fn row(day: &str, id: &str, status: &str) -> (String, String, String) {
        (day.into(), id.into(), status.into())
    }

    #[test]
    fn quick_refresh_checks_the_newest_files_and_trusts_the_folder_mtime() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("_librarian/sessions");
        std::fs::create_dir_all(&dir).unwrap();
        for day in ["2026-11-01", "2026-11-29", "2026-11-30"] {
            std::fs::write(
                dir.join(format!("{day}.md")),
                dayfile::append_bytes(0, true, day, &entry_line(day)),
            )
            .unwrap();
        }
        age(&dir);
        let mut conn = db();
        let none = NoRecord::default();
        run(&mut conn, t.path(), &none, Scope::Full);
        assert_eq!(rows(&conn).len(), 3);
        let append = |day: &str, id: &str| {
            let p = dir.join(format!("{day}.md"));
            let mut text = std::fs::read_to_string(&p).unwrap();
            text.push_str(&format!("{}\n", entry_line(id)));
            std::fs::write(&p, text).unwrap();
        };
        append("2026-11-30", "today-2");
        append("2026-11-01", "old-2");
        age(&dir);
        let r = run(&mut conn, t.path(), &none, Scope::Quick(&[]));
        assert_eq!(
            (r.files_read, rows(&conn).len()),
            (1, 4),
            "the newest file is re-read, the old one is not"
        );
        let r = run(
            &mut conn,
            t.path(),
            &none,
            Scope::Quick(&["2026-11-01".to_string()]),
        );
        assert_eq!(
            (r.files_read, rows(&conn).len()),
            (1, 5),
            "a day asked for is checked too"
        );
        append("2026-11-29", "mid-2");
        run(&mut conn, t.path(), &none, Scope::Full);
        assert_eq!(rows(&conn).len(), 6, "a full refresh sees every change");
        assert!(rows(&conn).iter().all(|(_, _, s)| s == "unverified"));
    }

    #[test]
    fn the_record_is_the_source_and_the_working_file_only_evidence() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("_librarian/sessions");
        std::fs::create_dir_all(&dir).unwrap();
        let day = "2026-11-30";
        let committed = dayfile::append_bytes(0, true, day, &entry_line("a"));
        std::fs::write(dir.join("2026-11-30.md"), &committed).unwrap();
        let mut src = Fake {
            tip: Some("t1".into()),
            ..Default::default()
        };
        src.days.insert(day.into(), committed.clone().into_bytes());
        let mut conn = db();
        run(&mut conn, t.path(), &src, Scope::Full);
        assert_eq!(rows(&conn), [row(day, "a", "committed")]);
        let reads = src.reads.get();
        let r = run(&mut conn, t.path(), &src, Scope::Full);
        assert_eq!(
            (r.files_read, src.reads.get()),
            (0, reads),
            "nothing changed, nothing read"
        );

        std::fs::write(dir.join("2026-11-30.md"), committed.replace("sa", "edited")).unwrap();
        run(&mut conn, t.path(), &src, Scope::Full);
        assert_eq!(rows(&conn), [row(day, "a", "edited after commit")]);
        let json: String = conn
            .query_row("SELECT json FROM entries", [], |r| r.get(0))
            .unwrap();
        assert!(
            json.contains("\"summary\":\"sa\""),
            "the committed text: {json}"
        );

        std::fs::remove_file(dir.join("2026-11-30.md")).unwrap();
        run(&mut conn, t.path(), &src, Scope::Full);
        assert_eq!(rows(&conn), [row(day, "a", "deleted")]);

        // From here the sessions folder's mtime is trusted: quick refreshes are targeted.
        age(&dir);
        run(&mut conn, t.path(), &src, Scope::Full);
        let pending = entry_line("p");
        src.pending.insert(day.into(), vec![pending]);
        let r = run(&mut conn, t.path(), &src, Scope::Quick(&[]));
        assert_eq!(
            (r.files_read, rows(&conn)),
            (1, vec![row(day, "a", "deleted"), row(day, "p", "pending")]),
            "a journal change is seen without a working file"
        );

        src.pending.clear();
        src.days.remove(day);
        src.tip = Some("t2".into());
        let r = run(&mut conn, t.path(), &src, Scope::Quick(&[]));
        assert_eq!(
            (r.files_removed, rows(&conn).len()),
            (1, 0),
            "a day the record lost goes"
        );
    }

    /// A capture that lands between the record snapshot and the read of the working file is
    /// committed, not unverified; a line nobody recorded stays unverified.
    #[test]
    fn a_line_the_snapshot_missed_is_judged_against_a_second_read() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("_librarian/sessions");
        std::fs::create_dir_all(&dir).unwrap();
        let day = "2026-11-30";
        let first = dayfile::append_bytes(0, true, day, &entry_line("a"));
        let second = format!("{first}{}\n", entry_line("b"));
        std::fs::write(dir.join("2026-11-30.md"), &second).unwrap();
        let mut src = Fake {
            tip: Some("t1".into()),
            ..Default::default()
        };
        src.days.insert(day.into(), first.clone().into_bytes());
        src.later = Some(BTreeMap::from([(
            day.to_string(),
            second.clone().into_bytes(),
        )]));
        let mut conn = db();
        run(&mut conn, t.path(), &src, Scope::Full);
        assert_eq!(
            rows(&conn),
            [row(day, "a", "committed"), row(day, "b", "committed")]
        );

        let forged = format!("{second}{}\n", entry_line("f"));
        std::fs::write(dir.join("2026-11-30.md"), &forged).unwrap();
        run(&mut conn, t.path(), &src, Scope::Full);
        assert_eq!(rows(&conn)[2], row(day, "f", "unverified"));
    }
}
