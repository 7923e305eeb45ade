//! `git rutter status`: which vault and why, the record, the index, each client's registration
//! and the last hook runs, then what is wrong and what to do. The gathering is
//! [`crate::status`]; this file prints it.

use super::color::Palette;
use super::{CommandResult, Exit, Ui};
use crate::capture::runlog::Run;
use crate::clock::{self, Instant};
use crate::count::count;
use crate::status::{self, show_time, ClientInfo, Inputs, Status};
use std::path::PathBuf;

/// Show whether git-rutter is set up and working, and what to do if it is not.
///
/// Names the vault in use and why it was chosen (--vault, LIBRARIAN_VAULT_PATH, the repository
/// you stand in, git config rutter.vault), and the vault hooks and the MCP server find on their
/// own; the record ref, its reflog and lines waiting to be committed; the index and whether the
/// notes changed since it was updated (on a vault of 20,000 notes or more that no watcher keeps
/// current, with `git config rutter.watch` unset, how to have one); for each AI client whether git-rutter's Stop hook and
/// MCP server are registered (read from install-hook's plan, as a dry run); and the last hook
/// runs from the hook-run log with their outcome (captured, no directive, deduped, empty,
/// malformed, no vault, error). Ends with the findings, each saying what to do.
///
/// A client's failed hook run is a finding until a later run of that client succeeds, or until
/// you acknowledge it with --ack-runs.
///
/// Writes nothing (but the acknowledgement) and runs no verify. Exit status: 0 when there is no
/// finding, 1 with findings.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print everything as JSON (the shape is in spec/status.md).
    #[arg(long)]
    pub json: bool,
    /// Show times in UTC (by default in your time zone, with its offset).
    #[arg(long)]
    pub utc: bool,
    /// Acknowledge every failed hook run logged so far: they stop being findings (they stay in
    /// the log and in the list of runs); a run that fails later is a finding again.
    #[arg(long)]
    pub ack_runs: bool,
}

/// Runs the command.
pub fn run(ui: &mut Ui, vault: Option<PathBuf>, args: Args) -> CommandResult {
    if args.ack_runs {
        let file = status::runs::acknowledge(clock::now())?;
        ui.warn(format_args!(
            "git-rutter: failed hook runs logged until now are acknowledged (in {}).",
            file.display()
        ));
    }
    // Status reads a linked client file as the client reads it (install never edits one).
    let ctx = super::install_hook::context(None)
        .ok()
        .map(|c| crate::clients::Context {
            follow_links: true,
            ..c
        });
    let now = clock::now();
    let clock = clock::Clock::for_flag(args.utc);
    let status = status::gather(&Inputs {
        flag: vault.as_deref(),
        clients: ctx.as_ref(),
        now,
        clock: clock.clone(),
    });
    if args.json {
        ui.print_json(&status)?;
    } else {
        ui.print_painted(&render(&status, &Times { now, clock }), paint)?;
    }
    Ok(Exit::findings_if(!status.healthy))
}

/// When status looks, and how it shows times.
pub(crate) struct Times {
    pub now: Instant,
    pub clock: clock::Clock,
}

/// The findings' heading and each finding's sentence painted.
fn paint(color: &Palette, text: &str) -> String {
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            if l.starts_with("findings (") {
                color.paint(super::color::BOLD_RED, l)
            } else if let Some(finding) = l.strip_prefix("  - ") {
                format!("  - {}", color.paint(super::color::RED, finding))
            } else {
                l.to_string()
            }
        })
        .collect();
    lines.join("\n")
}

/// The human form: one line per item, findings at the end.
pub(crate) fn render(s: &Status, t: &Times) -> String {
    let mut out = Vec::new();
    vault_lines(s, &mut out);
    record_line(s, t, &mut out);
    index_line(s, t, &mut out);
    if !s.clients.is_empty() {
        out.push("clients:".into());
        out.extend(s.clients.iter().map(|c| client_line(c, t)));
    }
    runs_lines(s, t, &mut out);
    if s.findings.is_empty() {
        out.push("no findings: everything status checks is working.".into());
    } else {
        out.push(format!("findings ({}):", s.findings.len()));
        for f in &s.findings {
            out.push(format!("  - {}", f.message));
            out.push(format!("    {}", f.todo));
        }
    }
    out.join("\n")
}

fn vault_lines(s: &Status, out: &mut Vec<String>) {
    match &s.vault {
        Some(v) => out.push(format!(
            "vault:    {} (from {}{}), {}",
            v.path,
            v.reason,
            v.linked_from
                .as_deref()
                .map(|w| format!(", which named its linked worktree {w}"))
                .unwrap_or_default(),
            match v.git {
                true => "a git repository",
                false => "not a git repository",
            }
        )),
        None => out.push(format!(
            "vault:    none ({})",
            s.vault_error.as_deref().unwrap_or("not configured")
        )),
    }
    let line = match (&s.hooks_vault, &s.vault) {
        (Some(h), Some(v)) if h.path == v.path => "the same vault".to_string(),
        (Some(h), _) => format!("{} (from {})", h.path, h.reason),
        (None, _) => format!(
            "no vault ({})",
            s.hooks_vault_error.as_deref().unwrap_or("none configured")
        ),
    };
    out.push(format!("hooks:    hooks and the MCP server find {line}"));
}

fn record_line(s: &Status, t: &Times, out: &mut Vec<String>) {
    let Some(r) = &s.record else { return };
    if let Some(e) = &r.error {
        out.push(format!("record:   cannot be read ({e})"));
        return;
    }
    let Some(tip) = &r.tip else {
        out.push(format!(
            "record:   no refs/rutter/records yet; {} pending",
            r.pending
        ));
        return;
    };
    let verified = match (&r.verified_tip, r.commits_since_verify) {
        (None, _) => "never verified".to_string(),
        (Some(_), Some(0)) => "verified at the tip".to_string(),
        (Some(_), Some(n)) => format!("{} since the last verify", count(n, "commit", "commits")),
        (Some(_), None) => "last verified long ago".to_string(),
    };
    let use_log = match r.use_log_waiting {
        0 => String::new(),
        n => format!(
            " ({} for the next commit)",
            count(n, "use-log line", "use-log lines")
        ),
    };
    let changed = match crate::status::findings::files_changed(r) {
        0 => String::new(),
        n => format!(
            "; {} changed in the working tree",
            count(n, "record file", "record files")
        ),
    };
    out.push(format!(
        "record:   refs/rutter/records at {} ({}, {}); {} pending{use_log}; {}{changed}{}",
        &crate::shortid::long(tip),
        r.tip_time
            .as_deref()
            .map(|at| show_time(at, &t.clock))
            .unwrap_or_default(),
        r.tip_subject.as_deref().unwrap_or_default(),
        r.pending,
        verified,
        if r.reflog { "" } else { "; no reflog" }
    ));
    if let Some(y) = &r.sync {
        let cannot_run = cannot_sync(y);
        let relation = match y.relation {
            _ if cannot_run.is_some() => cannot_run.as_deref().unwrap_or_default(),
            _ if y.refused.is_some() => "its records were refused at the last sync (see below)",
            "up-to-date" => "in step with it at the last fetch",
            "ahead" => "ahead of it (run `git rutter sync` to send)",
            "behind" => "behind it at the last fetch (run `git rutter sync`)",
            "diverged" => "both sides have new entries (run `git rutter sync`)",
            // Synced before, yet no copy of its records: it held none then, or they were
            // deleted on it since (a push deletion takes the copy too).
            _ if y.last_sync.is_some() => {
                "no copy of its records here, though it was synced (run `git rutter sync` to look again)"
            }
            _ => "never fetched (run `git rutter sync`)",
        };
        out.push(format!(
            "sync:     {}{} as {}; {relation}",
            y.remote,
            y.url
                .as_deref()
                .map(|u| format!(" ({u})"))
                .unwrap_or_default(),
            y.machine.as_deref().unwrap_or("(no machine id yet)"),
        ));
        let notes = sync_notes(y, t);
        if !notes.is_empty() {
            out.push(format!("          {}", notes.join("; ")));
        }
    } else if let Some(remote) = r.record_remotes.first() {
        out.push(format!(
            "sync:     not set up; {remote} holds this vault's records, and captures made here stay on this machine (run `git rutter sync --setup {remote}`)"
        ));
    }
}

/// Why `git rutter sync` cannot run with the sync remote as set, with what to run instead
/// (the line never says to run a sync that would refuse).
fn cannot_sync(y: &crate::status::SyncInfo) -> Option<String> {
    let remote = crate::argv::quote(&y.remote);
    if y.url.is_none() {
        return Some(match y.set_up_remotes.first() {
            Some(other) => format!(
                "no remote has that name; {other} fetches this vault's records (run `git rutter sync --setup {}`)",
                crate::argv::quote(other)
            ),
            None => "no remote has that name (see below)".to_string(),
        });
    }
    (!y.fetches_records)
        .then(|| format!("not set up for rutter (run `git rutter sync --setup {remote}`)"))
}

/// Who can read the sync remote's copy, and the automatic sync, when there is something to say.
fn sync_notes(y: &crate::status::SyncInfo, t: &Times) -> Vec<String> {
    let mut notes = Vec::new();
    match (y.exposure, y.host.as_deref()) {
        ("encrypted", _) => {
            notes.push("encrypted (gcrypt): its host stores ciphertext only".into())
        }
        ("plaintext", Some(host)) => {
            notes.push(format!("not encrypted: {host} can read what sync sends"))
        }
        _ => {}
    }
    if let Some(raw) = &y.auto_sync {
        notes.push(
            match (&y.auto_sync_error, crate::sync::auto::parse_interval(raw)) {
                (Some(_), _) => format!("rutter.autoSync {raw:?} is not an interval"),
                (None, Ok(Some(_))) => format!("syncs by itself every {}", raw.trim()),
                _ => "automatic sync off".into(),
            },
        );
        if let Some(at) = &y.last_sync {
            notes.push(format!("last sync started {}", show_time(at, &t.clock)));
        }
    }
    match &y.running {
        Some(r) if r.alive => notes.push(format!(
            "a sync is running since {} (process {})",
            show_time(&r.since.iso(), &t.clock),
            r.pid
        )),
        Some(r) => notes.push(format!(
            "a sync started {} was stopped before it ended",
            show_time(&r.since.iso(), &t.clock)
        )),
        None => {}
    }
    if y.checkout_unfinished {
        notes.push(
            "the record files are behind the ref (a sync stopped after it moved it): the next `git rutter sync` brings them".into(),
        );
    }
    notes
}

fn index_line(s: &Status, t: &Times, out: &mut Vec<String>) {
    let Some(ix) = &s.index else { return };
    let vault_notes = format!(
        "{} in the vault",
        count(ix.vault_notes, "markdown note", "markdown notes")
    );
    let line = match (ix.exists, ix.problem, ix.notes) {
        (_, Some("not-a-file"), _) => {
            format!("{} (refused: see the findings); {vault_notes}", ix.path)
        }
        (false, _, _) => format!(
            "not built yet (search and the MCP server build it; `git rutter reindex` now); {vault_notes}"
        ),
        (_, Some("moved"), _) => format!(
            "{} was built when the vault was at {}: the next search, recent or MCP start rebuilds it; {vault_notes}",
            ix.path,
            crate::records::text::one_line_safe(
                ix.problem_detail.as_deref().unwrap_or("another path")
            )
        ),
        (_, Some(p), _) => format!(
            "{} ({p}{}); {vault_notes}",
            ix.path,
            ix.problem_detail
                .as_deref()
                .map(|d| format!(": {d}"))
                .unwrap_or_default()
        ),
        (_, None, notes) => {
            let fresh = match ix.stale {
                Some(st) if st.new + st.changed + st.removed > 0 => format!(
                    "{} new, {} changed, {} removed since (the next search reads them)",
                    st.new, st.changed, st.removed
                ),
                _ if ix.watched => "notes unchanged since: a watcher keeps it current".into(),
                _ => "notes unchanged since".into(),
            };
            format!(
                "{}, {}, updated {}; {fresh}",
                count(notes.unwrap_or(0), "note", "notes"),
                count(ix.entries.unwrap_or(0), "entry", "entries"),
                ix.updated
                    .as_deref()
                    .map(|at| age(at, t))
                    .unwrap_or_else(|| "at an unknown time".into())
            )
        }
    };
    out.push(format!("index:    {line}"));
    if ix.watch_suggested {
        out.push(format!(
            "          each search, show, log and status first checks all {} notes for changes: `git config rutter.watch {}` has them start a watcher that answers instead (docs/troubleshooting.md)",
            ix.vault_notes,
            clock::show_interval(crate::setup::settings::WATCH_DEFAULT_IDLE)
        ));
    }
}

fn client_line(c: &ClientInfo, t: &Times) -> String {
    let st = &c.state;
    let mut parts = Vec::new();
    match st.hook.state {
        "registered" => {
            let mut h = format!("hook {}", st.hook.command.as_deref().unwrap_or_default());
            if !st.hook.program_ok {
                h.push_str(" (program missing)");
            }
            parts.push(h);
            parts.push(format!(
                "MCP {}{}",
                st.mcp.state,
                st.mcp
                    .place
                    .as_deref()
                    .map(|p| format!(" ({p})"))
                    .unwrap_or_default()
            ));
            if let Some(start) = st.session_start {
                parts.push(format!("session-start brief {start}"));
            }
            if !st.up_to_date {
                parts.push("install-hook would change files".into());
            }
        }
        "reference" => parts.push("only the TypeScript rutter hook".into()),
        "unreadable" => parts.push("configuration unreadable".into()),
        _ if c.project_hook.is_some() => parts.push(format!(
            "git-rutter hook in {} (this project only)",
            crate::records::text::field_safe(c.project_hook.as_deref().unwrap_or_default())
        )),
        _ if st.installed => parts.push("installed, no git-rutter hook".into()),
        _ => parts.push("not installed".into()),
    }
    match (&c.last_run, &c.last_capture) {
        (Some(r), cap) => {
            parts.push(format!(
                "last run {}: {}",
                age(&r.time, t),
                r.outcome.as_str()
            ));
            if let Some(cap) = cap.as_ref().filter(|cap| cap.time != r.time) {
                parts.push(format!("last capture {}", age(&cap.time, t)));
            }
        }
        (None, _) if st.hook.state == "registered" => parts.push("no run logged yet".into()),
        _ => {}
    }
    format!("  {:<18} {}", st.label, parts.join("; "))
}

fn runs_lines(s: &Status, t: &Times, out: &mut Vec<String>) {
    if s.runs_logged == 0 {
        out.push("hook runs: none logged yet (each `git-rutter capture` run is logged)".into());
        return;
    }
    out.push(format!(
        "hook runs (newest first, {} of {}):",
        s.last_runs.len(),
        s.runs_logged
    ));
    let vault = s.vault.as_ref().map(|v| v.path.as_str());
    out.extend(s.last_runs.iter().map(|r| run_line(r, vault, &t.clock)));
}

/// One run; the vault is named when it is not the one status looked at.
fn run_line(r: &Run, vault: Option<&str>, clock: &clock::Clock) -> String {
    let into = match r.vault.as_deref() {
        Some(v) if Some(v) != vault => format!(" [vault {v}]"),
        _ => String::new(),
    };
    format!(
        "  {}  {:<8} {:<12} {}{into}",
        show_time(&r.time, clock),
        r.client.as_deref().unwrap_or("-"),
        r.outcome.as_str(),
        r.reason,
    )
}

fn age_ms(iso: &str, now: Instant) -> Option<i64> {
    clock::parse_instant(iso).map(|t| now.0 - t.0)
}

/// `2026-12-01 07:31:41 UTC, 5 min ago`.
fn age(iso: &str, t: &Times) -> String {
    let ago = age_ms(iso, t.now)
        .and_then(clock::ago)
        .map(|a| format!(", {a}"))
        .unwrap_or_default();
    format!("{}{ago}", show_time(iso, &t.clock))
}
