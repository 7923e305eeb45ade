//! Tree editing: a new tree from a parent tree plus blobs at nested paths, built with
//! `TreeBuilder` so untouched subtrees are reused by id.

use git2::{Oid, Repository, Tree};
use std::collections::BTreeMap;

const FILE_MODE: i32 = 0o100644;
const DIR_MODE: i32 = 0o040000;

/// Writes the tree `base` with each `(path, blob)` of `edits` inserted (paths use `/`).
pub fn write_tree(
    repo: &Repository,
    base: Option<&Tree<'_>>,
    edits: &[(String, Oid)],
) -> Result<Oid, git2::Error> {
    let mut files: Vec<(&str, Oid)> = Vec::new();
    let mut dirs: BTreeMap<&str, Vec<(String, Oid)>> = BTreeMap::new();
    for (path, oid) in edits {
        match path.split_once('/') {
            Some((head, rest)) => dirs.entry(head).or_default().push((rest.to_string(), *oid)),
            None => files.push((path.as_str(), *oid)),
        }
    }
    let mut builder = repo.treebuilder(base)?;
    for (name, oid) in files {
        builder.insert(name, oid, FILE_MODE)?;
    }
    for (name, sub_edits) in dirs {
        let sub_base = match base.and_then(|t| t.get_name(name)) {
            Some(entry) if entry.kind() == Some(git2::ObjectType::Tree) => {
                Some(repo.find_tree(entry.id())?)
            }
            _ => None,
        };
        let sub = write_tree(repo, sub_base.as_ref(), &sub_edits)?;
        builder.insert(name, sub, DIR_MODE)?;
    }
    builder.write()
}

/// The bytes of the blob at `path` in `tree`, if there is one.
pub fn blob_at(repo: &Repository, tree: &Tree<'_>, path: &str) -> Option<Vec<u8>> {
    let entry = tree.get_path(std::path::Path::new(path)).ok()?;
    let blob = repo.find_blob(entry.id()).ok()?;
    Some(blob.content().to_vec())
}

/// Whether `tree` has an entry at `path`.
pub fn has_path(tree: &Tree<'_>, path: &str) -> bool {
    tree.get_path(std::path::Path::new(path)).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_edits_keep_siblings() {
        let t = tempfile::tempdir().unwrap();
        let repo = Repository::init(t.path()).unwrap();
        let a = repo.blob(b"a").unwrap();
        let b = repo.blob(b"b").unwrap();
        let first = write_tree(&repo, None, &[("x/y/a.md".into(), a), ("top".into(), a)]).unwrap();
        let first = repo.find_tree(first).unwrap();
        let second = write_tree(&repo, Some(&first), &[("x/y/b.md".into(), b)]).unwrap();
        let second = repo.find_tree(second).unwrap();
        assert_eq!(blob_at(&repo, &second, "x/y/a.md").unwrap(), b"a");
        assert_eq!(blob_at(&repo, &second, "x/y/b.md").unwrap(), b"b");
        assert!(has_path(&second, "top"));
    }
}
