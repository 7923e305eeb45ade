//! Which commit added each entry, as `log` asks it: the verify cache's `entries` file (a line
//! `id commit` per entry of the history, megabytes on a ten-year vault) searched for the few ids a
//! screen shows, plus the ids the run itself learnt. Only the runs of lines the index beside it
//! names for the wanted ids' days are read ([`entries_index`]); without a trusted index the file
//! is read whole, in blocks and never held whole, and the index is written from that scan.

use super::entries_index::{self, Builder, Run, Seal};
use crate::fsx::Dir;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::ErrorKind;
use std::os::unix::fs::FileExt;
use std::rc::Rc;

/// The bytes read at a time.
const BLOCK: usize = 64 * 1024;

/// The verify cache's `entries` file, opened, and the ids this run learnt; an id keeps the first
/// commit that added it (the file's lines in order, then what was learnt).
#[derive(Debug, Default)]
pub struct AddedBy {
    /// Opened when the verify cache handed it over, so a later rewrite of the cache (a
    /// rename) is not read halfway.
    file: Option<File>,
    /// The cache's folder, where the index is read and written.
    dir: Option<Dir>,
    learnt: HashMap<String, String>,
}

impl AddedBy {
    pub(crate) fn new(
        file: Option<File>,
        dir: Option<Dir>,
        learnt: HashMap<String, String>,
    ) -> AddedBy {
        AddedBy { file, dir, learnt }
    }

    /// Id → commit for the ids `wanted` holds only. The file reads as a whole-file scan reads
    /// it, whether its index is used or not: a file that is not UTF-8 names nothing, a line is
    /// `id commit` with a `\r` before its newline dropped, a line without a space is skipped.
    /// The keys are `wanted`'s own strings, and each commit is one string however many ids it
    /// added (`log` over ten years asks for every id: 690,000 of them, 70,000 commits).
    pub fn map_for<'w>(&self, wanted: &HashSet<&'w str>) -> Commits<'w> {
        let mut map = Found::new(wanted.len());
        if let Some(file) = &self.file {
            if !wanted.is_empty() && self.search(file, wanted, &mut map).is_err() {
                map.clear();
            }
        }
        for (id, commit) in &self.learnt {
            if let Some(id) = wanted.get(id.as_str()) {
                map.take(id, commit);
            }
        }
        map.ids
    }

    /// The wanted lines of `file`: the runs the index names when it is sealed for the file as it
    /// is and every run is what it says, else every line (and the index written anew).
    fn search<'w>(
        &self,
        file: &File,
        wanted: &HashSet<&'w str>,
        map: &mut Found<'w>,
    ) -> Result<(), Unreadable> {
        let heads = Heads::of(wanted);
        let before = Seal::of(file);
        if let (Heads::Of(h), Some(dir), Some(seal)) = (&heads, &self.dir, before) {
            let index = dir.open_read(entries_index::NAME).ok().flatten();
            if let Some(runs) = index.and_then(|i| entries_index::runs(&i, seal, h)) {
                if read_runs(file, seal, &runs, &heads, wanted, map).is_ok() {
                    return Ok(());
                }
                map.clear();
            }
        }
        let mut built = Builder::default();
        scan(file, 0, u64::MAX, &mut |text, at| {
            take_lines(text, &heads, wanted, map);
            built.lines(text.as_bytes(), at);
            Ok(())
        })?;
        if let (Some(dir), Some(before)) = (&self.dir, before) {
            entries_index::publish(dir, file, before, built);
        }
        Ok(())
    }
}

/// Why a file or a run names nothing: unreadable, not UTF-8, or (a run) not the lines the index
/// says it holds.
struct Unreadable;

/// The wanted lines of `runs`, in file order; an error when a run does not start and end at a
/// line's end or holds a line of another head (an edit the seal did not see).
fn read_runs<'w>(
    file: &File,
    seal: Seal,
    runs: &[Run],
    heads: &Heads,
    wanted: &HashSet<&'w str>,
    map: &mut Found<'w>,
) -> Result<(), Unreadable> {
    let newline_at = |at: u64| {
        let mut b = [0u8; 1];
        matches!(file.read_at(&mut b, at), Ok(1) if b[0] == b'\n')
    };
    for run in runs {
        let starts = run.start == 0 || newline_at(run.start - 1);
        let ends = run.end == seal.len || newline_at(run.end - 1);
        if !starts || !ends {
            return Err(Unreadable);
        }
        scan(file, run.start, run.end, &mut |text, _| {
            let own = |l: &str| {
                let body = l.strip_suffix('\n').unwrap_or(l);
                entries_index::head(body.as_bytes()) == Some(run.head)
            };
            if !text.split_inclusive('\n').all(own) {
                return Err(Unreadable);
            }
            take_lines(text, heads, wanted, map);
            Ok(())
        })?;
    }
    Ok(())
}

/// The lines of `file` from `from` up to `to` (or its end), whole lines at a time with the offset
/// they start at, read in blocks (positioned reads: the handle's offset never moves).
fn scan(
    file: &File,
    from: u64,
    to: u64,
    take: &mut dyn FnMut(&str, u64) -> Result<(), Unreadable>,
) -> Result<(), Unreadable> {
    let span = usize::try_from(to - from).unwrap_or(BLOCK);
    let mut buf = vec![0u8; span.clamp(1, BLOCK)];
    let (mut filled, mut offset, mut base) = (0, from, from);
    loop {
        if filled == buf.len() {
            // A line longer than a block: read on until its end.
            buf.resize(buf.len() * 2, 0);
        }
        let left = usize::try_from(to - offset).unwrap_or(usize::MAX);
        let want = (buf.len() - filled).min(left);
        let n = match want {
            0 => 0,
            _ => match file.read_at(&mut buf[filled..filled + want], offset) {
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => return Err(Unreadable),
            },
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
        take(text, base)?;
        if n == 0 {
            return Ok(());
        }
        buf.copy_within(whole..filled, 0);
        filled -= whole;
        base += whole as u64;
    }
}
/// The wanted lines of `text` (whole lines) into `map`, first line of an id kept.
fn take_lines<'w>(text: &str, heads: &Heads, wanted: &HashSet<&'w str>, map: &mut Found<'w>) {
    for line in text.lines() {
        if !heads.may_start(line.as_bytes()) {
            continue;
        }
        if let Some((id, commit)) = line.split_once(' ') {
            if let Some(id) = wanted.get(id) {
                map.take(id, commit);
            }
        }
    }
}

/// Wanted id → the commit that added it ([`AddedBy::map_for`]).
pub type Commits<'w> = HashMap<&'w str, Rc<str>>;

/// What a search has found so far: each id's first commit, each commit held once.
struct Found<'w> {
    ids: Commits<'w>,
    commits: HashSet<Rc<str>>,
}

impl<'w> Found<'w> {
    fn new(wanted: usize) -> Self {
        Found {
            ids: HashMap::with_capacity(wanted),
            commits: HashSet::new(),
        }
    }

    /// Keeps `commit` for `id` unless it has one already.
    fn take(&mut self, id: &'w str, commit: &str) {
        if self.ids.contains_key(id) {
            return;
        }
        let shared = match self.commits.get(commit) {
            Some(c) => c.clone(),
            None => {
                let c: Rc<str> = commit.into();
                self.commits.insert(c.clone());
                c
            }
        };
        self.ids.insert(id, shared);
    }

    fn clear(&mut self) {
        self.ids.clear();
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
        let heads: Option<Vec<u64>> = wanted
            .iter()
            .map(|id| entries_index::head(id.as_bytes()))
            .collect();
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
            Heads::Of(h) => entries_index::head(line).is_some_and(|x| h.binary_search(&x).is_ok()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::Write;
    use std::path::Path;

    /// `map_for`'s answer with strings of its own, to compare.
    fn owned(map: Commits<'_>) -> HashMap<String, String> {
        map.into_iter()
            .map(|(id, c)| (id.to_string(), c.to_string()))
            .collect()
    }

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
        AddedBy::new(Some(f), None, HashMap::new())
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
            prop_assert_eq!(owned(added_by(&bytes).map_for(&wanted)), whole_file(&bytes, &wanted));
        }
    }

    /// Ids one commit added share one string of it.
    #[test]
    fn a_commit_is_held_once_for_all_the_ids_it_added() {
        let ab = added_by(
            b"20261201T000000000Z aaa\n20261201T000000001Z aaa\n20261201T000000002Z bbb\n",
        );
        let wanted = HashSet::from([
            "20261201T000000000Z",
            "20261201T000000001Z",
            "20261201T000000002Z",
        ]);
        let map = ab.map_for(&wanted);
        let c = |id: &str| map[id].clone();
        assert!(Rc::ptr_eq(
            &c("20261201T000000000Z"),
            &c("20261201T000000001Z")
        ));
        assert!(!Rc::ptr_eq(
            &c("20261201T000000000Z"),
            &c("20261201T000000002Z")
        ));
    }

    #[test]
    fn the_file_comes_first_then_what_the_run_learnt() {
        let mut ab = added_by(b"20261201T000000000Z aaa\n20261201T000000000Z bbb\n");
        ab.learnt.insert("20261201T000000000Z".into(), "ccc".into());
        ab.learnt.insert("20261202T000000000Z".into(), "ddd".into());
        let wanted = HashSet::from(["20261201T000000000Z", "20261202T000000000Z", "x"]);
        let map = owned(ab.map_for(&wanted));
        assert_eq!(map.len(), 2);
        assert_eq!(map["20261201T000000000Z"], "aaa");
        assert_eq!(map["20261202T000000000Z"], "ddd");
        assert_eq!(
            owned(ab.map_for(&wanted)),
            map,
            "a second call reads the file again"
        );
    }

    /// What an index can be left as when `log` reads it.
    #[derive(Debug, Clone)]
    enum IndexState {
        /// As the writes left it (sealed for the file unless written to by hand).
        Kept,
        Deleted,
        /// Cut at a byte (`Index` picks where).
        Truncated(prop::sample::Index),
        Garbage(Vec<u8>),
        /// The index as it was before the last writes (sealed for a shorter file).
        Older,
    }

    fn index_state() -> impl Strategy<Value = IndexState> {
        prop_oneof![
            Just(IndexState::Kept),
            Just(IndexState::Deleted),
            any::<prop::sample::Index>().prop_map(IndexState::Truncated),
            proptest::collection::vec(any::<u8>(), 0..200).prop_map(IndexState::Garbage),
            Just(IndexState::Older),
        ]
    }

    /// The verify cache's folder with `entries` written as the cache writes it: `first` whole,
    /// then each of `appends` appended, then `raw` appended by hand (no index), then the index
    /// left as `state`.
    fn cache_dir(
        first: &str,
        appends: &[String],
        raw: &[u8],
        state: &IndexState,
    ) -> (tempfile::TempDir, AddedBy) {
        let t = tempfile::tempdir().unwrap();
        let dir = Dir::open(t.path()).unwrap();
        let index = t.path().join(entries_index::NAME);
        entries_index::rewrite(&dir, first).unwrap();
        let mut older = std::fs::read(&index).unwrap();
        for text in appends {
            older = std::fs::read(&index).unwrap();
            entries_index::append(&dir, text).unwrap();
        }
        if !raw.is_empty() {
            let path = t.path().join("entries");
            let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
            f.write_all(raw).unwrap();
        }
        let whole = std::fs::read(&index).unwrap();
        match state {
            IndexState::Kept => {}
            IndexState::Deleted => std::fs::remove_file(&index).unwrap(),
            IndexState::Truncated(at) => {
                std::fs::write(&index, &whole[..at.index(whole.len())]).unwrap()
            }
            IndexState::Garbage(bytes) => std::fs::write(&index, bytes).unwrap(),
            IndexState::Older => std::fs::write(&index, older).unwrap(),
        }
        let file = dir.open_read("entries").unwrap();
        (t, AddedBy::new(file, Some(dir), HashMap::new()))
    }

    /// Whether the index now in `t` is trusted for the file as it is.
    fn trusted(t: &Path) -> bool {
        let d = Dir::open(t).unwrap();
        let entries = d.open_read("entries").unwrap().unwrap();
        let index = d.open_read(entries_index::NAME).unwrap();
        let seal = Seal::of(&entries).unwrap();
        index.is_some_and(|i| entries_index::runs(&i, seal, &[]).is_some())
    }

    fn day_line() -> impl Strategy<Value = String> {
        let id = prop_oneof![
            4 => "2026120[1-4]T0[0-2]1[0-9]{2}Z",
            1 => "[a-c]{1,9}",
            1 => "[a-c ]{0,3}",
        ];
        let commit = prop_oneof!["[0-9a-f]{6}", "[a-f ]{0,4}", "é"];
        let end = prop_oneof![8 => "\n", 1 => "\r\n", 1 => "\n\n"];
        (id, commit, end).prop_map(|(i, c, e)| format!("{i} {c}{e}"))
    }

    fn lines(n: usize) -> impl Strategy<Value = String> {
        proptest::collection::vec(day_line(), 0..n).prop_map(|l| l.concat())
    }

    proptest! {
        /// Through its index or not, the file names exactly what reading it whole named: any
        /// lines written whole and appended in batches, lines appended by hand (a byte that is
        /// not UTF-8 among them, a last line without its newline), and an index kept, deleted,
        /// truncated anywhere, garbage or older than the file. A second look finds the index
        /// the first one wrote trusted whenever the file is UTF-8.
        #[test]
        fn the_index_names_what_the_whole_file_names(
            first in lines(30),
            appends in proptest::collection::vec(lines(8), 0..4),
            raw in prop_oneof![Just(String::new()), lines(3)],
            cut in any::<bool>(),
            bad in any::<bool>(),
            state in index_state(),
            wanted_at in proptest::collection::vec(any::<prop::sample::Index>(), 0..8),
            extra in proptest::collection::vec("2026120[1-4]T0[0-2]1[0-9]{2}Z|[a-c]{1,3}", 0..3),
        ) {
            let mut raw = raw.into_bytes();
            if cut { raw.pop(); }
            if bad { raw.insert(raw.len() / 2, 0xff); }
            let mut all = first.clone().into_bytes();
            appends.iter().for_each(|a| all.extend_from_slice(a.as_bytes()));
            all.extend_from_slice(&raw);
            let ids: Vec<String> = String::from_utf8_lossy(&all)
                .lines()
                .filter_map(|l| l.split_once(' ').map(|(i, _)| i.to_string()))
                .collect();
            let mut wanted: HashSet<&str> = extra.iter().map(String::as_str).collect();
            if !ids.is_empty() {
                wanted.extend(wanted_at.iter().map(|i| ids[i.index(ids.len())].as_str()));
            }
            let (t, ab) = cache_dir(&first, &appends, &raw, &state);
            let expected = whole_file(&all, &wanted);
            prop_assert_eq!(owned(ab.map_for(&wanted)), expected.clone());
            let utf8 = std::str::from_utf8(&all).is_ok();
            if utf8 && !wanted.is_empty() {
                prop_assert!(trusted(t.path()), "the scan wrote no trusted index");
            }
            prop_assert_eq!(owned(ab.map_for(&wanted)), expected);
        }
    }

    /// The index is what is read when it is sealed for the file: an index that (wrongly) leaves
    /// out a day's run hides that day, so the lines of the other days are never scanned.
    #[test]
    fn a_sealed_index_is_read_instead_of_the_whole_file() {
        let t = tempfile::tempdir().unwrap();
        let dir = Dir::open(t.path()).unwrap();
        let (a, b) = ("20261201T000000000Z", "20261202T000000000Z");
        entries_index::rewrite(&dir, &format!("{a} aaa\n{b} bbb\n{a} ccc\n")).unwrap();
        let wanted = HashSet::from([a, b]);
        let ab = || {
            AddedBy::new(
                dir.open_read("entries").unwrap(),
                dir.try_clone().ok(),
                HashMap::new(),
            )
        };
        let map = owned(ab().map_for(&wanted));
        assert_eq!((map[a].as_str(), map[b].as_str()), ("aaa", "bbb"));
        let file = dir.open_read("entries").unwrap().unwrap();
        let mut only_a = Builder::default();
        only_a.lines(format!("{a} aaa\n").as_bytes(), 0);
        let sealed = only_a.sealed(Seal::of(&file).unwrap()).unwrap();
        std::fs::write(t.path().join(entries_index::NAME), sealed).unwrap();
        let map = owned(ab().map_for(&wanted));
        assert_eq!(map.get(a).map(String::as_str), Some("aaa"));
        assert_eq!(map.get(b), None, "the whole file was scanned: {map:?}");
    }
}
