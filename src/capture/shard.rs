//! One dedupe shard file (`dedupe/shards/<aa>`, spec/capture.md "Dedupe cache"): its format,
//! checked whole when read, a session's keys found without decoding the others, and the file
//! written again with the sessions that changed.
//!
//! `rutter-keys 2 <n>`, then `n` lines `<30 hex> <32 hex>`, sorted, none twice. Every line has
//! the same width, so a session's lines are found by a binary search; on a ten-year vault a
//! shard holds ~2,700 keys of many sessions, and decoding all of them into maps (then encoding
//! them again) was a seventh of a capture.

use super::keyhash::{read_hex, write_hex, Key, Rest, Session};
use std::collections::HashMap;

/// The first line of a shard file: its format and how many lines follow.
pub(crate) const KEYS_MAGIC: &str = "rutter-keys 2";
/// A session, as the rest of its hash after the shard's two digits.
const SID: usize = 30;
/// A key hash.
const KEY: usize = 32;
/// One line: session, space, key, newline.
const LINE: usize = SID + 1 + KEY + 1;
/// The bytes that are lowercase hex digits, by value.
const HEX: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = matches!(b as u8, b'0'..=b'9' | b'a'..=b'f');
        b += 1;
    }
    table
};

/// Whether `l` is one line as written: lowercase hex, a space, lowercase hex, a newline.
fn well_formed(l: &[u8]) -> bool {
    let hex = |s: &[u8]| s.iter().all(|b| HEX[usize::from(*b)]);
    l.len() == LINE
        && hex(&l[..SID])
        && l[SID] == b' '
        && hex(&l[SID + 1..LINE - 1])
        && l[LINE - 1] == b'\n'
}

/// A shard file as read (its lines, checked: sorted, of one width, none twice) and the sessions
/// set since, whose keys replace their lines when it is written.
#[derive(Debug, Default, Clone)]
pub(crate) struct ShardFile {
    /// The file as read (checked ASCII); its lines start at `body`.
    text: String,
    body: usize,
    /// Each session set since, by the rest of its hash: its keys, sorted, none twice.
    changed: HashMap<Rest, Vec<Key>>,
}

impl ShardFile {
    /// A shard holding these sessions' keys (a rebuild from the day files).
    pub(crate) fn of(sessions: impl IntoIterator<Item = (Session, Vec<Key>)>) -> ShardFile {
        let mut file = ShardFile::default();
        for (session, keys) in sessions {
            file.set(session, keys);
        }
        file
    }

    /// The lines read, each ended by a newline.
    fn lines(&self) -> &str {
        &self.text[self.body..]
    }

    /// The keys of `session` (sorted, none twice); `None` when it has none here.
    pub(crate) fn keys(&self, session: Session) -> Option<Vec<Key>> {
        if let Some(keys) = self.changed.get(&session.rest()) {
            return Some(keys.clone());
        }
        let mut sid = [0; SID];
        write_hex(&session.rest(), &mut sid);
        let lines = self.lines().as_bytes();
        let line = |i: usize| &lines[i * LINE..(i + 1) * LINE];
        let (mut lo, mut hi) = (0, lines.len() / LINE);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match line(mid)[..SID] < sid[..] {
                true => lo = mid + 1,
                false => hi = mid,
            }
        }
        let keys: Vec<Key> = (lo..lines.len() / LINE)
            .map(line)
            .take_while(|l| l[..SID] == sid[..])
            .filter_map(|l| read_hex(&l[SID + 1..SID + 1 + KEY]).map(Key))
            .collect();
        (!keys.is_empty()).then_some(keys)
    }

    /// Replaces the keys of `session`.
    pub(crate) fn set(&mut self, session: Session, mut keys: Vec<Key>) {
        keys.sort_unstable();
        keys.dedup();
        self.changed.insert(session.rest(), keys);
    }

    /// The file: the lines read, less those of the sessions set since, with theirs, sorted
    /// (lines of one width, so sorting them as byte arrays sorts them as text). The lines read
    /// are sorted already and the sessions set are few: their lines are sorted alone and merged
    /// in, and the lines they replace (one run per session) are skipped, where sorting a ten-year
    /// shard's ~2,700 lines again was a fifth of a capture.
    pub(crate) fn render(&self) -> Vec<u8> {
        let old = self.lines().as_bytes();
        let old: Vec<&[u8]> = old.chunks_exact(LINE).collect();
        let mut fresh: Vec<[u8; LINE]> = Vec::new();
        let mut replaced: Vec<std::ops::Range<usize>> = Vec::new();
        for (rest, keys) in &self.changed {
            let mut l = [b' '; LINE];
            write_hex(rest, &mut l[..SID]);
            l[LINE - 1] = b'\n';
            replaced.push(run(&old, &l[..SID]));
            for key in keys {
                write_hex(&key.0, &mut l[SID + 1..LINE - 1]);
                fresh.push(l);
            }
        }
        fresh.sort_unstable();
        replaced.sort_unstable_by_key(|r| r.start);
        let kept = old.len() - replaced.iter().map(|r| r.len()).sum::<usize>();
        let mut out = format!("{KEYS_MAGIC} {}\n", kept + fresh.len()).into_bytes();
        out.reserve((kept + fresh.len()) * LINE);
        let (mut fresh, mut replaced) = (fresh.iter().peekable(), replaced.iter().peekable());
        for (i, l) in old.iter().enumerate() {
            while let Some(f) = fresh.next_if(|f| f[..] < **l) {
                out.extend_from_slice(f);
            }
            while replaced.next_if(|r| r.end <= i).is_some() {}
            if !replaced.peek().is_some_and(|r| r.contains(&i)) {
                out.extend_from_slice(l);
            }
        }
        for f in fresh {
            out.extend_from_slice(f);
        }
        out
    }
}

/// The lines of `lines` (sorted) that begin with the session `sid` (its hex).
fn run(lines: &[&[u8]], sid: &[u8]) -> std::ops::Range<usize> {
    let start = lines.partition_point(|l| &l[..SID] < sid);
    let end = start + lines[start..].partition_point(|l| &l[..SID] == sid);
    start..end
}

/// A shard file exactly as [`ShardFile::render`] writes one: the header with a count in plain
/// digits, then that many lines of `<30 hex> <32 hex>` (lowercase), each ended by a newline,
/// in increasing order (so none twice); `None` for anything else (an emptied, torn, unsorted or
/// foreign file is never read as "no keys"). The bytes are kept as they are, not copied.
pub(crate) fn parse(bytes: Vec<u8>) -> Option<ShardFile> {
    let header_end = bytes.iter().position(|&b| b == b'\n')?;
    let count = std::str::from_utf8(&bytes[..header_end])
        .ok()?
        .strip_prefix(KEYS_MAGIC)?
        .strip_prefix(' ')?;
    if count.is_empty() || !count.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let count: usize = count.parse().ok()?;
    let lines = &bytes[header_end + 1..];
    if lines.len() != count.checked_mul(LINE)? {
        return None;
    }
    let mut previous: Option<&[u8]> = None;
    for l in lines.chunks(LINE) {
        if !well_formed(l) || previous.is_some_and(|p| p >= l) {
            return None;
        }
        previous = Some(l);
    }
    Some(ShardFile {
        text: String::from_utf8(bytes).ok()?,
        body: header_end + 1,
        changed: HashMap::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn sessions_of(pairs: &[(Rest, [u8; 16])]) -> BTreeMap<Session, Vec<Key>> {
        let mut map: BTreeMap<Session, Vec<Key>> = BTreeMap::new();
        for (rest, key) in pairs {
            map.entry(Session::from_parts(0, *rest))
                .or_default()
                .push(Key(*key));
        }
        for keys in map.values_mut() {
            keys.sort_unstable();
            keys.dedup();
        }
        map
    }

    /// A session's rest: often one of a few, so sessions hold several keys.
    fn rest() -> impl Strategy<Value = Rest> {
        prop_oneof![any::<Rest>(), (0u8..4).prop_map(|b| [b * 0x55; 15])]
    }

    /// A session's rest or key from its hex.
    fn unhex<const N: usize>(hex: &str) -> [u8; N] {
        read_hex(hex.as_bytes()).expect("hex")
    }

    /// The file as the first writer made it: every line kept or set, sorted whole.
    fn render_by_sorting(file: &ShardFile) -> Vec<u8> {
        let mut lines: Vec<Vec<u8>> = file
            .lines()
            .as_bytes()
            .chunks_exact(LINE)
            .filter(|l| !read_hex(&l[..SID]).is_some_and(|r| file.changed.contains_key(&r)))
            .map(<[u8]>::to_vec)
            .collect();
        for (rest, keys) in &file.changed {
            for key in keys {
                let mut l = [b' '; LINE];
                write_hex(rest, &mut l[..SID]);
                write_hex(&key.0, &mut l[SID + 1..LINE - 1]);
                l[LINE - 1] = b'\n';
                lines.push(l.to_vec());
            }
        }
        lines.sort_unstable();
        let mut out = format!("{KEYS_MAGIC} {}\n", lines.len()).into_bytes();
        out.extend(lines.concat());
        out
    }

    proptest! {
        /// The reader never panics on any bytes, and takes only what the writer writes.
        #[test]
        fn shard_files_parse_only_as_written(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            if let Some(file) = parse(bytes.clone()) {
                let again = file.render();
                prop_assert_eq!(again.as_slice(), bytes.as_slice());
            }
        }

        /// Whatever is written reads back with every session's keys, and setting sessions in a
        /// file read back gives what writing them all at once gives.
        #[test]
        fn written_shards_read_back(
            pairs in proptest::collection::vec((rest(), any::<[u8; 16]>()), 0..20),
            later in proptest::collection::vec((rest(), any::<[u8; 16]>()), 0..6),
        ) {
            let first = sessions_of(&pairs);
            let text = ShardFile::of(first.clone()).render();
            let mut read = parse(text).expect("what is written parses");
            for (sid, keys) in &first {
                prop_assert_eq!(read.keys(*sid), Some(keys.clone()));
            }
            let f = Session::from_parts(0, [0xff; 15]);
            prop_assert_eq!(read.keys(f).is_some(), first.contains_key(&f));
            let mut all = first.clone();
            for (sid, keys) in sessions_of(&later) {
                let mut have = read.keys(sid).unwrap_or_default();
                have.extend(keys);
                read.set(sid, have.clone());
                have.sort_unstable();
                have.dedup();
                all.insert(sid, have);
            }
            prop_assert_eq!(read.render(), ShardFile::of(all).render());
        }
    }

    proptest! {
        /// The merge writes what sorting every line again wrote, byte for byte: sessions set
        /// anew, replaced (more keys, fewer, or the same), before, between and after the others.
        #[test]
        fn the_merged_file_is_the_sorted_file(
            pairs in proptest::collection::vec((rest(), any::<[u8; 16]>()), 0..60),
            later in proptest::collection::vec((rest(), any::<[u8; 16]>()), 0..8),
            keep_some in any::<bool>(),
        ) {
            let text = ShardFile::of(sessions_of(&pairs)).render();
            let mut read = parse(text).expect("what is written parses");
            for (sid, mut keys) in sessions_of(&later) {
                if keep_some {
                    keys.extend(read.keys(sid).unwrap_or_default().into_iter().step_by(2));
                }
                read.set(sid, keys);
            }
            let merged = read.render();
            prop_assert_eq!(&merged, &render_by_sorting(&read));
            prop_assert!(parse(merged).is_some());
        }
    }

    #[test]
    fn emptied_torn_unsorted_or_foreign_shard_files_do_not_parse() {
        let sid = "0123456789abcdef0123456789abcd";
        let other = "1123456789abcdef0123456789abcd";
        let key = "0123456789abcdef0123456789abcdef";
        let good = format!("{KEYS_MAGIC} 2\n{sid} {key}\n{other} {key}\n");
        let read = parse(good.clone().into_bytes()).expect("a shard as written");
        let session = |hex: &str| Session::from_parts(0, unhex(hex));
        assert_eq!(read.keys(session(sid)), Some(vec![Key(unhex(key))]));
        assert_eq!(read.keys(session(other)), Some(vec![Key(unhex(key))]));
        assert_eq!(read.keys(session(&"2".repeat(SID))), None);
        assert_eq!(read.render(), good.as_bytes(), "written back as read");
        for bad in [
            String::new(),
            format!("{sid} {key}\n"),
            good[..good.len() - 1].to_string(),
            good[..good.len() - 5].to_string(),
            format!("{KEYS_MAGIC} 3\n{sid} {key}\n{other} {key}\n"),
            format!("{KEYS_MAGIC} +2\n{sid} {key}\n{other} {key}\n"),
            format!("{KEYS_MAGIC} 2\n{other} {key}\n{sid} {key}\n"),
            format!("{KEYS_MAGIC} 2\n{sid} {key}\n{sid} {key}\n"),
            format!("{KEYS_MAGIC} 1\n{sid} {}\n", key.to_uppercase()),
            format!("{KEYS_MAGIC} 1\n{key}\n"),
            format!("rutter-keys 1 1\n{key}\n"),
            format!("{KEYS_MAGIC} 0\n\n"),
            format!("{KEYS_MAGIC} \n"),
            "garbage\n".to_string(),
        ] {
            assert!(parse(bad.clone().into_bytes()).is_none(), "{bad:?}");
        }
        let empty = parse(format!("{KEYS_MAGIC} 0\n").into_bytes()).expect("no keys at all");
        assert_eq!(empty.keys(session(sid)), None);
    }
}
