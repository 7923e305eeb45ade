//! The capture pipeline: from a Stop-hook payload to the entry lines of the turn's directives,
//! appended and committed together.
//!
//! [`run`] never fails and never panics outward: every outcome is a list of stderr lines, and
//! the hook always exits 0 (DESIGN §2.6). Each run is logged, typed, in the hook-run log
//! ([`runlog`]) that `git rutter status` reads.

pub(crate) mod adapters;
pub(crate) mod dedupe;
pub(crate) mod directive;
mod keyhash;
pub(crate) mod markdown;
pub(crate) mod mask;
pub(crate) mod optout;
pub(crate) mod payload;
pub(crate) mod private;
mod report;
pub(crate) mod resolve;
pub mod runlog;
pub(crate) mod sanitize;
mod shard;
pub(crate) mod supersede;
pub(crate) mod sweep;
pub(crate) mod transcript;
pub(crate) mod transcript_line;
pub(crate) mod watermarks;
pub(crate) mod workspace;
pub(crate) mod write;

use crate::records::Entry;
use crate::vault::{self, Vault};
use directive::Directive;
pub(crate) use runlog::Outcome;
use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The prefix of every stderr line.
const P: &str = "[librarian-capture]";

/// The AI clients whose hooks can capture (the `client` field of an entry).
pub(crate) const CLIENTS: &[&str] = &[
    "claude", "codex", "grok", "copilot", "agy", "muse", "cursor", "gemini", "opencode", "windsurf",
];

/// One capture request.
#[derive(Debug, Default, Clone)]
pub(crate) struct Request {
    /// `--vault`, if given (capture never guesses from the current directory).
    pub vault: Option<PathBuf>,
    /// The hook's stdin, unless `manual` is set.
    pub stdin: Vec<u8>,
    pub client: Option<String>,
    /// `--summary`/`--ref` given on the command line.
    pub manual: Option<Directive>,
    pub session_id: Option<String>,
    pub cwd: Option<String>,
}

/// What a capture did: the stderr lines to print, and the outcome the hook-run log records.
#[derive(Debug)]
pub(crate) struct Report {
    pub lines: Vec<String>,
    pub outcome: Outcome,
    /// The vault the capture used, when one could be resolved.
    pub vault: Option<Vault>,
    /// The record's store the capture opened, when it wrote: what runs after the capture
    /// (`sync::auto::after_capture`) reads its settings from it instead of opening the
    /// repository again.
    pub store: Option<crate::store::Store>,
}

/// Runs a capture and logs it in the hook-run log ([`runlog`]).
pub(crate) fn run(req: Request) -> Report {
    let client = req.client.clone().filter(|c| CLIENTS.contains(&c.as_str()));
    let session = req
        .session_id
        .clone()
        .or_else(|| runlog::session_of(&req.stdin));
    let mut out = Vec::new();
    let mut masked = Vec::new();
    let mut store = None;
    let (vault, outcome) = match vault::resolve(req.vault.as_deref(), false) {
        Ok(v) => {
            let mut sink = Sink {
                out: &mut out,
                masked: &mut masked,
                store: &mut store,
            };
            let outcome = capture_into(&v, req, &mut sink).unwrap_or_else(|e| {
                out.push(format!("{P} error: {e}"));
                Outcome::Error(format!("error: {e}"))
            });
            // Escaped as stdout is: a vault folder's name may hold an escape or a newline.
            let shown = |p: &Path| crate::records::text::one_line_safe(&p.display().to_string());
            let linked = v
                .linked_from
                .as_deref()
                .map(|w| format!(" (the main worktree of the linked worktree {})", shown(w)))
                .unwrap_or_default();
            out.push(format!("{P} in vault {}{linked}", shown(&v.root)));
            (Some(v), outcome)
        }
        Err(e) => {
            let hint = crate::hint::after(&e);
            out.push(format!("{P} {e}; nothing captured.{hint}"));
            (None, Outcome::NoVault(e.to_string()))
        }
    };
    let mut logged = runlog::Run::new(
        crate::clock::now(),
        client.as_deref(),
        session.as_deref(),
        &outcome,
        vault.as_ref(),
    );
    logged.masked = masked;
    runlog::record(vault.as_ref(), &logged);
    Report {
        lines: out,
        outcome,
        vault,
        store,
    }
}

/// What a capture hands back beside its outcome: its stderr lines, the kinds of credential it
/// masked, and the store it opened.
struct Sink<'a> {
    out: &'a mut Vec<String>,
    masked: &'a mut Vec<String>,
    store: &'a mut Option<crate::store::Store>,
}

fn capture_into(
    vault: &Vault,
    req: Request,
    sink: &mut Sink<'_>,
) -> Result<Outcome, write::WriteError> {
    let (out, masked) = (&mut *sink.out, &mut *sink.masked);
    let found = match find_directives(&req, out) {
        Ok(found) => found,
        Err(outcome) => return Ok(outcome),
    };
    let base = Entry {
        id: String::new(),
        session_id: found.session_id,
        time: String::new(),
        summary: String::new(),
        refs: vec![],
        workspace: workspace::derive_workspace(found.cwd.as_deref()),
        client: req.client.filter(|c| CLIENTS.contains(&c.as_str())),
        supersedes: None,
        extra: Default::default(),
    };
    let mut drafts = Vec::new();
    let mut words = Vec::new();
    for directive in &found.directives {
        if let Some((draft, cut)) = draft(vault, directive, &base, out) {
            words.push(report::Length {
                words: sanitize::word_count(&directive.summary),
                cut,
            });
            drafts.push(draft);
        }
    }
    for d in &drafts {
        if let Some(serde_json::Value::Array(kinds)) = d.entry.extra.get(mask::MASKED_KEY) {
            let kinds = kinds.iter().filter_map(|k| k.as_str()).map(str::to_string);
            masked.extend(kinds.filter(|k| !masked.contains(k)).collect::<Vec<_>>());
        }
    }
    let Some(first) = drafts.first() else {
        return Ok(Outcome::Empty);
    };
    let project = first.entry.project().map(str::to_string);
    let mut written = write::write(vault, drafts)?;
    report::written(vault, &written, project.as_deref(), &words, out);
    *sink.store = written.store.take();
    Ok(outcome_of(&written))
}

/// The hook-run log's outcome of a written batch: an error or an entry written aside wins,
/// then entries appended, then all already recorded.
fn outcome_of(w: &write::Written) -> Outcome {
    let days: Vec<&str> = w
        .outcomes
        .iter()
        .filter_map(|o| match o {
            write::Outcome::Appended { day, .. } => Some(day.as_str()),
            _ => None,
        })
        .collect();
    let aside = w.outcomes.iter().find_map(|o| match o {
        write::Outcome::Aside { path, why } => Some(format!(
            "the session record could not be written ({why}); written aside to {}",
            path.display()
        )),
        write::Outcome::Journalled { why, .. } => Some(format!(
            "the day file could not take the entry ({why}); it waits in the pending journal"
        )),
        _ => None,
    });
    match (&w.failed, aside, days.first()) {
        (Some(e), _, _) => Outcome::Error(format!(
            "error: {e}; {} of the turn's entries were captured before it",
            days.len()
        )),
        (None, Some(what), _) => Outcome::Error(what),
        (None, None, Some(day)) => Outcome::Captured {
            entries: days.len(),
            day: day.to_string(),
            pending: w.pending.is_some(),
        },
        (None, None, None) => Outcome::Deduped,
    }
}

/// The draft entry of one directive, `base` with its summary and refs, and whether its summary
/// was cut to [`sanitize::SUMMARY_MAX_CHARS`]; `None` (with a message) when its summary is
/// empty once sanitised. Rejected refs are reported; the summary is kept without them.
fn draft(
    vault: &Vault,
    directive: &Directive,
    base: &Entry,
    out: &mut Vec<String>,
) -> Option<(write::Draft, bool)> {
    let (summary, cut) = sanitize::inert_line_cut(&directive.summary, sanitize::SUMMARY_MAX_CHARS);
    if summary.is_empty() {
        out.push(format!("{P} empty summary; no entry written."));
        return None;
    }
    let resolution = resolve::resolve_refs(&vault.root, &directive.refs);
    for (raw, why) in &resolution.rejected {
        if let resolve::Rejection::TooLarge(n) = why {
            out.push(format!(
                "{P} cited note {raw} is {} MiB, over the {} MiB a capture reads; it was left out of the entry. Cite a smaller note (or a part of it split into its own note).",
                n.div_ceil(1 << 20),
                resolve::CITED_HASH_MAX_BYTES >> 20
            ));
        }
    }
    report_refs(&resolution, out);
    if let Err(why) = crate::records::supersede::check(&directive.supersedes) {
        out.push(format!("{P} {why}; no entry written."));
        return None;
    }
    let supersedes = Some(supersede::whole_ids(&vault.root, &directive.supersedes))
        .filter(|ids| !ids.is_empty());
    let mut entry = Entry {
        supersedes,
        summary,
        refs: resolution.resolved.iter().map(resolve::note_ref).collect(),
        ..base.clone()
    };
    let kinds = mask::entry(&mut entry);
    if !kinds.is_empty() {
        out.push(format!("{P} {}", mask::message(&kinds)));
    }
    // One limit for the line a capture writes and the line the journal check accepts
    // (`records::line::MAX_LINE_BYTES`); the id and time it gets under the lock are short.
    let bytes = crate::records::line::render(&entry).len() + ID_AND_TIME_BYTES;
    if bytes > crate::records::line::MAX_LINE_BYTES {
        out.push(format!(
            "{P} the entry would be a line of {} KiB, over the {} KiB a record line may hold; no entry written. Cite fewer notes, or shorten their paths.",
            bytes.div_ceil(1024),
            crate::records::line::MAX_LINE_BYTES >> 10
        ));
        return None;
    }
    let cited = resolution
        .resolved
        .iter()
        .filter(|r| r.copyable)
        .map(|r| (r.target.clone(), r.hash.clone()))
        .collect();
    Some((write::Draft { entry, cited }, cut))
}

/// Room for what a line gains under the lock: its id (instant, writer tag, process, suffix)
/// and time.
const ID_AND_TIME_BYTES: usize = 160;

/// The refs a draft left out, named (at most [`LISTED`] of them), and the duplicates it cited
/// once.
fn report_refs(resolution: &resolve::RefResolution, out: &mut Vec<String>) {
    const LISTED: usize = 10;
    if resolution.duplicates > 0 {
        out.push(format!(
            "{P} {} duplicate ref(s) named a note already cited; each note is cited once.",
            resolution.duplicates
        ));
    }
    let too_many = resolution
        .rejected
        .iter()
        .filter(|(_, why)| *why == resolve::Rejection::TooMany)
        .count();
    if too_many > 0 {
        out.push(format!(
            "{P} {too_many} ref(s) past the first {} notes were left out of the entry.",
            resolve::MAX_REFS
        ));
    }
    let raw: Vec<&str> = resolution
        .rejected
        .iter()
        .filter(|(_, why)| *why != resolve::Rejection::TooMany)
        .map(|(r, _)| match r.as_str() {
            "" => "(an empty ref)",
            r => r,
        })
        .collect();
    if raw.is_empty() {
        return;
    }
    let more = match raw.len().saturating_sub(LISTED) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    out.push(format!(
        "{P} rejected unresolvable refs: {}{more}",
        raw[..raw.len().min(LISTED)].join(", ")
    ));
}

/// The directives to capture, with the session id and cwd they belong to.
struct Found {
    directives: Vec<Directive>,
    session_id: Option<String>,
    cwd: Option<String>,
}

/// The directives of the request; the outcome (with a message) when there is nothing to
/// capture. Malformed directives next to good ones are reported and skipped.
fn find_directives(req: &Request, out: &mut Vec<String>) -> Result<Found, Outcome> {
    let stop = match &req.manual {
        Some(d) => adapters::Stop {
            session_id: req.session_id.clone(),
            cwd: req.cwd.clone(),
            source: adapters::Source::Direct(d.clone()),
        },
        None => match adapters::decode(req.client.as_deref(), &req.stdin) {
            Ok(Some(stop)) => stop,
            Ok(None) => {
                let client = req.client.as_deref().unwrap_or("client");
                let why = format!("this {client} event is not the end of a main agent's turn");
                out.push(format!("{P} {why}; nothing captured."));
                return Err(Outcome::Skipped(why));
            }
            Err(e) => {
                out.push(format!("{P} {e}; nothing captured."));
                return Err(Outcome::Malformed(e.to_string()));
            }
        },
    };
    if let Some(refusal) = optout::refusal(stop.cwd.as_deref()) {
        out.push(format!("{P} {}", refusal.line));
        return Err(Outcome::Skipped(refusal.logged.to_string()));
    }
    let scan = adapters::directives(&stop.source, out)?;
    report::malformed(&scan, out);
    if scan.positions > 0 {
        out.push(format!(
            "{P} {} `librarian-position` line(s) found: positions were retired in rutter 1.0 and are not recorded (the files in _librarian/positions/ stay in the record as your history). Record a decision with a `librarian-session` line instead (docs/migration.md).",
            scan.positions
        ));
    }
    match (scan.found.is_empty(), scan.malformed) {
        (false, _) => {}
        (true, 0) if scan.positions > 0 => {
            return Err(Outcome::Skipped(
                "a librarian-position line (positions were retired in rutter 1.0; nothing recorded)".into(),
            ));
        }
        (true, 0) => {
            out.push(format!("{P} no session directive found; nothing captured."));
            return Err(Outcome::NoDirective);
        }
        (true, n) => {
            return Err(Outcome::Malformed(match n {
                1 => "the session directive of this turn is not valid JSON".into(),
                n => format!("the {n} session directives of this turn are not valid JSON"),
            }));
        }
    }
    Ok(Found {
        directives: scan.found,
        session_id: stop.session_id,
        cwd: stop.cwd,
    })
}

/// Opens a file the hook was pointed at (a transcript, a git metadata file) for reading, following
/// symlinks, only if it is a regular file, and never blocks on a FIFO: the type is checked before
/// opening, the open is non-blocking, and the type is checked again on the open handle.
/// `Ok(None)` when it is not a regular file.
pub(crate) fn open_regular(path: &Path) -> std::io::Result<Option<(File, u64)>> {
    if !std::fs::metadata(path)?.is_file() {
        return Ok(None);
    }
    let nonblock = rustix::fs::OFlags::NONBLOCK.bits() as std::ffi::c_int;
    let file = File::options()
        .read(true)
        .custom_flags(nonblock)
        .open(path)?;
    let meta = file.metadata()?;
    Ok(meta.is_file().then_some((file, meta.len())))
}
