//! The working-tree check: every committed record file must still begin with its committed
//! bytes. Complete record lines after them are *pending* when the pending journal holds them
//! (or, for the use log, which has no journal, always) and *unverified* when it does not: no
//! capture wrote them, and `git rutter commit` never commits them. Anything else is *edited
//! after commit*, reported per entry with a line diff. A deleted, truncated or symlinked file is
//! reported as such, and so is a record folder (`_librarian/`, `_librarian/sessions/`) replaced
//! by a symlink: every file is read through [`Dir`] handles that never follow one.

use super::cache::{Stamps, VerifyCache};
use super::finding::{Finding, Kind};
use super::history::changed_ids;
use crate::fsx::{Dir, FsError};
use crate::journal::Journal;
use crate::objectid::ObjectId;
use crate::records::paths::day_of;
use crate::records::{dayfile, fingerprint, grammar, ledger, line, paths, retraction};
use crate::store::{Store, StoreError};
use rustix::fs::{self as rfs, AtFlags, FileType};
use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::os::unix::fs::MetadataExt;

/// The folders that hold record files, outermost first.
const FOLDERS: [&str; 2] = ["_librarian", paths::SESSIONS_DIR];

/// Runs the working-tree check against the tip.
pub fn check(
    store: &Store,
    tip: ObjectId,
    cache: &mut VerifyCache,
    only_days: Option<&std::collections::BTreeSet<String>>,
) -> Result<Vec<Finding>, StoreError> {
    let mut found = check_files(store, tip, &mut cache.stamps, only_days)?;
    attribute(&mut found, cache);
    Ok(found)
}

/// [`check`] without naming the commit that added each changed entry ([`attribute`] does,
/// once the history walk has learnt them): what runs beside the walk.
pub(crate) fn check_files(
    store: &Store,
    tip: ObjectId,
    stamps: &mut Stamps,
    only_days: Option<&std::collections::BTreeSet<String>>,
) -> Result<Vec<Finding>, StoreError> {
    let wanted = |path: &str| {
        only_days.is_none_or(|days| paths::stem_of(path).is_some_and(|s| days.contains(s)))
    };
    // Only the wanted day files are looked up and stat'ed, not the 3,650 others.
    let committed = match only_days {
        None => store.record_files(tip)?,
        Some(days) => store
            .committed_days_of(tip, days)?
            .into_iter()
            .map(|(stem, oid)| (paths::day_file(&stem), oid))
            .collect(),
    };
    let journalled = journal_lines(store);
    let (mut findings, broken) = folders(store, &committed);
    let under_broken = |p: &str| broken.iter().any(|f| p.starts_with(&format!("{f}/")));
    let known: HashSet<&str> = committed.iter().map(|(p, _)| p.as_str()).collect();
    let uncommitted: Vec<String> = match only_days {
        None => store.uncommitted_record_files(&known),
        Some(days) => days
            .iter()
            .filter(|d| paths::split_day_stem(d).is_some())
            .map(|d| paths::day_file(d))
            .filter(|p| !known.contains(p.as_str()) && store.has_working_file(p))
            .collect(),
    };
    for path in uncommitted {
        if under_broken(&path) || !wanted(&path) {
            continue;
        }
        let bytes = store.working(&path).unwrap_or_default();
        findings.extend(uncommitted_file(store, tip, &path, &bytes, &journalled)?);
    }
    let mut folders = Folders::default();
    for (path, blob) in committed {
        if !under_broken(&path) {
            findings.extend(file(store, &mut folders, &path, blob, &journalled, stamps)?);
        }
    }
    Ok(findings)
}

/// A record file no commit holds: the lines after its own header are pending or unverified
/// ([`extra`]). A day file that starts with another day's header is that day's file renamed or
/// copied by hand: one finding names it and the day it belongs to, and the lines that day's
/// committed files hold are not reported again one by one (spec/verify.md).
fn uncommitted_file(
    store: &Store,
    tip: ObjectId,
    path: &str,
    bytes: &[u8],
    journalled: &HashSet<String>,
) -> Result<Vec<Finding>, StoreError> {
    let own = header_for(path);
    if let Some(rest) = bytes.strip_prefix(own.as_bytes()) {
        return Ok(extra(path, rest, journalled));
    }
    let Some(day) = foreign_day(path, bytes) else {
        return Ok(extra(path, bytes, journalled));
    };
    let files: Vec<(String, ObjectId)> = store
        .committed_days(tip)?
        .into_iter()
        .filter(|(stem, _)| paths::split_day_stem(stem).is_some_and(|(d, _)| d == day))
        .collect();
    let mut committed = Vec::new();
    for (_, blob) in &files {
        committed.extend(store.blob(*blob)?);
        committed.push(b'\n');
    }
    let lines: HashSet<&[u8]> = committed.split(|b| *b == b'\n').collect();
    let rest = &bytes[dayfile::header(day).len()..];
    let (mut copied, mut others) = (0, Vec::new());
    for (_, _, l) in crate::textblock::lines(rest) {
        match l.strip_suffix(b"\n") {
            Some(text) if !text.is_empty() && lines.contains(text) => copied += 1,
            _ => others.extend_from_slice(l),
        }
    }
    let held: Vec<String> = files.iter().map(|(s, _)| paths::day_file(s)).collect();
    let (held, back) = match held.first() {
        Some(first) => (
            format!(
                " and {copied} of the lines committed in {}",
                held.join(", ")
            ),
            first.clone(),
        ),
        None => (String::new(), paths::day_file(day)),
    };
    let detail = format!(
        "{path} is in no commit: it holds the day file of {day} (its header{held}), as a day file \
         renamed or copied by hand does. If {back} is missing, move this file back to it; else \
         delete this file. The record itself is intact."
    );
    let id = text_id(&String::from_utf8_lossy(bytes));
    let mut found = vec![whole_file(Kind::Unparseable, path, &id, detail)];
    found[0].day = day_of(path).map(str::to_string);
    found.extend(extra(path, &others, journalled));
    Ok(found)
}

/// The day whose `@2` header a day file at `path` starts with, when that is another day than
/// the one its name says.
fn foreign_day<'b>(path: &str, bytes: &'b [u8]) -> Option<&'b str> {
    let own = day_of(path)?;
    let at = memchr::memmem::find(&bytes[..bytes.len().min(200)], b"\nday: '")? + 7;
    let day = std::str::from_utf8(bytes.get(at..at + 10)?).ok()?;
    let foreign = day != own && crate::clock::is_day(day);
    (foreign && bytes.starts_with(dayfile::header(day).as_bytes())).then_some(day)
}

/// How many day files [`outstanding`] checks: the newest, which captures append to.
pub(crate) const OUTSTANDING_DAYS: usize = 7;

/// The working-tree findings `verify` would report now that count (acknowledged and pending
/// ones left out), for `status`, without changing the verify cache and at a cost that does
/// not grow with the record: the [`OUTSTANDING_DAYS`] newest committed day files (the ones
/// captures append to, and that `git clean -x` takes with the rest) are checked as `verify`
/// checks them. An older day file changed by hand is `verify`'s to find.
pub(crate) fn outstanding(store: &Store, tip: ObjectId) -> Result<Vec<Finding>, StoreError> {
    let newest: std::collections::BTreeSet<String> = store
        .newest_days(tip, OUTSTANDING_DAYS)?
        .iter()
        .filter_map(|(p, _)| paths::stem_of(p).map(str::to_string))
        .collect();
    let mut cache = VerifyCache::load_days(store.worktree_state_dir(), false, true);
    let mut found = check_files(store, tip, &mut cache.stamps, Some(&newest))?;
    super::finding::acknowledge(&mut found, store.root());
    found.retain(Finding::counts);
    Ok(found)
}

/// The finding of a committed record file missing from the working tree.
fn deleted(store: &Store, path: &str, blob: ObjectId) -> Finding {
    let detail = format!(
        "{path} is committed but missing from the working tree ({})",
        summary(store, path, blob)
    );
    whole_file(Kind::Deleted, path, &incident(blob), detail)
}

/// Names, on each entry found edited or truncated, the commit that added it, when the history
/// walk has seen it.
pub(crate) fn attribute(found: &mut [Finding], cache: &mut VerifyCache) {
    let changed = |f: &&mut Finding| matches!(f.kind, Kind::Edited | Kind::Truncated);
    for f in found.iter_mut().filter(changed) {
        if let Some(id) = &f.entry {
            f.commit = cache.entries().get(id).map(crate::shortid::short);
        }
    }
}

/// The complete record lines of the working tree that no capture wrote (`unverified`
/// findings), for `git rutter commit` to name what it leaves out; one the user acknowledged
/// (`verify --ack`) is known and explained, and left out. Reads the verify cache without
/// changing it.
pub fn unjournalled(store: &Store) -> Result<Vec<Finding>, StoreError> {
    let Some(tip) = store.tip()? else {
        return Ok(vec![]);
    };
    let mut cache = VerifyCache::load(store.state_dir(), false);
    let mut found = check(store, tip, &mut cache, None)?;
    super::finding::acknowledge(&mut found, store.root());
    found.retain(|f| f.kind == Kind::Unverified && f.counts());
    Ok(found)
}

/// A record folder replaced by a symlink (or by anything that is not a directory) is one
/// finding naming the folder; no file under it is read (a folder moved elsewhere and linked
/// back would otherwise read as intact). Returns the findings and the broken folders.
fn folders(store: &Store, committed: &[(String, ObjectId)]) -> (Vec<Finding>, Vec<&'static str>) {
    let Ok(root) = Dir::open(store.root()) else {
        return (vec![], vec![]);
    };
    let mut findings = Vec::new();
    let mut broken: Vec<&'static str> = Vec::new();
    for folder in FOLDERS {
        if broken.iter().any(|b| folder.starts_with(&format!("{b}/"))) {
            continue;
        }
        let what = match root.open_dir(folder, false) {
            Err(FsError::Symlink(_)) => "replaced by a symbolic link",
            Err(FsError::WrongKind(_)) => "replaced by something that is not a folder",
            _ => continue,
        };
        broken.push(folder);
        let held = committed
            .iter()
            .filter(|(p, _)| p.starts_with(&format!("{folder}/")))
            .count();
        let detail = format!(
            "{folder}/ was {what}, holding {held} committed record file(s); rutter never reads or writes through it. Put the real folder back in its place (or remove the link and run `git rutter restore`)."
        );
        findings.push(whole_file(Kind::Symlink, folder, "folder", detail));
    }
    (findings, broken)
}

/// The record folders' handles, each opened once per check (refusing a symlink at every
/// component) instead of once per file: opening the root and `_librarian/sessions/` again for
/// each of 3,650 day files was most of an incremental verify's system calls.
#[derive(Default)]
struct Folders {
    open: HashMap<String, Result<Option<Dir>, FsError>>,
}

impl Folders {
    /// The handle on the vault-relative folder `dir`; `Ok(None)` when a component is missing.
    fn get(&mut self, store: &Store, dir: &str) -> &Result<Option<Dir>, FsError> {
        self.open
            .entry(dir.to_string())
            .or_insert_with(|| Dir::open(store.root())?.open_dir(dir, false))
    }
}

/// The stamp a clean file is remembered by: size, mtime (ns) and
/// `<committed blob>:<ctime ns>:<inode>`.
fn stamp(blob: ObjectId, size: u64, mtime_ns: i64, ctime_ns: i64, ino: u64) -> (u64, i64, String) {
    (size, mtime_ns, format!("{blob}:{ctime_ns}:{ino}"))
}

/// Whether `name` in `dir`, not followed if it is a symlink, is a regular file with the stamp
/// the cache remembers it clean by: then it is unchanged, and is neither opened nor read.
fn unchanged(dir: &Dir, name: &str, path: &str, blob: ObjectId, stamps: &Stamps) -> bool {
    let Some(known) = stamps.files.get(path) else {
        return false;
    };
    let Ok(st) = rfs::statat(dir.fd(), name, AtFlags::SYMLINK_NOFOLLOW) else {
        return false;
    };
    // Through i128, as the index's walk does: the field types differ between platforms.
    let times = crate::fsx::stamp_of(&st);
    let ino = u64::try_from(i128::from(st.st_ino)).unwrap_or(u64::MAX);
    FileType::from_raw_mode(st.st_mode) == FileType::RegularFile
        && stamp(
            blob,
            crate::fsx::stat_size(&st),
            times.mtime_ns,
            times.ctime_ns,
            ino,
        ) == *known
}

/// Checks one committed record file; a file found identical to its committed bytes is
/// remembered by size, mtime, ctime, inode and blob, and skipped on the next run while those
/// hold. The ctime is the witness an editor cannot put back (`touch -d` restores the mtime, not
/// the ctime), and the inode catches a file swapped for a copy.
fn file(
    store: &Store,
    folders: &mut Folders,
    path: &str,
    blob: ObjectId,
    journalled: &HashSet<String>,
    stamps: &mut Stamps,
) -> Result<Vec<Finding>, StoreError> {
    let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
    // Only the file's own stat when its stamp still matches (the same stamp the slow path
    // below takes from the opened file); anything else is opened and read as before.
    let opened = match folders.get(store, dir) {
        Ok(Some(d)) if unchanged(d, name, path, blob, stamps) => return Ok(vec![]),
        Ok(Some(d)) => d.open_read(name),
        Ok(None) => Ok(None),
        Err(FsError::Symlink(p)) => Err(FsError::Symlink(p.clone())),
        Err(FsError::WrongKind(p)) => Err(FsError::WrongKind(p.clone())),
        Err(e) => return Ok(vec![unreadable(store, path, blob, e)]),
    };
    let mut handle = match opened {
        Ok(Some(f)) => f,
        Err(FsError::Symlink(_) | FsError::WrongKind(_)) => {
            let detail =
                format!("{path} was replaced by a symlink or something that is not a regular file");
            return Ok(vec![whole_file(
                Kind::Symlink,
                path,
                &incident(blob),
                detail,
            )]);
        }
        Ok(None) => return Ok(vec![deleted(store, path, blob)]),
        Err(e @ (FsError::Io { .. } | FsError::HardLink { .. })) => {
            return Ok(vec![unreadable(store, path, blob, &e)])
        }
    };
    let meta = match handle.metadata() {
        Ok(m) => m,
        Err(e) => return Ok(vec![unreadable(store, path, blob, &e)]),
    };
    let stamp = stamp(
        blob,
        meta.len(),
        crate::clock::ns(meta.mtime(), meta.mtime_nsec()),
        crate::clock::ns(meta.ctime(), meta.ctime_nsec()),
        meta.ino(),
    );
    if stamps.files.get(path) == Some(&stamp) {
        return Ok(vec![]);
    }
    let mut working = Vec::new();
    if let Err(e) = handle.read_to_end(&mut working) {
        return Ok(vec![unreadable(store, path, blob, &e)]);
    }
    // A working file that hashes to the committed blob id is its bytes: no object is read.
    let committed = store.blob_bytes(blob, Some(&working))?;
    let committed = committed.as_slice();
    if working == committed {
        stamps.clean(path, stamp);
        return Ok(vec![]);
    }
    Ok(if working.starts_with(committed) {
        extra(path, &working[committed.len()..], journalled)
    } else if committed.starts_with(&working) {
        let what = "lost its tail after commit";
        per_entry(Kind::Truncated, (path, blob), committed, &working, what)
    } else {
        let what = "was edited after commit";
        let found = per_entry(Kind::Edited, (path, blob), committed, &working, what);
        inserted_unverified(path, committed, found, journalled)
    })
}

/// An "edited" entry that no commit holds is a line inserted among the committed ones (a
/// capture appended after a line typed by hand): pending when the journal holds it (its commit
/// failed, or is still to come), else unverified, as `records::standing` classifies it for
/// recall and log.
fn inserted_unverified(
    path: &str,
    committed: &[u8],
    found: Vec<Finding>,
    journalled: &HashSet<String>,
) -> Vec<Finding> {
    let known: HashSet<String> = super::history::ids(path, committed, true)
        .into_iter()
        .collect();
    let pending: HashSet<String> = journalled
        .iter()
        .filter_map(|l| record_line_id(path, l))
        .collect();
    found
        .into_iter()
        .map(|f| match f.entry.clone() {
            Some(id) if !known.contains(&id) => {
                let (kind, detail) = match pending.contains(&id) {
                    true => (Kind::Pending, pending_detail(path, &id)),
                    false => (Kind::Unverified, unverified_detail(path, &id)),
                };
                let mut u = Finding::new(kind, path, &id, detail);
                u.path = f.path;
                u.entry = f.entry;
                u.day = f.day;
                u.diff = f.diff.filter(|_| kind == Kind::Unverified);
                u
            }
            _ => f,
        })
        .collect()
}

/// What a journalled line no commit holds yet is (as [`extra`] says it).
fn pending_detail(path: &str, id: &str) -> String {
    format!("{path}: {id} is not committed yet (journalled)")
}

/// A committed file that cannot be read is as good as deleted for the record.
fn unreadable(store: &Store, path: &str, blob: ObjectId, e: &dyn std::fmt::Display) -> Finding {
    let detail = format!(
        "{path} is committed but cannot be read ({e}; {}). Make it readable again, then run `git rutter verify`.",
        summary(store, path, blob)
    );
    whole_file(Kind::Deleted, path, &incident(blob), detail)
}

/// What names an incident to a committed file in its finding's id: the committed version's
/// blob id (`deleted:<path>:<blob>`), so an acknowledgement of one deletion never covers the
/// file deleted again once it has grown (spec/verify.md, `--ack`).
fn incident(blob: ObjectId) -> String {
    crate::shortid::long(&blob)
}

/// A finding about the file (or folder) `path` as a whole, `what` naming the incident.
fn whole_file(kind: Kind, path: &str, what: &str, detail: String) -> Finding {
    let mut f = Finding::new(kind, path, what, detail);
    f.path = Some(path.to_string());
    f
}

/// One finding per entry the change touched (or one for the file), with the line diff.
fn per_entry(
    kind: Kind,
    (path, blob): (&str, ObjectId),
    committed: &[u8],
    working: &[u8],
    what: &str,
) -> Vec<Finding> {
    let (old, new) = (
        String::from_utf8_lossy(committed),
        String::from_utf8_lossy(working),
    );
    let text_diff = similar::TextDiff::from_lines(old.as_ref(), new.as_ref());
    let diff = text_diff
        .unified_diff()
        .context_radius(1)
        .header("committed", "working tree")
        .to_string();
    let day = day_of(path).map(str::to_string);
    let ids = changed_ids(path, committed, working);
    // Each entry's own lines, only when several entries share the file's diff.
    let changed: Vec<(char, &str)> = match ids.len() > 1 {
        true => text_diff
            .iter_all_changes()
            .filter_map(|c| match c.tag() {
                similar::ChangeTag::Delete => Some(('-', c.value())),
                similar::ChangeTag::Insert => Some(('+', c.value())),
                similar::ChangeTag::Equal => None,
            })
            .collect(),
        false => Vec::new(),
    };
    let mut out: Vec<Finding> = ids
        .iter()
        .map(|id| {
            let mut f = Finding::new(kind, path, id, format!("{path}: entry {id} {what}"));
            f.path = Some(path.to_string());
            f.entry = Some(id.clone());
            f.day = day.clone();
            // One entry changed: the file's diff, with its context, is that entry's.
            f.diff = Some(own_lines(&changed, id).unwrap_or_else(|| diff.clone()));
            f
        })
        .collect();
    if out.is_empty() {
        let mut f = whole_file(kind, path, &incident(blob), format!("{path} {what}"));
        f.day = day;
        f.diff = Some(diff);
        out.push(f);
    }
    out
}

/// The changed lines of a file's diff that carry the entry `id` (its line removed, added or
/// changed), under the diff's header: when several entries changed, each finding shows its own
/// change, not every other entry's (one `sed` over a day file made each finding repeat them all). `None` when no changed
/// line names it (the whole diff is shown then).
fn own_lines(changed: &[(char, &str)], id: &str) -> Option<String> {
    let quoted = format!("\"id\":\"{id}\"");
    let mut out = String::from("--- committed\n+++ working tree\n");
    let mut any = false;
    for (sign, line) in changed.iter().filter(|(_, l)| l.contains(&quoted)) {
        any = true;
        out.push(*sign);
        out.push_str(line);
        if !line.ends_with('\n') {
            out.push('\n');
        }
    }
    any.then_some(out)
}

/// What names unparseable text in its finding's id: the first 12 hex digits of its sha256, so
/// an acknowledgement covers that text alone, not the next line of the same length.
fn text_id(line: &str) -> String {
    crate::shortid::long(&fingerprint::sha256_hex(line.as_bytes()))
}

/// Classifies bytes after the committed ones: complete record lines are pending when journalled
/// (use-log events, which have no journal, always are, unless the record grammar refuses them:
/// then no commit takes them), unverified when not.
fn extra(path: &str, bytes: &[u8], journalled: &HashSet<String>) -> Vec<Finding> {
    let text = crate::records::text::lossy(bytes);
    let mut out = Vec::new();
    let now = crate::clock::now();
    let mut rest = text.as_ref();
    while !rest.is_empty() {
        let (l, complete) = match rest.find('\n') {
            Some(i) => (&rest[..i], true),
            None => (rest, false),
        };
        rest = if complete { &rest[l.len() + 1..] } else { "" };
        let refused = match path == paths::USE_LOG && complete {
            true => grammar::use_event(l, now).err(),
            false => None,
        };
        let id = if complete && refused.is_none() {
            record_line_id(path, l)
        } else {
            None
        };
        let mut f = match (&id, refused) {
            (_, Some(rule)) => Finding::new(Kind::Unparseable, path, &text_id(l), format!("{path}: a use-log line the record does not take ({rule}), so no commit takes it or the lines after it: {:?}. Delete the line; the next capture or `git rutter commit` commits the rest.", cut(l))),
            (Some(id), None) if path == paths::USE_LOG => Finding::new(Kind::Pending, path, id, format!("{path}: {id} is not committed yet (the next capture or `git rutter commit` commits it)")),
            (Some(id), None) if journalled.contains(l) => Finding::new(Kind::Pending, path, id, pending_detail(path, id)),
            (Some(id), None) => Finding::new(Kind::Unverified, path, id, unverified_detail(path, id)),
            (None, None) => Finding::new(Kind::Unparseable, path, &text_id(l), format!("{path}: text after the committed bytes that is not a complete record line: {:?}", cut(l))),
        };
        f.path = Some(path.to_string());
        f.entry = id;
        f.day = day_of(path).map(str::to_string);
        out.push(f);
    }
    out
}

/// What an unverified line is and what to do about it.
fn unverified_detail(path: &str, id: &str) -> String {
    format!(
        "{path}: {id} is a complete record line that no capture wrote (it is in no commit and no pending journal record), so it is not part of the record and `git rutter commit` will not commit it. If you did not write it, delete the line; if it is a decision you want kept, delete it and record it again through your client."
    )
}

/// The id of a complete record line of this file's kind (entry or retraction, binding, use-log
/// event).
fn record_line_id(path: &str, l: &str) -> Option<String> {
    if path.starts_with("_librarian/sessions/") {
        let entry = line::parse(l).ok().flatten().map(|e| e.id);
        return entry.or_else(|| retraction::parse(l).ok().flatten().map(|r| r.id));
    }
    if path == ledger::LEDGER_PATH {
        return ledger::parse_line(l).ok().flatten().map(|b| b.id);
    }
    if path == paths::USE_LOG || path == crate::records::paths::ACKS {
        let v: serde_json::Value = serde_json::from_str(l).ok()?;
        return v.get("ts")?.as_str().map(|ts| format!("event {ts}"));
    }
    None
}

fn header_for(path: &str) -> String {
    match day_of(path) {
        Some(day) => dayfile::header(day),
        None if path == ledger::LEDGER_PATH => ledger::header(),
        None => String::new(),
    }
}

fn summary(store: &Store, path: &str, blob: ObjectId) -> String {
    let bytes = store.blob(blob).unwrap_or_default();
    let n = match day_of(path) {
        Some(_) => dayfile::parse(&bytes).entries.len(),
        None => super::history::ids(path, &bytes, true).len(),
    };
    format!("{n} committed entr{}", if n == 1 { "y" } else { "ies" })
}

fn cut(s: &str) -> String {
    s.chars().take(80).collect()
}

/// Lines waiting in the pending journal.
fn journal_lines(store: &Store) -> HashSet<String> {
    Journal::pending(store.state_dir())
        .map(|ok| ok.into_iter().map(|(_, r)| r.line).collect())
        .unwrap_or_default()
}
