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
pub mod sanitize;
pub mod transcript;
pub mod transcript_line;
pub mod watermarks;
pub mod workspace;
pub mod write;

use crate::records::{Entry, NoteRef, Workspace};
use crate::vault::{self, Vault};
use directive::{Directive, Directives};
use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

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
    let workspace = workspace::derive_workspace(found.cwd.as_deref());
    let client = req.client.filter(|c| CLIENTS.contains(&c.as_str()));
    let mut drafts = Vec::new();
    let mut words = Vec::new();
    for directive in &found.directives {
        if let Some(draft) = draft(
            vault,
            directive,
            &found,
            workspace.as_ref(),
            client.as_ref(),
            out,
        ) {
            words.push(sanitize::word_count(&directive.summary));
            drafts.push(draft);
        }
    }
    let Some(first) = drafts.first() else {
        return Ok(());
    };
    let project = first.entry.project().map(str::to_string);
    let written = write::write(vault, drafts)?;
    report(vault, &written, project.as_deref(), &words, out);
    Ok(())
}

/// The draft entry of one directive; `None` (with a message) when its summary is empty once
/// sanitised. Rejected refs are reported; the summary is kept without them.
fn draft(
    vault: &Vault,
    directive: &Directive,
    found: &Found,
    workspace: Option<&Workspace>,
    client: Option<&String>,
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
        id: String::new(),
        session_id: found.session_id.clone(),
        time: String::new(),
        summary,
        refs: resolution
            .resolved
            .iter()
            .map(|r| NoteRef::new(&r.path, &r.hash, Some(r.blob.clone())))
            .collect(),
        workspace: workspace.cloned(),
        client: client.cloned(),
        extra: Default::default(),
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
        match transcript::turn_directives(path, transcript::DEFAULT_BUDGET) {
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
    report_malformed(&scan, out);
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

/// Says how many directives were not valid JSON, and whether anything is captured at all.
fn report_malformed(scan: &Directives, out: &mut Vec<String>) {
    let (n, good) = (scan.malformed, scan.found.len());
    let what = match n {
        0 => return,
        1 if good == 0 => "the session directive of this turn is not valid JSON".to_string(),
        1 => "1 session directive of this turn is not valid JSON".to_string(),
        n if good == 0 => format!("the {n} session directives of this turn are not valid JSON"),
        n => format!("{n} session directives of this turn are not valid JSON"),
    };
    let outcome = match good {
        0 => "nothing captured",
        _ => "the others are captured",
    };
    out.push(format!("{P} {what}; {outcome}. Write each as <!-- librarian-session {{\"summary\":\"…\",\"refs\":[\"…\"]}} --> with valid JSON."));
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

/// The stderr lines for what was written. `words` holds each draft's word count, in order.
fn report(
    vault: &Vault,
    w: &write::Written,
    project: Option<&str>,
    words: &[usize],
    out: &mut Vec<String>,
) {
    let appended = w.count(|o| matches!(o, write::Outcome::Appended { .. }));
    if let Some(day) = w.outcomes.iter().find_map(|o| match o {
        write::Outcome::Appended { day, .. } => Some(day),
        _ => None,
    }) {
        let proj = project.map(|p| format!(" [{p}]")).unwrap_or_default();
        let noun = plural(appended, "entry", "entries");
        out.push(format!(
            "{P} captured {appended} {noun}{proj} into {day} session record."
        ));
    }
    report_duplicates(w, out);
    report_aside(w, out);
    if let Some(e) = &w.failed {
        let left = words.len() - w.outcomes.len();
        let noun = plural(left, "directive", "directives");
        out.push(format!("{P} error: {e}; the last {left} {noun} of this turn could not be written. Fix the cause, then capture them with `git rutter capture --summary`."));
    }
    if appended == 0 {
        return;
    }
    for (k, (outcome, &n)) in w.outcomes.iter().zip(words).enumerate() {
        if !matches!(outcome, write::Outcome::Appended { .. }) || n <= sanitize::WORD_CEILING {
            continue;
        }
        let which = match words.len() {
            1 => "summary".to_string(),
            total => format!("summary {} of {total}", k + 1),
        };
        out.push(format!("{P} {which} is {n} words; the style contract asks for about {} and no more than {}. Stored verbatim as written -- if a session did several separable things, emit a line per thing as you finish it.", sanitize::WORD_TARGET, sanitize::WORD_CEILING));
    }
    for path in &w.diverged {
        out.push(format!("{P} {path} was edited after it was committed; the commit keeps the committed bytes plus this entry. Run `git rutter verify` to see the finding."));
    }
    let saved = match appended {
        1 => "the entry is saved",
        _ => "the entries are saved",
    };
    match (&vault.git_dir, &w.commit, &w.pending) {
        (None, _, _) => out.push(format!("{P} hint: the vault is not a git repository; run `git rutter init` in it to keep a verifiable history.")),
        (Some(_), _, Some(why)) => out.push(format!("{P} not committed yet ({why}); {saved} and journalled, and `git rutter commit` or the next capture will commit it.")),
        (Some(_), Some(c), None) => out.push(format!("{P} committed {} to refs/rutter/records.", &c[..c.len().min(12)])),
        _ => {}
    }
}

/// Directives already recorded for this session (the Stop hook fired again, or a turn repeated
/// an earlier line).
fn report_duplicates(w: &write::Written, out: &mut Vec<String>) {
    let total = w.outcomes.len();
    match w.count(|o| matches!(o, write::Outcome::Duplicate)) {
        0 => {}
        1 if total == 1 => out.push(format!(
            "{P} directive unchanged for this session; already recorded, nothing appended."
        )),
        d if d == total => out.push(format!(
            "{P} all {d} directives of this turn are unchanged for this session; already recorded, nothing appended."
        )),
        1 => out.push(format!(
            "{P} 1 of the {total} directives of this turn was already recorded for this session; it was not appended again."
        )),
        d => out.push(format!(
            "{P} {d} of the {total} directives of this turn were already recorded for this session; they were not appended again."
        )),
    }
}

/// Entries written aside because the record path is a symlink or not a regular file.
fn report_aside(w: &write::Written, out: &mut Vec<String>) {
    let aside: Vec<(&PathBuf, &String)> = w
        .outcomes
        .iter()
        .filter_map(|o| match o {
            write::Outcome::Aside { path, why } => Some((path, why)),
            _ => None,
        })
        .collect();
    let Some((path, why)) = aside.first() else {
        return;
    };
    let what = match aside.len() {
        1 => "the entry was".to_string(),
        n => format!("the {n} entries were"),
    };
    out.push(format!(
        "{P} refused to write the session record ({why}); {what} written aside to {}.",
        path.display()
    ));
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}
