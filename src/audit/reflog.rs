//! The reflog of `refs/rutter/records`, read as the bytes git keeps in
//! `.git/logs/refs/rutter/records` (oldest first, one move a line) instead of through libgit2,
//! which parses and allocates every entry of a 70,000-line log on each run.
//!
//! An incremental verify checks only the lines after the prefix the last verify accepted; that
//! prefix is proven unchanged by its sha256 (the same evidence the tip witness log keeps), so a
//! rewritten or shortened reflog is found, and then every line is checked again. The file is
//! read in blocks through one buffer and hashed as it streams: every byte is still hashed, but
//! only the lines after the accepted prefix are kept (copying the whole log into a fresh
//! allocation on each run cost a page fault per page of it).

use crate::objectid::ObjectId;
use sha2::{Digest, Sha256};
use std::io::{self, Read, Seek, SeekFrom};

/// One move of the ref: `(old, new, committer seconds, message)`.
pub(crate) type Move = (ObjectId, ObjectId, i64, String);

/// The read buffer: large enough that a read costs little per byte, small enough to stay in
/// cache while it is hashed.
const BLOCK: usize = 1 << 20;

/// What was read of the reflog file.
#[derive(Debug)]
pub(crate) struct RawReflog {
    /// The file's bytes from `start` on: after the accepted prefix when it was kept, else all.
    pub bytes: Vec<u8>,
    pub start: usize,
    /// How the file compares with the prefix the last verify accepted.
    pub prefix: Prefix,
    /// The complete-line part as read: its length and sha256 (the next baseline).
    pub read: (u64, String),
    /// The file's length.
    pub len: usize,
    /// The last line of the file (a torn one included), whatever the prefix.
    last: Option<Vec<u8>>,
}

/// How a reflog compares with the prefix the last verify accepted.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Prefix {
    /// Nothing accepted yet (first run, `--full`, an old cache): every line is checked.
    Unknown,
    /// The accepted bytes are still the reflog's first bytes: only the rest is checked.
    Kept(usize),
    /// The file is shorter than the accepted prefix.
    Shorter,
    /// The accepted bytes changed.
    Rewritten,
}

impl RawReflog {
    /// Reads the reflog from `file`, comparing it with the accepted `(length, sha256)` in the
    /// same pass that hashes the whole complete-line part for the next baseline. When the
    /// prefix was not kept, the file is read again from the start, whole.
    pub(crate) fn read(
        file: impl Read + Seek,
        seen: Option<&(u64, String)>,
    ) -> io::Result<RawReflog> {
        Self::read_in(file, seen, BLOCK)
    }

    fn read_in(
        mut file: impl Read + Seek,
        seen: Option<&(u64, String)>,
        block: usize,
    ) -> io::Result<RawReflog> {
        // A length past `usize` cannot be a prefix of anything read: it is "shorter".
        let at = seen.map(|(len, _)| usize::try_from(*len).unwrap_or(usize::MAX));
        let mut s = Stream::new(at);
        let mut buf = vec![0u8; block.max(1)];
        loop {
            match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => s.feed(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let mut raw = s.finish(seen);
        if raw.start > 0 && !matches!(raw.prefix, Prefix::Kept(_)) {
            // A rewritten or shortened reflog: every line is checked again.
            file.seek(SeekFrom::Start(0))?;
            raw.bytes.clear();
            file.take(raw.len as u64).read_to_end(&mut raw.bytes)?;
            raw.start = 0;
        }
        Ok(raw)
    }

    /// The moves in the bytes read (those after the accepted prefix when it was kept), oldest
    /// first; `None` when a line is not a reflog line (libgit2 refuses such a reflog too).
    pub(crate) fn moves(&self) -> Option<Vec<Move>> {
        self.bytes
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(parse_line)
            .collect()
    }

    /// The last move in the file, whatever the prefix.
    pub(crate) fn last(&self) -> Option<Move> {
        parse_line(self.last.as_deref()?)
    }
}

/// One pass over the file: the sha256 of its complete lines (split at the accepted length to
/// compare with the baseline), the bytes after that length, and the last line.
struct Stream {
    hasher: Sha256,
    hashed: usize,
    /// The accepted length, and the sha256 of that many leading bytes once they were hashed.
    at: Option<usize>,
    at_sha: Option<String>,
    /// Bytes after the last newline so far (a line not complete yet).
    cur: Vec<u8>,
    /// The last non-empty complete line so far.
    last_line: Vec<u8>,
    kept: Vec<u8>,
    total: usize,
}

impl Stream {
    fn new(at: Option<usize>) -> Stream {
        Stream {
            hasher: Sha256::new(),
            hashed: 0,
            at,
            at_sha: None,
            cur: Vec::new(),
            last_line: Vec::new(),
            kept: Vec::new(),
            total: 0,
        }
    }

    fn feed(&mut self, chunk: &[u8]) {
        let base = self.total;
        self.total += chunk.len();
        let keep_from = self.at.unwrap_or(0);
        if self.total > keep_from {
            self.kept
                .extend_from_slice(&chunk[keep_from.saturating_sub(base)..]);
        }
        let Some(nl) = memchr::memrchr(b'\n', chunk) else {
            self.cur.extend_from_slice(chunk);
            return;
        };
        self.note_last_line(chunk, nl);
        let pending = std::mem::take(&mut self.cur);
        self.hash(&pending);
        self.hash(&chunk[..=nl]);
        self.cur = pending;
        self.cur.clear();
        self.cur.extend_from_slice(&chunk[nl + 1..]);
    }

    /// Remembers the last non-empty line completed in `chunk` (whose last newline is at `nl`);
    /// it may begin in `cur`.
    fn note_last_line(&mut self, chunk: &[u8], nl: usize) {
        let mut end = nl;
        loop {
            match memchr::memrchr(b'\n', &chunk[..end]) {
                Some(b) if b + 1 < end => {
                    self.last_line.clear();
                    self.last_line.extend_from_slice(&chunk[b + 1..end]);
                    return;
                }
                Some(b) => end = b,
                None => {
                    if end > 0 || !self.cur.is_empty() {
                        self.last_line.clear();
                        self.last_line.extend_from_slice(&self.cur);
                        self.last_line.extend_from_slice(&chunk[..end]);
                    }
                    return;
                }
            }
        }
    }

    /// Hashes complete-line bytes, taking the prefix's sha256 on the way past the accepted
    /// length.
    fn hash(&mut self, data: &[u8]) {
        match self.at {
            Some(at) if self.at_sha.is_none() && self.hashed + data.len() >= at => {
                let k = at - self.hashed;
                self.hasher.update(&data[..k]);
                self.at_sha = Some(hex(self.hasher.clone().finalize().as_slice()));
                self.hasher.update(&data[k..]);
            }
            _ => self.hasher.update(data),
        }
        self.hashed += data.len();
    }

    fn finish(mut self, seen: Option<&(u64, String)>) -> RawReflog {
        // An accepted length of 0 is passed on the first call; with nothing hashed, now.
        self.hash(&[]);
        let prefix = match (seen, self.at) {
            (Some((_, sha)), Some(at)) => match &self.at_sha {
                None => Prefix::Shorter,
                Some(got) if got == sha => Prefix::Kept(at),
                Some(_) => Prefix::Rewritten,
            },
            _ => Prefix::Unknown,
        };
        let last = if self.cur.is_empty() {
            Some(self.last_line).filter(|l| !l.is_empty())
        } else {
            Some(self.cur)
        };
        RawReflog {
            bytes: self.kept,
            start: self.at.unwrap_or(0).min(self.total),
            prefix,
            read: (self.hashed as u64, hex(self.hasher.finalize().as_slice())),
            len: self.total,
            last,
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One reflog line: `<old> <new> <name> <<email>> <seconds> <tz>\t<message>`.
pub(crate) fn parse_line(line: &[u8]) -> Option<Move> {
    let text = std::str::from_utf8(line).ok()?;
    let (head, message) = text.split_once('\t').unwrap_or((text, ""));
    let mut ids = head.splitn(3, ' ');
    let old = ObjectId::from_hex(ids.next()?).ok()?;
    let new = ObjectId::from_hex(ids.next()?).ok()?;
    let signature = ids.next()?;
    let (_, when) = signature.rsplit_once('>')?;
    let seconds = when.split_whitespace().next()?.parse().ok()?;
    let message = if message.is_empty() {
        "no message".to_string()
    } else {
        message.trim_end_matches('\r').to_string()
    };
    Some((old, new, seconds, message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::Cursor;

    const A: &str = "1111111111111111111111111111111111111111";
    const B: &str = "2222222222222222222222222222222222222222";

    fn line(old: &str, new: &str, msg: &str) -> String {
        format!("{old} {new} A U Thor <a@example.com> 1764500000 +0100\t{msg}\n")
    }

    /// Read through a small buffer, so lines and the accepted length straddle reads.
    fn read(bytes: &[u8], seen: Option<&(u64, String)>) -> RawReflog {
        RawReflog::read_in(Cursor::new(bytes), seen, 7).unwrap()
    }

    /// What reading the whole file at once gives (the reader before streaming): the prefix,
    /// the next baseline, the bytes to check and the last line.
    fn whole(bytes: &[u8], seen: Option<&(u64, String)>) -> (Prefix, (u64, String), Vec<u8>) {
        let complete = memchr::memrchr(b'\n', bytes).map_or(0, |i| i + 1);
        let sha = |b: &[u8]| hex(Sha256::digest(b).as_slice());
        let read = (complete as u64, sha(&bytes[..complete]));
        let prefix = match seen {
            None => Prefix::Unknown,
            Some((len, s)) => match usize::try_from(*len).ok().filter(|n| *n <= complete) {
                None => Prefix::Shorter,
                Some(n) if sha(&bytes[..n]) == *s => Prefix::Kept(n),
                Some(_) => Prefix::Rewritten,
            },
        };
        let from = match prefix {
            Prefix::Kept(n) => n,
            _ => 0,
        };
        (prefix, read, bytes[from..].to_vec())
    }

    fn last_whole(bytes: &[u8]) -> Option<Move> {
        let end = bytes.iter().rposition(|b| *b != b'\n')? + 1;
        let start = memchr::memrchr(b'\n', &bytes[..end]).map_or(0, |i| i + 1);
        parse_line(&bytes[start..end])
    }

    #[test]
    fn parses_what_git_writes() {
        let l = line(A, B, "rutter: capture 2026-11-30");
        let (o, n, s, m) = parse_line(l.trim_end().as_bytes()).unwrap();
        assert_eq!(
            (o.to_string(), n.to_string()),
            (A.to_string(), B.to_string())
        );
        assert_eq!(
            (s, m.as_str()),
            (1_764_500_000, "rutter: capture 2026-11-30")
        );
        let bare = format!("{A} {B} A <a@b> 5 +0000");
        assert_eq!(parse_line(bare.as_bytes()).unwrap().3, "no message");
        assert!(parse_line(b"not a reflog line").is_none());
        assert!(parse_line(format!("{A} {B} no email 5 +0000").as_bytes()).is_none());
    }

    #[test]
    fn an_unchanged_prefix_is_kept_and_a_changed_one_is_found() {
        let first = line(A, B, "one").into_bytes();
        let r = read(&first, None);
        assert_eq!(r.prefix, Prefix::Unknown);
        let seen = r.read;
        let mut grown = first.clone();
        grown.extend_from_slice(line(B, A, "two").as_bytes());
        let r = read(&grown, Some(&seen));
        assert_eq!(r.prefix, Prefix::Kept(first.len()));
        assert_eq!(r.read.0, grown.len() as u64);
        assert_eq!(r.start, first.len());
        assert_eq!(r.moves().unwrap().len(), 1);
        assert_eq!(r.last().unwrap().3, "two");
        assert_eq!(
            read(&grown, None).read,
            r.read,
            "one pass gives the same baseline as hashing it all"
        );
        let idle = read(&grown, Some(&r.read));
        assert_eq!(idle.moves().unwrap().len(), 0, "nothing after the prefix");
        assert_eq!(
            idle.last().unwrap().3,
            "two",
            "the last move lies in the prefix"
        );

        let mut forged = grown.clone();
        forged[90] ^= 1;
        let r = read(&forged, Some(&seen));
        assert_eq!(r.prefix, Prefix::Rewritten);
        assert_eq!(
            (r.start, r.bytes.len()),
            (0, forged.len()),
            "read again whole"
        );
        assert_eq!(read(&first[..10], Some(&seen)).prefix, Prefix::Shorter);
    }

    #[test]
    fn a_torn_last_line_is_never_taken_into_the_baseline() {
        let mut bytes = line(A, B, "one").into_bytes();
        let whole = bytes.len() as u64;
        bytes.extend_from_slice(&line(B, A, "two").as_bytes()[..30]);
        let r = read(&bytes, None);
        assert_eq!(r.read.0, whole);
        assert!(r.last().is_none(), "the torn line is the last line");
    }

    proptest! {
        #[test]
        fn never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = parse_line(&bytes);
            let r = read(&bytes, None);
            let _ = read(&bytes, Some(&r.read));
            let _ = read(&bytes, Some(&(7, "x".into())));
            let _ = read(&bytes, Some(&(u64::MAX, "x".into())));
            let _ = r.moves();
            let _ = r.last();
        }

        /// Streaming through any buffer size gives what reading the whole file gives, for a
        /// file that grew, was rewritten anywhere, or was cut, and any accepted length.
        #[test]
        fn streaming_reads_what_reading_it_whole_reads(
            lines in proptest::collection::vec(prop_oneof![
                Just(line(A, B, "one")), Just(line(B, A, "x")), Just("\n".to_string()),
                "[a-f0-9 \t<>]{0,30}\n", "[a-z]{0,12}",
            ], 0..8),
            cut in 0usize..400,
            flip in proptest::option::of(0usize..400),
            block in 1usize..64,
            grow in proptest::collection::vec(any::<u8>(), 0..40),
        ) {
            let old: Vec<u8> = lines.concat().into_bytes();
            let old = &old[..cut.min(old.len())];
            let seen = whole(old, None).1;
            let mut new = old.to_vec();
            new.extend_from_slice(&grow);
            if let Some(i) = flip.filter(|i| *i < new.len()) {
                new[i] ^= 0x20;
            }
            for s in [None, Some(&seen)] {
                let r = RawReflog::read_in(Cursor::new(&new), s, block).unwrap();
                let (prefix, baseline, rest) = whole(&new, s);
                prop_assert_eq!(&r.prefix, &prefix);
                prop_assert_eq!(&r.read, &baseline);
                prop_assert_eq!(&r.bytes, &rest);
                prop_assert_eq!(r.last(), last_whole(&new));
                prop_assert_eq!(r.len, new.len());
            }
        }

        #[test]
        fn a_well_formed_line_round_trips(secs in 0i64..4_000_000_000, msg in "[a-z :0-9-]{0,40}") {
            let l = format!("{A} {B} N <e@x> {secs} -0700\t{msg}");
            let m = parse_line(l.as_bytes()).unwrap();
            prop_assert_eq!(m.2, secs);
            let want = if msg.is_empty() { "no message".to_string() } else { msg };
            prop_assert_eq!(m.3, want);
        }
    }
}
