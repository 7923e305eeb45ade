//! `git rutter log`: every record, newest first, with the commit that added it and its status.

use super::color::{self, Palette};
use super::{cannot_run, user_error, CommandResult, Exit, FilterArgs, Ui};
use crate::audit::{Finding, Kind, Options};
use crate::clock::Clock;
use crate::records::filter::EntryFilter;
use crate::records::retraction::Retraction;
use crate::records::standing::{self, Status};
use crate::records::text::field_safe;
use crate::records::{paths, Entry};
use crate::store::Store;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;

/// List records newest first: summary, the commit that added each, time and status.
///
/// Status is `committed`, `pending` (journalled, not committed yet), `edited after commit` or
/// `deleted` (its committed line or file is gone from the working tree; the committed summary is
/// shown), `unverified` (in a day file only: neither committed nor journalled) or `retracted`
/// (followed by the retraction's commit and reason). With -p, each entry is followed by the
/// line its commit added, as a patch (as `git log -p`), and an edited one by its edit.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only this entry: its id, or the short form `recent` shows.
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(super::complete::entry_ids))]
    pub entry: Option<String>,
    /// Only entries of this day (YYYY-MM-DD; a local day unless --utc).
    #[arg(long, value_name = "DAY", conflicts_with = "entry")]
    pub day: Option<String>,
    /// At most this many entries (default 20).
    #[arg(short = 'n', long, default_value_t = 20)]
    pub count: usize,
    /// Every entry.
    #[arg(long)]
    pub all: bool,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Only entries whose project is NAME (case-insensitive, whole name).
    #[arg(long, value_name = "NAME")]
    pub project: Option<String>,
    /// Only entries written by this client (its label: claude, codex, grok, copilot, agy,
    /// muse, cursor, gemini, opencode, windsurf; case-insensitive).
    #[arg(long, value_name = "CLIENT")]
    pub client: Option<String>,
    /// Show the line each entry's commit added, as a patch; for an edited entry, the edit.
    #[arg(short = 'p', long = "patch")]
    pub patch: bool,
    /// Show times and count days in UTC, as recorded (by default in your time zone, with its
    /// offset; JSON times are always UTC).
    #[arg(long)]
    pub utc: bool,
    /// Print as JSON.
    #[arg(long)]
    pub json: bool,
}

/// One row of `log --json`: every key always written (`null` or `[]` when it has no value;
/// spec/verify.md, "log").
#[derive(Debug, Serialize)]
struct Row {
    id: String,
    day: String,
    time: String,
    summary: String,
    status: &'static str,
    commit: Option<String>,
    /// The day file that holds it (vault-relative).
    file: String,
    project: Option<String>,
    client: Option<String>,
    refs: Vec<crate::records::NoteRef>,
    /// The entry's line as its day file holds it (`-p` shows it as the line its commit added).
    #[serde(skip)]
    line: Option<String>,
    retraction: Option<Retracted>,
    diff: Option<String>,
    /// The ids this entry names as the ones it replaces (spec/recall.md, "Supersede").
    supersedes: Option<Vec<String>>,
    /// The entries that replace this one, newest first.
    superseded_by: Vec<String>,
}

/// The retraction that took an entry back.
#[derive(Debug, Clone, Serialize)]
struct Retracted {
    id: String,
    day: String,
    time: String,
    reason: String,
    /// The commit that added the retraction (`None` while it is pending).
    commit: Option<String>,
}

/// Runs the command. An unknown entry id is exit status 1, a malformed day 2.
pub fn run(ui: &mut Ui, vault: Option<PathBuf>, args: Args) -> CommandResult {
    let clock = Clock::for_flag(args.utc);
    let mut filter = args
        .filter
        .filter(crate::clock::now(), &clock)?
        .of_client(args.client.as_deref());
    if let Some(d) = &args.day {
        if !crate::clock::is_day(d) {
            return Err(cannot_run(format!("{d} is not a date (YYYY-MM-DD)")));
        }
        filter = filter.on_day(d, &clock).map_err(cannot_run)?;
    }
    let vault = super::interactive_vault(ui, vault.as_deref())?;
    let store = Store::open(&vault)?;
    let newest = (!args.all && args.entry.is_none()).then_some(args.count);
    let only = prefiltered(ui, &vault, &filter, args.project.as_deref(), newest);
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
        ui.warn("git-rutter: another git-rutter command (a sync or a capture) holds the capture lock; the statuses below were read without it (best effort).");
    }
    let mut rows = rows(&store, &report.findings, &filter, only.as_ref())?;
    if let Some(p) = &args.project {
        let want = crate::index::entries::project_key(p);
        rows.retain(|r| {
            r.project.as_deref().map(crate::index::entries::project_key) == Some(want.clone())
        });
    }
    if let Some(given) = &args.entry {
        if let Err(ids) = entry_rows(&mut rows, given) {
            return Err(user_error(format!(
                "{given} is the start of several entry ids ({}); give more of the id.",
                ids.join(", ")
            )));
        }
    }
    if let (Some(id), true) = (&args.entry, rows.is_empty()) {
        return Err(user_error(format!(
            "no entry {id} in refs/rutter/records or the day files."
        )));
    }
    rows.sort_by(|a, b| (&b.day, &b.time).cmp(&(&a.day, &a.time)));
    if !args.all && args.entry.is_none() {
        rows.truncate(args.count);
    }
    name_commits(&mut rows, &report.added_by);
    mark_superseded(&vault, &mut rows);
    if args.json {
        ui.print_json(&rows)?;
    } else {
        print_rows(ui, &rows, args.patch, &clock)?;
    }
    Ok(Exit::Clean)
}

/// Keeps the rows of the entry `given` names: a whole id, or a short one (`recent` shows them)
/// that starts one id only; `Err` lists the ids a short one starts.
fn entry_rows(rows: &mut Vec<Row>, given: &str) -> Result<(), Vec<String>> {
    if rows.iter().any(|r| r.id == given) || !crate::index::short_ids::is_short_id(given) {
        rows.retain(|r| r.id == given);
        return Ok(());
    }
    rows.retain(|r| r.id.starts_with(given));
    let ids: BTreeSet<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    match ids.len() {
        0 | 1 => Ok(()),
        _ => Err(ids.into_iter().take(6).map(str::to_string).collect()),
    }
}

/// The human form: one line per entry, with -p its patch indented below.
fn print_rows(ui: &mut Ui, rows: &[Row], patch: bool, clock: &Clock) -> std::io::Result<()> {
    for r in rows {
        let commit = r
            .commit
            .as_deref()
            .map_or_else(|| "-------".to_string(), crate::shortid::short);
        let mut why = r.retraction.as_ref().map_or(String::new(), |x| {
            let by = x
                .commit
                .as_deref()
                .map_or_else(|| "a pending commit".to_string(), crate::shortid::short);
            format!("  (retracted in {by}: {})", field_safe(&x.reason))
        });
        if !r.superseded_by.is_empty() {
            why.push_str(&format!(
                "  (superseded by {})",
                field_safe(&r.superseded_by.join(", "))
            ));
        }
        // Each field on the line as one field: a line break in a forged one is shown escaped.
        let (day, time) = clock.day_time(&r.day, &r.time);
        let (day, time) = (field_safe(&day), field_safe(&time));
        let line = format!(
            "{commit} {day} {time} {:<21} {}  {}{why}",
            r.status,
            field_safe(&r.id),
            field_safe(&r.summary)
        );
        // The commit id and the status are ASCII written by us: sanitising leaves their places.
        let at = commit.len() + day.len() + time.len() + 3;
        ui.print_painted(&line, |p, safe| {
            paint_row(p, safe, commit.len(), at, r.status)
        })?;
        // An edited entry shows its edit; any other, as `git log -p`, the line its commit added.
        let added = r
            .line
            .as_ref()
            .map(|l| format!("--- a/{f}\n+++ b/{f}\n+{l}", f = r.file));
        if let (true, Some(d)) = (patch, r.diff.as_ref().or(added.as_ref())) {
            let indented: Vec<String> = d.lines().map(|l| format!("    {l}")).collect();
            ui.print_painted(&indented.join("\n"), |p, t| p.diff(t, 4))?;
        }
    }
    if rows.is_empty() {
        ui.print("no records")?;
    }
    Ok(())
}

/// A `log` line with its commit id (the first `commit_len` bytes) and its state (at byte `at`)
/// painted; a line that does not split there is left as it is.
fn paint_row(color: &Palette, line: &str, commit_len: usize, at: usize, state: &str) -> String {
    let end = at + state.len();
    match (
        line.get(..commit_len),
        line.get(commit_len..at),
        line.get(at..end),
        line.get(end..),
    ) {
        (Some(commit), Some(between), Some(s), Some(rest)) if s == state => format!(
            "{}{between}{}{rest}",
            color.paint(color::YELLOW, commit),
            color.paint(color::state_style(state), s)
        ),
        _ => line.to_string(),
    }
}

/// Every entry of the record (the day files committed at the tip, the pending journal, lines
/// only a working file has) with its status from the classifier recall uses
/// (`records::status::classify`), the diff verify found for an edited one, and the retraction
/// that took it back.
fn rows(
    store: &Store,
    findings: &[Finding],
    filter: &EntryFilter,
    only: Option<&BTreeSet<String>>,
) -> anyhow::Result<Vec<Row>> {
    let diffs = diffs(findings);
    // With the index's days, only those are looked up in the ref and the working tree.
    let committed: BTreeMap<String, crate::store::Oid> = match (store.tip()?, only) {
        (Some(tip), None) => store.committed_days(tip)?.into_iter().collect(),
        (Some(tip), Some(o)) => store.committed_days_of(tip, o)?.into_iter().collect(),
        (None, _) => BTreeMap::new(),
    };
    let pending = store.pending_lines()?;
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
    let mut entries = Vec::new();
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
        let stem = d.clone();
        let d = day_of_stem(d);
        let record = standing::classify(bytes.as_deref(), working.as_deref(), &lines);
        for (r, _) in record
            .retractions
            .into_iter()
            .filter(|(_, s)| s.is_recorded())
        {
            retractions
                .entry(r.retracts.clone())
                .or_insert_with(|| retracted(r, d));
        }
        if last.is_none_or(|want| d <= want) {
            let mut raw = raw_lines(working.as_deref().or(bytes.as_deref()));
            entries.extend(record.entries.into_iter().map(|(e, st)| {
                let line = raw
                    .get_mut(&e.id)
                    .and_then(std::collections::VecDeque::pop_front);
                (stem.clone(), e, st, line)
            }));
        }
    }
    let held_twice = ids_held_twice(&entries);
    let mut seen: HashMap<(String, String), usize> = HashMap::new();
    let mut rows = Vec::with_capacity(entries.len());
    for (stem, e, st, line) in entries {
        let d = day_of_stem(&stem).to_string();
        let nth = seen.entry((stem.clone(), e.id.clone())).or_default();
        let k = *nth;
        *nth += 1;
        if !filter.matches(&e) {
            continue;
        }
        let retraction = retractions.get(&e.id).cloned();
        let status = match retraction {
            Some(_) => "retracted",
            None => st.as_str(),
        };
        let diff = diffs.get(&e.id).cloned().filter(|_| st == Status::Edited);
        // An id several lines carry (two writers stamping one millisecond, or a remote's
        // entry): each line is named with the commit that added that very line.
        let exact = match held_twice.contains(&e.id) {
            true => exact_commit(store, &committed, &stem, &e.id, k)?,
            false => None,
        };
        let mut r = row(e, &d, status, diff, retraction);
        r.file = paths::day_file(&stem);
        r.line = line;
        if exact.is_some() {
            r.commit = exact;
        }
        rows.push(r);
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
) -> anyhow::Result<Vec<Row>> {
    let Some(tip) = store.tip()? else {
        return Ok(vec![]);
    };
    let (first, last) = filter.day_range();
    let mut out = Vec::new();
    for p in crate::recorder::purge::recorded(store, tip)? {
        let stem = format!("{}.~purged", p.day);
        let in_range =
            first.is_none_or(|f| p.day.as_str() >= f) && last.is_none_or(|l| p.day.as_str() <= l);
        let e = p.placeholder();
        if !in_range || only.is_some_and(|o| !o.contains(&stem)) || !filter.matches(&e) {
            continue;
        }
        let mut r = row(e, &p.day, "purged", None, None);
        r.file = paths::PURGES.to_string();
        out.push(r);
    }
    Ok(out)
}

/// The day files worth reading when the filter names words, a client or a project, or only the
/// `newest` entries are shown: those the index's record cache (brought up to date first) says
/// hold a matching entry (of the `newest` matching), a line with its id or a retraction of it. `None` (read
/// every day file) without an index, or when it cannot be read: the statuses still come from the
/// record either way.
fn prefiltered(
    ui: &Ui,
    vault: &crate::vault::Vault,
    filter: &EntryFilter,
    project: Option<&str>,
    newest: Option<usize>,
) -> Option<BTreeSet<String>> {
    let filtered = !filter.words.is_empty() || filter.client.is_some() || project.is_some();
    if !filtered && newest.is_none() {
        return None;
    }
    if !crate::index::location(vault).0.exists() {
        return None;
    }
    let index = crate::index::Index::open(vault, false).ok()?;
    let src = crate::recall::source::Source::open(vault).ok()?;
    // Every day file as it is now: a watching server vouches, else each is stat'ed.
    index.refresh_records_or_ask(&src).ok()?;
    if !filter.words.is_empty() {
        let _line = super::progress::Progress::words_index(ui);
        // Only a shortcut: without it every entry's text is tested, with the same answer.
        let _ = index.grep_ready();
    }
    let key = project.map(crate::index::entries::project_key);
    // The index is a cache on disk: only names that are day-file stems become paths, and the
    // stems the purged entries' rows are kept under say which purges to show.
    let days = index.files_for(key.as_deref(), filter, newest).ok()?;
    Some(
        days.into_iter()
            .filter(|d| {
                let purged = d
                    .strip_suffix(".~purged")
                    .filter(|day| crate::clock::is_day(day));
                paths::split_day_stem(d).is_some() || purged.is_some()
            })
            .collect(),
    )
}

/// Names the commit that added each row and each retraction not named yet (by the line it
/// added, for an id several lines carry), from the verify cache's entries.
fn name_commits(rows: &mut [Row], added_by: &crate::audit::added_by::AddedBy) {
    let ids: std::collections::HashSet<&str> = rows
        .iter()
        .flat_map(|r| {
            [
                Some(r.id.as_str()),
                r.retraction.as_ref().map(|x| x.id.as_str()),
            ]
        })
        .flatten()
        .collect();
    let by = added_by.map_for(&ids);
    for r in rows {
        if r.commit.is_none() {
            r.commit = by.get(&r.id).cloned();
        }
        if let Some(x) = r.retraction.as_mut().filter(|x| x.commit.is_none()) {
            x.commit = by.get(&x.id).cloned();
        }
    }
}

/// The entry ids more than one line of the record carries.
fn ids_held_twice(
    entries: &[(String, Entry, Status, Option<String>)],
) -> std::collections::HashSet<String> {
    let mut count: HashMap<&str, usize> = HashMap::new();
    for (_, e, _, _) in entries {
        *count.entry(e.id.as_str()).or_default() += 1;
    }
    count
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|(id, _)| id.to_string())
        .collect()
}

/// The commit that added the `k`-th committed line carrying entry `id` of the day file `stem`.
fn exact_commit(
    store: &Store,
    committed: &BTreeMap<String, crate::store::Oid>,
    stem: &str,
    id: &str,
    k: usize,
) -> anyhow::Result<Option<String>> {
    let Some(oid) = committed.get(stem) else {
        return Ok(None);
    };
    let bytes = store.blob_bytes(*oid, None)?;
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

fn row(
    e: Entry,
    day: &str,
    status: &'static str,
    diff: Option<String>,
    retraction: Option<Retracted>,
) -> Row {
    Row {
        commit: None,
        file: paths::day_file(day),
        project: e.project().map(str::to_string),
        client: e.client.clone(),
        refs: e.refs.clone(),
        line: None,
        id: e.id,
        day: day.to_string(),
        time: e.time,
        summary: e.summary,
        status,
        retraction,
        diff,
        supersedes: e.supersedes,
        superseded_by: Vec::new(),
    }
}

/// Names, on each row, the entries that replace it: from the index's resolved claims when the
/// vault has an index, else from the claims of the rows themselves.
fn mark_superseded(vault: &crate::vault::Vault, rows: &mut [Row]) {
    let from_index = || {
        if !crate::index::location(vault).0.exists() {
            return None;
        }
        let index = crate::index::Index::open(vault, false).ok()?;
        let src = crate::recall::source::Source::open(vault).ok()?;
        index
            .refresh_records(&src, crate::index::entries::Scope::Quick(&[]))
            .ok()?;
        index.supersedes().ok()
    };
    let by = match from_index() {
        Some(claims) => rows
            .iter()
            .map(|r| claims.links(&r.id).superseded_by)
            .collect::<Vec<_>>(),
        None => of_rows(rows),
    };
    for (r, by) in rows.iter_mut().zip(by) {
        r.superseded_by = by;
    }
}

/// Each row's replacements from the claims of the rows (recorded, not retracted), resolved.
fn of_rows(rows: &[Row]) -> Vec<Vec<String>> {
    use crate::records::supersede::{Claim, Supersession};
    let ids: BTreeSet<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    let claims: Vec<Claim> = rows
        .iter()
        .filter(|r| {
            matches!(
                r.status,
                "committed" | "pending" | "edited after commit" | "deleted"
            )
        })
        .flat_map(|r| {
            r.supersedes
                .iter()
                .flatten()
                .filter(|t| ids.contains(t.as_str()))
                .map(|t| Claim {
                    by: r.id.clone(),
                    time: r.time.clone(),
                    target: t.clone(),
                })
        })
        .collect();
    let resolved = Supersession::resolve(&claims);
    rows.iter()
        .map(|r| resolved.links(&r.id, &[], &|_| true).superseded_by)
        .collect()
}

/// The `@2` entry lines of a day file by entry id, in file order (an id two lines carry has
/// both, in order).
fn raw_lines(bytes: Option<&[u8]>) -> HashMap<String, std::collections::VecDeque<String>> {
    let mut out: HashMap<String, std::collections::VecDeque<String>> = HashMap::new();
    let Some(text) = bytes.map(String::from_utf8_lossy) else {
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
