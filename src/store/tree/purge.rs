//! The tree side of a purge (spec/purge.md, "What is removed"): a record tree with the purged
//! lines taken out of the record files of their days, and the named `cited/` copies removed.
//! Only the folders a removal can touch are read (`_librarian/sessions/`, the year folders of
//! the removal's days, the `cited/<aa>/` folders of its copies); every other entry keeps its id,
//! so the result depends on the tree's content alone and is the same on every machine.

use super::raw::{apply, entries, DIR_MODE};
use super::Trees;
use crate::objectid::ObjectId;
use crate::records::paths;
use crate::records::purge::{without_lines, Removal};
use crate::store::oid::{ToGit, ToId};
use git2::ObjectType;
use std::collections::HashMap;

/// The memo of one rewrite: every tree (by its place: the same folder content means the same
/// thing only at the same kind of place) and blob already transformed, old id → new id.
#[derive(Debug, Default)]
pub(crate) struct Memo {
    trees: HashMap<(ObjectId, String), Option<ObjectId>>,
    blobs: HashMap<ObjectId, ObjectId>,
}

/// Which folder a tree being transformed is.
#[derive(Clone, Copy, Debug)]
enum Folder<'a> {
    Root,
    Librarian,
    /// `_librarian/sessions/`, or one of its year folders.
    Sessions,
    Cited,
    /// `cited/<aa>/`.
    CitedShard(&'a str),
}

impl<'r> Trees<'r> {
    /// The record tree `root` with `removal` applied (its own id when nothing changes).
    pub(crate) fn purged(
        &mut self,
        root: ObjectId,
        removal: &Removal,
        memo: &mut Memo,
    ) -> Result<ObjectId, git2::Error> {
        match self.purged_folder(root, Folder::Root, removal, memo)? {
            Some(tree) => Ok(tree),
            None => Ok(self.odb.write(ObjectType::Tree, &[])?.to_id()),
        }
    }

    /// The folder `tree` with `removal` applied; `None` when the removal emptied it.
    fn purged_folder(
        &mut self,
        tree: ObjectId,
        folder: Folder<'_>,
        removal: &Removal,
        memo: &mut Memo,
    ) -> Result<Option<ObjectId>, git2::Error> {
        let key = (tree, format!("{folder:?}"));
        if let Some(done) = memo.trees.get(&key) {
            return Ok(*done);
        }
        let raw = self.read(tree)?;
        let mut updates: Vec<(Vec<u8>, &[u8], Option<ObjectId>)> = Vec::new();
        for e in entries(&raw) {
            let Ok(name) = std::str::from_utf8(e.name) else {
                continue;
            };
            let oid = ObjectId::from_bytes(*e.oid);
            let is_dir = e.mode == DIR_MODE;
            let sub = match (folder, is_dir) {
                (Folder::Root, true) if name == "_librarian" => Some(Folder::Librarian),
                (Folder::Root, true) if name == paths::CITED_DIR => Some(Folder::Cited),
                (Folder::Librarian, true) if name == "sessions" => Some(Folder::Sessions),
                (Folder::Sessions, true) if holds_year(removal, name) => Some(Folder::Sessions),
                (Folder::Cited, true) => Some(Folder::CitedShard(name)),
                _ => None,
            };
            // `Some(new)`: the entry's new id, `None` inside: it goes.
            let new = match (folder, sub) {
                (_, Some(sub)) => Some(self.purged_folder(oid, sub, removal, memo)?),
                (Folder::Sessions, None) if !is_dir => {
                    self.purged_day_file(name, oid, removal, memo)?.map(Some)
                }
                // A copy is named by its sha256, in the shard of its first byte.
                (Folder::CitedShard(aa), None) if !is_dir && removal.cited.contains(name) => {
                    name.starts_with(aa).then_some(None)
                }
                _ => None,
            };
            match new {
                Some(n) if n != Some(oid) => updates.push((e.name.to_vec(), e.mode, n)),
                _ => {}
            }
        }
        let out = match updates.is_empty() {
            true => Some(tree),
            false => {
                let bytes = apply(&raw, &updates);
                match bytes.is_empty() {
                    // An emptied folder goes with its last entry.
                    true => None,
                    false => Some(self.odb.write(ObjectType::Tree, &bytes)?.to_id()),
                }
            }
        };
        memo.trees.insert(key, out);
        Ok(out)
    }

    /// The new id of the file `name` of a sessions folder: `Some` when it is a record file of a
    /// day the removal takes lines from.
    fn purged_day_file(
        &mut self,
        name: &str,
        oid: ObjectId,
        removal: &Removal,
        memo: &mut Memo,
    ) -> Result<Option<ObjectId>, git2::Error> {
        let Some((day, _)) = paths::split_day_file_name(name) else {
            return Ok(None);
        };
        let Some(gone) = removal.lines.get(day) else {
            return Ok(None);
        };
        if let Some(done) = memo.blobs.get(&oid) {
            return Ok(Some(*done));
        }
        let bytes = self.repo.find_blob(oid.to_git())?.content().to_vec();
        let new = match without_lines(&bytes, gone) {
            Some(kept) => self.odb.write(ObjectType::Blob, &kept)?,
            None => oid.to_git(),
        };
        memo.blobs.insert(oid, new.to_id());
        Ok(Some(new.to_id()))
    }
}

/// Whether `name` is the year folder of a day the removal takes lines from.
fn holds_year(removal: &Removal, name: &str) -> bool {
    name.len() == 4 && removal.lines.keys().any(|day| day.starts_with(name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::purge::line_digest;
    use git2::Repository;
    use std::collections::BTreeSet;

    fn digest_set(lines: &[&str]) -> BTreeSet<[u8; 32]> {
        lines.iter().map(|l| line_digest(l.as_bytes())).collect()
    }

    #[test]
    fn lines_go_with_their_newline_and_nothing_else_moves() {
        let gone = digest_set(&["- b"]);
        assert_eq!(
            without_lines(b"- a\n- b\n- c\n", &gone).as_deref(),
            Some(&b"- a\n- c\n"[..])
        );
        assert_eq!(
            without_lines(b"- a\n- b", &gone).as_deref(),
            Some(&b"- a\n"[..])
        );
        assert_eq!(without_lines(b"- a\n- bb\n", &gone), None);
        assert_eq!(
            without_lines(b"- b\r\n", &gone),
            None,
            "a line is its bytes"
        );
    }

    struct Repo {
        _dir: tempfile::TempDir,
        repo: Repository,
    }

    impl Repo {
        fn new() -> Repo {
            let dir = tempfile::tempdir().unwrap();
            let repo = Repository::init(dir.path()).unwrap();
            Repo { _dir: dir, repo }
        }

        fn tree(&self, files: &[(&str, &str)]) -> ObjectId {
            let mut trees = Trees::new(&self.repo).unwrap();
            let files: Vec<(String, ObjectId)> = files
                .iter()
                .map(|(p, c)| (p.to_string(), self.repo.blob(c.as_bytes()).unwrap().to_id()))
                .collect();
            trees.write_stored(&files).unwrap()
        }

        fn files(&self, tree: ObjectId) -> Vec<(String, String)> {
            let mut out = Vec::new();
            let t = self.repo.find_tree(tree.to_git()).unwrap();
            t.walk(git2::TreeWalkMode::PreOrder, |dir, e| {
                if e.kind() == Some(git2::ObjectType::Blob) {
                    let blob = self.repo.find_blob(e.id()).unwrap();
                    out.push((
                        format!("{dir}{}", e.name().unwrap()),
                        String::from_utf8_lossy(blob.content()).into_owned(),
                    ));
                }
                git2::TreeWalkResult::Ok
            })
            .unwrap();
            out
        }
    }

    const H: &str = "ab00000000000000000000000000000000000000000000000000000000000000";
    const K: &str = "ab11111111111111111111111111111111111111111111111111111111111111";

    #[test]
    fn a_removal_takes_the_days_lines_and_the_named_copies_in_both_layouts() {
        let r = Repo::new();
        let flat = "_librarian/sessions/2026-11-30.md";
        let year = "_librarian/sessions/2026/2026-11-30.peer.md";
        let other_day = "_librarian/sessions/2026/2026-12-01.md";
        let tree = r.tree(&[
            (flat, "head\n- keep\n- secret\n"),
            (year, "- secret\n- theirs\n"),
            (other_day, "- secret\n"),
            ("_librarian/note-identity.md", "- secret\n"),
            (&format!("cited/ab/{H}"), "copy"),
            (&format!("cited/ab/{K}"), "kept"),
            ("Notes/x.md", "- secret\n"),
        ]);
        let mut removal = Removal::default();
        removal
            .lines
            .insert("2026-11-30".into(), digest_set(&["- secret"]));
        removal.cited.insert(H.into());
        let mut trees = Trees::new(&r.repo).unwrap();
        let mut memo = Memo::default();
        let new = trees.purged(tree, &removal, &mut memo).unwrap();
        let files = r.files(new);
        let get = |p: &str| files.iter().find(|(f, _)| f == p).map(|(_, c)| c.as_str());
        assert_eq!(get(flat), Some("head\n- keep\n"));
        assert_eq!(get(year), Some("- theirs\n"));
        assert_eq!(
            get(other_day),
            Some("- secret\n"),
            "another day is not touched"
        );
        assert_eq!(get("_librarian/note-identity.md"), Some("- secret\n"));
        assert_eq!(get("Notes/x.md"), Some("- secret\n"));
        assert_eq!(get(&format!("cited/ab/{H}")), None);
        assert_eq!(get(&format!("cited/ab/{K}")), Some("kept"));
        // Deterministic and idempotent.
        let again = Trees::new(&r.repo)
            .unwrap()
            .purged(tree, &removal, &mut Memo::default())
            .unwrap();
        assert_eq!(again, new);
        let twice = Trees::new(&r.repo)
            .unwrap()
            .purged(new, &removal, &mut Memo::default())
            .unwrap();
        assert_eq!(twice, new);
        // The same content written by git itself has the same id.
        let mut index = r.repo.index().unwrap();
        index
            .read_tree(&r.repo.find_tree(new.to_git()).unwrap())
            .unwrap();
        assert_eq!(index.write_tree_to(&r.repo).unwrap(), new.to_git());
    }

    #[test]
    fn a_folder_emptied_by_the_removal_goes_and_an_untouched_tree_keeps_its_id() {
        let r = Repo::new();
        let tree = r.tree(&[
            ("_librarian/sessions/2026/2026-11-30.md", "- x\n"),
            (&format!("cited/ab/{H}"), "copy"),
        ]);
        let mut removal = Removal::default();
        removal.cited.insert(H.into());
        let mut trees = Trees::new(&r.repo).unwrap();
        let new = trees.purged(tree, &removal, &mut Memo::default()).unwrap();
        assert_eq!(
            r.files(new),
            [(
                "_librarian/sessions/2026/2026-11-30.md".to_string(),
                "- x\n".to_string()
            )]
        );
        assert!(r
            .repo
            .find_tree(new.to_git())
            .unwrap()
            .get_name("cited")
            .is_none());
        let nothing = Removal::default();
        assert_eq!(
            trees.purged(tree, &nothing, &mut Memo::default()).unwrap(),
            tree
        );
    }
}
