//! The check every opening of the index passes before SQLite is given its path. SQLite opens by
//! path: it follows a symlink, reads a second name of another file, and blocks for good on a
//! FIFO (`status` and the MCP server hung on one, issue 32). So what sits at the index's names
//! (the file and SQLite's companions `-wal`, `-shm`, `-journal`) is looked at first with a stat
//! that neither follows a link nor opens anything; a name of the wrong kind is refused and
//! nothing is opened. Swapping a link in between this check and SQLite's open needs write
//! access to the state folder itself, which is out of scope (docs/security.md).

use super::{IndexError, Place};
use crate::fsx::{Dir, FsError};
use rustix::fs::{statat, AtFlags, FileType};
use std::path::Path;

/// The suffixes of the names SQLite opens for a database: the file itself, its write-ahead
/// log, its shared-memory index, and a rollback journal (read to roll back a hot one).
pub(crate) const COMPANIONS: [&str; 4] = ["", "-wal", "-shm", "-journal"];

/// Refuses the index at `path` when any of its names is not a file git-rutter may open. In the
/// tool's own folders (`.git/rutter/`, the per-user data folder) each must be a regular file
/// with one name, and the folder must not be a symlink; at `LIBRARIAN_DB_PATH`, a place the
/// user chose (a symlink there is theirs), each must be a regular file once links are
/// followed. Missing names are fine: SQLite creates them. Nothing is created or opened.
pub(crate) fn check(path: &Path, place: Place) -> Result<(), IndexError> {
    if place == Place::Chosen {
        // SQLite puts the companions beside the file a symlink names, not beside the link.
        let real = std::fs::canonicalize(path).ok();
        return std::iter::once(path)
            .chain(real.as_deref())
            .try_for_each(|p| {
                COMPANIONS
                    .iter()
                    .try_for_each(|suffix| chosen(&companion(p, suffix)))
            });
    }
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Ok(());
    };
    let Some(dir) = own_folder(dir)? else {
        return Ok(());
    };
    let name = name.to_string_lossy();
    COMPANIONS
        .iter()
        .try_for_each(|suffix| own(&dir, &format!("{name}{suffix}")))
}

/// The tool's state folder holding the index, opened without following a symlink at its name
/// and without creating it; `None` when it (or its parent) does not exist.
fn own_folder(dir: &Path) -> Result<Option<Dir>, IndexError> {
    let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else {
        return Ok(Dir::open(dir).ok());
    };
    let opened = Dir::open(parent).and_then(|p| p.open_dir(&name.to_string_lossy(), false));
    match opened {
        Ok(found) => Ok(found),
        Err(FsError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Ok(None)
        }
        Err(FsError::Symlink(_)) => Err(refused(dir, "a symbolic link".into())),
        Err(e) => Err(IndexError::Io(std::io::Error::other(e.to_string()))),
    }
}

/// One name in the tool's own folder: a regular file with one name, or nothing.
fn own(dir: &Dir, name: &str) -> Result<(), IndexError> {
    let st = match statat(dir.fd(), name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(rustix::io::Errno::NOENT) => return Ok(()),
        Err(e) => return Err(IndexError::Io(e.into())),
    };
    let kind = FileType::from_raw_mode(st.st_mode);
    // `nlink_t` is u32 on some targets, as `fsx` reads it too.
    let links = st.st_nlink as u64;
    let what = match kind {
        FileType::RegularFile if links == 1 => return Ok(()),
        FileType::RegularFile => format!("a file with {links} names (a hard link)"),
        other => kind_name(other).to_string(),
    };
    Err(refused(&dir.path().join(name), what))
}

/// `path` with `suffix` appended to its name.
fn companion(path: &Path, suffix: &str) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    name.into()
}

/// One name at `LIBRARIAN_DB_PATH`: a regular file once links are followed, or nothing.
fn chosen(path: &Path) -> Result<(), IndexError> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => Ok(()),
        Ok(meta) => Err(refused(
            path,
            // `st_mode` is 16 bits on macOS; std widens it to u32 everywhere.
            kind_name(FileType::from_raw_mode(
                std::os::unix::fs::MetadataExt::mode(&meta) as rustix::fs::RawMode,
            ))
            .to_string(),
        )),
        // A dangling symlink the user set: SQLite creates its target, as before.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(IndexError::Io(e)),
    }
}

/// What a file of the wrong kind is, as a message names it.
fn kind_name(kind: FileType) -> &'static str {
    match kind {
        FileType::Symlink => "a symbolic link",
        FileType::Fifo => "a FIFO (a named pipe)",
        FileType::Socket => "a socket",
        FileType::CharacterDevice | FileType::BlockDevice => "a device",
        FileType::Directory => "a folder",
        FileType::RegularFile => "a regular file",
        FileType::Unknown => "not a regular file",
    }
}

fn refused(path: &Path, what: String) -> IndexError {
    IndexError::NotAFile {
        path: path.to_path_buf(),
        what,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// Puts something of one kind at a path.
    type Plant<'a> = &'a dyn Fn(&Path);

    fn fifo(path: &Path) {
        crate::fsx::testing::fifo(path);
    }

    /// Every name SQLite opens is looked at, and every wrong kind is named, without opening it
    /// (a FIFO opened for reading would block this test for good).
    #[test]
    fn every_companion_of_the_wrong_kind_is_refused_by_what_it_is() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("rutter");
        let db = dir.join("index.sqlite");
        assert!(
            check(&db, Place::OwnGitDir).is_ok(),
            "no folder: nothing there"
        );
        std::fs::create_dir(&dir).unwrap();
        assert!(check(&db, Place::OwnGitDir).is_ok(), "no file: built");
        std::fs::write(&db, b"").unwrap();
        assert!(check(&db, Place::OwnGitDir).is_ok());
        for suffix in COMPANIONS {
            let name = dir.join(format!("index.sqlite{suffix}"));
            let keep = dir.join("kept");
            if name.exists() {
                std::fs::rename(&name, &keep).unwrap();
            }
            let planted: [(&str, Plant); 4] = [
                ("a FIFO (a named pipe)", &|p| fifo(p)),
                ("a symbolic link", &|p| symlink(t.path(), p).unwrap()),
                ("a folder", &|p| std::fs::create_dir(p).unwrap()),
                ("a file with 2 names (a hard link)", &|p| {
                    std::fs::write(t.path().join("elsewhere"), b"").unwrap();
                    std::fs::hard_link(t.path().join("elsewhere"), p).unwrap();
                }),
            ];
            for (what, plant) in planted {
                plant(&name);
                for place in [Place::OwnGitDir, Place::UserData] {
                    let e = check(&db, place).unwrap_err().to_string();
                    assert!(
                        e.contains(what) && e.contains(&*name.to_string_lossy()),
                        "{e}"
                    );
                }
                let _ = std::fs::remove_dir(&name).or_else(|_| std::fs::remove_file(&name));
                let _ = std::fs::remove_file(t.path().join("elsewhere"));
            }
            if keep.exists() {
                std::fs::rename(&keep, &name).unwrap();
            }
        }
    }

    /// Every reader of the index passes the check before any open: with a FIFO at the index,
    /// each answers at once (one that opened it would block for good; the watchdog fails it).
    #[test]
    fn every_opener_of_the_index_refuses_a_fifo_without_opening_it() {
        use crate::vault::{open, VaultSource};
        let t = tempfile::tempdir().unwrap();
        crate::store::gitenv::init_repo(t.path()).unwrap();
        std::fs::write(t.path().join("a.md"), "# A\n").unwrap();
        let vault = open(t.path(), VaultSource::Flag).unwrap();
        std::fs::create_dir_all(vault.worktree_state_dir()).unwrap();
        fifo(&vault.worktree_state_dir().join("index.sqlite"));
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let refused = |r: Result<(), IndexError>| matches!(r, Err(IndexError::NotAFile { ref what, .. }) if what.contains("FIFO"));
            let owner = crate::index::check_owner(&vault).is_ok();
            let opened = refused(crate::index::Index::open(&vault, false).map(drop));
            let forced = refused(crate::index::Index::open(&vault, true).map(drop));
            let inspected = matches!(
                crate::index::health::inspect(&vault).problem,
                Some(crate::index::health::Problem::NotAFile { .. })
            );
            let completed = crate::index::complete::note_paths(&vault, "").is_empty();
            let cited = crate::index::cited::cited_among(&vault, &["a.md".into()]);
            let _ = tx.send([
                owner,
                opened,
                forced,
                inspected,
                completed,
                cited.is_ok_and(|c| c.is_none()),
            ]);
        });
        let answers = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("no opener blocked on the FIFO");
        assert_eq!(answers, [true; 6]);
    }

    /// `.git/rutter` itself swapped for a symlink is refused; nothing is created.
    #[test]
    fn a_symlinked_state_folder_is_refused_and_nothing_is_created() {
        let t = tempfile::tempdir().unwrap();
        let elsewhere = t.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        symlink(&elsewhere, t.path().join("rutter")).unwrap();
        let e = check(&t.path().join("rutter/index.sqlite"), Place::OwnGitDir).unwrap_err();
        assert!(e.to_string().contains("a symbolic link"), "{e}");
        let missing = t.path().join("gone/rutter/index.sqlite");
        assert!(check(&missing, Place::UserData).is_ok());
        assert!(!t.path().join("gone").exists());
    }

    /// At `LIBRARIAN_DB_PATH` a symlink to a file is the user's choice; a FIFO, through a link
    /// or not, is refused.
    #[test]
    fn a_chosen_path_follows_links_but_never_to_a_fifo() {
        let t = tempfile::tempdir().unwrap();
        let real = t.path().join("real.sqlite");
        std::fs::write(&real, b"").unwrap();
        let link = t.path().join("link.sqlite");
        symlink(&real, &link).unwrap();
        assert!(check(&link, Place::Chosen).is_ok());
        assert!(check(&t.path().join("new.sqlite"), Place::Chosen).is_ok());
        let pipe = t.path().join("pipe.sqlite");
        fifo(&pipe);
        let to_pipe = t.path().join("to-pipe.sqlite");
        symlink(&pipe, &to_pipe).unwrap();
        for p in [&pipe, &to_pipe] {
            let e = check(p, Place::Chosen).unwrap_err().to_string();
            assert!(e.contains("a FIFO"), "{e}");
        }
        fifo(&t.path().join("real.sqlite-wal"));
        let e = check(&link, Place::Chosen).unwrap_err().to_string();
        assert!(e.contains("real.sqlite-wal is a FIFO"), "{e}");
    }
}
