//! The history check: every non-merge commit on `refs/rutter/records` only appends to record
//! files, only adds `cited/` copies whose content matches their name, and deletes nothing;
//! every merge keeps both parents' lines. Also learns which commit added each entry.

use super::cache::VerifyCache;
use super::finding::{Finding, Kind};
use crate::clock::Instant;
use crate::objectid::ObjectId;
use crate::records::grammar::{self, Breach};
use crate::records::paths::day_of;
use crate::records::{dayfile, fingerprint, ledger};
use crate::store::graph::CommitHead;
use crate::store::packread::Packs;
use crate::store::sign::SigCheck;
use crate::store::tree::{Change, Odd, OddKind, Trees};
use crate::store::{Store, StoreError};

/// Trees kept in memory while walking; forgotten every this many commits.
const FORGET_EVERY: usize = 64;

/// What the history check found.
#[derive(Debug, Default)]
pub(crate) struct History {
    pub findings: Vec<Finding>,
    pub commits: usize,
    /// Every commit walked, with its first parent (zero for a root or an unreadable commit):
    /// the ref check looks witnessed tips up here instead of walking the graph once per tip,
    /// and a reflog move to a commit from its parent instead of reading the commit again.
    pub walked: std::collections::HashMap<ObjectId, ObjectId>,
    /// Whether the walk covered the whole history.
    pub complete: bool,
}

/// Below this many commits the walk runs on one thread (opening a second repository and
/// thread costs more than it saves).
const PARALLEL_FROM: usize = 4_096;

/// Commits a thread of a shared walk takes at a time ([`shared_walk`]): about a tenth of a
/// second of work, so the threads end within that of each other.
const CHUNK: usize = 1_024;

/// From this many commits the walk reads commits, trees and blobs from the packs itself
/// (`store::packread`; reading the indexes of the bench's 430,000 objects takes about 12 ms).
const PACKS_FROM: usize = 4_096;

/// [`PACKS_FROM`]; debug builds take `RUTTER_VERIFY_PACKS_FROM`, so the tests can check that
/// reading through the packs finds exactly what reading through libgit2 finds.
fn packs_from() -> usize {
    tuned("RUTTER_VERIFY_PACKS_FROM", PACKS_FROM)
}

/// [`PARALLEL_FROM`]; debug builds take `RUTTER_VERIFY_PARALLEL_FROM`, so the tests can check
/// that a shared walk finds exactly what one thread finds.
fn parallel_from() -> usize {
    tuned("RUTTER_VERIFY_PARALLEL_FROM", PARALLEL_FROM)
}

/// [`CHUNK`]; debug builds take `RUTTER_VERIFY_CHUNK`, so the tests can interleave chunks of a
/// few commits.
fn chunk_len() -> usize {
    tuned("RUTTER_VERIFY_CHUNK", CHUNK).max(1)
}

/// `value`, or in a debug build the number the environment variable `name` holds.
fn tuned(name: &str, value: usize) -> usize {
    #[cfg(debug_assertions)]
    if let Some(n) = std::env::var(name).ok().and_then(|v| v.parse().ok()) {
        return n;
    }
    let _ = name;
    value
}

/// What checking one commit produced, in the order the sequential check would have made it:
/// findings, and the entry ids each appended piece added (recorded in the cache afterwards, in
/// commit order, so each entry keeps the first commit that added it).
pub enum Step {
    Found(Vec<Finding>),
    Added(Vec<String>),
}

/// Checks the commits since the last verified tip (all of them when that tip is unknown or
/// no longer an ancestor; a `read_only` run from where the entry map was learnt), oldest first.
/// A long walk is shared by two threads ([`shared_walk`]); the results are merged in walk
/// order, so findings, their order and the entry map are those of a walk on one thread.
pub fn check(
    store: &Store,
    tip: ObjectId,
    cache: &mut VerifyCache,
    read_only: bool,
) -> Result<History, StoreError> {
    let parse = |v: Option<&str>| v.and_then(|v| ObjectId::from_hex(v).ok());
    let verified = parse(cache.verified_tip.as_deref());
    let learnt = parse(cache.entries_tip.as_deref());
    let reaches = |v: ObjectId| v == tip || store.descends(tip, v).unwrap_or(false);
    // A read-only run (`log`) needs only the entries: it walks from where they were learnt
    // last, which may be past the verified tip. A cache from a history this tip does not hold
    // is thrown away.
    let start = if verified.is_some_and(|v| !reaches(v)) || learnt.is_some_and(|e| !reaches(e)) {
        cache.clear_entries();
        None
    } else if read_only {
        learnt.or(verified)
    } else {
        verified
    };
    let hide = start;
    let complete = start.is_none();
    // A whole history that is one line of commits is ordered from the packs (and its loose
    // commits); the walk then reads its trees and blobs from them too, once it is long.
    let packs = complete.then(|| store.packs());
    let oids = match packs.as_ref().and_then(|p| store.line_to(p, tip)) {
        Some(oids) => oids,
        None => store.oldest_first(tip, hide)?,
    };
    let packs = match oids.len() >= packs_from() {
        true => packs.or_else(|| Some(store.packs())),
        false => None,
    };
    // One clock for the whole walk: the use log's plausible times are judged against it.
    let now = crate::clock::now();
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(2));
    let walk = Walk {
        store,
        packs: packs.as_ref(),
        now,
    };
    let steps = if oids.len() >= parallel_from() && workers > 1 {
        shared_walk(&walk, &oids)?
    } else {
        check_range(&walk, &oids)?
    };
    if let Some(packs) = &packs {
        packs.trace();
    }
    let mut out = History {
        complete,
        commits: oids.len(),
        walked: std::collections::HashMap::with_capacity(oids.len()),
        ..Default::default()
    };
    for (oid, (commit_steps, parent)) in oids.iter().zip(steps) {
        out.walked.insert(*oid, parent);
        for step in commit_steps {
            match step {
                Step::Added(ids) => {
                    for id in ids {
                        cache.added(id, *oid);
                    }
                }
                Step::Found(found) => out.findings.extend(attributed(found, cache)),
            }
        }
    }
    Ok(out)
}

/// Checks `oids` on this thread and another (with a repository handle of its own), each taking
/// the next [`chunk_len`] commits until none is left: one slow stretch (the adopt commit reads
/// 3,650 day files whole) no longer leaves one half of a split walk running alone. The chunks'
/// results are put back in walk order; a chunk the other thread took and did not finish (it
/// panicked) is checked here.
fn shared_walk(walk: &Walk<'_>, oids: &[ObjectId]) -> Result<Vec<Checked>, StoreError> {
    let chunks: Vec<&[ObjectId]> = oids.chunks(chunk_len()).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let other = walk.store.reopen()?;
    let (packs, now) = (walk.packs, walk.now);
    let (mine, theirs) = std::thread::scope(|s| {
        let (chunks, next) = (&chunks, &next);
        let theirs = s.spawn(move || {
            let store = &other;
            take_chunks(&Walk { store, packs, now }, chunks, next)
        });
        (take_chunks(walk, chunks, next), theirs.join())
    });
    let mut done = mine?;
    if let Ok(theirs) = theirs {
        done.extend(theirs?);
    }
    done.sort_by_key(|(i, _)| *i);
    let mut all = Vec::with_capacity(oids.len());
    let mut finished = done.into_iter().peekable();
    for (i, chunk) in chunks.iter().enumerate() {
        match finished.next_if(|(at, _)| *at == i) {
            Some((_, checked)) => all.extend(checked),
            None => all.extend(check_range(walk, chunk)?),
        }
    }
    Ok(all)
}

/// The chunks this thread checks, by index, taking the next unclaimed one until none is left.
fn take_chunks(
    walk: &Walk<'_>,
    chunks: &[&[ObjectId]],
    next: &std::sync::atomic::AtomicUsize,
) -> Result<Vec<(usize, Vec<Checked>)>, StoreError> {
    let mut done = Vec::new();
    loop {
        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let Some(chunk) = chunks.get(i) else {
            return Ok(done);
        };
        done.push((i, check_range(walk, chunk)?));
    }
}

/// A rewrite finding names the commit that added its entry when the walk has seen it (the
/// offending commit otherwise, as it was made).
fn attributed(mut found: Vec<Finding>, cache: &mut VerifyCache) -> Vec<Finding> {
    for f in &mut found {
        if f.kind != Kind::HistoryRewrite {
            continue;
        }
        if let Some(c) = f.entry.as_ref().and_then(|id| cache.entries().get(id)) {
            f.commit = Some(crate::shortid::short(c));
        }
    }
    found
}

/// What checking one commit produced, and its first parent (zero for none, or unreadable).
type Checked = (Vec<Step>, ObjectId);

/// What a thread of the walk reads with: its repository handle, the packs it reads trees and
/// blobs from (a long walk), and the clock the use log's times are judged against.
struct Walk<'a> {
    store: &'a Store,
    packs: Option<&'a Packs>,
    now: Instant,
}

/// Checks `oids` in order on this thread: one list of steps per commit.
fn check_range(walk: &Walk<'_>, oids: &[ObjectId]) -> Result<Vec<Checked>, StoreError> {
    let (store, now) = (walk.store, walk.now);
    let mut trees = match walk.packs {
        Some(packs) => store.trees_with(packs)?,
        None => store.trees()?,
    };
    let mut out = Vec::with_capacity(oids.len());
    let mut known = None;
    for (n, &oid) in oids.iter().enumerate() {
        let mut steps = Vec::new();
        let mut parent = ObjectId::ZERO;
        match head(store, &mut trees, oid, known) {
            Ok(c) => {
                known = Some((c.id, c.tree));
                parent = c.parents.first().map_or(parent, |(p, _)| *p);
                match check_commit(store, &mut trees, &c, true, now, &mut steps) {
                    Ok(()) => {}
                    // A blob or tree it needs is missing or does not inflate.
                    Err(e @ StoreError::Git(_)) => {
                        steps.push(Step::Found(vec![unreadable(oid, &e)]))
                    }
                    Err(e) => return Err(e),
                }
                steps.push(Step::Found(signature(store, &c).into_iter().collect()));
            }
            Err(e) => steps.push(Step::Found(vec![Finding::new(
                Kind::CorruptObject,
                "commit",
                &oid.to_string(),
                format!("commit {oid} cannot be read: {e}"),
            )])),
        }
        out.push((steps, parent));
        if (n + 1) % FORGET_EVERY == 0 {
            trees.forget();
        }
    }
    Ok(out)
}

/// What the check needs of commit `oid` (`known`: the id and tree of the commit checked just
/// before): from the packs when the walk reads them and the commit is there as git writes
/// one, else from libgit2, which also says when it cannot be read.
fn head(
    store: &Store,
    trees: &mut Trees<'_>,
    oid: ObjectId,
    known: Option<(ObjectId, ObjectId)>,
) -> Result<CommitHead, StoreError> {
    match trees.commit_head(oid, known) {
        Some(head) => Ok(head),
        None => Ok(store.commit_info_after(oid, known)?.head),
    }
}

/// A `corrupt-object` finding for commit `oid`, part of which cannot be read.
fn unreadable(oid: ObjectId, e: &StoreError) -> Finding {
    let short = short(oid);
    let mut f = Finding::new(
        Kind::CorruptObject,
        "commit",
        &short,
        format!("an object of {short} cannot be read: {}", e.detail()),
    );
    f.commit = Some(short);
    f
}

/// A finding for a signed commit whose signature git does not accept or cannot check.
fn signature(store: &Store, c: &CommitHead) -> Option<Finding> {
    if !c.signed {
        return None;
    }
    let short = short(c.id);
    let (kind, detail) = match store.check_signature(c.id) {
        SigCheck::Unsigned | SigCheck::Good => return None,
        SigCheck::Bad(why) => (
            Kind::BadSignature,
            format!("the signature of {short} does not verify: {why}"),
        ),
        SigCheck::Unchecked(why) => (
            Kind::SignatureUnchecked,
            format!("the signature of {short} cannot be checked here: {why}"),
        ),
    };
    let mut f = Finding::new(kind, "commit", &short, detail);
    f.commit = Some(short);
    Some(f)
}

/// Checks one commit with the audit's rules (the intake of a remote's history uses the same):
/// its tree holds only record files, and a non-merge commit only appends whole lines or adds
/// files, each line it adds within the record grammar ([`change`]; use-log times judged against
/// `now`), a merge keeps both parents' lines ([`super::merges`]). With `want_ids`, the ids each
/// append added are learnt too (`Step::Added`; the intake does not need them).
pub(crate) fn check_commit(
    store: &Store,
    trees: &mut Trees<'_>,
    c: &CommitHead,
    want_ids: bool,
    now: Instant,
    steps: &mut Vec<Step>,
) -> Result<(), StoreError> {
    let short = short(c.id);
    let parent = c.parents.first().map(|(_, tree)| *tree);
    let (changes, odd) = match trees.changes_checked(parent, Some(c.tree)) {
        Ok(found) => found,
        Err(e) => {
            steps.push(Step::Found(vec![Finding::new(
                Kind::CorruptObject,
                "tree",
                &short,
                format!("the tree of {short} cannot be read: {e}"),
            )]));
            return Ok(());
        }
    };
    steps.push(Step::Found(
        odd.iter().map(|o| odd_finding(o, &short)).collect(),
    ));
    if c.parents.len() > 1 {
        steps.push(Step::Found(super::merges::check(store, trees, c, &short)?));
        return Ok(());
    }
    for ch in changes {
        change(store, trees, &ch, &short, now, want_ids, steps)?;
    }
    Ok(())
}

/// The kind of finding an entry that is not a record file or folder is.
pub(crate) fn odd_kind(o: &Odd) -> Kind {
    match o.why {
        OddKind::Mode => Kind::UnexpectedMode,
        OddKind::Misplaced => Kind::Misplaced,
        OddKind::Name(_) | OddKind::Path => Kind::UnexpectedPath,
    }
}

/// The finding for an entry of commit `short`'s tree that is not a record file or folder.
fn odd_finding(o: &Odd, short: &str) -> Finding {
    let kind = odd_kind(o);
    let mut f = Finding::new(
        kind,
        &o.path,
        short,
        format!("{short} added {} ({}); readers skip it", o.path, o.rule()),
    );
    f.path = Some(o.path.clone());
    f.commit = Some(short.to_string());
    f
}

/// Judges one changed path of a non-merge commit `short` (use-log times judged by `now`): the
/// ids it appended, or findings.
fn change(
    store: &Store,
    trees: &mut Trees<'_>,
    ch: &Change,
    short: &str,
    now: Instant,
    want_ids: bool,
    steps: &mut Vec<Step>,
) -> Result<(), StoreError> {
    if let Some(rest) = ch.path.strip_prefix("cited/") {
        let name = rest.rsplit('/').next().unwrap_or("");
        steps.push(Step::Found(cited(store, ch, name, short)?));
        return Ok(());
    }
    let mut blob = |o: ObjectId| trees.blob(o);
    let (old, new) = match (ch.old, ch.new) {
        (_, None) => {
            steps.push(Step::Found(vec![at(
                ch,
                short,
                Kind::HistoryDelete,
                short,
                format!("{short} deleted {}", ch.path),
            )]));
            return Ok(());
        }
        (None, Some(n)) => (std::rc::Rc::new(Vec::new()), blob(n)?),
        (Some(o), Some(n)) => (blob(o)?, blob(n)?),
    };
    if new.starts_with(&old) && ch.old.is_some() && !new.ends_with(b"\n") {
        steps.push(Step::Found(vec![at(
            ch,
            short,
            Kind::HistoryRewrite,
            short,
            format!(
                "{short} appended bytes to {} that do not end a line (a later append would change that line)",
                ch.path
            ),
        )]));
        return Ok(());
    }
    if !new.starts_with(&old) {
        steps.push(Step::Found(rewrites(ch, short, &old, &new)));
        return Ok(());
    }
    let added = match grammar::added(&ch.path, &old, &new, now) {
        Ok(ids) => ids,
        Err(breach) => {
            steps.push(Step::Found(vec![out_of_grammar(ch, short, &breach)]));
            match want_ids {
                true => ids(&ch.path, &new[old.len()..], old.is_empty()),
                false => Vec::new(),
            }
        }
    };
    steps.push(Step::Added(if want_ids { added } else { Vec::new() }));
    Ok(())
}

/// The finding for a line a commit added outside the record grammar (spec/record-format.md,
/// "What a record file may hold"): the intake refuses a history that holds one.
fn out_of_grammar(ch: &Change, short: &str, b: &Breach) -> Finding {
    at(
        ch,
        short,
        Kind::OutOfGrammar,
        short,
        format!(
            "{short} added line {} of {} outside the record grammar: {}",
            b.line, ch.path, b.rule
        ),
    )
}

/// A `cited/` change: only additions whose content has the sha256 of their name.
fn cited(store: &Store, ch: &Change, name: &str, short: &str) -> Result<Vec<Finding>, StoreError> {
    Ok(match (ch.old, ch.new) {
        (None, Some(n)) if fingerprint::sha256_hex(&store.blob(n)?) == name => {
            vec![]
        }
        (None, Some(_)) => vec![at(
            ch,
            short,
            Kind::CitedMismatch,
            short,
            format!(
                "{short} added a cited copy whose content does not have the sha256 of its name"
            ),
        )],
        _ => vec![at(
            ch,
            short,
            Kind::HistoryRewrite,
            short,
            format!("{short} changed or removed a cited copy"),
        )],
    })
}

/// One finding per entry a rewriting commit changed (named by the offending commit until
/// [`attributed`] finds the commit that added the entry).
fn rewrites(ch: &Change, short: &str, old: &[u8], new: &[u8]) -> Vec<Finding> {
    let mut out: Vec<Finding> = changed_ids(&ch.path, old, new)
        .into_iter()
        .map(|id| {
            let mut f = at(
                ch,
                short,
                Kind::HistoryRewrite,
                &id,
                format!(
                    "{short} rewrote entry {id} of {} (committed earlier)",
                    ch.path
                ),
            );
            f.entry = Some(id);
            f.day = day_of(&ch.path).map(str::to_string);
            f
        })
        .collect();
    if out.is_empty() {
        out.push(at(
            ch,
            short,
            Kind::HistoryRewrite,
            short,
            format!("{short} rewrote committed bytes of {}", ch.path),
        ));
    }
    out
}

/// A finding about `ch` in commit `short`.
fn at(ch: &Change, short: &str, kind: Kind, what: &str, detail: String) -> Finding {
    let mut f = Finding::new(kind, &ch.path, what, detail);
    f.path = Some(ch.path.clone());
    f.commit = Some(short.to_string());
    f
}

/// Entries, retractions (or bindings) of `old` that `new` no longer holds unchanged, and record
/// lines that appear in `new` among the committed ones.
pub(crate) fn changed_ids(path: &str, old: &[u8], new: &[u8]) -> Vec<String> {
    if path == ledger::LEDGER_PATH {
        let now = ledger::parse(new).bindings;
        return ledger::parse(old)
            .bindings
            .into_iter()
            .filter(|b| !now.contains(b))
            .map(|b| b.id)
            .collect();
    }
    match day_of(path) {
        Some(_) => crate::records::standing::changed_ids(old, new),
        None => vec![],
    }
}

/// The entry, retraction or binding ids in a piece of a record file (`whole`: the piece is a
/// whole file, so `@1` frontmatter entries count too).
pub(crate) fn ids(path: &str, bytes: &[u8], whole: bool) -> Vec<String> {
    if path == ledger::LEDGER_PATH {
        return ledger::parse(bytes)
            .bindings
            .into_iter()
            .map(|b| b.id)
            .collect();
    }
    if day_of(path).is_none() {
        return vec![];
    }
    let file = if whole {
        dayfile::parse(bytes)
    } else {
        dayfile::parse_v2_tail(bytes)
    };
    let retractions = file.retractions.into_iter().map(|r| r.id);
    file.entries
        .into_iter()
        .map(|e| e.id)
        .chain(retractions)
        .collect()
}

fn short(oid: ObjectId) -> String {
    crate::shortid::short(&oid)
}
