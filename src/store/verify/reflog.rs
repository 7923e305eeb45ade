//! The reflog of `refs/rutter/records`, read as the bytes git keeps in
//! `.git/logs/refs/rutter/records` (oldest first, one move a line) instead of through libgit2,
//! which parses and allocates every entry of a 70,000-line log on each run.
//!
//! An incremental verify checks only the lines after the prefix the last verify accepted; that
//! prefix is proven unchanged by its sha256 (the same evidence the tip witness log keeps), so a
//! rewritten or shortened reflog is found, and then every line is checked again.

use git2::Oid;
use sha2::{Digest, Sha256};

/// One move of the ref: `(old, new, committer seconds, message)`.
pub type Move = (Oid, Oid, i64, String);

/// What was read of the reflog file.
#[derive(Debug)]
pub struct RawReflog {
    pub bytes: Vec<u8>,
}

/// How a reflog compares with the prefix the last verify accepted.
#[derive(Debug, PartialEq, Eq)]
pub enum Prefix {
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
    /// Compares the file with the accepted `(length, sha256)`; also returns the sha256 of the
    /// whole complete-line part (the next baseline) and its length, in one pass over the bytes.
    pub fn compare(&self, seen: Option<&(u64, String)>) -> (Prefix, (u64, String)) {
        let complete = complete_len(&self.bytes);
        let mut hasher = Sha256::new();
        let prefix = match seen {
            None => Prefix::Unknown,
            Some((len, sha)) => match usize::try_from(*len).ok().filter(|n| *n <= complete) {
                None => Prefix::Shorter,
                Some(n) => {
                    hasher.update(&self.bytes[..n]);
                    if hex(hasher.clone().finalize().as_slice()) == *sha {
                        hasher.update(&self.bytes[n..complete]);
                        let whole = hex(hasher.finalize().as_slice());
                        return (Prefix::Kept(n), (complete as u64, whole));
                    }
                    hasher = Sha256::new();
                    Prefix::Rewritten
                }
            },
        };
        hasher.update(&self.bytes[..complete]);
        (prefix, (complete as u64, hex(hasher.finalize().as_slice())))
    }

    /// The moves in the bytes from `from` on, oldest first; `None` when a line is not a reflog
    /// line (libgit2 refuses such a reflog too).
    pub fn moves(&self, from: usize) -> Option<Vec<Move>> {
        self.bytes
            .get(from..)?
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(parse_line)
            .collect()
    }

    /// The last move in the file, whatever the prefix.
    pub fn last(&self) -> Option<Move> {
        let end = self.bytes.iter().rposition(|b| *b != b'\n')? + 1;
        let start = memchr::memrchr(b'\n', &self.bytes[..end]).map_or(0, |i| i + 1);
        parse_line(&self.bytes[start..end])
    }
}

/// The length of the complete lines (a torn last line, being appended, is checked but never
/// taken into the accepted prefix).
fn complete_len(bytes: &[u8]) -> usize {
    memchr::memrchr(b'\n', bytes).map_or(0, |i| i + 1)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One reflog line: `<old> <new> <name> <<email>> <seconds> <tz>\t<message>`.
pub fn parse_line(line: &[u8]) -> Option<Move> {
    let text = std::str::from_utf8(line).ok()?;
    let (head, message) = text.split_once('\t').unwrap_or((text, ""));
    let mut ids = head.splitn(3, ' ');
    let old = Oid::from_str(ids.next()?).ok()?;
    let new = Oid::from_str(ids.next()?).ok()?;
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

    const A: &str = "1111111111111111111111111111111111111111";
    const B: &str = "2222222222222222222222222222222222222222";

    fn line(old: &str, new: &str, msg: &str) -> String {
        format!("{old} {new} A U Thor <a@example.com> 1764500000 +0100\t{msg}\n")
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
        let first = RawReflog {
            bytes: line(A, B, "one").into_bytes(),
        };
        let (p, seen) = first.compare(None);
        assert_eq!(p, Prefix::Unknown);
        let mut grown = first.bytes.clone();
        grown.extend_from_slice(line(B, A, "two").as_bytes());
        let grown = RawReflog { bytes: grown };
        let (p, next) = grown.compare(Some(&seen));
        assert_eq!(p, Prefix::Kept(first.bytes.len()));
        assert_eq!(next.0, grown.bytes.len() as u64);
        assert_eq!(grown.moves(first.bytes.len()).unwrap().len(), 1);
        assert_eq!(grown.last().unwrap().3, "two");
        let (_, whole) = grown.compare(None);
        assert_eq!(
            whole, next,
            "one pass gives the same baseline as hashing it all"
        );

        let mut forged = grown.bytes.clone();
        forged[90] ^= 1;
        let forged = RawReflog { bytes: forged };
        assert_eq!(forged.compare(Some(&seen)).0, Prefix::Rewritten);
        let short = RawReflog {
            bytes: first.bytes[..10].to_vec(),
        };
        assert_eq!(short.compare(Some(&seen)).0, Prefix::Shorter);
    }

    #[test]
    fn a_torn_last_line_is_never_taken_into_the_baseline() {
        let mut bytes = line(A, B, "one").into_bytes();
        let whole = bytes.len() as u64;
        bytes.extend_from_slice(&line(B, A, "two").as_bytes()[..30]);
        let (_, seen) = RawReflog { bytes }.compare(None);
        assert_eq!(seen.0, whole);
    }

    proptest! {
        #[test]
        fn never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = parse_line(&bytes);
            let raw = RawReflog { bytes };
            let (_, seen) = raw.compare(None);
            let _ = raw.compare(Some(&seen));
            let _ = raw.compare(Some(&(7, "x".into())));
            let _ = raw.moves(3);
            let _ = raw.last();
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
