//! The dedupe cache: which `(session, summary, ref paths)` keys each session already recorded,
//! answered without scanning every day file (DESIGN §4).
//!
//! Layout under the state directory (`.git/rutter/` or the XDG state folder): the watermarks
//! (see [`super::watermarks`]) say how many bytes of each day file have been ingested;
//! `dedupe/keys/<aa>/<session hash>` holds one key hash per line. Day files only
//! grow, so a changed size means "ingest the tail"; a shrunk or `@1` file is re-read whole; a
//! missing or unreadable cache is rebuilt from the day files. Everything here is disposable.

use super::watermarks::Watermarks;
use crate::fsx::Dir;
use crate::records::{dayfile, fingerprint, Entry};
use crate::store::adopt::is_day_file;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The loaded cache; call [`DedupeCache::save`] after recording.
pub struct DedupeCache {
    dir: PathBuf,
    marks: Watermarks,
    pending: HashMap<String, Vec<String>>,
}

impl DedupeCache {
    /// Loads the cache and brings it up to date with the day files. `focus` is the day file a
    /// capture is about to append to; it is always checked.
    pub fn load(state_dir: &Path, sessions: Option<&Dir>, focus: &str) -> DedupeCache {
        let dir = state_dir.join("dedupe");
        let marks = Watermarks::load(&dir);
        let mut cache = DedupeCache {
            dir,
            marks,
            pending: HashMap::new(),
        };
        let Some(sessions) = sessions else {
            return cache;
        };
        let now_mtime = sessions.stat(".").map_or(i64::MIN, |(_, m, _)| m);
        if now_mtime != cache.marks.dir_mtime {
            cache.full_scan(sessions);
            cache.marks.dir_mtime = now_mtime;
        } else {
            let mark = cache.marks.get(focus);
            if let Some(size) = cache.refresh_file(sessions, focus, mark) {
                cache.marks.set(focus, size);
            }
        }
        cache.flush_keys();
        cache
    }

    /// Compares every day file with its mark and ingests what grew.
    fn full_scan(&mut self, sessions: &Dir) {
        let known = self.marks.all();
        let mut now = BTreeMap::new();
        for name in sessions
            .list()
            .unwrap_or_default()
            .into_iter()
            .filter(|n| is_day_file(n))
        {
            let mark = known.get(&name).copied().unwrap_or(0);
            let size = self.refresh_file(sessions, &name, mark).unwrap_or(mark);
            now.insert(name, size);
        }
        self.marks.replace_all(now);
    }

    /// Builds or refreshes the cache for a vault under the capture lock (`init` calls this so the
    /// first capture on a large vault does not pay for the rebuild).
    pub fn warm(vault: &crate::vault::Vault) -> Result<(), crate::lock::LockError> {
        let state = vault.state_dir();
        let _lock = crate::lock::Lock::acquire(&state, crate::lock::DEFAULT_WAIT)?;
        let sessions = Dir::open(&vault.root).ok().and_then(|root| {
            root.open_dir(crate::records::paths::SESSIONS_DIR, false)
                .ok()
                .flatten()
        });
        DedupeCache::load(&state, sessions.as_ref(), "").save();
        Ok(())
    }

    /// Forgets how much of `names` (day file names) was ingested, so the next load reads them
    /// whole: `sync` rewrote them with lines of another machine among this one's, so they no
    /// longer only grew. Best effort: the cache is disposable.
    pub fn forget(state_dir: &Path, names: &[String]) {
        let mut marks = Watermarks::load(&state_dir.join("dedupe"));
        for name in names {
            marks.set(name, 0);
        }
        marks.save();
    }

    /// Whether an entry with the same key was already recorded (never for entries without a
    /// session id).
    pub fn seen(&self, entry: &Entry) -> bool {
        let (Some(key), Some(sid)) = (entry.dedupe_key(), entry.session_id.as_deref()) else {
            return false;
        };
        let want = key_hash(&key);
        std::fs::read_to_string(self.session_file(sid))
            .map(|text| text.lines().any(|l| l == want))
            .unwrap_or(false)
    }

    /// Records a just-appended entry and the day file's new size.
    pub fn record(&mut self, entry: &Entry, file: &str, new_len: u64, sessions: &Dir) {
        self.add(entry);
        self.marks.set(file, new_len);
        self.marks.dir_mtime = sessions.stat(".").map_or(i64::MIN, |(_, m, _)| m);
        self.flush_keys();
    }

    /// Writes the watermarks (best effort: the cache is disposable).
    pub fn save(&mut self) {
        self.marks.save();
    }

    /// Ingests what `name` gained since `mark`; returns its size when it was read.
    fn refresh_file(&mut self, sessions: &Dir, name: &str, mark: u64) -> Option<u64> {
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

    fn add(&mut self, entry: &Entry) {
        if let (Some(key), Some(sid)) = (entry.dedupe_key(), entry.session_id.as_deref()) {
            self.pending
                .entry(sid.to_string())
                .or_default()
                .push(key_hash(&key));
        }
    }

    fn flush_keys(&mut self) {
        for (sid, keys) in std::mem::take(&mut self.pending) {
            let path = self.session_file(&sid);
            let existing: HashSet<String> = std::fs::read_to_string(&path)
                .map(|t| t.lines().map(str::to_string).collect())
                .unwrap_or_default();
            let mut text = String::new();
            for k in keys.iter().filter(|k| !existing.contains(*k)) {
                text.push_str(k);
                text.push('\n');
            }
            if text.is_empty() {
                continue;
            }
            if let Some(parent) = path.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            let _ = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .and_then(|mut f| f.write_all(text.as_bytes()));
        }
    }

    fn session_file(&self, sid: &str) -> PathBuf {
        let h = fingerprint::sha256_hex(sid.as_bytes());
        self.dir.join("keys").join(&h[..2]).join(&h[2..32])
    }
}

fn key_hash(key: &str) -> String {
    fingerprint::sha256_hex(key.as_bytes())[..32].to_string()
}
