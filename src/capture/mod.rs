//! The capture pipeline: from a Stop-hook payload to the entry lines of the turn's directives,
//! appended and committed together.
//!
//! [`run`] never fails and never panics outward: every outcome is a list of stderr lines, and
//! the hook always exits 0 (DESIGN §2.6).

pub mod dedupe;
pub mod directive;
pub mod markdown;
pub mod payload;
pub mod refs;
mod report;
pub mod sanitize;
pub mod transcript;
pub mod transcript_line;
pub mod watermarks;
pub mod workspace;
pub mod write;

use crate::records::{Entry, NoteRef};
use crate::vault::{self, Vault};
use directive::{Directive, Directives};
use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The prefix of every stderr line.
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

/// Runs a capture; returns the stderr lines to print.
pub fn run(req: Request) -> Vec<String> {
    let mut out = Vec::new();
    let vault = match vault::resolve(req.vault.as_deref(), false) {
        Ok(v) => v,
        Err(e) => {
            out.push(format!("{P} {e}; nothing captured."));
            return out;
        }
    };
    if let Err(e) = capture_into(&vault, req, &mut out) {
        out.push(format!("{P} error: {e}"));
    }
    out.push(format!("{P} in vault {}", vault.root.display()));
    out
}

fn capture_into(
    vault: &Vault,
    req: Request,
    out: &mut Vec<String>,
) -> Result<(), write::WriteError> {
    let Some(found) = find_directives(&req, out) else {
        return Ok(());
    };
    let base = Entry {
        id: String::new(),
        session_id: found.session_id,
        time: String::new(),
        summary: String::new(),
        refs: vec![],
        workspace: workspace::derive_workspace(found.cwd.as_deref()),
        client: req.client.filter(|c| CLIENTS.contains(&c.as_str())),
        extra: Default::default(),
    };
    let mut drafts = Vec::new();
    let mut words = Vec::new();
    for directive in &found.directives {
        if let Some(draft) = draft(vault, directive, &base, out) {
            words.push(sanitize::word_count(&directive.summary));
            drafts.push(draft);
        }
    }
    let Some(first) = drafts.first() else {
        return Ok(());
    };
    let project = first.entry.project().map(str::to_string);
    let written = write::write(vault, drafts)?;
    report::written(vault, &written, project.as_deref(), &words, out);
    Ok(())
}

/// The draft entry of one directive, `base` with its summary and refs; `None` (with a message)
/// when its summary is empty once sanitised. Rejected refs are reported; the summary is kept
/// without them.
fn draft(
    vault: &Vault,
    directive: &Directive,
    base: &Entry,
    out: &mut Vec<String>,
) -> Option<write::Draft> {
    let summary = sanitize::inert_line(&directive.summary, sanitize::SUMMARY_MAX_CHARS);
    if summary.is_empty() {
        out.push(format!("{P} empty summary; no entry written."));
        return None;
    }
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
        summary,
        refs: resolution
            .resolved
            .iter()
            .map(|r| NoteRef::new(&r.path, &r.hash, Some(r.blob.clone())))
            .collect(),
        ..base.clone()
    };
    let cited = resolution
        .resolved
        .iter()
        .filter(|r| r.copyable)
        .map(|r| (r.target.clone(), r.hash.clone()))
        .collect();
    Some(write::Draft { entry, cited })
}

/// The directives to capture, with the session id and cwd they belong to.
struct Found {
    directives: Vec<Directive>,
    session_id: Option<String>,
    cwd: Option<String>,
}

/// The directives of the request; `None` (with a message) when there is nothing to capture.
/// Malformed directives next to good ones are reported and skipped.
fn find_directives(req: &Request, out: &mut Vec<String>) -> Option<Found> {
    if let Some(d) = &req.manual {
        return Some(Found {
            directives: vec![d.clone()],
            session_id: req.session_id.clone(),
            cwd: req.cwd.clone(),
        });
    }
    let payload = match payload::decode(&req.stdin) {
        Ok(p) => p,
        Err(e) => {
            out.push(format!("{P} {e}; nothing captured."));
            return None;
        }
    };
    let scan = if let Some(d) = payload.direct.clone() {
        if directive::is_unfilled(&d.summary) {
            out.push(format!("{P} empty summary; no entry written."));
            return None;
        }
        Directives {
            found: vec![d],
            ..Directives::default()
        }
    } else if let Some(path) = &payload.transcript_path {
        let final_message = payload.last_assistant_message.as_deref();
        match transcript::turn_directives(path, transcript::DEFAULT_BUDGET, final_message) {
            Ok(turn) => {
                if turn.budget_exhausted {
                    out.push(format!("{P} this turn is longer than the {} MiB read from the end of the transcript; directives written earlier in it were not read.", transcript::DEFAULT_BUDGET >> 20));
                }
                turn.directives
            }
            Err(e) => {
                out.push(format!("{P} {e}; nothing captured."));
                return None;
            }
        }
    } else if let Some(text) = &payload.last_assistant_message {
        directive::directives_in(text)
    } else {
        Directives::default()
    };
    report::malformed(&scan, out);
    if scan.found.is_empty() {
        if scan.malformed == 0 {
            out.push(format!("{P} no session directive found; nothing captured."));
        }
        return None;
    }
    Some(Found {
        directives: scan.found,
        session_id: payload.session_id,
        cwd: payload.cwd,
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
