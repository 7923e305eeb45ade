//! The history side of a purge (spec/purge.md, "What is removed"): every commit reachable from
//! some tips, parents first, written again with a removal applied to its tree
//! ([`Trees::purged`]) and its message, and its parents mapped. A commit keeps every header byte
//! for byte but its signature (which no longer signs it), so the same removal gives the same ids
//! on every machine, and a commit with nothing changed keeps its id.

use super::oid::{ToGit, ToId};
use super::tree::{Memo, Trees};
use super::{Store, StoreError};
use crate::objectid::ObjectId;
use crate::records::purge::{line_digest, Removal};
use git2::{ObjectType, Sort};
use std::collections::{BTreeSet, HashMap};

/// A rewrite's result: every commit it visited, old id → new id (the same id when nothing
/// changed).
#[derive(Debug, Default, Clone)]
pub(crate) struct Rewritten {
    pub map: HashMap<ObjectId, ObjectId>,
    /// How many commits got a new id.
    pub changed: usize,
}

impl Rewritten {
    /// The new id of `old`, when the rewrite visited it.
    pub(crate) fn get(&self, old: ObjectId) -> Option<ObjectId> {
        self.map.get(&old).copied()
    }
}

/// What a rewrite removes from commit messages: lines by their SHA-256, and the entry trailers
/// of the purged ids.
fn message_without(message: &[u8], removal: &Removal, ids: &BTreeSet<String>) -> Option<Vec<u8>> {
    let trailers: BTreeSet<String> = ids.iter().map(|i| format!("Rutter-Entry: {i}")).collect();
    let mut out = Vec::with_capacity(message.len());
    let mut removed = false;
    for line in message.split_inclusive(|b| *b == b'\n') {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        let digest = line_digest(body);
        let gone = removal.lines.values().any(|set| set.contains(&digest))
            || std::str::from_utf8(body).is_ok_and(|b| trailers.contains(b));
        match gone {
            true => removed = true,
            false => out.extend_from_slice(line),
        }
    }
    removed.then_some(out)
}

/// The raw commit `raw` with `tree`, `parents` and `message`, every other header kept byte for
/// byte except a signature (`gpgsig`, `gpgsig-sha256` and their continuation lines).
fn rebuilt(raw: &[u8], tree: ObjectId, parents: &[ObjectId], message: &[u8]) -> Vec<u8> {
    let split = raw
        .windows(2)
        .position(|w| w == b"\n\n")
        .map_or(raw.len(), |i| i + 1);
    let headers = &raw[..split];
    let mut out = Vec::with_capacity(raw.len());
    out.extend_from_slice(format!("tree {tree}\n").as_bytes());
    for p in parents {
        out.extend_from_slice(format!("parent {p}\n").as_bytes());
    }
    let mut in_signature = false;
    for line in headers.split_inclusive(|b| *b == b'\n') {
        if line.starts_with(b" ") {
            if !in_signature {
                out.extend_from_slice(line);
            }
            continue;
        }
        in_signature = line.starts_with(b"gpgsig ") || line.starts_with(b"gpgsig-sha256 ");
        let skip = in_signature || line.starts_with(b"tree ") || line.starts_with(b"parent ");
        if !skip {
            out.extend_from_slice(line);
        }
    }
    out.push(b'\n');
    out.extend_from_slice(message);
    out
}

/// The headers and message of a raw commit: `(tree, parents, message)`.
fn parts(raw: &[u8]) -> (Option<ObjectId>, Vec<ObjectId>, &[u8]) {
    let split = raw
        .windows(2)
        .position(|w| w == b"\n\n")
        .map_or(raw.len(), |i| i + 2);
    let (mut tree, mut parents) = (None, Vec::new());
    for line in raw[..split.min(raw.len())].split(|b| *b == b'\n') {
        let id = |p: &[u8]| {
            std::str::from_utf8(p)
                .ok()
                .and_then(|s| ObjectId::from_hex(s).ok())
        };
        if let Some(t) = line.strip_prefix(b"tree ") {
            tree = id(t);
        } else if let Some(p) = line.strip_prefix(b"parent ") {
            parents.extend(id(p));
        }
    }
    (tree, parents, &raw[split.min(raw.len())..])
}

impl Store {
    /// Rewrites every commit reachable from `tips` with `removal` applied (the entry trailers of
    /// `ids` removed from messages), parents before children; writes the new objects and moves
    /// no ref.
    pub(crate) fn rewrite(
        &self,
        tips: &[ObjectId],
        removal: &Removal,
        ids: &BTreeSet<String>,
    ) -> Result<Rewritten, StoreError> {
        let mut walk = self.repo.revwalk()?;
        walk.set_sorting(Sort::TOPOLOGICAL | Sort::REVERSE)?;
        for t in tips {
            walk.push(t.to_git())?;
        }
        let odb = self.repo.odb()?;
        let mut trees = Trees::new(&self.repo)?;
        let mut memo = Memo::default();
        let mut out = Rewritten::default();
        for (n, oid) in walk.enumerate() {
            let oid = oid?.to_id();
            let obj = odb.read(oid.to_git())?;
            let raw = obj.data();
            let (Some(tree), parents, message) = parts(raw) else {
                return Err(StoreError::Git(git2::Error::from_str(&format!(
                    "the commit {oid} names no tree"
                ))));
            };
            let new_tree = trees.purged(tree, removal, &mut memo)?;
            let new_parents: Vec<ObjectId> =
                parents.iter().map(|p| out.get(*p).unwrap_or(*p)).collect();
            let new_message = message_without(message, removal, ids);
            let same = new_tree == tree && new_parents == parents && new_message.is_none();
            let new = match same {
                true => oid,
                false => {
                    let message = new_message.as_deref().unwrap_or(message);
                    let bytes = rebuilt(raw, new_tree, &new_parents, message);
                    out.changed += 1;
                    odb.write(ObjectType::Commit, &bytes)?.to_id()
                }
            };
            out.map.insert(oid, new);
            if (n + 1) % 1024 == 0 {
                trees.forget();
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use git2::{Repository, Signature, Time};

    fn removal(day: &str, lines: &[&str]) -> Removal {
        let mut r = Removal::default();
        r.lines.insert(
            day.to_string(),
            lines.iter().map(|l| line_digest(l.as_bytes())).collect(),
        );
        r
    }

    struct Hist {
        dir: tempfile::TempDir,
        repo: Repository,
    }

    impl Hist {
        fn new() -> Hist {
            let dir = tempfile::tempdir().unwrap();
            let repo = Repository::init(dir.path()).unwrap();
            Hist { dir, repo }
        }

        fn store(&self) -> Store {
            let root = self.dir.path().to_path_buf();
            let state = root.join(".git/rutter");
            Store::open(&super::super::Place {
                git_dir: Some(root.join(".git")),
                state_dir: state.clone(),
                worktree_state_dir: state,
                root,
            })
            .unwrap()
        }

        /// A commit whose day file of 2026-11-30 holds `lines`, its message the last line.
        fn commit(&self, parents: &[ObjectId], lines: &[&str], seconds: i64) -> ObjectId {
            let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
            let blob = self.repo.blob(text.as_bytes()).unwrap();
            let mut trees = Trees::new(&self.repo).unwrap();
            let tree = trees
                .write(
                    None,
                    &[(
                        "_librarian/sessions/2026-11-30.md".to_string(),
                        blob.to_id(),
                    )],
                )
                .unwrap();
            let tree = self.repo.find_tree(tree.to_git()).unwrap();
            let sig = Signature::new("A", "a@x", &Time::new(seconds, 60)).unwrap();
            let parents: Vec<_> = parents
                .iter()
                .map(|p| self.repo.find_commit(p.to_git()).unwrap())
                .collect();
            let parents: Vec<_> = parents.iter().collect();
            let msg = format!(
                "rutter: capture\n\n{}\n\nRutter-Entry: e{seconds}\n",
                lines.last().unwrap()
            );
            self.repo
                .commit(None, &sig, &sig, &msg, &tree, &parents)
                .unwrap()
                .to_id()
        }

        fn day_file(&self, commit: ObjectId) -> String {
            let c = self.repo.find_commit(commit.to_git()).unwrap();
            let e = c
                .tree()
                .unwrap()
                .get_path(std::path::Path::new(
                    "_librarian/sessions/2026/2026-11-30.md",
                ))
                .unwrap();
            let blob = self.repo.find_blob(e.id()).unwrap();
            String::from_utf8(blob.content().to_vec()).unwrap()
        }
    }

    #[test]
    fn the_removal_goes_from_every_commit_and_only_what_it_touched_gets_a_new_id() {
        let h = Hist::new();
        let a = h.commit(&[], &["- a"], 1);
        let b = h.commit(&[a], &["- a", "- secret"], 2);
        let c = h.commit(&[b], &["- a", "- secret", "- c"], 3);
        let side = h.commit(&[b], &["- a", "- secret", "- d"], 4);
        let merge = h.commit(&[c, side], &["- a", "- secret", "- c", "- d"], 5);
        let store = h.store();
        let ids: BTreeSet<String> = ["e2".to_string()].into();
        let r = store
            .rewrite(&[merge], &removal("2026-11-30", &["- secret"]), &ids)
            .unwrap();
        assert_eq!(r.get(a), Some(a), "before the line: untouched");
        assert_eq!(r.changed, 4);
        let new_merge = r.get(merge).unwrap();
        assert_eq!(h.day_file(new_merge), "- a\n- c\n- d\n");
        assert_eq!(h.day_file(r.get(b).unwrap()), "- a\n");
        let m = h.repo.find_commit(new_merge.to_git()).unwrap();
        assert_eq!(
            m.parent_ids().map(ToId::to_id).collect::<Vec<_>>(),
            [r.get(c).unwrap(), r.get(side).unwrap()]
        );
        let old = h.repo.find_commit(merge.to_git()).unwrap();
        assert_eq!(m.author().when(), old.author().when());
        assert_eq!(m.author().name().unwrap(), "A");
        let nb = h.repo.find_commit(r.get(b).unwrap().to_git()).unwrap();
        assert_eq!(nb.message().unwrap(), "rutter: capture\n\n\n");
        // The same removal again, from the old tips: the same ids (deterministic); from the new
        // tip: nothing changes (idempotent).
        let again = store
            .rewrite(&[merge], &removal("2026-11-30", &["- secret"]), &ids)
            .unwrap();
        assert_eq!(again.get(merge), Some(new_merge));
        let twice = store
            .rewrite(&[new_merge], &removal("2026-11-30", &["- secret"]), &ids)
            .unwrap();
        assert_eq!((twice.get(new_merge), twice.changed), (Some(new_merge), 0));
    }

    #[test]
    fn removals_compose() {
        let h = Hist::new();
        let a = h.commit(&[], &["- one"], 1);
        let b = h.commit(&[a], &["- one", "- two"], 2);
        let c = h.commit(&[b], &["- one", "- two", "- three"], 3);
        let store = h.store();
        let none = BTreeSet::new();
        let day = "2026-11-30";
        let first = store
            .rewrite(&[c], &removal(day, &["- one"]), &none)
            .unwrap();
        let then = store
            .rewrite(&[first.get(c).unwrap()], &removal(day, &["- three"]), &none)
            .unwrap();
        let both = store
            .rewrite(&[c], &removal(day, &["- one", "- three"]), &none)
            .unwrap();
        let tip = then.get(first.get(c).unwrap()).unwrap();
        assert_eq!(Some(tip), both.get(c));
        assert_eq!(h.day_file(tip), "- two\n");
    }

    #[test]
    fn a_signature_is_dropped_and_every_other_header_kept_byte_for_byte() {
        let raw = b"tree 0000000000000000000000000000000000000001\nparent 0000000000000000000000000000000000000002\nauthor A <a@x> 1 +0100\ncommitter A <a@x> 1 +0100\nencoding ISO-8859-1\ngpgsig -----BEGIN SSH SIGNATURE-----\n U1NIU0lH\n -----END SSH SIGNATURE-----\n\nsubject\n\nbody\n";
        let (tree, parents, message) = parts(raw);
        assert_eq!(
            tree.unwrap().to_string(),
            "0000000000000000000000000000000000000001"
        );
        assert_eq!(parents.len(), 1);
        assert_eq!(message, b"subject\n\nbody\n");
        let t = ObjectId::from_hex("0000000000000000000000000000000000000003").unwrap();
        let out = rebuilt(raw, t, &[], b"subject\n");
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "tree 0000000000000000000000000000000000000003\nauthor A <a@x> 1 +0100\ncommitter A <a@x> 1 +0100\nencoding ISO-8859-1\n\nsubject\n"
        );
    }
}
