//! How many bytes of each day file the dedupe cache has ingested, stored so that a capture
//! reads and writes only a few lines.
//!
//! `dedupe/recent` (read and rewritten by every capture) holds the sessions folder's mtime and
//! the files updated since the last full scan; `dedupe/sizes` (one line per day file) is read
//! only when a file is not in `recent`, and rewritten only after a full scan or when `recent`
//! grows past [`RECENT_MAX`] lines.

use crate::fsx::Dir;
use std::collections::BTreeMap;

/// Version 3: key files carry a header with their count (a cache of version 2 is rebuilt).
const MAGIC: &str = "rutter-dedupe 3";
/// Lines kept in `recent` before they are folded into `sizes`.
const RECENT_MAX: usize = 16;

/// The ingested size of every day file, with the folder mtime they were checked against.
pub(crate) struct Watermarks {
    /// The sessions folder's mtime (ns) when the marks were last reconciled; `i64::MIN` when
    /// unknown, which forces a full scan.
    pub dir_mtime: i64,
    recent: BTreeMap<String, u64>,
    sizes: Option<BTreeMap<String, u64>>,
    sizes_dirty: bool,
}

impl Watermarks {
    /// Reads `recent` from the dedupe folder `dir`; a missing or unreadable file (or no folder)
    /// means "unknown" (a full scan follows).
    pub(crate) fn load(dir: Option<&Dir>) -> Watermarks {
        let parsed = dir
            .and_then(|d| d.read("recent").ok().flatten())
            .and_then(|b| parse(&String::from_utf8_lossy(&b)));
        let (dir_mtime, recent) = parsed.unwrap_or((i64::MIN, BTreeMap::new()));
        Watermarks {
            dir_mtime,
            recent,
            sizes: None,
            sizes_dirty: false,
        }
    }

    /// The ingested size of `name` (0 when never ingested).
    pub(crate) fn get(&mut self, dir: Option<&Dir>, name: &str) -> u64 {
        if let Some(&n) = self.recent.get(name) {
            return n;
        }
        self.sizes(dir).get(name).copied().unwrap_or(0)
    }

    /// Records the ingested size of `name`.
    pub(crate) fn set(&mut self, name: &str, size: u64) {
        self.recent.insert(name.to_string(), size);
    }

    /// Every known mark (`recent` over `sizes`).
    pub(crate) fn all(&mut self, dir: Option<&Dir>) -> BTreeMap<String, u64> {
        let mut all = self.sizes(dir).clone();
        all.extend(self.recent.iter().map(|(k, v)| (k.clone(), *v)));
        all
    }

    /// Replaces every mark after a full scan.
    pub(crate) fn replace_all(&mut self, marks: BTreeMap<String, u64>) {
        self.sizes = Some(marks);
        self.sizes_dirty = true;
        self.recent.clear();
    }

    /// Writes what changed into `dir` (best effort: the cache is disposable).
    pub(crate) fn save(&mut self, dir: &Dir) {
        if self.recent.len() > RECENT_MAX {
            let all = self.all(Some(dir));
            self.replace_all(all);
        }
        if self.sizes_dirty {
            if let Some(sizes) = &self.sizes {
                let _ = dir.replace_cache("sizes", render(i64::MIN, sizes).as_bytes());
            }
        }
        let _ = dir.replace_cache("recent", render(self.dir_mtime, &self.recent).as_bytes());
    }

    /// Forgets every mark in `dir`, so the next load reads every day file whole (after a write
    /// of the keys failed: marks must never run ahead of the keys). Best effort.
    pub(crate) fn forget_all(dir: &Dir) {
        let _ = dir.remove("recent");
        let _ = dir.remove("sizes");
    }

    fn sizes(&mut self, dir: Option<&Dir>) -> &BTreeMap<String, u64> {
        self.sizes.get_or_insert_with(|| {
            dir.and_then(|d| d.read("sizes").ok().flatten())
                .and_then(|b| parse(&String::from_utf8_lossy(&b)))
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
        let d = Dir::open(t.path()).unwrap();
        let mut w = Watermarks::load(Some(&d));
        assert_eq!(w.dir_mtime, i64::MIN);
        w.replace_all(BTreeMap::from([("a.md".to_string(), 5)]));
        w.dir_mtime = 42;
        w.set("b.md", 7);
        w.save(&d);
        let mut w = Watermarks::load(Some(&d));
        assert_eq!(
            (
                w.dir_mtime,
                w.get(Some(&d), "a.md"),
                w.get(Some(&d), "b.md"),
                w.get(Some(&d), "c.md")
            ),
            (42, 5, 7, 0)
        );
        for i in 0..=RECENT_MAX {
            w.set(&format!("{i}.md"), i as u64);
        }
        w.save(&d);
        let mut w = Watermarks::load(Some(&d));
        assert!(w.recent.is_empty());
        assert_eq!((w.get(Some(&d), "a.md"), w.get(Some(&d), "3.md")), (5, 3));
        Watermarks::forget_all(&d);
        assert_eq!(Watermarks::load(Some(&d)).dir_mtime, i64::MIN);
    }
}
