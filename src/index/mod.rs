//! The disposable index: SQLite with FTS5 over the notes, plus a cache of the record (every entry
//! and retraction with its status), so search, `recent` and enrichment never re-read history.
//! The only module that touches rusqlite.
//!
//! Where it lives: `LIBRARIAN_DB_PATH`, else `.git/rutter/index.sqlite` in a git vault, else the
//! per-vault XDG state folder ([`Place`]). It stores its schema version and the canonical vault
//! path: a version mismatch or a corrupt file at the default location is rebuilt, and so is an
//! index in the vault's own `.git/` that names another path (the vault was moved or copied); at
//! `LIBRARIAN_DB_PATH` or in the XDG folder an index built for another vault is refused unless
//! `reindex --force` takes it over. Every open passes [`guard::check`] first.

pub(crate) mod cited;
pub(crate) mod complete;
pub(crate) mod entries;
pub(crate) mod fresh;
pub(crate) mod frontmatter;
mod grep;
pub(crate) mod guard;
pub(crate) mod health;
pub(crate) mod identity;
pub(crate) mod notes;
pub(crate) mod partial;
mod rank;
pub(crate) mod reads;
pub(crate) mod recent_rows;
mod records_fresh;
pub(crate) mod rescan;
pub(crate) mod schema;
pub(crate) mod search;
pub(crate) mod short_ids;
pub(crate) mod side;
pub(crate) mod snapshot;
mod snippet;
pub(crate) mod supersede;
pub(crate) mod walk;
pub(crate) mod watcher;

use crate::vault::Vault;
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Environment variable that overrides the index location.
pub(crate) const DB_ENV: &str = "LIBRARIAN_DB_PATH";

/// Why a [`entries::RecordSource`] could not read the record: its own error (recall's source
/// gives the store's), kept whole so a caller can still tell what it was.
pub(crate) type SourceError = Box<dyn std::error::Error + Send + Sync>;

/// Errors from the index.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("index: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("the index {db} was built for the vault {theirs}, not {ours}")]
    OtherVault {
        db: PathBuf,
        theirs: String,
        ours: String,
    },
    #[error("{0} (LIBRARIAN_DB_PATH) is not an index git-rutter made (the TypeScript version's librarian.db, or another program's file); git-rutter never writes it, not even with --force")]
    Foreign(PathBuf),
    #[error("{path} is {what}, not a regular file of the index's own: git-rutter never opens the index through a link, a second name or a pipe")]
    NotAFile { path: PathBuf, what: String },
    #[error("the index {} cannot be written ({cause}): git-rutter brings it up to date before each answer", path.display())]
    Unwritable { path: PathBuf, cause: String },
    #[error("index: {0}")]
    Io(#[from] std::io::Error),
    /// The record could not be read (the source's own error: a store error, from recall's).
    #[error("reading the record: {0}")]
    Record(#[source] SourceError),
}

impl crate::hint::Hinted for IndexError {
    fn hint(&self) -> Option<String> {
        match self {
            IndexError::Unwritable { .. } => Some(UNWRITABLE_HINT.into()),
            IndexError::OtherVault { .. } => {
                Some("Run `git rutter reindex --force` to take it over.".into())
            }
            IndexError::Foreign(_) => Some(
                "Unset LIBRARIAN_DB_PATH (git-rutter keeps its index in .git/rutter/ by default), or point it at a new file.".into(),
            ),
            IndexError::NotAFile { .. } => {
                Some("Remove it, and the next command rebuilds the index.".into())
            }
            _ => None,
        }
    }

    /// Another vault's index, or a file that is no index, is refused with nothing changed.
    fn users_to_fix(&self) -> bool {
        matches!(self, IndexError::OtherVault { .. } | IndexError::Foreign(_))
    }
}

/// An open index for one vault.
pub(crate) struct Index {
    pub(crate) conn: Connection,
    path: PathBuf,
    root: PathBuf,
    /// Why the index was (re)built on open, if it was.
    pub built: Option<String>,
    /// The vault path the index named when it was rebuilt because the vault was moved or
    /// copied (its own `.git/` came along), for the note a command prints.
    pub(crate) moved_from: Option<String>,
    /// What the side build put in the record cache when the index was built, reported by the
    /// first refresh of the cache ([`side`]).
    records_built: std::sync::Mutex<Option<entries::EntriesRefresh>>,
    /// Phrase counts a search made inside a read transaction, stored when it ends.
    unstored_counts: rank::Unstored,
    /// The notes' sizes the ranking read, kept for the next search.
    sizes: rank::Sizes,
}

/// Where an index lives, which says who else can have built the file found there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// `LIBRARIAN_DB_PATH`: a file the user chose, which any vault may name.
    Chosen,
    /// `.git/rutter/` of the vault's own repository (of its worktree): only this vault, under
    /// its path now or a former one (moved, copied with `cp -a`, restored from a backup), built
    /// what is there, so an index naming another path is rebuilt, never refused.
    OwnGitDir,
    /// The per-user data folder of a vault outside git, named by a hash of its path.
    UserData,
}

/// The index location for a vault, and what kind of place it is.
pub(crate) fn locate(vault: &Vault) -> (PathBuf, Place) {
    match std::env::var_os(DB_ENV).filter(|v| !v.is_empty()) {
        Some(p) => (
            crate::vault::expand_tilde(&p.to_string_lossy()),
            Place::Chosen,
        ),
        // Per worktree: an index names the one vault root it serves.
        None => (
            vault.worktree_state_dir().join("index.sqlite"),
            match vault.git_dir {
                Some(_) => Place::OwnGitDir,
                None => Place::UserData,
            },
        ),
    }
}

/// The index location for a vault, and whether `LIBRARIAN_DB_PATH` chose it.
pub fn location(vault: &Vault) -> (PathBuf, bool) {
    let (path, place) = locate(vault);
    (path, place == Place::Chosen)
}

/// Refuses, without building anything, an index that [`Index::open`] would refuse for its
/// owner: one another vault built at `LIBRARIAN_DB_PATH` or in the XDG folder, or a file at
/// `LIBRARIAN_DB_PATH` that is not a current git-rutter index. In the vault's own `.git/`
/// nothing is refused for its owner (a missing, outdated, unreadable or moved index is
/// rebuilt). A name of the wrong kind ([`guard`]) is not opened here but left to the open,
/// which refuses it: the MCP server still answers `initialize` and names it in each tool call.
pub fn check_owner(vault: &Vault) -> Result<(), IndexError> {
    let (path, place) = locate(vault);
    if place == Place::OwnGitDir || guard::check(&path, place).is_err() || !path.exists() {
        return Ok(());
    }
    let ours = vault.root.to_string_lossy().into_owned();
    match read_meta(&path, place) {
        Ok((Some(version), Some(theirs))) if version == schema::SCHEMA_VERSION => {
            if theirs == ours {
                Ok(())
            } else {
                Err(IndexError::OtherVault {
                    db: path,
                    theirs,
                    ours,
                })
            }
        }
        _ if place == Place::Chosen => Err(IndexError::Foreign(path)),
        _ => Ok(()),
    }
}

/// Opens the index file at `path` once [`guard::check`] passed: every connection to an index
/// is made here or by [`connect`], which calls it.
pub(crate) fn open_db(
    path: &Path,
    place: Place,
    flags: OpenFlags,
) -> Result<Connection, IndexError> {
    guard::check(path, place)?;
    Ok(Connection::open_with_flags(path, flags)?)
}

/// The index's schema version and vault, read through a read-only connection.
fn read_meta(path: &Path, place: Place) -> Result<(Option<String>, Option<String>), IndexError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = open_db(path, place, flags)?;
    conn.busy_timeout(Duration::from_secs(5))?;
    Ok(conn.query_row(META_SQL, [], |r| Ok((r.get(0)?, r.get(1)?)))?)
}

/// Whether the database at `path` is an index git-rutter made (its `meta` table names a
/// `rutter-index` schema, of any version), so `reindex --force` may replace it.
fn made_by_us(path: &Path, place: Place) -> bool {
    read_meta(path, place)
        .is_ok_and(|(version, _)| version.is_some_and(|v| v.starts_with("rutter-index ")))
}

/// Both identifying values of the `meta` table in one query.
const META_SQL: &str = "SELECT (SELECT value FROM meta WHERE key = 'schema_version'), (SELECT value FROM meta WHERE key = 'vault')";

enum Probe {
    Ready(Connection),
    Missing,
    /// A current index built for the vault at this path.
    OtherVault(String),
    Discard(String),
}

impl Index {
    /// Opens the vault's index, building it when it is missing and rebuilding it when it is
    /// outdated, corrupt, in the vault's own `.git/` but naming another path (moved or copied),
    /// or (with `force`) another vault's. It is not refreshed here.
    pub fn open(vault: &Vault, force: bool) -> Result<Index, IndexError> {
        Index::open_with(vault, force, None)
    }

    /// [`Index::open`]; when the index is built, its record cache is filled from the record
    /// `records` opens, on another thread while the notes load ([`side`]).
    pub(crate) fn open_with(
        vault: &Vault,
        force: bool,
        records: Option<side::OpenRecord<'_>>,
    ) -> Result<Index, IndexError> {
        let (path, place) = locate(vault);
        if let Some(cause) = unwritable(&path) {
            return Err(IndexError::Unwritable { path, cause });
        }
        prepare_folder(&path, place)?;
        let ours = vault.root.to_string_lossy().into_owned();
        let mut building = None;
        let mut moved_from = None;
        let built = loop {
            let why = match probe(&path, place, &ours)? {
                Probe::Ready(conn) => {
                    return Ok(Index {
                        conn,
                        path,
                        root: vault.root.clone(),
                        built: None,
                        moved_from: None,
                        records_built: Default::default(),
                        unstored_counts: Default::default(),
                        sizes: Default::default(),
                    });
                }
                Probe::Missing => MISSING.to_string(),
                // Only at a place another vault can share; in the vault's own .git/ the other
                // path is this vault's former one.
                Probe::OtherVault(theirs) if place != Place::OwnGitDir && !force => {
                    return Err(IndexError::OtherVault {
                        db: path,
                        theirs,
                        ours,
                    });
                }
                Probe::OtherVault(theirs) => {
                    let why = format!("it named the vault at {theirs}");
                    moved_from = (place == Place::OwnGitDir).then_some(theirs);
                    why
                }
                // At LIBRARIAN_DB_PATH, only a file git-rutter made may be replaced: the
                // TypeScript version's librarian.db stays that version's, even with --force.
                Probe::Discard(_)
                    if place == Place::Chosen && (!force || !made_by_us(&path, place)) =>
                {
                    return Err(IndexError::Foreign(path))
                }
                Probe::Discard(why) => why,
            };
            if building.is_some() {
                if why != MISSING {
                    remove_db(&path)?;
                }
                break why;
            }
            // One build at a time: under the lock, look again (another process may have built
            // it meanwhile; two builds renamed over each other would share one WAL file).
            building = Some(build_lock(&path)?);
        };
        let records_built = build_new(&path, &vault.root, records)?;
        let conn = connect(&path, place)?;
        drop(building);
        Ok(Index {
            conn,
            path,
            root: vault.root.clone(),
            built: Some(built),
            moved_from,
            records_built: std::sync::Mutex::new(records_built),
            unstored_counts: Default::default(),
            sizes: Default::default(),
        })
    }

    /// The database file.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The vault root the index serves.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Re-reads the notes that changed, in one transaction.
    pub fn refresh_notes(&mut self) -> Result<notes::Refresh, IndexError> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let notes = rescan::full(&tx, &self.root)?;
        tx.commit()?;
        Ok(notes)
    }

    /// Brings the record cache in line with `src` and the working day files (see
    /// [`entries::refresh`]), in one transaction.
    pub(crate) fn refresh_records(
        &self,
        src: &dyn entries::RecordSource,
        scope: entries::Scope<'_>,
    ) -> Result<entries::EntriesRefresh, IndexError> {
        // A shared borrow, so a reader holding `&Index` (search) can fill a cache never filled.
        let tx = rusqlite::Transaction::new_unchecked(
            &self.conn,
            rusqlite::TransactionBehavior::Immediate,
        )?;
        let mut report = entries::refresh(&tx, &self.root, src, scope)?;
        tx.commit()?;
        let built = self.records_built.lock().map(|mut b| b.take());
        if let Ok(Some(built)) = built {
            report.absorb(built);
        }
        Ok(report)
    }

    /// Builds the record cache's words index when it is not built yet (spec/recall.md "Finding
    /// entries by words"): once, before the first search by words; whether it was built now.
    pub(crate) fn grep_ready(&self) -> Result<bool, IndexError> {
        if grep::built(&self.conn)? {
            return Ok(false);
        }
        let tx = rusqlite::Transaction::new_unchecked(
            &self.conn,
            rusqlite::TransactionBehavior::Immediate,
        )?;
        let built = grep::build(&tx)?;
        tx.commit()?;
        Ok(built)
    }

    /// Runs `f` inside one read transaction: one snapshot and one lock acquisition for all of
    /// its queries. Inside a transaction already, `f` runs in it.
    pub(crate) fn read<T>(
        &self,
        f: impl FnOnce(&Index) -> Result<T, IndexError>,
    ) -> Result<T, IndexError> {
        if !self.conn.is_autocommit() {
            return f(self);
        }
        self.conn.execute_batch("BEGIN")?;
        let out = f(self);
        let end = if out.is_ok() { "COMMIT" } else { "ROLLBACK" };
        self.conn.execute_batch(end)?;
        rank::store_unstored(self);
        out
    }

    /// Writes the database again without the pages its deleted rows left (`VACUUM`, after the
    /// write-ahead log is folded in and emptied): after a purge, no byte of the purged entry
    /// stays in the index's files (spec/purge.md).
    pub(crate) fn compact(&self) -> Result<(), IndexError> {
        self.conn.execute_batch(
            "PRAGMA wal_checkpoint(TRUNCATE); VACUUM; PRAGMA wal_checkpoint(TRUNCATE);",
        )?;
        Ok(())
    }

    /// How many notes are indexed.
    pub fn note_count(&self) -> Result<usize, IndexError> {
        let n: i64 = self
            .conn
            .query_row("SELECT count(*) FROM notes", [], |r| r.get(0))?;
        Ok(n as usize)
    }

    /// A value from the `meta` table.
    pub fn meta(&self, key: &str) -> Result<Option<String>, IndexError> {
        let v = self
            .conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()?;
        Ok(v)
    }

    /// Sets a value in the `meta` table.
    pub fn set_meta(&self, key: &str, value: &str) -> Result<(), IndexError> {
        self.conn.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)",
            [key, value],
        )?;
        Ok(())
    }

    /// Drops every table and rebuilds from the vault in one transaction (`reindex --force`);
    /// a concurrent reader keeps seeing the old index until it commits. The record cache is
    /// filled from `src` in the same transaction.
    pub(crate) fn rebuild(
        &mut self,
        src: &dyn entries::RecordSource,
    ) -> Result<(notes::Refresh, entries::EntriesRefresh), IndexError> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        drop_all(&tx)?;
        let notes = fill(&tx, &self.root)?;
        let records = entries::refresh(&tx, &self.root, src, entries::Scope::Full)?;
        tx.commit()?;
        Ok((notes, records))
    }
}

#[cfg(test)]
impl Index {
    /// An index in memory over the vault at `root`, filled from it, its day files read as a
    /// vault without a record reads them (tests).
    pub(crate) fn in_memory(root: &Path) -> Index {
        let mut conn = Connection::open_in_memory().expect("an in-memory database");
        grep::register(&conn).expect("the word test registers");
        rank::register(&conn).expect("the ranking registers");
        let tx = conn.transaction().expect("a transaction");
        fill(&tx, root).expect("the index fills");
        let none = entries::NoRecord::default();
        entries::refresh(&tx, root, &none, entries::Scope::Full).expect("the records fill");
        tx.commit().expect("the fill commits");
        Index {
            conn,
            path: PathBuf::from(":memory:"),
            root: root.to_path_buf(),
            built: None,
            moved_from: None,
            records_built: Default::default(),
            unstored_counts: Default::default(),
            sizes: Default::default(),
        }
    }
}

/// Opens an existing index and checks it is ours, current, and for this vault. A name of the
/// wrong kind ([`guard`]) is refused, never discarded: it was put there, and is the user's to
/// look at and remove.
fn probe(path: &Path, place: Place, ours: &str) -> Result<Probe, IndexError> {
    guard::check(path, place)?;
    if !path.exists() {
        return Ok(Probe::Missing);
    }
    let conn = match connect(path, place) {
        Ok(c) => c,
        Err(e) => return Ok(Probe::Discard(format!("unreadable ({e})"))),
    };
    let read = conn.query_row(META_SQL, [], |r| {
        Ok((
            r.get::<_, Option<String>>(0)?,
            r.get::<_, Option<String>>(1)?,
        ))
    });
    let (version, vault) = match read {
        Ok(v) => v,
        Err(e) => return Ok(Probe::Discard(format!("not a git-rutter index ({e})"))),
    };
    if version.as_deref() != Some(schema::SCHEMA_VERSION) {
        return Ok(Probe::Discard("its schema version changed".to_string()));
    }
    match vault {
        Some(v) if v == ours => Ok(Probe::Ready(conn)),
        Some(v) => Ok(Probe::OtherVault(v)),
        None => Ok(Probe::Discard("it names no vault".to_string())),
    }
}

/// Makes the folder the index goes in. The tool's own state folder is opened without following
/// a symlink (created when missing), so a symlinked `.git/rutter/` is refused; the folder of
/// `LIBRARIAN_DB_PATH`, a place the user chose, is created as it is named.
/// What to do about an index that cannot be written ([`IndexError::Unwritable`]; `status`
/// says the same).
pub(crate) const UNWRITABLE_HINT: &str = "Make its folder writable, or keep this vault's index in a file you can write: set LIBRARIAN_DB_PATH (e.g. `export LIBRARIAN_DB_PATH=~/.cache/rutter/notes-index.sqlite`).";

/// Why the index at `path` cannot be written, when the system says so before anything is
/// tried: the file, or the nearest folder of it that exists, is read-only to this user or on a
/// read-only file system. Reading such an index would answer with notes as they were, so
/// every reader refuses it with this reason rather than with a bare "permission denied".
pub(crate) fn unwritable(path: &Path) -> Option<String> {
    use rustix::fs::{access, Access};
    let denied = |p: &Path| match access(p, Access::WRITE_OK) {
        Err(e)
            if e == rustix::io::Errno::ACCESS
                || e == rustix::io::Errno::ROFS
                || e == rustix::io::Errno::PERM =>
        {
            Some(format!("{}: {}", p.display(), std::io::Error::from(e)))
        }
        _ => None,
    };
    if std::fs::symlink_metadata(path).is_ok() {
        if let Some(why) = denied(path) {
            return Some(why);
        }
    }
    let folder = path.ancestors().skip(1).find(|d| d.exists())?;
    denied(folder)
}

fn prepare_folder(path: &Path, place: Place) -> Result<(), IndexError> {
    let Some(dir) = path.parent() else {
        return Ok(());
    };
    match place {
        Place::Chosen => Ok(std::fs::create_dir_all(dir)?),
        Place::OwnGitDir | Place::UserData => crate::fsx::Dir::open_private(dir)
            .map(drop)
            .map_err(|e| IndexError::Io(std::io::Error::other(e.to_string()))),
    }
}

/// Why an index is built when there is none.
const MISSING: &str = "a new index";

/// How long opening an index waits for another process's build of it.
const BUILD_WAIT: Duration = Duration::from_secs(600);

/// The lock held while an index is built at `path`: `<name>.build-lock` beside it.
fn build_lock(path: &Path) -> Result<crate::lock::Lock, IndexError> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let dir = path.parent().unwrap_or(Path::new("."));
    let held = crate::fsx::Dir::open(dir)
        .map_err(|e| e.to_string())
        .and_then(|d| {
            crate::lock::Lock::named(
                &d,
                &format!("{name}.build-lock"),
                "index build lock",
                BUILD_WAIT,
            )
            .map_err(|e| e.to_string())
        });
    held.map_err(|why| {
        IndexError::Io(std::io::Error::other(format!(
            "cannot take the lock that keeps two builds of {} apart: {why}",
            path.display()
        )))
    })
}

/// Builds a complete index in a temporary file (no journal: nobody else sees it) and moves it
/// into place, so a reader never meets a half-built index; with `records`, the record cache is
/// built beside the notes ([`side`]) and copied in. The page cache is 16 MiB: with no journal,
/// pages beyond it are written to the file as the build goes (the OS keeps them), where a cache
/// as large as the whole file made the process as large as the index; 16 and not 32 so the two
/// builds together stay under the memory target (docs/performance.md).
fn build_new(
    path: &Path,
    root: &Path,
    records: Option<side::OpenRecord<'_>>,
) -> Result<Option<entries::EntriesRefresh>, IndexError> {
    // By path: SQLite cannot open relative to a folder handle. What sits at the index's names
    // was checked by `guard::check`.
    side::sweep_leftovers(path);
    let tmp = path.with_extension(format!("building-{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let side_path = side::path_for(&tmp);
    let mut conn = Connection::open(&tmp)?;
    conn.execute_batch(
        "PRAGMA page_size=8192; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-16384;",
    )?;
    let tx = conn.transaction()?;
    // The record cache fills on another thread while the notes load here, until they are in.
    // (The fail point: as if the notes were in before the side build's first day.)
    let stop = AtomicBool::new(crate::failpoint::active("index-side-stop"));
    let side = std::thread::scope(|scope| {
        let side = records.map(|open| scope.spawn(|| side::build(&side_path, root, open, &stop)));
        let filled = fill(&tx, root);
        stop.store(true, Ordering::Relaxed);
        let side = side.map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        filled.map(|_| side)
    })?;
    tx.commit()?;
    let records = match (side, records) {
        (Some(Ok(report)), Some(open)) => {
            side::copy_in(&conn, &side_path, report, (root, open)).ok()
        }
        _ => None,
    };
    side::remove(&side_path);
    conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))?;
    drop(conn);
    std::fs::rename(&tmp, path)?;
    Ok(records)
}

/// Creates every table in an empty database and loads the notes into them, with the bulk-load
/// settings and the secondary indexes built at the end. The record cache stays empty (no
/// `records_tip` in `meta`) until recall refreshes it from the record.
fn fill(tx: &rusqlite::Transaction<'_>, root: &Path) -> Result<notes::Refresh, rusqlite::Error> {
    tx.execute_batch(schema::CREATE)?;
    tx.execute_batch(schema::CREATE_RECORDS)?;
    tx.execute_batch(schema::CREATE_RECORD_INDEXES)?;
    tx.execute_batch(schema::BULK_LOAD)?;
    write_meta(tx, &root.to_string_lossy())?;
    let notes = rescan::full(tx, root)?;
    tx.execute_batch(schema::CREATE_INDEXES)?;
    tx.execute_batch(schema::BULK_DONE)?;
    Ok(notes)
}

/// How long a connection of [`connect`] waits for another writer.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

fn connect(path: &Path, place: Place) -> Result<Connection, IndexError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = open_db(path, place, flags)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.execute_batch("PRAGMA synchronous=NORMAL;")?;
    // One plan per statement, whatever values are bound: without it SQLite 3.54 marks the
    // parameter of lookups like `confirmed_to = ?1` as plan-changing and compiles the cached
    // statement again on every run with a new value: 14 % of a warm `librarian-search`, whose
    // hits each run four such lookups (issue 23). None of our plans depends on the values.
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )?;
    grep::register(&conn)?;
    rank::register(&conn)?;
    Ok(conn)
}

fn write_meta(tx: &rusqlite::Transaction<'_>, vault: &str) -> Result<(), rusqlite::Error> {
    let mut stmt = tx.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)")?;
    stmt.execute(["schema_version", schema::SCHEMA_VERSION])?;
    stmt.execute(["vault", vault])?;
    Ok(())
}

fn drop_all(tx: &rusqlite::Transaction<'_>) -> Result<(), rusqlite::Error> {
    let mut names: Vec<(bool, String)> = tx
        .prepare("SELECT sql LIKE 'CREATE VIRTUAL%', name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    // Virtual tables first: their shadow tables go with them.
    names.sort_by_key(|(virtual_table, _)| !*virtual_table);
    for (_, name) in names {
        tx.execute_batch(&format!(
            "DROP TABLE IF EXISTS \"{}\"",
            name.replace('"', "\"\"")
        ))?;
    }
    Ok(())
}

fn remove_db(path: &Path) -> Result<(), std::io::Error> {
    for suffix in guard::COMPANIONS {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        match std::fs::remove_file(PathBuf::from(p)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
