//! `git rutter log`: every record, newest first, with the commit that added it and its status.
//! The rows are `recall::log`'s; this file parses the arguments and prints them.

use super::color::{self, Palette};
use super::{cannot_run, user_error, CommandError, CommandResult, Exit, FilterArgs, Ui};
use crate::clock::Clock;
use crate::recall::log::{self, LogError, Query};
use crate::recall::row::{JsonRefs, Retracted, Row, Standing};
use crate::records::text::field_safe;
use serde::Serialize;
use std::path::PathBuf;

/// List records newest first: summary, the commit that added each, time and status.
///
/// Status is `committed`, `pending` (journalled, not committed yet), `edited after commit` (its
/// committed line was changed or removed in the working day file, as `verify` reports it) or
/// `deleted` (its day file is gone from the working tree; the committed summary is shown in both
/// cases), `unverified` (in a day file only: neither committed nor journalled) or `retracted`
/// (followed by the retraction's commit and reason). With -p, each entry is followed by the
/// line its commit added, as a patch (as `git log -p`), and an edited one by its edit.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only this entry: its id, or the short form `recent` shows.
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(super::complete::entry_ids))]
    pub entry: Option<String>,
    /// Only entries of this day (YYYY-MM-DD; a local day unless --utc).
    #[arg(long, value_name = "DAY", conflicts_with = "entry")]
    pub day: Option<String>,
    /// At most this many entries (default 20).
    #[arg(short = 'n', long, default_value_t = 20,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub count: usize,
    /// Every entry.
    #[arg(long)]
    pub all: bool,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Only entries whose project is NAME (case-insensitive, whole name).
    #[arg(long, value_name = "NAME")]
    pub project: Option<String>,
    /// Only entries written by this client (its label: claude, codex, grok, copilot, agy,
    /// muse, cursor, gemini, opencode, windsurf; case-insensitive).
    #[arg(long, value_name = "CLIENT")]
    pub client: Option<String>,
    /// Show the line each entry's commit added, as a patch; for an edited entry, the edit.
    #[arg(short = 'p', long = "patch")]
    pub patch: bool,
    /// One short line per entry, as `git log --oneline`: the commit that added it and its
    /// summary, with its status in brackets when it is not `committed`.
    #[arg(long, conflicts_with = "json")]
    pub oneline: bool,
    /// Show times and count days in UTC, as recorded (by default in your time zone, with its
    /// offset; JSON times are always UTC).
    #[arg(long)]
    pub utc: bool,
    /// Print as JSON.
    #[arg(long)]
    pub json: bool,
}

/// One row of `log --json`: every key always written (`null` or `[]` when it has no value;
/// spec/verify.md, "log").
#[derive(Debug, Serialize)]
struct JsonRow<'a> {
    id: &'a str,
    day: &'a str,
    time: &'a str,
    summary: &'a str,
    status: &'static str,
    commit: Option<&'a str>,
    /// The file that holds it (vault-relative).
    file: &'a str,
    project: Option<&'a str>,
    client: Option<&'a str>,
    refs: JsonRefs<'a>,
    retraction: Option<&'a Retracted>,
    diff: Option<&'a str>,
    /// The ids this entry names as the ones it replaces (spec/recall.md, "Supersede").
    supersedes: Option<&'a [String]>,
    /// The entries that replace this one, newest first.
    superseded_by: &'a [String],
}

/// The rows as `log --json` writes them, one by one.
struct JsonRows<'a>(&'a [Row]);

impl Serialize for JsonRows<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(JsonRow::of))
    }
}

impl<'a> JsonRow<'a> {
    fn of(r: &'a Row) -> Self {
        let e = &r.step.entry;
        JsonRow {
            id: &e.id,
            day: &r.step.day,
            time: &e.time,
            summary: &e.summary,
            status: r.standing().name(),
            commit: r.commit.as_deref(),
            file: &r.file,
            project: e.project(),
            client: e.client.as_deref(),
            refs: JsonRefs(&e.refs),
            retraction: r.retraction.as_deref(),
            diff: r.diff.as_deref(),
            supersedes: e.supersedes.as_deref(),
            superseded_by: &r.step.supersede.superseded_by,
        }
    }
}

/// Runs the command. An unknown entry id is exit status 1, a malformed day 2.
pub fn run(ui: &mut Ui, vault: Option<PathBuf>, args: Args) -> CommandResult {
    let clock = Clock::for_flag(args.utc);
    let mut filter = args
        .filter
        .filter(crate::clock::now(), &clock)?
        .of_client(args.client.as_deref());
    if let Some(d) = &args.day {
        if !crate::clock::is_day(d) {
            return Err(cannot_run(format!("{d} is not a date (YYYY-MM-DD)")));
        }
        filter = filter.on_day(d, &clock).map_err(cannot_run)?;
    }
    let vault = super::interactive_vault(ui, vault.as_deref())?;
    let nothing = nothing_shown(&args);
    let query = Query {
        filter,
        project: args.project,
        count: (!args.all && args.entry.is_none()).then_some(args.count),
        entry: args.entry,
        lines: args.patch && !args.json,
    };
    let rows = log::read(&vault, &query, &mut Watching(ui)).map_err(|e| match e {
        LogError::Store(e) => CommandError::from(e),
        other => user_error(other),
    })?;
    if args.json {
        ui.print_json(&JsonRows(&rows))?;
    } else {
        let shape = Shape {
            patch: args.patch,
            oneline: args.oneline,
        };
        print_rows(ui, &rows, shape, &clock)?;
        if rows.is_empty() {
            ui.print(&nothing)?;
        }
    }
    Ok(Exit::Clean)
}

/// What an empty answer says: `no records`, or with filters, which ones nothing matched
/// (`no record matches --grep cadence --since 2026-12-01`).
fn nothing_shown(args: &Args) -> String {
    let f = &args.filter;
    let words = f.grep.iter().map(|g| ("--grep", g));
    let given: Vec<String> = words
        .chain(f.since.iter().map(|d| ("--since", d)))
        .chain(f.until.iter().map(|d| ("--until", d)))
        .chain(args.day.iter().map(|d| ("--day", d)))
        .chain(args.project.iter().map(|p| ("--project", p)))
        .chain(args.client.iter().map(|c| ("--client", c)))
        .map(|(flag, v)| format!("{flag} {}", field_safe(&crate::argv::quote(v))))
        .collect();
    match given.is_empty() {
        true => "no records".into(),
        false => format!("no record matches {}", given.join(" ")),
    }
}

/// What the terminal shows while the rows are read.
struct Watching<'a>(&'a mut Ui);

impl log::Watch for Watching<'_> {
    fn words(&mut self, build: &mut dyn FnMut()) {
        let _line = super::progress::Progress::words_index(self.0);
        build();
    }

    fn lock_missed(&mut self) {
        self.0.warn("git-rutter: another git-rutter command (a sync or a capture) holds the capture lock; the statuses below were read without it (best effort).");
    }
}

/// How the human form is printed: `-p`, `--oneline`.
#[derive(Debug, Clone, Copy)]
struct Shape {
    patch: bool,
    oneline: bool,
}

/// The human form: one line per entry, with -p its patch indented below.
fn print_rows(ui: &mut Ui, rows: &[Row], shape: Shape, clock: &Clock) -> std::io::Result<()> {
    for r in rows {
        let (e, standing) = (&r.step.entry, r.standing());
        let state = standing.name();
        let commit = r
            .commit
            .as_deref()
            .map_or_else(|| "-------".to_string(), crate::shortid::short);
        let mut why = r.retraction.as_ref().map_or(String::new(), |x| {
            let by = x
                .commit
                .as_deref()
                .map_or_else(|| "a pending commit".to_string(), crate::shortid::short);
            format!("  (retracted in {by}: {})", field_safe(&x.reason))
        });
        let by = &r.step.supersede.superseded_by;
        if !by.is_empty() {
            why.push_str(&format!("  (superseded by {})", field_safe(&by.join(", "))));
        }
        // Each field on the line as one field: a line break in a forged one is shown escaped.
        let (line, at) = match shape.oneline {
            true => oneline(&commit, standing, &field_safe(&e.summary)),
            false => {
                let (day, time) = clock.day_time(&r.step.day, &e.time);
                let (day, time) = (field_safe(&day), field_safe(&time));
                let line = format!(
                    "{commit} {day} {time} {state:<21} {}  {}{why}",
                    field_safe(&e.id),
                    field_safe(&e.summary)
                );
                (line, Some(commit.len() + day.len() + time.len() + 3))
            }
        };
        // The commit id and the status are ASCII written by us: sanitising leaves their places.
        ui.print_painted(&line, |p, safe| {
            paint_row(p, safe, commit.len(), at, standing)
        })?;
        // An edited entry shows its edit; any other, as `git log -p`, the line its commit added.
        let added = r
            .line
            .as_ref()
            .map(|l| format!("--- a/{f}\n+++ b/{f}\n+{l}", f = r.file));
        if let (true, Some(d)) = (shape.patch, r.diff.as_ref().or(added.as_ref())) {
            let indented: Vec<String> = d.lines().map(|l| format!("    {l}")).collect();
            ui.print_painted(&indented.join("\n"), |p, t| p.diff(t, 4))?;
        }
    }
    Ok(())
}

/// The `--oneline` form of an entry, `COMMIT [STATUS] SUMMARY` (the status only when it is
/// not `committed`), and the byte its status starts at, if shown.
fn oneline(commit: &str, standing: Standing, summary: &str) -> (String, Option<usize>) {
    let state = standing.name();
    match state == "committed" {
        true => (format!("{commit} {summary}"), None),
        false => (
            format!("{commit} [{state}] {summary}"),
            Some(commit.len() + 2),
        ),
    }
}

/// A `log` line with its commit id (the first `commit_len` bytes) and its standing's name (at
/// byte `at`, when shown) painted; a line that does not split there is left as it is.
fn paint_row(
    color: &Palette,
    line: &str,
    commit_len: usize,
    at: Option<usize>,
    standing: Standing,
) -> String {
    let Some(at) = at else {
        return match (line.get(..commit_len), line.get(commit_len..)) {
            (Some(commit), Some(rest)) => format!("{}{rest}", color.paint(color::YELLOW, commit)),
            _ => line.to_string(),
        };
    };
    let state = standing.name();
    let end = at + state.len();
    match (
        line.get(..commit_len),
        line.get(commit_len..at),
        line.get(at..end),
        line.get(end..),
    ) {
        (Some(commit), Some(between), Some(s), Some(rest)) if s == state => format!(
            "{}{between}{}{rest}",
            color.paint(color::YELLOW, commit),
            color.paint(color::state_style(standing), s)
        ),
        _ => line.to_string(),
    }
}
