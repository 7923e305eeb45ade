//! Bringing the notes in line with the file system, directory by directory: a directory is
//! listed again, each of its notes whose size or stamp differs from the snapshot's (or is new,
//! or was recorded racy) is read, notes and subdirectories gone from it are removed, new
//! subdirectories are walked whole, and its snapshot row is rewritten. A full refresh does
//! this for every directory of the walk; the freshness check and the MCP server's watcher
//! name only the directories that changed.

use super::notes::{self, Refresh};
use super::snapshot::{self, DirRow, Entry};
use super::walk::{self, DirScan};
use rusqlite::Transaction;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::time::Instant;

/// What a rescan did, and the directories it found that the snapshot did not know (the MCP
/// server watches them).
#[derive(Debug, Default, Clone)]
pub(crate) struct Rescan {
    pub notes: Refresh,
    pub new_dirs: Vec<String>,
}

/// Walks the whole vault and brings `notes`, `notes_fts` and `note_dirs` in line with it.
pub(crate) fn full(tx: &Transaction<'_>, root: &Path) -> Result<Refresh, rusqlite::Error> {
    let started = Instant::now();
    let since = snapshot::now_ns();
    let scans = walk::walk_dirs(root, "");
    let mut old: HashMap<String, DirRow> = snapshot::load_all(tx)?
        .into_iter()
        .filter_map(|raw| raw.decode())
        .map(|row| (row.path.clone(), row))
        .collect();
    let mut report = Refresh::default();
    // Indexed notes not yet met in the walk; what is left at the end is gone.
    let mut unmet: HashMap<String, i64> = notes::all_paths(tx)?.into_iter().collect();
    let mut plans = Vec::with_capacity(scans.len());
    let mut path = String::new();
    for scan in scans {
        let before = old.remove(&scan.path);
        let mut plan = Plan::new(scan, before);
        for (n, kept) in plan.scan.notes.iter().zip(plan.kept.iter_mut()) {
            path.clear();
            if !plan.scan.path.is_empty() {
                path.push_str(&plan.scan.path);
                path.push('/');
            }
            path.push_str(&n.name);
            // A note the snapshot says is indexed but `notes` lacks is read again.
            if unmet.remove(path.as_str()).is_none() && kept.is_some_and(|i| plan.before[i].indexed)
            {
                *kept = None;
            }
        }
        plans.push(plan);
    }
    // Rows of directories gone from the walk; their notes go with the sweep below.
    for gone in old.keys() {
        snapshot::delete_tree(tx, gone)?;
    }
    // Any indexed note the walk did not list goes, whatever the snapshot says.
    for (path, id) in unmet {
        notes::delete_id(tx, id)?;
        report.gone(path);
    }
    write_plans(tx, root, plans, since, &mut report)?;
    report.indexed = notes::count(tx)?;
    report.elapsed_ms = started.elapsed().as_millis();
    Ok(report)
}

/// Lists `dirs` again (vault-relative directories; one the snapshot does not know stands for
/// its nearest known ancestor, whose listing shows what became of it) and brings what is in
/// and under them in line with the file system.
pub(crate) fn dirs(
    tx: &Transaction<'_>,
    root: &Path,
    dirs: &[String],
) -> Result<Rescan, rusqlite::Error> {
    let started = Instant::now();
    let since = snapshot::now_ns();
    let mut known = snapshot::paths(tx)?;
    let wanted: BTreeSet<String> = dirs.iter().map(|d| nearest_known(&known, d)).collect();
    let mut out = Rescan::default();
    let mut plans = Vec::new();
    for dir in &wanted {
        if !known.contains(dir.as_str()) {
            // A root never recorded (it could not be opened before) is walked whole; any
            // other directory was forgotten with a parent that is gone.
            if dir.is_empty() {
                for found in walk::walk_dirs(root, "") {
                    out.new_dirs.push(found.path.clone());
                    plans.push(Plan::new(found, None));
                }
            }
            continue;
        }
        let Some(scan) = walk::scan_one(root, dir) else {
            forget_tree(tx, dir, &mut known, &mut out.notes)?;
            continue;
        };
        for child in children(&known, dir) {
            if !scan.subdirs.contains(&child) {
                forget_tree(tx, &walk::join(dir, &child), &mut known, &mut out.notes)?;
            }
        }
        for sub in &scan.subdirs {
            let path = walk::join(dir, sub);
            if !known.contains(&path) {
                for found in walk::walk_dirs(root, &path) {
                    out.new_dirs.push(found.path.clone());
                    plans.push(Plan::new(found, None));
                }
            }
        }
        let before = snapshot::load(tx, dir)?;
        plans.push(Plan::new(scan, before));
    }
    for p in &plans {
        for gone in &p.gone {
            notes::delete_path(tx, gone, &mut out.notes)?;
        }
    }
    write_plans(tx, root, plans, since, &mut out.notes)?;
    out.notes.indexed = notes::count(tx)?;
    out.notes.elapsed_ms = started.elapsed().as_millis();
    Ok(out)
}

/// `dir` if the snapshot knows it, else its nearest ancestor that it knows (the root last).
fn nearest_known(known: &BTreeSet<String>, dir: &str) -> String {
    let mut dir = dir;
    while !dir.is_empty() && !known.contains(dir) {
        dir = dir.rsplit_once('/').map_or("", |(parent, _)| parent);
    }
    dir.to_string()
}

/// Forgets a directory and everything under it.
fn forget_tree(
    tx: &Transaction<'_>,
    dir: &str,
    known: &mut BTreeSet<String>,
    report: &mut Refresh,
) -> Result<(), rusqlite::Error> {
    snapshot::delete_tree(tx, dir)?;
    let (low, high) = snapshot::subtree_range(dir);
    known.retain(|p| p != dir && !(p.as_str() >= low.as_str() && p.as_str() < high.as_str()));
    notes::delete_under(tx, dir, report)
}

/// The names of the known directories directly under `dir`.
fn children(known: &BTreeSet<String>, dir: &str) -> Vec<String> {
    let (low, high) = snapshot::subtree_range(dir);
    known
        .range(low.clone()..high)
        .filter_map(|p| p.get(low.len()..))
        .filter(|rest| !rest.is_empty() && !rest.contains('/'))
        .map(str::to_string)
        .collect()
}

/// One directory's listing set against its snapshot row.
struct Plan {
    scan: DirScan,
    /// The recorded entries of the old row.
    before: Vec<Entry>,
    /// For each listed note, by position in `scan.notes`, the position in `before` of its
    /// entry when the stamp still matches; `None` where the note must be read.
    kept: Vec<Option<usize>>,
    /// Indexed notes of the old row the listing no longer has.
    gone: Vec<String>,
    /// Whether the row must be rewritten even if no note is read.
    dirty: bool,
}

impl Plan {
    /// Walks the listing and the old row side by side (both sorted by name).
    fn new(scan: DirScan, before: Option<DirRow>) -> Plan {
        let dirty = before.as_ref().is_none_or(|r| {
            r.stamp != scan.stamp
                || r.stamp.ctime_ns == 0
                || r.listed != scan.listed
                || r.entries.len() != scan.notes.len()
        });
        let mut old = before.map(|r| r.entries).unwrap_or_default();
        old.sort_by(|a, b| a.name.cmp(&b.name));
        let mut kept = Vec::with_capacity(scan.notes.len());
        let mut gone = Vec::new();
        let mut i = 0;
        for n in &scan.notes {
            while i < old.len() && old[i].name < n.name {
                if old[i].indexed {
                    gone.push(scan.child(&old[i].name));
                }
                i += 1;
            }
            let same = old.get(i).filter(|e| e.name == n.name);
            kept.push(same.and_then(|e| {
                (e.size == n.size && e.stamp == n.stamp && e.stamp.ctime_ns != 0).then_some(i)
            }));
            i += usize::from(same.is_some());
        }
        gone.extend(
            old[i.min(old.len())..]
                .iter()
                .filter(|e| e.indexed)
                .map(|e| scan.child(&e.name)),
        );
        Plan {
            scan,
            before: old,
            kept,
            gone,
            dirty,
        }
    }
}

/// Reads every note the plans need, then writes each plan's snapshot row that changed.
fn write_plans(
    tx: &Transaction<'_>,
    root: &Path,
    plans: Vec<Plan>,
    since: i64,
    report: &mut Refresh,
) -> Result<(), rusqlite::Error> {
    let todo: Vec<String> = plans
        .iter()
        .flat_map(|p| {
            p.scan
                .notes
                .iter()
                .zip(&p.kept)
                .filter(|(_, kept)| kept.is_none())
                .map(|(n, _)| p.scan.child(&n.name))
        })
        .collect();
    let read: HashMap<String, Option<(u64, walk::Stamp)>> =
        notes::read_and_store(tx, root, todo, report)?
            .into_iter()
            .collect();
    for plan in plans {
        let unchanged = plan.kept.iter().all(Option::is_some);
        report.skipped += plan
            .kept
            .iter()
            .flatten()
            .filter(|&&i| !plan.before[i].indexed)
            .count();
        if unchanged && !plan.dirty {
            continue;
        }
        let mut before: Vec<Option<Entry>> = plan.before.into_iter().map(Some).collect();
        let entries = plan
            .scan
            .notes
            .iter()
            .zip(plan.kept)
            .map(|(n, kept)| {
                if let Some(e) = kept.and_then(|i| before[i].take()) {
                    return e;
                }
                let outcome = read.get(&plan.scan.child(&n.name)).copied().flatten();
                let (size, stamp) = outcome.unwrap_or((n.size, n.stamp));
                report.skipped += usize::from(outcome.is_none());
                Entry {
                    name: n.name.clone(),
                    size,
                    stamp: snapshot::settled(stamp, since),
                    indexed: outcome.is_some(),
                }
            })
            .collect();
        snapshot::put(
            tx,
            &DirRow {
                path: plan.scan.path,
                stamp: snapshot::settled(plan.scan.stamp, since),
                listed: plan.scan.listed,
                entries,
            },
        )?;
    }
    Ok(())
}
