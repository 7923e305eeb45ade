//! The byte formats inside a pack entry (git's `Documentation/gitformat-pack.txt`): an entry's
//! header (its type and size), the distance an offset delta names its base by, and a delta's
//! instructions. What they read is untrusted (a pack on disk, once sent by a remote), so every
//! function here checks each length against the bytes it has and answers `None` rather than
//! read past them or allocate what a header merely claims.

/// What a pack entry's header says: its type (1 commit, 2 tree, 3 blob, 4 tag, 6 offset delta,
/// 7 reference delta), the size of its inflated data, and how many bytes the header took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Header {
    pub kind: u8,
    pub size: u64,
    pub len: usize,
}

/// The entry header at the start of `bytes`.
pub(super) fn header(bytes: &[u8]) -> Option<Header> {
    let first = *bytes.first()?;
    let kind = (first >> 4) & 7;
    let mut size = u64::from(first & 15);
    let mut shift = 4;
    let mut len = 1;
    let mut more = first & 0x80 != 0;
    while more {
        let b = *bytes.get(len)?;
        len += 1;
        if shift > 57 {
            return None;
        }
        size |= u64::from(b & 0x7f) << shift;
        shift += 7;
        more = b & 0x80 != 0;
    }
    Some(Header { kind, size, len })
}

/// The distance back to an offset delta's base, from the start of `bytes` (git's own
/// encoding: each continuation adds one before shifting), and how many bytes it took.
pub(super) fn base_distance(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut b = *bytes.first()?;
    let mut distance = u64::from(b & 0x7f);
    let mut len = 1;
    while b & 0x80 != 0 {
        b = *bytes.get(len)?;
        len += 1;
        distance = distance.checked_add(1)?.checked_mul(128)? | u64::from(b & 0x7f);
    }
    Some((distance, len))
}

/// A size at the start of a delta (seven bits a byte, least significant first), and the rest.
fn delta_size(bytes: &[u8]) -> Option<(usize, &[u8])> {
    let mut size: u64 = 0;
    for (i, b) in bytes.iter().enumerate() {
        if i > 9 {
            return None;
        }
        size |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some((usize::try_from(size).ok()?, &bytes[i + 1..]));
        }
    }
    None
}

/// `base` with the delta `delta` applied: `None` when the delta names another base size, copies
/// from outside the base, holds an instruction git never writes (0) or does not make exactly
/// the size it declares.
pub(super) fn apply(base: &[u8], delta: &[u8]) -> Option<Vec<u8>> {
    let (base_len, rest) = delta_size(delta)?;
    let (out_len, mut ops) = delta_size(rest)?;
    if base_len != base.len() {
        return None;
    }
    // The declared size is checked against what the instructions make; here it is only a
    // hint for the first allocation, which a short delta cannot make large.
    let mut out = Vec::with_capacity(out_len.min(ops.len().saturating_mul(0x10000)));
    while let Some((&op, tail)) = ops.split_first() {
        ops = tail;
        if op & 0x80 != 0 {
            let (from, len, tail) = copy_args(op, ops)?;
            ops = tail;
            let end = from.checked_add(len)?;
            out.extend_from_slice(base.get(from..end)?);
        } else if op != 0 {
            let (bytes, tail) = ops.split_at_checked(usize::from(op))?;
            out.extend_from_slice(bytes);
            ops = tail;
        } else {
            return None;
        }
        if out.len() > out_len {
            return None;
        }
    }
    (out.len() == out_len).then_some(out)
}

/// A copy instruction's offset and length (a length of 0 means 0x10000), and the bytes after.
fn copy_args(op: u8, mut ops: &[u8]) -> Option<(usize, usize, &[u8])> {
    let mut field = |bits: std::ops::Range<u8>| -> Option<usize> {
        let mut value = 0usize;
        for (i, bit) in bits.enumerate() {
            if op & (1 << bit) != 0 {
                let (&b, tail) = ops.split_first()?;
                ops = tail;
                value |= usize::from(b) << (8 * i);
            }
        }
        Some(value)
    };
    let from = field(0..4)?;
    let len = match field(4..7)? {
        0 => 0x10000,
        n => n,
    };
    Some((from, len, ops))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A size as a delta stores it.
    fn size(mut n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        loop {
            let b = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(b);
                return out;
            }
            out.push(b | 0x80);
        }
    }

    /// A copy of `len` bytes from `from`, encoded with every byte of both fields.
    fn copy(from: u32, len: u32) -> Vec<u8> {
        let mut out = vec![0xff];
        out.extend_from_slice(&from.to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes()[..3]);
        out
    }

    #[test]
    fn a_delta_copies_and_inserts_as_git_writes_it() {
        let base = b"one two three\n";
        let mut delta = size(base.len());
        delta.extend(size(base.len() + 5));
        delta.extend(copy(0, base.len() as u32));
        delta.extend([5]);
        delta.extend(b"four\n");
        assert_eq!(
            apply(base, &delta).as_deref(),
            Some(&b"one two three\nfour\n"[..])
        );
        // A short copy form: only the low offset byte (absent: 0) and one length byte.
        let mut short = size(base.len());
        short.extend(size(3));
        short.extend([0x80 | 0x01 | 0x10, 4, 3]);
        assert_eq!(apply(base, &short).as_deref(), Some(&b"two"[..]));
    }

    #[test]
    fn a_delta_that_does_not_fit_its_base_or_its_size_is_refused() {
        let base = b"abc";
        let good = [size(3), size(3), copy(0, 3)].concat();
        assert!(apply(base, &good).is_some());
        // Another base size, a copy past the base, a size it does not make, the zero op.
        assert_eq!(apply(base, &[size(4), size(3), copy(0, 3)].concat()), None);
        assert_eq!(apply(base, &[size(3), size(4), copy(0, 4)].concat()), None);
        assert_eq!(apply(base, &[size(3), size(4), copy(0, 3)].concat()), None);
        assert_eq!(apply(base, &[size(3), size(2), copy(0, 3)].concat()), None);
        assert_eq!(apply(base, &[size(3), size(3), vec![0]].concat()), None);
        // An insert longer than what is left, a copy whose fields are cut short.
        assert_eq!(
            apply(base, &[size(3), size(3), vec![3, b'a']].concat()),
            None
        );
        assert_eq!(
            apply(base, &[size(3), size(3), vec![0xff, 0]].concat()),
            None
        );
    }

    #[test]
    fn headers_and_distances_read_as_git_writes_them() {
        // A blob of 100 bytes: low four bits, then 100 >> 4 = 6.
        assert_eq!(
            header(&[0x80 | (3 << 4) | 4, 6]),
            Some(Header {
                kind: 3,
                size: 100,
                len: 2
            })
        );
        assert_eq!(
            header(&[(2 << 4) | 9]),
            Some(Header {
                kind: 2,
                size: 9,
                len: 1
            })
        );
        assert_eq!(header(&[0x80 | (3 << 4)]), None);
        // git's offset encoding: 0x81 0x00 is (1 + 1) * 128 + 0 = 256.
        assert_eq!(base_distance(&[0x81, 0x00]), Some((256, 2)));
        assert_eq!(base_distance(&[0x05]), Some((5, 1)));
        assert_eq!(base_distance(&[0x85]), None);
        assert_eq!(base_distance(&[0xff; 12]), None);
    }

    proptest! {
        /// Whatever the bytes, reading them as a header, a distance or a delta never panics,
        /// and a delta that applies makes exactly the size it declares.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64),
                                       base in proptest::collection::vec(any::<u8>(), 0..32)) {
            let _ = header(&bytes);
            let _ = base_distance(&bytes);
            let mut delta = [size(base.len()), bytes.clone()].concat();
            if let Some(out) = apply(&base, &delta) {
                let (_, rest) = delta_size(&delta).unwrap();
                prop_assert_eq!(delta_size(rest).unwrap().0, out.len());
            }
            delta.truncate(delta.len() / 2);
            let _ = apply(&base, &delta);
        }

        /// A delta made of copies of the base and inserts rebuilds exactly what they say.
        #[test]
        fn copies_and_inserts_rebuild_their_target(
            base in proptest::collection::vec(any::<u8>(), 1..300),
            ops in proptest::collection::vec((any::<bool>(), any::<u16>(), any::<u16>(), proptest::collection::vec(any::<u8>(), 1..127)), 0..12),
        ) {
            let mut target = Vec::new();
            let mut body = Vec::new();
            for (is_copy, a, b, insert) in ops {
                if is_copy {
                    let from = usize::from(a) % base.len();
                    let len = 1 + usize::from(b) % (base.len() - from);
                    target.extend_from_slice(&base[from..from + len]);
                    body.extend(copy(from as u32, len as u32));
                } else {
                    target.extend_from_slice(&insert);
                    body.push(insert.len() as u8);
                    body.extend_from_slice(&insert);
                }
            }
            let delta = [size(base.len()), size(target.len()), body].concat();
            prop_assert_eq!(apply(&base, &delta), Some(target));
        }
    }
}
