//! The verify cache's `entries` file and, beside it, `entries-index`: where the lines of each
//! day lie in it, so `log` reads only the lines of the days it shows instead of every line of
//! the history (spec/verify.md, "The entries index"). This module owns both files' writes (the
//! index is appended or rewritten in the same save as `entries`) and the index's format.
//!
//! The index is a sequence of 32-byte records. A *run* is consecutive lines of `entries` with the
//! same first eight bytes (an entry id's day): those bytes, its start and end offsets (end after
//! its last newline; little-endian u64s) and eight zero bytes. A *seal* says which `entries` the
//! records before it describe: the bytes `\xffrutidx1` (no line of a UTF-8 file starts with
//! 0xff), its length, inode and ctime (ns). The index is trusted only when its last record is a
//! seal naming `entries` as it is and its runs lie in file order within that length; otherwise
//! (a crash between the two writes, an older cache, a hand edit, a torn or garbage index) the
//! reader scans `entries` whole, as before the index, and writes a new index from that scan.

use crate::fsx::{Dir, FsError};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{FileExt, MetadataExt};

/// The list of which commit added each entry.
pub(crate) const ENTRIES: &str = "entries";
/// Its index.
pub(crate) const NAME: &str = "entries-index";
const RECORD: usize = 32;
const SEAL: [u8; 8] = *b"\xffrutidx1";
/// The largest index kept (262,144 runs, 6 MiB for 36,500 days of one run each): a file whose
/// days interleave line by line gets none and is scanned whole; an append that would pass it
/// leaves the index stale, and the rebuild merges the runs appends split.
const MAX: u64 = 8 << 20;
/// The bytes of the index read at a time (a whole number of records).
const BLOCK: usize = 64 * 1024;

/// The first eight bytes of an id or a line, as one number; `None` when shorter.
pub(crate) fn head(bytes: &[u8]) -> Option<u64> {
    let first: [u8; 8] = bytes.get(..8)?.try_into().ok()?;
    Some(u64::from_le_bytes(first))
}

/// What `entries` was when an index was sealed: its length, inode and ctime (which every write
/// moves and no user call can set back).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Seal {
    pub len: u64,
    ino: u64,
    ctime_ns: i64,
}

impl Seal {
    /// `entries` as the open `file` is now.
    pub(crate) fn of(file: &File) -> Option<Seal> {
        let m = file.metadata().ok()?;
        let ctime_ns = m.ctime().saturating_mul(1_000_000_000);
        Some(Seal {
            len: m.len(),
            ino: m.ino(),
            ctime_ns: ctime_ns.saturating_add(m.ctime_nsec()),
        })
    }

    fn record(&self) -> [u8; RECORD] {
        let mut r = [0u8; RECORD];
        r[..8].copy_from_slice(&SEAL);
        r[8..16].copy_from_slice(&self.len.to_le_bytes());
        r[16..24].copy_from_slice(&self.ino.to_le_bytes());
        r[24..].copy_from_slice(&self.ctime_ns.to_le_bytes());
        r
    }

    fn parse(r: &[u8]) -> Option<Seal> {
        let word = |i: usize| r.get(i..i + 8).and_then(|b| b.try_into().ok());
        (r.get(..8)? == SEAL).then_some(())?;
        Some(Seal {
            len: u64::from_le_bytes(word(8)?),
            ino: u64::from_le_bytes(word(16)?),
            ctime_ns: i64::from_le_bytes(word(24)?),
        })
    }
}

/// The runs of lines, built as they are read or written.
#[derive(Debug, Default)]
pub(crate) struct Builder {
    out: Vec<u8>,
    /// The run being extended: head, start, end.
    run: Option<(u64, u64, u64)>,
    /// Grown past [`MAX`]: no index.
    full: bool,
}

impl Builder {
    /// `bytes` (whole lines; only the file's last may lack its newline), found at offset `at`.
    pub(crate) fn lines(&mut self, bytes: &[u8], at: u64) {
        let mut start = at;
        for line in bytes.split_inclusive(|&b| b == b'\n') {
            let end = start + line.len() as u64;
            match head(line.strip_suffix(b"\n").unwrap_or(line)) {
                Some(h) => match &mut self.run {
                    Some((rh, _, re)) if *rh == h && *re == start => *re = end,
                    _ => {
                        self.flush();
                        self.run = Some((h, start, end));
                    }
                },
                // A line shorter than a head names no id a head is asked for.
                None => self.flush(),
            }
            start = end;
        }
    }

    fn flush(&mut self) {
        if let Some((h, start, end)) = self.run.take() {
            if self.out.len() as u64 + 2 * RECORD as u64 > MAX {
                self.full = true;
                return;
            }
            self.out.extend_from_slice(&h.to_le_bytes());
            self.out.extend_from_slice(&start.to_le_bytes());
            self.out.extend_from_slice(&end.to_le_bytes());
            self.out.extend_from_slice(&[0u8; 8]);
        }
    }

    /// The records and the seal, to be written in one write; `None` once past [`MAX`].
    pub(crate) fn sealed(mut self, seal: Seal) -> Option<Vec<u8>> {
        self.flush();
        if self.full {
            return None;
        }
        self.out.extend_from_slice(&seal.record());
        Some(self.out)
    }
}

/// A run of `entries` whose lines all start with `head`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    pub head: u64,
    pub start: u64,
    pub end: u64,
}

/// The runs of `entries` (as `seal` describes it now) whose heads are among `heads` (sorted), in
/// file order; `None` when `index` is not sealed for it, or its runs are not in file order within
/// its length (read in blocks, never held whole).
pub(crate) fn runs(index: &File, seal: Seal, heads: &[u64]) -> Option<Vec<Run>> {
    let len = index.metadata().ok()?.len();
    if len < RECORD as u64 || len % RECORD as u64 != 0 || len > MAX {
        return None;
    }
    let body = len - RECORD as u64;
    let mut last = [0u8; RECORD];
    index.read_exact_at(&mut last, body).ok()?;
    if Seal::parse(&last)? != seal {
        return None;
    }
    let (mut found, mut end, mut at) = (Vec::new(), 0u64, 0u64);
    let mut buf = vec![0u8; BLOCK];
    while at < body {
        let n = BLOCK.min(usize::try_from(body - at).ok()?);
        index.read_exact_at(&mut buf[..n], at).ok()?;
        for r in buf[..n].chunks_exact(RECORD) {
            if r[0] == 0xff {
                // An earlier append's seal: the runs after it start at or after its length.
                let earlier = Seal::parse(r)?;
                (earlier.len >= end && earlier.len <= seal.len).then_some(())?;
                end = earlier.len;
                continue;
            }
            let word = |i: usize| u64::from_le_bytes(r[i..i + 8].try_into().unwrap_or_default());
            let run = Run {
                head: word(0),
                start: word(8),
                end: word(16),
            };
            if run.start < end || run.end <= run.start || run.end > seal.len || word(24) != 0 {
                return None;
            }
            end = run.end;
            if heads.binary_search(&run.head).is_ok() {
                found.push(run);
            }
        }
        at += n as u64;
    }
    Some(found)
}

/// Writes `entries` whole as `text`, and its index; the index is left out (removed) when the
/// file just written cannot be told from another writer's.
pub(crate) fn rewrite(dir: &Dir, text: &str) -> Result<(), FsError> {
    let file = dir.write_atomic_open(ENTRIES, text.as_bytes())?;
    let mut built = Builder::default();
    built.lines(text.as_bytes(), 0);
    let sealed = Seal::of(&file)
        .filter(|s| s.len == text.len() as u64)
        .and_then(|s| built.sealed(s));
    let _ = match sealed {
        Some(bytes) => dir.write_atomic(NAME, &bytes),
        None => dir.remove(NAME),
    };
    Ok(())
}

/// Appends `text` (whole lines) to `entries`, and then its runs and a new seal to the index when
/// the index was sealed for `entries` as it was just before and nobody else wrote it between
/// (the file's length and inode after the write are exactly this write's); else the index is
/// left stale, for the next reader to rebuild.
pub(crate) fn append(dir: &Dir, text: &str) -> Result<(), FsError> {
    let mut entries = dir.open_append(ENTRIES)?;
    if text.is_empty() {
        return Ok(());
    }
    let before = Seal::of(&entries.file).filter(|s| s.len == entries.len);
    let index = before.and_then(|b| sealed_index(dir, b));
    entries
        .file
        .write_all(text.as_bytes())
        .map_err(|source| FsError::Io {
            path: entries.path.clone(),
            source,
        })?;
    let (Some(before), Some(mut index)) = (before, index) else {
        return Ok(());
    };
    let after = Seal::of(&entries.file);
    let own = after.is_some_and(|a| a.ino == before.ino && a.len == before.len + text.len() as u64);
    // A file that did not end with a newline glued this write's first line onto its last.
    if !own || !entries.ends_with_newline {
        return Ok(());
    }
    let mut built = Builder::default();
    built.lines(text.as_bytes(), before.len);
    let bytes = after.and_then(|a| built.sealed(a));
    if let Some(bytes) = bytes.filter(|b| index.len + b.len() as u64 <= MAX) {
        let _ = index.file.write_all(&bytes);
    }
    Ok(())
}

/// The index opened for appending when its last record seals `entries` as `before`.
fn sealed_index(dir: &Dir, before: Seal) -> Option<crate::fsx::AppendFile> {
    let index = dir.open_append_existing(NAME).ok().flatten()?;
    if index.len < RECORD as u64 || index.len % RECORD as u64 != 0 {
        return None;
    }
    let mut last = [0u8; RECORD];
    index
        .file
        .read_exact_at(&mut last, index.len - RECORD as u64)
        .ok()?;
    (Seal::parse(&last)? == before).then_some(index)
}

/// Writes the index a scan of the whole of `entries` (`file`, as `before` when the scan began)
/// built, if the file is still as it was (nothing was written to it during the scan).
pub(crate) fn publish(dir: &Dir, file: &File, before: Seal, built: Builder) {
    if Seal::of(file) != Some(before) {
        return;
    }
    if let Some(bytes) = built.sealed(before) {
        let _ = dir.write_atomic(NAME, &bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> (tempfile::TempDir, Dir) {
        let t = tempfile::tempdir().unwrap();
        let d = Dir::open(t.path()).unwrap();
        (t, d)
    }

    fn all_runs(d: &Dir) -> Option<Vec<Run>> {
        let entries = d.open_read(ENTRIES).unwrap().unwrap();
        let index = d.open_read(NAME).ok().flatten()?;
        let mut heads: Vec<u64> = ["20261201", "20261202", "20261203"]
            .iter()
            .filter_map(|h| head(h.as_bytes()))
            .collect();
        heads.sort_unstable();
        runs(&index, Seal::of(&entries).unwrap(), &heads)
    }

    #[test]
    fn a_rewrite_and_appends_keep_the_index_sealed_with_the_runs_of_each_day() {
        let (_t, d) = dir();
        rewrite(&d, "20261201T1 a\n20261201T2 b\nshort\n20261202T1 c\n").unwrap();
        let r = all_runs(&d).expect("sealed by the rewrite");
        let spans: Vec<(u64, u64)> = r.iter().map(|r| (r.start, r.end)).collect();
        assert_eq!(spans, [(0, 26), (32, 45)]);
        append(&d, "20261202T2 d\n20261203T1 e\n").unwrap();
        append(&d, "").unwrap();
        let r = all_runs(&d).expect("sealed by the append");
        assert_eq!(r.len(), 4, "{r:?}");
        assert_eq!((r[3].start, r[3].end), (58, 71));
        assert_eq!(
            std::fs::metadata(_t.path().join(NAME)).unwrap().len(),
            6 * 32
        );
    }

    #[test]
    fn an_index_not_sealed_for_the_file_as_it_is_is_not_trusted_nor_appended_to() {
        let (t, d) = dir();
        rewrite(&d, "20261201T1 a\n").unwrap();
        let sealed = std::fs::read(t.path().join(NAME)).unwrap();
        // Written by another program: stale.
        let mut f = d.open_append(ENTRIES).unwrap().file;
        f.write_all(b"20261202T1 b\n").unwrap();
        assert_eq!(all_runs(&d), None);
        append(&d, "20261203T1 c\n").unwrap();
        assert_eq!(all_runs(&d), None, "appended to a stale index");
        assert_eq!(std::fs::read(t.path().join(NAME)).unwrap(), sealed);
        // Torn, cut to its runs, or garbage.
        rewrite(&d, "20261201T1 a\n20261202T1 b\n").unwrap();
        let whole = std::fs::read(t.path().join(NAME)).unwrap();
        for bad in [
            &whole[..whole.len() - 1],
            &whole[..64],
            &[7u8; 96][..],
            &[][..],
        ] {
            std::fs::write(t.path().join(NAME), bad).unwrap();
            assert_eq!(all_runs(&d), None, "{bad:?}");
        }
        // A run out of file order, with the right seal.
        let mut swapped = whole.clone();
        swapped[..64].rotate_left(32);
        std::fs::write(t.path().join(NAME), &swapped).unwrap();
        assert_eq!(all_runs(&d), None);
        std::fs::write(t.path().join(NAME), &whole).unwrap();
        assert_eq!(all_runs(&d).map(|r| r.len()), Some(2));
    }

    #[test]
    fn an_append_to_a_file_without_its_last_newline_leaves_the_index_stale() {
        let (_t, d) = dir();
        rewrite(&d, "20261201T1 a").unwrap();
        assert_eq!(all_runs(&d).map(|r| r.len()), Some(1));
        append(&d, "20261202T1 b\n").unwrap();
        assert_eq!(all_runs(&d), None);
    }

    /// The index is read and written as the rest of the cache: never through a symlink, never
    /// appended to when it has a second name (a hard link to a file elsewhere).
    #[test]
    fn the_index_is_never_read_or_written_through_a_symlink_or_a_second_name() {
        let (t, d) = dir();
        let outside = tempfile::tempdir().unwrap();
        rewrite(&d, "20261201T1 a\n").unwrap();
        let sealed = std::fs::read(t.path().join(NAME)).unwrap();
        let planted = outside.path().join("index");
        std::fs::write(&planted, &sealed).unwrap();
        std::fs::remove_file(t.path().join(NAME)).unwrap();
        std::os::unix::fs::symlink(&planted, t.path().join(NAME)).unwrap();
        assert_eq!(all_runs(&d), None, "read through the symlink");
        append(&d, "20261201T2 b\n").unwrap();
        assert_eq!(
            std::fs::read(&planted).unwrap(),
            sealed,
            "appended through it"
        );
        rewrite(&d, "20261201T1 a\n").unwrap();
        assert!(
            !t.path().join(NAME).is_symlink(),
            "the rewrite replaces the link"
        );
        assert_eq!(
            std::fs::read(&planted).unwrap(),
            sealed,
            "written through it"
        );
        let second = outside.path().join("second");
        std::fs::hard_link(t.path().join(NAME), &second).unwrap();
        let before = std::fs::read(&second).unwrap();
        append(&d, "20261201T2 b\n").unwrap();
        assert_eq!(
            std::fs::read(&second).unwrap(),
            before,
            "appended to a second name"
        );
    }
}
