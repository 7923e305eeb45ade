//! What verify remembers between runs, under `.git/rutter/verify/` (disposable): the last
//! verified tip, how much of the reflog and tip witness log was checked, which commit added
//! each entry, and the working files found clean (by size, mtime and committed blob).

use crate::fsx::Dir;
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

/// The verify cache.
#[derive(Debug, Default)]
pub struct VerifyCache {
    pub verified_tip: Option<String>,
    pub reflog_checked: usize,
    pub tips_checked: usize,
    /// The witness log as the last verify accepted it: its length and the sha256 of those bytes.
    pub tips_seen: Option<(u64, String)>,
    /// The witness log as this verify read it, accepted by [`VerifyCache::accept_tips`].
    pub tips_read: Option<(u64, String)>,
    /// Entry or binding id → the commit that added it.
    pub entries: HashMap<String, String>,
    new_entries: Vec<(String, String)>,
    /// Clean working files: path → (size, mtime ns, `<committed blob id>:<ctime ns>:<inode>`).
    pub files: HashMap<String, (u64, i64, String)>,
}

impl VerifyCache {
    /// Loads the cache; `full` starts from nothing.
    pub fn load(state: &Path, full: bool) -> VerifyCache {
        let dir = state.join("verify");
        if full {
            return VerifyCache::default();
        }
        let mut c = VerifyCache::default();
        if let Ok(text) = std::fs::read_to_string(dir.join("state")) {
            for line in text.lines() {
                match line.split_once(' ') {
                    Some(("tip", v)) => c.verified_tip = Some(v.to_string()),
                    Some(("reflog", v)) => c.reflog_checked = v.parse().unwrap_or(0),
                    Some(("tips", v)) => c.tips_checked = v.parse().unwrap_or(0),
                    Some(("tips-seen", v)) => c.tips_seen = parse_seen(v),
                    _ => {}
                }
            }
        }
        if c.verified_tip.is_none() {
            return VerifyCache::default();
        }
        if let Ok(text) = std::fs::read_to_string(dir.join("entries")) {
            // Sized up front: tens of thousands of entries, rehashed a dozen times otherwise.
            c.entries = HashMap::with_capacity(memchr::memchr_iter(b'\n', text.as_bytes()).count());
            c.entries.extend(
                text.lines()
                    .filter_map(|l| l.split_once(' '))
                    .map(|(a, b)| (a.to_string(), b.to_string())),
            );
        }
        if let Ok(text) = std::fs::read_to_string(dir.join("files")) {
            c.files = text.lines().filter_map(parse_file_line).collect();
        }
        c
    }

    /// Records that `commit` added entry `id`.
    pub fn added(&mut self, id: String, commit: String) {
        if !self.entries.contains_key(&id) {
            self.new_entries.push((id.clone(), commit.clone()));
            self.entries.insert(id, commit);
        }
    }

    /// Writes the cache (best effort). Every file is written relative to the state folder's
    /// handle, never through a symlink, and `entries` is never appended to when it has a
    /// second name.
    pub fn save(&self, state: &Path) {
        let Some(dir) = Dir::open_private(state)
            .and_then(|d| d.open_dir("verify", true))
            .ok()
            .flatten()
        else {
            return;
        };
        let mut state_text = format!(
            "tip {}\nreflog {}\ntips {}\n",
            self.verified_tip.as_deref().unwrap_or(""),
            self.reflog_checked,
            self.tips_checked
        );
        if let Some((len, sha)) = &self.tips_seen {
            state_text.push_str(&format!("tips-seen {len} {sha}\n"));
        }
        let _ = dir.write_atomic("state", state_text.as_bytes());
        if self.new_entries.len() == self.entries.len() {
            let text: String = self
                .entries
                .iter()
                .map(|(a, b)| format!("{a} {b}\n"))
                .collect();
            let _ = dir.write_atomic("entries", text.as_bytes());
        } else {
            let text: String = self
                .new_entries
                .iter()
                .map(|(a, b)| format!("{a} {b}\n"))
                .collect();
            let appended = dir
                .open_append("entries")
                .map_err(|e| std::io::Error::other(e.to_string()))
                .and_then(|mut f| f.file.write_all(text.as_bytes()));
            if appended.is_err() {
                // The next verify starts over rather than trust a partial list.
                let _ = dir.remove("state");
            }
        }
        let files: String = self
            .files
            .iter()
            .map(|(p, (s, m, b))| format!("{s} {m} {b} {p}\n"))
            .collect();
        let _ = dir.write_atomic("files", files.as_bytes());
    }
}

/// The tip the last verify found clean, read alone (`status` reads it without loading the cache).
pub fn verified_tip(state: &Path) -> Option<String> {
    let text = std::fs::read_to_string(state.join("verify").join("state")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("tip "))
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

impl VerifyCache {
    /// Takes the witness log as this verify read it as the baseline for the next one.
    pub fn accept_tips(&mut self) {
        if let Some(read) = self.tips_read.take() {
            self.tips_seen = Some(read);
        }
    }
}

fn parse_seen(v: &str) -> Option<(u64, String)> {
    let (len, sha) = v.split_once(' ')?;
    Some((len.parse().ok()?, sha.to_string()))
}

fn parse_file_line(l: &str) -> Option<(String, (u64, i64, String))> {
    let mut parts = l.splitn(4, ' ');
    let size = parts.next()?.parse().ok()?;
    let mtime = parts.next()?.parse().ok()?;
    let blob = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    Some((path, (size, mtime, blob)))
}
