//! The dedupe cache: which `(session, summary, ref paths)` keys each session already recorded,
//! answered without scanning every day file (DESIGN §4).
//!
//! Layout under this worktree's state folder (`.git/rutter/` or the XDG state folder): the
//! watermarks (see [`super::watermarks`]) say how many bytes of each day file have been
//! ingested; `dedupe/shards/<aa>` holds the key hashes of every session whose id hashes to
//! `<aa>…`, one `<session> <key>` per line (256 files at most: one file per session made a
//! ten-year vault's cold build create 35,000 files, most of `init`'s time). Day files only
//! grow, so a changed size means "ingest the tail"; a shrunk or `@1` file is re-read whole; a
//! missing or unreadable cache is rebuilt from the day files. Everything here is disposable.
//!
//! The cache is never believed blindly. A key file that does not parse (garbage, a torn line,
//! a symlink, anything but lines of 32 hex digits) is never read as "not seen": the day files
//! are read whole, the answer comes from them and the file is rebuilt. The marks never run
//! ahead of the keys: when a key cannot be written, the marks are forgotten, so the next
//! capture reads every day file again. Every file is opened relative to the folder's handle
//! and never through a symlink.

use super::keyhash::{shard_name, Key, Session};
use super::shard::{self, ShardFile};
use super::watermarks::Watermarks;
use crate::fsx::Dir;
use crate::recorder::Recorder;
use crate::records::paths::is_day_file;
use crate::records::{dayfile, Entry};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;

/// The loaded cache; call [`DedupeCache::save`] after recording.
pub(crate) struct DedupeCache {
    /// `dedupe/`, when it could be opened.
    dir: Option<Dir>,
    /// The sessions folder, when there is one.
    sessions: Option<Dir>,
    /// The capture lock is held: the cache may be refreshed and written.
    writable: bool,
    marks: Watermarks,
    /// Keys ingested but not yet written.
    pending: Vec<(Session, Key)>,
    /// Every key this run ingested or recorded.
    known: HashSet<(Session, Key)>,
    /// `known` holds every key of every day file (after a whole read).
    complete: bool,
    /// The files on disk cannot be believed (a write failed, or the folder cannot be opened).
    untrusted: bool,
    /// Shard files read so far (by the byte `<aa>` spells), and which changed since written.
    shards: HashMap<u8, Shard>,
    dirty: BTreeSet<u8>,
    /// Day files another reader already parsed (see [`DayFeed`]), taken instead of a read.
    fed: HashMap<String, FedDay>,
}

/// Day files already read by someone else, parsed as a warm-up would parse them: `init` feeds
/// its adoption's reads here, so each day file is read once (issue 13). Holds only each file's
/// size and key hashes, the same keys the cache writes to its shards anyway.
#[derive(Default)]
pub(crate) struct DayFeed {
    days: HashMap<String, FedDay>,
}

/// One fed day file: its size when read, and the `(session, key)` of its entries.
struct FedDay {
    size: u64,
    keys: Vec<(Session, Key)>,
}

impl DayFeed {
    /// Takes in a file the adoption read (`path` relative to the vault root); only day files
    /// directly in the sessions folder are kept.
    pub(crate) fn ingest(&mut self, path: &str, bytes: &[u8]) {
        let Some(name) = path
            .strip_prefix(crate::records::paths::SESSIONS_DIR)
            .and_then(|rest| rest.strip_prefix('/'))
            .filter(|name| is_day_file(name))
        else {
            return;
        };
        let size = bytes.len() as u64;
        let mut keys = day_keys(name, bytes, 0, size);
        // Held until the warm-up: no room to spare (a ten-year vault has ~700,000 keys).
        keys.shrink_to_fit();
        self.days.insert(name.to_string(), FedDay { size, keys });
    }
}

/// One shard file as read ([`super::shard`]).
enum Shard {
    Missing,
    Valid(ShardFile),
    /// Not a shard file as written, or not readable as a regular file.
    Corrupt,
}

/// The folder of the shard files (a new name: the per-session `keys/` folders of older
/// versions are left alone and never read).
const SHARDS: &str = "shards";

/// What a session's shard file holds for it.
enum Keys {
    Missing,
    /// Sorted, none twice.
    Valid(Vec<Key>),
    /// Not a list of key hashes, or not readable as a regular file.
    Corrupt,
}

impl DedupeCache {
    /// Loads the cache and, when `locked`, brings it up to date with the day files. `focus` is
    /// the day file a capture is about to append to; it is always checked.
    pub(crate) fn load(
        state_dir: &Path,
        sessions: Option<&Dir>,
        focus: &str,
        locked: bool,
    ) -> DedupeCache {
        Self::load_fed(state_dir, sessions, focus, locked, DayFeed::default())
    }

    /// [`Self::load`], taking each day file of `feed` whose size is still the same from there
    /// instead of reading it (a file that changed since is read as usual).
    fn load_fed(
        state_dir: &Path,
        sessions: Option<&Dir>,
        focus: &str,
        locked: bool,
        feed: DayFeed,
    ) -> DedupeCache {
        let dir = Dir::open_private(state_dir)
            .and_then(|d| d.open_dir("dedupe", true))
            .ok()
            .flatten();
        let mut marks = Watermarks::load(dir.as_ref());
        // Marks without keys would answer "not seen" for everything ingested: start over.
        if dir.as_ref().is_some_and(|d| d.stat(SHARDS).is_none()) {
            marks.dir_mtime = i64::MIN;
            marks.replace_all(BTreeMap::new());
        }
        // The keys the feed brings, each new to a cache built from nothing.
        let fed = feed.days.values().map(|d| d.keys.len()).sum();
        let mut cache = DedupeCache {
            untrusted: dir.is_none(),
            dir,
            sessions: sessions.and_then(|s| s.try_clone().ok()),
            writable: locked,
            marks,
            pending: Vec::with_capacity(fed),
            known: HashSet::new(),
            complete: false,
            shards: HashMap::new(),
            dirty: BTreeSet::new(),
            fed: feed.days,
        };
        if cache.sessions.is_none() {
            return cache;
        }
        if !locked {
            // Without the lock nothing is written, but the file about to be appended to is
            // read from its mark, so a Stop fired twice is still caught.
            let mark = cache.marks.get(cache.dir.as_ref(), focus);
            cache.refresh_file(focus, mark);
            return cache;
        }
        let now_mtime = cache.sessions_mtime();
        if now_mtime != cache.marks.dir_mtime {
            cache.full_scan();
            cache.marks.dir_mtime = now_mtime;
        } else {
            let mark = cache.marks.get(cache.dir.as_ref(), focus);
            if let Some(size) = cache.refresh_file(focus, mark) {
                cache.marks.set(focus, size);
            }
        }
        cache.flush_keys();
        cache.fed.clear();
        cache
    }

    /// Compares every day file with its mark and ingests what grew.
    fn full_scan(&mut self) {
        let known = self.marks.all(self.dir.as_ref());
        let mut now = BTreeMap::new();
        for name in self.day_files() {
            let mark = known.get(&name).copied().unwrap_or(0);
            let size = self.refresh_file(&name, mark).unwrap_or(mark);
            now.insert(name, size);
        }
        self.marks.replace_all(now);
    }

    /// Builds or refreshes the cache for a vault under the capture lock `held` (`init` calls
    /// this so the first capture on a large vault does not pay for the rebuild).
    pub(crate) fn warm(held: &Recorder<'_>, vault: &crate::vault::Vault) {
        Self::warm_fed(held, vault, DayFeed::default())
    }

    /// [`Self::warm`], taking the day files `feed` already holds from there.
    pub(crate) fn warm_fed(held: &Recorder<'_>, vault: &crate::vault::Vault, feed: DayFeed) {
        let sessions = Dir::open(held.root()).ok().and_then(|root| {
            root.open_dir(crate::records::paths::SESSIONS_DIR, false)
                .ok()
                .flatten()
        });
        let mut cache = DedupeCache::load_fed(
            &vault.worktree_state_dir(),
            sessions.as_ref(),
            "",
            true,
            feed,
        );
        if let Some(dir) = &cache.dir {
            remove_legacy_keys(dir);
        }
        cache.save();
    }

    /// Forgets how much of `names` (day file names) was ingested, so the next load reads them
    /// whole: `sync` rewrote them with lines of another machine among this one's, so they no
    /// longer only grew. Best effort: the cache is disposable.
    pub(crate) fn forget(state_dir: &Path, names: &[String]) {
        let Ok(Some(dir)) = Dir::open_private(state_dir).and_then(|d| d.open_dir("dedupe", false))
        else {
            return;
        };
        let mut marks = Watermarks::load(Some(&dir));
        for name in names {
            marks.set(name, 0);
        }
        marks.save(&dir);
    }

    /// Whether an entry with the same key was already recorded (never for entries without a
    /// session id). A key file that cannot be believed is answered from the day files.
    pub fn seen(&mut self, entry: &Entry) -> bool {
        let Some((session, want)) = entry_key(entry) else {
            return false;
        };
        if self.known.contains(&(session, want)) {
            return true;
        }
        if self.complete {
            return false;
        }
        if !self.untrusted {
            match self.read_keys(session) {
                Keys::Missing => return false,
                Keys::Valid(keys) => return keys.binary_search(&want).is_ok(),
                Keys::Corrupt => {}
            }
        }
        self.read_everything();
        if self.writable && !self.untrusted {
            self.rewrite_keys(session);
            if !self.write_dirty() {
                self.untrusted = true;
            }
        }
        self.known.contains(&(session, want))
    }

    /// Records a just-appended entry and the day file's new size.
    pub fn record(&mut self, entry: &Entry, file: &str, new_len: u64) {
        self.add(entry);
        self.marks.set(file, new_len);
        self.marks.dir_mtime = self.sessions_mtime();
        self.flush_keys();
    }

    /// Writes the watermarks (best effort: the cache is disposable), or forgets them when a key
    /// could not be written, so they never claim keys the files do not hold.
    pub(crate) fn save(&mut self) {
        let (true, Some(dir)) = (self.writable, &self.dir) else {
            return;
        };
        match self.untrusted {
            true => Watermarks::forget_all(dir),
            false => self.marks.save(dir),
        }
    }

    /// Ingests what `name` gained since `mark`; returns its size when it was read.
    fn refresh_file(&mut self, name: &str, mark: u64) -> Option<u64> {
        let sessions = self.sessions.as_ref()?;
        let (size, _, true) = sessions.stat(name)? else {
            return None;
        };
        if size == mark {
            return None;
        }
        if let Some(fed) = self.fed.remove(name).filter(|f| f.size == size) {
            // Straight to the shards, not into `known`: only `init`'s warm-up is fed, and it asks
            // nothing (`seen` answers from the shards these are written to). Hashing every key
            // of a long vault into `known` was half the warm-up (docs/performance.md, "Stop 52").
            // A key in two day files is written once (`ShardFile::set` dedupes).
            self.pending.extend(fed.keys);
            return Some(size);
        }
        let bytes = sessions.read(name).ok()??;
        for key in day_keys(name, &bytes, mark, size) {
            self.add_key(key);
        }
        Some(bytes.len() as u64)
    }

    /// Reads every day file whole into `known` (not into the files: only the session being
    /// asked about is rewritten).
    fn read_everything(&mut self) {
        if self.complete {
            return;
        }
        // Keys ingested now are known; only those queued before are still to be written.
        let pending = std::mem::take(&mut self.pending);
        for name in self.day_files() {
            self.refresh_file(&name, 0);
        }
        self.pending = pending;
        self.complete = true;
    }

    fn day_files(&self) -> Vec<String> {
        let Some(sessions) = &self.sessions else {
            return vec![];
        };
        let mut names: Vec<String> = sessions
            .list()
            .unwrap_or_default()
            .into_iter()
            .filter(|n| is_day_file(n))
            .collect();
        names.sort();
        names
    }

    fn sessions_mtime(&self) -> i64 {
        self.sessions
            .as_ref()
            .and_then(|s| s.stat("."))
            .map_or(i64::MIN, |(_, m, _)| m)
    }

    fn add(&mut self, entry: &Entry) {
        if let Some(key) = entry_key(entry) {
            self.add_key(key);
        }
    }

    fn add_key(&mut self, key: (Session, Key)) {
        if self.known.insert(key) {
            self.pending.push(key);
        }
    }

    /// The keys of `session`, from its shard file (read once per run).
    fn read_keys(&mut self, session: Session) -> Keys {
        match self.shard(session.shard()) {
            Shard::Missing => Keys::Missing,
            Shard::Valid(file) => file.keys(session).map_or(Keys::Missing, Keys::Valid),
            Shard::Corrupt => Keys::Corrupt,
        }
    }

    /// The shard `<aa>`, read the first time it is asked for.
    fn shard(&mut self, aa: u8) -> &Shard {
        if !self.shards.contains_key(&aa) {
            let read = match &self.dir {
                None => Shard::Corrupt,
                Some(dir) => match dir.open_dir(SHARDS, false) {
                    Ok(None) => Shard::Missing,
                    Err(_) => Shard::Corrupt,
                    Ok(Some(shards)) => match shards.read(&shard_name(aa)) {
                        Ok(None) => Shard::Missing,
                        Ok(Some(bytes)) => shard::parse(bytes).map_or(Shard::Corrupt, Shard::Valid),
                        Err(_) => Shard::Corrupt,
                    },
                },
            };
            self.shards.insert(aa, read);
        }
        &self.shards[&aa]
    }

    /// Writes each session's new keys into its shard (each changed shard replaced whole once,
    /// so it is never torn); a shard that cannot be believed is first rebuilt from the day
    /// files. A failure makes the cache untrusted.
    fn flush_keys(&mut self) {
        if !self.writable || self.untrusted {
            self.pending.clear();
            return;
        }
        let mut pending = std::mem::take(&mut self.pending);
        pending.sort_unstable();
        for group in pending.chunk_by(|a, b| a.0 == b.0) {
            let session = group[0].0;
            let keys = group.iter().map(|&(_, key)| key);
            match self.read_keys(session) {
                Keys::Corrupt => {
                    self.read_everything();
                    self.rewrite_keys(session);
                }
                Keys::Valid(have) if keys.clone().all(|k| have.binary_search(&k).is_ok()) => {}
                Keys::Valid(mut have) => {
                    have.extend(keys);
                    self.set_keys(session, have);
                }
                Keys::Missing => self.set_keys(session, keys.collect()),
            }
        }
        if !self.write_dirty() {
            self.untrusted = true;
        }
    }

    /// Sets the keys of `session` to every key `known` holds for it; a corrupt shard is rebuilt
    /// whole from `known` (complete by then: every day file was read).
    fn rewrite_keys(&mut self, session: Session) {
        let aa = session.shard();
        if matches!(self.shard(aa), Shard::Corrupt) {
            let mut map: HashMap<Session, Vec<Key>> = HashMap::new();
            for &(other, key) in self.known.iter().filter(|(s, _)| s.shard() == aa) {
                map.entry(other).or_default().push(key);
            }
            self.shards.insert(aa, Shard::Valid(ShardFile::of(map)));
            self.dirty.insert(aa);
            return;
        }
        let keys = self.known.iter().filter(|(s, _)| *s == session);
        let keys = keys.map(|&(_, key)| key).collect();
        self.set_keys(session, keys);
    }

    /// Replaces the keys of `session` in its shard (read first; one that is missing starts
    /// empty), to be written by [`Self::write_dirty`]. Callers rebuild a corrupt shard instead.
    fn set_keys(&mut self, session: Session, keys: Vec<Key>) {
        let aa = session.shard();
        self.shard(aa);
        let shard = self.shards.entry(aa).or_insert(Shard::Missing);
        if !matches!(shard, Shard::Valid(_)) {
            *shard = Shard::Valid(ShardFile::default());
        }
        if let Shard::Valid(file) = shard {
            file.set(session, keys);
        }
        self.dirty.insert(aa);
    }

    /// Writes every changed shard (a temporary file traded into place, relative to the
    /// folder's handle: [`Dir::replace_cache`]); `false` when one could not be written.
    fn write_dirty(&mut self) -> bool {
        if self.dirty.is_empty() {
            return true;
        }
        if crate::failpoint::check("dedupe-write").is_err() {
            return false;
        }
        let Some(Ok(Some(folder))) = self.dir.as_ref().map(|d| d.open_dir(SHARDS, true)) else {
            return false;
        };
        let mut ok = true;
        for aa in std::mem::take(&mut self.dirty) {
            if let Some(Shard::Valid(file)) = self.shards.get(&aa) {
                ok &= folder
                    .replace_cache(&shard_name(aa), &file.render())
                    .is_ok();
            }
        }
        ok
    }
}

/// Removes `keys/`, the one-file-per-session layout of older versions (tens of thousands of
/// files on a long-used vault, never read now). Only `init` and `sync` do it, never a capture:
/// it can take seconds. Best effort, through folder handles; anything unexpected is left alone.
fn remove_legacy_keys(dedupe: &Dir) {
    let Ok(Some(keys)) = dedupe.open_dir("keys", false) else {
        return;
    };
    for shard in keys.list().unwrap_or_default() {
        match keys.open_dir(&shard, false) {
            Ok(Some(folder)) => {
                for name in folder.list().unwrap_or_default() {
                    let _ = folder.remove(&name);
                }
                let _ = keys.remove_dir(&shard);
            }
            // A file or a symbolic link: the name itself is unlinked, nothing it points to.
            _ => {
                let _ = keys.remove(&shard);
            }
        }
    }
    let _ = dedupe.remove_dir("keys");
}

/// The `(session, key)` of the entries of day file `name` (`bytes`, `size` long) after byte
/// `mark`: only the tail of a v2 file that grew, the whole file otherwise (its keys read
/// without building its entries where that reads the same: [`dayfile::dedupe_keys`]).
fn day_keys(name: &str, bytes: &[u8], mark: u64, size: u64) -> Vec<(Session, Key)> {
    let day = crate::records::paths::split_day_file_name(name).map_or(name, |(d, _)| d);
    let is_v2 = bytes.starts_with(dayfile::header(day).as_bytes());
    if is_v2 && size > mark && (mark as usize) <= bytes.len() {
        let tail = dayfile::parse_v2_tail(&bytes[mark as usize..]);
        return tail.entries.iter().filter_map(entry_key).collect();
    }
    let mut keys = Vec::new();
    // Entries of one session mostly follow each other: its hash is taken once for them.
    let (mut last_id, mut last) = (String::new(), None);
    dayfile::dedupe_keys(bytes, |sid, json| {
        let session = match last {
            Some(session) if last_id == sid => session,
            _ => {
                last_id.clear();
                last_id.push_str(sid);
                *last.insert(Session::of(sid))
            }
        };
        keys.push((session, Key::of(json)));
    });
    keys
}

/// The `(session, key)` of an entry; `None` without a session id.
fn entry_key(entry: &Entry) -> Option<(Session, Key)> {
    let json = entry.dedupe_key()?;
    let sid = entry.session_id.as_deref()?;
    Some((Session::of(sid), Key::of(json.as_bytes())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `session-record@1` day file with one entry per `(session, summary)`.
    fn v1_day(day: &str, sessions: &[(&str, &str)]) -> String {
        let mut s = format!(
            "---\ncollection: librarian.sessions\nschema: session-record@1\nday: '{day}'\nsessions:\n"
        );
        for (i, (sid, summary)) in sessions.iter().enumerate() {
            s.push_str(&format!(
                "  - id: {}T0000{i:02}000Z\n    session_id: {sid}\n    time: '{day}T00:00:{i:02}.000Z'\n    summary: '{summary}'\n    refs:\n      - path: Notes/a.md\n        hash: 'sha256:9a5c0f3ba40d4b35a3f1bdf1fd0e5bd0b7c1b3c1d2e0f0a0b0c0d0e0f0a0b0c0'\n",
                day.replace('-', "")
            ));
        }
        s.push_str(&format!("---\n# Sessions - {day}\n\n"));
        s
    }

    /// Every file below `dir`, relative path → bytes.
    fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
        let mut out = BTreeMap::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                for (k, v) in tree(&path) {
                    out.insert(format!("{name}/{k}"), v);
                }
            } else {
                out.insert(name, std::fs::read(&path).unwrap());
            }
        }
        out
    }

    /// A warm-up fed the adoption's reads writes exactly the cache a warm-up that reads the
    /// day files writes, and a fed file that changed since it was read is read again.
    #[test]
    fn a_fed_warm_up_writes_the_cache_a_reading_one_writes() {
        let tmp = tempfile::tempdir().unwrap();
        let sessions_path = tmp.path().join("sessions");
        std::fs::create_dir(&sessions_path).unwrap();
        let days = [
            (
                "2026-10-08",
                v1_day("2026-10-08", &[("s1", "First."), ("s2", "Second.")]),
            ),
            // "First." again: the same key in two day files is written once.
            (
                "2026-10-09",
                v1_day("2026-10-09", &[("s1", "Third."), ("s1", "First.")]),
            ),
            (
                "2026-10-10",
                v1_day("2026-10-10", &[("s3", "Fourth."), ("s3", "Fifth.")]),
            ),
        ];
        let mut feed = DayFeed::default();
        for (day, text) in &days {
            std::fs::write(sessions_path.join(format!("{day}.md")), text).unwrap();
            feed.ingest(&format!("_librarian/sessions/{day}.md"), text.as_bytes());
        }
        // Read before it grew: its fed keys lack the new entry, so it must be read again.
        let grown = v1_day(
            "2026-10-10",
            &[("s3", "Fourth."), ("s3", "Fifth."), ("s4", "Sixth.")],
        );
        std::fs::write(sessions_path.join("2026-10-10.md"), &grown).unwrap();
        // Files that are no day files directly in the sessions folder are never fed.
        feed.ingest("_librarian/positions/2026-10.md", b"x");
        feed.ingest("_librarian/sessions/sub/2026-10-11.md", b"x");
        assert_eq!(feed.days.len(), 3);

        let sessions = Dir::open(&sessions_path).unwrap();
        let (read_state, fed_state) = (tmp.path().join("read"), tmp.path().join("fed"));
        for dir in [&read_state, &fed_state] {
            std::fs::create_dir(dir).unwrap();
        }
        DedupeCache::load(&read_state, Some(&sessions), "", true).save();
        let mut fed_cache = DedupeCache::load_fed(&fed_state, Some(&sessions), "", true, feed);
        fed_cache.save();
        let (read, fed) = (tree(&read_state), tree(&fed_state));
        let shards: Vec<_> = read.keys().filter(|k| k.contains("shards/")).collect();
        assert_eq!(shards.len(), 4, "one shard per session: {read:?}");
        assert_eq!(read, fed);
        // The fed keys went to the shards alone; the cache still knows them from there.
        let first = dayfile::parse(days[0].1.as_bytes()).entries[0].clone();
        assert!(fed_cache.seen(&first), "a fed key is seen");
        drop(fed_cache);

        let mut cache = DedupeCache::load(&fed_state, Some(&sessions), "", false);
        let sixth = dayfile::parse(grown.as_bytes()).entries[2].clone();
        assert!(
            cache.seen(&sixth),
            "the grown file's new entry was ingested"
        );
    }

    /// Day files as `(session, summary)` lists: four sessions and three summaries, so the same
    /// key turns up within a day and across days.
    fn days_strategy() -> impl proptest::strategy::Strategy<Value = Vec<Vec<(usize, usize)>>> {
        use proptest::prelude::*;
        prop::collection::vec(prop::collection::vec((0..4usize, 0..3usize), 0..6), 1..6)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

        /// Whatever the day files, a fed warm-up writes what a reading one writes, with the days
        /// in `grown` read again after one more entry was appended since they were fed; and the
        /// cache it leaves sees every entry of every day, and no other.
        #[test]
        fn fed_and_read_warm_ups_agree_on_any_days(
            days in days_strategy(),
            grown in proptest::collection::vec(proptest::bool::ANY, 6),
        ) {
            const SIDS: [&str; 4] = ["s1", "s2", "s3", "s4"];
            const SUMMARIES: [&str; 3] = ["First.", "Second.", "Third."];
            let tmp = tempfile::tempdir().unwrap();
            let sessions_path = tmp.path().join("sessions");
            std::fs::create_dir(&sessions_path).unwrap();
            let mut feed = DayFeed::default();
            let mut all = Vec::new();
            for (i, entries) in days.iter().enumerate() {
                let day = format!("2026-10-{:02}", i + 1);
                let mut pairs: Vec<(&str, &str)> =
                    entries.iter().map(|&(s, m)| (SIDS[s], SUMMARIES[m])).collect();
                let text = v1_day(&day, &pairs);
                feed.ingest(&format!("_librarian/sessions/{day}.md"), text.as_bytes());
                if grown[i] {
                    pairs.push(("s4", "Grown."));
                }
                let text = v1_day(&day, &pairs);
                std::fs::write(sessions_path.join(format!("{day}.md")), &text).unwrap();
                all.extend(dayfile::parse(text.as_bytes()).entries);
            }
            let sessions = Dir::open(&sessions_path).unwrap();
            let (read_state, fed_state) = (tmp.path().join("read"), tmp.path().join("fed"));
            for dir in [&read_state, &fed_state] {
                std::fs::create_dir(dir).unwrap();
            }
            DedupeCache::load(&read_state, Some(&sessions), "", true).save();
            DedupeCache::load_fed(&fed_state, Some(&sessions), "", true, feed).save();
            proptest::prop_assert_eq!(tree(&read_state), tree(&fed_state));

            let mut cache = DedupeCache::load(&fed_state, Some(&sessions), "", false);
            for e in &all {
                proptest::prop_assert!(cache.seen(e), "{:?} not seen", e.summary);
            }
            let mut novel = all.first().cloned().unwrap_or_else(|| {
                dayfile::parse(v1_day("2026-10-01", &[("s1", "x")]).as_bytes()).entries[0].clone()
            });
            novel.summary = "Never captured.".into();
            proptest::prop_assert!(!cache.seen(&novel));
        }
    }
}
