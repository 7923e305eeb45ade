//! Whether cited paths resolve inside the vault, answered as
//! [`crate::index::identity::exists_in_vault`] answers it but with each folder resolved once:
//! `recent --all` checks 9,000 paths, and resolving every one from the root (a `readlink` per
//! component, 65,000 in all) was half of its system time.

use crate::index::identity::exists_in_vault;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The folders of one answer's cited paths, each resolved once.
pub(crate) struct InVault<'a> {
    root: &'a Path,
    /// A folder (vault-relative, as cited) and its canonical path, `None` when it does not
    /// resolve.
    folders: HashMap<String, Option<PathBuf>>,
}

impl<'a> InVault<'a> {
    pub(crate) fn new(root: &'a Path) -> InVault<'a> {
        InVault {
            root,
            folders: HashMap::new(),
        }
    }

    /// `exists_in_vault(root, rel)`. The canonical form of `folder/name` is the folder's
    /// canonical path joined with `name` when `name` exists and is not a symlink; a name that
    /// is a symlink, `.`, or empty goes the whole way through `exists_in_vault`.
    pub(crate) fn exists(&mut self, rel: &str) -> bool {
        if rel.is_empty() || rel.starts_with('/') || rel.split('/').any(|s| s == "..") {
            return false;
        }
        let (folder, name) = rel.rsplit_once('/').unwrap_or(("", rel));
        if name.is_empty() || name == "." {
            return exists_in_vault(self.root, rel);
        }
        let root = self.root;
        let canonical = self
            .folders
            .entry(folder.to_string())
            .or_insert_with(|| std::fs::canonicalize(root.join(folder)).ok());
        let Some(canonical) = canonical else {
            return false;
        };
        let path = canonical.join(name);
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => exists_in_vault(self.root, rel),
            Ok(_) => path.starts_with(self.root),
            Err(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::os::unix::fs::symlink;

    /// A vault with folders, files, symlinks inside and out, a dangling link and a file where
    /// a folder is expected, next to a folder outside it.
    fn tree() -> (tempfile::TempDir, PathBuf) {
        let t = tempfile::tempdir().unwrap();
        let top = t.path().canonicalize().unwrap();
        let root = top.join("vault");
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::create_dir_all(top.join("outside")).unwrap();
        std::fs::write(top.join("outside/x.md"), "out").unwrap();
        std::fs::write(root.join("a/b/n.md"), "n").unwrap();
        std::fs::write(root.join("a/n.md"), "n").unwrap();
        symlink("b", root.join("a/in")).unwrap();
        symlink(top.join("outside"), root.join("a/out")).unwrap();
        symlink("b/n.md", root.join("a/ln.md")).unwrap();
        symlink(top.join("outside/x.md"), root.join("a/x.md")).unwrap();
        symlink("missing", root.join("a/dangling")).unwrap();
        symlink("..", root.join("a/b/up")).unwrap();
        (t, root)
    }

    proptest! {
        #[test]
        fn answers_as_exists_in_vault(
            parts in prop::collection::vec(
                prop_oneof![
                    Just("a"), Just("b"), Just("n.md"), Just("in"), Just("out"), Just("ln.md"),
                    Just("x.md"), Just("dangling"), Just("up"), Just("vault"), Just("."),
                    Just(".."), Just(""), Just("nope"),
                ],
                0..5,
            ),
            lead in prop_oneof![Just(""), Just("/")],
        ) {
            let (_t, root) = tree();
            let rel = format!("{lead}{}", parts.join("/"));
            let mut memo = InVault::new(&root);
            // Twice: the second answer comes from the remembered folders.
            for _ in 0..2 {
                prop_assert_eq!(memo.exists(&rel), exists_in_vault(&root, &rel), "{}", rel);
            }
        }
    }
}
