//! `git rutter log`: every record, newest first, with the commit that added it and its status.

use crate::records::{dayfile, paths, Entry};
use crate::store::tree::Trees;
use crate::store::verify::{Finding, Kind, Options};
use crate::store::{day_of, Store};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

/// List records newest first: summary, the commit that added each, time and status.
///
/// Status is `committed`, `pending` (in the day file, not committed yet), `edited after commit`
/// or `deleted` (its committed line or file is gone from the working tree). With -p, an
/// edited record is followed by its diff.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only this entry.
    pub entry: Option<String>,
    /// Only entries of this day (YYYY-MM-DD).
    #[arg(long, value_name = "DAY", conflicts_with = "entry")]
    pub day: Option<String>,
    /// At most this many entries (default 20).
    #[arg(short = 'n', long, default_value_t = 20)]
    pub count: usize,
    /// Every entry.
    #[arg(long)]
    pub all: bool,
    /// Show the diff of each edited entry.
    #[arg(short = 'p', long = "patch")]
    pub patch: bool,
    /// Print as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Serialize)]
struct Row {
    id: String,
    day: String,
    time: String,
    summary: String,
    status: &'static str,
    commit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    diff: Option<String>,
}

/// Runs the command. An unknown entry id is exit status 1, a malformed day 2.
pub fn run(vault: Option<PathBuf>, args: Args) -> anyhow::Result<i32> {
    if let Some(d) = &args.day {
        anyhow::ensure!(crate::clock::is_day(d), "{d} is not a date (YYYY-MM-DD)");
    }
    let vault = super::interactive_vault(vault.as_deref())?;
    let store = Store::open(&vault)?;
    let report = store.verify(Options::default())?;
    let mut rows = rows(
        &store,
        &report.findings,
        &report.added_by,
        args.day.as_deref(),
    )?;
    rows.retain(|r| args.entry.as_ref().is_none_or(|e| &r.id == e));
    if let (Some(id), true) = (&args.entry, rows.is_empty()) {
        eprintln!("git-rutter: no entry {id} in refs/rutter/records or the day files.");
        return Ok(super::EXIT_FINDING);
    }
    rows.sort_by(|a, b| (&b.day, &b.time).cmp(&(&a.day, &a.time)));
    if !args.all && args.entry.is_none() {
        rows.truncate(args.count);
    }
    if args.json {
        super::print_json(&rows)?;
    } else {
        print_rows(&rows, args.patch)?;
    }
    Ok(super::EXIT_OK)
}

/// The human form: one line per entry, with -p the diff of an edited one indented below.
fn print_rows(rows: &[Row], patch: bool) -> anyhow::Result<()> {
    for r in rows {
        let commit = r
            .commit
            .as_deref()
            .map(|c| &c[..c.len().min(7)])
            .unwrap_or("-------");
        super::print(&format!(
            "{commit} {} {} {:<21} {}  {}",
            r.day,
            &r.time.get(11..19).unwrap_or(""),
            r.status,
            r.id,
            r.summary
        ))?;
        if let (true, Some(d)) = (patch, &r.diff) {
            super::print(
                &d.lines()
                    .map(|l| format!("    {l}"))
                    .collect::<Vec<_>>()
                    .join("\n"),
            )?;
        }
    }
    if rows.is_empty() {
        super::print("no records")?;
    }
    Ok(())
}

/// A status, and the diff of an edited entry, by entry id.
type Statuses = HashMap<String, (&'static str, Option<String>)>;

/// Every committed entry with its status, plus the entries of the working day files that are
/// not committed (pending, or whatever verify found them to be).
fn rows(
    store: &Store,
    findings: &[Finding],
    added_by: &HashMap<String, String>,
    day: Option<&str>,
) -> anyhow::Result<Vec<Row>> {
    let (mut status, gone_files) = statuses(findings);
    let Some(tip) = store.tip()? else {
        return Ok(vec![]);
    };
    let mut trees = Trees::new(&store.repo)?;
    let mut out = Vec::new();
    let tree = store.repo.find_commit(tip)?.tree_id();
    let committed_files = trees.files(tree, paths::SESSIONS_DIR)?;
    for (path, blob) in &committed_files {
        let Some(d) = day_of(path) else {
            continue;
        };
        if day.is_some_and(|want| want != d) {
            continue;
        }
        let committed = dayfile::parse(d, store.repo.find_blob(*blob)?.content()).entries;
        let ids: HashSet<String> = committed.iter().map(|e| e.id.clone()).collect();
        let gone = gone_files.contains(&path.as_str());
        for e in committed {
            let (s, diff) = status
                .remove(&e.id)
                .unwrap_or((if gone { "deleted" } else { "committed" }, None));
            out.push(row(e, d, s, added_by, diff));
        }
        out.extend(uncommitted(store, path, &ids, &mut status, added_by));
    }
    let known: HashSet<&str> = committed_files.iter().map(|(p, _)| p.as_str()).collect();
    for path in store.uncommitted_record_files(&known) {
        if day_of(&path).is_some_and(|d| day.is_none_or(|want| want == d)) {
            out.extend(uncommitted(
                store,
                &path,
                &HashSet::new(),
                &mut status,
                added_by,
            ));
        }
    }
    Ok(out)
}

/// Statuses from verify's findings, and the record files that are gone.
fn statuses(findings: &[Finding]) -> (Statuses, Vec<&str>) {
    let mut status = Statuses::new();
    let mut gone_files = Vec::new();
    for f in findings {
        let s = match f.kind {
            Kind::Edited | Kind::Truncated | Kind::Unparseable => "edited after commit",
            Kind::Deleted | Kind::Symlink => {
                gone_files.extend(f.path.as_deref());
                continue;
            }
            Kind::Pending => "pending",
            _ => continue,
        };
        if let Some(id) = &f.entry {
            status.insert(id.clone(), (s, f.diff.clone()));
        }
    }
    (status, gone_files)
}

/// The entries of a working day file that are not among `committed`: pending unless verify
/// reported them otherwise (a line added to a file whose committed bytes were edited).
fn uncommitted(
    store: &Store,
    path: &str,
    committed: &HashSet<String>,
    status: &mut Statuses,
    added_by: &HashMap<String, String>,
) -> Vec<Row> {
    let Some(d) = day_of(path) else {
        return vec![];
    };
    let working = store
        .working(path)
        .map(|b| dayfile::parse(d, &b).entries)
        .unwrap_or_default();
    working
        .into_iter()
        .filter(|e| !committed.contains(&e.id))
        .map(|e| {
            let (s, diff) = status.remove(&e.id).unwrap_or(("pending", None));
            row(e, d, s, added_by, diff)
        })
        .collect()
}

fn row(
    e: Entry,
    day: &str,
    status: &'static str,
    added_by: &HashMap<String, String>,
    diff: Option<String>,
) -> Row {
    Row {
        commit: added_by.get(&e.id).cloned(),
        id: e.id,
        day: day.to_string(),
        time: e.time,
        summary: e.summary,
        status,
        diff,
    }
}
