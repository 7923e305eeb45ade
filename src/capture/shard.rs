//! One dedupe shard file (`dedupe/shards/<aa>`, spec/capture.md "Dedupe cache"): its format,
//! checked whole when read, a session's keys found without decoding the others, and the file
//! written again with the sessions that changed.
//!
//! `rutter-keys 2 <n>`, then `n` lines `<30 hex> <32 hex>`, sorted, none twice. Every line has
//! the same width, so a session's lines are found by a binary search; on a ten-year vault a
//! shard holds ~2,700 keys of many sessions, and decoding all of them into maps (then encoding
//! them again) was a seventh of a capture.

use std::collections::{HashMap, HashSet};

/// The first line of a shard file: its format and how many lines follow.
pub(crate) const KEYS_MAGIC: &str = "rutter-keys 2";
/// A session, as the rest of its hash after the shard's two digits.
const SID: usize = 30;
/// A key hash.
const KEY: usize = 32;
/// One line: session, space, key, newline.
const LINE: usize = SID + 1 + KEY + 1;

/// A shard file as read (its lines, checked: sorted, of one width, none twice) and the sessions
/// set since, whose keys replace their lines when it is written.
#[derive(Debug, Default, Clone)]
pub(crate) struct ShardFile {
    /// The file as read (checked ASCII); its lines start at `body`.
    text: String,
    body: usize,
    changed: HashMap<String, HashSet<String>>,
}

impl ShardFile {
    /// A shard holding these sessions' keys (a rebuild from the day files).
    pub(crate) fn of(sessions: HashMap<String, HashSet<String>>) -> ShardFile {
        ShardFile {
            changed: sessions,
            ..ShardFile::default()
        }
    }

    /// The lines read, each ended by a newline.
    fn lines(&self) -> &str {
        &self.text[self.body..]
    }

    /// The keys of session `sid` (the rest of its hash); `None` when it has none here.
    pub(crate) fn keys(&self, sid: &str) -> Option<HashSet<String>> {
        if let Some(keys) = self.changed.get(sid) {
            return Some(keys.clone());
        }
        let lines = self.lines().as_bytes();
        let line = |i: usize| &lines[i * LINE..(i + 1) * LINE];
        let (mut lo, mut hi) = (0, lines.len() / LINE);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match &line(mid)[..SID] < sid.as_bytes() {
                true => lo = mid + 1,
                false => hi = mid,
            }
        }
        let keys: HashSet<String> = (lo..lines.len() / LINE)
            .map(line)
            .take_while(|l| &l[..SID] == sid.as_bytes())
            .map(|l| String::from_utf8_lossy(&l[SID + 1..SID + 1 + KEY]).into_owned())
            .collect();
        (!keys.is_empty()).then_some(keys)
    }

    /// Replaces the keys of session `sid`.
    pub(crate) fn set(&mut self, sid: String, keys: HashSet<String>) {
        self.changed.insert(sid, keys);
    }

    /// The file: the lines read, less those of the sessions set since, with theirs, sorted
    /// (the lines read are taken as they are, not copied one by one).
    pub(crate) fn render(&self) -> String {
        let set: Vec<String> = self
            .changed
            .iter()
            .flat_map(|(sid, keys)| keys.iter().map(move |k| format!("{sid} {k}")))
            .collect();
        let kept = self
            .lines()
            .lines()
            .filter(|l| !self.changed.contains_key(&l[..SID]));
        let mut lines: Vec<&str> = kept.chain(set.iter().map(String::as_str)).collect();
        lines.sort_unstable();
        let mut out = format!("{KEYS_MAGIC} {}\n", lines.len());
        for l in lines {
            out.push_str(l);
            out.push('\n');
        }
        out
    }
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
    let hex = |s: &[u8]| {
        s.iter()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
    };
    let mut previous: Option<&[u8]> = None;
    for l in lines.chunks(LINE) {
        let well_formed =
            hex(&l[..SID]) && l[SID] == b' ' && hex(&l[SID + 1..LINE - 1]) && l[LINE - 1] == b'\n';
        if !well_formed || previous.is_some_and(|p| p >= l) {
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

    fn sessions_of(pairs: &[(String, String)]) -> BTreeMap<String, HashSet<String>> {
        let mut map: BTreeMap<String, HashSet<String>> = BTreeMap::new();
        for (sid, key) in pairs {
            map.entry(sid.clone()).or_default().insert(key.clone());
        }
        map
    }

    proptest! {
        /// The reader never panics on any bytes, and takes only what the writer writes.
        #[test]
        fn shard_files_parse_only_as_written(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            if let Some(file) = parse(bytes.clone()) {
                let again = file.render();
                prop_assert_eq!(again.as_bytes(), bytes.as_slice());
            }
        }

        /// Whatever is written reads back with every session's keys, and setting sessions in a
        /// file read back gives what writing them all at once gives.
        #[test]
        fn written_shards_read_back(
            pairs in proptest::collection::vec(("[0-9a-f]{30}", "[0-9a-f]{32}"), 0..20),
            later in proptest::collection::vec(("[0-9a-f]{30}", "[0-9a-f]{32}"), 0..6),
        ) {
            let first = sessions_of(&pairs);
            let text = ShardFile::of(first.clone().into_iter().collect()).render();
            let mut read = parse(text.into_bytes()).expect("what is written parses");
            for (sid, keys) in &first {
                prop_assert_eq!(read.keys(sid), Some(keys.clone()));
            }
            prop_assert_eq!(read.keys(&"f".repeat(SID)).is_some(), first.contains_key(&"f".repeat(SID)));
            let mut all = first.clone();
            for (sid, keys) in sessions_of(&later) {
                let mut have = read.keys(&sid).unwrap_or_default();
                have.extend(keys);
                read.set(sid.clone(), have.clone());
                all.insert(sid, have);
            }
            prop_assert_eq!(read.render(), ShardFile::of(all.into_iter().collect()).render());
        }
    }

    #[test]
    fn emptied_torn_unsorted_or_foreign_shard_files_do_not_parse() {
        let sid = "0123456789abcdef0123456789abcd";
        let other = "1123456789abcdef0123456789abcd";
        let key = "0123456789abcdef0123456789abcdef";
        let good = format!("{KEYS_MAGIC} 2\n{sid} {key}\n{other} {key}\n");
        let read = parse(good.clone().into_bytes()).expect("a shard as written");
        assert_eq!(read.keys(sid), Some(HashSet::from([key.to_string()])));
        assert_eq!(read.keys(&"2".repeat(SID)), None);
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
        assert_eq!(empty.keys(sid), None);
    }
}
