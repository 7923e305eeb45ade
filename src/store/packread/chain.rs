//! A history that is one line of commits, read from the packs (a commit they do not hold, such
//! as a loose one, from the caller's reader): each commit's parents from its header, followed
//! from the tip to the root. It answers only when every commit reads and none is a merge;
//! anything else (an unreadable commit, a header that does not start as git writes one, a
//! merge) is left to libgit2's walk. On one line of commits the order oldest first is the only
//! one, so it is the order libgit2's walk gives.

use super::{Kind, PackReader};
use crate::objectid::ObjectId;

/// The commits from the root to `tip`, oldest first, if they are one line every commit of
/// which `reader` reads, or else `elsewhere` (the bytes of a commit the packs do not hold).
pub(crate) fn line_to(
    reader: &mut PackReader<'_>,
    tip: ObjectId,
    elsewhere: &mut dyn FnMut(ObjectId) -> Option<Vec<u8>>,
) -> Option<Vec<ObjectId>> {
    let mut out = Vec::new();
    let mut at = Some(tip);
    while let Some(id) = at {
        let raw = match reader.read(id) {
            Some((Kind::Commit, raw)) => raw,
            Some(_) => return None,
            None => std::rc::Rc::new(elsewhere(id)?),
        };
        out.push(id);
        at = only_parent(&raw)?;
    }
    out.reverse();
    Some(out)
}

/// The one parent the raw commit `raw` names (`Some(None)` for a root): `None` for a merge or a
/// header that is not exactly as git writes one ([`super::commit::head`]).
fn only_parent(raw: &[u8]) -> Option<Option<ObjectId>> {
    match super::commit::head(raw)?.parents[..] {
        [] => Some(None),
        [p] => Some(Some(p)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A commit with `parents`, as git writes it (the header's other shapes are `commit`'s tests;
    /// the walk itself is checked against `git rev-list` in the parent module's tests).
    fn commit(parents: &[&str]) -> Vec<u8> {
        let mut raw = format!("tree {}\n", "1".repeat(40));
        parents.iter().for_each(|p| raw += &format!("parent {p}\n"));
        raw += "author A <a@x> 1 +0000\ncommitter A <a@x> 1 +0000\n\nm\n";
        raw.into_bytes()
    }

    #[test]
    fn a_root_and_a_child_are_a_line_and_a_merge_is_not() {
        let (a, b) = ("2".repeat(40), "3".repeat(40));
        assert_eq!(only_parent(&commit(&[])), Some(None));
        let parent = ObjectId::from_hex(&a).unwrap();
        assert_eq!(only_parent(&commit(&[&a])), Some(Some(parent)));
        assert_eq!(only_parent(&commit(&[&a, &b])), None);
        assert_eq!(only_parent(b"tree x\n\n"), None);
    }
}
