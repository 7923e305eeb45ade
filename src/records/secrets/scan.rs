//! The scan: every place a format may start is tried once (each word start against the rows
//! whose prefix begins with its byte, each `-----BEGIN ` and each `://`), the candidates that
//! hold are collected, and the earliest wins where two overlap.
//!
//! Why masking twice changes nothing: a candidate's decision depends only on the bytes it read
//! (`seen`, the byte before it and the byte after it included), and a candidate whose `seen`
//! touches a mark already in the text is dropped. A candidate that a first pass dropped
//! because it overlapped a kept one reads that one's mark in a second pass; one the first pass
//! never saw would have read the same bytes then.

use std::ops::Range;

use memchr::memmem;

use super::rules::{Check, Rule, Seg, RULES, WORD};
use super::{assign, shapes, MARK_OPEN};

/// One masked span: where it is, what was read to decide it, and what it is.
#[derive(Debug, Clone)]
pub(super) struct Hit {
    /// The bytes that become the mark.
    pub at: Range<usize>,
    /// Every byte read to decide, `at` included.
    pub seen: Range<usize>,
    pub kind: &'static str,
    pub why: &'static str,
    /// Which wins where two start at one byte: the lower.
    pub rank: u16,
}

/// Ranks of the shapes beside the rule table (whose rows rank by their place, below these).
pub(super) const RANK_PEM: u16 = 0;
pub(super) const RANK_JWT: u16 = 500;
pub(super) const RANK_URL: u16 = 600;
pub(super) const RANK_AUTH: u16 = 700;
pub(super) const RANK_ASSIGN: u16 = 800;

/// A searcher for `needle`, built once.
pub(super) fn finder(
    cell: &'static std::sync::OnceLock<memmem::Finder<'static>>,
    needle: &'static str,
) -> &'static memmem::Finder<'static> {
    cell.get_or_init(|| memmem::Finder::new(needle))
}

/// The spans to mask in `b`, in order, none overlapping another or a mark already there.
pub(super) fn hits(b: &[u8]) -> Vec<Hit> {
    let marks = marks(b);
    let mut found = Vec::new();
    shapes::private_keys(b, &mut found);
    shapes::url_passwords(b, &mut found);
    words(b, &mut found);
    found.retain(|h| !touches(&marks, &h.seen));
    debug_assert!(found
        .iter()
        .all(|h| h.seen.start <= h.at.start && h.at.end <= h.seen.end));
    earliest_first(found)
}

/// The marks `b` already holds: `[redacted:` then a kind (`a-z`, `0-9`, `-`; 1 to 40 bytes)
/// then `]`.
fn marks(b: &[u8]) -> Vec<Range<usize>> {
    static OPEN: std::sync::OnceLock<memmem::Finder<'static>> = std::sync::OnceLock::new();
    let mut out = Vec::new();
    for start in finder(&OPEN, MARK_OPEN).find_iter(b) {
        let kind = start + MARK_OPEN.len();
        let len = b[kind..]
            .iter()
            .take(41)
            .take_while(|c| matches!(c, b'a'..=b'z' | b'0'..=b'9' | b'-'))
            .count();
        if (1..=40).contains(&len) && b.get(kind + len) == Some(&b']') {
            out.push(start..kind + len + 1);
        }
    }
    out
}

/// Whether a mark (sorted, not overlapping) shares a byte with `seen`.
fn touches(marks: &[Range<usize>], seen: &Range<usize>) -> bool {
    let i = marks.partition_point(|m| m.end <= seen.start);
    marks.get(i).is_some_and(|m| m.start < seen.end)
}

/// Keeps, from the earliest start on, each hit that begins after the last one kept ends; at
/// one start the lowest rank, then the longest.
fn earliest_first(mut found: Vec<Hit>) -> Vec<Hit> {
    found.sort_by(|a, b| {
        (a.at.start, a.rank, std::cmp::Reverse(a.at.end)).cmp(&(
            b.at.start,
            b.rank,
            std::cmp::Reverse(b.at.end),
        ))
    });
    let mut kept: Vec<Hit> = Vec::with_capacity(found.len());
    for h in found {
        if !h.at.is_empty() && kept.last().is_none_or(|k| k.at.end <= h.at.start) {
            kept.push(h);
        }
    }
    kept
}

/// The prefixes of the table that begin with one byte, with their row, and the set of their
/// second bytes (all of them for a one-byte prefix), so most words are passed over at once.
struct Bucket {
    seconds: [u64; 4],
    prefixes: Vec<(u16, &'static [u8])>,
}

impl Bucket {
    fn has_second(&self, c: u8) -> bool {
        self.seconds[usize::from(c >> 6)] & (1 << (c & 63)) != 0
    }
}

/// For each byte, the [`Bucket`] of prefixes that begin with it.
fn dispatch() -> &'static [Bucket; 256] {
    static TABLE: std::sync::OnceLock<[Bucket; 256]> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t: [Bucket; 256] = std::array::from_fn(|_| Bucket {
            seconds: [0; 4],
            prefixes: Vec::new(),
        });
        for (i, rule) in RULES.iter().enumerate() {
            let i = u16::try_from(i).unwrap_or(u16::MAX);
            for p in rule.prefixes.iter().map(|p| p.as_bytes()) {
                let bucket = &mut t[usize::from(p[0])];
                match p.get(1) {
                    Some(&c) => bucket.seconds[usize::from(c >> 6)] |= 1 << (c & 63),
                    None => bucket.seconds = [u64::MAX; 4],
                }
                bucket.prefixes.push((i, p));
            }
        }
        t
    })
}

/// Tries every word start of `b` (a byte of [`WORD`] after one that is not) against the
/// table and the shapes that start a word.
fn words(b: &[u8], found: &mut Vec<Hit>) {
    let table = dispatch();
    let mut runs = assign::Runs::default();
    for (i, end) in Words::new(b) {
        let bucket = &table[usize::from(b[i])];
        let second = b.get(i + 1).copied().unwrap_or(0);
        if bucket.has_second(second) {
            let mut tried = u16::MAX;
            for &(r, prefix) in &bucket.prefixes {
                if r == tried || !at(b, i, prefix) {
                    continue;
                }
                if let Some(rule) = RULES.get(usize::from(r)) {
                    tried = r;
                    found.extend(at_rule(b, i, prefix.len(), rule, r + 1));
                }
            }
        }
        if b[i] == b'e' && b.get(i + 1) == Some(&b'y') && b.get(i + 2) == Some(&b'J') {
            found.extend(shapes::jwt(b, i, end));
        }
        if b.get(i + 4) == Some(&b'Q') {
            found.extend(shapes::azure_secret(b, i));
        }
        if matches!(end - i, 5 | 6) && matches!(b[i], b'b' | b'B') {
            found.extend(shapes::auth_scheme(b, i, end));
        }
        if assign::may_assign(b, i, end) {
            found.extend(assign::assignment(b, i, end, &mut runs));
        }
    }
}

/// The words of a text (maximal runs of [`WORD`] bytes) as `(start, end)`, in order. The text
/// is classified 64 bytes at a time into a bit mask, and the words are read off its bits: no
/// branch per byte, so a text of short words is not paid for in mispredicted loop exits.
pub(super) struct Words<'a> {
    b: &'a [u8],
    /// Where the current block starts.
    base: usize,
    /// Bit `k`: the block's byte `k` is a word byte.
    mask: u64,
    /// The word starts of the block not yet returned.
    starts: u64,
}

impl<'a> Words<'a> {
    pub(super) fn new(b: &'a [u8]) -> Words<'a> {
        let mut words = Words {
            b,
            base: 0,
            mask: 0,
            starts: 0,
        };
        words.load(false);
        words
    }

    /// Classifies the block at `base`; `before` says whether the byte before it is a word's.
    fn load(&mut self, before: bool) {
        let block = &self.b[self.base.min(self.b.len())..(self.base + 64).min(self.b.len())];
        self.mask = block
            .iter()
            .enumerate()
            .fold(0, |m, (k, &c)| m | u64::from(WORD.has(c)) << k);
        self.starts = self.mask & !(self.mask << 1 | u64::from(before));
    }
}

impl Iterator for Words<'_> {
    type Item = (usize, usize);

    fn next(&mut self) -> Option<(usize, usize)> {
        while self.starts == 0 {
            self.base += 64;
            if self.base >= self.b.len() {
                return None;
            }
            let before = self.mask >> 63 == 1;
            self.load(before);
        }
        let k = self.starts.trailing_zeros() as usize;
        self.starts &= self.starts - 1;
        let start = self.base + k;
        // The first byte from `k` on that is not a word's, in this block or beyond it.
        let rest = !self.mask >> k;
        let end = match rest {
            0 => run(self.b, self.base + 64, &WORD, usize::MAX),
            _ => (start + rest.trailing_zeros() as usize).min(self.b.len()),
        };
        Some((start, end))
    }
}

/// Whether `b` holds `p` at `i` (compared here: prefixes are short, a library call is not).
pub(super) fn at(b: &[u8], i: usize, p: &[u8]) -> bool {
    b.len() >= i + p.len() && b[i..i + p.len()].iter().zip(p).all(|(x, y)| x == y)
}

/// The end of the run of `set` bytes from `from`, looking at no more than `cap` of them (a
/// run longer than `cap` ends at `from + cap + 1` or later: too long for any format).
pub(super) fn run(b: &[u8], from: usize, set: &super::rules::Set, cap: usize) -> usize {
    let stop = from.saturating_add(cap.saturating_add(1)).min(b.len());
    let Some(window) = b.get(from..stop) else {
        return from.max(stop);
    };
    window
        .iter()
        .position(|&c| !set.has(c))
        .map_or(stop, |k| from + k)
}

/// `rule` matched at the word start `i`, whose prefix (`prefix` bytes) is there, if it does.
fn at_rule(b: &[u8], i: usize, prefix: usize, rule: &'static Rule, rank: u16) -> Option<Hit> {
    let body = i + prefix;
    let (end, far) = body_end(b, body, rule.body)?;
    if b.get(end).is_some_and(|&c| WORD.has(c)) || !checked(&b[i..end], body - i, rule.check) {
        return None;
    }
    if shapes::filler(&b[body..end]) {
        return None;
    }
    let start = if rule.keep_prefix { body } else { i };
    Some(Hit {
        at: start..end,
        seen: i.saturating_sub(1)..far.max(end + 1).min(b.len()),
        kind: rule.kind,
        why: rule.why,
        rank,
    })
}

/// Where a body of these segments that starts at `from` ends, and the end of what was read.
fn body_end(b: &[u8], from: usize, segs: &[Seg]) -> Option<(usize, usize)> {
    let mut j = from;
    let mut far = from;
    for seg in segs {
        match seg {
            Seg::Run(set, min, max) => {
                let max = usize::from(*max);
                // A few more than `max`: the periods that may end a sentence after it.
                let mut e = run(b, j, set, max + 8);
                far = far.max(e + 1);
                if e - j > max + 8 {
                    return None;
                }
                while e > j && b[e - 1] == b'.' {
                    e -= 1;
                }
                if !(usize::from(*min)..=max).contains(&(e - j)) {
                    return None;
                }
                j = e;
            }
            Seg::Lit(lit) => {
                far = far.max(j + lit.len());
                if !at(b, j, lit.as_bytes()) {
                    return None;
                }
                j += lit.len();
            }
            Seg::Pad => {
                let pad = b[j..].iter().take(3).take_while(|&&c| c == b'=').count();
                far = far.max(j + pad + 1);
                j += pad;
            }
        }
    }
    Some((j, far.max(j + 1).min(b.len())))
}

/// Whether a match (its prefix `prefix` bytes long) passes the row's own test: the body's,
/// or the whole match's for a test of its own.
fn checked(matched: &[u8], prefix: usize, check: Check) -> bool {
    let body = &matched[prefix..];
    let letter = || body.iter().any(u8::is_ascii_alphabetic);
    let digit = || body.iter().any(u8::is_ascii_digit);
    match check {
        Check::None => true,
        Check::Digit => digit(),
        Check::LetterDigit => letter() && digit(),
        Check::MixedCase => {
            body.iter().any(u8::is_ascii_uppercase) && body.iter().any(u8::is_ascii_lowercase)
        }
        Check::Random => letter() && digit() && !assign::name_like(body, 1),
        Check::Fn(f) => f(matched),
    }
}
