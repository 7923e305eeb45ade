//! How many bytes of each day file the dedupe cache has ingested, stored so that a capture
//! reads and writes only a few lines.
//!
//! `dedupe/recent` (read and rewritten by every capture) holds the sessions folder's mtime and
//! the files updated since the last full scan; `dedupe/sizes` (one line per day file) is read
//! only when a file is not in `recent`, and rewritten only after a full scan or when `recent`
//! grows past [`RECENT_MAX`] lines.

use crate::fsx::Dir;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const MAGIC: &str = "rutter-dedupe 2";
/// Lines kept in `recent` before they are folded into `sizes`.
const RECENT_MAX: usize = 16;

/// The ingested size of every day file, with the folder mtime they were checked against.
pub struct Watermarks {
    dir: PathBuf,
    /// The sessions folder's mtime (ns) when the marks were last reconciled; `i64::MIN` when
    /// unknown, which forces a full scan.
    pub dir_mtime: i64,
    recent: BTreeMap<String, u64>,
    sizes: Option<BTreeMap<String, u64>>,
    sizes_dirty: bool,
}

impl Watermarks {
    /// Reads `recent`; a missing or unreadable file means "unknown" (a full scan follows).
    pub fn load(dir: &Path) -> Watermarks {
        let parsed = std::fs::read_to_string(dir.join("recent"))
            .ok()
            .and_then(|t| parse(&t));
        let (dir_mtime, recent) = parsed.unwrap_or((i64::MIN, BTreeMap::new()));
        Watermarks {
            dir: dir.to_path_buf(),
            dir_mtime,
            recent,
            sizes: None,
            sizes_dirty: false,
        }
    }

    /// The ingested size of `name` (0 when never ingested).
    pub fn get(&mut self, name: &str) -> u64 {
        if let Some(&n) = self.recent.get(name) {
            return n;
        }
        self.sizes().get(name).copied().unwrap_or(0)
    }

    /// Records the ingested size of `name`.
    pub fn set(&mut self, name: &str, size: u64) {
        self.recent.insert(name.to_string(), size);
    }

    /// Every known mark (`recent` over `sizes`).
    pub fn all(&mut self) -> BTreeMap<String, u64> {
        let mut all = self.sizes().clone();
        all.extend(self.recent.iter().map(|(k, v)| (k.clone(), *v)));
        all
    }

    /// Replaces every mark after a full scan.
    pub fn replace_all(&mut self, marks: BTreeMap<String, u64>) {
        self.sizes = Some(marks);
        self.sizes_dirty = true;
        self.recent.clear();
    }

    /// Writes what changed (best effort: the cache is disposable).
    pub fn save(&mut self) {
        if self.recent.len() > RECENT_MAX {
            let all = self.all();
            self.replace_all(all);
        }
        let _ = std::fs::create_dir_all(&self.dir);
        let Ok(dir) = Dir::open(&self.dir) else {
            return;
        };
        if self.sizes_dirty {
            if let Some(sizes) = &self.sizes {
                let _ = dir.write_atomic("sizes", render(i64::MIN, sizes).as_bytes());
            }
        }
        let _ = dir.write_atomic("recent", render(self.dir_mtime, &self.recent).as_bytes());
    }

    fn sizes(&mut self) -> &BTreeMap<String, u64> {
        let dir = &self.dir;
        self.sizes.get_or_insert_with(|| {
            std::fs::read_to_string(dir.join("sizes"))
                .ok()
                .and_then(|t| parse(&t))
                .map(|(_, m)| m)
                .unwrap_or_default()
        })
    }
}

fn render(mtime: i64, marks: &BTreeMap<String, u64>) -> String {
    let mut text = format!("{MAGIC} {mtime}\n");
    for (name, len) in marks {
        text.push_str(&format!("{name} {len}\n"));
    }
    text
}

fn parse(text: &str) -> Option<(i64, BTreeMap<String, u64>)> {
    let mut lines = text.lines();
    let mtime = lines.next()?.strip_prefix(MAGIC)?.trim().parse().ok()?;
    let mut marks = BTreeMap::new();
    for l in lines {
        let (name, len) = l.rsplit_once(' ')?;
        marks.insert(name.to_string(), len.parse().ok()?);
    }
    Some((mtime, marks))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recent_folds_into_sizes_and_survives_reload() {
        let t = tempfile::tempdir().unwrap();
        let mut w = Watermarks::load(t.path());
        assert_eq!(w.dir_mtime, i64::MIN);
        w.replace_all(BTreeMap::from([("a.md".to_string(), 5)]));
        w.dir_mtime = 42;
        w.set("b.md", 7);
        w.save();
        let mut w = Watermarks::load(t.path());
        assert_eq!(
            (w.dir_mtime, w.get("a.md"), w.get("b.md"), w.get("c.md")),
            (42, 5, 7, 0)
        );
        for i in 0..=RECENT_MAX {
            w.set(&format!("{i}.md"), i as u64);
        }
        w.save();
        let mut w = Watermarks::load(t.path());
        assert!(w.recent.is_empty());
        assert_eq!((w.get("a.md"), w.get("3.md")), (5, 3));
    }
}
