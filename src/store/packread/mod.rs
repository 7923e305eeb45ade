//! Reading objects straight from the repository's packs, for a walk over a whole history
//! (`verify --full`; docs/performance.md, "Stop 54").
//!
//! Through libgit2 every object read pays costs of its own that a long walk pays hundreds of
//! thousands of times: a lookup in the pack's index under a lock that every repository handle
//! of the process shares (so two threads walking wait for each other), a zlib stream set up and
//! torn down, and a delta base cache that keeps a chain's base but not the versions made from
//! it. Here each thread has a [`PackReader`] of its own over one [`Packs`]: the indexes are read
//! once and searched without a lock, entries are inflated by libdeflate from windows of the
//! pack read [`WINDOW`] bytes at a time, and the objects made are kept (up to [`CACHE_BYTES`])
//! as the bases the next versions of the same file or tree are deltas on. Commits are read
//! here too, and their headers by [`commit::head`] when they have git's exact shape.
//!
//! It changes how fast objects are read, never what is read: an object it does not find (a
//! loose one, one in an alternate object store), an index other than version 2, and any entry
//! that does not read, inflate or apply exactly are left to libgit2 (`None`), which then reads
//! them, or reports them broken, as it always has. Like libgit2 as the store opens it
//! (`strict_hash_verification(false)`), it does not hash what it reads.

mod chain;
pub(crate) mod commit;
mod delta;
mod index;

use crate::objectid::{ObjectId, LEN};
use index::Index;
use libdeflater::Decompressor;
use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The most bytes of objects one reader keeps for the next read.
const CACHE_BYTES: usize = 4 << 20;
/// An object larger than this is not kept (nor read here: libgit2 streams nothing either, but
/// a record walk never needs one).
const MAX_OBJECT: u64 = 64 << 20;
/// The longest delta chain followed (git writes at most 4,095; a longer one is a loop of
/// reference deltas). The deltas of one chain held at once are also at most [`MAX_OBJECT`].
const MAX_CHAIN: usize = 10_000;

/// The type of an object as a pack entry names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Commit,
    Tree,
    Blob,
    Tag,
}

impl Kind {
    fn from_entry(kind: u8) -> Option<Kind> {
        Some(match kind {
            1 => Kind::Commit,
            2 => Kind::Tree,
            3 => Kind::Blob,
            4 => Kind::Tag,
            _ => return None,
        })
    }
}

/// The packs of one object directory with their indexes, shared by the readers of a walk.
pub(crate) struct Packs {
    packs: Vec<Pack>,
    /// How many objects the readers have read (for [`TRACE_ENV`]), added as each is dropped.
    served: AtomicUsize,
}

/// Set, `verify` says on stderr how many objects a long walk read from the packs itself.
pub(crate) const TRACE_ENV: &str = "RUTTER_PACKS_TRACE";

/// One pack: its file, its index, and where its entries end (before the trailing checksum).
struct Pack {
    file: File,
    index: Index,
    end: u64,
}

impl Packs {
    /// The packs under `objects/pack/` whose index is version 2 and holds together; the rest
    /// are left to libgit2. An unreadable folder is no packs.
    pub(crate) fn open(objects: &Path) -> Packs {
        let mut packs = Vec::new();
        if let Ok(dir) = std::fs::read_dir(objects.join("pack")) {
            for e in dir.flatten() {
                let path = e.path();
                if path.extension().is_some_and(|x| x == "idx") {
                    packs.extend(open_pack(&path));
                }
            }
        }
        Packs {
            packs,
            served: AtomicUsize::new(0),
        }
    }

    /// Says on stderr, when [`TRACE_ENV`] is set, how many objects were read here.
    pub(crate) fn trace(&self) {
        if std::env::var_os(TRACE_ENV).is_some() {
            let n = self.served.load(Ordering::Relaxed);
            eprintln!("git-rutter: packs: {n} objects read from the packs");
        }
    }

    /// The commits from the root to `tip`, oldest first, when they are one line of commits,
    /// each read from these packs or else by `elsewhere` (`chain`); `None` leaves the walk to
    /// libgit2.
    pub(crate) fn line_to(
        &self,
        tip: ObjectId,
        elsewhere: &mut dyn FnMut(ObjectId) -> Option<Vec<u8>>,
    ) -> Option<Vec<ObjectId>> {
        // git never stores a commit as a delta: a cache would only hold what is read once.
        let mut reader = self.reader();
        reader.cache.limit = 0;
        chain::line_to(&mut reader, tip, elsewhere)
    }

    /// A reader for one thread.
    pub(crate) fn reader(&self) -> PackReader<'_> {
        PackReader {
            packs: self,
            inflater: Decompressor::new(),
            cache: Cache::new(CACHE_BYTES),
            windows: Windows::default(),
            served: 0,
        }
    }

    /// The pack holding `id`, and the offset of its entry.
    fn find(&self, id: &ObjectId) -> Option<(usize, u64)> {
        self.packs
            .iter()
            .enumerate()
            .find_map(|(p, pack)| Some((p, pack.index.find(id)?)))
    }
}

/// The pack beside the index at `idx`, if both read and the index holds together.
fn open_pack(idx: &Path) -> Option<Pack> {
    let file = File::open(idx.with_extension("pack")).ok()?;
    let end = file.metadata().ok()?.len().checked_sub(LEN as u64)?;
    let index = Index::parse(std::fs::read(idx).ok()?)?;
    Some(Pack { file, index, end })
}

/// The most bytes a zlib stream of `size` bytes takes as git's zlib writes it (zlib's
/// `compressBound`), and a margin; a longer stream is left to libgit2.
fn stream_bound(size: u64) -> u64 {
    size + (size >> 12) + (size >> 14) + (size >> 25) + 13 + 64
}

/// The longest entry header and base reference: a size of up to 64 bits and a 20-byte id.
const HEAD_MAX: u64 = 32;
/// How much of a pack one read takes at least, around the entry asked for: entries read one
/// after another (the commits of a history, the trees and versions a commit changed, which git
/// writes near those of the commits beside it) mostly lie within a window already read.
const WINDOW: u64 = 32 << 10;
/// How many windows a reader keeps (the commits, the trees and the blobs of a walk each lie in
/// their own part of a pack).
const WINDOWS: usize = 3;

/// One thread's reader over [`Packs`].
pub(crate) struct PackReader<'p> {
    packs: &'p Packs,
    inflater: Decompressor,
    cache: Cache,
    windows: Windows,
    /// Objects read by this reader (counted here, not on the shared counter at each read).
    served: usize,
}

impl Drop for PackReader<'_> {
    fn drop(&mut self) {
        self.packs.served.fetch_add(self.served, Ordering::Relaxed);
    }
}

/// The parts of the packs last read, the least recently used read over first.
#[derive(Default)]
struct Windows {
    held: [Window; WINDOWS],
    clock: u64,
}

/// `bytes` read from `start` of pack `pack`, last used at `used`.
#[derive(Default)]
struct Window {
    pack: usize,
    start: u64,
    bytes: Vec<u8>,
    used: u64,
}

impl Window {
    fn holds(&self, p: usize, offset: u64, len: u64) -> bool {
        self.pack == p
            && offset >= self.start
            && offset + len <= self.start + self.bytes.len() as u64
    }
}

impl Windows {
    /// `len` bytes of pack `p` (`pack`) from `offset`, read unless a window holds them (a read
    /// takes at least [`WINDOW`] bytes, half of it before `offset`, as far as the pack's end).
    fn get(&mut self, (p, pack): (usize, &Pack), offset: u64, len: u64) -> Option<&[u8]> {
        self.clock += 1;
        let i = match self.held.iter().position(|w| w.holds(p, offset, len)) {
            Some(i) => i,
            None => {
                let i = (0..WINDOWS).min_by_key(|i| self.held[*i].used)?;
                let w = &mut self.held[i];
                let start = offset.saturating_sub(WINDOW / 2);
                let take = (offset - start + len)
                    .max(WINDOW)
                    .min(pack.end.checked_sub(start)?);
                w.bytes.resize(usize::try_from(take).ok()?, 0);
                pack.file.read_exact_at(&mut w.bytes, start).ok()?;
                (w.pack, w.start) = (p, start);
                i
            }
        };
        let w = &mut self.held[i];
        w.used = self.clock;
        let from = usize::try_from(offset - w.start).ok()?;
        w.bytes.get(from..from + usize::try_from(len).ok()?)
    }
}

/// An entry read: its type, and its data inflated.
struct Entry {
    kind: u8,
    data: Vec<u8>,
    /// For a delta, the pack and offset of its base.
    base: Option<(usize, u64)>,
}

impl PackReader<'_> {
    /// The type and bytes of object `id`, when a pack holds it and its entry reads exactly;
    /// `None` leaves it to libgit2.
    pub(crate) fn read(&mut self, id: ObjectId) -> Option<(Kind, Rc<Vec<u8>>)> {
        let at = self.packs.find(&id)?;
        let found = self.resolve(at)?;
        self.served += 1;
        Some(found)
    }

    /// The object at `at`: its chain of deltas followed down to a whole object or one kept,
    /// then applied upwards, each version made kept for the next read.
    fn resolve(&mut self, mut at: (usize, u64)) -> Option<(Kind, Rc<Vec<u8>>)> {
        let mut chain: Vec<((usize, u64), Vec<u8>)> = Vec::new();
        let mut held = 0;
        let (kind, mut made) = loop {
            if let Some(hit) = self.cache.get(at) {
                break hit;
            }
            if chain.len() >= MAX_CHAIN || held > MAX_OBJECT as usize {
                return None;
            }
            let entry = self.entry(at)?;
            match entry.base {
                None => {
                    let kind = Kind::from_entry(entry.kind)?;
                    let data = Rc::new(entry.data);
                    self.cache.put(at, kind, &data);
                    break (kind, data);
                }
                Some(base) => {
                    held += entry.data.len();
                    chain.push((at, entry.data));
                    at = base;
                }
            }
        };
        while let Some((at, delta)) = chain.pop() {
            made = Rc::new(delta::apply(&made, &delta)?);
            self.cache.put(at, kind, &made);
        }
        Some((kind, made))
    }

    /// The entry at `at`, inflated, with its base's place for a delta.
    fn entry(&mut self, (p, offset): (usize, u64)) -> Option<Entry> {
        let pack = self.packs.packs.get(p)?;
        let left = pack.end.checked_sub(offset).filter(|_| offset >= 12)?;
        let head_bytes = self.windows.get((p, pack), offset, left.min(HEAD_MAX))?;
        let head = delta::header(head_bytes)?;
        if head.size > MAX_OBJECT {
            return None;
        }
        let (base, at) = match head.kind {
            6 => {
                let (distance, used) = delta::base_distance(head_bytes.get(head.len..)?)?;
                let base = offset.checked_sub(distance).filter(|b| *b > 0)?;
                (Some((p, base)), head.len + used)
            }
            7 => {
                let id = ObjectId::from_slice(head_bytes.get(head.len..head.len + LEN)?)?;
                (Some(self.packs.find(&id)?), head.len + LEN)
            }
            _ => (None, head.len),
        };
        let want = left.min(at as u64 + stream_bound(head.size));
        let stream = self.windows.get((p, pack), offset, want)?.get(at..)?;
        let mut data = vec![0; usize::try_from(head.size).ok()?];
        let made = self.inflater.zlib_decompress(stream, &mut data).ok()?;
        (made == data.len()).then_some(Entry {
            kind: head.kind,
            data,
            base,
        })
    }
}

/// Objects made by one reader, at most [`CACHE_BYTES`] of them: a day file's next version is a
/// delta on this one (or this one on the next), and a tree's on its last. Oldest out first, but
/// an object asked for again since it came in gets a second round: the base every older
/// version of a file is made from stays while its versions are read.
struct Cache {
    kept: HashMap<(usize, u64), Kept>,
    order: VecDeque<(usize, u64)>,
    bytes: usize,
    /// The most bytes kept.
    limit: usize,
}

struct Kept {
    kind: Kind,
    data: Rc<Vec<u8>>,
    asked: bool,
}

impl Cache {
    fn new(limit: usize) -> Cache {
        Cache {
            kept: HashMap::new(),
            order: VecDeque::new(),
            bytes: 0,
            limit,
        }
    }

    fn get(&mut self, at: (usize, u64)) -> Option<(Kind, Rc<Vec<u8>>)> {
        let kept = self.kept.get_mut(&at)?;
        kept.asked = true;
        Some((kept.kind, kept.data.clone()))
    }

    fn put(&mut self, at: (usize, u64), kind: Kind, data: &Rc<Vec<u8>>) {
        if data.len() >= self.limit / 8 || self.kept.contains_key(&at) {
            return;
        }
        self.bytes += data.len();
        let data = data.clone();
        self.kept.insert(
            at,
            Kept {
                kind,
                data,
                asked: false,
            },
        );
        self.order.push_back(at);
        while self.bytes > self.limit {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            match self.kept.get_mut(&old) {
                Some(k) if k.asked => {
                    k.asked = false;
                    self.order.push_back(old);
                }
                Some(_) => {
                    if let Some(gone) = self.kept.remove(&old) {
                        self.bytes -= gone.data.len();
                    }
                }
                None => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::oid::ToGit;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .current_dir(dir)
            .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
            .args(args)
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    }

    /// A repository whose files only grow, commit by commit, as a record ref's do: three day
    /// files in a year folder and a fan-out of small files beside them.
    fn history() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        std::fs::create_dir_all(root.join("sessions/2026")).unwrap();
        std::fs::create_dir_all(root.join("cited/ab")).unwrap();
        for i in 0..90 {
            let day = root.join(format!("sessions/2026/day-{}.md", i % 3));
            let mut text = std::fs::read_to_string(&day).unwrap_or_default();
            text.push_str(&format!(
                "- entry {i}: {}\n",
                "a decision, said at length ".repeat(i % 7 + 1)
            ));
            std::fs::write(&day, text).unwrap();
            if i % 4 == 0 {
                std::fs::write(root.join(format!("cited/ab/{i}.md")), format!("note {i}\n"))
                    .unwrap();
            }
            git(root, &["add", "-A"]);
            git(root, &["commit", "-q", "-m", &format!("capture {i}")]);
        }
        dir
    }

    /// Every object of the repository at `root`, as libgit2 reads it, against the pack reader:
    /// the reader must read each one itself (all are packed) and agree byte for byte.
    fn agrees_with_libgit2(root: &Path) -> usize {
        let repo = git2::Repository::open(root).unwrap();
        let odb = repo.odb().unwrap();
        let packs = Packs::open(&root.join(".git/objects"));
        let mut reader = packs.reader();
        let ids = git(
            root,
            &[
                "cat-file",
                "--batch-all-objects",
                "--batch-check=%(objectname)",
            ],
        );
        let mut n = 0;
        for hex in ids.lines() {
            let id = ObjectId::from_hex(hex).unwrap();
            let theirs = odb.read(id.to_git()).unwrap();
            let (kind, bytes) = reader.read(id).unwrap_or_else(|| panic!("{hex} not read"));
            let expected = match theirs.kind() {
                git2::ObjectType::Commit => Kind::Commit,
                git2::ObjectType::Tree => Kind::Tree,
                git2::ObjectType::Blob => Kind::Blob,
                _ => Kind::Tag,
            };
            assert_eq!(kind, expected, "{hex}");
            assert_eq!(bytes.as_slice(), theirs.data(), "{hex}");
            if kind == Kind::Commit {
                // Every commit git writes has the shape the walk reads, and reads the same.
                let ours = commit::head(&bytes).unwrap_or_else(|| panic!("{hex}: not read"));
                let c = repo.find_commit(id.to_git()).unwrap();
                assert_eq!(ours.tree.as_bytes(), c.tree_id().as_bytes());
                let parents: Vec<_> = c.parent_ids().map(|p| p.as_bytes().to_vec()).collect();
                let read: Vec<_> = ours.parents.iter().map(|p| p.as_bytes().to_vec()).collect();
                assert_eq!(read, parents, "{hex}");
            }
            n += 1;
        }
        assert!(n > 300, "{n} objects");
        n
    }

    #[test]
    fn reads_every_object_as_libgit2_does_whatever_the_packing() {
        let dir = history();
        let root = dir.path();
        // git's own deltas (newer versions as bases, offset deltas), long chains, reference
        // deltas, and a second pack beside the first.
        for how in [
            &["repack", "-a", "-d", "-f", "-q"][..],
            &[
                "repack",
                "-a",
                "-d",
                "-f",
                "-q",
                "--depth=250",
                "--window=250",
            ],
            &[
                "-c",
                "repack.useDeltaBaseOffset=false",
                "repack",
                "-a",
                "-d",
                "-f",
                "-q",
            ],
        ] {
            git(root, how);
            agrees_with_libgit2(root);
        }
        std::fs::write(root.join("sessions/2026/day-0.md"), "- one more\n").unwrap();
        git(root, &["commit", "-q", "-a", "-m", "more"]);
        git(root, &["repack", "-d", "-q"]);
        agrees_with_libgit2(root);
    }

    #[test]
    fn a_line_of_commits_is_walked_as_git_walks_it_and_a_merge_is_left_to_libgit2() {
        let dir = history();
        let root = dir.path();
        let head =
            |root: &Path| ObjectId::from_hex(git(root, &["rev-parse", "HEAD"]).trim()).unwrap();
        let listed = |root: &Path| -> Vec<ObjectId> {
            git(root, &["rev-list", "--reverse", "HEAD"])
                .lines()
                .map(|h| ObjectId::from_hex(h).unwrap())
                .collect()
        };
        let repo = git2::Repository::open(root).unwrap();
        let odb = repo.odb().unwrap();
        let mut loose = |id: ObjectId| Some(odb.read(id.to_git()).ok()?.data().to_vec());
        let mut none = |_: ObjectId| None;
        let packs = Packs::open(&root.join(".git/objects"));
        assert_eq!(packs.line_to(head(root), &mut none), None, "loose commits");
        assert_eq!(packs.line_to(head(root), &mut loose), Some(listed(root)));
        git(root, &["gc", "-q"]);
        let packs = Packs::open(&root.join(".git/objects"));
        assert_eq!(packs.line_to(head(root), &mut none), Some(listed(root)));
        // A commit made since the pack is loose: read by the caller's reader.
        git(root, &["commit", "-q", "--allow-empty", "-m", "loose"]);
        assert_eq!(packs.line_to(head(root), &mut none), None);
        assert_eq!(packs.line_to(head(root), &mut loose), Some(listed(root)));
        // A merge, packed or not: libgit2's.
        git(root, &["checkout", "-q", "-b", "side", "HEAD~3"]);
        git(root, &["commit", "-q", "--allow-empty", "-m", "side"]);
        git(root, &["checkout", "-q", "-"]);
        git(root, &["merge", "-q", "--no-edit", "side"]);
        assert_eq!(packs.line_to(head(root), &mut loose), None);
        git(root, &["gc", "-q"]);
        let packs = Packs::open(&root.join(".git/objects"));
        assert_eq!(packs.line_to(head(root), &mut none), None);
    }

    #[test]
    fn reads_the_forward_chains_fast_import_writes() {
        let from = history();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        let export = Command::new("git")
            .current_dir(from.path())
            .args(["fast-export", "--all"])
            .output()
            .unwrap();
        let mut import = Command::new("git")
            .current_dir(root)
            .args(["fast-import", "--quiet"])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write as _;
        import
            .stdin
            .take()
            .unwrap()
            .write_all(&export.stdout)
            .unwrap();
        assert!(import.wait().unwrap().success());
        agrees_with_libgit2(root);
    }

    #[test]
    fn a_damaged_pack_or_index_is_left_to_libgit2_never_a_panic() {
        let dir = history();
        let root = dir.path();
        git(root, &["repack", "-a", "-d", "-f", "-q"]);
        let ids = git(
            root,
            &[
                "cat-file",
                "--batch-all-objects",
                "--batch-check=%(objectname)",
            ],
        );
        let ids: Vec<ObjectId> = ids
            .lines()
            .map(|h| ObjectId::from_hex(h).unwrap())
            .collect();
        let pack_dir = root.join(".git/objects/pack");
        let file = |ext: &str| {
            std::fs::read_dir(&pack_dir)
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .find(|p| p.extension().is_some_and(|x| x == ext))
                .unwrap()
        };
        let (pack, idx) = (file("pack"), file("idx"));
        let original = std::fs::read(&pack).unwrap();
        let mut perms = std::fs::metadata(&pack).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        perms.set_readonly(false);
        std::fs::set_permissions(&pack, perms.clone()).unwrap();
        std::fs::set_permissions(&idx, perms).unwrap();
        // Every hundredth byte of the pack flipped in turn: each read answers or declines.
        for at in (12..original.len() - 20).step_by(100) {
            let mut bytes = original.clone();
            bytes[at] ^= 0x5a;
            std::fs::write(&pack, &bytes).unwrap();
            let packs = Packs::open(&root.join(".git/objects"));
            let mut reader = packs.reader();
            for id in &ids {
                let _ = reader.read(*id);
            }
        }
        // A pack cut short and an index cut short: nothing is read from them.
        std::fs::write(&pack, &original[..original.len() / 2]).unwrap();
        let packs = Packs::open(&root.join(".git/objects"));
        let mut reader = packs.reader();
        assert!(ids.iter().filter_map(|id| reader.read(*id)).count() < ids.len());
        let index = std::fs::read(&idx).unwrap();
        std::fs::write(&idx, &index[..index.len() - 1]).unwrap();
        let packs = Packs::open(&root.join(".git/objects"));
        assert!(ids.iter().all(|id| packs.reader().read(*id).is_none()));
    }
}
