//! `git rutter recent`: what was I working on lately?

use crate::clock;
use crate::index::Index;
use crate::recall::{recent, refs, render};
use crate::records::NoteRef;
use std::path::PathBuf;

/// Show recent sessions, newest first, each step with its date, project and cited notes.
///
/// Entries are grouped into sessions (a session that moves between projects splits); without
/// COUNT the 20 most recent sessions are shown. Each step's text is the one committed to
/// refs/rutter/records (or waiting in the pending journal), never a day file's edited copy; a
/// step that is not simply committed is marked after its summary: [edited after commit],
/// [deleted from the working tree], [not committed yet] or [unverified] (in no commit and no
/// journal). Retracted entries are not shown (`git rutter log` lists them). Cited notes are
/// shown through the identity projection of the last reindex: (renamed to X),
/// [UNRESOLVED -- candidates: …], or (changed since capture) for a note edited in place.
/// Reading never logs use.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// How many sessions to show (default 20).
    #[arg(value_parser = clap::value_parser!(u32).range(1..))]
    pub count: Option<u32>,
    /// How many sessions to show, as `git log -n` (same as COUNT).
    #[arg(short = 'n', long = "count", value_name = "N", conflicts_with = "count",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub n: Option<u32>,
    /// Only entries whose summary, project or cited paths hold every word of TEXT
    /// (case-insensitive); repeatable, and every word of every --grep must match.
    #[arg(long, value_name = "TEXT")]
    pub grep: Vec<String>,
    /// Only entries from this day on: YYYY-MM-DD, or Nd / Nw for N days or weeks ago (UTC;
    /// `--since 0d` is today only).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Only entries up to this day (inclusive): YYYY-MM-DD, or Nd / Nw.
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,
    /// Only entries from the last N days (today counts, so N+1 calendar days).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub days: Option<u32>,
    /// Only entries whose project is NAME (case-insensitive, whole name).
    #[arg(long, value_name = "NAME")]
    pub project: Option<String>,
    /// Show only the first and last step of longer sessions.
    #[arg(long)]
    pub brief: bool,
    /// Show every session (overrides COUNT).
    #[arg(long, conflicts_with_all = ["count", "n"])]
    pub all: bool,
    /// Show times in UTC, as recorded (by default in your time zone, with its offset, as `git
    /// log` shows them; JSON is always UTC).
    #[arg(long)]
    pub utc: bool,
    /// Print the sessions as JSON (each step with its `status`, each ref with how it reads now,
    /// in `shown`).
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(vault: Option<PathBuf>, args: Args) -> anyhow::Result<i32> {
    let now = clock::now();
    let filter = super::entry_filter(
        &args.grep,
        args.since.as_deref(),
        args.until.as_deref(),
        now,
    )?;
    let vault = super::interactive_vault(vault.as_deref())?;
    let query = recent::Query {
        window_days: args.days,
        count: if args.all {
            None
        } else {
            Some(
                args.count
                    .or(args.n)
                    .map_or(recent::DEFAULT_COUNT, |c| c as usize),
            )
        },
        project: args.project,
        brief: args.brief,
        filter,
    };
    let building = super::progress::Progress::index_build(&vault);
    let mut index = Index::open(&vault, false)?;
    drop(building);
    if args.all && !args.json {
        return print_all(&vault, &mut index, query, now, args.utc);
    }
    let answer = recent::read(&vault, &mut index, &query, now)?;
    if !answer.record && matches!(answer.recent, recent::Recent::Sessions(_)) {
        eprintln!("{}", no_record_note(&vault));
    }
    let describer = refs::Shown::new(&index);
    let shown = |r: &NoteRef| describer.ref_text(r);
    if args.json {
        super::print_json(&json(&vault.root, &answer.recent, &shown))?;
    } else {
        let clock = if args.utc {
            render::Clock::Utc
        } else {
            render::Clock::local()
        };
        super::print_painted(
            &render::cli(&answer.recent, &shown, answer.record, &clock),
            super::color::marks,
        )?;
    }
    Ok(super::EXIT_OK)
}

/// Sessions `recent --all` prints before it reads the rest: a screen's worth.
const FIRST_SCREEN: usize = 20;

/// `recent --all` as text: the newest [`FIRST_SCREEN`] sessions are read and printed first (a
/// pager shows them at once; the ten-year vault has 37,000 sessions), then every session is read
/// and those after them are printed. The output is the one answer `recent -n` of every session
/// prints (test `recent_all_prints_what_a_count_of_every_session_prints`); a capture landing
/// between the two reads is left for the next `recent` (it would be newer than the first screen).
fn print_all(
    vault: &crate::vault::Vault,
    index: &mut Index,
    mut query: recent::Query,
    now: clock::Instant,
    utc: bool,
) -> anyhow::Result<i32> {
    let clock = if utc {
        render::Clock::Utc
    } else {
        render::Clock::local()
    };
    query.count = Some(FIRST_SCREEN);
    let first = recent::read(vault, index, &query, now)?;
    let shown_first = match &first.recent {
        recent::Recent::Sessions(s) if s.len() == FIRST_SCREEN => s.len(),
        // Fewer sessions than a screen: that is every session.
        _ => {
            if !first.record && matches!(first.recent, recent::Recent::Sessions(_)) {
                eprintln!("{}", no_record_note(vault));
            }
            let describer = refs::Shown::new(index);
            let shown = |r: &NoteRef| describer.ref_text(r);
            super::print_painted(
                &render::cli(&first.recent, &shown, first.record, &clock),
                super::color::marks,
            )?;
            return Ok(super::EXIT_OK);
        }
    };
    if !first.record {
        eprintln!("{}", no_record_note(vault));
    }
    let recent::Recent::Sessions(head) = &first.recent else {
        return Ok(super::EXIT_OK);
    };
    {
        let describer = refs::Shown::new(index);
        let shown = |r: &NoteRef| describer.ref_text(r);
        let text = render::cli_part(head, &shown, first.record, &clock);
        super::print_part(&text, super::color::marks)?;
    }
    query.count = None;
    let all = recent::read(vault, index, &query, now)?;
    let recent::Recent::Sessions(every) = &all.recent else {
        return Ok(super::EXIT_OK);
    };
    let rest = every.get(shown_first..).unwrap_or_default();
    let describer = refs::Shown::new(index);
    let shown = |r: &NoteRef| describer.ref_text(r);
    let text = match render::cli_part(rest, &shown, first.record, &clock) {
        t if t.is_empty() => t,
        t => format!("\n\n{t}"),
    };
    super::print_painted(
        &format!("{text}{}", render::cli_hint(every, first.record)),
        super::color::marks,
    )?;
    Ok(super::EXIT_OK)
}

/// Why the entries shown are unverified, and what to do about it.
fn no_record_note(vault: &crate::vault::Vault) -> String {
    let why = match vault.git_dir {
        None => format!("{} is not a git repository", vault.root.display()),
        Some(_) => "refs/rutter/records does not exist yet".to_string(),
    };
    format!("git-rutter: {why}, so these entries are read from the day files as they are (unverified); run `git rutter init` to keep a record that can be verified.")
}

fn json(
    root: &std::path::Path,
    result: &recent::Recent,
    shown: render::RefText<'_>,
) -> serde_json::Value {
    let sessions = match result {
        recent::Recent::Sessions(s) => s.clone(),
        _ => vec![],
    };
    let mut value = serde_json::to_value(&sessions).unwrap_or_default();
    for (s, session) in sessions
        .iter()
        .zip(value.as_array_mut().into_iter().flatten())
    {
        for (step, step_json) in s
            .steps
            .iter()
            .zip(session["steps"].as_array_mut().into_iter().flatten())
        {
            for (r, ref_json) in step
                .entry
                .refs
                .iter()
                .zip(step_json["refs"].as_array_mut().into_iter().flatten())
            {
                ref_json["shown"] = serde_json::Value::String(shown(r));
            }
        }
    }
    serde_json::json!({ "vault": root, "empty": render::empty_state(result), "sessions": value })
}
