//! What verify remembers between runs, under `.git/rutter/verify/` (disposable): the last
//! verified tip, how much of the reflog and tip witness log was checked, which commit added
//! each entry, and the working files found clean (by size, mtime and committed blob).

use super::added_by::AddedBy;
use super::entries_index::{self, ENTRIES};
use crate::fsx::Dir;
use crate::objectid::ObjectId;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

/// The verify cache.
#[derive(Debug, Default)]
pub(crate) struct VerifyCache {
    pub verified_tip: Option<String>,
    /// The tip up to which `entries` names the commit of every entry: the last verify's, or a
    /// later one a read-only run (`log`) walked to (it moves no watermark of the audit).
    pub entries_tip: Option<String>,
    /// The state file as it was read, written back as it was by a read-only run.
    state_read: String,
    /// The reflog's complete lines as the last verify accepted them: length and sha256.
    pub reflog_seen: Option<(u64, String)>,
    /// The reflog as this verify read it, accepted by [`VerifyCache::accept_reflog`].
    pub reflog_read: Option<(u64, String)>,
    pub tips_checked: usize,
    /// The witness log as the last verify accepted it: its length and the sha256 of those bytes.
    pub tips_seen: Option<(u64, String)>,
    /// The witness log as this verify read it, accepted by [`VerifyCache::accept_tips`].
    pub tips_read: Option<(u64, String)>,
    /// Entry or binding id → the commit that added it, built only when asked for
    /// ([`VerifyCache::entries`]) from the `entries` file (unless the cache is fresh) and
    /// `new_entries`: 70,000 lines were a fifth of an incremental verify that needs none of
    /// them unless it has a finding to attribute, and a `--full` walk that built it as it went
    /// held every id twice.
    entries: HashMap<String, String>,
    /// Whether `entries` is built (then every id learnt is also entered there).
    entries_loaded: bool,
    /// The file is rewritten from `new_entries` alone (a fresh cache), not appended to, and
    /// never read.
    entries_fresh: bool,
    entries_path: std::path::PathBuf,
    /// What this run learnt, in commit order; an id learnt twice keeps its first commit (the
    /// first line of an id wins when the file is read).
    new_entries: Vec<(String, ObjectId)>,
    /// The working files found clean.
    pub stamps: Stamps,
}

/// The working files found clean, apart from the rest of the cache so the working-tree check
/// can run beside the history walk ([`super::verify`]).
#[derive(Debug, Default)]
pub(crate) struct Stamps {
    /// Path → (size, mtime ns, `<committed blob id>:<ctime ns>:<inode>`).
    pub files: HashMap<String, (u64, i64, String)>,
    /// The paths whose stamp changed since `files` was read, in the order they changed.
    changed: Vec<String>,
    /// Complete lines read from the `files` file (superseded ones included).
    lines: usize,
    /// The stamps were not read ([`VerifyCache::load_days`]): none is consulted, none saved.
    unread: bool,
}

impl Stamps {
    /// Remembers that the working file `path` was found clean with this stamp.
    pub(crate) fn clean(&mut self, path: &str, stamp: (u64, i64, String)) {
        if !self.unread && self.files.get(path) != Some(&stamp) {
            self.files.insert(path.to_string(), stamp);
            self.changed.push(path.to_string());
        }
    }

    /// Writes the stamps that changed. A day of captures changes one or two of 3,650: their
    /// lines are appended (a later line supersedes an earlier one on load) instead of the
    /// whole 470 KB being rewritten; the file is rewritten whole, superseded lines dropped,
    /// once they would outnumber the live ones, or when the append fails.
    fn save(&self, dir: &Dir) {
        if self.changed.is_empty() {
            return;
        }
        let line = |p: &str, (s, m, b): &(u64, i64, String)| format!("{s} {m} {b} {p}\n");
        let lines = self.lines + self.changed.len();
        if self.lines > 0 && lines <= 2 * self.files.len() {
            let text: String = self
                .changed
                .iter()
                .filter_map(|p| self.files.get(p).map(|st| line(p, st)))
                .collect();
            let appended = dir
                .open_append("files")
                .map_err(|e| std::io::Error::other(e.to_string()))
                .and_then(|mut f| match f.ends_with_newline {
                    true => f.file.write_all(text.as_bytes()),
                    // A torn last line would swallow the first appended one.
                    false => Err(std::io::Error::other("torn last line")),
                });
            if appended.is_ok() {
                return;
            }
        }
        let files: String = self.files.iter().map(|(p, st)| line(p, st)).collect();
        let _ = dir.write_atomic("files", files.as_bytes());
    }
}

impl VerifyCache {
    /// Loads the cache; `full` starts from nothing.
    pub(crate) fn load(state: &Path, full: bool) -> VerifyCache {
        Self::load_days(state, full, false)
    }

    /// Loads the cache, without the working files' stamps when `some_days` (a run that checks
    /// a few day files, `log`): on a verified vault of 36,500 day files they are 4.7 MB read
    /// whole to look up twenty, which cost more than reading the twenty files (each is then
    /// hashed and compared with its committed blob id, [`super::worktree`]).
    pub(crate) fn load_days(state: &Path, full: bool, some_days: bool) -> VerifyCache {
        let dir = state.join("verify");
        let fresh = VerifyCache {
            entries_fresh: true,
            entries_path: dir.join(ENTRIES),
            stamps: Stamps {
                unread: some_days,
                ..Stamps::default()
            },
            ..VerifyCache::default()
        };
        if full {
            return fresh;
        }
        let mut c = VerifyCache {
            entries_path: dir.join(ENTRIES),
            ..VerifyCache::default()
        };
        if let Some(text) = read_text(&dir, "state") {
            for line in text.lines() {
                match line.split_once(' ') {
                    Some(("tip", v)) if !v.is_empty() => c.verified_tip = Some(v.to_string()),
                    Some(("entries-tip", v)) if !v.is_empty() => {
                        c.entries_tip = Some(v.to_string())
                    }
                    Some(("reflog-seen", v)) => c.reflog_seen = parse_seen(v),
                    Some(("tips", v)) => c.tips_checked = v.parse().unwrap_or(0),
                    Some(("tips-seen", v)) => c.tips_seen = parse_seen(v),
                    _ => {}
                }
            }
            c.state_read = text;
        }
        if c.verified_tip.is_none() && c.entries_tip.is_none() {
            return fresh;
        }
        c.stamps.unread = some_days;
        if some_days {
            return c;
        }
        if let Some(text) = read_text(&dir, "files") {
            // Complete lines only (an append cut short is not a stamp); a later line for the
            // same path supersedes an earlier one (see `save`).
            let lines = text
                .split_inclusive('\n')
                .filter_map(|l| l.strip_suffix('\n'));
            for l in lines {
                c.stamps.lines += 1;
                if let Some((path, stamp)) = parse_file_line(l) {
                    c.stamps.files.insert(path, stamp);
                }
            }
        }
        c
    }

    /// Records that `commit` added entry `id` (an entry keeps the first commit that added it).
    pub(crate) fn added(&mut self, id: String, commit: ObjectId) {
        if self.entries_loaded {
            if self.entries.contains_key(&id) {
                return;
            }
            self.entries.insert(id.clone(), commit.to_string());
        }
        // Kept unread otherwise: a later line naming an id already known is dropped on load.
        self.new_entries.push((id, commit));
    }

    /// Forgets every entry (the history is walked again from the start).
    pub(crate) fn clear_entries(&mut self) {
        self.entries.clear();
        self.new_entries.clear();
        self.entries_loaded = false;
        self.entries_fresh = true;
    }

    /// Entry or binding id → the commit that added it, built the first time: the file's lines
    /// (none for a fresh cache), then what this run learnt.
    pub(crate) fn entries(&mut self) -> &HashMap<String, String> {
        if !self.entries_loaded {
            self.entries_loaded = true;
            let text = match self.entries_fresh {
                true => None,
                false => self
                    .entries_path
                    .parent()
                    .and_then(|dir| read_text(dir, ENTRIES)),
            }
            .unwrap_or_default();
            // Sized up front: tens of thousands of entries, rehashed a dozen times otherwise.
            let lines = memchr::memchr_iter(b'\n', text.as_bytes()).count();
            let mut map = HashMap::with_capacity(lines + self.new_entries.len());
            let known = text.lines().filter_map(|l| l.split_once(' '));
            for (id, commit) in known {
                map.entry(id.to_string())
                    .or_insert_with(|| commit.to_string());
            }
            for (id, commit) in &self.new_entries {
                map.entry(id.clone()).or_insert_with(|| commit.to_string());
            }
            self.entries = map;
        }
        &self.entries
    }

    /// Which commit added each entry, handed over: the file opened, to be searched for the
    /// ids a screen shows (parsing it into a map of owned strings cost a third of a `log`), and
    /// what this run learnt.
    pub(crate) fn take_added_by(&mut self) -> AddedBy {
        if self.entries_loaded || self.entries_fresh {
            self.entries();
            return AddedBy::new(None, None, std::mem::take(&mut self.entries));
        }
        let mut learnt = HashMap::with_capacity(self.new_entries.len());
        for (id, commit) in std::mem::take(&mut self.new_entries) {
            learnt.entry(id).or_insert_with(|| commit.to_string());
        }
        let dir = self.entries_path.parent().and_then(existing_dir);
        let file = dir
            .as_ref()
            .and_then(|d| d.open_read(ENTRIES).ok().flatten());
        AddedBy::new(file, dir, learnt)
    }

    /// Writes the cache (best effort). Every file is written relative to the state folder's
    /// handle, never through a symlink, and `entries` is never appended to when it has a
    /// second name.
    pub(crate) fn save(&self, state: &Path) {
        let Some(dir) = verify_dir(state) else {
            return;
        };
        let mut state_text = format!(
            "tip {}\ntips {}\n",
            self.verified_tip.as_deref().unwrap_or(""),
            self.tips_checked
        );
        if let Some(t) = &self.entries_tip {
            state_text.push_str(&format!("entries-tip {t}\n"));
        }
        if let Some((len, sha)) = &self.reflog_seen {
            state_text.push_str(&format!("reflog-seen {len} {sha}\n"));
        }
        if let Some((len, sha)) = &self.tips_seen {
            state_text.push_str(&format!("tips-seen {len} {sha}\n"));
        }
        self.save_with_state(&dir, &state_text);
    }

    /// Writes what a read-only run (`log`) learnt: the entries and their tip, and the clean
    /// files' stamps; the audit's watermarks (the verified tip, how much of the witness log and
    /// the reflog were accepted) stay as they were read.
    pub(crate) fn save_read_only(&self, state: &Path) {
        let Some(dir) = verify_dir(state) else {
            return;
        };
        let mut state_text: String = self
            .state_read
            .lines()
            .filter(|l| !l.starts_with("entries-tip "))
            .map(|l| format!("{l}\n"))
            .collect();
        if let Some(t) = &self.entries_tip {
            state_text.push_str(&format!("entries-tip {t}\n"));
        }
        self.save_with_state(&dir, &state_text);
    }

    /// Writes `state_text`, the new entries and the changed stamps.
    fn save_with_state(&self, dir: &Dir, state_text: &str) {
        let _ = dir.write_atomic("state", state_text.as_bytes());
        let mut text = String::with_capacity(self.new_entries.len() * 62);
        for (id, commit) in &self.new_entries {
            let _ = writeln!(text, "{id} {commit}");
        }
        if self.entries_fresh {
            let _ = entries_index::rewrite(dir, &text);
        } else {
            // The index beside it gets the new lines' runs in the same save.
            if entries_index::append(dir, &text).is_err() {
                // The next verify starts over rather than trust a partial list.
                let _ = dir.remove("state");
            }
        }
        self.stamps.save(dir);
    }
}

/// The tip the last verify found clean, read alone (`status` reads it without loading the cache).
pub(crate) fn verified_tip(state: &Path) -> Option<String> {
    let text = read_text(&state.join("verify"), "state")?;
    text.lines()
        .find_map(|l| l.strip_prefix("tip "))
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

impl VerifyCache {
    /// Takes the witness log as this verify read it as the baseline for the next one.
    pub(crate) fn accept_tips(&mut self) {
        if let Some(read) = self.tips_read.take() {
            self.tips_seen = Some(read);
        }
    }

    /// Takes the reflog as this verify read it as the baseline for the next one.
    pub(crate) fn accept_reflog(&mut self) {
        if let Some(read) = self.reflog_read.take() {
            self.reflog_seen = Some(read);
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

/// The cache's folder `dir` (`<state>/verify`) for reading: opened without following a symlink
/// at its name, nothing created; `None` when it is missing or not a folder.
fn existing_dir(dir: &Path) -> Option<Dir> {
    let (parent, name) = (dir.parent()?, dir.file_name()?.to_str()?);
    Dir::open(parent).ok()?.open_dir(name, false).ok().flatten()
}

/// The text of the cache file `name` in `dir`, read as the cache is written: never through a
/// symlink, only a regular file (a FIFO or device planted at the name is not read); `None`
/// when it is missing, unreadable or not UTF-8.
fn read_text(dir: &Path, name: &str) -> Option<String> {
    let bytes = existing_dir(dir)?.read(name).ok().flatten()?;
    String::from_utf8(bytes).ok()
}

/// The cache's folder `<state>/verify`, created if needed, opened without following a symlink.
fn verify_dir(state: &Path) -> Option<Dir> {
    Dir::open_private(state)
        .and_then(|d| d.open_dir("verify", true))
        .ok()
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn stamp(n: u64) -> (u64, i64, String) {
        (n, n as i64 * 10, format!("{:040x}:{n}:{n}", n))
    }

    /// A cache with a verified tip (otherwise `load` starts fresh) and `n` clean files.
    fn saved(state: &Path, n: u64) {
        let mut c = VerifyCache::load(state, true);
        c.verified_tip = Some("t".into());
        for i in 0..n {
            c.stamps
                .clean(&format!("_librarian/sessions/{i}.md"), stamp(i));
        }
        c.save(state);
    }

    fn files_text(state: &Path) -> String {
        std::fs::read_to_string(state.join("verify/files")).unwrap()
    }

    #[test]
    fn a_changed_stamp_is_appended_and_supersedes_the_old_line() {
        let t = tempfile::tempdir().unwrap();
        saved(t.path(), 10);
        assert_eq!(files_text(t.path()).lines().count(), 10);
        let mut c = VerifyCache::load(t.path(), false);
        c.stamps.clean("_librarian/sessions/3.md", stamp(3));
        c.save(t.path());
        assert_eq!(files_text(t.path()).lines().count(), 10, "nothing changed");
        c.stamps.clean("_librarian/sessions/3.md", stamp(99));
        c.stamps.clean("_librarian/new.md", stamp(7));
        c.save(t.path());
        let text = files_text(t.path());
        assert_eq!(text.lines().count(), 12, "two lines appended: {text}");
        let again = VerifyCache::load(t.path(), false);
        assert_eq!(again.stamps.files.len(), 11);
        assert_eq!(again.stamps.files["_librarian/sessions/3.md"], stamp(99));
        assert_eq!(again.stamps.files["_librarian/new.md"], stamp(7));
    }

    #[test]
    fn superseded_lines_are_dropped_once_they_outnumber_the_live_ones() {
        let t = tempfile::tempdir().unwrap();
        saved(t.path(), 4);
        for round in 0..6u64 {
            let mut c = VerifyCache::load(t.path(), false);
            c.stamps
                .clean("_librarian/sessions/0.md", stamp(100 + round));
            c.save(t.path());
            let lines = files_text(t.path()).lines().count();
            assert!(lines <= 8, "round {round}: {lines} lines");
            let back = VerifyCache::load(t.path(), false);
            assert_eq!(back.stamps.files.len(), 4);
            assert_eq!(
                back.stamps.files["_librarian/sessions/0.md"],
                stamp(100 + round)
            );
        }
    }

    #[test]
    fn a_torn_last_line_is_no_stamp_and_is_not_appended_to() {
        let t = tempfile::tempdir().unwrap();
        saved(t.path(), 3);
        let path = t.path().join("verify/files");
        let mut text = files_text(t.path());
        // An append cut short, naming a real file with a prefix of some stamp.
        text.push_str("1 10 ");
        std::fs::write(&path, &text).unwrap();
        let mut c = VerifyCache::load(t.path(), false);
        assert_eq!(c.stamps.files.len(), 3);
        c.stamps.clean("_librarian/sessions/1.md", stamp(42));
        c.save(t.path());
        let text = files_text(t.path());
        assert!(text.ends_with('\n') && !text.contains("1 10 \n"), "{text}");
        let back = VerifyCache::load(t.path(), false);
        assert_eq!(back.stamps.files.len(), 3);
        assert_eq!(back.stamps.files["_librarian/sessions/1.md"], stamp(42));
    }

    /// A run that checks a few days (`log`) neither reads nor writes the stamps: the file
    /// stays as it was, every stamp in it.
    #[test]
    fn a_load_for_some_days_leaves_the_stamps_alone() {
        let t = tempfile::tempdir().unwrap();
        saved(t.path(), 20);
        let before = files_text(t.path());
        let mut c = VerifyCache::load_days(t.path(), false, true);
        assert!(c.stamps.files.is_empty());
        assert_eq!(c.verified_tip.as_deref(), Some("t"));
        c.stamps.clean("_librarian/sessions/3.md", stamp(99));
        c.stamps.clean("_librarian/new.md", stamp(7));
        c.save_read_only(t.path());
        assert_eq!(files_text(t.path()), before);
        let all = VerifyCache::load(t.path(), false);
        assert_eq!(all.stamps.files.len(), 20);
        assert_eq!(all.stamps.files["_librarian/sessions/3.md"], stamp(3));
        // Nor does it when the cache starts fresh (no state): verify's stamps stay.
        std::fs::remove_file(t.path().join("verify/state")).unwrap();
        let mut c = VerifyCache::load_days(t.path(), false, true);
        c.stamps.clean("_librarian/sessions/3.md", stamp(99));
        c.save_read_only(t.path());
        assert_eq!(files_text(t.path()), before);
    }

    /// What the cache reads is read as it is written: never through a symlink, never from a
    /// FIFO (which would block `log`) or a device; such a name reads as a missing file.
    #[test]
    fn cache_files_are_never_read_through_a_symlink_or_from_a_fifo() {
        use std::os::unix::fs::symlink;
        let t = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        saved(t.path(), 3);
        let verify = t.path().join("verify");
        let id = "20261201T000000000Z";
        std::fs::write(outside.path().join("entries"), format!("{id} forged\n")).unwrap();
        let _ = std::fs::remove_file(verify.join("entries"));
        symlink(outside.path().join("entries"), verify.join("entries")).unwrap();
        let mut c = VerifyCache::load(t.path(), false);
        assert!(c.entries().is_empty(), "read through the symlink");
        let wanted = HashSet::from([id]);
        assert!(c.take_added_by().map_for(&wanted).is_empty());
        std::fs::remove_file(verify.join("entries")).unwrap();
        crate::fsx::testing::fifo(&verify.join("entries"));
        let mut c = VerifyCache::load(t.path(), false);
        assert!(c.take_added_by().map_for(&wanted).is_empty());
        assert!(c.entries().is_empty());
        // A state file behind a symlink is no state: the cache starts fresh.
        let state = verify.join("state");
        std::fs::rename(&state, outside.path().join("state")).unwrap();
        symlink(outside.path().join("state"), &state).unwrap();
        assert_eq!(VerifyCache::load(t.path(), false).verified_tip, None);
        assert_eq!(verified_tip(t.path()), None);
    }
}
