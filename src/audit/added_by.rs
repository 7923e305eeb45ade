//! Which commit added each entry, as `log` asks it: the verify cache's `entries` file (a line
//! `id commit` per entry of the history, megabytes on a ten-year vault) searched for the few ids a
//! screen shows, read in blocks and never held whole, plus the ids the run itself learnt.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::ErrorKind;
use std::os::unix::fs::FileExt;

/// The bytes read at a time.
const BLOCK: usize = 64 * 1024;

/// The verify cache's `entries` file, opened, and the ids this run learnt; an id keeps the first
/// commit that added it (the file's lines in order, then what was learnt).
#[derive(Debug, Default)]
pub struct AddedBy {
    /// Opened when the verify cache handed it over, so a later rewrite of the cache (a
    /// rename) is not read halfway.
    file: Option<File>,
    learnt: HashMap<String, String>,
}

impl AddedBy {
    pub(crate) fn new(file: Option<File>, learnt: HashMap<String, String>) -> AddedBy {
        AddedBy { file, learnt }
    }

    /// Id → commit for the ids `wanted` holds only. The file reads as before its lines were
    /// searched in blocks: a file that is not UTF-8 names nothing, a line is `id commit` with
    /// a `\r` before its newline dropped, a line without a space is skipped.
    pub fn map_for(&self, wanted: &HashSet<&str>) -> HashMap<String, String> {
        let mut map = HashMap::with_capacity(wanted.len());
        if let Some(file) = &self.file {
            if !wanted.is_empty() && scan(file, wanted, &mut map).is_err() {
                map.clear();
            }
        }
        for (id, commit) in &self.learnt {
            if wanted.contains(id.as_str()) {
                map.entry(id.clone()).or_insert_with(|| commit.clone());
            }
        }
        map
    }
}

/// Why a file names nothing: unreadable or not UTF-8.
struct Unreadable;

/// The wanted lines of `file`, read from its start at each call (positioned reads: the handle's
/// offset never moves).
fn scan(
    file: &File,
    wanted: &HashSet<&str>,
    map: &mut HashMap<String, String>,
) -> Result<(), Unreadable> {
    let heads = Heads::of(wanted);
    let mut buf = vec![0u8; BLOCK];
    let (mut filled, mut offset) = (0, 0u64);
    loop {
        if filled == buf.len() {
            // A line longer than a block: read on until its end.
            buf.resize(buf.len() * 2, 0);
        }
        let n = match file.read_at(&mut buf[filled..], offset) {
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return Err(Unreadable),
        };
        filled += n;
        offset += n as u64;
        let whole = match n {
            // The end: the last line may lack its newline.
            0 => filled,
            _ => match memchr::memrchr(b'\n', &buf[..filled]) {
                Some(at) => at + 1,
                None => continue,
            },
        };
        let text = std::str::from_utf8(&buf[..whole]).map_err(|_| Unreadable)?;
        take_lines(text, &heads, wanted, map);
        if n == 0 {
            return Ok(());
        }
        buf.copy_within(whole..filled, 0);
        filled -= whole;
    }
}

/// The wanted lines of `text` (whole lines) into `map`, first line of an id kept.
fn take_lines(
    text: &str,
    heads: &Heads,
    wanted: &HashSet<&str>,
    map: &mut HashMap<String, String>,
) {
    for line in text.lines() {
        if !heads.may_start(line.as_bytes()) {
            continue;
        }
        if let Some((id, commit)) = line.split_once(' ') {
            if wanted.contains(id) && !map.contains_key(id) {
                map.insert(id.to_string(), commit.to_string());
            }
        }
    }
}

/// The first eight bytes of each wanted id: ids start with their day, so a screen of ids has a
/// few heads and most lines of the file start with none of them and are skipped unsplit.
enum Heads {
    /// Sorted, without repeats.
    Of(Vec<u64>),
    /// A wanted id shorter than eight bytes: every line is looked at.
    Any,
}

impl Heads {
    fn of(wanted: &HashSet<&str>) -> Heads {
        let heads: Option<Vec<u64>> = wanted.iter().map(|id| head(id.as_bytes())).collect();
        match heads {
            Some(mut h) => {
                h.sort_unstable();
                h.dedup();
                Heads::Of(h)
            }
            None => Heads::Any,
        }
    }

    /// Whether a line starting with `line` may start with a wanted id and a space.
    fn may_start(&self, line: &[u8]) -> bool {
        match self {
            Heads::Any => true,
            Heads::Of(h) => head(line).is_some_and(|x| h.binary_search(&x).is_ok()),
        }
    }
}

fn head(bytes: &[u8]) -> Option<u64> {
    let first: [u8; 8] = bytes.get(..8)?.try_into().ok()?;
    Some(u64::from_le_bytes(first))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::Write;

    /// What `map_for` answered when it read the whole file as one string.
    fn whole_file(bytes: &[u8], wanted: &HashSet<&str>) -> HashMap<String, String> {
        let text = String::from_utf8(bytes.to_vec()).unwrap_or_default();
        let mut map = HashMap::new();
        for (id, commit) in text.lines().filter_map(|l| l.split_once(' ')) {
            if wanted.contains(id) {
                map.entry(id.to_string())
                    .or_insert_with(|| commit.to_string());
            }
        }
        map
    }

    fn added_by(bytes: &[u8]) -> AddedBy {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(bytes).unwrap();
        AddedBy::new(Some(f), HashMap::new())
    }

    fn line() -> impl Strategy<Value = String> {
        let id = prop_oneof![
            "2026120[1-3]T0[0-2]1[0-9]{3}Z(-p[0-9])?",
            "[a-c]{1,9}",
            "[a-c ]{0,3}",
        ];
        let commit = prop_oneof!["[0-9a-f]{40}", "[a-f ]{0,4}", "é"];
        let end = prop_oneof!["\n", "\r\n", "\n\n"];
        (id, commit, end).prop_map(|(i, c, e)| format!("{i} {c}{e}"))
    }

    proptest! {
        /// Searched in blocks, the file names what reading it whole named: any lines, any
        /// wanted ids (short ones too), a last line without its newline, a byte that is not
        /// UTF-8, lines longer than a block.
        #[test]
        fn blocks_name_what_the_whole_file_named(
            lines in proptest::collection::vec(line(), 0..60),
            wanted_at in proptest::collection::vec(any::<prop::sample::Index>(), 0..8),
            extra in proptest::collection::vec("[a-c]{1,3}|2026120[1-3]", 0..3),
            cut in any::<bool>(),
            bad in any::<bool>(),
            long in 0usize..3,
        ) {
            let mut text = lines.concat();
            text.push_str(&format!("{} {}\n", "x".repeat(long * BLOCK), "c".repeat(long)));
            let mut bytes = text.into_bytes();
            if cut { bytes.pop(); }
            if bad { bytes.insert(bytes.len() / 2, 0xff); }
            let ids: Vec<String> = lines
                .iter()
                .filter_map(|l| l.split_once(' ').map(|(i, _)| i.to_string()))
                .collect();
            let mut wanted: HashSet<&str> = extra.iter().map(String::as_str).collect();
            if !ids.is_empty() {
                wanted.extend(wanted_at.iter().map(|i| ids[i.index(ids.len())].as_str()));
            }
            let xs = "x".repeat(long * BLOCK);
            if long > 0 { wanted.insert(&xs); }
            prop_assert_eq!(added_by(&bytes).map_for(&wanted), whole_file(&bytes, &wanted));
        }
    }

    #[test]
    fn the_file_comes_first_then_what_the_run_learnt() {
        let mut ab = added_by(b"20261201T000000000Z aaa\n20261201T000000000Z bbb\n");
        ab.learnt.insert("20261201T000000000Z".into(), "ccc".into());
        ab.learnt.insert("20261202T000000000Z".into(), "ddd".into());
        let wanted = HashSet::from(["20261201T000000000Z", "20261202T000000000Z", "x"]);
        let map = ab.map_for(&wanted);
        assert_eq!(map.len(), 2);
        assert_eq!(map["20261201T000000000Z"], "aaa");
        assert_eq!(map["20261202T000000000Z"], "ddd");
        assert_eq!(
            ab.map_for(&wanted),
            map,
            "a second call reads the file again"
        );
    }
}
