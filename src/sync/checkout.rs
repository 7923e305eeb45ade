//! Bringing the working record files to a tip that sync set (spec/sync.md, "Working files").
//!
//! A working file is replaced by its new committed version only when it holds no edit: it is
//! the old committed version, maybe followed by lines not committed yet (a capture that timed
//! out on the lock while sync held it, use-log lines of the MCP server). Those lines are kept
//! and written again after the new version, and the pending journal's offsets follow them. A
//! file that is a line-prefix of the new version is behind and is brought up; one that already
//! holds the new version (and lines after it) is left as it is. A file with any other
//! difference, a missing or symlinked one, is left alone and reported.

use crate::fsx::{Dir, FsError};
use crate::objectid::ObjectId;
use crate::overlay::OverlayError;
use crate::recorder::Recorder;
use crate::store::tree::Trees;
use crate::store::{Store, StoreError};
use std::io::{Read, Seek, SeekFrom, Write};

/// What happened to the working files.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Checkout {
    /// Files written with their new committed version (created or replaced).
    pub updated: Vec<String>,
    /// Files left as they were, with why.
    pub left_alone: Vec<(String, String)>,
    /// Those of them that were deleted from the working tree (`restore` writes them; there is
    /// no edit to move aside).
    pub deleted: Vec<String>,
    /// Uncommitted lines written again after a new version (lines, not bytes).
    pub kept_lines: usize,
}

impl Checkout {
    /// Adds what another pass did.
    pub(crate) fn extend(&mut self, other: Checkout) {
        self.updated.extend(other.updated);
        self.left_alone.extend(other.left_alone);
        self.deleted.extend(other.deleted);
        self.kept_lines += other.kept_lines;
    }
}

/// What a working file was last brought to, as far as this machine knows.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Was<'a> {
    /// These committed bytes.
    Committed(&'a [u8]),
    /// Nothing: the file is new to this machine.
    New,
    /// Not known (a vault whose checkouts were never noted): only a file that is missing or
    /// behind is written, nothing else is touched or reported.
    Unknown,
}

/// Updates the working record files from the tree `old` (what they were committed as) to the
/// tree `new`. The caller holds the capture lock.
pub(crate) fn check_out(
    store: &Store,
    trees: &mut Trees<'_>,
    old: ObjectId,
    new: ObjectId,
    recorder: &Recorder<'_>,
) -> Result<Checkout, StoreError> {
    let mut out = Checkout::default();
    let root = Dir::open(store.root())?;
    for ch in trees.changes(Some(old), Some(new))? {
        let Some(new_blob) = ch.new else { continue };
        // `cited/` copies stay in the ref; nothing but a record file is ever written.
        if crate::records::paths::working_file(&ch.path).is_none() {
            continue;
        }
        let committed = match ch.old {
            Some(o) => Some(trees.blob(o)?.to_vec()),
            None => None,
        };
        let was = committed.as_deref().map_or(Was::New, Was::Committed);
        let next = trees.blob(new_blob)?;
        let outcome = update_file(&root, &ch.path, was, &next, recorder);
        note(&mut out, ch.path, outcome)?;
    }
    Ok(out)
}

/// Brings every record file of the tree `tip` that is missing or behind in the working tree
/// up to it, when nothing says what the files were last brought to (spec/sync.md, "Working
/// files"): a file that holds the committed version, more, or something else is not touched.
/// A missing file is written unless it is one this machine writes (its own or an untagged day
/// file: deleted here, a `verify` finding). The caller holds the capture lock.
pub(crate) fn bring_up(
    store: &Store,
    trees: &mut Trees<'_>,
    tip: ObjectId,
    recorder: &Recorder<'_>,
) -> Result<Checkout, StoreError> {
    let mut out = Checkout::default();
    let root = Dir::open(store.root())?;
    let own = crate::machine::read(store.state_dir());
    for (path, blob) in trees.files(tip, crate::records::paths::OVERLAY_DIR)? {
        if crate::records::paths::working_file(&path).is_none() {
            continue;
        }
        let (size, _) = store.object_header(blob)?;
        match working_size(&root, &path) {
            Some(len) if len >= size as u64 => continue,
            None if writes_here(&path, own.as_deref()) => continue,
            _ => {}
        }
        let next = trees.blob(blob)?;
        let outcome = update_file(&root, &path, Was::Unknown, &next, recorder);
        note(&mut out, path, outcome)?;
    }
    Ok(out)
}

/// Adds one file's outcome to `out`.
fn note(
    out: &mut Checkout,
    path: String,
    outcome: Result<Outcome, FsError>,
) -> Result<(), StoreError> {
    match outcome {
        Ok(Outcome::Written(kept)) => {
            out.kept_lines += kept;
            out.updated.push(path);
        }
        Ok(Outcome::Same | Outcome::Untouched) => {}
        Ok(Outcome::Left(why)) => out.left_alone.push((path, why)),
        Ok(Outcome::Deleted) => {
            out.left_alone
                .push((path.clone(), "it was deleted from the working tree".into()));
            out.deleted.push(path);
        }
        Err(e @ (FsError::Symlink(_) | FsError::WrongKind(_))) => {
            out.left_alone.push((path, e.to_string()))
        }
        Err(e) => return Err(e.into()),
    }
    Ok(())
}

/// The size of a working record file (`None`: missing or unreadable as a regular file).
fn working_size(root: &Dir, path: &str) -> Option<u64> {
    let (dir, name) = crate::overlay::folder_in(root, path, false).ok()?;
    let (size, _, regular) = dir.stat(name)?;
    regular.then_some(size)
}

/// Whether this machine's captures append to `path`: its own day files, and untagged ones (a
/// vault's files from before sync was set up). Such a file missing was deleted here.
fn writes_here(path: &str, own: Option<&str>) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    match crate::records::paths::split_day_file_name(name) {
        Some((_, None)) => true,
        Some((_, Some(tag))) => Some(tag) == own,
        None => false,
    }
}

/// Whether `a` holds all of `b` followed by whole lines (or nothing).
fn holds(a: &[u8], b: &[u8]) -> bool {
    a.starts_with(b) && (b.is_empty() || b.ends_with(b"\n"))
}

fn update_file(
    root: &Dir,
    path: &str,
    was: Was<'_>,
    next: &[u8],
    recorder: &Recorder<'_>,
) -> Result<Outcome, FsError> {
    let (dir, name) = match crate::overlay::folder_in(root, path, true) {
        Ok(found) => found,
        Err(OverlayError::Fs(e)) => return Err(e),
        Err(e) => return Ok(Outcome::Left(e.to_string())),
    };
    let Some(mut old_file) = dir.open_read(name)? else {
        return missing(&dir, name, was, next);
    };
    let mut working = Vec::new();
    old_file
        .read_to_end(&mut working)
        .map_err(|e| io(&dir, name, e))?;
    // Already there, perhaps followed by lines not committed yet.
    if working == next || holds(&working, next) {
        return Ok(Outcome::Same);
    }
    // Behind (a sync that moved the ref and stopped before it got here): what the file
    // holds is where it stands in the new version, whatever it was committed as.
    let header = header_for(path);
    let base: &[u8] = match was {
        _ if holds(next, &working) => &working,
        Was::Unknown => return Ok(Outcome::Untouched),
        Was::Committed(c) => c,
        Was::New => header.as_bytes(),
    };
    let Some(extra) = working.strip_prefix(base).map(<[u8]>::to_vec) else {
        return Ok(Outcome::Left(not_committed()));
    };
    // Only whole lines were added (another writer's own day file, a fast-forward): append
    // them, so no byte of the working file is rewritten.
    if extra.is_empty() && holds(next, &working) {
        let mut f = dir.open_append(name)?;
        // Unless a capture that timed out on the lock appended meanwhile: then the file is
        // rewritten below, with its line kept after the new version.
        if f.len == working.len() as u64 {
            f.file
                .write_all(&next[working.len()..])
                .map_err(|e| io(&dir, name, e))?;
            return Ok(Outcome::Written(0));
        }
    }
    let mut bytes = next.to_vec();
    if !extra.is_empty() && !bytes.is_empty() && !bytes.ends_with(b"\n") {
        bytes.push(b'\n');
    }
    let moved_to = bytes.len() as u64;
    bytes.extend_from_slice(&extra);
    dir.write_atomic(name, &bytes)?;
    // A capture that timed out on the lock may have appended to the old file between the
    // read and the rename: carry what it wrote over.
    let mut late = Vec::new();
    old_file
        .seek(SeekFrom::Start(working.len() as u64))
        .and_then(|_| old_file.read_to_end(&mut late))
        .map_err(|e| io(&dir, name, e))?;
    if !late.is_empty() {
        let mut f = dir.open_append(name)?;
        f.file.write_all(&late).map_err(|e| io(&dir, name, e))?;
    }
    let shift = moved_to as i64 - base.len() as i64;
    recorder.shift_pending(path, base.len() as u64, shift);
    let kept = extra.iter().chain(&late).filter(|&&b| b == b'\n').count();
    Ok(Outcome::Written(kept))
}

/// A record file missing from the working tree: written when it is new to this machine (or
/// may be), left alone when it was brought here and has been deleted since.
fn missing(dir: &Dir, name: &str, was: Was<'_>, next: &[u8]) -> Result<Outcome, FsError> {
    Ok(match was {
        Was::Committed(_) => Outcome::Deleted,
        Was::New | Was::Unknown if dir.create_new(name, next)? => Outcome::Written(0),
        Was::New | Was::Unknown => Outcome::Left("it appeared while sync was writing it".into()),
    })
}
/// What happened to one file.
enum Outcome {
    Written(usize),
    Same,
    /// Not brought up and not reported: what it was is not known (`verify` reports it).
    Untouched,
    Left(String),
    /// Committed here and deleted since: left alone.
    Deleted,
}

/// The bytes every copy of a record file starts with: a day file's or the ledger's header.
fn header_for(path: &str) -> std::borrow::Cow<'static, str> {
    match crate::records::paths::day_of(path) {
        Some(day) => crate::records::dayfile::header(day).into(),
        None if path == crate::records::ledger::LEDGER_PATH => {
            crate::records::ledger::header().into()
        }
        None => "".into(),
    }
}

fn not_committed() -> String {
    "it has edits that are not committed; `git rutter verify` shows them".into()
}

fn io(dir: &Dir, name: &str, source: std::io::Error) -> FsError {
    FsError::Io {
        path: dir.path().join(name),
        source,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::journal::{Journal, PendingAppend, RecordKind};
    use std::os::unix::fs::MetadataExt;

    const DAY: &str = "_librarian/sessions/2026-11-30.md";

    /// A vault that is a git repository, with its store and journal.
    pub(crate) fn vault() -> (tempfile::TempDir, Store, Journal) {
        let t = tempfile::tempdir().unwrap();
        git2::Repository::init(t.path()).unwrap();
        let v = crate::vault::open(t.path(), crate::vault::VaultSource::Flag).unwrap();
        let store = Store::open(&v).unwrap();
        let journal = Journal::open(store.state_dir()).unwrap();
        (t, store, journal)
    }

    fn tree(store: &Store, files: &[(&str, &str)]) -> ObjectId {
        let edits: Vec<(String, ObjectId)> = files
            .iter()
            .map(|(p, t)| (p.to_string(), store.write_blob(t.as_bytes()).unwrap()))
            .collect();
        store.trees().unwrap().write(None, &edits).unwrap()
    }

    fn write(store: &Store, path: &str, text: &str) {
        let p = store.root().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn read(store: &Store, path: &str) -> String {
        std::fs::read_to_string(store.root().join(path)).unwrap_or_default()
    }

    fn run(store: &Store, _journal: &Journal, old: ObjectId, new: ObjectId) -> Checkout {
        let recorder = Recorder::lock(store, crate::lock::INTERACTIVE_WAIT).unwrap();
        let mut trees = store.trees().unwrap();
        check_out(store, &mut trees, old, new, &recorder).unwrap()
    }

    #[test]
    fn uncommitted_lines_are_kept_after_the_new_version_and_their_journal_follows() {
        let (_t, store, journal) = vault();
        let old = tree(&store, &[(DAY, "H\na\n")]);
        let new = tree(&store, &[(DAY, "H\nb\na\n")]);
        // The journal only lists records that hold a well-formed line (spec/ref-layout.md).
        let id = "20261130T120000000Z";
        let p = crate::records::line::render(&crate::records::Entry {
            id: id.into(),
            session_id: None,
            time: "2026-11-30T12:00:00.000Z".into(),
            summary: "P".into(),
            refs: vec![],
            workspace: None,
            client: None,
            supersedes: None,
            extra: Default::default(),
        });
        write(&store, DAY, &format!("H\na\n{p}\n"));
        let mut rec = PendingAppend::new(RecordKind::Capture, DAY, "2026-11-30", id);
        (rec.offset, rec.bytes, rec.line) = (4, format!("{p}\n"), p.clone());
        journal.add(&rec).unwrap();
        let out = run(&store, &journal, old, new);
        assert_eq!(out.updated, [DAY]);
        assert_eq!(out.kept_lines, 1);
        assert_eq!(read(&store, DAY), format!("H\nb\na\n{p}\n"));
        let (records, _) = journal.list().unwrap();
        assert_eq!(
            records[0].1.offset, 6,
            "the journal points at the line's new place"
        );
    }

    #[test]
    fn a_file_that_only_grew_is_appended_to_in_place() {
        let (_t, store, journal) = vault();
        let old = tree(&store, &[(DAY, "H\na\n")]);
        let new = tree(&store, &[(DAY, "H\na\nb\n")]);
        write(&store, DAY, "H\na\n");
        let inode = std::fs::metadata(store.root().join(DAY)).unwrap().ino();
        run(&store, &journal, old, new);
        assert_eq!(read(&store, DAY), "H\na\nb\n");
        let after = std::fs::metadata(store.root().join(DAY)).unwrap().ino();
        assert_eq!(inode, after, "not replaced: no byte was rewritten");
    }

    #[test]
    fn edited_deleted_and_symlinked_files_are_left_alone_and_new_ones_written() {
        let (_t, store, journal) = vault();
        let (edited, gone, link, fresh) = (
            "_librarian/sessions/2026-11-28.md",
            "_librarian/sessions/2026-11-29.md",
            "_librarian/note-identity.md",
            "_librarian/sessions/2026-11-30.laptop-0001.md",
        );
        let old = tree(
            &store,
            &[(edited, "H\na\n"), (gone, "H\na\n"), (link, "L\n")],
        );
        let new = tree(
            &store,
            &[
                (edited, "H\na\nb\n"),
                (gone, "H\na\nb\n"),
                (link, "L\nM\n"),
                (fresh, "F\n"),
            ],
        );
        write(&store, edited, "H\nA, edited\n");
        write(&store, "elsewhere", "L\n");
        std::os::unix::fs::symlink(store.root().join("elsewhere"), store.root().join(link))
            .unwrap();
        let out = run(&store, &journal, old, new);
        assert_eq!(out.updated, [fresh]);
        assert_eq!(read(&store, fresh), "F\n");
        let left: Vec<&str> = out.left_alone.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(left, [link, edited, gone]);
        assert_eq!(read(&store, edited), "H\nA, edited\n");
        assert!(
            !store.root().join(gone).exists(),
            "a deleted file is not brought back"
        );
        assert_eq!(
            read(&store, "elsewhere"),
            "L\n",
            "never written through a symlink"
        );
    }

    #[test]
    fn a_file_never_committed_here_keeps_its_lines_after_the_new_version() {
        let (_t, store, journal) = vault();
        let header = crate::records::dayfile::header("2026-11-30");
        let old = tree(&store, &[]);
        let new = tree(&store, &[(DAY, &format!("{header}- remote\n"))]);
        write(&store, DAY, &format!("{header}- local\n"));
        run(&store, &journal, old, new);
        assert_eq!(read(&store, DAY), format!("{header}- remote\n- local\n"));
    }

    /// A record that wrote a new file's header keeps a well-formed record once the file is
    /// replaced by another machine's version: the journal still lists it (not refused), and it
    /// points at its line.
    #[test]
    fn a_record_that_wrote_the_header_stays_well_formed_after_the_new_version() {
        let (_t, store, journal) = vault();
        let header = crate::records::dayfile::header("2026-11-30");
        let id = "20261130T120000000Z";
        let line = crate::records::line::render(&crate::records::Entry {
            id: id.into(),
            session_id: None,
            time: "2026-11-30T12:00:00.000Z".into(),
            summary: "Local.".into(),
            refs: vec![],
            workspace: None,
            client: None,
            supersedes: None,
            extra: Default::default(),
        });
        let old = tree(&store, &[(DAY, "---\n")]);
        let new = tree(&store, &[(DAY, &format!("{header}- remote\n"))]);
        write(&store, DAY, &format!("{header}{line}\n"));
        let mut rec = PendingAppend::new(RecordKind::Capture, DAY, "2026-11-30", id);
        (rec.offset, rec.bytes, rec.line) = (0, format!("{header}{line}\n"), line.clone());
        journal.add(&rec).unwrap();
        run(&store, &journal, old, new);
        let text = read(&store, DAY);
        let (records, refused) = journal.list().unwrap();
        assert!(refused.is_empty(), "{refused:?}");
        assert_eq!(records.len(), 1);
        let r = &records[0].1;
        assert_eq!(r.bytes, format!("{line}\n"));
        assert_eq!(
            text.get(r.offset as usize..),
            Some(r.bytes.as_str()),
            "{text}"
        );
    }

    #[test]
    fn a_file_that_holds_the_new_version_and_more_is_left_as_it_is() {
        let (_t, store, journal) = vault();
        // The tree the files were last brought to lags the captures committed since.
        let old = tree(&store, &[(DAY, "H\na\n")]);
        let new = tree(&store, &[(DAY, "H\na\nb\n")]);
        write(&store, DAY, "H\na\nb\npending\n");
        let out = run(&store, &journal, old, new);
        assert_eq!(out, Checkout::default());
        assert_eq!(read(&store, DAY), "H\na\nb\npending\n", "nothing doubled");
    }

    #[test]
    fn a_file_behind_the_new_version_is_brought_up_whatever_it_was_committed_as() {
        let (_t, store, journal) = vault();
        let old = tree(&store, &[(DAY, "H\na\nb\n")]);
        let new = tree(&store, &[(DAY, "H\na\nb\nc\n")]);
        // Behind even what it was committed as: a line-prefix of the new version is never
        // called an edit.
        write(&store, DAY, "H\na\n");
        let out = run(&store, &journal, old, new);
        assert_eq!(out.updated, [DAY]);
        assert_eq!(read(&store, DAY), "H\na\nb\nc\n");
        // Cut inside a line, it is an edit all the same.
        write(&store, DAY, "H\na\nb");
        let out = run(&store, &journal, old, new);
        assert_eq!(out.left_alone.len(), 1, "{out:?}");
    }

    #[test]
    fn bringing_up_writes_what_is_missing_or_behind_and_touches_nothing_else() {
        let (_t, store, _journal) = vault();
        crate::machine::ensure(store.state_dir()).unwrap();
        let own_tag = crate::machine::read(store.state_dir()).unwrap();
        let own = format!("_librarian/sessions/2026-11-30.{own_tag}.md");
        let (theirs, behind, edited, more, untagged) = (
            "_librarian/sessions/2026-11-30.laptop-0001.md",
            "_librarian/sessions/2026-11-29.laptop-0001.md",
            "_librarian/sessions/2026-11-28.laptop-0001.md",
            "_librarian/sessions/2026-11-27.laptop-0001.md",
            "_librarian/sessions/2026-11-26.md",
        );
        let tip = tree(
            &store,
            &[
                (theirs, "T\n"),
                (behind, "H\na\nb\n"),
                (edited, "H\na\n"),
                (more, "H\na\n"),
                (untagged, "U\n"),
                (&own, "O\n"),
            ],
        );
        write(&store, behind, "H\na\n");
        write(&store, edited, "H\nA\n");
        write(&store, more, "H\na\npending\n");
        let mut trees = store.trees().unwrap();
        let recorder = Recorder::lock(&store, crate::lock::INTERACTIVE_WAIT).unwrap();
        let out = bring_up(&store, &mut trees, tip, &recorder).unwrap();
        assert_eq!(out.updated, [behind, theirs]);
        assert!(out.left_alone.is_empty(), "{out:?}");
        assert_eq!(read(&store, theirs), "T\n");
        assert_eq!(read(&store, behind), "H\na\nb\n");
        assert_eq!(read(&store, edited), "H\nA\n");
        assert_eq!(read(&store, more), "H\na\npending\n");
        for deleted_here in [untagged, own.as_str()] {
            assert!(!store.root().join(deleted_here).exists(), "{deleted_here}");
        }
    }
}
