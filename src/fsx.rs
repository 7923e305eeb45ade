//! Symlink-safe file access relative to directory handles.
//!
//! Every write the tool makes below the vault root and in its state folder goes through [`Dir`]:
//! each path component is opened with `O_NOFOLLOW`, so a symlinked `_librarian/`, `sessions/`,
//! day file, `.git/rutter/` or state file is refused instead of written through, and a file with
//! more than one name (a hard link to a file elsewhere) is never appended to (DESIGN §2.2).
//! Durable writes (`fsync` of a file and of its folder) are the caller's to ask for.

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

/// Why a symlink-safe file operation failed.
#[derive(Debug, thiserror::Error)]
pub enum FsError {
    #[error("{0} is a symbolic link; refusing to follow it (put the real file or folder there)")]
    Symlink(PathBuf),
    #[error("{0} is not a regular file or directory of the expected kind")]
    WrongKind(PathBuf),
    #[error("{path} has {links} names (a hard link to another file); refusing to append to it")]
    HardLink { path: PathBuf, links: u64 },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// An open directory; children are opened relative to it without following symlinks.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

/// A file opened for appending, with its size and last byte at open time.
pub struct AppendFile {
    pub file: File,
    pub len: u64,
    pub ends_with_newline: bool,
    pub path: PathBuf,
}

impl Dir {
    /// Opens a directory by absolute path (the path itself may pass through symlinks; callers
    /// canonicalise the vault root first).
    pub fn open(path: &Path) -> Result<Dir, FsError> {
        let fd = rfs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| io_err(path, e))?;
        Ok(Dir {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// Opens (creating) a private folder of the tool, such as `.git/rutter` or a per-user state
    /// folder: its parent by path (created when missing), then the folder itself without
    /// following a symlink, so a symlinked state folder is refused, never written through.
    pub fn open_private(path: &Path) -> Result<Dir, FsError> {
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return Dir::open(path);
        };
        std::fs::create_dir_all(parent).map_err(|e| FsError::Io {
            path: parent.to_path_buf(),
            source: e,
        })?;
        let name = name.to_string_lossy();
        Dir::open(parent)?
            .open_dir(&name, true)?
            .ok_or_else(|| FsError::WrongKind(path.to_path_buf()))
    }

    /// Another handle on the same directory.
    pub fn try_clone(&self) -> Result<Dir, FsError> {
        Ok(Dir {
            fd: self.fd.try_clone().map_err(|e| FsError::Io {
                path: self.path.clone(),
                source: e,
            })?,
            path: self.path.clone(),
        })
    }

    /// A new open handle on this directory (its own open file description, so a `flock` on it
    /// excludes one taken through another handle, also in this process).
    pub fn reopen(&self) -> Result<OwnedFd, FsError> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        rfs::openat(&self.fd, ".", flags, Mode::empty()).map_err(|e| io_err(&self.path, e))
    }

    /// The directory's path (for messages).
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Opens (and with `create`, makes) a nested directory given as `a/b/c`, refusing symlinks
    /// at every component. `Ok(None)` when a component is missing and `create` is false.
    pub fn open_dir(&self, rel: &str, create: bool) -> Result<Option<Dir>, FsError> {
        let mut cur = self.try_clone()?;
        for name in rel.split('/').filter(|s| !s.is_empty()) {
            let path = cur.path.join(name);
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let fd = match rfs::openat(&cur.fd, name, flags, Mode::empty()) {
                Ok(fd) => fd,
                Err(rustix::io::Errno::NOENT) if create => {
                    match rfs::mkdirat(&cur.fd, name, Mode::from_raw_mode(0o755)) {
                        Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                        Err(e) => return Err(io_err(&path, e)),
                    }
                    rfs::openat(&cur.fd, name, flags, Mode::empty())
                        .map_err(|e| classify(&cur, name, &path, e))?
                }
                Err(rustix::io::Errno::NOENT) => return Ok(None),
                Err(e) => return Err(classify(&cur, name, &path, e)),
            };
            cur = Dir { fd, path };
        }
        Ok(Some(cur))
    }

    /// Moves `name` into the subfolder `folder` (created when missing, never through a
    /// symlink) under a name not taken there: `name`, else `name.2`, `name.3`, …. Returns the
    /// name it was given. What was refused is kept for the user to look at, never overwritten.
    pub fn set_aside(&self, name: &str, folder: &str) -> Result<String, FsError> {
        let into = self
            .open_dir(folder, true)?
            .ok_or_else(|| FsError::WrongKind(self.path.join(folder)))?;
        let mut target = name.to_string();
        let mut n = 1;
        while into.stat(&target).is_some() {
            n += 1;
            target = format!("{name}.{n}");
        }
        self.rename_to(name, &into, &target)?;
        Ok(target)
    }

    /// Opens `name` for appending (creating it), refusing a symlink or a non-regular file.
    pub fn open_append(&self, name: &str) -> Result<AppendFile, FsError> {
        self.open_append_with(name, OFlags::CREATE)?
            .ok_or_else(|| FsError::WrongKind(self.path.join(name)))
    }

    /// Opens `name` for appending if it exists (`Ok(None)` if not), refusing a symlink or a
    /// non-regular file.
    pub fn open_append_existing(&self, name: &str) -> Result<Option<AppendFile>, FsError> {
        self.open_append_with(name, OFlags::empty())
    }

    fn open_append_with(&self, name: &str, create: OFlags) -> Result<Option<AppendFile>, FsError> {
        let path = self.path.join(name);
        let flags = OFlags::RDWR
            | OFlags::APPEND
            | create
            | OFlags::NOFOLLOW
            | OFlags::CLOEXEC
            | OFlags::NONBLOCK;
        let fd = match rfs::openat(&self.fd, name, flags, Mode::from_raw_mode(0o644)) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) if create.is_empty() => return Ok(None),
            Err(e) => return Err(classify(self, name, &path, e)),
        };
        let st = rfs::fstat(&fd).map_err(|e| io_err(&path, e))?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(FsError::WrongKind(path));
        }
        // Another name for the same file may lie anywhere on the file system (a hard link
        // planted in the vault or `.git/`): appending would write outside the vault.
        if st.st_nlink > 1 {
            return Err(FsError::HardLink {
                path,
                links: st.st_nlink as u64,
            });
        }
        // The end is read under the file's own lock, which every appender of this crate holds
        // until it has written: a write that crosses a page boundary makes the file's size
        // visible page by page, so an end read beside it could be the middle of another
        // process's line, and this append would then begin with a newline it does not need (a
        // blank line the record grammar refuses).
        let len = match hold_for_append(&fd) {
            true => rfs::fstat(&fd).map_err(|e| io_err(&path, e))?.st_size as u64,
            false => st.st_size as u64,
        };
        let mut last = [0u8; 1];
        let ends_with_newline = len == 0
            || rustix::io::pread(&fd, &mut last, len - 1)
                .map(|n| n == 1 && last[0] == b'\n')
                .unwrap_or(false);
        Ok(Some(AppendFile {
            file: File::from(fd),
            len,
            ends_with_newline,
            path,
        }))
    }

    /// Publishes `name` holding `bytes` whole, only if it does not exist yet: written to a
    /// temporary file, then hard-linked into place, so no reader or concurrent writer ever sees
    /// it partly written. `Ok(false)` when `name` already existed.
    pub fn publish_new(&self, name: &str, bytes: &[u8]) -> Result<bool, FsError> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = format!(".{name}.new-{}-{n}", std::process::id());
        let path = self.path.join(name);
        self.write_atomic(&tmp, bytes)?;
        let linked = rfs::linkat(&self.fd, tmp.as_str(), &self.fd, name, AtFlags::empty());
        self.remove(&tmp)?;
        match linked {
            Ok(()) => Ok(true),
            Err(rustix::io::Errno::EXIST) => Ok(false),
            Err(e) => Err(io_err(&path, e)),
        }
    }

    /// Reads `name` whole without following a symlink; `Ok(None)` when it does not exist.
    pub fn read(&self, name: &str) -> Result<Option<Vec<u8>>, FsError> {
        let Some(mut file) = self.open_read(name)? else {
            return Ok(None);
        };
        let path = self.path.join(name);
        let size = file.metadata().map_or(0, |m| m.len() as usize);
        let mut buf = Vec::with_capacity(size);
        file.read_to_end(&mut buf)
            .map_err(|e| FsError::Io { path, source: e })?;
        Ok(Some(buf))
    }

    /// The bytes of the regular file `name` (never through a symlink) when it holds at most
    /// `max` bytes; `Ok(None)` when it does not exist or holds more (at most `max + 1` bytes are
    /// read, so a file that grows, or a device behind a swapped name, is never read to its end).
    pub fn read_at_most(&self, name: &str, max: u64) -> Result<Option<Vec<u8>>, FsError> {
        let Some(file) = self.open_read(name)? else {
            return Ok(None);
        };
        let mut buf = Vec::new();
        file.take(max.saturating_add(1))
            .read_to_end(&mut buf)
            .map_err(|e| FsError::Io {
                path: self.path.join(name),
                source: e,
            })?;
        Ok((buf.len() as u64 <= max).then_some(buf))
    }

    /// Opens the regular file `name` for reading without following a symlink; `Ok(None)` when
    /// it does not exist. The handle keeps reading the same file after it is renamed over.
    pub fn open_read(&self, name: &str) -> Result<Option<File>, FsError> {
        let path = self.path.join(name);
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
        let fd = match rfs::openat(&self.fd, name, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => return Ok(None),
            Err(e) => return Err(classify(self, name, &path, e)),
        };
        let st = rfs::fstat(&fd).map_err(|e| io_err(&path, e))?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(FsError::WrongKind(path));
        }
        Ok(Some(File::from(fd)))
    }

    /// `(size, mtime in ns, is regular file)` of `name` without following a symlink.
    pub(crate) fn stat(&self, name: &str) -> Option<(u64, i64, bool)> {
        let st = rfs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
        let regular = FileType::from_raw_mode(st.st_mode) == FileType::RegularFile;
        Some((
            st.st_size as u64,
            crate::clock::ns(st.st_mtime, st.st_mtime_nsec),
            regular,
        ))
    }

    /// Replaces `name` atomically: a temporary file in this directory, then `renameat`. The
    /// temporary name is unique per process and call (`O_EXCL`), and is removed if the write
    /// or the rename fails, so nothing is left behind.
    pub fn write_atomic(&self, name: &str, bytes: &[u8]) -> Result<(), FsError> {
        let tmp = self.write_temp(name, bytes)?;
        self.rename_temp(&tmp, name)
    }

    /// Replaces `name` atomically, as [`Dir::write_atomic`] does, and returns the new file opened
    /// for reading: the handle stays on the bytes this call wrote whatever is renamed over them
    /// later, so a caller can tell its own file from another writer's (by inode).
    pub fn write_atomic_open(&self, name: &str, bytes: &[u8]) -> Result<File, FsError> {
        let tmp = self.write_temp(name, bytes)?;
        let file = match self.open_read(&tmp) {
            Ok(Some(file)) => file,
            other => {
                let _ = rfs::unlinkat(&self.fd, tmp.as_str(), AtFlags::empty());
                return Err(other
                    .err()
                    .unwrap_or_else(|| FsError::WrongKind(self.path.join(name))));
            }
        };
        self.rename_temp(&tmp, name)?;
        Ok(file)
    }

    /// Replaces the cache file `name` atomically, as [`Dir::write_atomic`] does, without asking
    /// the file system to write the new bytes out at once. ext4 writes a file's delayed blocks
    /// out when it is renamed over another (`auto_da_alloc`, so that a crash leaves old or new
    /// bytes rather than an empty file), most of the two cache writes of a capture
    /// (docs/performance.md). On Linux the temporary file and an existing regular `name` trade
    /// places instead (`renameat2` with `RENAME_EXCHANGE`, a fraction of that) and the old
    /// bytes, now under the temporary name, are removed; elsewhere, or where the file system
    /// cannot exchange, it is a plain rename. Only for files whose readers check them and
    /// rebuild them when a crash leaves them empty or torn (the dedupe cache).
    pub fn replace_cache(&self, name: &str, bytes: &[u8]) -> Result<(), FsError> {
        let tmp = self.write_temp(name, bytes)?;
        #[cfg(target_os = "linux")]
        if self.stat(name).is_some_and(|(_, _, regular)| regular)
            && rfs::renameat_with(
                &self.fd,
                tmp.as_str(),
                &self.fd,
                name,
                rfs::RenameFlags::EXCHANGE,
            )
            .is_ok()
        {
            let _ = rfs::unlinkat(&self.fd, tmp.as_str(), AtFlags::empty());
            return Ok(());
        }
        self.rename_temp(&tmp, name)
    }

    /// Writes `bytes` to a new temporary file for `name` (unique per process and call,
    /// `O_EXCL`) and returns its name; nothing is left behind when the write fails.
    fn write_temp(&self, name: &str, bytes: &[u8]) -> Result<String, FsError> {
        static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = format!(".{name}.tmp-{}-{n}", std::process::id());
        let path = self.path.join(name);
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rfs::openat(&self.fd, tmp.as_str(), flags, Mode::from_raw_mode(0o644))
            .map_err(|e| io_err(&path, e))?;
        let written = File::from(fd).write_all(bytes);
        if let Err(e) = written {
            let _ = rfs::unlinkat(&self.fd, tmp.as_str(), AtFlags::empty());
            return Err(FsError::Io { path, source: e });
        }
        Ok(tmp)
    }

    /// Renames the temporary file `tmp` over `name`, removing it if the rename fails.
    fn rename_temp(&self, tmp: &str, name: &str) -> Result<(), FsError> {
        let renamed = rfs::renameat(&self.fd, tmp, &self.fd, name);
        renamed.map_err(|e| {
            let _ = rfs::unlinkat(&self.fd, tmp, AtFlags::empty());
            io_err(&self.path.join(name), e)
        })
    }

    /// `fsync`s the regular file `name` (never through a symlink).
    pub fn sync_file(&self, name: &str) -> Result<(), FsError> {
        let path = self.path.join(name);
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
        let fd = rfs::openat(&self.fd, name, flags, Mode::empty()).map_err(|e| io_err(&path, e))?;
        rfs::fsync(&fd).map_err(|e| io_err(&path, e))
    }

    /// `fsync`s the folder itself, so names created or removed in it survive a power loss.
    pub fn sync(&self) -> Result<(), FsError> {
        rfs::fsync(&self.fd).map_err(|e| io_err(&self.path, e))
    }

    /// Opens (creating, empty) the lock file `name` read-only, refusing a symlink or a
    /// non-regular file: `flock` needs no write access, so the file is never written.
    pub fn open_lock(&self, name: &str) -> Result<File, FsError> {
        let path = self.path.join(name);
        let flags =
            OFlags::RDONLY | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
        let fd = rfs::openat(&self.fd, name, flags, Mode::from_raw_mode(0o644))
            .map_err(|e| classify(self, name, &path, e))?;
        let st = rfs::fstat(&fd).map_err(|e| io_err(&path, e))?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(FsError::WrongKind(path));
        }
        Ok(File::from(fd))
    }

    /// Moves the entry `name` of this folder to `to_name` in `to` (never following a symlink:
    /// `renameat` moves the link itself).
    pub fn rename_to(&self, name: &str, to: &Dir, to_name: &str) -> Result<(), FsError> {
        rfs::renameat(&self.fd, name, &to.fd, to_name).map_err(|e| io_err(&self.path.join(name), e))
    }

    /// Removes the temporary files a killed writer left behind (`.<name>.tmp-…` from
    /// [`Dir::write_atomic`], `.<name>.new-…` from [`Dir::publish_new`]) once they are older
    /// than `age`, so a writer still at work keeps its own. Returns how many were removed.
    pub(crate) fn sweep_temps(&self, age: std::time::Duration) -> usize {
        let now = std::time::SystemTime::now();
        let stale = |name: &str| {
            let Ok(st) = rfs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) else {
                return false;
            };
            let mtime = std::time::UNIX_EPOCH
                + std::time::Duration::new(st.st_mtime.max(0) as u64, st.st_mtime_nsec as u32);
            now.duration_since(mtime).is_ok_and(|d| d >= age)
        };
        self.list()
            .unwrap_or_default()
            .into_iter()
            .filter(|n| is_temp_name(n) && stale(n))
            .filter(|n| self.remove(n).is_ok())
            .count()
    }

    /// Creates `name` with `bytes` only if it does not exist yet (`O_EXCL`); `Ok(false)` if it did.
    pub fn create_new(&self, name: &str, bytes: &[u8]) -> Result<bool, FsError> {
        let path = self.path.join(name);
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        match rfs::openat(&self.fd, name, flags, Mode::from_raw_mode(0o644)) {
            Ok(fd) => {
                File::from(fd)
                    .write_all(bytes)
                    .map_err(|e| FsError::Io { path, source: e })?;
                Ok(true)
            }
            Err(rustix::io::Errno::EXIST) => Ok(false),
            Err(e) => Err(io_err(&path, e)),
        }
    }

    /// Removes the file `name`; a missing file is not an error.
    pub fn remove(&self, name: &str) -> Result<(), FsError> {
        match rfs::unlinkat(&self.fd, name, AtFlags::empty()) {
            Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
            Err(e) => Err(io_err(&self.path.join(name), e)),
        }
    }

    /// Removes the empty folder `name` (never through a symlink); a missing one is not an error.
    pub fn remove_dir(&self, name: &str) -> Result<(), FsError> {
        match rfs::unlinkat(&self.fd, name, AtFlags::REMOVEDIR) {
            Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
            Err(e) => Err(io_err(&self.path.join(name), e)),
        }
    }

    /// The names of the directory's entries (excluding `.` and `..`), unsorted, read through
    /// the descriptor this `Dir` holds (never by path, which a swapped symlink could redirect);
    /// names that are not UTF-8 are left out.
    pub fn list(&self) -> Result<Vec<String>, FsError> {
        let err = |e| io_err(&self.path, e);
        let fd = rfs::openat(
            &self.fd,
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(err)?;
        let mut dir = rfs::Dir::read_from(&fd).map_err(err)?;
        let mut names = Vec::new();
        while let Some(entry) = dir.read() {
            let entry = entry.map_err(err)?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            if let Ok(name) = std::str::from_utf8(name) {
                names.push(name.to_string());
            }
        }
        Ok(names)
    }

    /// Borrowed descriptor, for locks.
    pub(crate) fn fd(&self) -> impl AsFd + '_ {
        self.fd.as_fd()
    }
}

/// How long an append waits for another appender of the same file to finish its write.
const APPEND_LOCK_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// Takes the `flock` of a file opened for appending, polling for at most [`APPEND_LOCK_WAIT`]
/// (another appender holds it only while it writes one line). Whether it was taken: a file
/// another program keeps locked is appended to as before, after the wait. Released when the
/// file is closed.
fn hold_for_append(fd: &OwnedFd) -> bool {
    use rustix::fs::{flock, FlockOperation};
    let deadline = std::time::Instant::now() + APPEND_LOCK_WAIT;
    let mut pause = std::time::Duration::from_micros(200);
    loop {
        match flock(fd, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return true,
            Err(rustix::io::Errno::WOULDBLOCK) | Err(rustix::io::Errno::INTR) => {}
            Err(_) => return false,
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(std::time::Duration::from_millis(10));
    }
}

/// Whether `name` is a temporary file of [`Dir::write_atomic`] or [`Dir::publish_new`]:
/// `.<name>.tmp-<pid>-<n>` or `.<name>.new-<pid>-<n>`.
pub(crate) fn is_temp_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix('.') else {
        return false;
    };
    [".tmp-", ".new-"].iter().any(|mark| {
        rest.rsplit_once(mark).is_some_and(|(_, tail)| {
            tail.split_once('-').is_some_and(|(pid, n)| {
                !pid.is_empty()
                    && !n.is_empty()
                    && pid.bytes().all(|b| b.is_ascii_digit())
                    && n.bytes().all(|b| b.is_ascii_digit())
            })
        })
    })
}

/// Maps an `openat` failure: a symlink at `name` is reported as [`FsError::Symlink`].
fn classify(dir: &Dir, name: &str, path: &Path, e: rustix::io::Errno) -> FsError {
    let is_link = rfs::statat(&dir.fd, name, AtFlags::SYMLINK_NOFOLLOW)
        .map(|st| FileType::from_raw_mode(st.st_mode) == FileType::Symlink)
        .unwrap_or(false);
    if is_link {
        FsError::Symlink(path.to_path_buf())
    } else if e == rustix::io::Errno::NOTDIR {
        FsError::WrongKind(path.to_path_buf())
    } else {
        io_err(path, e)
    }
}

fn io_err(path: &Path, e: rustix::io::Errno) -> FsError {
    FsError::Io {
        path: path.to_path_buf(),
        source: e.into(),
    }
}

/// When a file or directory last changed: its mtime, and its ctime, which every write, entry
/// added, removed or renamed, and mode change moves, and which no user call can set back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub mtime_ns: i64,
    pub ctime_ns: i64,
}

// The `Stat` field types differ between targets (i64, c_long, u32, u64), so
// the conversions go through i128, which every one of them widens into.

/// The size of a stat result.
pub(crate) fn stat_size(st: &rfs::Stat) -> u64 {
    u64::try_from(i128::from(st.st_size)).unwrap_or(0)
}

/// The mtime and ctime of a stat result.
pub(crate) fn stamp_of(st: &rfs::Stat) -> Stamp {
    Stamp {
        mtime_ns: crate::clock::ns(st.st_mtime, st.st_mtime_nsec),
        ctime_ns: crate::clock::ns(st.st_ctime, st.st_ctime_nsec),
    }
}

/// `~` alone or a `~/` prefix expands to `$HOME`; nothing else does.
pub(crate) fn expand_tilde(raw: &str) -> PathBuf {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    match (raw, home) {
        ("~", Some(h)) => h,
        (r, Some(h)) if r.starts_with("~/") => h.join(&r[2..]),
        (r, _) => PathBuf::from(r),
    }
}

/// `${XDG_STATE_HOME:-~/.local/state}/rutter/`: this user's state outside any vault (the run log
/// of runs that found no vault, the fallback aside folders); `None` when neither is known or
/// the base is not absolute.
pub(crate) fn user_state_dir() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()) {
        Some(v) => PathBuf::from(v),
        None => {
            std::env::var_os("HOME").filter(|h| !h.is_empty())?;
            expand_tilde("~/.local/state")
        }
    };
    base.is_absolute().then(|| base.join("rutter"))
}

/// What the tests of code that must never open a FIFO make one with.
#[cfg(test)]
pub(crate) mod testing {
    use std::path::Path;

    /// A FIFO at `path`, made by the POSIX `mkfifo` utility: rustix has no `mknodat` on macOS.
    pub(crate) fn fifo(path: &Path) {
        let made = std::process::Command::new("mkfifo")
            .args(["-m", "600"])
            .arg(path)
            .status()
            .expect("run mkfifo");
        assert!(made.success(), "mkfifo {}", path.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// An append opened while another appender is half way through its line (its write made
    /// visible page by page, as the kernel shows a write that crosses a page boundary) sees the
    /// end the other append leaves, not its middle: no needless newline, no blank line.
    #[test]
    fn an_append_reads_the_end_another_appender_leaves_not_its_middle() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("day.md"), "head\n").unwrap();
        let dir = Dir::open(t.path()).unwrap();
        let mut other = dir.open_append_existing("day.md").unwrap().unwrap();
        assert!(other.ends_with_newline);
        other.file.write_all(b"first half of a line").unwrap();
        let finisher = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            other.file.write_all(b", and its end\n").unwrap();
        });
        let this = dir.open_append_existing("day.md").unwrap().unwrap();
        finisher.join().unwrap();
        assert!(this.ends_with_newline, "read the other line's middle");
        assert_eq!(
            this.len,
            "head\nfirst half of a line, and its end\n".len() as u64
        );
    }

    #[test]
    fn an_append_waits_a_bounded_time_for_a_lock_another_program_keeps() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("day.md"), "head\n").unwrap();
        let dir = Dir::open(t.path()).unwrap();
        let keeper = std::fs::File::open(t.path().join("day.md")).unwrap();
        rustix::fs::flock(&keeper, rustix::fs::FlockOperation::LockExclusive).unwrap();
        let started = std::time::Instant::now();
        let this = dir.open_append_existing("day.md").unwrap().unwrap();
        assert!(started.elapsed() >= APPEND_LOCK_WAIT);
        assert!(this.ends_with_newline);
        drop(keeper);
    }

    #[test]
    fn list_reads_the_directory_it_holds_even_after_its_path_is_swapped() {
        let t = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("elsewhere.md"), "x").unwrap();
        let real = t.path().join("sessions");
        std::fs::create_dir(&real).unwrap();
        std::fs::write(real.join("2026-11-30.md"), "x").unwrap();
        let dir = Dir::open(&real).unwrap();
        std::fs::rename(&real, t.path().join("moved")).unwrap();
        symlink(outside.path(), &real).unwrap();
        assert_eq!(dir.list().unwrap(), vec!["2026-11-30.md".to_string()]);
    }

    /// Runs `write(dir, i)` on eight threads at once, `i` in 0..8; each must succeed.
    fn from_threads(
        dir: &std::sync::Arc<Dir>,
        write: impl Fn(&Dir, usize) -> Result<(), FsError> + Copy + Send + 'static,
    ) {
        let writers: Vec<_> = (0..8)
            .map(|i| {
                let dir = dir.clone();
                std::thread::spawn(move || write(&dir, i))
            })
            .collect();
        for w in writers {
            w.join().unwrap().unwrap();
        }
    }

    #[test]
    fn write_atomic_is_safe_across_threads_and_leaves_nothing_behind() {
        let t = tempfile::tempdir().unwrap();
        let dir = std::sync::Arc::new(Dir::open(t.path()).unwrap());
        from_threads(&dir, |d, i| {
            d.write_atomic("state", format!("{i}").as_bytes())
        });
        std::fs::create_dir(t.path().join("taken")).unwrap();
        assert!(
            dir.write_atomic("taken", b"x").is_err(),
            "a directory is not replaced"
        );
        let mut names = dir.list().unwrap();
        names.sort();
        assert_eq!(
            names,
            vec!["state".to_string(), "taken".to_string()],
            "no temp file left"
        );
    }

    #[test]
    fn replace_cache_swaps_whole_files_and_leaves_nothing_behind() {
        let t = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let dir = std::sync::Arc::new(Dir::open(t.path()).unwrap());
        dir.replace_cache("state", b"first").unwrap();
        let body = |i: usize| format!("writer {i} ").repeat(1000);
        from_threads(&dir, move |d, i| {
            d.replace_cache("state", body(i).as_bytes())
        });
        let now = std::fs::read_to_string(t.path().join("state")).unwrap();
        assert!((0..8).any(|i| now == body(i)), "one writer's bytes, whole");
        let target = outside.path().join("target");
        std::fs::write(&target, "theirs").unwrap();
        symlink(&target, t.path().join("linked")).unwrap();
        dir.replace_cache("linked", b"ours").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "theirs");
        assert!(std::fs::symlink_metadata(t.path().join("linked"))
            .unwrap()
            .is_file());
        std::fs::create_dir(t.path().join("taken")).unwrap();
        assert!(
            dir.replace_cache("taken", b"x").is_err(),
            "a directory stays"
        );
        let mut names = dir.list().unwrap();
        names.sort();
        assert_eq!(names, ["linked", "state", "taken"], "no temp file left");
    }

    #[test]
    fn refuses_symlinked_dirs_and_files() {
        let t = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        symlink(outside.path(), t.path().join("_librarian")).unwrap();
        let root = Dir::open(t.path()).unwrap();
        assert!(matches!(
            root.open_dir("_librarian/sessions", true),
            Err(FsError::Symlink(_))
        ));
        std::fs::create_dir(t.path().join("real")).unwrap();
        symlink(outside.path().join("f"), t.path().join("real/day.md")).unwrap();
        let real = root.open_dir("real", false).unwrap().unwrap();
        assert!(matches!(
            real.open_append("day.md"),
            Err(FsError::Symlink(_))
        ));
        assert!(!outside.path().join("f").exists());
    }

    #[test]
    fn a_file_with_a_second_name_is_never_appended_to() {
        let t = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim");
        std::fs::write(&victim, "keep\n").unwrap();
        std::fs::hard_link(&victim, t.path().join("day.md")).unwrap();
        let d = Dir::open(t.path()).unwrap();
        assert!(matches!(
            d.open_append("day.md"),
            Err(FsError::HardLink { links: 2, .. })
        ));
        assert!(matches!(
            d.open_append_existing("day.md"),
            Err(FsError::HardLink { .. })
        ));
        // Replacing it whole unlinks this name only: the other file keeps its bytes.
        d.write_atomic("day.md", b"new\n").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep\n");
    }

    #[test]
    fn a_private_folder_that_is_a_symlink_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let state = t.path().join("git/rutter");
        assert!(
            Dir::open_private(&state).is_ok(),
            "created with its parents"
        );
        std::fs::remove_dir(&state).unwrap();
        symlink(outside.path(), &state).unwrap();
        assert!(matches!(
            Dir::open_private(&state),
            Err(FsError::Symlink(_))
        ));
        let lock = Dir::open(t.path()).unwrap();
        symlink(outside.path().join("l"), t.path().join("lock")).unwrap();
        assert!(lock.open_lock("lock").is_err());
        assert!(
            !outside.path().join("l").exists(),
            "not created through the link"
        );
    }

    #[test]
    fn stale_temp_files_are_swept_and_fresh_ones_kept() {
        let t = tempfile::tempdir().unwrap();
        let d = Dir::open(t.path()).unwrap();
        for name in [
            ".a.json.tmp-12-0",
            ".b.md.new-7-3",
            "c.json",
            ".d.tmp-x-1",
            ".e",
        ] {
            std::fs::write(t.path().join(name), "x").unwrap();
        }
        assert_eq!(
            d.sweep_temps(std::time::Duration::from_secs(3600)),
            0,
            "all fresh"
        );
        assert_eq!(d.sweep_temps(std::time::Duration::ZERO), 2);
        let mut left = d.list().unwrap();
        left.sort();
        assert_eq!(left, [".d.tmp-x-1", ".e", "c.json"]);
    }

    proptest::proptest! {
        /// Only names of the two temp-file shapes are taken for temp files.
        #[test]
        fn temp_names_are_recognised_exactly(name in "\\PC{0,30}", pid in 0u32..99999, n in 0u64..99) {
            let tmp = format!(".{name}.tmp-{pid}-{n}");
            let new = format!(".{name}.new-{pid}-{n}");
            proptest::prop_assert!(is_temp_name(&tmp));
            proptest::prop_assert!(is_temp_name(&new));
            if !name.starts_with('.') {
                proptest::prop_assert!(!is_temp_name(&name));
            }
        }
    }

    #[test]
    fn append_reports_length_and_tail() {
        let t = tempfile::tempdir().unwrap();
        let root = Dir::open(t.path()).unwrap();
        let d = root.open_dir("a/b", true).unwrap().unwrap();
        let mut f = d.open_append("x").unwrap();
        assert_eq!((f.len, f.ends_with_newline), (0, true));
        f.file.write_all(b"abc").unwrap();
        let f = d.open_append("x").unwrap();
        assert_eq!((f.len, f.ends_with_newline), (3, false));
        assert_eq!(d.read("x").unwrap().unwrap(), b"abc");
        assert_eq!(d.read("missing").unwrap(), None);
        assert!(d.open_append_existing("missing").unwrap().is_none());
        assert!(!d.list().unwrap().contains(&"missing".to_string()));
        assert_eq!(d.open_append_existing("x").unwrap().unwrap().len, 3);
    }

    #[test]
    fn publish_new_writes_once_and_whole() {
        let t = tempfile::tempdir().unwrap();
        let d = Dir::open(t.path()).unwrap();
        assert!(d.publish_new("day.md", b"header\n").unwrap());
        assert!(!d.publish_new("day.md", b"other header\n").unwrap());
        assert_eq!(d.read("day.md").unwrap().unwrap(), b"header\n");
        assert_eq!(d.list().unwrap(), ["day.md"], "no temporary file is left");
        // Racing publishers: exactly one wins, and the file holds one whole header.
        let winners: usize = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|i| {
                    let d = Dir::open(t.path()).unwrap();
                    s.spawn(move || d.publish_new("race.md", format!("h{i}\n").as_bytes()))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| usize::from(h.join().unwrap().unwrap()))
                .sum()
        });
        assert_eq!(winners, 1);
        let text = d.read("race.md").unwrap().unwrap();
        assert_eq!(text.len(), 3, "{text:?}");
    }
}
