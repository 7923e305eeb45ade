//! The aside folders: where an entry goes when neither its day file nor the pending journal can
//! take it (a symlinked or foreign record path, an unwritable vault, a full disk).
//!
//! First `<state>/aside/<day>.md` (`.git/rutter/aside/` in a git vault), else the per-user
//! fallback `${XDG_STATE_HOME:-~/.local/state}/rutter/aside/<vault id>/<day>.md`, outside the
//! vault. Each is a day file (header, then entry lines) appended to and `fsync`ed with its folder,
//! so a power loss after the hook said where the entry went loses nothing. The next capture or
//! `git rutter commit` moves the entries into their day files ([`super::complete`]).

use crate::fsx::{Dir, FsError};
use crate::recorder::append::append_durable;
use crate::records::{dayfile, Entry};
use crate::vault::Vault;
use std::path::PathBuf;

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

/// The vault's own aside folder, then the per-user fallback (when a home or `XDG_STATE_HOME`
/// is known), in the order they are tried.
pub fn folders(vault: &Vault) -> Vec<Folder> {
    let mut out = vec![Folder {
        point: "aside-write",
        base: vault.state_dir(),
        rel: "aside".into(),
    }];
    if let Some(base) = super::runlog::no_vault_dir() {
        out.push(Folder {
            point: "fallback-write",
            base,
            rel: format!("aside/{}", vault.id()),
        });
    }
    out
}

/// Writes `entry` into the first aside folder that takes it, with a `-N` suffix on its id when
/// that folder's day file already holds it; returns the file's path, or every folder's error.
pub fn write(vault: &Vault, mut entry: Entry) -> Result<PathBuf, String> {
    let day = entry.time.get(..10).unwrap_or_default().to_string();
    let file = format!("{day}.md");
    let mut errors = Vec::new();
    for folder in folders(vault) {
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
                    super::write::unique_id(&mut entry, Some(&dir), &file);
                    let line = crate::records::line::render(&entry);
                    append_durable(&dir, &file, &dayfile::header(&day), &line)
                });
        match written {
            Ok(()) => return Ok(folder.path().join(&file)),
            Err(e) => errors.push(e.to_string()),
        }
    }
    Err(errors.join("; "))
}
