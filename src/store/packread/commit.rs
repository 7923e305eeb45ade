//! A commit's header read strictly as git writes it: `tree`, the `parent`s, `author` and
//! `committer` as `name <email> seconds ±hhmm`, then any other fields, a blank line and the
//! message. Only a header of exactly that shape is read here; libgit2 reads every such header
//! too, so a commit this declines (to libgit2, which then reads it or reports it broken) is the
//! only kind whose reading could differ.

use crate::objectid::{ObjectId, HEX_LEN};

/// What the header says: the tree, the parents in order, and whether a `gpgsig` or
/// `gpgsig-sha256` field signs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Head {
    pub tree: ObjectId,
    pub parents: Vec<ObjectId>,
    pub signed: bool,
}

/// The header of the raw commit `raw`, if it has exactly git's shape.
pub(crate) fn head(raw: &[u8]) -> Option<Head> {
    let end = raw.windows(2).position(|w| w == b"\n\n")?;
    let mut lines = raw.get(..end)?.split(|b| *b == b'\n').peekable();
    let tree = hex_field(lines.next()?, b"tree ")?;
    let mut parents = Vec::new();
    while let Some(p) = lines.peek().and_then(|l| hex_field(l, b"parent ")) {
        parents.push(p);
        lines.next();
    }
    signature(lines.next()?.strip_prefix(b"author ")?)?;
    signature(lines.next()?.strip_prefix(b"committer ")?)?;
    let mut signed = false;
    for line in lines {
        if line.is_empty() {
            return None;
        }
        signed |= line.starts_with(b"gpgsig ") || line.starts_with(b"gpgsig-sha256 ");
    }
    Some(Head {
        tree,
        parents,
        signed,
    })
}

/// The id a header line `name <hex>` holds, when it holds exactly that.
fn hex_field(line: &[u8], name: &[u8]) -> Option<ObjectId> {
    let hex = line.strip_prefix(name)?;
    if hex.len() != HEX_LEN {
        return None;
    }
    ObjectId::from_hex(std::str::from_utf8(hex).ok()?).ok()
}

/// Whether `sig` is `name <email> seconds ±hhmm` with a name and an email that hold no angle
/// bracket, seconds of at most 18 digits and a four-digit offset.
fn signature(sig: &[u8]) -> Option<()> {
    let open = sig.iter().position(|b| *b == b'<')?;
    let close = sig.iter().position(|b| *b == b'>')?;
    let (name, email) = (sig.get(..open)?, sig.get(open + 1..close)?);
    let when = sig.get(close + 1..)?.strip_prefix(b" ")?;
    let plain = |s: &[u8]| !s.is_empty() && !s.iter().any(|b| matches!(b, b'<' | b'>' | 0));
    if !name.ends_with(b" ") || !plain(name.trim_ascii()) || !plain(email) {
        return None;
    }
    let (seconds, zone) = when.split_at_checked(when.iter().position(|b| *b == b' ')?)?;
    let digits = |s: &[u8], n: std::ops::RangeInclusive<usize>| {
        n.contains(&s.len()) && s.iter().all(u8::is_ascii_digit)
    };
    let zone = zone.strip_prefix(b" ")?;
    let sign = matches!(zone.first(), Some(b'+' | b'-'));
    (digits(seconds, 1..=18) && sign && digits(zone.get(1..)?, 4..=4)).then_some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const A: &str = "1111111111111111111111111111111111111111";
    const B: &str = "2222222222222222222222222222222222222222";
    const WHO: &str = "author A U Thor <a@example.com> 1700000000 +0100\ncommitter C <c@example.com> 1700000001 -0030";

    fn id(hex: &str) -> ObjectId {
        ObjectId::from_hex(hex).unwrap()
    }

    #[test]
    fn reads_a_header_as_git_writes_it() {
        let root = format!("tree {A}\n{WHO}\n\nm\n");
        let root = head(root.as_bytes()).unwrap();
        assert_eq!(
            (root.tree, root.parents, root.signed),
            (id(A), vec![], false)
        );
        let merge = format!(
            "tree {A}\nparent {B}\nparent {A}\n{WHO}\nencoding UTF-8\ngpgsig -----BEGIN SSH SIGNATURE-----\n abc\n -----END SSH SIGNATURE-----\n\nm\n"
        );
        let merge = head(merge.as_bytes()).unwrap();
        assert_eq!((merge.parents, merge.signed), (vec![id(B), id(A)], true));
        let sha256 = format!("tree {A}\n{WHO}\ngpgsig-sha256 x\n\n");
        assert!(head(sha256.as_bytes()).unwrap().signed);
    }

    #[test]
    fn any_other_shape_is_left_to_libgit2() {
        for odd in [
            format!("tree {A}\n{WHO}\n"),
            format!("parent {B}\ntree {A}\n{WHO}\n\n"),
            format!("tree {A}\nparent {}\n{WHO}\n\n", &B[..39]),
            format!("tree {A}\nparent {B} \n{WHO}\n\n"),
            format!("tree  {A}\n{WHO}\n\n"),
            format!("tree {A}\ncommitter C <c@x> 1 +0000\n\n"),
            format!("tree {A}\nauthor <a@x> 1 +0000\ncommitter C <c@x> 1 +0000\n\n"),
            format!("tree {A}\nauthor A <a@x>> 1 +0000\ncommitter C <c@x> 1 +0000\n\n"),
            format!("tree {A}\nauthor A <a@x> x +0000\ncommitter C <c@x> 1 +0000\n\n"),
            format!("tree {A}\nauthor A <a@x> 1 0000\ncommitter C <c@x> 1 +0000\n\n"),
            format!("tree {A}\nauthor A <a@x> 1 +000\ncommitter C <c@x> 1 +0000\n\n"),
            format!("tree {A}\nauthor A <> 1 +0000\ncommitter C <c@x> 1 +0000\n\n"),
            format!("tree {A}\nauthor A<a@x> 1 +0000\ncommitter C <c@x> 1 +0000\n\n"),
        ] {
            assert_eq!(head(odd.as_bytes()), None, "{odd:?}");
        }
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = head(&bytes);
            let mut framed = format!("tree {A}\nauthor A <a@x> ").into_bytes();
            framed.extend(&bytes);
            let _ = head(&framed);
        }
    }
}
