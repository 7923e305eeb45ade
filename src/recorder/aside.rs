//! The aside folders: where an entry goes when neither its day file nor the pending journal can
//! take it (a symlinked or foreign record path, an unwritable vault, a full disk).
//!
//! First `<state>/aside/<day>.md` (`.git/rutter/aside/` in a git vault), else the per-user
//! fallback `${XDG_STATE_HOME:-~/.local/state}/rutter/aside/<vault id>/<day>.md`, outside the
//! vault. Each is a day file (header, then entry lines) appended to and `fsync`ed with its folder,
//! so a power loss after the hook said where the entry went loses nothing. The next capture or
//! `git rutter commit` moves the entries into their day files ([`super::replay`]). Writing aside
//! takes no capture lock (a capture that missed it writes aside too): each folder has a lock of
//! its own, which the replay takes while it reads and removes the folder's files.

use super::append::append_durable;
use crate::fsx::{Dir, FsError};
use crate::records::{dayfile, ids, Entry};
use crate::store::Located;
use std::path::{Path, PathBuf};

/// An aside folder: a base folder opened by path (created when missing) and the folder below
/// it, opened without following a symlink at any component.
#[derive(Debug, Clone)]
pub(crate) struct Folder {
    /// The fail point that makes writing here fail.
    pub point: &'static str,
    pub base: PathBuf,
    pub rel: String,
}

impl Folder {
    /// Its path, for messages.
    pub(crate) fn path(&self) -> PathBuf {
        self.base.join(&self.rel)
    }

    /// Opens it (creating it when `create`); `Ok(None)` when it does not exist. A symlinked
    /// state folder or aside folder is refused, never written through.
    pub fn open(&self, create: bool) -> Result<Option<Dir>, FsError> {
        let base = match create {
            true => Dir::open_private(&self.base)?,
            false => match std::fs::symlink_metadata(&self.base) {
                Ok(m) if m.is_dir() => Dir::open_private(&self.base)?,
                _ => return Ok(None),
            },
        };
        base.open_dir(&self.rel, create)
    }
}

/// The subfolder of an aside folder where a file holding lines no capture writes is kept.
pub(crate) const REJECTED: &str = "rejected";

/// The aside folders of the vault at `root` whose state folder is `state_dir`: its own, then
/// the per-user fallback (when a home or `XDG_STATE_HOME` is known), in the order they are
/// tried.
pub(crate) fn folders(root: &Path, state_dir: &Path) -> Vec<Folder> {
    let mut out = vec![Folder {
        point: "aside-write",
        base: state_dir.to_path_buf(),
        rel: "aside".into(),
    }];
    if let Some(base) = crate::fsx::user_state_dir() {
        out.push(Folder {
            point: "fallback-write",
            base,
            rel: format!("aside/{}", crate::records::fingerprint::vault_id(root)),
        });
    }
    out
}

/// Writes `entry` into the first aside folder that takes it, with a `-N` suffix on its id when
/// that folder's day file already holds it; returns the file's path, or every folder's error.
pub(crate) fn write(vault: &impl Located, mut entry: Entry) -> Result<PathBuf, NoFolderTook> {
    let day = entry.time.get(..10).unwrap_or_default().to_string();
    let file = format!("{day}.md");
    let mut errors = Vec::new();
    let place = vault.place();
    for folder in folders(&place.root, &place.state_dir) {
        let written =
            crate::failpoint::check(folder.point)
                .map_err(|e| FsError::Io {
                    path: folder.path(),
                    source: e,
                })
                .and_then(|()| {
                    folder
                        .open(true)?
                        .ok_or_else(|| FsError::WrongKind(folder.path()))
                })
                .and_then(|dir| {
                    // The folder's own lock: completion reads and removes these files under it.
                    let _lock = crate::lock::Lock::on_dir(&dir, crate::lock::DEFAULT_WAIT)
                        .map_err(|e| FsError::Io {
                            path: folder.path(),
                            source: std::io::Error::other(e.to_string()),
                        })?;
                    unique_id(&mut entry, Some(&dir), &file);
                    let line = crate::records::line::render(&entry);
                    append_durable(&dir, &file, &dayfile::header(&day), &line)
                });
        match written {
            Ok(()) => return Ok(folder.path().join(&file)),
            Err(e) => errors.push(e),
        }
    }
    Err(NoFolderTook(errors))
}

/// No aside folder took the entry: each folder's error, in order.
#[derive(Debug, thiserror::Error)]
#[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
pub(crate) struct NoFolderTook(Vec<FsError>);

/// Suffixes the entry's id with `-2`, `-3`, … while the last 64 KiB of `dir/file` hold it.
pub(crate) fn unique_id(entry: &mut Entry, dir: Option<&Dir>, file: &str) {
    let bytes = dir
        .and_then(|d| d.read(file).ok().flatten())
        .unwrap_or_default();
    entry.id = ids::unique(&entry.id, &bytes);
}

/// The lines of an aside file of `day` after its day-file header (when it has one), blank lines
/// left out.
pub(crate) fn lines<'a>(day: &str, bytes: &'a [u8]) -> impl Iterator<Item = &'a str> {
    let header = crate::records::dayfile::header(day);
    let body = bytes.strip_prefix(header.as_bytes()).unwrap_or(bytes);
    std::str::from_utf8(body)
        .map(str::lines)
        .into_iter()
        .flatten()
        .chain(std::str::from_utf8(body).is_err().then_some("\u{fffd}"))
        .filter(|l| !l.trim().is_empty())
}

/// How many lines wait in the aside folders of the vault at `root`, read without a lock and
/// without creating or changing anything (`git rutter status`): the next capture or
/// `git rutter commit` places them in their day files.
pub(crate) fn waiting(root: &Path, state_dir: &Path) -> usize {
    let mut n = 0;
    for folder in folders(root, state_dir) {
        let Ok(Some(dir)) = Dir::open(&folder.base).and_then(|b| b.open_dir(&folder.rel, false))
        else {
            continue;
        };
        for name in dir.list().unwrap_or_default() {
            let Some((day, _)) = crate::records::paths::split_day_file_name(&name) else {
                continue;
            };
            if let Ok(Some(bytes)) = dir.read(&name) {
                n += lines(day, &bytes).count();
            }
        }
    }
    n
}
