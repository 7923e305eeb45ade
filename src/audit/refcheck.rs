//! The ref check: the tip descends from every tip this tool witnessed in `.git/rutter/tips`,
//! and the reflog shows no move that is not a fast-forward. A missing reflog, and a witness log
//! that is missing or no longer starts with what the last verify read, are reported as "cannot
//! check", never as clean.

use super::cache::VerifyCache;
use super::finding::{Finding, Kind};
use super::history::History;
use super::reflog::{Prefix, RawReflog};
use crate::objectid::ObjectId;
use crate::store::{Store, StoreError, RECORDS_REF};
use std::collections::HashSet;

/// The ref, its reflog and the witness log, read together under the capture lock so a capture
/// landing meanwhile cannot make them disagree (a tip newer than the reflog read, or older than
/// the witness log read, would look like a rewind that never happened).
pub(crate) struct Snapshot {
    pub tip: ObjectId,
    /// The witness log's bytes; `None` when missing, the error when unreadable.
    tips: Result<Option<Vec<u8>>, crate::fsx::FsError>,
    /// The reflog file's bytes (`None` when there is none); unreadable stops verify, as
    /// libgit2's own read did.
    reflog: Option<RawReflog>,
}

/// Where the witness log and the reflog are, so another thread can read them.
pub(crate) struct Logs {
    state_dir: std::path::PathBuf,
    reflog: std::path::PathBuf,
}

impl Logs {
    pub(crate) fn of(store: &Store) -> Logs {
        Logs {
            state_dir: store.state_dir().to_path_buf(),
            reflog: store.reflog_path(),
        }
    }

    /// Reads both logs with the ref at `tip`; the caller holds the capture lock when it can be
    /// had. The reflog is compared with `reflog_seen`, the prefix the last verify accepted
    /// (`None`: check it all).
    pub(crate) fn read(
        &self,
        tip: ObjectId,
        reflog_seen: Option<&(u64, String)>,
    ) -> Result<Snapshot, StoreError> {
        let tips = crate::fsx::Dir::open(&self.state_dir).and_then(|d| d.read("tips"));
        let reflog = match std::fs::File::open(&self.reflog) {
            Ok(file) => Some(RawReflog::read(file, reflog_seen)?),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e.into()),
        };
        Ok(Snapshot { tips, reflog, tip })
    }
}

/// Runs the ref check on a snapshot; `full` re-checks every witnessed tip and reflog entry.
pub(crate) fn check(
    store: &Store,
    snap: &Snapshot,
    cache: &mut VerifyCache,
    full: bool,
    history: &History,
) -> Result<Vec<Finding>, StoreError> {
    let mut findings = witnessed(store, snap, cache, full, history);
    findings.extend(reflog(store, snap, cache, full, history));
    findings.extend(replaced(store)?);
    Ok(findings)
}

/// Every `refs/replace/` ref: git (not libgit2, so not verify) then shows the replacement
/// instead of the object, so `git show` and `git log -p` of the records could display forged
/// text. Rare in a notes vault, so each one is reported, whatever object it replaces.
fn replaced(store: &Store) -> Result<Vec<Finding>, StoreError> {
    let mut findings = Vec::new();
    for (name, target) in store.refs_under("refs/replace/")? {
        let name = name.as_str();
        let replaced = name.trim_start_matches("refs/replace/");
        let by = target.to_string();
        let short = &crate::shortid::long(&replaced);
        findings.push(Finding::new(
            Kind::ReplacedObject,
            name,
            short,
            format!("git shows object {short} as {} instead ({name}), so `git show` and `git log -p` of {RECORDS_REF} may display text the record does not hold; verify reads the true objects. See the truth with `git --no-replace-objects log -p {RECORDS_REF}`; remove the replacement with `git replace -d {replaced}`", crate::shortid::long(&by)),
        ));
    }
    Ok(findings)
}

/// Whether `new` is `old` or descends from it (a parent link first: the common case is cheap).
fn follows(store: &Store, new: ObjectId, old: ObjectId) -> bool {
    if new == old {
        return true;
    }
    if store.parent_ids(new).is_ok_and(|p| p.contains(&old)) {
        return true;
    }
    store.descends(new, old).unwrap_or(false)
}

/// Each witnessed tip must be an ancestor of the tip: looked up among the commits the history
/// check walked, else among the commits since the verified tip (one walk, made only when a tip
/// needs it: `log` walks no history, and asking the graph once per tip cost `log` 0.9 s after
/// 1,800 captures without a `verify`); only a tip older than both costs a graph walk.
fn witnessed(
    store: &Store,
    snap: &Snapshot,
    cache: &mut VerifyCache,
    full: bool,
    history: &History,
) -> Vec<Finding> {
    let tip = snap.tip;
    let verified = cache
        .verified_tip
        .as_deref()
        .and_then(|v| ObjectId::from_hex(v).ok());
    let seen = cache.tips_seen.as_ref().map_or(0, |(len, _)| *len);
    let bytes = match &snap.tips {
        Ok(Some(b)) => b.as_slice(),
        Ok(None) => return vec![witness_unreadable(seen, None)],
        Err(e) => return vec![witness_unreadable(seen, Some(e))],
    };
    let mut findings: Vec<Finding> = witness_rewritten(cache, bytes).into_iter().collect();
    let checked = if full { 0 } else { cache.tips_checked };
    let (count, unchecked) = witness_lines(bytes, checked);
    let tips: Vec<ObjectId> = unchecked
        .into_iter()
        .filter_map(|l| std::str::from_utf8(l).ok())
        .filter_map(|l| ObjectId::from_prefix(l).ok())
        .collect();
    let mut since: Option<HashSet<ObjectId>> = None;
    for t in &tips {
        // The verified tip is an ancestor only when the walk started after it.
        let known = *t == tip
            || history.walked.contains_key(t)
            || (!history.complete && Some(*t) == verified);
        let ancestor = known
            || (!history.complete && {
                let since = since.get_or_insert_with(|| {
                    let walk = store.newest_first(tip, verified, usize::MAX);
                    walk.map(HashSet::from_iter).unwrap_or_default()
                });
                since.contains(t) || follows(store, tip, *t)
            });
        if !ancestor {
            let short = &crate::shortid::short(t);
            let mut f = Finding::new(Kind::RefNotDescendant, RECORDS_REF, short, format!("{RECORDS_REF} does not descend from {short}, a tip git-rutter wrote: history was rewound or replaced"));
            f.commit = Some(short.to_string());
            findings.push(f);
        }
    }
    cache.tips_checked = count;
    findings
}

/// The witness log's lines that name a commit (trimmed), in one pass: how many there are, and
/// those not checked yet: from the `checked`-th on, with the one before it again (all of them
/// when `checked` is 0; only the last when the log now holds fewer than `checked`). 70,000
/// lines were split and tested byte by byte twice on every run, a third of an incremental
/// verify on a long history.
fn witness_lines(bytes: &[u8], checked: usize) -> (usize, Vec<&[u8]>) {
    let keep = checked.saturating_sub(1);
    let (mut count, mut unchecked, mut last) = (0, Vec::new(), None);
    let mut start = 0;
    let ends = memchr::memchr_iter(b'\n', bytes).chain(std::iter::once(bytes.len()));
    for end in ends {
        let l = bytes[start..end].trim_ascii();
        start = end + 1;
        if !is_hex_id(l) {
            continue;
        }
        if count >= keep {
            unchecked.push(l);
        }
        last = Some(l);
        count += 1;
    }
    if count < checked {
        unchecked = last.into_iter().collect();
    }
    (count, unchecked)
}

/// What `ObjectId::from_prefix` accepts: 1 to 40 hex digits (a shorter one is an abbreviated id).
fn is_hex_id(l: &[u8]) -> bool {
    // Every byte tested, no early exit: the loop vectorises.
    (1..=40).contains(&l.len()) && l.iter().fold(true, |ok, b| ok & b.is_ascii_hexdigit())
}

/// Whether a finding is about the witness log. Its id names the length the last verify accepted
/// (`…:tips@<bytes>`), so acknowledging one incident never acknowledges a later one.
pub(crate) fn is_witness_finding(f: &Finding) -> bool {
    f.id.starts_with(&format!(
        "{}:{RECORDS_REF}:tips@",
        Kind::RefUnverifiable.as_str()
    ))
}

/// Record files in a vault without `refs/rutter/records`: nothing in them is committed, so
/// nothing can be checked ("cannot check", never clean). `None` when there are none (a vault
/// with nothing recorded yet is clean).
pub(crate) fn missing_ref(store: &Store) -> Option<Finding> {
    let files = store.uncommitted_record_files(&Default::default());
    let first = files.first()?;
    let n = files.len();
    let (them, they_are) = match n {
        1 => ("it", "it is"),
        _ => ("them", "they are"),
    };
    let detail = format!(
        "{RECORDS_REF} does not exist, but the vault has {} ({first}{}): nothing in {them} is committed, so nothing can be verified (cannot check). `git rutter init` adopts {them} as {they_are}",
        crate::count::count(n, "record file", "record files"),
        if n > 1 { ", …" } else { "" },
    );
    let mut f = Finding::new(Kind::RefUnverifiable, RECORDS_REF, "missing", detail);
    f.path = Some(first.clone());
    Some(f)
}

fn witness_finding(seen: u64, why: String) -> Finding {
    let key = format!("tips@{seen}");
    let id = Finding::new(Kind::RefUnverifiable, RECORDS_REF, &key, "").id;
    Finding::new(Kind::RefUnverifiable, RECORDS_REF, &key, format!("{why}, so rewinds of {RECORDS_REF} before now cannot be checked (cannot check). Nothing but git-rutter writes that file; if you know why it changed, acknowledge it: `git rutter verify --ack {id} --reason TEXT`"))
}

/// A witness log that is missing (`None`) or cannot be read, a symlink included (a ref this
/// tool wrote always has one).
fn witness_unreadable(seen: u64, e: Option<&crate::fsx::FsError>) -> Finding {
    match e {
        None => witness_finding(
            seen,
            "the tip witness log .git/rutter/tips is missing".into(),
        ),
        Some(e) => witness_finding(
            seen,
            format!("the tip witness log .git/rutter/tips cannot be read ({e})"),
        ),
    }
}

/// Compares the witness log with what the last verify read: it may only have grown. Records
/// what was read, for [`super::cache::VerifyCache::accept_tips`].
fn witness_rewritten(cache: &mut VerifyCache, bytes: &[u8]) -> Option<Finding> {
    use sha2::{Digest, Sha256};
    let hex = |h: Sha256| -> String { h.finalize().iter().map(|b| format!("{b:02x}")).collect() };
    let seen = cache.tips_seen.as_ref();
    let kept = seen.and_then(|(len, _)| usize::try_from(*len).ok().and_then(|n| bytes.get(..n)));
    // One pass: the hash of the accepted prefix, then on to the hash of the whole log.
    let mut hasher = Sha256::new();
    let prefix = kept.map(|p| {
        hasher.update(p);
        hex(hasher.clone())
    });
    hasher.update(&bytes[kept.map_or(0, <[u8]>::len)..]);
    cache.tips_read = Some((bytes.len() as u64, hex(hasher)));
    let (len, sha) = seen?;
    match kept {
        Some(_) if prefix.as_deref() == Some(sha.as_str()) => None,
        Some(_) => Some(witness_finding(
            *len,
            "the tip witness log .git/rutter/tips was rewritten since the last verify".into(),
        )),
        None => Some(witness_finding(*len, format!(
            "the tip witness log .git/rutter/tips is shorter than the last verify read ({} bytes, was {len})",
            bytes.len()
        ))),
    }
}

/// Whether a finding is about the reflog's accepted prefix (`…:reflog@<bytes>`).
pub(crate) fn is_reflog_finding(f: &Finding) -> bool {
    f.id.starts_with(&format!(
        "{}:{RECORDS_REF}:reflog@",
        Kind::RefUnverifiable.as_str()
    ))
}

/// Checks the reflog lines after the prefix the last verify accepted (all of them with `full`,
/// without a baseline, or when that prefix changed: a rewritten reflog is itself a finding).
fn reflog(
    store: &Store,
    snap: &Snapshot,
    cache: &mut VerifyCache,
    full: bool,
    history: &History,
) -> Vec<Finding> {
    let tip = snap.tip;
    let Some(raw) = snap.reflog.as_ref().filter(|r| r.len > 0) else {
        // Once a verify accepted a prefix, its loss is that prefix's incident: the same id as
        // the reflog found shorter than it once entries are appended again, so one
        // acknowledgement covers the one incident (it took two).
        let key = match cache.reflog_seen.as_ref().filter(|_| !full) {
            Some((len, _)) if *len > 0 => format!("reflog@{len}"),
            _ => "reflog".to_string(),
        };
        let id = Finding::new(Kind::RefUnverifiable, RECORDS_REF, &key, "").id;
        let f = Finding::new(Kind::RefUnverifiable, RECORDS_REF, &key, format!("{RECORDS_REF} has no reflog, so its moves cannot be checked (cannot check). Run `git rutter init` to keep one from now on, then acknowledge this finding: `git rutter verify --ack {id} --reason TEXT`"));
        return vec![f];
    };
    // The snapshot compared the file with this baseline as it read it.
    let seen = if full {
        None
    } else {
        cache.reflog_seen.as_ref()
    };
    let mut findings = Vec::new();
    if matches!(raw.prefix, Prefix::Shorter | Prefix::Rewritten) {
        let len = seen.map_or(0, |(l, _)| *l);
        let why = if raw.prefix == Prefix::Shorter {
            format!(
                "is shorter than the last verify read ({} bytes, was {len})",
                raw.len
            )
        } else {
            "was rewritten since the last verify".to_string()
        };
        findings.push(reflog_rewritten(len, &why));
    }
    let Some(moves) = raw.moves() else {
        let f = Finding::new(Kind::RefUnverifiable, RECORDS_REF, "reflog-unparseable", format!("the reflog of {RECORDS_REF} holds a line that is not a reflog entry, so its moves cannot be checked (cannot check). See it with `cat .git/logs/{RECORDS_REF}`"));
        findings.push(f);
        return findings;
    };
    // Oldest first, as the file holds them.
    for (old, new, seconds, message) in &moves {
        // A move to a commit from its parent, as the history check read it: no commit read.
        let from_parent = history.walked.get(new) == Some(old);
        if old.is_zero() || from_parent || follows(store, *new, *old) {
            continue;
        }
        let when = crate::clock::from_seconds(*seconds).iso();
        let (o, n) = (crate::shortid::short(old), crate::shortid::short(new));
        let mut f = Finding::new(
            Kind::RefRewind,
            RECORDS_REF,
            &format!("{o}..{n}"),
            format!("{RECORDS_REF} moved from {o} to {n} at {when}, which is not a fast-forward ({message})"),
        );
        f.commit = Some(n.to_string());
        findings.push(f);
    }
    // The newest entry may lie in the accepted prefix when nothing was appended since.
    if let Some(newest) = moves.last().or(raw.last().as_ref()).map(|m| m.1) {
        if newest != tip && !follows(store, tip, newest) {
            let n = &crate::shortid::short(&tip);
            findings.push(Finding::new(Kind::RefRewind, RECORDS_REF, &format!("unlogged-{n}"), format!("{RECORDS_REF} is at {n}, which the reflog never recorded and which does not descend from its last entry")));
        }
    }
    cache.reflog_read = Some(raw.read.clone());
    findings
}

/// The reflog no longer starts with the bytes the last verify accepted (`len` of them): it
/// stays a finding until acknowledged, like a rewritten witness log.
fn reflog_rewritten(len: u64, why: &str) -> Finding {
    let key = format!("reflog@{len}");
    let id = Finding::new(Kind::RefUnverifiable, RECORDS_REF, &key, "").id;
    Finding::new(Kind::RefUnverifiable, RECORDS_REF, &key, format!("the reflog of {RECORDS_REF} (.git/logs/{RECORDS_REF}) {why}, so moves it recorded before now cannot be checked (cannot check); every entry it holds now was checked again. `git reflog expire` and `git reflog delete` do this; if you know why it changed, acknowledge it: `git rutter verify --ack {id} --reason TEXT`"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The two passes `witness_lines` replaces.
    fn two_passes(bytes: &[u8], checked: usize) -> (usize, Vec<&[u8]>) {
        let lines = || {
            bytes
                .split(|b| *b == b'\n')
                .map(|l| l.trim_ascii())
                .filter(|l| (1..=40).contains(&l.len()) && l.iter().all(u8::is_ascii_hexdigit))
        };
        let count = lines().count();
        let from = checked.min(count).saturating_sub(1);
        (count, lines().skip(from).collect())
    }

    #[test]
    fn witness_lines_are_counted_and_only_the_unchecked_kept() {
        let log =
            b"aaaa\n bbbb \nnot an id\n\ncccc\r\n0123456789012345678901234567890123456789\ndd";
        assert_eq!(witness_lines(log, 0).0, 5);
        assert_eq!(witness_lines(log, 0).1.len(), 5);
        let long = &b"0123456789012345678901234567890123456789"[..];
        assert_eq!(witness_lines(log, 3).1, [&b"cccc"[..], long, b"dd"]);
        assert_eq!(
            witness_lines(log, 9).1,
            [&b"dd"[..]],
            "a log shorter than checked"
        );
        assert_eq!(witness_lines(b"", 4), (0, vec![]));
    }

    proptest! {
        #[test]
        fn one_pass_finds_what_two_passes_found(
            lines in proptest::collection::vec("[0-9a-fA-F]{0,42}|[ \t]?[0-9a-f]{3}[ \r]?|[g-z ]{0,5}", 0..30),
            newline_at_end in any::<bool>(),
            checked in 0usize..40,
        ) {
            let mut text = lines.join("\n");
            if newline_at_end {
                text.push('\n');
            }
            let b = text.as_bytes();
            prop_assert_eq!(witness_lines(b, checked), two_passes(b, checked));
        }
    }
}
