//! How a cited ref reads at recall time, through the identity projection (anchor §8, DESIGN
//! §7): `path@hash`, then `(changed since capture)`, `(renamed to X)`, `(confirmed X; the hash
//! now matches Y)` or `[UNRESOLVED -- candidates: …]`. Stored entries are never rewritten.

use crate::index::identity::exists_in_vault;
use crate::index::{Index, IndexError};
use crate::records::{fingerprint, NoteRef};
use std::io::Read;

/// Files larger than this are not re-hashed to detect a change in place.
const MAX_HASHED: u64 = 8 * 1024 * 1024;

/// The ref as recall shows it.
pub fn describe(index: &Index, r: &NoteRef) -> Result<String, IndexError> {
    let base = format!("{}@{}", r.path, r.hash);
    if exists_in_vault(index.root(), &r.path) {
        return Ok(match current_hash(index, &r.path) {
            Some(h) if h != r.hash => format!("{base} (changed since capture)"),
            _ => base,
        });
    }
    if let Some(b) = index.binding(&r.path, &r.hash)? {
        return Ok(match b.conflict {
            Some(other) => format!("{base} (confirmed {}; the hash now matches {other})", b.to),
            None => format!("{base} (renamed to {})", b.to),
        });
    }
    let cands = index.unresolved(&r.path, &r.hash)?.unwrap_or_default();
    Ok(format!(
        "{base} [UNRESOLVED -- candidates: {}]",
        candidate_list(&cands)
    ))
}

/// `a, b (git: …)` or `none`.
pub fn candidate_list(c: &[crate::index::identity::Candidate]) -> String {
    if c.is_empty() {
        return "none".to_string();
    }
    c.iter()
        .map(|c| c.describe())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The sha256 of the file at `path` now (read without following a final symlink).
fn current_hash(index: &Index, path: &str) -> Option<String> {
    let full = index.root().join(path);
    let meta = std::fs::metadata(&full).ok()?;
    if !meta.is_file() || meta.len() > MAX_HASHED {
        return None;
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(&full)
        .ok()?
        .read_to_end(&mut bytes)
        .ok()?;
    Some(fingerprint::sha256_ref(&bytes))
}
