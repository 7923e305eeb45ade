//! The dedupe cache: which `(session, summary, ref paths)` keys each session already recorded,
//! answered without scanning every day file (DESIGN §4).
//!
//! Layout under the state directory (`.git/rutter/` or the XDG state folder):
//! `dedupe/watermarks` holds the sessions folder's mtime and, per day file, how many bytes have
//! been ingested; `dedupe/keys/<aa>/<session hash>` holds one key hash per line. Day files only
//! grow, so a changed size means "ingest the tail"; a shrunk or `@1` file is re-read whole; a
//! missing or unreadable cache is rebuilt from the day files. Everything here is disposable.

use crate::fsx::Dir;
use crate::records::{dayfile, fingerprint, Entry};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};

const MAGIC: &str = "rutter-dedupe 1";

/// The loaded cache; call [`DedupeCache::save`] after recording.
pub struct DedupeCache {
    dir: PathBuf,
    dir_mtime: i64,
    marks: BTreeMap<String, u64>,
    pending: HashMap<String, Vec<String>>,
}

impl DedupeCache {
    /// Loads the cache and brings it up to date with the day files. `focus` is the day file a
    /// capture is about to append to; it is always checked.
    pub fn load(state_dir: &Path, sessions: Option<&Dir>, focus: &str) -> DedupeCache {
        let dir = state_dir.join("dedupe");
        let (dir_mtime, marks) = read_marks(&dir).unwrap_or((i64::MIN, BTreeMap::new()));
        let mut cache = DedupeCache {
            dir,
            dir_mtime,
            marks,
            pending: HashMap::new(),
        };
        let Some(sessions) = sessions else {
            return cache;
        };
        let now_mtime = sessions.stat(".").map_or(i64::MIN, |(_, m, _)| m);
        if now_mtime != cache.dir_mtime {
            let names: Vec<String> = sessions.list().unwrap_or_default();
            cache.marks.retain(|name, _| names.contains(name));
            for name in names.iter().filter(|n| crate::store::adopt::is_day_file(n)) {
                cache.refresh_file(sessions, name);
            }
            cache.dir_mtime = now_mtime;
        } else {
            cache.refresh_file(sessions, focus);
        }
        cache.flush_keys();
        cache
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
        self.marks.insert(file.to_string(), new_len);
        self.dir_mtime = sessions.stat(".").map_or(i64::MIN, |(_, m, _)| m);
        self.flush_keys();
    }

    /// Writes the watermarks (best effort: the cache is disposable).
    pub fn save(&self) {
        let mut text = format!("{MAGIC} {}\n", self.dir_mtime);
        for (name, len) in &self.marks {
            text.push_str(&format!("{name} {len}\n"));
        }
        let _ = std::fs::create_dir_all(&self.dir);
        if let Ok(d) = Dir::open(&self.dir) {
            let _ = d.write_atomic("watermarks", text.as_bytes());
        }
    }

    fn refresh_file(&mut self, sessions: &Dir, name: &str) {
        let Some((size, _, true)) = sessions.stat(name) else {
            return;
        };
        let mark = self.marks.get(name).copied().unwrap_or(0);
        if size == mark {
            return;
        }
        let Ok(Some(bytes)) = sessions.read(name) else {
            return;
        };
        let is_v2 = bytes.starts_with(dayfile::header(&name[..name.len().min(10)]).as_bytes());
        let from = if is_v2 && size > mark {
            mark as usize
        } else {
            0
        };
        let day = name.trim_end_matches(".md");
        let parsed = if from == 0 {
            dayfile::parse(day, &bytes)
        } else {
            dayfile::parse_v2_tail(day, &bytes[from..])
        };
        for e in &parsed.entries {
            self.add(e);
        }
        self.marks.insert(name.to_string(), bytes.len() as u64);
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

fn read_marks(dir: &Path) -> Option<(i64, BTreeMap<String, u64>)> {
    let text = std::fs::read_to_string(dir.join("watermarks")).ok()?;
    let mut lines = text.lines();
    let mtime = lines.next()?.strip_prefix(MAGIC)?.trim().parse().ok()?;
    let mut marks = BTreeMap::new();
    for l in lines {
        let (name, len) = l.rsplit_once(' ')?;
        marks.insert(name.to_string(), len.parse().ok()?);
    }
    Some((mtime, marks))
}
