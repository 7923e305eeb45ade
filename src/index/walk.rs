//! The vault walk: finds every indexable note and the directories that hold them (anchor §9
//! "Index walk").
//!
//! A full refresh starts here, and the freshness check re-lists the directories it finds
//! changed, so the walk must stay cheap on a 10,000-note vault: each directory is opened
//! relative to its parent's file descriptor, entry types come from `d_type` (no stat), and only
//! the directory itself and its regular `.md` files are stat'ed. Symlinks are never followed
//! (`O_NOFOLLOW` on directories, `AT_SYMLINK_NOFOLLOW` on stats). The work is syscall-bound, so
//! a few threads share it.

use std::ffi::{CStr, CString};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, PoisonError};

use rustix::fs::{self as rfs, AtFlags, Dir, FileType, Mode, OFlags, CWD};
use rustix::io::Errno;

pub(crate) use crate::fsx::{stamp_of, stat_size, Stamp};

/// One indexable note found by the walk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NoteFile {
    /// Vault-relative path with `/` separators.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Modification time in nanoseconds since the Unix epoch.
    pub mtime_ns: i64,
    /// Status-change time in nanoseconds since the Unix epoch.
    pub ctime_ns: i64,
}

/// A note as its directory's listing found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Listed {
    /// The file name within its directory.
    pub name: String,
    pub size: u64,
    pub stamp: Stamp,
}

/// One directory as the walk found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DirScan {
    /// Vault-relative path without a trailing `/`; empty for the vault root.
    pub path: String,
    /// The directory's own stamp, taken before its entries were read.
    pub stamp: Stamp,
    /// False when the directory exists but could not be opened (permissions): it then has
    /// no notes and no subdirectories.
    pub listed: bool,
    /// Its notes, sorted by name (byte order).
    pub notes: Vec<Listed>,
    /// The names of its subdirectories that the walk enters, sorted.
    pub subdirs: Vec<String>,
}

impl DirScan {
    /// The vault-relative path of an entry of this directory.
    pub(crate) fn child(&self, name: &str) -> String {
        join(&self.path, name)
    }
}

/// `dir/name`, or `name` at the vault root.
pub(crate) fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// Directory names skipped at any depth.
pub(crate) const SKIPPED_DIRS: &[&str] = &[
    ".git",
    ".obsidian",
    ".trash",
    "node_modules",
    "_librarian",
    ".smart-env",
];

/// Walks the vault and returns its notes sorted by path (byte order).
///
/// A note is a regular file whose lowercased name ends in `.md`. Symlinked
/// files and directories are not followed, unreadable directories are skipped
/// silently, and names that are not valid UTF-8 are skipped. A vault root that
/// cannot be opened yields no notes.
pub(crate) fn walk_notes(vault_root: &Path) -> Vec<NoteFile> {
    let mut notes: Vec<NoteFile> = walk_dirs(vault_root, "")
        .into_iter()
        .flat_map(|d| {
            let notes = d.notes;
            let dir = d.path;
            notes.into_iter().map(move |n| NoteFile {
                path: join(&dir, &n.name),
                size: n.size,
                mtime_ns: n.stamp.mtime_ns,
                ctime_ns: n.stamp.ctime_ns,
            })
        })
        .collect();
    notes.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    notes
}

/// Walks the tree at `start` (a vault-relative directory, empty for the whole vault) and
/// returns every directory in it, sorted by path, so a parent comes before its children.
///
/// `start` itself is reached without following a symlink and must not pass through a skipped
/// directory; otherwise, or when it is gone, the walk finds nothing.
///
/// Directories are read by a few threads (the work is syscall-bound: one `openat`, `fstat` and
/// `getdents` per directory, one `fstatat` per note), taking the most recently found directory
/// first, so the walk stays depth-first and only directories with unvisited children hold a
/// descriptor open.
pub(crate) fn walk_dirs(vault_root: &Path, start: &str) -> Vec<DirScan> {
    let fd = match open_rel(vault_root, start) {
        Opened::Dir(fd) => fd,
        Opened::Unlisted(scan) => return vec![scan],
        Opened::Gone => return Vec::new(),
    };
    let (first, jobs) = scan_dir(fd, start);
    let mut dirs = vec![first];
    let queue = Queue::new(jobs);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_WORKERS));
    if workers <= 1 {
        dirs.extend(queue.work());
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers).map(|_| scope.spawn(|| queue.work())).collect();
            for handle in handles {
                match handle.join() {
                    Ok(found) => dirs.extend(found),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
        });
    }
    dirs.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    dirs
}

/// Lists one directory (not its subdirectories); `None` when it is gone, is no longer a
/// directory, or is reached through a symlink or a skipped directory.
pub(crate) fn scan_one(vault_root: &Path, dir: &str) -> Option<DirScan> {
    match open_rel(vault_root, dir) {
        Opened::Dir(fd) => Some(scan_dir(fd, dir).0),
        Opened::Unlisted(scan) => Some(scan),
        Opened::Gone => None,
    }
}

/// Whether the walk enters a directory of this vault-relative path: no component is skipped,
/// empty, `.` or `..`.
pub(crate) fn is_walked_dir(rel: &str) -> bool {
    rel.is_empty()
        || rel
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != ".." && !SKIPPED_DIRS.contains(&c))
}

/// A directory reached by a vault-relative path.
enum Opened {
    Dir(OwnedFd),
    /// It exists but cannot be opened: its scan, stamp only.
    Unlisted(DirScan),
    Gone,
}

/// Opens the vault root (which may itself be a symlink), then each component of `rel` without
/// following symlinks.
fn open_rel(vault_root: &Path, rel: &str) -> Opened {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let Ok(mut fd) = rfs::openat(CWD, vault_root, flags, Mode::empty()) else {
        return Opened::Gone;
    };
    if rel.is_empty() {
        return Opened::Dir(fd);
    }
    if !is_walked_dir(rel) {
        return Opened::Gone;
    }
    let mut parts = rel.split('/').peekable();
    while let Some(part) = parts.next() {
        match rfs::openat(&fd, part, flags | OFlags::NOFOLLOW, Mode::empty()) {
            Ok(next) => fd = next,
            Err(Errno::ACCESS) if parts.peek().is_none() => {
                return match unlisted(fd.as_fd(), part, rel) {
                    Some(scan) => Opened::Unlisted(scan),
                    None => Opened::Gone,
                };
            }
            Err(_) => return Opened::Gone,
        }
    }
    Opened::Dir(fd)
}

/// The scan of a directory that exists but cannot be opened; `None` unless it is a directory.
fn unlisted(parent: BorrowedFd<'_>, name: impl rustix::path::Arg, path: &str) -> Option<DirScan> {
    let st = rfs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
    (FileType::from_raw_mode(st.st_mode) == FileType::Directory).then(|| DirScan {
        path: path.to_string(),
        stamp: stamp_of(&st),
        listed: false,
        notes: Vec::new(),
        subdirs: Vec::new(),
    })
}

/// More threads than this do not pay for themselves on a vault-sized tree.
const MAX_WORKERS: usize = 4;

/// A directory found but not yet opened.
struct Job {
    /// The open parent directory; shared by its children until each is opened.
    parent: Arc<Dir>,
    name: CString,
    /// The directory's vault-relative path.
    path: String,
}

/// The walk's shared stack of directories.
struct Queue {
    state: Mutex<QueueState>,
    changed: Condvar,
}

struct QueueState {
    jobs: Vec<Job>,
    /// Jobs queued or being worked on; the walk is over when it reaches zero.
    pending: usize,
    /// Workers waiting for a job (waking nobody costs a futex call per directory).
    idle: usize,
}

impl Queue {
    fn new(jobs: Vec<Job>) -> Self {
        let pending = jobs.len();
        let state = Mutex::new(QueueState {
            jobs,
            pending,
            idle: 0,
        });
        Queue {
            state,
            changed: Condvar::new(),
        }
    }

    /// Runs jobs until none are left anywhere; returns the directories scanned.
    fn work(&self) -> Vec<DirScan> {
        let mut dirs = Vec::new();
        while let Some(job) = self.next_job() {
            let mut running = Running {
                queue: self,
                children: Vec::new(),
            };
            if let Some((scan, children)) = open_job(job) {
                dirs.push(scan);
                running.children = children;
            }
        }
        dirs
    }

    fn next_job(&self) -> Option<Job> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(job) = state.jobs.pop() {
                return Some(job);
            }
            if state.pending == 0 {
                return None;
            }
            state.idle += 1;
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
            state.idle -= 1;
        }
    }

    fn finish_job(&self, children: Vec<Job>) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.pending = state.pending + children.len() - 1;
        state.jobs.extend(children);
        if state.idle > 0 && (!state.jobs.is_empty() || state.pending == 0) {
            self.changed.notify_all();
        }
    }
}

/// A job being worked on; dropping it reports the job finished, even when a
/// panic unwinds through it, so the other workers never wait forever.
struct Running<'q> {
    queue: &'q Queue,
    children: Vec<Job>,
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.queue.finish_job(std::mem::take(&mut self.children));
    }
}

/// Opens a job's directory (never through a symlink) and scans it; a directory that cannot
/// be opened for lack of permission is reported unlisted, one that vanished not at all.
fn open_job(job: Job) -> Option<(DirScan, Vec<Job>)> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let parent = job.parent.fd().ok()?;
    match rfs::openat(parent, job.name.as_c_str(), flags, Mode::empty()) {
        Ok(fd) => Some(scan_dir(fd, &job.path)),
        Err(Errno::ACCESS) => Some((
            unlisted(parent, job.name.as_c_str(), &job.path)?,
            Vec::new(),
        )),
        Err(_) => None,
    }
}

/// Reads one directory: its stamp (taken first, so an entry added while it is read moves the
/// stamp past the one recorded), its notes with their stats, and its subdirectories as jobs.
fn scan_dir(fd: OwnedFd, path: &str) -> (DirScan, Vec<Job>) {
    let mut scan = DirScan {
        path: path.to_string(),
        stamp: rfs::fstat(&fd).map(|st| stamp_of(&st)).unwrap_or_default(),
        listed: true,
        notes: Vec::new(),
        subdirs: Vec::new(),
    };
    let Ok(mut dir) = Dir::new(fd) else {
        scan.listed = false;
        return (scan, Vec::new());
    };
    let mut subdirs = Vec::new();
    // A read error ends this directory's listing; what was read is kept. The
    // entries are stat'ed relative to the directory's own descriptor, which
    // leaves its read offset alone.
    while let Some(Ok(entry)) = dir.read() {
        let (Ok(dir_fd), Some(name)) = (dir.fd(), utf8_name(entry.file_name())) else {
            continue;
        };
        let file_type = match entry.file_type() {
            FileType::Unknown => match rfs::statat(dir_fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => FileType::from_raw_mode(st.st_mode),
                Err(_) => continue,
            },
            known => known,
        };
        if file_type == FileType::Directory && !SKIPPED_DIRS.contains(&name) {
            subdirs.push((entry.file_name().to_owned(), name.to_string()));
        } else if file_type == FileType::RegularFile && is_markdown_name(name) {
            scan.notes.extend(stat_note(dir_fd, name));
        }
    }
    scan.notes.sort_unstable_by(|a, b| a.name.cmp(&b.name));
    subdirs.sort_unstable_by(|a, b| a.1.cmp(&b.1));
    scan.subdirs = subdirs.iter().map(|(_, name)| name.clone()).collect();
    let parent = Arc::new(dir);
    let jobs = subdirs.into_iter().map(|(name, utf8)| Job {
        parent: Arc::clone(&parent),
        name,
        path: join(path, &utf8),
    });
    (scan, jobs.collect())
}

/// Stats a candidate note; `None` when it vanished or is no longer a regular file.
fn stat_note(dir_fd: BorrowedFd<'_>, name: &str) -> Option<Listed> {
    let st = rfs::statat(dir_fd, name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return None;
    }
    Some(Listed {
        name: name.to_string(),
        size: stat_size(&st),
        stamp: stamp_of(&st),
    })
}

/// The entry's name as UTF-8, or `None` for `.`, `..` and non-UTF-8 names.
fn utf8_name(name: &CStr) -> Option<&str> {
    let name = name.to_str().ok()?;
    (name != "." && name != "..").then_some(name)
}

/// Whether the lowercased name ends in `.md`.
pub(crate) fn is_markdown_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    bytes.len() >= 3 && bytes[bytes.len() - 3..].eq_ignore_ascii_case(b".md")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
    use std::time::Instant;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(path, text).expect("write");
    }

    fn paths(root: &Path) -> Vec<String> {
        walk_notes(root).into_iter().map(|n| n.path).collect()
    }

    #[test]
    fn finds_nested_notes_sorted_by_byte_order() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path();
        for rel in [
            "b.md", "a/z.md", "a/b/c.md", "B.md", "a.md", "é.md", "a-b.md",
        ] {
            write(root, rel, "x");
        }
        assert_eq!(
            paths(root),
            ["B.md", "a-b.md", "a.md", "a/b/c.md", "a/z.md", "b.md", "é.md"]
        );
    }

    #[test]
    fn every_directory_of_a_wide_deep_tree_is_visited() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut expected = Vec::new();
        for i in 0..40 {
            let dir = format!("w{i}/{}", "d/".repeat(i % 7));
            for j in 0..3 {
                let rel = format!("{dir}n{j}.md");
                write(tmp.path(), &rel, "x");
                expected.push(rel);
            }
        }
        expected.sort();
        for _ in 0..5 {
            assert_eq!(paths(tmp.path()), expected);
        }
    }

    #[test]
    fn only_markdown_names_case_insensitively() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path();
        for rel in [
            "one.MD",
            "two.Md",
            "three.md",
            "four.txt",
            "five.mdx",
            "six.md.bak",
            ".md",
        ] {
            write(root, rel, "x");
        }
        assert_eq!(paths(root), [".md", "one.MD", "three.md", "two.Md"]);
    }

    #[test]
    fn skipped_dirs_at_any_depth() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path();
        for skipped in SKIPPED_DIRS {
            write(root, &format!("{skipped}/top.md"), "x");
            write(root, &format!("deep/er/{skipped}/inner.md"), "x");
        }
        write(root, "deep/er/kept.md", "x");
        write(root, "git/kept.md", "x");
        write(root, "deep/.gitx/kept.md", "x");
        assert_eq!(
            paths(root),
            ["deep/.gitx/kept.md", "deep/er/kept.md", "git/kept.md"]
        );
    }

    #[test]
    fn symlinks_are_not_followed() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        let root = tmp.path();
        write(root, "real/note.md", "x");
        write(outside.path(), "secret.md", "x");
        symlink(root.join("real/note.md"), root.join("link.md")).expect("symlink");
        symlink(root.join("real"), root.join("linkdir")).expect("symlink");
        symlink(outside.path(), root.join("out")).expect("symlink");
        symlink(root.join("missing.md"), root.join("dangling.md")).expect("symlink");
        assert_eq!(paths(root), ["real/note.md"]);
    }

    #[test]
    fn symlinked_vault_root_is_followed() {
        let tmp = tempfile::tempdir().expect("tempdir");
        write(tmp.path(), "vault/n.md", "x");
        symlink(tmp.path().join("vault"), tmp.path().join("alias")).expect("symlink");
        assert_eq!(paths(&tmp.path().join("alias")), ["n.md"]);
    }

    #[test]
    fn non_regular_files_are_ignored() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path();
        write(root, "ok.md", "x");
        crate::fsx::testing::fifo(&root.join("fifo.md"));
        fs::create_dir(root.join("folder.md")).expect("mkdir");
        assert_eq!(paths(root), ["ok.md"]);
    }

    #[test]
    fn size_and_mtime_match_lstat() {
        let tmp = tempfile::tempdir().expect("tempdir");
        write(tmp.path(), "n.md", "hello world");
        let meta = fs::symlink_metadata(tmp.path().join("n.md")).expect("stat");
        let notes = walk_notes(tmp.path());
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].size, 11);
        assert_eq!(
            notes[0].mtime_ns,
            meta.mtime() * 1_000_000_000 + meta.mtime_nsec()
        );
        assert_eq!(
            notes[0].ctime_ns,
            meta.ctime() * 1_000_000_000 + meta.ctime_nsec()
        );
    }

    fn stamp(path: &Path) -> Stamp {
        let m = fs::symlink_metadata(path).expect("stat");
        Stamp {
            mtime_ns: m.mtime() * 1_000_000_000 + m.mtime_nsec(),
            ctime_ns: m.ctime() * 1_000_000_000 + m.ctime_nsec(),
        }
    }

    #[test]
    fn directories_come_with_their_stamps_notes_and_subdirectories() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path();
        write(root, "top.md", "x");
        write(root, "a/b/deep.md", "xy");
        write(root, "a/one.md", "x");
        write(root, "a/skip.txt", "x");
        write(root, ".git/HEAD.md", "x");
        fs::create_dir_all(root.join("empty")).expect("mkdir");
        let dirs = walk_dirs(root, "");
        let paths: Vec<&str> = dirs.iter().map(|d| d.path.as_str()).collect();
        assert_eq!(paths, ["", "a", "a/b", "empty"]);
        assert_eq!(dirs[0].subdirs, ["a", "empty"]);
        assert_eq!(dirs[1].subdirs, ["b"]);
        assert_eq!(dirs[1].notes.len(), 1);
        assert_eq!(dirs[1].notes[0].name, "one.md");
        assert_eq!(dirs[2].notes[0].size, 2);
        assert_eq!(dirs[2].child("deep.md"), "a/b/deep.md");
        for d in &dirs {
            assert!(d.listed);
            assert_eq!(d.stamp, stamp(&root.join(&d.path)), "{}", d.path);
        }
        assert_eq!(walk_dirs(root, "a"), dirs[1..3].to_vec());
        assert_eq!(scan_one(root, "a"), Some(dirs[1].clone()));
        assert_eq!(scan_one(root, ""), Some(dirs[0].clone()));
    }

    #[test]
    fn a_start_through_a_symlink_a_skipped_or_a_missing_directory_finds_nothing() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path();
        write(root, "real/n.md", "x");
        write(root, ".obsidian/sub/n.md", "x");
        symlink(root.join("real"), root.join("link")).expect("symlink");
        for start in [
            "link",
            ".obsidian/sub",
            "gone",
            "real/n.md",
            "../x",
            "real/",
            "./real",
        ] {
            assert!(walk_dirs(root, start).is_empty(), "{start}");
            assert_eq!(scan_one(root, start), None, "{start}");
        }
        assert!(is_walked_dir("") && is_walked_dir("a/b c"));
        assert!(!is_walked_dir("a/.git") && !is_walked_dir("a//b") && !is_walked_dir(".."));
    }

    #[test]
    fn an_unreadable_directory_is_reported_unlisted_with_its_stamp() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path();
        write(root, "locked/in.md", "x");
        let locked = root.join("locked");
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).expect("chmod");
        let dirs = walk_dirs(root, "");
        let one = scan_one(root, "locked");
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).expect("chmod");
        if rustix::process::geteuid().is_root() {
            eprintln!("root ignores permission bits; skipping");
            return;
        }
        assert_eq!(dirs.len(), 2);
        assert!(!dirs[1].listed && dirs[1].notes.is_empty());
        assert_eq!(dirs[1].path, "locked");
        assert_eq!(one, Some(dirs[1].clone()));
    }

    #[test]
    fn missing_root_and_unreadable_dirs_are_skipped() {
        let tmp = tempfile::tempdir().expect("tempdir");
        assert!(walk_notes(&tmp.path().join("nope")).is_empty());
        write(tmp.path(), "a.md", "x");
        assert!(walk_notes(&tmp.path().join("a.md")).is_empty());
        write(tmp.path(), "locked/b.md", "x");
        let locked = tmp.path().join("locked");
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).expect("chmod");
        let found = paths(tmp.path());
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).expect("chmod");
        // Root ignores permission bits, so the locked directory may still be read.
        assert!(
            found == ["a.md"] || found == ["a.md", "locked/b.md"],
            "{found:?}"
        );
    }

    #[test]
    fn non_utf8_names_are_skipped() {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path();
        write(root, "ok.md", "x");
        let bad = OsStr::from_bytes(b"bad\xff.md");
        if fs::write(root.join(bad), "x").is_err() {
            eprintln!("filesystem rejects non-UTF-8 names; skipping");
            return;
        }
        fs::create_dir(root.join(OsStr::from_bytes(b"dir\xfe"))).expect("mkdir");
        fs::write(root.join(OsStr::from_bytes(b"dir\xfe/in.md")), "x").expect("write");
        assert_eq!(paths(root), ["ok.md"]);
    }

    /// Run with `cargo test --release --lib index::walk -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn timing_10k_notes_in_600_folders() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path();
        let mut folders = Vec::new();
        for i in 0..600 {
            let rel = format!("Top{}/Mid{}/Leaf{i}", i % 6, i % 60);
            fs::create_dir_all(root.join(&rel)).expect("mkdir");
            folders.push(rel);
        }
        for i in 0..10_000 {
            let rel = format!("{}/Note number {i}.md", folders[i % folders.len()]);
            fs::write(root.join(rel), "---\ntype: note\n---\nbody\n").expect("write");
        }
        fs::create_dir_all(root.join(".git/objects")).expect("mkdir");
        // Let writeback of the new files settle, so it does not compete with the walk.
        rustix::fs::sync();
        let mut best = u128::MAX;
        for _ in 0..20 {
            let start = Instant::now();
            let notes = walk_notes(root);
            best = best.min(start.elapsed().as_micros());
            assert_eq!(notes.len(), 10_000);
        }
        eprintln!("walk of 10,000 notes in 600 folders: best of 20 = {best} µs");
    }
}
