//! Answers that are never stale: the freshness check, and reads that run behind it.
//!
//! The check compares the file system with the snapshot (`note_dirs`): one stat per recorded
//! directory (an entry added, removed or renamed moves its stamp) and one per recorded note (an
//! edit in place moves only the note's own stamp). A directory with any difference is
//! rescanned: listed again, and only its changed notes read. Nothing is listed and nothing read
//! when nothing changed. The stats run on a few threads; a search runs its query at the same
//! time on the same read snapshot of the index and keeps the answer when nothing changed.
//!
//! Before the check, a running MCP server's watcher is asked ([`watcher`]): when it vouches
//! for the index (every change before the question heard and applied, and the index holding
//! its token), the answer is read at once and nothing is stat'ed. Any doubt means the check.
//! Why this check and not another: spec/index.md, "Freshness".

use super::notes::Refresh;
use super::rescan::{self, Rescan};
use super::snapshot::{self, RawRow};
use super::walk::{stamp_of, stat_size};
use super::watcher::{self, NoAnswer};
use super::{Index, IndexError};
use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags, CWD};
use std::os::fd::{AsFd, BorrowedFd};
use std::path::Path;

/// More threads than this do not pay for themselves: the stats are syscall-bound.
const MAX_THREADS: usize = 4;

/// Past this many changed notes, looking each up costs more than the identity pass may.
const MANY_NOTES: usize = 64;

/// Below this many recorded notes one thread is quicker than starting more.
const PARALLEL_FROM: usize = 2_000;

impl Index {
    /// Runs `query` on an index that reflects the notes as they are now.
    ///
    /// The check runs on other threads while `query` runs here, in one read transaction with
    /// the snapshot it checks, so the answer is kept when nothing changed. Otherwise the
    /// changed directories are rescanned, `after` runs (the identity pass, when paths changed)
    /// and `query` runs again. Returns the answer and what the rescan did, if one ran.
    pub(crate) fn read_fresh<T>(
        &mut self,
        query: impl Fn(&Index) -> Result<T, IndexError>,
        after: impl FnOnce(&mut Index, &Refresh) -> Result<(), IndexError>,
    ) -> Result<(T, Option<Refresh>), IndexError> {
        if let Some(answer) = self.read_vouched(&query)? {
            return Ok((answer, None));
        }
        let root = self.root.clone();
        let (answer, stale) = self.read(|index| {
            let rows = snapshot::load_all(&index.conn)?;
            std::thread::scope(|scope| {
                let check = scope.spawn(|| stale_dirs(&root, &rows));
                let answer = query(index);
                let stale = match check.join() {
                    Ok(stale) => stale,
                    Err(panic) => std::panic::resume_unwind(panic),
                };
                Ok((answer?, stale))
            })
        })?;
        if stale.is_empty() {
            return Ok((answer, None));
        }
        let rescan = self.rescan_dirs(&stale)?;
        after(self, &rescan.notes)?;
        Ok((self.read(&query)?, Some(rescan.notes)))
    }

    /// [`Index::freshen`], unless a running watcher vouches that the index is current (a
    /// command's way; the watcher itself always checks).
    pub fn freshen_or_ask(&mut self) -> Result<Option<Rescan>, IndexError> {
        if self.read_vouched(&|_: &Index| Ok(()))?.is_some() {
            return Ok(None);
        }
        self.freshen()
    }

    /// Checks the notes and rescans what changed; what the rescan did, if one was needed.
    pub fn freshen(&mut self) -> Result<Option<Rescan>, IndexError> {
        let rows = self.read(|index| Ok(snapshot::load_all(&index.conn)?))?;
        let stale = stale_dirs(&self.root, &rows);
        if stale.is_empty() {
            return Ok(None);
        }
        Ok(Some(self.rescan_dirs(&stale)?))
    }

    /// Runs `query` when a running watcher vouches that the index is current: it heard and
    /// applied every change made before the question, and this index holds its token (so it is
    /// the file the watcher keeps). `None` (and the check is the caller's) on any doubt.
    fn read_vouched<T>(
        &self,
        query: &impl Fn(&Index) -> Result<T, IndexError>,
    ) -> Result<Option<T>, IndexError> {
        let current = match watcher::ask(&self.path, &self.root) {
            Ok(current) => current,
            Err(why) => {
                watcher::trace(&format_args!("full check ({why})"));
                return Ok(None);
            }
        };
        self.read(|index| {
            if index.meta(watcher::TOKEN_KEY)?.as_deref() != Some(current.token.as_str()) {
                watcher::trace(&format_args!("full check ({})", NoAnswer::OtherToken));
                return Ok(None);
            }
            watcher::trace(&format_args!("watcher ({})", current.how));
            query(index).map(Some)
        })
    }

    /// Rescans the named directories (vault-relative; unknown ones are ignored, except the
    /// root, which is then walked whole) in one `BEGIN IMMEDIATE` transaction.
    pub fn rescan_dirs(&mut self, dirs: &[String]) -> Result<Rescan, IndexError> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let done = rescan::dirs(&tx, &self.root, dirs)?;
        tx.commit()?;
        Ok(done)
    }

    /// Whether what a rescan did can move the identity pass's answer: a note that appeared or
    /// disappeared is cited, a binding's target or a candidate; or a note that appeared or was
    /// edited now carries the hash of a bound or unresolved ref, or is a candidate. More than
    /// `MANY_NOTES` changes are assumed to.
    pub fn identity_may_change(&self, done: &Refresh) -> Result<bool, IndexError> {
        if done.paths.len() + done.edited.len() > MANY_NOTES {
            return Ok(true);
        }
        let mut moved = self.conn.prepare_cached(
            "SELECT EXISTS(SELECT 1 FROM entry_refs WHERE path = ?1)
                 OR EXISTS(SELECT 1 FROM identity_bindings WHERE to_path = ?1)",
        )?;
        let mut content = self.conn.prepare_cached(
            "SELECT EXISTS(SELECT 1 FROM identity_candidates WHERE path = ?1)
                 OR EXISTS(SELECT 1 FROM notes n WHERE n.path = ?1 AND (
                        EXISTS(SELECT 1 FROM identity_unresolved u WHERE u.hash = n.sha256)
                     OR EXISTS(SELECT 1 FROM identity_bindings b WHERE b.hash = n.sha256)))",
        )?;
        for path in &done.paths {
            if moved.query_row([path], |r| r.get::<_, bool>(0))? {
                return Ok(true);
            }
        }
        for path in done.paths.iter().chain(&done.edited) {
            if content.query_row([path], |r| r.get::<_, bool>(0))? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Every directory the snapshot records, vault-relative, sorted.
    pub fn note_dirs(&self) -> Result<Vec<String>, IndexError> {
        Ok(snapshot::paths(&self.conn)?.into_iter().collect())
    }
}

/// The recorded directories whose stamp, or any of whose notes' size or stamps, differ from
/// the file system's, sorted; the root when it has no row.
pub(crate) fn stale_dirs(root: &Path, rows: &[RawRow]) -> Vec<String> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let has_root = rows.iter().any(|r| r.path.is_empty());
    let Ok(root_fd) = rfs::openat(CWD, root, flags, Mode::empty()) else {
        return if has_root {
            vec![String::new()]
        } else {
            Vec::new()
        };
    };
    let fd = root_fd.as_fd();
    let notes: usize = rows.iter().map(|r| r.blob.len() / 40).sum();
    let threads = if notes < PARALLEL_FROM {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_THREADS))
    };
    let mut stale: Vec<String> = if threads <= 1 {
        check_rows(fd, rows)
    } else {
        let chunks = split(rows, threads);
        std::thread::scope(|scope| {
            let handles: Vec<_> = chunks[1..]
                .iter()
                .map(|chunk| scope.spawn(move || check_rows(fd, chunk)))
                .collect();
            let mut stale = check_rows(fd, chunks[0]);
            for handle in handles {
                match handle.join() {
                    Ok(found) => stale.extend(found),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            stale
        })
    };
    if !has_root {
        stale.push(String::new());
    }
    stale.sort_unstable();
    stale
}

/// `rows` cut into `n` runs of about equal encoded size (a row's notes are its cost).
fn split(rows: &[RawRow], n: usize) -> Vec<&[RawRow]> {
    let total: usize = rows.iter().map(|r| r.blob.len() + 64).sum();
    let per = total.div_ceil(n.max(1)).max(1);
    let mut chunks = Vec::with_capacity(n);
    let (mut start, mut acc) = (0, 0);
    for (i, r) in rows.iter().enumerate() {
        acc += r.blob.len() + 64;
        if acc >= per && chunks.len() + 1 < n {
            chunks.push(&rows[start..=i]);
            start = i + 1;
            acc = 0;
        }
    }
    chunks.push(&rows[start..]);
    chunks
}

fn check_rows(root: BorrowedFd<'_>, rows: &[RawRow]) -> Vec<String> {
    rows.iter()
        .filter(|r| is_stale(root, r))
        .map(|r| r.path.clone())
        .collect()
}

/// How a recorded directory is opened for the check: never through a symlink at its last
/// component, and on Linux as a path handle (no permission needed, nothing read).
#[cfg(any(target_os = "linux", target_os = "android"))]
const DIR_FLAGS: OFlags = OFlags::PATH
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// Whether one recorded directory differs from the file system. Its notes are stat'ed by name
/// relative to the directory's own descriptor (no path walk per note); a directory swapped for
/// a symlink fails to open.
fn is_stale(root: BorrowedFd<'_>, row: &RawRow) -> bool {
    let name = if row.path.is_empty() { "." } else { &row.path };
    let dir = match rfs::openat(root, name, DIR_FLAGS, Mode::empty()) {
        Ok(fd) => fd,
        // Without O_PATH, an unreadable directory cannot be opened: its stamp tells.
        Err(_) if !row.listed => {
            return rfs::statat(root, name, AtFlags::SYMLINK_NOFOLLOW)
                .map_or(true, |st| stale_dir_stat(&st, row));
        }
        Err(_) => return true,
    };
    match rfs::fstat(&dir) {
        Ok(st) if !stale_dir_stat(&st, row) => {}
        _ => return true,
    }
    if !row.listed {
        return false;
    }
    let Some(entries) = snapshot::decode(&row.blob) else {
        return true;
    };
    entries.iter().any(
        |e| match rfs::statat(&dir, e.name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => {
                FileType::from_raw_mode(st.st_mode) != FileType::RegularFile
                    || stat_size(&st) != e.size
                    || stamp_of(&st) != e.stamp
                    || e.stamp.ctime_ns == 0
            }
            Err(_) => true,
        },
    )
}

/// Whether a directory's stat differs from its row (or the row was recorded racy).
fn stale_dir_stat(st: &rfs::Stat, row: &RawRow) -> bool {
    FileType::from_raw_mode(st.st_mode) != FileType::Directory
        || stamp_of(st) != row.stamp
        || row.stamp.ctime_ns == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::snapshot::tests::settle_all;
    use std::fs;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    fn append(root: &Path, rel: &str, text: &str) {
        use std::io::Write;
        let mut f = fs::OpenOptions::new()
            .append(true)
            .open(root.join(rel))
            .unwrap();
        f.write_all(text.as_bytes()).unwrap();
    }

    fn stale(index: &Index) -> Vec<String> {
        let rows = snapshot::load_all(&index.conn).unwrap();
        stale_dirs(index.root(), &rows)
    }

    /// Every indexed note with its hash and the body the full-text table holds.
    fn contents(index: &Index) -> Vec<(String, String, String)> {
        let mut stmt = index
            .conn
            .prepare("SELECT n.path, n.sha256, f.body FROM notes n JOIN notes_fts f ON f.rowid = n.id ORDER BY n.path")
            .unwrap();
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap();
        rows.map(Result::unwrap).collect()
    }

    /// A directory without stamps: its path, whether it was listed, its notes.
    type Shape = (String, bool, Vec<(String, u64, bool)>);

    /// The snapshot without stamps.
    fn shape(index: &Index) -> Vec<Shape> {
        let mut rows: Vec<_> = snapshot::load_all(&index.conn)
            .unwrap()
            .into_iter()
            .map(|r| r.decode().unwrap())
            .map(|r| {
                let notes = r
                    .entries
                    .iter()
                    .map(|e| (e.name.clone(), e.size, e.indexed));
                (r.path, r.listed, notes.collect())
            })
            .collect();
        rows.sort();
        rows
    }

    fn vault() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        write(t.path(), "top.md", "# Top\n\ntop note\n");
        write(t.path(), "Notes/a.md", "# A\n\nalpha\n");
        write(t.path(), "Notes/deep/b.md", "# B\n\nbeta\n");
        write(t.path(), "Other/c.md", "# C\n\ngamma\n");
        t
    }

    #[test]
    fn an_unchanged_vault_is_fresh_and_every_kind_of_change_names_its_directory() {
        settle_all();
        let t = vault();
        let root = t.path();
        let mut index = Index::in_memory(root);
        assert_eq!(stale(&index), Vec::<String>::new());

        append(root, "Notes/deep/b.md", "Also consider zucchini.\n");
        assert_eq!(stale(&index), ["Notes/deep"], "an edit in place");
        index.freshen().unwrap();
        assert_eq!(stale(&index), Vec::<String>::new());

        write(root, "Notes/new/kohlrabi.md", "Kohlrabi planting\n");
        assert_eq!(stale(&index), ["Notes"], "a note in a new folder");
        index.freshen().unwrap();

        fs::remove_file(root.join("Other/c.md")).unwrap();
        fs::rename(root.join("top.md"), root.join("Notes/top.md")).unwrap();
        assert_eq!(
            stale(&index),
            ["", "Notes", "Other"],
            "a delete and a rename"
        );
        index.freshen().unwrap();

        fs::rename(root.join("Notes/deep"), root.join("Deeper")).unwrap();
        assert_eq!(stale(&index), ["", "Notes", "Notes/deep"], "a folder moved");
        let done = index.freshen().unwrap().unwrap();
        assert_eq!(done.new_dirs, ["Deeper"]);
        assert!(done.notes.paths_changed());

        let paths: Vec<String> = contents(&index).into_iter().map(|c| c.0).collect();
        assert_eq!(
            paths,
            [
                "Deeper/b.md",
                "Notes/a.md",
                "Notes/new/kohlrabi.md",
                "Notes/top.md"
            ]
        );
        assert!(contents(&index)[0].2.contains("zucchini"));
        assert_eq!(
            index.note_dirs().unwrap(),
            ["", "Deeper", "Notes", "Notes/new", "Other"]
        );
    }

    #[test]
    fn rescanning_a_parent_alone_moves_and_forgets_its_subfolders() {
        settle_all();
        let t = vault();
        let root = t.path();
        let mut index = Index::in_memory(root);
        fs::rename(root.join("Notes/deep"), root.join("Notes/moved")).unwrap();
        write(root, "Notes/moved/more/e.md", "epsilon\n");
        let done = index.rescan_dirs(&["Notes".to_string()]).unwrap();
        assert_eq!(done.new_dirs, ["Notes/moved", "Notes/moved/more"]);
        let paths: Vec<String> = contents(&index).into_iter().map(|c| c.0).collect();
        assert_eq!(
            paths,
            [
                "Notes/a.md",
                "Notes/moved/b.md",
                "Notes/moved/more/e.md",
                "Other/c.md",
                "top.md"
            ]
        );
        assert_eq!(shape(&index), shape(&Index::in_memory(root)));
        // A directory the snapshot does not know is ignored.
        let none = index.rescan_dirs(&["Nowhere".to_string()]).unwrap();
        assert!(none.new_dirs.is_empty() && !none.notes.touched());
    }

    #[test]
    fn a_racy_stamp_is_read_again_and_counts_only_if_its_content_changed() {
        let t = vault();
        let mut index = Index::in_memory(t.path());
        // Written a moment ago: every stamp is within the racy window.
        assert_eq!(stale(&index), ["", "Notes", "Notes/deep", "Other"]);
        let again = index.freshen().unwrap().unwrap();
        assert_eq!((again.notes.changed, again.notes.removed), (0, 0));
        assert!(!again.notes.paths_changed() && again.notes.edited.is_empty());
        settle_all();
        index.freshen().unwrap();
        assert_eq!(stale(&index), Vec::<String>::new());
    }

    #[test]
    fn read_fresh_keeps_the_answer_when_nothing_changed_and_reruns_it_when_something_did() {
        settle_all();
        let t = vault();
        let mut index = Index::in_memory(t.path());
        let count = |ix: &Index| ix.note_count();
        let (n, done) = index.read_fresh(count, |_, _| Ok(())).unwrap();
        assert_eq!((n, done), (4, None));
        write(t.path(), "Notes/d.md", "delta\n");
        let mut after = None;
        let (n, done) = index
            .read_fresh(count, |_, r| {
                after = Some(r.clone());
                Ok(())
            })
            .unwrap();
        assert_eq!(n, 5);
        let done = done.unwrap();
        assert_eq!((done.changed, done.indexed), (1, 5));
        assert_eq!(done.paths, ["Notes/d.md"]);
        assert_eq!(after, Some(done));
    }

    #[test]
    fn an_unreadable_note_is_recorded_and_tried_again_when_its_stamp_moves() {
        settle_all();
        let t = vault();
        let fifo = t.path().join("Notes/pipe.md");
        crate::fsx::testing::fifo(&fifo);
        let mut index = Index::in_memory(t.path());
        // A FIFO is not a note: the walk leaves it out, and nothing is stale afterwards.
        assert_eq!(stale(&index), Vec::<String>::new());
        fs::remove_file(&fifo).unwrap();
        write(t.path(), "Notes/pipe.md", "now a note\n");
        assert_eq!(stale(&index), ["Notes"]);
        index.freshen().unwrap();
        assert!(contents(&index).iter().any(|c| c.0 == "Notes/pipe.md"));
    }

    #[test]
    fn only_notes_the_identity_pass_knows_of_can_move_its_answer() {
        use crate::records::{dayfile, line, Entry, NoteRef};
        settle_all();
        let t = vault();
        let cited = |path: &str, hash: &str| NoteRef {
            path: path.into(),
            hash: hash.into(),
            blob: None,
            extra: Default::default(),
        };
        let entry = Entry {
            id: "e1".into(),
            session_id: None,
            time: "2026-11-30T00:00:00.000Z".into(),
            summary: "cited two".into(),
            refs: vec![
                cited("Notes/a.md", "sha256:00"),
                cited("Gone/old.md", "sha256:feed"),
            ],
            workspace: None,
            client: None,
            supersedes: None,
            extra: Default::default(),
        };
        write(
            t.path(),
            "_librarian/sessions/2026-11-30.md",
            &dayfile::append_bytes(0, true, "2026-11-30", &line::render(&entry)),
        );
        let index = Index::in_memory(t.path());
        index
            .conn
            .execute(
                "INSERT INTO identity_unresolved(from_path, hash, candidates) VALUES ('Gone/old.md', 'sha256:feed', '[]')",
                [],
            )
            .unwrap();
        let may = |paths: &[&str], edited: &[&str]| {
            let done = Refresh {
                paths: paths.iter().map(|p| p.to_string()).collect(),
                edited: edited.iter().map(|p| p.to_string()).collect(),
                ..Default::default()
            };
            index.identity_may_change(&done).unwrap()
        };
        assert!(!may(&[], &[]));
        assert!(
            !may(&["Other/c.md", "Notes/new.md"], &[]),
            "not cited, no ref's hash"
        );
        assert!(may(&["Notes/a.md"], &[]), "a cited path appeared or went");
        assert!(!may(&[], &["Notes/a.md"]), "a cited note edited in place");
        index
            .conn
            .execute(
                "UPDATE notes SET sha256 = 'sha256:feed' WHERE path = 'Other/c.md'",
                [],
            )
            .unwrap();
        assert!(
            may(&[], &["Other/c.md"]),
            "edited to carry an unresolved ref's hash"
        );
        assert!(
            may(&["Other/c.md"], &[]),
            "appeared with an unresolved ref's hash"
        );
        let many: Vec<&str> = vec!["n.md"; MANY_NOTES + 1];
        assert!(may(&many, &[]));
    }

    /// A small deterministic generator (xorshift), so a failure replays.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    const DIRS: [&str; 6] = ["", "A", "A/B", "A/B/C", "D", "D/.git"];

    /// One random change to the tree under `root`.
    fn mutate(root: &Path, rng: &mut Rng, step: usize) {
        let dir = DIRS[rng.below(DIRS.len())];
        let existing: Vec<String> = crate::index::walk::walk_notes(root)
            .into_iter()
            .map(|n| n.path)
            .collect();
        let pick = |rng: &mut Rng| existing.get(rng.below(existing.len().max(1))).cloned();
        match rng.below(9) {
            0 | 1 => write(
                root,
                &walk_join(dir, &format!("n{step}.md")),
                &format!("word{step}\n"),
            ),
            2 => {
                if let Some(p) = pick(rng) {
                    append(root, &p, &format!("more{step}\n"));
                }
            }
            3 => {
                if let Some(p) = pick(rng) {
                    fs::remove_file(root.join(p)).unwrap();
                }
            }
            4 => {
                if let Some(p) = pick(rng) {
                    let to = walk_join(dir, &format!("moved{step}.md"));
                    fs::create_dir_all(root.join(&to).parent().unwrap()).unwrap();
                    fs::rename(root.join(p), root.join(to)).unwrap();
                }
            }
            5 => {
                let from = DIRS[1 + rng.below(DIRS.len() - 1)];
                if root.join(from).is_dir() {
                    let to = format!("R{step}");
                    fs::rename(root.join(from), root.join(to)).unwrap();
                }
            }
            6 => write(
                root,
                &walk_join(dir, &format!("x{step}.txt")),
                "not a note\n",
            ),
            7 => {
                let from = DIRS[1 + rng.below(DIRS.len() - 1)];
                let _ = fs::remove_dir_all(root.join(from));
            }
            _ => {
                let target = root.join(DIRS[rng.below(DIRS.len())]);
                let _ = std::os::unix::fs::symlink(target, root.join(format!("L{step}")));
            }
        }
    }

    fn walk_join(dir: &str, name: &str) -> String {
        crate::index::walk::join(dir, name)
    }

    #[test]
    fn checking_and_rescanning_gives_the_index_a_full_build_gives() {
        settle_all();
        for seed in 1..=12u64 {
            let t = tempfile::tempdir().unwrap();
            let root = t.path();
            write(root, "A/B/start.md", "start\n");
            let mut index = Index::in_memory(root);
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            for round in 0..6 {
                for step in 0..1 + rng.below(4) {
                    mutate(root, &mut rng, round * 10 + step);
                }
                index.freshen().unwrap();
                let full = Index::in_memory(root);
                assert_eq!(
                    contents(&index),
                    contents(&full),
                    "seed {seed} round {round}"
                );
                assert_eq!(shape(&index), shape(&full), "seed {seed} round {round}");
                assert_eq!(
                    stale(&index),
                    Vec::<String>::new(),
                    "seed {seed} round {round}"
                );
            }
        }
    }
}
