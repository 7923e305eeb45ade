//! Where `git rutter timeline -o FILE` may write, and writing the page there whole
//! (spec/timeline.md, "Where the page goes"): into a folder that exists, as the shell's `>`
//! (none is created), never into the vault's record (`_librarian/`) or its git folder, and
//! never over a file that does not start as a page git-rutter wrote, so a mistyped name cannot
//! replace a note.

use super::{cannot_run, user_error, CommandError};
use crate::recall::timeline;
use crate::records::text::one_line_safe;
use crate::vault::Vault;
use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Where the page goes: an absolute path, and whether a file already there may be replaced.
pub(super) struct PageFile {
    pub path: PathBuf,
    /// No file was there when checked: one that appears meanwhile is not replaced.
    new: bool,
}

impl PageFile {
    /// `-o FILE`, checked before any work: a new file in a folder that exists, or a page
    /// git-rutter wrote ([`timeline::starts_as_page`]), outside the vault's `_librarian/` and
    /// git folder (after `..` and the folder's symlinks are resolved). Anything else is
    /// refused (exit 1), nothing written.
    pub(super) fn check(file: &Path, vault: &Vault) -> Result<PageFile, CommandError> {
        let given = std::path::absolute(file).map_err(cannot_run)?;
        let Some(name) = given.file_name() else {
            return Err(cannot_run(format!(
                "{} names no file.",
                one_line_safe(&file.display().to_string())
            )));
        };
        // Said as the folder's real path (`../t.html` as the folder it names).
        let parent = given.parent().unwrap_or(Path::new("/"));
        let dir = match parent.canonicalize() {
            Ok(dir) if dir.is_dir() => dir,
            _ => {
                return Err(user_error(format!(
                    "{} is no folder to write {} in; nothing was written.",
                    shown(parent),
                    one_line_safe(&name.to_string_lossy())
                ))
                .hinted("Create the folder first, or name a file in a folder that exists."))
            }
        };
        let path = dir.join(name);
        if let Some(what) = in_the_vaults_own(&dir, name, vault) {
            return Err(user_error(format!(
                "{} is in the vault's {what}; nothing was written.",
                shown(&path)
            ))
            .hinted("Name a file outside _librarian/ and .git/."));
        }
        let refused = |why: &str| {
            user_error(format!("{} {why}; nothing was written.", shown(&path)))
                .hinted("Name a new file, or remove it first.")
        };
        let meta = match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(PageFile { path, new: true });
            }
            Err(e) => return Err(cannot_run(format!("cannot read {}: {e}", shown(&path)))),
            Ok(m) => m,
        };
        if !meta.is_file() {
            return Err(refused("exists and is not a regular file"));
        }
        if !starts_as_page(&dir, name)
            .map_err(|e| cannot_run(format!("cannot read {}: {e}", shown(&path))))?
        {
            return Err(refused("exists and is not a timeline git-rutter wrote"));
        }
        Ok(PageFile { path, new: false })
    }

    /// A file in git-rutter's own folder (`--open` without `-o`), replaced whatever it holds;
    /// its folder is made when missing.
    pub(super) fn ours(path: PathBuf) -> Result<PageFile, CommandError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| cannot_run(format!("cannot create {}: {e}", shown(dir))))?;
        }
        Ok(PageFile { path, new: false })
    }

    /// Writes what `bytes` writes, whole or not at all: a temporary file beside the target,
    /// renamed over it
    /// (the rename replaces a symlink put there meanwhile, never writes through it), or, for a
    /// new file, linked only if nothing took the name meanwhile.
    pub(super) fn write_with(
        &self,
        bytes: &dyn Fn(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<(), CommandError> {
        let path = shown(&self.path);
        let dir = self.path.parent().unwrap_or(Path::new("/"));
        let tmp = tempfile::NamedTempFile::new_in(dir)
            .map_err(|e| cannot_run(format!("cannot write in {}: {e}", shown(dir))))?;
        let mut out = std::io::BufWriter::with_capacity(1 << 16, tmp);
        bytes(&mut out)
            .and_then(|_| out.flush())
            .map_err(|e| cannot_run(format!("cannot write {path}: {e}")))?;
        let tmp = out
            .into_inner()
            .map_err(|e| cannot_run(format!("cannot write {path}: {}", e.error())))?;
        let persisted = match self.new {
            true => tmp.persist_noclobber(&self.path),
            false => tmp.persist(&self.path),
        };
        persisted.map_err(|e| match e.error.kind() {
            std::io::ErrorKind::AlreadyExists => user_error(format!(
                "{path} appeared while the page was made; nothing was written."
            ))
            .hinted("Run the command again."),
            _ => cannot_run(format!("cannot write {path}: {}", e.error)),
        })?;
        Ok(())
    }
}

/// A path for a message, on one line.
fn shown(path: &Path) -> String {
    one_line_safe(&path.display().to_string())
}

/// Which of the vault's own folders `dir/name` is or is in (`dir` canonical): its record
/// folder `_librarian/`, or its git folder (`.git`, and the git dir and common dir of a linked
/// worktree). Compared by device and inode, so another spelling of the same folder (a bind
/// mount, a case-insensitive file system) is caught too, and by name in the vault's root, so
/// `-o _librarian` never makes a file where the folder belongs.
fn in_the_vaults_own(dir: &Path, name: &OsStr, vault: &Vault) -> Option<&'static str> {
    const RECORD: &str = "_librarian/ (its record)";
    const GIT: &str = ".git/ (its git folder)";
    let id = |p: &Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    let mut own = vec![
        (id(&vault.root.join("_librarian")), RECORD),
        (id(&vault.root.join(".git")), GIT),
    ];
    if let Some(git) = &vault.git_dir {
        own.push((id(git), GIT));
        own.push((id(&crate::vault::common_dir(git)), GIT));
    }
    let root = id(&vault.root);
    if root.is_some() && id(dir) == root {
        let lossy = name.to_string_lossy();
        for (folder, what) in [("_librarian", RECORD), (".git", GIT)] {
            if lossy.eq_ignore_ascii_case(folder) {
                return Some(what);
            }
        }
    }
    let held = |p: &Path| {
        let at = id(p)?;
        own.iter()
            .find(|(o, _)| *o == Some(at))
            .map(|(_, what)| *what)
    };
    held(&dir.join(name)).or_else(|| dir.ancestors().find_map(held))
}

/// Whether the regular file `dir/name` starts as a page git-rutter wrote: its first
/// [`timeline::HEAD_BYTES`] bytes, read without following a symlink.
fn starts_as_page(dir: &Path, name: &OsStr) -> std::io::Result<bool> {
    // A name that is not UTF-8 cannot be opened through `Dir`: it is not taken for a page.
    let Some(name) = name.to_str() else {
        return Ok(false);
    };
    let opened = crate::fsx::Dir::open(dir)
        .and_then(|d| d.open_read(name))
        .map_err(std::io::Error::other)?;
    let Some(file) = opened else {
        return Ok(false);
    };
    let mut head = Vec::with_capacity(timeline::HEAD_BYTES);
    file.take(timeline::HEAD_BYTES as u64)
        .read_to_end(&mut head)?;
    Ok(timeline::starts_as_page(&head))
}
