//! Keeping the index current: notes and day files re-read where they changed, then the
//! identity pass: exact-hash bindings appended to the ledger (under the capture lock, committed
//! to `refs/rutter/records`), git candidates for what stays unresolved, and the projection
//! rebuilt from the ledger.

use crate::clock::{self, Instant};
use crate::index::entries::{EntriesRefresh, Scope};
use crate::index::identity::{self, BoundTo, Candidate, DeadRef, Projected, Resolution};
use crate::index::notes;
use crate::index::{Index, IndexError};
use crate::journal::RecordKind;
use crate::recorder::{RecordError, RecordFile, RecordLine, Recorder};
use crate::records::ledger::{self, Binding};
use crate::store::Store;
use crate::vault::Vault;

/// How much to refresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `reindex`: notes and day files, and always the identity pass.
    Full,
    /// Notes and day files; the identity pass only when something changed.
    Auto,
    /// The record cache only, quickly (what `recent` needs).
    Records,
}

/// What the identity pass found.
#[derive(Debug, Default, Clone)]
pub(crate) struct IdentityReport {
    pub dead: usize,
    pub bound: usize,
    pub unresolved: usize,
    pub appended: usize,
    pub elapsed_ms: u128,
    /// Why new bindings could not be appended, if they could not.
    pub problem: Option<String>,
}

/// What a refresh did.
#[derive(Debug, Default, Clone)]
pub(crate) struct Report {
    pub notes: notes::Refresh,
    pub entries: EntriesRefresh,
    pub identity: Option<IdentityReport>,
}

/// Refreshes `index` for `vault`: notes, then the record cache from the record (`force`
/// rebuilds every table from nothing first).
pub(crate) fn refresh(
    vault: &Vault,
    index: &mut Index,
    mode: Mode,
    force: bool,
) -> Result<Report, IndexError> {
    let src = super::source::Source::open(vault)?;
    let (notes, entries) = if force {
        index.rebuild(&src)?
    } else if mode == Mode::Records {
        let records = index.refresh_records(&src, Scope::Quick(&[]))?;
        (notes::Refresh::default(), records)
    } else {
        let notes = index.refresh_notes()?;
        (notes, index.refresh_records(&src, Scope::Full)?)
    };
    let identity = match mode {
        // `recent` never runs the pass: its fingerprint (a git open, HEAD, two table scans)
        // would be work thrown away.
        Mode::Records => None,
        Mode::Auto | Mode::Full => identity_if_changed(vault, index, mode, force)?,
    };
    Ok(Report {
        notes,
        entries,
        identity,
    })
}

/// After a rescan of the notes (`search`, `show`, the MCP server): the identity pass, only when
/// what changed is something the pass knows of (a cited path gone or back, a binding's target,
/// a candidate, a note now carrying a ref's hash). A note written or edited that no record
/// concerns costs a few lookups, not the pass. (The inputs fingerprint is not consulted: a pure
/// rename keeps the notes' count, sizes and mtimes.)
pub(crate) fn identity_after_rescan(
    vault: &Vault,
    index: &mut Index,
    notes: &notes::Refresh,
) -> Result<Option<IdentityReport>, IndexError> {
    if !index.identity_may_change(notes)? {
        return Ok(None);
    }
    identity_if_changed(vault, index, Mode::Auto, true)
}

/// Runs the identity pass when its inputs changed since the last one (always with `force` or on
/// a new index); `Full` reports the projection's counts when they did not.
fn identity_if_changed(
    vault: &Vault,
    index: &mut Index,
    mode: Mode,
    force: bool,
) -> Result<Option<IdentityReport>, IndexError> {
    let inputs = identity_inputs(vault, index)?;
    let changed = force
        || index.built.is_some()
        || index.meta("identity_inputs")?.as_deref() != Some(inputs.as_str());
    if !changed {
        return Ok(match mode {
            Mode::Full => Some(unchanged_pass(index)?),
            _ => None,
        });
    }
    let report = identity_pass(vault, index)?;
    // Bindings the pass appended changed the ledger. A pass that could not append its bindings
    // (lock busy, write failed) leaves the inputs unrecorded, so the next refresh runs it again.
    if report.problem.is_none() {
        index.set_meta("identity_inputs", &identity_inputs(vault, index)?)?;
    }
    Ok(Some(report))
}

/// Runs the identity pass and rebuilds the projection.
pub fn identity_pass(vault: &Vault, index: &mut Index) -> Result<IdentityReport, IndexError> {
    let started = std::time::Instant::now();
    let now = clock::now();
    let mut report = IdentityReport::default();
    let lock = Recorder::lock_vault(vault, crate::lock::INTERACTIVE_WAIT);
    let mut bindings = read_ledger(vault);
    let latest = crate::records::ledger::latest_bindings(&bindings);
    let dead = index.dead_refs()?;
    let mut decided: Vec<(DeadRef, Resolution)> = Vec::with_capacity(dead.len());
    let mut fresh: Vec<Binding> = Vec::new();
    for d in dead {
        let exact = index.exact_candidates(&d.hash, &d.from)?;
        let res = identity::resolve(&exact, latest.get(&(d.from.clone(), d.hash.clone())));
        if let Resolution::Bind { to } = &res {
            let known = bindings.iter().any(|b| {
                b.from == d.from && b.hash == d.hash && &b.to == to && b.detected == "exact-hash"
            });
            if !known {
                fresh.push(new_binding(&d, to, "exact-hash", now, fresh.len() + 1));
            }
        }
        decided.push((d, res));
    }
    match (&lock, fresh.is_empty()) {
        (_, true) => {}
        (Ok(session), false) => match append_bindings(session, &fresh, now) {
            Ok(()) => report.appended = fresh.len(),
            Err(e) => report.problem = Some(crate::hint::one_line(&e)),
        },
        (Err(e), false) => report.problem = Some(e.to_string()),
    }
    drop(lock);
    bindings.extend(fresh);
    let rows = project(vault, index, decided, now)?;
    report.dead = rows.len();
    report.bound = rows
        .iter()
        .filter(|(_, p)| matches!(p, Projected::Bound(_)))
        .count();
    report.unresolved = report.dead - report.bound;
    index.write_projection(&rows)?;
    report.elapsed_ms = started.elapsed().as_millis();
    Ok(report)
}

/// Turns decisions into projection rows, adding git candidates to unresolved refs.
fn project(
    vault: &Vault,
    index: &Index,
    decided: Vec<(DeadRef, Resolution)>,
    now: Instant,
) -> Result<Vec<(DeadRef, Projected)>, IndexError> {
    let mut git = super::candidates::GitCandidates::new(vault, index)?;
    let mut rows = Vec::with_capacity(decided.len());
    for (d, res) in decided {
        let p = match res {
            Resolution::Bound(b) => Projected::Bound(b),
            Resolution::Bind { to } => Projected::Bound(BoundTo {
                to,
                detected: "exact-hash".into(),
                ts: now.iso(),
                conflict: None,
            }),
            Resolution::Unresolved { exact } => {
                let mut cands: Vec<Candidate> = exact
                    .into_iter()
                    .map(|path| Candidate {
                        path,
                        evidence: None,
                    })
                    .collect();
                for c in git.for_ref(&d)? {
                    if !cands.iter().any(|x| x.path == c.path) {
                        cands.push(c);
                    }
                }
                Projected::Unresolved(cands)
            }
        };
        rows.push((d, p));
    }
    Ok(rows)
}

fn new_binding(d: &DeadRef, to: &str, detected: &str, now: Instant, n: usize) -> Binding {
    Binding {
        id: format!("{}-{n}", now.compact()),
        from: d.from.clone(),
        to: to.to_string(),
        hash: d.hash.clone(),
        detected: detected.to_string(),
        ts: now.iso(),
        extra: Default::default(),
    }
}

/// The ledger's bindings as the working file holds them (a missing file has none).
pub fn read_ledger(vault: &Vault) -> Vec<Binding> {
    crate::store::read_working(&vault.root, ledger::LEDGER_PATH)
        .ok()
        .flatten()
        .map(|bytes| ledger::parse(&bytes).bindings)
        .unwrap_or_default()
}

/// A fingerprint of everything the identity pass depends on: the indexed notes and day files,
/// the ledger file, and HEAD (git candidates follow history).
fn identity_inputs(vault: &Vault, index: &Index) -> Result<String, IndexError> {
    use std::os::unix::fs::MetadataExt;
    let ledger = match std::fs::symlink_metadata(vault.root.join(ledger::LEDGER_PATH)) {
        Ok(m) => format!("{}:{}:{}", m.len(), m.mtime(), m.mtime_nsec()),
        Err(_) => "none".to_string(),
    };
    let head = Store::open(vault)
        .ok()
        .and_then(|s| s.head_id())
        .unwrap_or_default();
    Ok(format!("{ledger}/{head}/{}", index.inputs_state()?))
}

/// The report of a pass that had nothing new to decide: the projection's own counts.
fn unchanged_pass(index: &Index) -> Result<IdentityReport, IndexError> {
    let started = std::time::Instant::now();
    let (bound, unresolved) = index.projection_counts()?;
    Ok(IdentityReport {
        dead: bound + unresolved,
        bound,
        unresolved,
        elapsed_ms: started.elapsed().as_millis(),
        ..Default::default()
    })
}

/// Appends bindings to the ledger and, in a git vault, commits them, through `session`.
pub(crate) fn append_bindings(
    session: &Recorder<'_>,
    new: &[Binding],
    now: Instant,
) -> Result<(), RecordError> {
    if session.git() {
        session.store().map_err(RecordError::NoRef)?;
    }
    let lines: Vec<RecordLine> = new
        .iter()
        .map(|b| RecordLine {
            text: ledger::render(b),
            id: b.id.clone(),
            retracts: None,
        })
        .collect();
    let day = now.day();
    let file = RecordFile {
        kind: RecordKind::Identity,
        path: ledger::LEDGER_PATH,
        day: &day,
    };
    session.append_record(file, &lines, now, false)?;
    Ok(())
}
