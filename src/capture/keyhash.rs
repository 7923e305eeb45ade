//! The dedupe cache's two hashes as fixed-size bytes (spec/capture.md, "Dedupe cache"): a
//! session is the first 16 bytes of the sha256 of its id (its first byte names its shard file,
//! the other 15 start each of its lines there), a key the first 16 bytes of the sha256 of the
//! key's JSON ([`crate::records::dedupe_key_into`]). Only the shard files spell them in hex.
//!
//! Hex strings were three allocations per key (the key, its copy in the pending list, its copy
//! in the shard's map), most of `init`'s dedupe warm-up and its memory on a long vault.

use crate::records::fingerprint;

/// A session id, as the first 16 bytes of its sha256.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Session([u8; 16]);

/// A dedupe key, as the first 16 bytes of the sha256 of its JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Key(pub(crate) [u8; 16]);

/// The part of a session's hash a shard file's lines start with (after the shard's byte).
pub(crate) type Rest = [u8; 15];

impl Session {
    /// The session of the id `sid`.
    pub(crate) fn of(sid: &str) -> Session {
        Session(first16(&fingerprint::sha256(sid.as_bytes())))
    }

    /// The session whose hash starts with `shard`, then `rest`.
    #[cfg(test)]
    pub(crate) fn from_parts(shard: u8, rest: Rest) -> Session {
        let mut bytes = [shard; 16];
        bytes[1..].copy_from_slice(&rest);
        Session(bytes)
    }

    /// The byte that names its shard file.
    pub(crate) fn shard(self) -> u8 {
        self.0[0]
    }

    /// The rest of its hash, which its lines in the shard file start with.
    pub(crate) fn rest(self) -> Rest {
        let mut rest = [0; 15];
        rest.copy_from_slice(&self.0[1..]);
        rest
    }
}

impl Key {
    /// The key whose JSON is `json`.
    pub(crate) fn of(json: &[u8]) -> Key {
        Key(first16(&fingerprint::sha256(json)))
    }
}

fn first16(hash: &[u8; 32]) -> [u8; 16] {
    let mut out = [0; 16];
    out.copy_from_slice(&hash[..16]);
    out
}

/// The name of shard file `shard`: its two lowercase hex digits.
pub(crate) fn shard_name(shard: u8) -> String {
    fingerprint::hex(&[shard])
}

const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// Writes `bytes` as lowercase hex into `out`, which is twice as long.
pub(crate) fn write_hex(bytes: &[u8], out: &mut [u8]) {
    for (b, pair) in bytes.iter().zip(out.chunks_exact_mut(2)) {
        pair[0] = DIGITS[(b >> 4) as usize];
        pair[1] = DIGITS[(b & 15) as usize];
    }
}

/// The `N` bytes that `hex` (`2 × N` lowercase hex digits) spells; `None` for anything else.
pub(crate) fn read_hex<const N: usize>(hex: &[u8]) -> Option<[u8; N]> {
    if hex.len() != 2 * N {
        return None;
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut out = [0; N];
    for (o, pair) in out.iter_mut().zip(hex.chunks_exact(2)) {
        *o = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The bytes are the hex the cache wrote before (the first 32 hex digits of the sha256), so
    /// a shard file written by an earlier version reads the same.
    #[test]
    fn the_hashes_are_the_first_32_hex_digits_of_the_sha256() {
        let sid = "acca21af-64cb-4439-a34b-0f83dd5b06b1";
        let full = fingerprint::sha256_hex(sid.as_bytes());
        let session = Session::of(sid);
        assert_eq!(shard_name(session.shard()), full[..2]);
        let mut rest = [0; 30];
        write_hex(&session.rest(), &mut rest);
        assert_eq!(rest, full.as_bytes()[2..32]);
        assert_eq!(
            Session::from_parts(session.shard(), session.rest()),
            session
        );
        let key = Key::of(b"[\"s\",\"x\",[]]");
        let mut hex = [0; 32];
        write_hex(&key.0, &mut hex);
        assert_eq!(
            hex,
            fingerprint::sha256_hex(b"[\"s\",\"x\",[]]").as_bytes()[..32]
        );
    }

    proptest! {
        /// Hex reads back as written, and only lowercase hex of the right length is read.
        #[test]
        fn hex_reads_back_and_nothing_else_reads(bytes in any::<[u8; 16]>(), junk in proptest::collection::vec(any::<u8>(), 0..40)) {
            let mut hex = [0; 32];
            write_hex(&bytes, &mut hex);
            prop_assert_eq!(read_hex::<16>(&hex), Some(bytes));
            let spelt = fingerprint::hex(&bytes);
            prop_assert_eq!(spelt.as_bytes(), &hex[..]);
            let lower = |c: &u8| c.is_ascii_digit() || (b'a'..=b'f').contains(c);
            let want = (junk.len() == 32 && junk.iter().all(lower)).then_some(());
            prop_assert_eq!(read_hex::<16>(&junk).map(|_| ()), want);
        }
    }
}
