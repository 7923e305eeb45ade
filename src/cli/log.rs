//! `git rutter log`: every record, newest first, with the commit that added it and its status.

use crate::records::{dayfile, Entry};
use crate::store::tree::Trees;
use crate::store::verify::{Finding, Kind, Options};
use crate::store::Store;
use serde::Serialize;
use std::collections::HashMap;
use std::path::PathBuf;

/// List records newest first: summary, the commit that added each, time and status.
///
/// Status is `committed`, `pending` (in the day file, not committed yet), `edited after commit`
/// or `deleted` (its committed line or file is gone from the working tree). With -p, each
/// record's line as committed is shown, and for an edited one the diff.
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
    /// Show each entry's committed line and, for edited ones, the diff.
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

/// Runs the command.
pub fn run(vault: Option<PathBuf>, args: Args) -> anyhow::Result<i32> {
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
    rows.sort_by(|a, b| (&b.day, &b.time).cmp(&(&a.day, &a.time)));
    if !args.all && args.entry.is_none() {
        rows.truncate(args.count);
    }
    if args.json {
        super::print(&serde_json::to_string_pretty(&rows)?)?;
        return Ok(super::EXIT_OK);
    }
    for r in &rows {
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
        if args.patch {
            if let Some(d) = &r.diff {
                super::print(
                    &d.lines()
                        .map(|l| format!("    {l}"))
                        .collect::<Vec<_>>()
                        .join("\n"),
                )?;
            }
        }
    }
    if rows.is_empty() {
        super::print("no records")?;
    }
    Ok(super::EXIT_OK)
}

/// Every committed entry with its status, plus pending ones.
fn rows(
    store: &Store,
    findings: &[Finding],
    added_by: &HashMap<String, String>,
    day: Option<&str>,
) -> anyhow::Result<Vec<Row>> {
    let mut status: HashMap<String, (&'static str, Option<String>)> = HashMap::new();
    let mut gone_files: Vec<&str> = Vec::new();
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
    let Some(tip) = store.tip()? else {
        return Ok(vec![]);
    };
    let mut trees = Trees::new(&store.repo)?;
    let mut out = Vec::new();
    for (path, blob) in trees.files(store.repo.find_commit(tip)?.tree_id())? {
        let Some(d) = path
            .strip_prefix("_librarian/sessions/")
            .and_then(|n| n.strip_suffix(".md"))
        else {
            continue;
        };
        if day.is_some_and(|want| want != d) {
            continue;
        }
        let committed = dayfile::parse(d, store.repo.find_blob(blob)?.content()).entries;
        let working = store
            .working(&path)
            .map(|b| dayfile::parse(d, &b).entries)
            .unwrap_or_default();
        let gone = gone_files.contains(&path.as_str());
        for e in committed {
            let (s, diff) = status
                .remove(&e.id)
                .unwrap_or((if gone { "deleted" } else { "committed" }, None));
            out.push(row(e, d, s, added_by, diff));
        }
        for e in working
            .into_iter()
            .filter(|e| status.get(&e.id).is_some_and(|(s, _)| *s == "pending"))
        {
            out.push(row(e, d, "pending", added_by, None));
        }
    }
    Ok(out)
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
