//! What `git rutter status` asks of the index, read-only and without building anything: where
//! it is, whether it is this vault's, how many notes and entries it holds, when it was last
//! written, and whether the notes changed since (one walk of the vault, compared by size and
//! mtime with what the index recorded). The walk also counts the vault's markdown notes, for
//! the reference's zero-notes trap: a vault with none is probably the wrong folder. Like every
//! open of the index, it first looks at what sits at the index's names ([`super::guard`]), so
//! a FIFO planted there is named, never opened.

use super::{guard, locate, schema, walk, IndexError, Place, META_SQL};
use crate::vault::Vault;
use rusqlite::{Connection, OpenFlags};
use std::collections::HashMap;
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
    let notes_now = walk::walk_notes(&vault.root);
    let mut state = IndexState {
        exists: std::fs::symlink_metadata(&path).is_ok(),
        updated_ms: written_ms(&path),
        path,
        overridden: place == Place::Chosen,
        notes: None,
        entries: None,
        problem: None,
        vault_notes: notes_now.len(),
        stale: None,
    };
    if let Err(e) = guard::check(&state.path, place) {
        state.problem = Some(refused(e));
        return state;
    }
    if !state.exists {
        return state;
    }
    let ours = vault.root.to_string_lossy();
    match read(&state.path, place, &ours, &notes_now) {
        Ok(Read::Ours {
            notes,
            entries,
            stale,
        }) => {
            state.notes = Some(notes);
            state.entries = Some(entries);
            state.stale = Some(stale);
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
        stale: Staleness,
    },
    OtherVault(String),
    Outdated(String),
}

fn read(
    path: &Path,
    place: Place,
    ours: &str,
    notes_now: &[walk::NoteFile],
) -> Result<Read, IndexError> {
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
    Ok(counts(&conn, notes_now)?)
}

/// The index's counts and how the notes differ from it, in one read transaction.
fn counts(conn: &Connection, notes_now: &[walk::NoteFile]) -> rusqlite::Result<Read> {
    conn.execute_batch("BEGIN")?;
    let count = |table: &str| -> rusqlite::Result<usize> {
        conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| {
            r.get::<_, i64>(0)
        })
        .map(|n| n as usize)
    };
    let (notes, entries) = (count("notes")?, count("entries")?);
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
        stale: compare(&mut known, notes_now),
    })
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
