//! Reading and writing the record ref's trees ([`Trees`]), and the one place that maps a day
//! file's vault-relative path to where the record ref keeps it (its year's folder, or the flat
//! sessions folder of trees written before the year folders; spec/ref-layout.md).
//!
//! The record ref's `_librarian/sessions/` tree holds one entry per day file (3,650 after ten
//! years), and every capture writes a new version of it. Parsing it into a `TreeBuilder` and
//! serialising it again dominated a capture, so trees are read once (memoised), edited as byte
//! slices in git's entry order by the raw codec (`raw`), and written straight to the object
//! database.

use crate::objectid::ObjectId;
use crate::records::paths;
use crate::store::graph::CommitHead;
use crate::store::oid::{ToGit, ToId};
use crate::store::packread::{commit, Kind, PackReader, Packs};
use git2::{ObjectType, Odb, Repository};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

mod purge;
mod raw;
pub(crate) use purge::Memo;
use raw::{apply, differing, entries, RawEntry, DIR_MODE, FILE_MODE};

/// A file that differs between two trees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Change {
    pub path: String,
    pub old: Option<ObjectId>,
    pub new: Option<ObjectId>,
}

/// An entry of a record tree that is not a record file: readers skip it, the audit names it
/// and the intake of a remote's history refuses it (spec/ref-layout.md, "Tree").
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Odd {
    /// Its path as stored (names that are not UTF-8 shown lossily).
    pub path: String,
    /// Its mode as the tree holds it (`100644`, `40000`, `120000`, `160000`, …).
    pub mode: String,
    pub why: OddKind,
}

/// What is wrong with an [`Odd`] entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OddKind {
    /// A name that could reach outside its folder or that git reads as `.git`.
    Name(&'static str),
    /// A mode other than a regular file (`100644`) or a folder: executable, symlink, gitlink.
    Mode,
    /// A path no record file or record folder has.
    Path,
    /// A day file in another year's folder.
    Misplaced,
}

impl Odd {
    /// One sentence: what the entry is and why it does not belong.
    pub(crate) fn rule(&self) -> String {
        match &self.why {
            OddKind::Name(why) => format!("{why} is never a record path"),
            OddKind::Mode => format!(
                "mode {} ({}) is not a regular file or folder",
                self.mode,
                mode_name(&self.mode)
            ),
            OddKind::Path => "not a record file or folder (spec/ref-layout.md)".to_string(),
            OddKind::Misplaced => "a day file in another year's folder".to_string(),
        }
    }
}

/// What a tree entry's mode means.
fn mode_name(mode: &str) -> &'static str {
    match mode {
        "100755" => "an executable file",
        "120000" => "a symlink",
        "160000" => "a gitlink",
        "100644" => "a file",
        "40000" => "a folder",
        _ => "not a mode git writes",
    }
}

/// What the record tree may hold at `path` with `mode`.
enum Admit {
    Dir,
    File,
    Odd(OddKind),
}

fn admit(path: &str, name: &[u8], mode: &[u8]) -> Admit {
    if let Some(why) = paths::hostile_name(name) {
        return Admit::Odd(OddKind::Name(why));
    }
    match mode {
        DIR_MODE if paths::stored_dir(path) => Admit::Dir,
        FILE_MODE if paths::stored_file(path).is_some() => Admit::File,
        FILE_MODE if paths::misplaced_day_file(path) => Admit::Odd(OddKind::Misplaced),
        DIR_MODE | FILE_MODE => Admit::Odd(OddKind::Path),
        _ => Admit::Odd(OddKind::Mode),
    }
}

/// An entry to write: its path as stored, its mode, and its id (`None`: remove it).
type Placed = (String, &'static [u8], Option<ObjectId>);

/// Reads and writes trees of one repository, remembering every tree it has read.
pub(crate) struct Trees<'r> {
    repo: &'r Repository,
    odb: Odb<'r>,
    raw: HashMap<ObjectId, Rc<Vec<u8>>>,
    /// The last blobs read by [`Trees::blob`], newest last: a day file's next version is
    /// usually compared with the one read just before.
    blobs: Vec<(ObjectId, Rc<Vec<u8>>)>,
    /// The largest tree object read (the intake of a remote's history sets a bound).
    tree_limit: Option<usize>,
    /// Reads commits, trees and blobs from the packs first, for a walk over a whole history
    /// ([`Trees::with_packs`]).
    packs: Option<PackReader<'r>>,
}

/// How many recent blobs [`Trees::blob`] keeps.
const RECENT_BLOBS: usize = 4;

impl<'r> Trees<'r> {
    /// A tree reader/writer over `repo`'s object database.
    pub(crate) fn new(repo: &'r Repository) -> Result<Trees<'r>, git2::Error> {
        Ok(Trees {
            repo,
            odb: repo.odb()?,
            raw: HashMap::new(),
            blobs: Vec::new(),
            tree_limit: None,
            packs: None,
        })
    }

    /// A tree reader over `repo` that reads commits, trees and blobs through `packs` where it
    /// can (`verify --full`'s walk; `store::packread`).
    pub(crate) fn with_packs(
        repo: &'r Repository,
        packs: &'r Packs,
    ) -> Result<Trees<'r>, git2::Error> {
        let mut trees = Trees::new(repo)?;
        trees.packs = Some(packs.reader());
        Ok(trees)
    }

    /// The head of commit `id` read from the packs ([`crate::store::packread::commit`]), its
    /// parents' trees from `known` (the id and tree of a commit read just before) or their own
    /// heads; `None` when a pack reader is not set or any of them is not read there.
    pub(crate) fn commit_head(
        &mut self,
        id: ObjectId,
        known: Option<(ObjectId, ObjectId)>,
    ) -> Option<CommitHead> {
        let head = commit::head(&self.packed(id, Kind::Commit)?)?;
        let mut parents = Vec::with_capacity(head.parents.len());
        for p in head.parents {
            let tree = match known {
                Some((k, tree)) if k == p => tree,
                _ => commit::head(&self.packed(p, Kind::Commit)?)?.tree,
            };
            parents.push((p, tree));
        }
        Some(CommitHead {
            id,
            tree: head.tree,
            parents,
            signed: head.signed,
        })
    }

    /// Object `oid` from the packs, when a pack reader is set, holds it as a `kind`, and reads it.
    fn packed(&mut self, oid: ObjectId, kind: Kind) -> Option<Rc<Vec<u8>>> {
        let (found, bytes) = self.packs.as_mut()?.read(oid)?;
        (found == kind).then_some(bytes)
    }

    /// Refuses (as an error naming it) to read any tree object larger than `bytes`.
    pub(crate) fn limit_trees(&mut self, bytes: usize) {
        self.tree_limit = Some(bytes);
    }

    /// The id and mode of the entry at the vault-relative `path` below the record tree `root`.
    /// A day file is found where the ref keeps it: at `path` in a tree written before the year
    /// folders, else in its year's folder (spec/ref-layout.md, "Year folders").
    pub(crate) fn entry(
        &mut self,
        root: ObjectId,
        path: &str,
    ) -> Result<Option<(ObjectId, bool)>, git2::Error> {
        match self.raw_entry(root, path)? {
            Some(found) => Ok(Some(found)),
            None => match paths::year_path(path) {
                Some(year) => self.raw_entry(root, &year),
                None => Ok(None),
            },
        }
    }

    /// The id of the entry at `path` (`/`-separated) below the tree `root`, as stored, and
    /// whether it is a folder: `None` for anything but a regular file (`100644`) or a folder,
    /// so no reader ever takes a symlink, gitlink or executable entry for a record file.
    fn raw_entry(
        &mut self,
        root: ObjectId,
        path: &str,
    ) -> Result<Option<(ObjectId, bool)>, git2::Error> {
        Ok(match self.stored_entry(root, path)? {
            Some((oid, DIR_MODE)) => Some((oid, true)),
            Some((oid, FILE_MODE)) => Some((oid, false)),
            _ => None,
        })
    }

    /// The blob of a note at `path` in a tree of the user's branches (`root`): a regular or an
    /// executable file (notes copied from some file systems keep an executable bit).
    pub(crate) fn note_entry(
        &mut self,
        root: ObjectId,
        path: &str,
    ) -> Result<Option<ObjectId>, git2::Error> {
        Ok(match self.stored_entry(root, path)? {
            Some((oid, FILE_MODE | b"100755")) => Some(oid),
            _ => None,
        })
    }

    /// The id and mode of the entry at `path` below `root`, as stored, whatever its mode.
    fn stored_entry(
        &mut self,
        root: ObjectId,
        path: &str,
    ) -> Result<Option<(ObjectId, &'static [u8])>, git2::Error> {
        let mut current = root;
        let mut parts = path.split('/').filter(|p| !p.is_empty()).peekable();
        while let Some(name) = parts.next() {
            let raw = self.read(current)?;
            let Some(e) = entries(&raw).find(|e| e.name == name.as_bytes()) else {
                return Ok(None);
            };
            let oid = ObjectId::from_bytes(*e.oid);
            let mode: &'static [u8] = match e.mode {
                DIR_MODE => DIR_MODE,
                FILE_MODE => FILE_MODE,
                b"100755" => b"100755",
                _ => b"other",
            };
            if parts.peek().is_none() {
                return Ok(Some((oid, mode)));
            }
            if mode != DIR_MODE {
                return Ok(None);
            }
            current = oid;
        }
        Ok(None)
    }

    /// The bytes of the blob at `path` below `root`, if there is one.
    pub(crate) fn blob_at(
        &mut self,
        root: ObjectId,
        path: &str,
    ) -> Result<Option<Vec<u8>>, git2::Error> {
        match self.entry(root, path)? {
            Some((oid, false)) => Ok(Some(self.repo.find_blob(oid.to_git())?.content().to_vec())),
            _ => Ok(None),
        }
    }

    /// Writes the record tree `base` with each `(vault-relative path, blob)` of `edits` inserted
    /// or replaced. A day file goes to its year's folder, unless `base` still holds it in the
    /// sessions folder itself (a tree written before the year folders): it is replaced there.
    pub(crate) fn write(
        &mut self,
        base: Option<ObjectId>,
        edits: &[(String, ObjectId)],
    ) -> Result<ObjectId, git2::Error> {
        let mut placed = Vec::with_capacity(edits.len());
        for (path, oid) in edits {
            let at = match (paths::year_path(path), base) {
                _ if flat_sessions() => path.clone(),
                (Some(_), Some(b)) if self.raw_entry(b, path)?.is_some() => path.clone(),
                (Some(year), _) => year,
                (None, _) => path.clone(),
            };
            placed.push((at, FILE_MODE, Some(*oid)));
        }
        self.write_at(base, &placed)
    }

    /// The record tree `root` with every day file of its sessions folder moved into the folder
    /// of its year, byte for byte (the same blob ids), or `None` when none is left to move. A
    /// day file already in its year folder under the same name is replaced: the one in the
    /// sessions folder itself is the record file ([`Trees::entry`]), so [`Trees::changes`]
    /// finds no change between `root` and the result.
    pub(crate) fn moved_to_years(
        &mut self,
        root: ObjectId,
    ) -> Result<Option<ObjectId>, git2::Error> {
        if flat_sessions() {
            return Ok(None);
        }
        let Some((sessions, true)) = self.raw_entry(root, paths::SESSIONS_DIR)? else {
            return Ok(None);
        };
        let raw = self.read(sessions)?;
        let mut edits: Vec<Placed> = Vec::new();
        for e in entries(&raw).filter(|e| e.mode == FILE_MODE) {
            let flat = format!(
                "{}/{}",
                paths::SESSIONS_DIR,
                String::from_utf8_lossy(e.name)
            );
            let Some(year) = paths::year_path(&flat) else {
                continue;
            };
            let oid = ObjectId::from_bytes(*e.oid);
            edits.push((flat, FILE_MODE, None));
            edits.push((year, FILE_MODE, Some(oid)));
        }
        if edits.is_empty() {
            return Ok(None);
        }
        self.write_at(Some(root), &edits).map(Some)
    }

    /// A new tree holding each `(path, blob)` exactly at `path`, day files included: the trees
    /// versions before the year folders wrote, for tests.
    #[cfg(test)]
    pub(crate) fn write_stored(
        &mut self,
        files: &[(String, ObjectId)],
    ) -> Result<ObjectId, git2::Error> {
        let placed: Vec<Placed> = files
            .iter()
            .map(|(p, o)| (p.clone(), FILE_MODE, Some(*o)))
            .collect();
        self.write_at(None, &placed)
    }

    /// Writes the tree `base` with each `(path as stored, mode, id)` of `edits` inserted or
    /// replaced; `None` as the id removes the entry.
    fn write_at(
        &mut self,
        base: Option<ObjectId>,
        edits: &[Placed],
    ) -> Result<ObjectId, git2::Error> {
        let mut updates: Vec<(Vec<u8>, &[u8], Option<ObjectId>)> = Vec::new();
        let mut dirs: Vec<(&str, Vec<Placed>)> = Vec::new();
        for (path, mode, oid) in edits {
            match path.split_once('/') {
                Some((head, rest)) => match dirs.iter_mut().find(|(d, _)| *d == head) {
                    Some((_, v)) => v.push((rest.to_string(), mode, *oid)),
                    None => dirs.push((head, vec![(rest.to_string(), mode, *oid)])),
                },
                None => updates.push((path.as_bytes().to_vec(), mode, *oid)),
            }
        }
        for (name, sub_edits) in dirs {
            let sub_base = match base {
                Some(b) => self
                    .raw_entry(b, name)?
                    .filter(|(_, is_dir)| *is_dir)
                    .map(|(o, _)| o),
                None => None,
            };
            let sub = self.write_at(sub_base, &sub_edits)?;
            updates.push((name.as_bytes().to_vec(), DIR_MODE, Some(sub)));
        }
        let raw = match base {
            Some(b) => self.read(b)?,
            None => Rc::new(Vec::new()),
        };
        let bytes = apply(&raw, &updates);
        Ok(self.odb.write(ObjectType::Tree, &bytes)?.to_id())
    }

    /// What differs between two trees, recursively: `(path, old blob, new blob)` per file, a
    /// missing side meaning added or deleted. Identical subtrees are skipped by id.
    ///
    /// Paths are vault-relative: a day file is reported at its path in the sessions folder
    /// wherever either record tree keeps it, so a commit that only moves day files into year
    /// folders changes nothing (spec/ref-layout.md, "Year folders").
    ///
    /// Only record files are compared (regular files at the paths spec/ref-layout.md allows);
    /// any other entry is skipped, and no folder that holds no record file is read.
    pub(crate) fn changes(
        &mut self,
        old: Option<ObjectId>,
        new: Option<ObjectId>,
    ) -> Result<Vec<Change>, git2::Error> {
        Ok(self.changes_checked(old, new)?.0)
    }

    /// [`Trees::changes`], and every entry of `new` that differs from `old` and is not a
    /// record file or folder (each reported once, at the top-most odd entry: nothing below an
    /// odd folder is read).
    pub(crate) fn changes_checked(
        &mut self,
        old: Option<ObjectId>,
        new: Option<ObjectId>,
    ) -> Result<(Vec<Change>, Vec<Odd>), git2::Error> {
        let (mut stored, mut odd) = (Vec::new(), Vec::new());
        self.diff_into(old, new, "", &mut stored, &mut odd)?;
        Ok((self.seen_changes(old, new, stored)?, odd))
    }

    /// The changes of two stored trees as readers see them: day files at their vault-relative
    /// paths wherever either tree keeps them.
    fn seen_changes(
        &mut self,
        old: Option<ObjectId>,
        new: Option<ObjectId>,
        stored: Vec<Change>,
    ) -> Result<Vec<Change>, git2::Error> {
        let is_day = |c: &Change| {
            paths::year_path(&c.path).is_some() || paths::from_year_path(&c.path).is_some()
        };
        if !stored.iter().any(is_day) {
            return Ok(stored);
        }
        let by_path: HashMap<&str, &Change> = stored.iter().map(|c| (c.path.as_str(), c)).collect();
        let mut seen: HashSet<String> = HashSet::new();
        let mut out = Vec::with_capacity(stored.len());
        for c in &stored {
            let day = match paths::year_path(&c.path) {
                Some(_) => c.path.clone(),
                None => match paths::from_year_path(&c.path) {
                    Some(flat) => flat,
                    None => {
                        out.push(c.clone());
                        continue;
                    }
                },
            };
            if seen.insert(day.clone()) {
                out.extend(self.day_change(old, new, day, &by_path)?);
            }
        }
        Ok(out)
    }

    /// The change of the day file at the vault-relative `day` between the record trees `old`
    /// and `new`, as readers see it in each (`stored`: what the diff of the two found, by path).
    fn day_change(
        &mut self,
        old: Option<ObjectId>,
        new: Option<ObjectId>,
        day: String,
        stored: &HashMap<&str, &Change>,
    ) -> Result<Option<Change>, git2::Error> {
        let year = paths::year_path(&day).unwrap_or_default();
        let (flat, in_year) = (stored.get(day.as_str()), stored.get(year.as_str()));
        let was = self.day_blob(
            old,
            &day,
            &year,
            flat.map(|c| c.old),
            in_year.map(|c| c.old),
        )?;
        let is = self.day_blob(
            new,
            &day,
            &year,
            flat.map(|c| c.new),
            in_year.map(|c| c.new),
        )?;
        Ok((was != is).then_some(Change {
            path: day,
            old: was,
            new: is,
        }))
    }

    /// The blob of the day file `flat` in the record tree `root`: the file in the sessions
    /// folder itself when there is one, else the one in its year folder (`year`). `flat_known`
    /// and `year_known` carry what a diff already says of either place in `root`; an unknown
    /// place (unchanged by the diff) is looked up.
    fn day_blob(
        &mut self,
        root: Option<ObjectId>,
        flat: &str,
        year: &str,
        flat_known: Option<Option<ObjectId>>,
        year_known: Option<Option<ObjectId>>,
    ) -> Result<Option<ObjectId>, git2::Error> {
        let Some(root) = root else {
            return Ok(None);
        };
        let mut at = |known: Option<Option<ObjectId>>,
                      path: &str|
         -> Result<Option<ObjectId>, git2::Error> {
            match known {
                Some(k) => Ok(k),
                None => Ok(self
                    .raw_entry(root, path)?
                    .filter(|(_, is_dir)| !is_dir)
                    .map(|(o, _)| o)),
            }
        };
        match at(flat_known, flat)? {
            Some(o) => Ok(Some(o)),
            None => at(year_known, year),
        }
    }

    fn diff_into(
        &mut self,
        old: Option<ObjectId>,
        new: Option<ObjectId>,
        prefix: &str,
        out: &mut Vec<Change>,
        odd: &mut Vec<Odd>,
    ) -> Result<(), git2::Error> {
        if old == new {
            return Ok(());
        }
        let empty = Rc::new(Vec::new());
        let a = match old {
            Some(t) => self.read(t)?,
            None => empty.clone(),
        };
        let b = match new {
            Some(t) => self.read(t)?,
            None => empty,
        };
        for (x, y) in differing(&a, &b) {
            if x.map(|e| (e.mode, e.oid)) == y.map(|e| (e.mode, e.oid)) {
                continue;
            }
            let name = x
                .or(y)
                .map(|e| String::from_utf8_lossy(e.name).into_owned())
                .unwrap_or_default();
            let path = format!("{prefix}{name}");
            let (x, y) = (
                x.map(|e| (e, admit(&path, e.name, e.mode))),
                y.map(|e| (e, admit(&path, e.name, e.mode))),
            );
            if let Some((e, Admit::Odd(why))) = &y {
                odd.push(Odd {
                    path: path.clone(),
                    mode: String::from_utf8_lossy(e.mode).into_owned(),
                    why: why.clone(),
                });
            }
            let oid = |side: &Option<(RawEntry<'_>, Admit)>,
                       want_dir: bool|
             -> Result<Option<ObjectId>, git2::Error> {
                match side {
                    Some((e, Admit::Dir)) if want_dir => Ok(Some(ObjectId::from_bytes(*e.oid))),
                    Some((e, Admit::File)) if !want_dir => Ok(Some(ObjectId::from_bytes(*e.oid))),
                    _ => Ok(None),
                }
            };
            let (dx, dy) = (oid(&x, true)?, oid(&y, true)?);
            if dx.is_some() || dy.is_some() {
                self.diff_into(dx, dy, &format!("{path}/"), out, odd)?;
            }
            let (fx, fy) = (oid(&x, false)?, oid(&y, false)?);
            if fx.is_some() || fy.is_some() {
                out.push(Change {
                    path,
                    old: fx,
                    new: fy,
                });
            }
        }
        Ok(())
    }

    /// Every record file below the directory `dir` of the tree `root` (`""`: the whole tree):
    /// `(path from root, blob id)`, in tree order (by path when day files are read from year
    /// folders). No other subtree is read: the record ref's `cited/` copies outnumber its
    /// record files by far. Entries that are not record files (another path, mode or a hostile
    /// name, spec/ref-layout.md) are skipped, and folders that hold none are not read.
    ///
    /// Paths are vault-relative: a day file kept in a year folder is listed at its path in the
    /// sessions folder, unless the sessions folder itself also holds that name (that one is the
    /// record file, as [`Trees::entry`] finds it).
    pub(crate) fn files(
        &mut self,
        root: ObjectId,
        dir: &str,
    ) -> Result<Vec<(String, ObjectId)>, git2::Error> {
        let stored = self.stored_files(root, dir)?;
        if !stored
            .iter()
            .any(|(p, _)| paths::from_year_path(p).is_some())
        {
            return Ok(stored);
        }
        let names: HashSet<&str> = stored.iter().map(|(p, _)| p.as_str()).collect();
        let mut out: Vec<(String, ObjectId)> = stored
            .iter()
            .filter_map(|(p, oid)| match paths::from_year_path(p) {
                Some(flat) if names.contains(flat.as_str()) => None,
                Some(flat) => Some((flat, *oid)),
                None => Some((p.clone(), *oid)),
            })
            .collect();
        out.sort();
        Ok(out)
    }

    /// The `n` newest day files of the tree `root`, newest first, as [`Trees::files`] lists
    /// them (vault-relative, a year folder's day file at its path in the sessions folder), read
    /// from the sessions folder and its newest year folders only: a few trees whatever the
    /// years the record holds.
    pub(crate) fn newest_days(
        &mut self,
        root: ObjectId,
        n: usize,
    ) -> Result<Vec<(String, ObjectId)>, git2::Error> {
        let Some((sessions, true)) = self.raw_entry(root, paths::SESSIONS_DIR)? else {
            return Ok(vec![]);
        };
        let raw = self.read(sessions)?;
        let mut found: Vec<(String, ObjectId)> = Vec::new();
        let mut years: Vec<String> = Vec::new();
        for e in entries(&raw) {
            let path = format!(
                "{}/{}",
                paths::SESSIONS_DIR,
                String::from_utf8_lossy(e.name)
            );
            match admit(&path, e.name, e.mode) {
                Admit::Dir => years.push(path),
                Admit::File => found.push((path, ObjectId::from_bytes(*e.oid))),
                Admit::Odd(_) => {}
            }
        }
        years.sort_unstable_by(|a, b| b.cmp(a));
        for year in years {
            // Every day file of the year folder sorts below `<year>-13`.
            let above = format!("{year}-13");
            if found.iter().filter(|(p, _)| *p > above).count() >= n {
                break;
            }
            for (path, oid) in self.files(root, &year)? {
                if !found.iter().any(|(p, _)| *p == path) {
                    found.push((path, oid));
                }
            }
        }
        found.sort_unstable_by(|a, b| b.0.cmp(&a.0));
        found.truncate(n);
        Ok(found)
    }

    /// Every file below `dir` as stored, in tree order.
    fn stored_files(
        &mut self,
        root: ObjectId,
        dir: &str,
    ) -> Result<Vec<(String, ObjectId)>, git2::Error> {
        let start = match dir {
            "" => Some((String::new(), root)),
            _ => self
                .raw_entry(root, dir)?
                .filter(|(_, is_dir)| *is_dir)
                .map(|(oid, _)| (format!("{dir}/"), oid)),
        };
        let mut out = Vec::new();
        let mut todo: Vec<(String, ObjectId)> = start.into_iter().collect();
        while let Some((prefix, tree)) = todo.pop() {
            let raw = self.read(tree)?;
            for e in entries(&raw) {
                let path = format!("{prefix}{}", String::from_utf8_lossy(e.name));
                let oid = ObjectId::from_bytes(*e.oid);
                match admit(&path, e.name, e.mode) {
                    Admit::Dir => todo.push((format!("{path}/"), oid)),
                    Admit::File => out.push((path, oid)),
                    Admit::Odd(_) => {}
                }
            }
        }
        Ok(out)
    }

    /// The bytes of the blob `oid`, kept among the last few read.
    pub(crate) fn blob(&mut self, oid: ObjectId) -> Result<Rc<Vec<u8>>, git2::Error> {
        if let Some((_, b)) = self.blobs.iter().find(|(o, _)| *o == oid) {
            return Ok(b.clone());
        }
        let b = match self.packed(oid, Kind::Blob) {
            Some(b) => b,
            None => Rc::new(self.repo.find_blob(oid.to_git())?.content().to_vec()),
        };
        if self.blobs.len() == RECENT_BLOBS {
            self.blobs.remove(0);
        }
        self.blobs.push((oid, b.clone()));
        Ok(b)
    }

    /// Forgets the trees read so far (bounds memory on long walks).
    pub(crate) fn forget(&mut self) {
        self.raw.clear();
    }

    fn read(&mut self, oid: ObjectId) -> Result<Rc<Vec<u8>>, git2::Error> {
        if let Some(raw) = self.raw.get(&oid) {
            return Ok(raw.clone());
        }
        // A tree over the limit is left to the check below, which names it.
        let limit = self.tree_limit.unwrap_or(usize::MAX);
        if let Some(raw) = self.packed(oid, Kind::Tree).filter(|r| r.len() <= limit) {
            self.raw.insert(oid, raw.clone());
            return Ok(raw);
        }
        if let Some(limit) = self.tree_limit {
            let (size, _) = self.odb.read_header(oid.to_git())?;
            if size > limit {
                return Err(git2::Error::from_str(&format!(
                    "the tree {oid} is {size} bytes, more than any record folder holds ({limit})"
                )));
            }
        }
        let obj = self.odb.read(oid.to_git())?;
        if obj.kind() != ObjectType::Tree {
            return Err(git2::Error::from_str(&format!("{oid} is not a tree")));
        }
        let raw = Rc::new(obj.data().to_vec());
        self.raw.insert(oid, raw.clone());
        Ok(raw)
    }
}

/// Whether day files are written where trees before the year folders kept them: debug builds
/// only, with `RUTTER_FLAT_SESSIONS` set, so the tests can make the histories older versions
/// wrote and check what this version does with them.
fn flat_sessions() -> bool {
    cfg!(debug_assertions) && std::env::var_os("RUTTER_FLAT_SESSIONS").is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    proptest! {
        /// The newest day files, read from the newest year folders alone, are the newest of
        /// all the day files the tree holds, whatever years they span.
        #[test]
        fn the_newest_days_are_the_newest_of_every_day_file(
            days in proptest::collection::btree_set((2019u32..2027, 1u32..13, 1u32..29, proptest::option::of("[a-z0-9]{4}")), 0..40),
            n in 0usize..12,
        ) {
            let t = tempfile::tempdir().unwrap();
            let repo = Repository::init(t.path()).unwrap();
            let blob = repo.blob(b"x").unwrap().to_id();
            let edits: Vec<(String, ObjectId)> = days
                .iter()
                .map(|(y, m, d, tag)| {
                    let stem = match tag {
                        Some(tag) => format!("{y}-{m:02}-{d:02}.{tag}"),
                        None => format!("{y}-{m:02}-{d:02}"),
                    };
                    (paths::day_file(&stem), blob)
                })
                .collect();
            let mut trees = Trees::new(&repo).unwrap();
            let root = trees.write(None, &edits).unwrap();
            let mut all: Vec<String> = trees
                .files(root, paths::OVERLAY_DIR)
                .unwrap()
                .into_iter()
                .map(|(p, _)| p)
                .collect();
            all.sort_unstable_by(|a, b| b.cmp(a));
            all.truncate(n);
            let newest: Vec<String> = trees
                .newest_days(root, n)
                .unwrap()
                .into_iter()
                .map(|(p, _)| p)
                .collect();
            prop_assert_eq!(newest, all);
        }
    }

    #[test]
    fn nested_edits_keep_siblings_and_match_git_order() {
        let t = tempfile::tempdir().unwrap();
        let repo = Repository::init(t.path()).unwrap();
        let a = repo.blob(b"a").unwrap().to_id();
        let b = repo.blob(b"b").unwrap().to_id();
        let mut trees = Trees::new(&repo).unwrap();
        let edits = [
            ("x/y/a.md".to_string(), a),
            ("top".to_string(), a),
            ("x.md".to_string(), b),
            ("x-y".to_string(), b),
        ];
        let first = trees.write(None, &edits).unwrap();
        let second = trees
            .write(Some(first), &[("x/y/b.md".into(), b), ("top".into(), b)])
            .unwrap();
        assert_eq!(trees.blob_at(second, "x/y/a.md").unwrap().unwrap(), b"a");
        assert_eq!(trees.blob_at(second, "x/y/b.md").unwrap().unwrap(), b"b");
        assert_eq!(trees.blob_at(second, "top").unwrap().unwrap(), b"b");
        assert!(
            trees.blob_at(second, "x").unwrap().is_none(),
            "a directory is not a blob"
        );
        assert!(trees.entry(second, "x/nope").unwrap().is_none());
        // libgit2 parses it and agrees on the order.
        let tree = repo.find_tree(second.to_git()).unwrap();
        let names: Vec<String> = tree.iter().map(|e| e.name().unwrap().to_string()).collect();
        assert_eq!(names, ["top", "x-y", "x.md", "x"]);
        let mut builder = repo.treebuilder(None).unwrap();
        for e in tree.iter() {
            builder
                .insert(e.name().unwrap(), e.id(), e.filemode())
                .unwrap();
        }
        assert_eq!(
            builder.write().unwrap(),
            second.to_git(),
            "byte-identical to libgit2's own tree"
        );
    }

    /// Where [`Trees::write`] keeps a vault-relative path when no tree holds it flat.
    fn placed(path: &str) -> String {
        match (flat_sessions(), paths::year_path(path)) {
            (false, Some(year)) => year,
            _ => path.to_string(),
        }
    }

    /// The tree of `files` (stored path → blob) as libgit2's `TreeBuilder` writes it.
    fn builder_tree(repo: &Repository, files: &BTreeMap<String, ObjectId>) -> ObjectId {
        let mut builder = repo.treebuilder(None).unwrap();
        let mut dirs: BTreeMap<&str, BTreeMap<String, ObjectId>> = BTreeMap::new();
        for (path, oid) in files {
            match path.split_once('/') {
                Some((head, rest)) => {
                    dirs.entry(head).or_default().insert(rest.to_string(), *oid);
                }
                None => {
                    builder.insert(path, oid.to_git(), 0o100644).unwrap();
                }
            }
        }
        for (name, sub) in &dirs {
            builder
                .insert(name, builder_tree(repo, sub).to_git(), 0o040000)
                .unwrap();
        }
        builder.write().unwrap().to_id()
    }

    /// Batches of `(vault-relative path, content byte)` edits over one set of paths: names that
    /// sort around each other and around `/` (`a`, `a-`, `a.`, `a0`, `a/…`), day files that go to
    /// their year folders, and day files written straight into a year folder. No path is both a
    /// file and a folder once placed.
    fn edit_batches() -> impl Strategy<Value = Vec<Vec<(String, u8)>>> {
        let segment = prop_oneof![
            4 => "[ab][ab0.-]{0,2}",
            1 => Just("2026-01-01.md".to_string()),
        ];
        let day = prop_oneof![
            Just("2026-01-01.md"),
            Just("2026-01-01.a.md"),
            Just("2026-01-01.a-b.md"),
            Just("2025-12-31.md"),
            Just("2026.md"),
        ];
        let path = prop_oneof![
            3 => prop::collection::vec(segment, 1..4).prop_map(|s| s.join("/")),
            2 => day.clone().prop_map(|d| format!("_librarian/sessions/{d}")),
            1 => day.prop_map(|d| format!("_librarian/sessions/2026/{d}")),
        ];
        prop::collection::btree_set(path, 1..16).prop_flat_map(|universe| {
            let stored: Vec<String> = universe.iter().map(|p| placed(p)).collect();
            let paths: Vec<String> = universe
                .into_iter()
                .filter(|p| {
                    let dir = format!("{}/", placed(p));
                    !stored.iter().any(|s| s.starts_with(&dir))
                })
                .collect();
            let n = paths.len();
            let edit = (0..n, 0u8..4);
            prop::collection::vec(prop::collection::vec(edit, 1..6), 1..4).prop_map(
                move |batches| {
                    batches
                        .into_iter()
                        .map(|b| b.into_iter().map(|(i, c)| (paths[i].clone(), c)).collect())
                        .collect()
                },
            )
        })
    }

    proptest! {
        /// Every tree [`Trees::write`] makes, from scratch and edited batch after batch, is
        /// byte-identical to the tree libgit2's `TreeBuilder` makes of the same files.
        #[test]
        fn written_trees_match_libgit2s_tree_builder(batches in edit_batches()) {
            let t = tempfile::tempdir().unwrap();
            let repo = Repository::init(t.path()).unwrap();
            let mut trees = Trees::new(&repo).unwrap();
            let mut files: BTreeMap<String, ObjectId> = BTreeMap::new();
            let mut base = None;
            for batch in batches {
                let edits: Vec<(String, ObjectId)> = batch
                    .iter()
                    .map(|(p, c)| (p.clone(), repo.blob(&[*c]).unwrap().to_id()))
                    .collect();
                for (p, oid) in &edits {
                    files.insert(placed(p), *oid);
                }
                let written = trees.write(base, &edits).unwrap();
                prop_assert_eq!(written, builder_tree(&repo, &files), "{:?}", files);
                base = Some(written);
            }
        }
    }

    #[test]
    fn files_lists_one_directory_without_reading_its_siblings() {
        let t = tempfile::tempdir().unwrap();
        let repo = Repository::init(t.path()).unwrap();
        let a = repo.blob(b"a").unwrap().to_id();
        let mut trees = Trees::new(&repo).unwrap();
        let edits = [
            ("_librarian/note-identity.md".to_string(), a),
            ("_librarian/sessions/2026-11-30.md".to_string(), a),
            ("_librarian/sessions/2026-12-01.md".to_string(), a),
            (format!("cited/ab/ab{}", "0".repeat(62)), a),
            ("top".to_string(), a),
            ("_librarian/junk/x.md".to_string(), a),
        ];
        let root = trees.write(None, &edits).unwrap();
        let cited = trees.entry(root, "cited").unwrap().unwrap().0;
        let mut fresh = Trees::new(&repo).unwrap();
        let paths = |files: Vec<(String, ObjectId)>| -> Vec<String> {
            files.into_iter().map(|(p, _)| p).collect()
        };
        assert_eq!(
            paths(fresh.files(root, "_librarian").unwrap()),
            [
                "_librarian/note-identity.md",
                "_librarian/sessions/2026-11-30.md",
                "_librarian/sessions/2026-12-01.md"
            ]
        );
        assert!(!fresh.raw.contains_key(&cited), "cited/ was not read");
        assert_eq!(
            paths(fresh.files(root, "_librarian/sessions").unwrap()).len(),
            2
        );
        assert_eq!(
            paths(fresh.files(root, "").unwrap()).len(),
            4,
            "what is not a record file is skipped"
        );
        let junk = trees.entry(root, "_librarian/junk").unwrap().unwrap().0;
        assert!(!fresh.raw.contains_key(&junk), "a junk folder was not read");
        assert!(fresh.files(root, "missing").unwrap().is_empty());
        assert!(
            fresh.files(root, "top").unwrap().is_empty(),
            "a file is no directory"
        );
    }

    /// A raw tree of `(mode, name, id)` entries, whatever the names: what `git mktree` or
    /// `git hash-object -t tree --literally` lets a remote write.
    fn raw_tree(repo: &Repository, entries: &[(&str, &[u8], ObjectId)]) -> ObjectId {
        let mut sorted = entries.to_vec();
        sorted.sort_by(|a, b| a.1.cmp(b.1));
        let mut bytes = Vec::new();
        for (mode, name, oid) in sorted {
            bytes.extend_from_slice(mode.as_bytes());
            bytes.push(b' ');
            bytes.extend_from_slice(name);
            bytes.push(0);
            bytes.extend_from_slice(oid.as_bytes());
        }
        repo.odb()
            .unwrap()
            .write(ObjectType::Tree, &bytes)
            .unwrap()
            .to_id()
    }

    #[test]
    fn entries_that_are_not_record_files_are_odd_and_never_read() {
        let t = tempfile::tempdir().unwrap();
        let repo = Repository::init(t.path()).unwrap();
        let a = repo.blob(b"H\na\n").unwrap().to_id();
        let mut trees = Trees::new(&repo).unwrap();
        let base = trees
            .write(
                None,
                &[("_librarian/sessions/2026-01-01.md".to_string(), a)],
            )
            .unwrap();
        let outside = raw_tree(&repo, &[("100644", b"PWNED.md", a)]);
        let sig = git2::Signature::now("t", "t@t").unwrap();
        let tree = repo.find_tree(base.to_git()).unwrap();
        let commit = repo.commit(None, &sig, &sig, "x", &tree, &[]).unwrap();
        let year = raw_tree(
            &repo,
            &[
                ("100644", b"2026-01-01.md", a),
                ("160000", b"2026-01-02.md", commit.to_id()),
                ("120000", b"2026-01-03.md", a),
                ("100755", b"2026-01-04.md", a),
                ("100644", b"2025-12-31.md", a),
            ],
        );
        let sessions = raw_tree(
            &repo,
            &[("40000", b"2026", year), ("40000", b"junk", outside)],
        );
        let lib = raw_tree(
            &repo,
            &[
                ("40000", b"sessions", sessions),
                ("40000", b"..", outside),
                ("100644", b".GIT", a),
                ("100644", b"a/b", a),
            ],
        );
        let root = raw_tree(
            &repo,
            &[("40000", b"_librarian", lib), ("100644", b"top", a)],
        );
        let (changes, odd) = trees.changes_checked(Some(base), Some(root)).unwrap();
        let found: Vec<(&str, &OddKind)> = odd.iter().map(|o| (o.path.as_str(), &o.why)).collect();
        assert_eq!(
            found,
            [
                ("_librarian/..", &OddKind::Name("a `.` or `..` name")),
                (
                    "_librarian/.GIT",
                    &OddKind::Name("a name git reads as `.git`")
                ),
                (
                    "_librarian/a/b",
                    &OddKind::Name("a name holding a `/` or `\\`")
                ),
                (
                    "_librarian/sessions/2026/2025-12-31.md",
                    &OddKind::Misplaced
                ),
                ("_librarian/sessions/2026/2026-01-02.md", &OddKind::Mode),
                ("_librarian/sessions/2026/2026-01-03.md", &OddKind::Mode),
                ("_librarian/sessions/2026/2026-01-04.md", &OddKind::Mode),
                ("_librarian/sessions/junk", &OddKind::Path),
                ("top", &OddKind::Path),
            ]
        );
        assert!(odd[4].rule().contains("a gitlink"), "{}", odd[4].rule());
        assert_eq!(
            changes,
            [],
            "the day file is unchanged (moved into its year folder)"
        );
        let mut fresh = Trees::new(&repo).unwrap();
        let files = fresh.files(root, "").unwrap();
        assert_eq!(
            files,
            [("_librarian/sessions/2026-01-01.md".to_string(), a)]
        );
        assert!(!fresh.raw.contains_key(&outside), "no odd folder was read");
        for gone in [
            "_librarian/sessions/2026-01-02.md",
            "_librarian/sessions/2026-01-03.md",
        ] {
            assert_eq!(fresh.entry(root, gone).unwrap(), None, "{gone}");
        }
        assert_eq!(fresh.moved_to_years(root).unwrap(), None);
    }

    /// A tree of `files` (path → one content byte) written from scratch.
    fn build(repo: &Repository, trees: &mut Trees<'_>, files: &BTreeMap<String, u8>) -> ObjectId {
        let edits: Vec<(String, ObjectId)> = files
            .iter()
            .map(|(p, c)| (p.clone(), repo.blob(&[*c]).unwrap().to_id()))
            .collect();
        trees.write(None, &edits).unwrap()
    }

    /// Paths from a small alphabet, so trees share long runs of entries, with names that sort
    /// around each other (`2026-01-01.a.md`, `2026-01-01.a-b.md`, `positions`, `positions/…`),
    /// and entries that are not record files (which `changes` skips).
    fn tree_files() -> impl Strategy<Value = BTreeMap<String, u8>> {
        let path = prop::sample::select(vec![
            "_librarian/note-identity.md".to_string(),
            "_librarian/stateful-use.jsonl".to_string(),
            "_librarian/verify-acks.jsonl".to_string(),
            "_librarian/positions/2026-01.md".to_string(),
            "_librarian/positions/2026-02.md".to_string(),
            "_librarian/sessions/2026-01-01.md".to_string(),
            "_librarian/sessions/2026-01-01.a.md".to_string(),
            "_librarian/sessions/2026-01-01.a-b.md".to_string(),
            format!("cited/ab/ab{}", "0".repeat(62)),
            format!("cited/ab/ab{}", "1".repeat(62)),
            format!("cited/ac/ac{}", "2".repeat(62)),
            "_librarian/junk.md".to_string(),
            "_librarian/positions/x.md".to_string(),
            "top".to_string(),
        ]);
        prop::collection::btree_map(path, 0u8..3, 0..24)
    }

    proptest! {
        /// Skipping the identical head and tail finds exactly what a full comparison finds.
        #[test]
        fn changes_match_a_full_comparison(old in tree_files(), new in tree_files()) {
            let t = tempfile::tempdir().unwrap();
            let repo = Repository::init(t.path()).unwrap();
            let mut trees = Trees::new(&repo).unwrap();
            let (a, b) = (build(&repo, &mut trees, &old), build(&repo, &mut trees, &new));
            let mut got = trees.changes(Some(a), Some(b)).unwrap();
            got.sort_by(|x, y| x.path.cmp(&y.path));
            let blob = |c: Option<&u8>| c.map(|c| repo.blob(&[*c]).unwrap().to_id());
            let want: Vec<Change> = old
                .keys()
                .chain(new.keys())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .filter(|p| old.get(*p) != new.get(*p) && paths::stored_file(p).is_some())
                .map(|p| Change { path: p.clone(), old: blob(old.get(p)), new: blob(new.get(p)) })
                .collect();
            prop_assert_eq!(got, want);
        }
    }

    /// Stored trees mixing day files in the sessions folder, in their year folder, in a wrong
    /// year's folder, and other files.
    fn stored_files() -> impl Strategy<Value = BTreeMap<String, u8>> {
        let path = prop::sample::select(vec![
            "_librarian/sessions/2026-01-01.md",
            "_librarian/sessions/2026-01-02.md",
            "_librarian/sessions/2025-12-31.laptop-1.md",
            "_librarian/sessions/2026/2026-01-01.md",
            "_librarian/sessions/2026/2026-01-02.md",
            "_librarian/sessions/2025/2025-12-31.laptop-1.md",
            "_librarian/sessions/2025/2026-01-01.md",
            "_librarian/sessions/notes.md",
            "_librarian/note-identity.md",
            "cited/ab/ab00000000000000000000000000000000000000000000000000000000000000",
            "cited/ab/abcd",
        ]);
        prop::collection::btree_map(path.prop_map(str::to_string), 0u8..3, 0..10)
    }

    /// What a reader sees of a stored tree: a day file in the sessions folder itself wins over
    /// the one in its year folder; every other record file is at its stored path; what is not
    /// a record file (a misplaced day file, another name) is not seen.
    fn seen(stored: &BTreeMap<String, u8>) -> BTreeMap<String, u8> {
        let mut out = BTreeMap::new();
        for (p, c) in stored {
            match paths::from_year_path(p) {
                Some(flat) if stored.contains_key(&flat) => {}
                Some(flat) => {
                    out.insert(flat, *c);
                }
                None if paths::stored_file(p).is_some() => {
                    out.insert(p.clone(), *c);
                }
                None => {}
            }
        }
        out
    }

    fn store(repo: &Repository, trees: &mut Trees<'_>, files: &BTreeMap<String, u8>) -> ObjectId {
        let edits: Vec<Placed> = files
            .iter()
            .map(|(p, c)| {
                (
                    p.clone(),
                    FILE_MODE,
                    Some(repo.blob(&[*c]).unwrap().to_id()),
                )
            })
            .collect();
        trees.write_at(None, &edits).unwrap()
    }

    #[test]
    fn day_files_are_written_to_their_year_unless_the_sessions_folder_holds_them() {
        let t = tempfile::tempdir().unwrap();
        let repo = Repository::init(t.path()).unwrap();
        let (a, b) = (
            repo.blob(b"a").unwrap().to_id(),
            repo.blob(b"b").unwrap().to_id(),
        );
        let mut trees = Trees::new(&repo).unwrap();
        let day = "_librarian/sessions/2026-11-30.md".to_string();
        let fresh = trees.write(None, &[(day.clone(), a)]).unwrap();
        assert!(trees
            .raw_entry(fresh, "_librarian/sessions/2026/2026-11-30.md")
            .unwrap()
            .is_some());
        assert_eq!(trees.entry(fresh, &day).unwrap(), Some((a, false)));
        let old = store(&repo, &mut trees, &BTreeMap::from([(day.clone(), 0)]));
        let next = trees.write(Some(old), &[(day.clone(), b)]).unwrap();
        assert_eq!(trees.raw_entry(next, &day).unwrap(), Some((b, false)));
        assert!(trees
            .raw_entry(next, "_librarian/sessions/2026")
            .unwrap()
            .is_none());
        let moved = trees.moved_to_years(next).unwrap().unwrap();
        assert!(trees.changes(Some(next), Some(moved)).unwrap().is_empty());
        assert_eq!(
            trees.moved_to_years(moved).unwrap(),
            None,
            "nothing left to move"
        );
    }

    proptest! {
        /// Every reader sees a stored tree as [`seen`] says, moving day files into year folders
        /// changes nothing a reader sees, and changes between two stored trees are exactly the
        /// differences of what a reader sees.
        #[test]
        fn readers_see_day_files_wherever_the_tree_keeps_them(old in stored_files(), new in stored_files()) {
            let t = tempfile::tempdir().unwrap();
            let repo = Repository::init(t.path()).unwrap();
            let mut trees = Trees::new(&repo).unwrap();
            let (a, b) = (store(&repo, &mut trees, &old), store(&repo, &mut trees, &new));
            let blob = |c: Option<&u8>| c.map(|c| repo.blob(&[*c]).unwrap().to_id());
            let (seen_a, seen_b) = (seen(&old), seen(&new));
            let listed: Vec<(String, ObjectId)> = seen_a.iter().map(|(p, c)| (p.clone(), blob(Some(c)).unwrap())).collect();
            let mut files = trees.files(a, "").unwrap();
            files.sort();
            prop_assert_eq!(files, listed);
            for (p, c) in &seen_a {
                prop_assert_eq!(trees.entry(a, p).unwrap(), Some((blob(Some(c)).unwrap(), false)));
            }
            let mut got = trees.changes(Some(a), Some(b)).unwrap();
            got.sort_by(|x, y| x.path.cmp(&y.path));
            let want: Vec<Change> = seen_a
                .keys()
                .chain(seen_b.keys())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .filter(|p| seen_a.get(*p) != seen_b.get(*p))
                .map(|p| Change { path: p.clone(), old: blob(seen_a.get(p)), new: blob(seen_b.get(p)) })
                .collect();
            prop_assert_eq!(got, want);
            if let Some(moved) = trees.moved_to_years(a).unwrap() {
                prop_assert!(trees.changes(Some(a), Some(moved)).unwrap().is_empty());
                let (mut after, mut before) = (trees.files(moved, "").unwrap(), trees.files(a, "").unwrap());
                after.sort();
                before.sort();
                prop_assert_eq!(after, before);
                let flat_left = trees
                    .stored_files(moved, "")
                    .unwrap()
                    .into_iter()
                    .any(|(p, _)| paths::year_path(&p).is_some());
                prop_assert!(!flat_left);
            }
        }
    }
}
