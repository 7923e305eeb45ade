//! The one way to a record file's folder in the working tree: a vault-relative record path
//! (`records::paths::working_file`: a day file in `_librarian/sessions/`, the ledger, the use
//! log, the acknowledgements, a position stream) maps to its folder below the vault's
//! `_librarian/`, each folder opened relative to the one above it without following a symlink.
//! Every writer of record files reached from the ref (sync's checkout, `restore`, `init` on a
//! clone) and every append of a journalled line goes through [`folder`], so no path a ref or a
//! journal names, forged or not, can write outside `_librarian/`.

use crate::fsx::{Dir, FsError};
use crate::records::paths;
use std::path::{Path, PathBuf};

/// Why a record file's folder was not opened.
#[derive(Debug, thiserror::Error)]
pub enum OverlayError {
    /// The path is not a record file of the working tree; nothing was opened or written.
    #[error("{0:?} is not a record file (spec/ref-layout.md); nothing was written there")]
    NotRecord(String),
    /// `_librarian/` or one of its record folders is missing (and was not to be created).
    #[error("{} does not exist", .0.display())]
    Missing(PathBuf),
    #[error(transparent)]
    Fs(#[from] FsError),
}

/// The folder of the record file at the vault-relative `path` below the vault `root`, and the
/// file's name in it. With `create`, missing folders are made (never through a symlink).
pub(crate) fn folder<'p>(
    root: &Path,
    path: &'p str,
    create: bool,
) -> Result<(Dir, &'p str), OverlayError> {
    folder_in(&Dir::open(root)?, path, create)
}

/// [`folder`], below an already opened vault root.
pub(crate) fn folder_in<'p>(
    root: &Dir,
    path: &'p str,
    create: bool,
) -> Result<(Dir, &'p str), OverlayError> {
    let Some((sub, name, _)) = paths::working_file(path) else {
        return Err(OverlayError::NotRecord(path.to_string()));
    };
    let missing = |rel: &str| OverlayError::Missing(root.path().join(rel));
    let overlay = root
        .open_dir(paths::OVERLAY_DIR, create)?
        .ok_or_else(|| missing(paths::OVERLAY_DIR))?;
    let dir = match sub {
        "" => overlay,
        _ => overlay
            .open_dir(sub, create)?
            .ok_or_else(|| missing(&format!("{}/{sub}", paths::OVERLAY_DIR)))?,
    };
    Ok((dir, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_record_paths_open_and_only_below_the_overlay() {
        let t = tempfile::tempdir().unwrap();
        let vault = t.path().join("vault");
        std::fs::create_dir(&vault).unwrap();
        let (dir, name) = folder(&vault, "_librarian/sessions/2026-11-30.md", true).unwrap();
        assert_eq!(name, "2026-11-30.md");
        assert_eq!(dir.path(), vault.join("_librarian/sessions"));
        for bad in [
            "_librarian/../x.md",
            "_librarian/sessions/../../x.md",
            "_librarian/sessions/2026/2026-11-30.md",
            "_librarian/junk/x.md",
            "../x.md",
            "/etc/passwd",
            "cited/ab/abcd",
        ] {
            assert!(
                matches!(folder(&vault, bad, true), Err(OverlayError::NotRecord(_))),
                "{bad}"
            );
        }
        let entries: Vec<_> = std::fs::read_dir(t.path()).unwrap().collect();
        assert_eq!(entries.len(), 1, "nothing was made beside the vault");
    }

    #[test]
    fn a_linked_record_folder_is_never_followed() {
        let t = tempfile::tempdir().unwrap();
        let (vault, elsewhere) = (t.path().join("vault"), t.path().join("elsewhere"));
        std::fs::create_dir_all(vault.join("_librarian")).unwrap();
        std::fs::create_dir(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, vault.join("_librarian/sessions")).unwrap();
        assert!(folder(&vault, "_librarian/sessions/2026-11-30.md", true).is_err());
        assert!(
            folder(&vault, "_librarian/note-identity.md", false).is_ok(),
            "the overlay itself opens"
        );
        assert!(folder(&t.path().join("none"), "_librarian/note-identity.md", false).is_err());
    }
}
