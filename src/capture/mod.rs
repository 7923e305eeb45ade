//! The capture pipeline: from a Stop-hook payload to one appended, committed entry line.
//!
//! [`run`] never fails and never panics outward: every outcome is a list of stderr lines, and
//! the hook always exits 0 (DESIGN §2.6). Each run is logged, typed, in the hook-run log
//! ([`runlog`]) that `git rutter status` reads.

pub mod dedupe;
pub mod directive;
pub mod payload;
pub mod refs;
pub mod runlog;
pub mod sanitize;
pub mod transcript;
pub mod watermarks;
pub mod workspace;
pub mod write;

use crate::records::{Entry, NoteRef};
use crate::vault::{self, Vault};
use directive::{Directive, DirectiveScan};
pub use runlog::Outcome;
use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use transcript::TranscriptScan;

const P: &str = "[librarian-capture]";

/// The AI clients whose hooks can capture (the `client` field of an entry).
pub const CLIENTS: &[&str] = &["claude", "codex", "grok", "copilot", "agy", "muse"];

/// One capture request.
#[derive(Debug, Default, Clone)]
pub struct Request {
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
pub struct Report {
    pub lines: Vec<String>,
    pub outcome: Outcome,
}

/// Runs a capture and logs it in the hook-run log ([`runlog`]).
pub fn run(req: Request) -> Report {
    let client = req.client.clone().filter(|c| CLIENTS.contains(&c.as_str()));
    let session = req
        .session_id
        .clone()
        .or_else(|| runlog::session_of(&req.stdin));
    let mut out = Vec::new();
    let (vault, outcome) = match vault::resolve(req.vault.as_deref(), false) {
        Ok(v) => {
            let outcome = capture_into(&v, req, &mut out).unwrap_or_else(|e| {
                out.push(format!("{P} error: {e}"));
                Outcome::Error(format!("error: {e}"))
            });
            out.push(format!("{P} in vault {}", v.root.display()));
            (Some(v), outcome)
        }
        Err(e) => {
            out.push(format!("{P} {e}; nothing captured."));
            (None, Outcome::NoVault(e.to_string()))
        }
    };
    let logged = runlog::Run::new(
        crate::clock::now(),
        client.as_deref(),
        session.as_deref(),
        &outcome,
        vault.as_ref(),
    );
    runlog::record(vault.as_ref(), &logged);
    Report {
        lines: out,
        outcome,
    }
}

fn capture_into(
    vault: &Vault,
    req: Request,
    out: &mut Vec<String>,
) -> Result<Outcome, write::WriteError> {
    let (directive, session_id, cwd) = match find_directive(&req, out) {
        Ok(found) => found,
        Err(outcome) => return Ok(outcome),
    };
    let summary = sanitize::inert_line(&directive.summary, sanitize::SUMMARY_MAX_CHARS);
    if summary.is_empty() {
        out.push(format!("{P} empty summary; no entry written."));
        return Ok(Outcome::Empty);
    }
    let words = sanitize::word_count(&directive.summary);
    let resolution = refs::resolve_refs(&vault.root, &directive.refs);
    if !resolution.rejected.is_empty() {
        let raw: Vec<&str> = resolution
            .rejected
            .iter()
            .map(|(r, _)| r.as_str())
            .collect();
        out.push(format!(
            "{P} rejected unresolvable refs: {}",
            raw.join(", ")
        ));
    }
    let entry = Entry {
        id: String::new(),
        session_id,
        time: String::new(),
        summary,
        refs: resolution
            .resolved
            .iter()
            .map(|r| NoteRef::new(&r.path, &r.hash, Some(r.blob.clone())))
            .collect(),
        workspace: workspace::derive_workspace(cwd.as_deref()),
        client: req.client.filter(|c| CLIENTS.contains(&c.as_str())),
        extra: Default::default(),
    };
    let cited = resolution
        .resolved
        .iter()
        .filter(|r| r.copyable)
        .map(|r| (r.target.clone(), r.hash.clone()))
        .collect();
    let project = entry.project().map(str::to_string);
    let written = write::write(vault, write::Draft { entry, cited })?;
    report(vault, &written, project.as_deref(), words, out);
    Ok(outcome_of(&written))
}

/// The hook-run log's outcome of a written draft.
fn outcome_of(w: &write::Written) -> Outcome {
    match (&w.aside, w.duplicate) {
        (_, true) => Outcome::Deduped,
        (Some((path, why)), _) => Outcome::Error(format!(
            "refused to write the session record ({why}); the entry was written aside to {}",
            path.display()
        )),
        (None, false) => Outcome::Captured {
            entries: 1,
            day: w.day.clone(),
            pending: w.pending.is_some(),
        },
    }
}

/// The directive, session id and cwd of the request; the outcome (with a message) when there
/// is nothing to capture.
fn find_directive(
    req: &Request,
    out: &mut Vec<String>,
) -> Result<(Directive, Option<String>, Option<String>), Outcome> {
    if let Some(d) = &req.manual {
        return Ok((d.clone(), req.session_id.clone(), req.cwd.clone()));
    }
    let payload = match payload::decode(&req.stdin) {
        Ok(p) => p,
        Err(e) => {
            out.push(format!("{P} {e}; nothing captured."));
            return Err(Outcome::Malformed(e.to_string()));
        }
    };
    let scan = if let Some(d) = payload.direct.clone() {
        if directive::is_unfilled(&d.summary) {
            DirectiveScan::Template
        } else {
            DirectiveScan::Found(d)
        }
    } else if let Some(path) = &payload.transcript_path {
        match transcript::newest_assistant_directive(path, transcript::DEFAULT_BUDGET) {
            Ok(TranscriptScan::Found(d)) => DirectiveScan::Found(d),
            Ok(TranscriptScan::Template) => DirectiveScan::Template,
            Ok(TranscriptScan::Malformed) => DirectiveScan::Malformed,
            Ok(TranscriptScan::NotFound { .. }) => DirectiveScan::None,
            Err(e) => {
                out.push(format!("{P} {e}; nothing captured."));
                return Err(Outcome::Error(e.to_string()));
            }
        }
    } else if let Some(text) = &payload.last_assistant_message {
        directive::newest_directive(text)
    } else {
        DirectiveScan::None
    };
    match scan {
        DirectiveScan::Found(d) => Ok((d, payload.session_id, payload.cwd)),
        DirectiveScan::Template if payload.direct.is_some() => {
            out.push(format!("{P} empty summary; no entry written."));
            Err(Outcome::Empty)
        }
        DirectiveScan::Malformed => {
            out.push(format!(
                "{P} the newest session directive is not valid JSON; nothing captured."
            ));
            Err(Outcome::Malformed(
                "the newest session directive is not valid JSON".into(),
            ))
        }
        _ => {
            out.push(format!("{P} no session directive found; nothing captured."));
            Err(Outcome::NoDirective)
        }
    }
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

fn report(
    vault: &Vault,
    w: &write::Written,
    project: Option<&str>,
    words: usize,
    out: &mut Vec<String>,
) {
    if w.duplicate {
        out.push(format!(
            "{P} directive unchanged for this session; already recorded, nothing appended."
        ));
        return;
    }
    if let Some((path, why)) = &w.aside {
        out.push(format!(
            "{P} refused to write the session record ({why}); the entry was written aside to {}.",
            path.display()
        ));
        return;
    }
    let proj = project.map(|p| format!(" [{p}]")).unwrap_or_default();
    out.push(format!(
        "{P} captured 1 entry{proj} into {} session record.",
        w.day
    ));
    if words > sanitize::WORD_CEILING {
        out.push(format!("{P} summary is {words} words; the style contract asks for about {} and no more than {}. Stored verbatim as written -- if a session did several separable things, emit a line per thing as you finish it.", sanitize::WORD_TARGET, sanitize::WORD_CEILING));
    }
    for path in &w.diverged {
        out.push(format!("{P} {path} was edited after it was committed; the commit keeps the committed bytes plus this entry. Run `git rutter verify` to see the finding."));
    }
    match (&vault.git_dir, &w.commit, &w.pending) {
        (None, _, _) => out.push(format!("{P} hint: the vault is not a git repository; run `git rutter init` in it to keep a verifiable history.")),
        (Some(_), _, Some(why)) => out.push(format!("{P} not committed yet ({why}); the entry is saved and journalled, and `git rutter commit` or the next capture will commit it.")),
        (Some(_), Some(c), None) => out.push(format!("{P} committed {} to refs/rutter/records.", &c[..c.len().min(12)])),
        _ => {}
    }
}
