//! The dedupe cache: which `(session, summary, ref paths)` keys each session already recorded,
//! answered without scanning every day file (DESIGN §4).
//!
//! Layout under this worktree's state folder (`.git/rutter/` or the XDG state folder): the
//! watermarks (see [`super::watermarks`]) say how many bytes of each day file have been
//! ingested; `dedupe/keys/<aa>/<session hash>` holds one key hash per line. Day files only
//! grow, so a changed size means "ingest the tail"; a shrunk or `@1` file is re-read whole; a
//! missing or unreadable cache is rebuilt from the day files. Everything here is disposable.
//!
//! The cache is never believed blindly. A key file that does not parse (garbage, a torn line,
//! a symlink, anything but lines of 32 hex digits) is never read as "not seen": the day files
//! are read whole, the answer comes from them and the file is rebuilt. The marks never run
//! ahead of the keys: when a key cannot be written, the marks are forgotten, so the next
//! capture reads every day file again. Every file is opened relative to the folder's handle
//! and never through a symlink.

use super::watermarks::Watermarks;
use crate::fsx::Dir;
use crate::records::{dayfile, fingerprint, Entry};
use crate::store::adopt::is_day_file;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

/// The loaded cache; call [`DedupeCache::save`] after recording.
pub struct DedupeCache {
    /// `dedupe/`, when it could be opened.
    dir: Option<Dir>,
    /// The sessions folder, when there is one.
    sessions: Option<Dir>,
    /// The capture lock is held: the cache may be refreshed and written.
    writable: bool,
    marks: Watermarks,
    /// Keys ingested but not yet written, by session id.
    pending: HashMap<String, Vec<String>>,
    /// Every key this run ingested or recorded, by session id.
    known: HashMap<String, HashSet<String>>,
    /// `known` holds every key of every day file (after a whole read).
    complete: bool,
    /// The files on disk cannot be believed (a write failed, or the folder cannot be opened).
    untrusted: bool,
    /// `keys/<aa>/` folders opened so far: a cold build writes tens of thousands of key files,
    /// and opening `keys` and its shard twice per session was most of `init`'s system time.
    shards: std::cell::RefCell<HashMap<String, Dir>>,
}

/// What a session's key file holds.
enum Keys {
    Missing,
    Valid(HashSet<String>),
    /// Not a list of key hashes, or not readable as a regular file.
    Corrupt,
}

impl DedupeCache {
    /// Loads the cache and, when `locked`, brings it up to date with the day files. `focus` is
    /// the day file a capture is about to append to; it is always checked.
    pub fn load(
        state_dir: &Path,
        sessions: Option<&Dir>,
        focus: &str,
        locked: bool,
    ) -> DedupeCache {
        let dir = Dir::open_private(state_dir)
            .and_then(|d| d.open_dir("dedupe", true))
            .ok()
            .flatten();
        let mut marks = Watermarks::load(dir.as_ref());
        // Marks without keys would answer "not seen" for everything ingested: start over.
        if dir.as_ref().is_some_and(|d| d.stat("keys").is_none()) {
            marks.dir_mtime = i64::MIN;
            marks.replace_all(BTreeMap::new());
        }
        let mut cache = DedupeCache {
            untrusted: dir.is_none(),
            dir,
            sessions: sessions.and_then(|s| s.try_clone().ok()),
            writable: locked,
            marks,
            pending: HashMap::new(),
            known: HashMap::new(),
            complete: false,
            shards: Default::default(),
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

    /// Builds or refreshes the cache for a vault under the capture lock (`init` calls this so the
    /// first capture on a large vault does not pay for the rebuild).
    pub fn warm(vault: &crate::vault::Vault) -> Result<(), crate::lock::LockError> {
        let _lock = crate::lock::Lock::acquire(&vault.state_dir(), crate::lock::DEFAULT_WAIT)?;
        let sessions = Dir::open(&vault.root).ok().and_then(|root| {
            root.open_dir(crate::records::paths::SESSIONS_DIR, false)
                .ok()
                .flatten()
        });
        DedupeCache::load(&vault.worktree_state_dir(), sessions.as_ref(), "", true).save();
        Ok(())
    }

    /// Forgets how much of `names` (day file names) was ingested, so the next load reads them
    /// whole: `sync` rewrote them with lines of another machine among this one's, so they no
    /// longer only grew. Best effort: the cache is disposable.
    pub fn forget(state_dir: &Path, names: &[String]) {
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
        let (Some(key), Some(sid)) = (entry.dedupe_key(), entry.session_id.as_deref()) else {
            return false;
        };
        let want = key_hash(&key);
        if self.known.get(sid).is_some_and(|k| k.contains(&want)) {
            return true;
        }
        if self.complete {
            return false;
        }
        if !self.untrusted {
            match self.read_keys(sid) {
                Keys::Missing => return false,
                Keys::Valid(keys) => return keys.contains(&want),
                Keys::Corrupt => {}
            }
        }
        self.read_everything();
        if self.writable && !self.untrusted {
            self.rewrite_keys(sid);
        }
        self.known.get(sid).is_some_and(|k| k.contains(&want))
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
    pub fn save(&mut self) {
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
        let bytes = sessions.read(name).ok()??;
        let day = crate::records::paths::split_day_file_name(name).map_or(name, |(d, _)| d);
        let is_v2 = bytes.starts_with(dayfile::header(day).as_bytes());
        let parsed = if is_v2 && size > mark && (mark as usize) <= bytes.len() {
            dayfile::parse_v2_tail(day, &bytes[mark as usize..])
        } else {
            dayfile::parse(day, &bytes)
        };
        for e in &parsed.entries {
            self.add(e);
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
        if let (Some(key), Some(sid)) = (entry.dedupe_key(), entry.session_id.as_deref()) {
            let hash = key_hash(&key);
            if self
                .known
                .entry(sid.to_string())
                .or_default()
                .insert(hash.clone())
            {
                self.pending.entry(sid.to_string()).or_default().push(hash);
            }
        }
    }

    /// The key file of session `sid`.
    fn read_keys(&self, sid: &str) -> Keys {
        if self.dir.is_none() {
            return Keys::Corrupt;
        }
        let (aa, rest) = session_file(sid);
        let read = self.with_shard(&aa, false, |folder| match folder.read(&rest) {
            Ok(None) => Keys::Missing,
            Ok(Some(bytes)) => parse_keys(&bytes).map_or(Keys::Corrupt, Keys::Valid),
            Err(_) => Keys::Corrupt,
        });
        match read {
            Ok(Some(keys)) => keys,
            Ok(None) => Keys::Missing,
            Err(()) => Keys::Corrupt,
        }
    }

    /// Runs `f` on the folder `keys/<aa>/` (created when `create`), opened once per run:
    /// `Ok(None)` when it does not exist, `Err` when it cannot be opened.
    fn with_shard<R>(
        &self,
        aa: &str,
        create: bool,
        f: impl FnOnce(&Dir) -> R,
    ) -> Result<Option<R>, ()> {
        let mut shards = self.shards.borrow_mut();
        if !shards.contains_key(aa) {
            let dir = self.dir.as_ref().ok_or(())?;
            match dir.open_dir(&format!("keys/{aa}"), create) {
                Ok(Some(d)) => {
                    shards.insert(aa.to_string(), d);
                }
                Ok(None) => return Ok(None),
                Err(_) => return Err(()),
            }
        }
        Ok(shards.get(aa).map(f))
    }

    /// Writes each session's new keys into its file (replaced whole, so it is never torn); a
    /// file that cannot be believed is first rebuilt from the day files. A failure makes the
    /// cache untrusted.
    fn flush_keys(&mut self) {
        if !self.writable || self.untrusted {
            self.pending.clear();
            return;
        }
        for (sid, keys) in std::mem::take(&mut self.pending) {
            let (have, fresh) = match self.read_keys(&sid) {
                Keys::Corrupt => {
                    self.read_everything();
                    (None, false)
                }
                Keys::Missing => (Some(HashSet::new()), true),
                Keys::Valid(have) => (Some(have), false),
            };
            let written = match have {
                Some(have) if keys.iter().all(|k| have.contains(k)) => true,
                Some(mut have) => {
                    have.extend(keys);
                    self.write_key_file(&sid, &have, fresh)
                }
                None => self.rewrite_keys(&sid),
            };
            if !written {
                self.untrusted = true;
            }
        }
    }

    /// Replaces the key file of `sid` with every key `known` holds for it.
    fn rewrite_keys(&self, sid: &str) -> bool {
        let keys = self.known.get(sid).cloned().unwrap_or_default();
        self.write_keys(sid, &keys)
    }

    fn write_keys(&self, sid: &str, keys: &HashSet<String>) -> bool {
        self.write_key_file(sid, keys, false)
    }

    /// Writes the key file of `sid`. `fresh`: there is none yet (read under the lock just
    /// before), so it is created in place (`O_EXCL`) instead of through a temp file and a
    /// rename; a write cut short leaves a file whose count does not match, which reads as
    /// corrupt and is rebuilt, never as "not seen".
    fn write_key_file(&self, sid: &str, keys: &HashSet<String>, fresh: bool) -> bool {
        if crate::failpoint::check("dedupe-write").is_err() {
            return false;
        }
        let (aa, rest) = session_file(sid);
        let text = render_keys(keys);
        let written = self.with_shard(&aa, true, |folder| {
            if fresh && matches!(folder.create_new(&rest, text.as_bytes()), Ok(true)) {
                return true;
            }
            folder.write_atomic(&rest, text.as_bytes()).is_ok()
        });
        written == Ok(Some(true))
    }
}

/// `(aa, rest)`: the sha256 of a session id, split into its folder and file name.
fn session_file(sid: &str) -> (String, String) {
    let h = fingerprint::sha256_hex(sid.as_bytes());
    (h[..2].to_string(), h[2..32].to_string())
}

fn key_hash(key: &str) -> String {
    fingerprint::sha256_hex(key.as_bytes())[..32].to_string()
}

/// The first line of a key file: its format and how many keys follow.
const KEYS_MAGIC: &str = "rutter-keys 1";

/// A key file: `rutter-keys 1 <n>`, then the `n` keys sorted, one per line.
fn render_keys(keys: &HashSet<String>) -> String {
    let mut sorted: Vec<&String> = keys.iter().collect();
    sorted.sort();
    let mut out = format!("{KEYS_MAGIC} {}\n", sorted.len());
    for k in sorted {
        out.push_str(k);
        out.push('\n');
    }
    out
}

/// The keys of a key file: the header line, then exactly as many lines of 32 lowercase hex
/// digits as it says, each ended by a newline; `None` for anything else (an emptied, torn or
/// foreign file is never read as "no keys").
fn parse_keys(bytes: &[u8]) -> Option<HashSet<String>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let body = text.strip_suffix('\n')?;
    let mut lines = body.split('\n');
    let count: usize = lines
        .next()?
        .strip_prefix(KEYS_MAGIC)?
        .strip_prefix(' ')?
        .parse()
        .ok()?;
    let mut keys = HashSet::new();
    for line in lines {
        let hex = line.len() == 32
            && line
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !hex {
            return None;
        }
        keys.insert(line.to_string());
    }
    (keys.len() == count).then_some(keys)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The key file reader never panics on any bytes, and what it accepts has its header.
        #[test]
        fn key_files_parse_only_as_written(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            if let Some(keys) = parse_keys(&bytes) {
                prop_assert!(keys.iter().all(|k| k.len() == 32));
                prop_assert!(bytes.starts_with(KEYS_MAGIC.as_bytes()));
            }
        }

        #[test]
        fn written_keys_read_back(keys in proptest::collection::hash_set("[0-9a-f]{32}", 0..20)) {
            prop_assert_eq!(parse_keys(render_keys(&keys).as_bytes()), Some(keys));
        }
    }

    #[test]
    fn emptied_torn_or_foreign_key_files_do_not_parse() {
        let key = "0123456789abcdef0123456789abcdef";
        let one = HashSet::from([key.to_string()]);
        let good = render_keys(&one);
        assert_eq!(parse_keys(good.as_bytes()), Some(one));
        for bad in [
            String::new(),
            format!("{key}\n"),
            good[..good.len() - 1].to_string(),
            good[..good.len() - 5].to_string(),
            format!("{KEYS_MAGIC} 2\n{key}\n"),
            format!("{KEYS_MAGIC} 1\n{}\n", key.to_uppercase()),
            format!("{KEYS_MAGIC} 0\n\n"),
            "garbage\n".to_string(),
        ] {
            assert!(parse_keys(bad.as_bytes()).is_none(), "{bad:?}");
        }
        assert_eq!(
            parse_keys(format!("{KEYS_MAGIC} 0\n").as_bytes()),
            Some(HashSet::new())
        );
    }
}
