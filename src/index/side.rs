//! The record cache of a new index, built beside it: while one thread loads the notes (FTS5
//! tokenising is serial), another fills the record cache into a database of its own, which is
//! then copied in whole (SQLite's transfer of identical tables copies their pages' records
//! without decoding them). Once the notes are in, the side build stops between two days and the
//! building thread fills the rest itself, after copying what the side build had: a vault of few
//! notes and many days is not filled twice over. A side build that fails leaves the cache
//! empty, for the first refresh to fill as it would have without it.

use super::entries::{self, EntriesRefresh, RecordSource, Scope};
use super::{schema, IndexError};
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// Opens the record for the side build, on its thread (a git repository is not shared).
pub(crate) type OpenRecord<'a> = &'a (dyn Fn() -> Result<Box<dyn RecordSource>, IndexError> + Sync);

/// The record cache's tables, copied in this order.
const TABLES: [&str; 5] = [
    "day_files",
    "entries",
    "entry_refs",
    "retractions",
    "supersedes",
];

/// Where the side database of the index being built at `tmp` goes.
pub(crate) fn path_for(tmp: &Path) -> PathBuf {
    tmp.with_extension(format!("records-{}", std::process::id()))
}

/// Fills a new database at `path` with the record cache of the vault at `root`, until `stop`
/// is set ([`Scope::Cold`]).
pub(crate) fn build(
    path: &Path,
    root: &Path,
    open: OpenRecord<'_>,
    stop: &AtomicBool,
) -> Result<EntriesRefresh, IndexError> {
    crate::failpoint::check("index-side-build")?;
    let _ = std::fs::remove_file(path);
    let mut conn = Connection::open(path)?;
    conn.execute_batch("PRAGMA page_size=8192; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;")?;
    let tx = conn.transaction()?;
    tx.execute_batch(
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;",
    )?;
    tx.execute_batch(schema::CREATE_RECORDS)?;
    tx.execute_batch(schema::CREATE_RECORD_INDEXES)?;
    let src = open()?;
    let report = entries::refresh(&tx, root, src.as_ref(), Scope::Cold(stop))?;
    tx.commit()?;
    Ok(report)
}

/// Copies the record cache built at `side` into `conn`'s empty one, with the `meta` rows that
/// say what it reflects. When the side build stopped part-way (`filled.stopped`), the rest is
/// filled here from the record `open` opens, in the same transaction, and the record indexes
/// are built once, at its end. On failure the cache is emptied again (nothing half copied
/// stays). Returns what the whole fill did.
pub(crate) fn copy_in(
    conn: &Connection,
    side: &Path,
    filled: EntriesRefresh,
    (root, open): (&Path, OpenRecord<'_>),
) -> Result<EntriesRefresh, IndexError> {
    conn.execute(
        "ATTACH DATABASE ?1 AS side",
        [side.to_string_lossy().as_ref()],
    )?;
    let copied = copy_tables(conn, filled, root, open);
    if copied.is_err() {
        let _ = empty(conn);
    }
    conn.execute_batch("DETACH DATABASE side")?;
    copied
}

fn copy_tables(
    conn: &Connection,
    mut filled: EntriesRefresh,
    root: &Path,
    open: OpenRecord<'_>,
) -> Result<EntriesRefresh, IndexError> {
    let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Deferred)?;
    // A stopped side build has no record indexes; the transfer wants the same on both sides.
    if filled.stopped {
        tx.execute_batch(schema::DROP_RECORD_INDEXES)?;
    }
    for table in TABLES {
        tx.execute_batch(&format!(
            "INSERT INTO main.{table} SELECT * FROM side.{table}"
        ))?;
        crate::failpoint::check("index-side-copy")?;
    }
    tx.execute_batch("INSERT OR REPLACE INTO main.meta SELECT * FROM side.meta")?;
    let by_side = filled.files_read;
    if filled.stopped {
        let src = open()?;
        filled.absorb(entries::refresh(&tx, root, src.as_ref(), Scope::Full)?);
        filled.stopped = false;
        crate::failpoint::check("index-side-rest")?;
    }
    tx.commit()?;
    trace(by_side, filled.files_read - by_side);
    Ok(filled)
}

/// The variable that has a build say on stderr how its record cache was filled.
pub(crate) const TRACE_ENV: &str = "RUTTER_INDEX_TRACE";

/// Says on stderr, when [`TRACE_ENV`] is set, how many day files the side build filled and how
/// many the building thread filled after it.
fn trace(by_side: usize, after: usize) {
    if std::env::var_os(TRACE_ENV).is_some() {
        eprintln!("git-rutter: index: record cache: {by_side} day file(s) by the side build, {after} after it");
    }
}

/// Empties the record cache, and the `meta` rows that would claim it is filled.
fn empty(conn: &Connection) -> Result<(), rusqlite::Error> {
    for table in TABLES {
        conn.execute_batch(&format!("DELETE FROM main.{table}"))?;
    }
    conn.execute_batch("DELETE FROM main.meta WHERE key IN (SELECT key FROM side.meta)")
}

/// Removes the side database.
pub(crate) fn remove(path: &Path) {
    let _ = std::fs::remove_file(path);
}

/// Removes what a build of the index at `index` killed part-way left beside it: its
/// `<stem>.building-<pid>` and `<stem>.records-<pid>` files (each tens of megabytes) whose
/// process is gone. A build still running keeps its own.
pub(crate) fn sweep_leftovers(index: &Path) {
    let (Some(dir), Some(stem)) = (index.parent(), index.file_stem()) else {
        return;
    };
    let stem = stem.to_string_lossy();
    let Ok(names) = std::fs::read_dir(dir) else {
        return;
    };
    for name in names
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
    {
        let pid = ["building-", "records-"].iter().find_map(|kind| {
            name.strip_prefix(&format!("{stem}.{kind}"))?
                .parse::<i32>()
                .ok()
        });
        let gone = pid
            .and_then(rustix::process::Pid::from_raw)
            .is_some_and(|p| rustix::process::test_kill_process(p) == Err(rustix::io::Errno::SRCH));
        if gone {
            let _ = std::fs::remove_file(dir.join(&name));
        }
    }
}
