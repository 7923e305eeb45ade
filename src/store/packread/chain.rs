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
    use proptest::prelude::*;

    const A: &str = "1111111111111111111111111111111111111111";
    const B: &str = "2222222222222222222222222222222222222222";
    const WHO: &str = "author A <a@x> 1 +0000\ncommitter A <a@x> 1 +0000";

    fn id(hex: &str) -> ObjectId {
        ObjectId::from_hex(hex).unwrap()
    }

    #[test]
    fn reads_the_one_parent_of_a_commit_as_git_writes_it() {
        let root = format!("tree {A}\nauthor A <a@x> 1 +0000\ncommitter A <a@x> 1 +0000\n\nm\n");
        assert_eq!(only_parent(root.as_bytes()), Some(None));
        let child = format!("tree {A}\nparent {B}\n{WHO}\n\nm\n");
        assert_eq!(only_parent(child.as_bytes()), Some(Some(id(B))));
    }

    #[test]
    fn a_merge_or_a_header_out_of_order_is_left_to_libgit2() {
        let merge = format!("tree {A}\nparent {B}\nparent {A}\n{WHO}\n\n");
        assert_eq!(only_parent(merge.as_bytes()), None);
        for odd in [
            format!("parent {B}\ntree {A}\nauthor A <a@x> 1 +0000\n"),
            format!("tree {A}\nparent {B}\n"),
            format!("tree {A}\nparent {}\nauthor A <a@x> 1 +0000\n", &B[..39]),
            format!("tree {A}\nparent {B} \nauthor A <a@x> 1 +0000\n"),
            format!("tree {A}\nencoding x\nauthor A <a@x> 1 +0000\n"),
            format!("tree  {A}\nauthor A <a@x> 1 +0000\n"),
        ] {
            assert_eq!(only_parent(odd.as_bytes()), None, "{odd:?}");
        }
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = only_parent(&bytes);
            let mut framed = format!("tree {A}\nparent ").into_bytes();
            framed.extend(&bytes);
            let _ = only_parent(&framed);
        }
    }
}
