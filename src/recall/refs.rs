//! How a cited ref reads at recall time, through the identity projection (anchor §8, DESIGN
//! §7): `path@hash`, then `(changed since capture)`, `(renamed to X)`, `(renamed to X; changed
//! since capture)`, `(confirmed X; the hash now matches Y)` or `[UNRESOLVED -- candidates: …]`.
//! Stored entries are never rewritten.

use super::in_vault::Direct;
#[cfg(test)]
use crate::index::identity::exists_in_vault;
use crate::index::{Index, IndexError};
use crate::records::fingerprint;
#[cfg(test)]
use crate::records::NoteRef;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;

/// Files larger than this are not re-hashed to detect a change in place.
const MAX_HASHED: u64 = 8 * 1024 * 1024;

/// The ref as recall shows it.
#[cfg(test)]
pub(crate) fn describe(index: &Index, r: &NoteRef) -> Result<String, IndexError> {
    describe_now(index, r, &note_now(index, &r.path))
}

/// What a cited path holds now: `None` when it does not resolve inside the vault, else its
/// sha256 (`None` inside when it is not a readable file of at most [`MAX_HASHED`] bytes).
type NoteNow = Option<Option<String>>;

#[cfg(test)]
fn note_now(index: &Index, path: &str) -> NoteNow {
    exists_in_vault(index.root(), path).then(|| current_hash(index, path))
}

/// [`describe`] with what the path holds now already known.
#[cfg(test)]
fn describe_now(index: &Index, r: &NoteRef, now: &NoteNow) -> Result<String, IndexError> {
    let tail = tail(index, &r.path, &r.hash, now, &mut |p| note_now(index, p))?;
    Ok(format!(
        "{}@{}{}",
        r.path,
        fingerprint::short_hash(&r.hash),
        tail.as_deref().unwrap_or("")
    ))
}

/// What follows `path@hash` when the ref is shown, if anything. `now_of` says what another
/// path holds now: a note renamed and then edited reads `(renamed to X; changed since
/// capture)`, so a decision never seems to rest on text that is no longer there.
fn tail(
    index: &Index,
    path: &str,
    hash: &str,
    now: &NoteNow,
    now_of: &mut dyn FnMut(&str) -> NoteNow,
) -> Result<Option<String>, IndexError> {
    if let Some(current) = now {
        return Ok(match current {
            Some(h) if h != hash => Some(" (changed since capture)".to_string()),
            _ => None,
        });
    }
    if let Some(b) = index.binding(path, hash)? {
        return Ok(Some(match b.conflict {
            Some(other) => format!(" (confirmed {}; the hash now matches {other})", b.to),
            None => match now_of(&b.to) {
                Some(Some(h)) if h != hash => {
                    format!(" (renamed to {}; changed since capture)", b.to)
                }
                // The note it became is gone too: say so, never a rename to nothing.
                None => format!(" (renamed to {}; deleted since)", b.to),
                _ => format!(" (renamed to {})", b.to),
            },
        }));
    }
    let cands = index.unresolved(path, hash)?.unwrap_or_default();
    Ok(Some(format!(
        " [UNRESOLVED -- candidates: {}]",
        candidate_list(&cands)
    )))
}

/// The refs of one answer as recall shows them, resolving and hashing each cited path once: `recent --all` on the
/// ten-year vault shows 90,000 refs to 10,000 notes, and resolving (a `readlink` per path
/// component) and hashing every ref again took most of its time. One answer reads each note
/// once, so all of its refs to a note agree.
pub(crate) struct Shown<'a> {
    index: &'a Index,
    seen: std::cell::RefCell<std::collections::HashMap<String, NoteNow>>,
    in_vault: std::cell::RefCell<super::in_vault::InVault<'a>>,
    /// The index's hash and size of each note, when the caller has just made the notes fresh
    /// ([`Shown::from_fresh_index`]).
    indexed: Option<std::collections::HashMap<String, (String, u64)>>,
    /// The cited paths found not to resolve inside the vault, in the order met.
    absent: std::cell::RefCell<Vec<String>>,
}

impl<'a> Shown<'a> {
    pub(crate) fn new(index: &'a Index) -> Shown<'a> {
        Shown {
            index,
            seen: Default::default(),
            in_vault: std::cell::RefCell::new(super::in_vault::InVault::new(index.root())),
            indexed: None,
            absent: Default::default(),
        }
    }

    /// The cited paths this answer found gone (not resolving inside the vault): a caller whose
    /// index still holds a note at one of them has not heard of its rename yet.
    pub(crate) fn absent(&self) -> Vec<String> {
        self.absent.borrow().clone()
    }

    /// A [`Shown`] that takes a note's hash from the index instead of reading the note, for an
    /// answer that cites thousands of notes (`recent --all` read every cited note again). The
    /// caller has just run the freshness check (spec/index.md), so the index holds what each
    /// note holds, as `search` relies on; a cited path the index does not hold as a note (a
    /// symlink, a path through a linked folder, a file that is no note) is read as before.
    pub(crate) fn from_fresh_index(index: &'a Index) -> Result<Shown<'a>, IndexError> {
        let mut shown = Shown::new(index);
        shown.indexed = Some(index.note_hashes()?);
        Ok(shown)
    }

    /// The ref as recall shows it (the tests compare it with [`describe`]).
    #[cfg(test)]
    pub(crate) fn ref_text(&self, r: &NoteRef) -> String {
        let mut out = String::new();
        self.write(&mut out, &r.path, &r.hash);
        out
    }

    /// The ref cited as `path` with `hash`, as recall shows it, appended to `out` (the
    /// renderings' [`super::render::RefText`]).
    pub(crate) fn write(&self, out: &mut String, path: &str, hash: &str) {
        out.push_str(path);
        out.push('@');
        out.push_str(fingerprint::short_hash(hash));
        // A note that reads as it did at capture (the common case) needs no query and no text;
        // the bare `path@hash` when the index cannot be read.
        if self.reads_as_captured(path, hash) {
            return;
        }
        let now = self.now(path);
        if let Ok(Some(t)) = tail(self.index, path, hash, &now, &mut |p| self.now(p)) {
            out.push_str(&t);
        }
    }

    /// Whether `path` holds now what it held when `hash` was taken, compared where it is
    /// remembered (a page cites the same notes thousands of times).
    fn reads_as_captured(&self, path: &str, hash: &str) -> bool {
        if let Some(now) = self.seen.borrow().get(path) {
            return matches!(now, Some(Some(current)) if current == hash);
        }
        matches!(self.now(path), Some(Some(current)) if current == hash)
    }

    /// What `path` holds now, read once per answer.
    fn now(&self, path: &str) -> NoteNow {
        if let Some(now) = self.seen.borrow().get(path) {
            return now.clone();
        }
        // A note the fresh index holds was reached by the walk through real folders of the
        // vault, never through a symlink (spec/index.md): inside, with no path resolved again.
        let indexed = self.indexed.as_ref().and_then(|m| m.get(path));
        let now = match indexed {
            Some((sha, size)) => Some((*size <= MAX_HASHED).then(|| sha.clone())),
            None => self.read_now(path),
        };
        if now.is_none() {
            self.absent.borrow_mut().push(path.to_string());
        }
        self.seen.borrow_mut().insert(path.to_string(), now.clone());
        now
    }

    /// What `path` holds now, read from the file: opened at once when it lies inside the vault
    /// through real folders, else resolved first (`InVault`).
    fn read_now(&self, path: &str) -> NoteNow {
        let mut in_vault = self.in_vault.borrow_mut();
        match in_vault.open_direct(path) {
            Direct::Opened(file) => Some(hash_open(file)),
            Direct::Absent => None,
            Direct::Unsure => in_vault
                .exists(path)
                .then(|| current_hash(self.index, path)),
        }
    }
}

/// `a, b (git: …)` or `none`.
pub(crate) fn candidate_list(c: &[crate::index::identity::Candidate]) -> String {
    if c.is_empty() {
        return "none".to_string();
    }
    c.iter()
        .map(|c| c.describe())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The sha256 of the file at `path` now, through symlinks as capture hashed it (the caller
/// checked with `exists_in_vault` that it resolves inside the vault). The open does not block
/// (a FIFO is not a file) and the size check uses the open file's own metadata.
fn current_hash(index: &Index, path: &str) -> Option<String> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(index.root().join(path))
        .ok()?;
    hash_open(file)
}

/// The sha256 of an open file (opened not blocking), `None` when it is not a regular file of
/// at most [`MAX_HASHED`] bytes or cannot be read.
fn hash_open(mut file: std::fs::File) -> Option<String> {
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_HASHED {
        return None;
    }
    // Read to the end by hand: `read_to_end` asks the file for its size and position again
    // (two more system calls a note, 9,000 notes in `recent --all`).
    let mut bytes = vec![0; meta.len() as usize + 1];
    let mut len = 0;
    loop {
        match file.read(&mut bytes[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return None,
        }
        if len == bytes.len() {
            // Grown since it was measured: never read past the bound a note is hashed to.
            if len as u64 > MAX_HASHED {
                return None;
            }
            bytes.resize((2 * len).min(MAX_HASHED as usize + 1), 0);
        }
    }
    Some(fingerprint::sha256_ref(&bytes[..len]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_edited_in_place_reads_as_changed_and_a_fifo_is_never_read() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("a.md"), "now\n").unwrap();
        crate::fsx::testing::fifo(&t.path().join("f.md"));
        let index = Index::in_memory(t.path());
        let shown = |path: &str, hash: &str| describe(&index, &NoteRef::new(path, hash, None));
        let now = fingerprint::sha256_ref(b"now\n");
        let short = fingerprint::short_hash(&now);
        assert_eq!(shown("a.md", &now).unwrap(), format!("a.md@{short}"));
        assert_eq!(
            shown("a.md", "sha256:00").unwrap(),
            "a.md@sha256:00 (changed since capture)"
        );
        assert_eq!(shown("f.md", "sha256:00").unwrap(), "f.md@sha256:00");
    }

    /// A renamed note reads as renamed; renamed and then edited, as renamed *and* changed
    /// (the new-user trial of 2026-12-04, finding 1), in `describe` and in one answer alike.
    #[test]
    fn a_note_renamed_and_then_edited_reads_as_renamed_and_changed() {
        use crate::index::identity::{BoundTo, DeadRef, Projected};
        let t = tempfile::tempdir().unwrap();
        let cited = fingerprint::sha256_ref(b"as cited\n");
        std::fs::write(t.path().join("same.md"), "as cited\n").unwrap();
        std::fs::write(t.path().join("edited.md"), "as cited\nand more\n").unwrap();
        let mut index = Index::in_memory(t.path());
        let bound = |from: &str, to: &str| {
            let dead = DeadRef {
                from: from.into(),
                hash: cited.clone(),
                blob: None,
            };
            let to = BoundTo {
                to: to.into(),
                detected: "exact-hash".into(),
                ts: "2026-12-04T00:00:00.000Z".into(),
                conflict: None,
            };
            (dead, Projected::Bound(to))
        };
        index
            .write_projection(&[bound("a.md", "same.md"), bound("b.md", "edited.md")])
            .unwrap();
        let short = fingerprint::short_hash(&cited);
        let (a, b) = (
            NoteRef::new("a.md", &cited, None),
            NoteRef::new("b.md", &cited, None),
        );
        let memo = Shown::new(&index);
        for (r, want) in [
            (&a, format!("a.md@{short} (renamed to same.md)")),
            (
                &b,
                format!("b.md@{short} (renamed to edited.md; changed since capture)"),
            ),
        ] {
            assert_eq!(describe(&index, r).unwrap(), want);
            assert_eq!(memo.ref_text(r), want);
        }
    }

    #[test]
    fn one_answer_resolves_each_path_once_and_shows_what_describe_shows() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("a.md"), "now\n").unwrap();
        let index = Index::in_memory(t.path());
        let now = fingerprint::sha256_ref(b"now\n");
        let refs = [
            NoteRef::new("a.md", &now, None),
            NoteRef::new("a.md", "sha256:00", None),
            NoteRef::new("gone.md", "sha256:01", None),
            NoteRef::new("../out.md", "sha256:02", None),
        ];
        let memo = Shown::new(&index);
        for r in &refs {
            assert_eq!(memo.ref_text(r), describe(&index, r).unwrap());
        }
        // Remembered for this answer: the note's content as first read.
        std::fs::write(t.path().join("a.md"), "later\n").unwrap();
        assert_eq!(
            memo.ref_text(&refs[0]),
            format!("a.md@{}", fingerprint::short_hash(&now))
        );
        assert_eq!(memo.seen.borrow().len(), 3);
    }
}
