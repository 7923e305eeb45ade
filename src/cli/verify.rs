//! `git rutter verify`: prove that no record changed since it was committed.

use super::color::{self, Palette};
use super::{user_error, CommandError, CommandResult, Exit, Ui};
use crate::audit::{finding, Finding, Options, Report};
use crate::capture::sanitize::{inert_line, SUMMARY_MAX_CHARS};
use crate::clock;
use crate::journal::RecordKind;
use crate::recorder::{RecordFile, RecordLine, Recorder};
use crate::records::text::one_line_safe;
use crate::store::Store;
use std::path::PathBuf;

/// Check that no record was edited, removed or reordered after it was committed.
///
/// Four checks: the history of refs/rutter/records (every commit only appends to record files,
/// adds cited copies that match their names, deletes nothing, and signed commits pass git
/// verify-commit); the ref (it descends from every tip git-rutter wrote, and its reflog shows no
/// rewind); the working tree (each committed record
/// file still begins with its committed bytes: extra complete record lines are pending,
/// anything else is "edited after commit", with a diff); and with --notes, cited notes changed
/// since capture, in place or after a rename the identity ledger records. Each finding names
/// the entry, the commit that added it and the kind.
///
/// Exit status: 0 clean (pending lines are fine), 1 findings, 2 could not run. By default only
/// the commits since the last clean run are walked; --full re-walks everything.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Re-walk the whole history and reflog, ignoring what earlier runs verified.
    #[arg(long)]
    pub full: bool,
    /// Also report cited notes changed since capture, in place or renamed and then edited (with a
    /// diff against the kept copy).
    #[arg(long)]
    pub notes: bool,
    /// One finding per line, tab-separated: kind, id, path, entry, day, commit.
    #[arg(long, conflicts_with = "json")]
    pub porcelain: bool,
    /// The report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Acknowledge a finding by its id (shown by --porcelain or --json), with --reason: it stops
    /// failing verify but stays listed, and the acknowledgement is committed. Only a finding
    /// this run reports (with --full or --notes, what those check too), never one in advance.
    #[arg(long, value_name = "FINDING", requires = "reason")]
    pub ack: Option<String>,
    /// Why the finding is acknowledged (with --ack; kept in the record, on one line; not empty).
    #[arg(long, value_name = "TEXT", requires = "ack")]
    pub reason: Option<String>,
}

/// What to do about a finding that is known and accepted.
const ACK_HINT: &str = "Acknowledge a known one with `git rutter verify --ack ID --reason TEXT`.";

/// Runs the command.
pub fn run(ui: &mut Ui, vault: Option<PathBuf>, args: Args) -> CommandResult {
    let vault = super::interactive_vault(ui, vault.as_deref())?;
    let store = super::open_store(&vault)?;
    let reason = match (&args.ack, &args.reason) {
        (Some(_), Some(reason)) => Some(inert_line(reason, SUMMARY_MAX_CHARS)),
        _ => None,
    };
    if reason.as_deref() == Some("") {
        return Err(user_error(
            "the reason is empty; say why the finding is acknowledged with --reason TEXT. Nothing was committed.",
        ));
    }
    let checking = super::progress::Progress::start(
        ui,
        if args.full {
            "checking the whole history of refs/rutter/records"
        } else {
            "checking refs/rutter/records"
        },
    );
    let report = crate::audit::verify(
        &store,
        Options {
            full: args.full,
            notes: args.notes,
            read_only: false,
            entries: false,
            only_days: None,
        },
    )?;
    drop(checking);
    if let (Some(id), Some(reason)) = (&args.ack, &reason) {
        let checked_all = args.full && args.notes;
        return acknowledge(ui, &store, &report, id, reason, checked_all);
    }
    if args.json {
        ui.print_json(&json(&report))?;
    } else if args.porcelain {
        let text: Vec<String> = report.findings.iter().map(porcelain).collect();
        if !text.is_empty() {
            ui.print(&text.join("\n"))?;
        }
    } else {
        let journalled = crate::journal::Journal::pending(store.state_dir()).map_or(0, |j| j.len());
        ui.print_painted(&human(&report, args.full, journalled), paint)?;
    }
    Ok(Exit::findings_if(report.failed()))
}

/// Commits an acknowledgement of the finding `id` that `report` (this run's) holds; refuses,
/// committing nothing, an id it does not hold (an acknowledgement made in advance would hide a
/// later tamper with that predictable id) or one already acknowledged.
fn acknowledge(
    ui: &mut Ui,
    store: &Store,
    report: &Report,
    id: &str,
    reason: &str,
    checked_all: bool,
) -> CommandResult {
    let Some(found) = report.findings.iter().find(|f| f.id == id) else {
        return Err(not_a_finding(report, id, checked_all));
    };
    if let Some(earlier) = &found.acknowledged {
        return Err(user_error(format!(
            "{} is acknowledged already ({}); nothing was committed.",
            one_line_safe(id),
            one_line_safe(earlier)
        )));
    }
    let recorder = Recorder::lock(store, crate::lock::INTERACTIVE_WAIT)?;
    let now = clock::now();
    let line = RecordLine {
        text: crate::records::paths::ack_line(&now.iso(), id, reason),
        id: now.compact(),
        retracts: None,
    };
    let day = now.day();
    let file = RecordFile {
        kind: RecordKind::Ack,
        path: crate::records::paths::ACKS,
        day: &day,
    };
    let sign = store.sign_wanted();
    let out = recorder.append_record(file, &[line], now, sign)?;
    let commit = out
        .commit
        .map(|c| crate::shortid::short(&c))
        .unwrap_or_default();
    ui.print(&format!("acknowledged {id} (committed {commit})"))?;
    Ok(Exit::Clean)
}

/// The most finding ids a refused `--ack` lists.
const IDS_LISTED: usize = 10;

/// The refusal of an `--ack` whose id this run does not report, listing the ids it does.
fn not_a_finding(report: &Report, id: &str, checked_all: bool) -> CommandError {
    let more = match checked_all {
        true => "",
        false => " (`--full` and `--notes` check more: give them with --ack to acknowledge what they find)",
    };
    if report.findings.is_empty() {
        return user_error(format!(
            "verify reports no finding now, so there is nothing to acknowledge as {id:?}; nothing was committed."
        ))
        .hinted(format!(
            "An acknowledgement names a finding this run of `git rutter verify` reports{more}."
        ));
    }
    let mut ids: Vec<String> = report
        .findings
        .iter()
        .take(IDS_LISTED)
        .map(|f| one_line_safe(&f.id))
        .collect();
    if report.findings.len() > IDS_LISTED {
        ids.push(format!(
            "and {} more (`git rutter verify --porcelain` lists them)",
            report.findings.len() - IDS_LISTED
        ));
    }
    user_error(format!(
        "no finding of this verify run has the id {id:?}; nothing was committed."
    ))
    .hinted_below(format!(
        "The findings now: {}. Acknowledge one of them by its id{more}.",
        ids.join(", ")
    ))
}

/// The human report; `journalled` is how many records the pending journal holds (a line a
/// day file could not take waits there alone, and is pending all the same).
fn human(r: &Report, full: bool, journalled: usize) -> String {
    let counted: Vec<&Finding> = r.findings.iter().filter(|f| f.counts()).collect();
    let mut out = Vec::new();
    for f in &r.findings {
        let mut head = format!("{}: {}", label(f), f.detail);
        if let Some(c) = &f.commit {
            head.push_str(&format!(" [commit {c}]"));
        }
        if let Some(reason) = &f.acknowledged {
            head.push_str(&format!(" (acknowledged: {reason})"));
        }
        out.push(head);
        if !matches!(f.kind, finding::Kind::Pending | finding::Kind::Purged) {
            out.push(format!("  id: {}", f.id));
        }
        if let Some(d) = &f.diff {
            out.extend(d.lines().map(|l| format!("  {}", clip(l))));
        }
    }
    let pending = pending_lines(r, journalled);
    // Incremental runs check the commits since the last verified tip; say so, so "0" never
    // reads as "checked nothing".
    let checked = match (full, r.commits_checked) {
        _ if r.tip.is_none() => "no refs/rutter/records yet, nothing committed".to_string(),
        (true, n) => format!("{n} commit(s) checked"),
        (false, 0) => "no new commit since the last verify; `--full` re-checks all".to_string(),
        (false, n) => format!("{n} new commit(s) checked"),
    };
    out.push(match counted.len() {
        0 => format!("verify: clean ({checked}, {pending} pending line(s))."),
        n => format!("verify: {n} finding(s) ({checked}, {pending} pending line(s)). {ACK_HINT}"),
    });
    out.join("\n")
}

/// The lines waiting to be committed: the pending lines the working files hold, or the
/// records of the pending journal when it holds more (its lines a day file could not take,
/// written aside or kept in the journal alone); the use log's, which have no journal, beside.
fn pending_lines(r: &Report, journalled: usize) -> usize {
    let pending = |use_log: bool| {
        r.findings
            .iter()
            .filter(|f| f.kind == finding::Kind::Pending)
            .filter(|f| (f.path.as_deref() == Some(crate::records::paths::USE_LOG)) == use_log)
            .count()
    };
    pending(true) + pending(false).max(journalled)
}

/// The human report with its verdict, finding labels and diffs painted.
fn paint(color: &Palette, text: &str) -> String {
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            if l.starts_with("verify: clean") {
                color.paint(color::GREEN, l)
            } else if l.starts_with("verify: ") {
                color.paint(color::BOLD_RED, l)
            } else if l.starts_with("  ") {
                color.diff(l, 2)
            } else if let Some((label, rest)) = l.split_once(": ") {
                let style = if label == "pending" || label == "purged" {
                    color::YELLOW
                } else {
                    color::BOLD_RED
                };
                format!("{}: {rest}", color.paint(style, label))
            } else {
                l.to_string()
            }
        })
        .collect();
    lines.join("\n")
}

/// A diff line cut to a readable width (the JSON output keeps it whole).
fn clip(l: &str) -> String {
    match l.char_indices().nth(160) {
        Some((i, _)) => format!("{}…", &l[..i]),
        None => l.to_string(),
    }
}

fn label(f: &Finding) -> String {
    match f.kind {
        finding::Kind::Pending => "pending".to_string(),
        finding::Kind::Purged => "purged".to_string(),
        k => format!("{} {}", k.area(), k.as_str()),
    }
}

fn porcelain(f: &Finding) -> String {
    let o = |v: &Option<String>| v.clone().unwrap_or_default();
    format!(
        "{}\t{}\t{}\t{}\t{}\t{}",
        f.kind.as_str(),
        f.id,
        o(&f.path),
        o(&f.entry),
        o(&f.day),
        o(&f.commit)
    )
}

/// The report as JSON; with findings, `hints` says what to do about a known one (empty when
/// verify is clean).
fn json(r: &Report) -> serde_json::Value {
    // Every key always written: `hints` is empty when there is nothing to do.
    let hints: Vec<&str> = match r.failed() {
        true => vec![ACK_HINT],
        false => vec![],
    };
    serde_json::json!({
        "clean": !r.failed(),
        "tip": r.tip,
        "commits_checked": r.commits_checked,
        "findings": r.findings,
        "hints": hints,
    })
}
