//! Whether cited paths resolve inside the vault, answered as
//! [`crate::index::identity::exists_in_vault`] answers it but with each folder resolved once:
//! `recent --all` checks 9,000 paths, and resolving every one from the root (a `readlink` per
//! component, 65,000 in all) was half of its system time. A path through real folders only is
//! opened at once, beneath the vault's root, with no folder resolved at all
//! ([`InVault::open_direct`]): `recent` resolved the folders of its 40-80 cited notes with a
//! `readlink` for every component from `/` (docs/performance.md, "Stop 48").

use crate::index::identity::{exists_in_vault, outside_by_spelling};
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

/// The folders of one answer's cited paths, each resolved once.
pub(crate) struct InVault<'a> {
    root: &'a Path,
    /// A folder (vault-relative, as cited) and its canonical path, `None` when it does not
    /// resolve.
    folders: HashMap<String, Option<PathBuf>>,
    /// The vault's root, open, for [`InVault::open_direct`]; `None` until the first path, and
    /// `Some(None)` when it cannot be opened (every path then goes the long way).
    #[cfg(target_os = "linux")]
    root_fd: Option<Option<std::os::fd::OwnedFd>>,
}

/// What [`InVault::open_direct`] found.
pub(crate) enum Direct {
    /// The path lies inside the vault through real folders, and this is it, open for reading
    /// (not blocking: a FIFO is opened, never read).
    Opened(File),
    /// It does not resolve inside the vault: outside by its spelling (empty, absolute, `..`),
    /// or a real folder on its way lacks the next name.
    Absent,
    /// Not known this way (a symlink on the way, another system, any other error): ask
    /// [`InVault::exists`] and open it by its path, as before.
    Unsure,
}

impl<'a> InVault<'a> {
    pub(crate) fn new(root: &'a Path) -> InVault<'a> {
        InVault {
            root,
            folders: HashMap::new(),
            #[cfg(target_os = "linux")]
            root_fd: None,
        }
    }

    /// `rel` opened in one `openat2` beneath the vault's root that refuses every symlink
    /// (`RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`): when it opens, no symlink was on its way and
    /// nothing took it out of the root, which is what [`InVault::exists`] would have found by
    /// resolving each folder. Only a missing name (`ENOENT`, met through real folders) is
    /// taken as an answer; anything else is [`Direct::Unsure`].
    #[cfg(target_os = "linux")]
    pub(crate) fn open_direct(&mut self, rel: &str) -> Direct {
        use rustix::fs::{self as rfs, Mode, OFlags, ResolveFlags};
        if outside_by_spelling(rel) {
            return Direct::Absent;
        }
        let root = self.root;
        let fd = self.root_fd.get_or_insert_with(|| {
            rfs::open(
                root,
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .ok()
        });
        let Some(fd) = fd else {
            return Direct::Unsure;
        };
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        let resolve =
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        match rfs::openat2(&*fd, rel, flags, Mode::empty(), resolve) {
            Ok(file) => Direct::Opened(File::from(file)),
            Err(rustix::io::Errno::NOENT) => Direct::Absent,
            Err(_) => Direct::Unsure,
        }
    }

    /// Elsewhere every path goes the long way.
    #[cfg(not(target_os = "linux"))]
    pub(crate) fn open_direct(&mut self, rel: &str) -> Direct {
        match outside_by_spelling(rel) {
            true => Direct::Absent,
            false => Direct::Unsure,
        }
    }

    /// `exists_in_vault(root, rel)`. The canonical form of `folder/name` is the folder's
    /// canonical path joined with `name` when `name` exists and is not a symlink; a name that
    /// is a symlink, `.`, or empty goes the whole way through `exists_in_vault`.
    pub(crate) fn exists(&mut self, rel: &str) -> bool {
        if outside_by_spelling(rel) {
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
    use std::os::unix::fs::{symlink, MetadataExt};

    /// A vault with folders, files, symlinks inside and out, a dangling link, a FIFO and a file
    /// where a folder is expected, next to a folder outside it.
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
        crate::fsx::testing::fifo(&root.join("a/fifo"));
        (t, root)
    }

    /// A path spelt from the tree's names, `.`, `..` and empty parts, relative or absolute.
    fn spelt() -> impl Strategy<Value = String> {
        let part = prop_oneof![
            Just("a"),
            Just("b"),
            Just("n.md"),
            Just("in"),
            Just("out"),
            Just("ln.md"),
            Just("x.md"),
            Just("dangling"),
            Just("up"),
            Just("vault"),
            Just("."),
            Just(".."),
            Just(""),
            Just("nope"),
            Just("fifo"),
        ];
        let lead = prop_oneof![Just(""), Just("/")];
        (lead, prop::collection::vec(part, 0..5))
            .prop_map(|(lead, parts)| format!("{lead}{}", parts.join("/")))
    }

    proptest! {
        #[test]
        fn answers_as_exists_in_vault(rel in spelt()) {
            let (_t, root) = tree();
            let mut memo = InVault::new(&root);
            // Twice: the second answer comes from the remembered folders.
            for _ in 0..2 {
                prop_assert_eq!(memo.exists(&rel), exists_in_vault(&root, &rel), "{}", rel);
            }
        }

        /// The direct open answers only what `exists_in_vault` answers, and what it opens is
        /// the file that path names.
        #[test]
        fn a_direct_open_agrees_with_exists_in_vault(rel in spelt()) {
            let (_t, root) = tree();
            let inside = exists_in_vault(&root, &rel);
            match InVault::new(&root).open_direct(&rel) {
                Direct::Opened(file) => {
                    prop_assert!(inside, "opened {} outside", rel);
                    let got = file.metadata().unwrap();
                    let want = std::fs::metadata(root.join(&rel)).unwrap();
                    prop_assert_eq!((got.dev(), got.ino()), (want.dev(), want.ino()), "{}", rel);
                }
                Direct::Absent => prop_assert!(!inside, "{} called absent", rel),
                Direct::Unsure => {}
            }
        }
    }

    /// The fast way is taken where it can be: a note through real folders is opened, a missing
    /// one is absent, and only a symlink on the way leaves it unsure.
    #[cfg(target_os = "linux")]
    #[test]
    fn real_folders_are_opened_at_once_and_symlinks_go_the_long_way() {
        let (_t, root) = tree();
        let mut memo = InVault::new(&root);
        let mut read = |rel: &str| match memo.open_direct(rel) {
            Direct::Opened(mut file) => {
                let mut text = String::new();
                std::io::Read::read_to_string(&mut file, &mut text).unwrap();
                format!("opened {text}")
            }
            Direct::Absent => "absent".to_string(),
            Direct::Unsure => "unsure".to_string(),
        };
        assert_eq!(read("a/b/n.md"), "opened n");
        assert_eq!(read("a/nope.md"), "absent");
        assert_eq!(read("a/../a/n.md"), "absent");
        assert_eq!(read("a/in/n.md"), "unsure");
        assert_eq!(read("a/x.md"), "unsure");
        assert_eq!(read("a/dangling"), "unsure");
    }
}
