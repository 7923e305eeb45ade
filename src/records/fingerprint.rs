//! The two exact fingerprints of a note's bytes: sha256 (as the reference records it) and git's
//! blob id; and a vault's id, the fingerprint of its path.

use sha2::{Digest, Sha256};

/// The largest note rutter reads to fingerprint or index (64 MiB: well under a second to read
/// and hash on a slow disk). A larger file is never read, so neither a capture's time budget nor
/// an index refresh is spent on it (a sparse 100 GiB file reads as zeroes for minutes).
pub(crate) const NOTE_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// Lowercase hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&sha256(bytes))
}

/// The sha256 of `bytes`.
pub(crate) fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// A vault's id: the first 16 hex digits of sha256 of its canonical root path (its state and
/// aside folders outside the vault are named by it).
pub(crate) fn vault_id(root: &std::path::Path) -> String {
    let hex = sha256_hex(root.as_os_str().as_encoded_bytes());
    hex[..16].to_string()
}

/// The `sha256:<hex>` form stored in refs.
pub(crate) fn sha256_ref(bytes: &[u8]) -> String {
    format!("sha256:{}", sha256_hex(bytes))
}

/// Git's blob id of `bytes` (what `git hash-object` prints), without storing anything: the
/// SHA-1 of the header `blob <length>\0` followed by the bytes. (Plain SHA-1, where git and
/// libgit2 use collision-detecting SHA-1: for a crafted colliding pair this id is the shared
/// one; the recorded sha256 tells such notes apart.)
pub fn blob_id(bytes: &[u8]) -> String {
    hex(&blob_sha1(bytes))
}

/// The 20 bytes of [`blob_id`].
pub(crate) fn blob_sha1(bytes: &[u8]) -> [u8; 20] {
    let mut h = sha1::Sha1::new();
    h.update(format!("blob {}\0", bytes.len()).as_bytes());
    h.update(bytes);
    h.finalize().into()
}

/// Lowercase hex of a byte string.
/// Hex digits a short hash keeps (git's default abbreviation, and the day files' form).
pub(crate) const SHORT_HEX: usize = 7;

/// `sha256:<first 7 hex>` of a `sha256:<64 hex>` ref hash, as text output shows it (JSON keeps
/// the whole hash); any other text is returned whole.
pub(crate) fn short_hash(hash: &str) -> &str {
    match hash.strip_prefix("sha256:") {
        Some(hex) if hex.len() > SHORT_HEX && hex.is_char_boundary(SHORT_HEX) => {
            &hash[..7 + SHORT_HEX]
        }
        _ => hash,
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 15) as usize] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_values() {
        assert_eq!(
            super::sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            super::blob_id(b"hello\n"),
            "ce013625030ba8dba906f756967f9e9ca394464a"
        );
        assert_eq!(
            super::blob_id(b""),
            "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
        );
    }

    proptest::proptest! {
        /// The id is libgit2's for any bytes (the test may use git2; the code does not).
        #[test]
        fn blob_ids_agree_with_libgit2(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2000)) {
            let want = git2::Oid::hash_object(git2::ObjectType::Blob, &bytes).unwrap();
            proptest::prop_assert_eq!(super::blob_id(&bytes), want.to_string());
        }
    }
}
