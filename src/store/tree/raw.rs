//! The raw tree codec: git's tree object format read and written as bytes, with no object
//! database and no paths. A tree is a run of entries `<mode> <name>\0<id>` in git's entry order
//! ([`git_order`]); this module walks them ([`entries`]), rewrites a tree with entries inserted,
//! replaced or removed in one pass ([`apply`]), and pairs the entries two trees differ in,
//! skipping their identical head and tail ([`differing`]). The year-folder mapping and the
//! object database are the parent's ([`super::Trees`]).

use crate::objectid::ObjectId;
use std::cmp::Ordering;
use std::collections::HashMap;

/// The mode of a regular file entry.
pub(super) const FILE_MODE: &[u8] = b"100644";
/// The mode of a folder (subtree) entry, as git writes it (no leading zero).
pub(super) const DIR_MODE: &[u8] = b"40000";

/// The length of an object id in a tree entry: SHA-1's 20 bytes. A repository of another hash
/// (SHA-256's 32) is not supported: its entries would be misread.
pub(super) const OID_LEN: usize = crate::objectid::LEN;

/// One entry of a raw tree: mode, name and the [`OID_LEN`]-byte object id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct RawEntry<'a> {
    pub(super) mode: &'a [u8],
    pub(super) name: &'a [u8],
    pub(super) oid: &'a [u8; OID_LEN],
}

/// The raw tree `raw` with `updates` (name, mode, id) inserted in git order or replacing the
/// entry of the same name.
pub(super) fn apply<'a>(
    raw: &'a [u8],
    updates: &'a [(Vec<u8>, &'a [u8], Option<ObjectId>)],
) -> Vec<u8> {
    // One pass over the tree and a sort of the new names: moving 36,500 day files into year
    // folders is 73,000 updates of one tree, which a search per update made quadratic.
    let mut by_name: HashMap<&[u8], usize> = HashMap::with_capacity(updates.len());
    for (i, (name, _, _)) in updates.iter().enumerate() {
        by_name.insert(name.as_slice(), i);
    }
    let entry = |i: usize, name: &'a [u8]| -> Option<RawEntry<'a>> {
        let (_, mode, oid) = &updates[i];
        oid.as_ref().map(|oid| RawEntry {
            mode,
            name,
            oid: oid.as_bytes(),
        })
    };
    let mut kept: Vec<RawEntry<'a>> = Vec::new();
    for e in entries(raw) {
        match by_name.remove(e.name) {
            None => kept.push(e),
            Some(i) => kept.extend(entry(i, e.name)),
        }
    }
    let mut added: Vec<RawEntry<'a>> = by_name
        .into_values()
        .filter_map(|i| entry(i, updates[i].0.as_slice()))
        .collect();
    added.sort_by(git_order);
    let mut list = Vec::with_capacity(kept.len() + added.len());
    let (mut a, mut b) = (kept.into_iter().peekable(), added.into_iter().peekable());
    while let (Some(x), Some(y)) = (a.peek(), b.peek()) {
        let next = if git_order(x, y) == Ordering::Less {
            a.next()
        } else {
            b.next()
        };
        list.extend(next);
    }
    list.extend(a);
    list.extend(b);
    let mut out = Vec::with_capacity(raw.len() + 64 * updates.len());
    for e in &list {
        out.extend_from_slice(e.mode);
        out.push(b' ');
        out.extend_from_slice(e.name);
        out.push(0);
        out.extend_from_slice(e.oid);
    }
    out
}

/// Git's tree entry order: by name, a directory's name compared as if it ended in `/`.
fn git_order(a: &RawEntry<'_>, b: &RawEntry<'_>) -> Ordering {
    let common = a.name.len().min(b.name.len());
    let next = |e: &RawEntry<'_>| match e.name.get(common) {
        Some(&c) => c,
        None if e.mode == DIR_MODE => b'/',
        None => 0,
    };
    a.name[..common]
        .cmp(&b.name[..common])
        .then_with(|| next(a).cmp(&next(b)))
}

/// The entries of a raw tree; stops at the first malformed byte.
pub(super) fn entries(raw: &[u8]) -> impl Iterator<Item = RawEntry<'_>> {
    let mut rest = raw;
    std::iter::from_fn(move || {
        let (e, after) = entry_at(rest)?;
        rest = after;
        Some(e)
    })
}

/// The entry at the start of `rest` and what follows it; `None` at the end or a malformed byte.
fn entry_at(rest: &[u8]) -> Option<(RawEntry<'_>, &[u8])> {
    let space = memchr::memchr(b' ', rest)?;
    let nul = space + 1 + memchr::memchr(0, &rest[space + 1..])?;
    let oid = rest.get(nul + 1..nul + 1 + OID_LEN)?.try_into().ok()?;
    let e = RawEntry {
        mode: &rest[..space],
        name: &rest[space + 1..nul],
        oid,
    };
    Some((e, &rest[nul + 1 + OID_LEN..]))
}

/// A differing entry of two raw trees: the old side, the new side, or both (same name).
type Pair<'a> = (Option<RawEntry<'a>>, Option<RawEntry<'a>>);

/// The entries of `a` and `b` paired by name, from the first that differs to where their tails
/// agree. Both are sorted in git order: their identical head and tail are skipped (one day file
/// changes per capture in a tree of thousands), the rest is walked side by side. Pairs of equal
/// entries may remain; the caller skips them.
pub(super) fn differing<'a>(a: &'a [u8], b: &'a [u8]) -> Vec<Pair<'a>> {
    let (start, tail) = common_ends(a, b);
    let (mut x, mut y) = (&a[start..], &b[start..]);
    let mut pairs = Vec::new();
    while !(x.len() == y.len() && x.len() <= tail) {
        let (ex, ey) = (entry_at(x), entry_at(y));
        let order = match (&ex, &ey) {
            (None, None) => break,
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some((e, _)), Some((f, _))) => git_order(e, f),
        };
        let (take_x, take_y) = match order {
            Ordering::Less => (true, false),
            Ordering::Greater => (false, true),
            Ordering::Equal => (true, true),
        };
        pairs.push((pick(ex, take_x, &mut x), pick(ey, take_y, &mut y)));
    }
    pairs
}

/// The entry of `side` when `take`, moving `rest` past it.
fn pick<'a>(
    side: Option<(RawEntry<'a>, &'a [u8])>,
    take: bool,
    rest: &mut &'a [u8],
) -> Option<RawEntry<'a>> {
    let (e, after) = side.filter(|_| take)?;
    *rest = after;
    Some(e)
}

/// For two raw trees: the offset of the first entry that is not byte-identical in both (the
/// same in each, as everything before it is), and the length of their common byte tail, no
/// longer than what remains after that offset in the shorter.
fn common_ends(a: &[u8], b: &[u8]) -> (usize, usize) {
    let n = a.len().min(b.len());
    let same = common_len(n, |i, len| a[i..i + len] == b[i..i + len]);
    let mut start = 0;
    while let Some((_, after)) = entry_at(&a[start..]) {
        let end = a.len() - after.len();
        if end > same {
            break;
        }
        start = end;
    }
    let tail = common_len(n - start, |i, len| {
        a[a.len() - i - len..a.len() - i] == b[b.len() - i - len..b.len() - i]
    });
    (start, tail)
}

/// The longest `k <= n` with `eq(i, len)` true for every chunk `[i, i + len)` of `[0, k)`,
/// compared a chunk at a time (slice equality is a `memcmp`).
fn common_len(n: usize, eq: impl Fn(usize, usize) -> bool) -> usize {
    const CHUNK: usize = 512;
    let mut k = 0;
    while k + CHUNK <= n && eq(k, CHUNK) {
        k += CHUNK;
    }
    while k < n && eq(k, 1) {
        k += 1;
    }
    k
}
