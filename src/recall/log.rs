//! `log`'s rows: every entry of the record (the day files committed at the tip, the pending
//! journal, lines only a working file has) with its status from the classifier recall uses
//! (`records::standing::classify`), the commit that added it, the diff verify found for an
//! edited one, the retraction that took it back and the entries that replace it, as
//! [`super::row::Row`]s, newest first (spec/verify.md, "log"). The CLI prints them.

use super::row::{Retracted, Row, Step};
use crate::audit::{Finding, Kind, Options};
use crate::index::entries::{project_key, purged_stem, Scope, PURGED_SUFFIX};
use crate::index::Index;
use crate::records::filter::EntryFilter;
use crate::records::retraction::Retraction;
use crate::records::standing::{self, Status};
use crate::records::supersede::{Claim, Supersession};
use crate::records::{paths, Entry};
use crate::store::{Store, StoreError};
use crate::vault::Vault;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::rc::Rc;

/// Which rows to read.
#[derive(Debug, Clone, Default)]
pub(crate) struct Query {
    /// Words, client, day and time bounds.
    pub filter: EntryFilter,
    /// Only entries of this project (case-insensitive, whole name).
    pub project: Option<String>,
    /// Only this entry: its id, or a start of one (a short id).
    pub entry: Option<String>,
    /// Only the newest N rows (`None`: every one).
    pub count: Option<usize>,
    /// Each row with the line its file holds (`log -p`); without, [`Row::line`] is `None` and
    /// no day file's lines are kept (the whole record's rows were a third larger with them).
    pub lines: bool,
}

/// What [`read`] tells its caller while it works.
pub(crate) trait Watch {
    /// Runs `build`: the words index's first build, which a terminal may say it is waiting on.
    fn words(&mut self, build: &mut dyn FnMut());
    /// The statuses are being read without the capture lock (another command holds it).
    fn lock_missed(&mut self);
}

/// Why `log` has no rows to show.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LogError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A short id that starts several entry ids (up to six of them).
    #[error("{given} is the start of several entry ids ({}); give more of the id.", ids.join(", "))]
    Ambiguous { given: String, ids: Vec<String> },
    /// The entry asked for is nowhere in the record.
    #[error("no entry {0} in refs/rutter/records or the day files.")]
    NoEntry(String),
    /// The start of an id too short to name an entry.
    #[error("{0} is too short to name an entry: give at least {min} characters of its id, as `git rutter recent` shows them.", min = crate::index::short_ids::MIN_LEN)]
    TooShort(String),
}

/// The rows of `q`, newest first by day and time.
pub(crate) fn read(vault: &Vault, q: &Query, watch: &mut dyn Watch) -> Result<Vec<Row>, LogError> {
    let store = Store::open(vault)?;
    let only = prefiltered(vault, q, watch);
    let report = crate::audit::verify(
        &store,
        Options {
            read_only: true,
            entries: true,
            only_days: only.as_ref(),
            ..Options::default()
        },
    )?;
    if report.lock_missed {
        watch.lock_missed();
    }
    let mut rows = rows(&store, &report.findings, q, only.as_ref())?;
    if let Some(p) = &q.project {
        let want = project_key(p);
        rows.retain(|r| r.step.entry.project().map(project_key).as_ref() == Some(&want));
    }
    if let Some(given) = &q.entry {
        if let Err(ids) = entry_rows(&mut rows, given) {
            let given = given.clone();
            return Err(LogError::Ambiguous { given, ids });
        }
        if rows.is_empty() && crate::index::short_ids::is_too_short(given) {
            return Err(LogError::TooShort(given.clone()));
        }
        if rows.is_empty() {
            return Err(LogError::NoEntry(given.clone()));
        }
    }
    rows.sort_by(|a, b| (&b.step.day, &b.step.entry.time).cmp(&(&a.step.day, &a.step.entry.time)));
    if let Some(n) = q.count {
        rows.truncate(n);
    }
    name_commits(&mut rows, &report.added_by);
    mark_superseded(vault, &mut rows);
    Ok(rows)
}

/// Keeps the rows of the entry `given` names: a whole id, or a short one (`recent` shows them)
/// that starts one id only; `Err` lists the ids a short one starts.
fn entry_rows(rows: &mut Vec<Row>, given: &str) -> Result<(), Vec<String>> {
    if rows.iter().any(|r| r.id() == given) || !crate::index::short_ids::is_short_id(given) {
        rows.retain(|r| r.id() == given);
        return Ok(());
    }
    rows.retain(|r| r.id().starts_with(given));
    let ids: BTreeSet<&str> = rows.iter().map(Row::id).collect();
    match ids.len() {
        0 | 1 => Ok(()),
        _ => Err(ids.into_iter().take(6).map(str::to_string).collect()),
    }
}

/// Every entry of the record with its status, the diff verify found for an edited one, and the
/// retraction that took it back.
fn rows(
    store: &Store,
    findings: &[Finding],
    q: &Query,
    only: Option<&BTreeSet<String>>,
) -> Result<Vec<Row>, StoreError> {
    let filter = &q.filter;
    let diffs = diffs(findings);
    // With the index's days, only those are looked up in the ref and the working tree.
    let tip = store.tip()?;
    let committed: BTreeMap<String, _> = match (tip, only) {
        (Some(tip), None) => store.committed_days(tip)?.into_iter().collect(),
        (Some(tip), Some(o)) => store.committed_days_of(tip, o)?.into_iter().collect(),
        (None, _) => BTreeMap::new(),
    };
    let pending = crate::journal::Journal::pending_lines(store.state_dir());
    let mut days: BTreeSet<String> = committed.keys().cloned().collect();
    days.extend(pending.keys().cloned());
    match only {
        Some(o) => days.extend(o.iter().cloned()),
        None => days.extend(working_days(store)),
    }
    // Keyed by day file stem (a day may have one file per writer, spec/sync.md). A retraction
    // is appended on or after the day of what it retracts: the days before the first one kept
    // cannot hold one.
    let (first, last) = filter.day_range();
    days.retain(|d| first.is_none_or(|want| day_of_stem(d) >= want));
    days.retain(|d| only.is_none_or(|o| o.contains(d)));
    let mut rows = Vec::new();
    // Each row's file stem and which of that file's lines with its id it is; the ids of the
    // entries the filter left out (a line of theirs still makes an id one held twice).
    let mut places: Vec<(&str, usize)> = Vec::new();
    let mut left_out: Vec<String> = Vec::new();
    let mut retractions: HashMap<String, Retracted> = HashMap::new();
    for d in &days {
        let working = store.working(&paths::day_file(d));
        let bytes = match committed.get(d) {
            Some(oid) => Some(store.blob_bytes(*oid, working.as_deref())?),
            None => None,
        };
        let lines: Vec<&str> = pending
            .get(d)
            .map(|v| v.iter().map(String::as_str).collect())
            .unwrap_or_default();
        let day = day_of_stem(d);
        let mut record = standing::classify(bytes.as_deref(), working.as_deref(), &lines);
        standing::drop_copies(d, &mut record, |day| match tip {
            Some(tip) => store
                .committed_days_of(tip, [&day.to_string()])?
                .first()
                .map(|(_, oid)| store.blob(*oid))
                .transpose(),
            None => Ok(None),
        })?;
        for (r, _) in record
            .retractions
            .into_iter()
            .filter(|(_, s)| s.is_recorded())
        {
            retractions
                .entry(r.retracts.clone())
                .or_insert_with(|| retracted(r, day));
        }
        if last.is_some_and(|want| day > want) {
            continue;
        }
        let mut raw = match q.lines {
            true => raw_lines(working.as_deref().or(bytes.as_deref())),
            false => HashMap::new(),
        };
        let nth = nth_of_id(&record.entries);
        let file: Rc<str> = paths::day_file(d).into();
        for ((e, st), k) in record.entries.into_iter().zip(nth) {
            let line = raw.get_mut(&e.id).and_then(VecDeque::pop_front);
            if !filter.matches(&e) {
                left_out.push(e.id);
                continue;
            }
            let diff = diffs.get(&e.id).cloned().filter(|_| st == Status::Edited);
            let mut r = row(e, day.to_string(), st, file.clone());
            (r.line, r.diff) = (line, diff);
            rows.push(r);
            places.push((d.as_str(), k));
        }
    }
    let held_twice = ids_held_twice(
        rows.iter()
            .map(Row::id)
            .chain(left_out.iter().map(String::as_str)),
    );
    for (r, (stem, k)) in rows.iter_mut().zip(places) {
        // An id several lines carry (two writers stamping one millisecond, or a remote's
        // entry): each line is named with the commit that added that very line.
        if let (true, Some(oid)) = (held_twice.contains(r.id()), committed.get(stem)) {
            r.commit =
                exact_commit(store, &store.blob_bytes(*oid, None)?, stem, r.id(), k)?.map(Rc::from);
        }
        r.retraction = retractions.get(r.id()).cloned().map(Box::new);
    }
    rows.extend(purged_rows(store, filter, only)?);
    Ok(rows)
}

/// A row where each purged entry stood, from the purge ledger at the tip: `purged on DATE:
/// REASON`, no text (spec/purge.md).
fn purged_rows(
    store: &Store,
    filter: &EntryFilter,
    only: Option<&BTreeSet<String>>,
) -> Result<Vec<Row>, StoreError> {
    let Some(tip) = store.tip()? else {
        return Ok(vec![]);
    };
    let (first, last) = filter.day_range();
    let ledger: Rc<str> = paths::PURGES.into();
    let mut out = Vec::new();
    for p in crate::recorder::purge::recorded(store, tip)? {
        let stem = purged_stem(&p.day);
        let in_range =
            first.is_none_or(|f| p.day.as_str() >= f) && last.is_none_or(|l| p.day.as_str() <= l);
        let e = p.placeholder();
        if !in_range || only.is_some_and(|o| !o.contains(&stem)) || !filter.matches(&e) {
            continue;
        }
        out.push(row(e, p.day.clone(), Status::Purged, ledger.clone()));
    }
    Ok(out)
}

/// The day files worth reading when the filter names words, a client or a project, or only the
/// newest entries are shown: those the index's record cache (brought up to date first) says
/// hold a matching entry (of the newest matching), a line with its id or a retraction of it.
/// `None` (read every day file) without an index, or when it cannot be read: the statuses still
/// come from the record either way.
fn prefiltered(vault: &Vault, q: &Query, watch: &mut dyn Watch) -> Option<BTreeSet<String>> {
    let filter = &q.filter;
    let filtered = !filter.words.is_empty() || filter.client.is_some() || q.project.is_some();
    if !filtered && q.count.is_none() {
        return None;
    }
    let index = open_index(vault)?;
    // A count past every entry the cache has numbered needs no shortcut: every day is read
    // (`log -n 70000`: looking up the ids of the newest N cost more than the days it saved).
    // Read before the refresh, which it then spares: a cache behind the record numbers fewer
    // entries, and only decides whether the shortcut is taken; both ways give the same rows.
    let numbered = index.meta(crate::index::entries::NEXT_RID).ok().flatten();
    let all = numbered.and_then(|n| n.parse::<usize>().ok());
    if !filtered && q.count.zip(all).is_some_and(|(count, all)| count >= all) {
        return None;
    }
    // Every day file as it is now: a watching server vouches, else each is stat'ed.
    let index = refreshed(index, vault, None)?;
    if !filter.words.is_empty() {
        // Only a shortcut: without it every entry's text is tested, with the same answer.
        watch.words(&mut || {
            let _ = index.grep_ready();
        });
    }
    let key = q.project.as_deref().map(project_key);
    // The index is a cache on disk: only names that are day-file stems become paths, and the
    // stems the purged entries' rows are kept under say which purges to show.
    let days = index.files_for(key.as_deref(), filter, q.count).ok()?;
    Some(
        days.into_iter()
            .filter(|d| {
                let purged = d
                    .strip_suffix(PURGED_SUFFIX)
                    .filter(|day| crate::clock::is_day(day));
                paths::split_day_stem(d).is_some() || purged.is_some()
            })
            .collect(),
    )
}

/// The vault's index with its record cache refreshed over `scope`, or, with `None`, over every
/// day file as it is now (a running server's watcher vouches for what it heard, else each is
/// compared); `None` without an index, or when it cannot be read.
fn current_index(vault: &Vault, scope: Option<Scope<'_>>) -> Option<Index> {
    refreshed(open_index(vault)?, vault, scope)
}

/// The vault's index as it is on disk; `None` without one, or when it cannot be read.
fn open_index(vault: &Vault) -> Option<Index> {
    if !crate::index::location(vault).0.exists() {
        return None;
    }
    Index::open(vault, false).ok()
}

/// `index` with its record cache refreshed over `scope` (as [`current_index`]).
fn refreshed(index: Index, vault: &Vault, scope: Option<Scope<'_>>) -> Option<Index> {
    let src = super::source::Source::open(vault).ok()?;
    match scope {
        Some(scope) => index.refresh_records(&src, scope).ok()?,
        None => index.refresh_records_or_ask(&src).ok()?,
    };
    Some(index)
}

/// Names the commit that added each row and each retraction not named yet (by the line it
/// added, for an id several lines carry), from the verify cache's entries.
fn name_commits(rows: &mut [Row], added_by: &crate::audit::added_by::AddedBy) {
    let ids: HashSet<&str> = rows
        .iter()
        .flat_map(|r| [Some(r.id()), r.retraction.as_ref().map(|x| x.id.as_str())])
        .flatten()
        .collect();
    let by = added_by.map_for(&ids);
    // Read while `by` borrows the rows' ids, then given to the rows.
    let named: Vec<(Option<Rc<str>>, Option<String>)> = rows
        .iter()
        .map(|r| {
            let retraction = r.retraction.as_ref().and_then(|x| by.get(x.id.as_str()));
            (by.get(r.id()).cloned(), retraction.map(|c| c.to_string()))
        })
        .collect();
    for (r, (commit, retraction)) in rows.iter_mut().zip(named) {
        if r.commit.is_none() {
            r.commit = commit;
        }
        if let Some(x) = r.retraction.as_mut().filter(|x| x.commit.is_none()) {
            x.commit = retraction;
        }
    }
}

/// The entry ids more than one line of the record carries.
fn ids_held_twice<'a>(ids: impl Iterator<Item = &'a str>) -> HashSet<String> {
    let mut count: HashMap<&str, usize> = HashMap::new();
    for id in ids {
        *count.entry(id).or_default() += 1;
    }
    count
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|(id, _)| id.to_string())
        .collect()
}

/// For each entry of a file, which of the file's entries with its id it is (0 for the first).
fn nth_of_id(entries: &[(Entry, Status)]) -> Vec<usize> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    entries
        .iter()
        .map(|(e, _)| {
            let n = seen.entry(e.id.as_str()).or_default();
            *n += 1;
            *n - 1
        })
        .collect()
}

/// The commit that added the `k`-th line carrying entry `id` of the day file `stem`, whose
/// committed bytes are `bytes`.
fn exact_commit(
    store: &Store,
    bytes: &[u8],
    stem: &str,
    id: &str,
    k: usize,
) -> Result<Option<String>, StoreError> {
    let marker = format!("\"id\":\"{id}\"");
    let Some(line) = bytes
        .split(|b| *b == b'\n')
        .filter(|l| l.windows(marker.len()).any(|w| w == marker.as_bytes()))
        .nth(k)
    else {
        return Ok(None);
    };
    let path = paths::day_file(stem);
    Ok(store.commit_adding(&path, line)?.map(|c| c.to_string()))
}

/// The line diff verify reported for each edited entry, by entry id.
fn diffs(findings: &[Finding]) -> HashMap<String, String> {
    findings
        .iter()
        .filter(|f| matches!(f.kind, Kind::Edited | Kind::Truncated | Kind::Unparseable))
        .filter_map(|f| Some((f.entry.clone()?, f.diff.clone()?)))
        .collect()
}

/// The stems of the day files in the working tree.
fn working_days(store: &Store) -> Vec<String> {
    std::fs::read_dir(store.root().join(paths::SESSIONS_DIR))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let stem = name.strip_suffix(".md")?;
            paths::split_day_stem(stem).map(|_| stem.to_string())
        })
        .collect()
}

/// The day of a day file's stem (`YYYY-MM-DD` or `YYYY-MM-DD.<tag>`).
fn day_of_stem(stem: &str) -> &str {
    paths::split_day_stem(stem).map_or(stem, |(day, _)| day)
}

fn retracted(r: Retraction, day: &str) -> Retracted {
    Retracted {
        commit: None,
        id: r.id,
        day: day.to_string(),
        time: r.time,
        reason: r.reason,
    }
}

/// The row of an entry of `day`, in `file`, with its status; nothing named yet.
fn row(entry: Entry, day: String, status: Status, file: Rc<str>) -> Row {
    Row {
        step: Step {
            day,
            entry,
            status,
            supersede: Default::default(),
        },
        commit: None,
        file,
        line: None,
        diff: None,
        retraction: None,
    }
}

/// Gives each row its supersede links: from the index's resolved claims when the vault has an
/// index, else from the claims of the rows themselves.
fn mark_superseded(vault: &Vault, rows: &mut [Row]) {
    let claims =
        current_index(vault, Some(Scope::Quick(&[]))).and_then(|index| index.supersedes().ok());
    match claims {
        Some(claims) => rows
            .iter_mut()
            .for_each(|r| r.step.supersede = claims.links(r.id())),
        None => of_rows(rows),
    }
}

/// Each row's links from the claims of the rows whose claims count, resolved.
fn of_rows(rows: &mut [Row]) {
    let ids: BTreeSet<&str> = rows.iter().map(Row::id).collect();
    let claims: Vec<Claim> = rows
        .iter()
        .filter(|r| r.standing().claims())
        .flat_map(|r| {
            let e = &r.step.entry;
            e.supersedes
                .iter()
                .flatten()
                .filter(|t| ids.contains(t.as_str()))
                .map(|t| Claim {
                    by: e.id.clone(),
                    time: e.time.clone(),
                    target: t.clone(),
                })
        })
        .collect();
    let resolved = Supersession::resolve(&claims);
    for r in rows {
        r.step.supersede = resolved.links(r.id(), &[], &|_| true);
    }
}

/// The `@2` entry lines of a day file by entry id, in file order (an id two lines carry has
/// both, in order).
fn raw_lines(bytes: Option<&[u8]>) -> HashMap<String, VecDeque<String>> {
    let mut out: HashMap<String, VecDeque<String>> = HashMap::new();
    let Some(text) = bytes.map(crate::records::text::lossy) else {
        return out;
    };
    for l in text.lines().filter(|l| l.contains("<!-- rutter:entry ")) {
        // The machine part, after the line's last marker, starts with its id.
        let id = l
            .rsplit_once("<!-- rutter:entry ")
            .and_then(|(_, json)| json.strip_prefix("{\"id\":\""))
            .and_then(|rest| rest.split('"').next());
        if let Some(id) = id {
            out.entry(id.to_string())
                .or_default()
                .push_back(l.to_string());
        }
    }
    out
}
