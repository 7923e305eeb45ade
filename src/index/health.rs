//! What `git rutter status` asks of the index, read-only and without building anything: where
//! it is, whether it is this vault's, how many notes and entries it holds, when it was last
//! written, and whether the notes changed since, compared by size and mtime with what the index
//! recorded. It also counts the vault's markdown notes, for the reference's zero-notes trap: a
//! vault with none is probably the wrong folder. With an index of this vault, both come from
//! its stat snapshot ([`super::snapshot`]): each recorded directory and note is stat'ed as the
//! freshness check does, and only directories that differ are listed again; without one, from
//! one walk of the vault. Like every
//! open of the index, it first looks at what sits at the index's names ([`super::guard`]), so
//! a FIFO planted there is named, never opened.

use super::watcher::{self, Current, NoAnswer};
use super::{fresh, guard, locate, schema, snapshot, walk, IndexError, Place, META_SQL};
use crate::vault::Vault;
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The index as `status` sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IndexState {
    pub path: PathBuf,
    /// `LIBRARIAN_DB_PATH` chose the location.
    pub overridden: bool,
    pub exists: bool,
    pub notes: Option<usize>,
    pub entries: Option<usize>,
    /// When the index was last written (its file or its write-ahead log), epoch milliseconds.
    pub updated_ms: Option<i64>,
    /// Why the index cannot serve this vault as it is.
    pub problem: Option<Problem>,
    /// Markdown notes in the vault, as the index walk finds them.
    pub vault_notes: usize,
    /// How the notes differ from the index; `None` when there is no usable index to compare.
    pub stale: Option<Staleness>,
    /// A running watcher (an MCP server's, or `git rutter watch`) vouched for the index, so
    /// commands stat no note.
    pub watched: bool,
}

/// Why an existing index cannot be used as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Problem {
    /// Built for another vault at `LIBRARIAN_DB_PATH` or in the XDG folder (refused until
    /// `reindex --force`).
    OtherVault(String),
    /// In the vault's own `.git/` but built when the vault was at this other path (it was
    /// moved or copied): rebuilt at its next use.
    Moved(String),
    /// One of its names (`path`) is `what`: a symlink, a second name, a FIFO or another
    /// non-file (refused until it is removed).
    NotAFile { path: String, what: String },
    /// Not a git-rutter index (at `LIBRARIAN_DB_PATH`, refused).
    Foreign,
    /// An older or newer schema, or unreadable: rebuilt at its next use (refused when
    /// `LIBRARIAN_DB_PATH` chose it).
    Outdated(String),
    /// It, or its folder, cannot be written (why): every reader refuses it
    /// ([`super::IndexError::Unwritable`]).
    Unwritable(String),
}

/// Notes added, changed and removed since the index last read them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Staleness {
    pub new: usize,
    pub changed: usize,
    pub removed: usize,
}

/// Looks at the vault's index without writing to it.
pub fn inspect(vault: &Vault) -> IndexState {
    let (path, place) = locate(vault);
    let mut state = IndexState {
        exists: std::fs::symlink_metadata(&path).is_ok(),
        updated_ms: written_ms(&path),
        path,
        overridden: place == Place::Chosen,
        notes: None,
        entries: None,
        problem: None,
        vault_notes: 0,
        stale: None,
        watched: false,
    };
    let walked = || walk::walk_notes(&vault.root);
    if let Some(why) = super::unwritable(&state.path) {
        state.problem = Some(Problem::Unwritable(why));
        state.vault_notes = walked().len();
        return state;
    }
    if let Err(e) = guard::check(&state.path, place) {
        state.problem = Some(refused(e));
        state.vault_notes = walked().len();
        return state;
    }
    if !state.exists {
        state.vault_notes = walked().len();
        return state;
    }
    let ours = vault.root.to_string_lossy();
    let read = read(&state.path, place, &ours, &vault.root);
    if !matches!(read, Ok(Read::Ours { .. })) {
        state.vault_notes = walked().len();
    }
    match read {
        Ok(Read::Ours {
            notes,
            entries,
            vault_notes,
            stale,
            watched,
        }) => {
            state.notes = Some(notes);
            state.entries = Some(entries);
            state.vault_notes = vault_notes;
            state.stale = Some(stale);
            state.watched = watched;
        }
        // In the vault's own .git/ the other path is this vault's former one: rebuilt.
        Ok(Read::OtherVault(theirs)) if place == Place::OwnGitDir => {
            state.problem = Some(Problem::Moved(theirs))
        }
        Ok(Read::OtherVault(theirs)) => state.problem = Some(Problem::OtherVault(theirs)),
        // Planted between the check above and the open.
        Err(e @ IndexError::NotAFile { .. }) => state.problem = Some(refused(e)),
        // An index chosen by LIBRARIAN_DB_PATH is never replaced without --force.
        Ok(Read::Outdated(_)) | Err(_) if place == Place::Chosen => {
            state.problem = Some(Problem::Foreign)
        }
        Ok(Read::Outdated(why)) => state.problem = Some(Problem::Outdated(why)),
        Err(e) => state.problem = Some(Problem::Outdated(format!("unreadable ({e})"))),
    }
    state
}

/// The token of the watcher that keeps the index current, if one does (`meta.watch_token`).
fn token(conn: &Connection) -> rusqlite::Result<Option<String>> {
    conn.query_row(
        "SELECT value FROM meta WHERE key = ?1",
        [watcher::TOKEN_KEY],
        |r| r.get(0),
    )
    .optional()
}

/// The problem a refusal of [`guard::check`] is.
fn refused(e: IndexError) -> Problem {
    match e {
        IndexError::NotAFile { path, what } => Problem::NotAFile {
            path: path.display().to_string(),
            what,
        },
        other => Problem::Outdated(format!("unreadable ({other})")),
    }
}

enum Read {
    Ours {
        notes: usize,
        entries: usize,
        /// Markdown notes in the vault now.
        vault_notes: usize,
        stale: Staleness,
        /// A watcher vouched for it.
        watched: bool,
    },
    OtherVault(String),
    Outdated(String),
}

fn read(path: &Path, place: Place, ours: &str, root: &Path) -> Result<Read, IndexError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = super::open_db(path, place, flags)?;
    conn.busy_timeout(Duration::from_secs(2))?;
    let meta = conn.query_row(META_SQL, [], |r| {
        Ok((
            r.get::<_, Option<String>>(0)?,
            r.get::<_, Option<String>>(1)?,
        ))
    });
    let (version, vault) = match meta {
        Ok(m) => m,
        Err(e) => return Ok(Read::Outdated(format!("not a git-rutter index ({e})"))),
    };
    if version.as_deref() != Some(schema::SCHEMA_VERSION) {
        return Ok(Read::Outdated(format!(
            "its schema is {}, this version uses {}",
            version.as_deref().unwrap_or("unknown"),
            schema::SCHEMA_VERSION
        )));
    }
    match vault {
        Some(v) if v == ours => {}
        Some(v) => return Ok(Read::OtherVault(v)),
        None => return Ok(Read::Outdated("it names no vault".into())),
    }
    // A watcher that vouches for the index spares the stat per note (asked before the read
    // transaction, so the read sees what it brought the index up to).
    let vouched = watcher::ask(path, root);
    if let Err(why) = &vouched {
        watcher::trace(&format_args!("full check ({why})"));
    }
    Ok(counts(&conn, root, vouched.ok())?)
}

/// The index's counts and how the notes differ from it, in one read transaction: from the
/// snapshot when it has one, else from a walk compared with the `notes` rows.
fn counts(conn: &Connection, root: &Path, vouched: Option<Current>) -> rusqlite::Result<Read> {
    conn.execute_batch("BEGIN")?;
    let current = match vouched {
        Some(c) if token(conn)?.as_deref() == Some(c.token.as_str()) => {
            watcher::trace(&format_args!("watcher ({})", c.how));
            true
        }
        Some(_) => {
            watcher::trace(&format_args!("full check ({})", NoAnswer::OtherToken));
            false
        }
        None => false,
    };
    let count = |table: &str| -> rusqlite::Result<usize> {
        conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| {
            r.get::<_, i64>(0)
        })
        .map(|n| n as usize)
    };
    let (notes, entries) = (count("notes")?, count("entries")?);
    if let Some((vault_notes, stale)) = from_snapshot(conn, root, current)? {
        conn.execute_batch("COMMIT")?;
        return Ok(Read::Ours {
            notes,
            entries,
            vault_notes,
            stale,
            watched: current,
        });
    }
    let notes_now = walk::walk_notes(root);
    let mut known: HashMap<String, (i64, i64)> = HashMap::with_capacity(notes);
    let mut stmt = conn.prepare("SELECT path, size, mtime_ns FROM notes")?;
    for row in stmt.query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))? {
        let (p, v): (String, (i64, i64)) = row?;
        known.insert(p, v);
    }
    drop(stmt);
    conn.execute_batch("COMMIT")?;
    Ok(Read::Ours {
        notes,
        entries,
        vault_notes: notes_now.len(),
        stale: compare(&mut known, &notes_now),
        watched: current,
    })
}

/// The vault's notes and how they differ from the index, from its snapshot: unless a watcher
/// vouched for the index (`current`: nothing is stale), every recorded directory and note is
/// stat'ed ([`fresh::stale_dirs`]); a directory whose stamp or any of
/// whose notes' stamps changed is listed again and compared by name, size and mtime, and a
/// subdirectory it holds that the snapshot does not is walked whole (its notes are new). `None`
/// when the snapshot cannot answer (none recorded, no row for the root, a malformed row): the
/// caller walks the vault.
fn from_snapshot(
    conn: &Connection,
    root: &Path,
    current: bool,
) -> rusqlite::Result<Option<(usize, Staleness)>> {
    let rows = snapshot::load_all(conn)?;
    let recorded: HashSet<&str> = rows.iter().map(|r| r.path.as_str()).collect();
    if !recorded.contains("") {
        return Ok(None);
    }
    let stale: BTreeSet<String> = match current {
        true => BTreeSet::new(),
        false => fresh::stale_dirs(root, &rows).into_iter().collect(),
    };
    let (mut notes, mut s) = (0, Staleness::default());
    for row in &rows {
        if !stale.contains(&row.path) {
            // Counted from the blob as it is: no name copied (100,000 of them on a heavy vault).
            let Some((recorded, unindexed)) = snapshot::tally(&row.blob) else {
                return Ok(None);
            };
            notes += recorded;
            s.new += unindexed;
            continue;
        }
        let Some(dir) = row.decode() else {
            return Ok(None);
        };
        let Some(scan) = walk::scan_one(root, &row.path) else {
            s.removed += dir.entries.iter().filter(|e| e.indexed).count();
            continue;
        };
        notes += scan.notes.len();
        let d = compare_dir(&dir.entries, &scan.notes);
        (s.new, s.changed, s.removed) =
            (s.new + d.new, s.changed + d.changed, s.removed + d.removed);
        for sub in &scan.subdirs {
            let path = scan.child(sub);
            if recorded.contains(path.as_str()) {
                continue;
            }
            let found: usize = walk::walk_dirs(root, &path)
                .iter()
                .map(|d| d.notes.len())
                .sum();
            notes += found;
            s.new += found;
        }
    }
    Ok(Some((notes, s)))
}

/// One directory's recorded notes against its listing, by name: a note not recorded, or
/// recorded but not indexed, is new; an indexed one with another size or mtime changed.
fn compare_dir(recorded: &[snapshot::Entry], listed: &[walk::Listed]) -> Staleness {
    let by_name: HashMap<&str, &snapshot::Entry> =
        recorded.iter().map(|e| (e.name.as_str(), e)).collect();
    let mut s = Staleness::default();
    let mut seen = 0;
    for n in listed {
        match by_name.get(n.name.as_str()) {
            Some(e) if e.indexed => {
                seen += 1;
                if e.size != n.size || e.stamp.mtime_ns != n.stamp.mtime_ns {
                    s.changed += 1;
                }
            }
            _ => s.new += 1,
        }
    }
    s.removed = recorded.iter().filter(|e| e.indexed).count() - seen;
    s
}

/// Compares the walk with the recorded `(size, mtime_ns)` by path; consumes `known`.
fn compare(known: &mut HashMap<String, (i64, i64)>, notes_now: &[walk::NoteFile]) -> Staleness {
    let mut s = Staleness::default();
    for f in notes_now {
        match known.remove(&f.path) {
            Some((size, mtime)) if size == f.size as i64 && mtime == f.mtime_ns => {}
            Some(_) => s.changed += 1,
            None => s.new += 1,
        }
    }
    s.removed = known.len();
    s
}

/// The newest modification time of the index file and its write-ahead log.
fn written_ms(path: &Path) -> Option<i64> {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    [path.to_path_buf(), PathBuf::from(wal)]
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok()?.modified().ok())
        .filter_map(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as i64)
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::Index;
    use crate::vault::{open, VaultSource};

    #[test]
    fn reports_counts_and_changes_without_writing() {
        let t = tempfile::tempdir().unwrap();
        crate::store::gitenv::init_repo(t.path()).unwrap();
        std::fs::write(t.path().join("a.md"), "# A\n").unwrap();
        std::fs::write(t.path().join("b.md"), "# B\n").unwrap();
        let vault = open(t.path(), VaultSource::Flag).unwrap();
        let missing = inspect(&vault);
        assert!(!missing.exists && missing.stale.is_none());
        assert_eq!(missing.vault_notes, 2);
        assert!(!missing.path.exists(), "inspect never builds an index");
        let index = Index::open(&vault, false).unwrap();
        drop(index);
        let fresh = inspect(&vault);
        assert_eq!((fresh.notes, fresh.entries), (Some(2), Some(0)));
        assert_eq!(fresh.stale, Some(Staleness::default()));
        assert!(fresh.updated_ms.is_some() && fresh.problem.is_none());
        std::fs::write(t.path().join("a.md"), "# A, longer now\n").unwrap();
        std::fs::write(t.path().join("c.md"), "# C\n").unwrap();
        std::fs::remove_file(t.path().join("b.md")).unwrap();
        let stale = inspect(&vault).stale.unwrap();
        assert_eq!((stale.new, stale.changed, stale.removed), (1, 1, 1));
    }

    /// The snapshot's answer is the walk's: new folders (walked whole), removed folders, notes
    /// added, edited and removed in place, and the vault's note count.
    #[test]
    fn the_snapshot_answers_what_the_walk_answers() {
        let t = tempfile::tempdir().unwrap();
        crate::store::gitenv::init_repo(t.path()).unwrap();
        let root = t.path();
        for p in ["a.md", "x/b.md", "x/y/c.md", "gone/d.md", "gone/deep/e.md"] {
            std::fs::create_dir_all(root.join(p).parent().unwrap()).unwrap();
            std::fs::write(root.join(p), format!("# {p}\n")).unwrap();
        }
        let vault = open(root, VaultSource::Flag).unwrap();
        drop(Index::open(&vault, false).unwrap());
        std::fs::remove_dir_all(root.join("gone")).unwrap();
        std::fs::create_dir_all(root.join("new/deeper")).unwrap();
        std::fs::write(root.join("new/f.md"), "# f\n").unwrap();
        std::fs::write(root.join("new/deeper/g.md"), "# g\n").unwrap();
        std::fs::write(root.join("x/y/c.md"), "# c, edited\n").unwrap();
        std::fs::write(root.join("x/h.md"), "# h\n").unwrap();
        std::fs::remove_file(root.join("x/b.md")).unwrap();
        let (path, _) = locate(&vault);
        let conn = Connection::open(&path).unwrap();
        let snap = from_snapshot(&conn, root, false).unwrap().unwrap();
        let mut known: HashMap<String, (i64, i64)> = HashMap::new();
        let mut stmt = conn
            .prepare("SELECT path, size, mtime_ns FROM notes")
            .unwrap();
        for row in stmt
            .query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))
            .unwrap()
        {
            let (p, v) = row.unwrap();
            known.insert(p, v);
        }
        let walked = walk::walk_notes(root);
        let by_walk = compare(&mut known, &walked);
        assert_eq!(snap, (walked.len(), by_walk));
        assert_eq!((by_walk.new, by_walk.changed, by_walk.removed), (3, 1, 3));
    }

    /// In a vault's own `.git/`, an index naming another path came with the folder (moved,
    /// copied): named as such, to be rebuilt, not refused.
    #[test]
    fn an_index_naming_another_path_in_the_vaults_own_git_dir_is_moved() {
        let t = tempfile::tempdir().unwrap();
        let (a, b) = (t.path().join("a"), t.path().join("b"));
        for d in [&a, &b] {
            std::fs::create_dir(d).unwrap();
            crate::store::gitenv::init_repo(d).unwrap();
        }
        let va = open(&a, VaultSource::Flag).unwrap();
        drop(Index::open(&va, false).unwrap());
        std::fs::create_dir_all(b.join(".git/rutter")).unwrap();
        std::fs::copy(
            a.join(".git/rutter/index.sqlite"),
            b.join(".git/rutter/index.sqlite"),
        )
        .unwrap();
        let vb = open(&b, VaultSource::Flag).unwrap();
        let theirs = va.root.display().to_string();
        assert_eq!(inspect(&vb).problem, Some(Problem::Moved(theirs)));
    }
}
