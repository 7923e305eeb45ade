//! A pack's index, version 2 (git's `Documentation/gitformat-pack.txt`): the sorted ids with
//! their offsets in the pack. Read whole into memory, its tables checked against its length
//! once; a lookup is a binary search within the ids that share the first byte.

use crate::objectid::{ObjectId, LEN};

use crate::store::pack::INDEX_MAGIC as MAGIC;

const FANOUT: usize = 8;
const IDS: usize = FANOUT + 256 * 4;

/// One pack's index.
pub(super) struct Index {
    bytes: Vec<u8>,
    count: usize,
    /// Where the offsets table starts (after the ids and their CRCs).
    offsets: usize,
    /// Where the table of offsets past 2 GiB starts.
    large: usize,
}

impl Index {
    /// The index in `bytes`; `None` unless it is a version 2 index whose tables fit its length
    /// and whose fan-out never falls. An offset is checked against the pack where it is used.
    pub(super) fn parse(bytes: Vec<u8>) -> Option<Index> {
        if bytes.get(..4)? != MAGIC || be32(&bytes, 4)? != 2 {
            return None;
        }
        let mut last = 0;
        for i in 0..256 {
            let n = be32(&bytes, FANOUT + 4 * i)?;
            if n < last {
                return None;
            }
            last = n;
        }
        let count = usize::try_from(last).ok()?;
        let offsets = IDS.checked_add(count.checked_mul(LEN + 4)?)?;
        let large = offsets.checked_add(count.checked_mul(4)?)?;
        let trailer = 2 * LEN;
        if bytes.len() < large.checked_add(trailer)?
            || !(bytes.len() - large - trailer).is_multiple_of(8)
        {
            return None;
        }
        Some(Index {
            bytes,
            count,
            offsets,
            large,
        })
    }

    /// The offset of `id`'s entry in the pack, if the pack holds it.
    pub(super) fn find(&self, id: &ObjectId) -> Option<u64> {
        let first = usize::from(id.as_bytes()[0]);
        let lo = match first {
            0 => 0,
            _ => be32(&self.bytes, FANOUT + 4 * (first - 1))? as usize,
        };
        let hi = be32(&self.bytes, FANOUT + 4 * first)? as usize;
        let ids = self.bytes.get(IDS + lo * LEN..IDS + hi * LEN)?;
        let mut span = 0..hi.checked_sub(lo)?;
        while span.start < span.end {
            let mid = span.start + (span.end - span.start) / 2;
            match ids.get(mid * LEN..(mid + 1) * LEN)?.cmp(id.as_bytes()) {
                std::cmp::Ordering::Less => span.start = mid + 1,
                std::cmp::Ordering::Greater => span.end = mid,
                std::cmp::Ordering::Equal => return self.offset(lo + mid),
            }
        }
        None
    }

    /// The offset of the `i`th entry in id order.
    fn offset(&self, i: usize) -> Option<u64> {
        if i >= self.count {
            return None;
        }
        let small = be32(&self.bytes, self.offsets + 4 * i)?;
        if small & 0x8000_0000 == 0 {
            return Some(u64::from(small));
        }
        let at = self.large.checked_add(8 * (small & 0x7fff_ffff) as usize)?;
        let b = self.bytes.get(at..at + 8)?;
        Some(u64::from_be_bytes(b.try_into().ok()?))
    }
}

fn be32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::pack::{write_index, Indexed};
    use proptest::prelude::*;

    /// A version 2 index of `entries` (id, offset), as `init`'s pack writer writes one.
    fn index_of(entries: &[([u8; 20], u64)]) -> Vec<u8> {
        let mut objects: Vec<Indexed> = entries
            .iter()
            .map(|(id, offset)| Indexed {
                id: ObjectId::from_bytes(*id),
                crc: 0,
                offset: *offset,
            })
            .collect();
        let mut out = Vec::new();
        write_index(&mut out, &mut objects, &[0; 20]).unwrap();
        out
    }

    #[test]
    fn finds_each_id_small_and_large_offsets_alike() {
        let entries = [([1; 20], 12), ([0xfe; 20], 500), ([7; 20], 0x1_0000_0000)];
        let index = Index::parse(index_of(&entries)).unwrap();
        assert_eq!(index.find(&ObjectId::from_bytes([1; 20])), Some(12));
        assert_eq!(index.find(&ObjectId::from_bytes([0xfe; 20])), Some(500));
        assert_eq!(
            index.find(&ObjectId::from_bytes([7; 20])),
            Some(0x1_0000_0000)
        );
        assert_eq!(index.find(&ObjectId::from_bytes([2; 20])), None);
        assert_eq!(index.find(&ObjectId::from_bytes([0xff; 20])), None);
        assert_eq!(index.find(&ObjectId::from_bytes([0; 20])), None);
    }

    #[test]
    fn an_index_that_does_not_hold_together_is_refused() {
        let good = index_of(&[([1; 20], 12)]);
        assert!(Index::parse(good.clone()).is_some());
        // Version 1, a cut table, a fan-out that falls, a large offset with no table.
        let mut v1 = good.clone();
        v1[7] = 1;
        assert!(Index::parse(v1).is_none());
        assert!(Index::parse(good[..good.len() - 1].to_vec()).is_none());
        let mut falls = good.clone();
        falls[FANOUT + 4 * 200 + 3] = 0;
        assert!(Index::parse(falls).is_none());
        let mut large = good.clone();
        let at = IDS + 20 + 4;
        large[at] = 0x80;
        let index = Index::parse(large).unwrap();
        assert_eq!(index.find(&ObjectId::from_bytes([1; 20])), None);
    }

    proptest! {
        /// Any bytes are refused or read without a panic, and every lookup stays in bounds.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..1200),
                                       id in any::<[u8; 20]>()) {
            let mut framed = MAGIC.to_vec();
            framed.extend(2u32.to_be_bytes());
            framed.extend(&bytes);
            for candidate in [bytes, framed] {
                if let Some(index) = Index::parse(candidate) {
                    let _ = index.find(&ObjectId::from_bytes(id));
                }
            }
        }
    }
}
