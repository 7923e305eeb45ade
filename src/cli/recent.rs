//! `git rutter recent`: what was I working on lately?

use super::color::Palette;
use super::{CommandResult, Exit, FilterArgs, Ui};
use crate::clock;
use crate::index::short_ids::ShortIds;
use crate::index::{Index, IndexError};
use crate::recall::row::{Extra, JsonRef, JsonWorkspace, Step};
use crate::recall::stream::LeanSession;
use crate::recall::{self, recent, refs, reindex, render};
use crate::records::standing::Status;
use crate::records::NoteRef;
use serde::Serialize;
use std::io::Write;
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
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Only entries from the last N days (today counts, so N+1 calendar days; local unless
    /// --utc).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub days: Option<u32>,
    /// Only entries whose project is NAME (case-insensitive, whole name).
    #[arg(long, value_name = "NAME")]
    pub project: Option<String>,
    /// Only entries written by this client (its label as the text shows it: claude, codex,
    /// grok, copilot, agy, muse, cursor, gemini, opencode, windsurf; case-insensitive).
    #[arg(long, value_name = "CLIENT")]
    pub client: Option<String>,
    /// Show only the first and last step of longer sessions.
    #[arg(long)]
    pub brief: bool,
    /// Show every session, instead of COUNT or -n (not with them).
    #[arg(long, conflicts_with_all = ["count", "n"])]
    pub all: bool,
    /// Show times and count days in UTC, as recorded (by default in your time zone, with its
    /// offset, as `git log` shows them; JSON times are always UTC).
    #[arg(long)]
    pub utc: bool,
    /// Print the sessions as JSON (each step with its `status`, each ref with how it reads now,
    /// in `shown`).
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(ui: &mut Ui, vault: Option<PathBuf>, args: Args) -> CommandResult {
    let now = clock::now();
    let days = clock::Clock::for_flag(args.utc);
    let filter = args
        .filter
        .filter(now, &days)?
        .of_client(args.client.as_deref());
    let vault = super::interactive_vault(ui, vault.as_deref())?;
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
        clock: days,
    };
    let (mut index, building) = super::open_index(ui, &vault)?;
    if !query.filter.words.is_empty() {
        // Once, on the first search by words (the MCP server builds it in the background).
        let _line = building
            .is_none()
            .then(|| super::progress::Progress::words_index(ui));
        // Only a shortcut: without it every entry's text is tested, with the same answer.
        let _ = index.grep_ready();
    }
    if args.all {
        drop(building);
        return match args.json {
            true => print_all_json(ui, &vault, &mut index, query, now),
            false => print_all(ui, &vault, &mut index, query, now),
        };
    }
    let answer = recent::read(&vault, &mut index, &query, now)?;
    drop(building);
    if !answer.record && matches!(answer.recent, recent::Recent::Sessions(_)) {
        ui.warn(no_record_note(&vault));
    }
    // Rendered in one read of the index: its lookups for each ref and id share one snapshot and
    // one lock (a read transaction each was three system calls).
    let clock = clock::Clock::for_flag(args.utc);
    let (root, recent, as_json) = (&vault.root, &answer.recent, args.json);
    let render = |index: &Index| -> Result<(Rendered<'_>, Vec<String>), IndexError> {
        let describer = refs::Shown::new(index);
        let shown = |out: &mut String, path: &str, hash: &str| describer.write(out, path, hash);
        let out = match as_json {
            true => Rendered::Json(json(root, recent, &shown)),
            false => Rendered::Text(looked_up_by(
                index,
                &describer,
                clock.clone(),
                |shown, look| render::cli(recent, shown, answer.record, look),
            )),
        };
        Ok((out, describer.absent()))
    };
    let (mut out, gone) = index.read(render)?;
    if recent::moved_since_indexed(&index, &gone)? {
        // A cited note renamed since the last refresh: the rescan and the identity pass find
        // where it went, as `search` and `show` would, and the answer is rendered again.
        if let Some(rescan) = index.freshen_or_ask()? {
            reindex::identity_after_rescan(&vault, &mut index, &rescan.notes)?;
            out = index.read(render)?.0;
        }
    }
    match out {
        Rendered::Json(value) => ui.print_json(&value)?,
        Rendered::Text(text) => ui.print_painted(&text, Palette::marks)?,
    }
    Ok(Exit::Clean)
}

/// `recent`'s answer rendered: the `--json` document, or the text.
enum Rendered<'a> {
    Json(JsonAnswer<'a>),
    Text(String),
}

/// `draw` given the index's lookups a rendering needs: each cited note as it is now, and the
/// short form of each entry id, in `clock`'s time.
fn looked_up<T>(
    index: &Index,
    clock: clock::Clock,
    draw: impl FnOnce(render::RefText<'_>, &render::Look<'_>) -> T,
) -> T {
    looked_up_by(index, &refs::Shown::new(index), clock, draw)
}

/// [`looked_up`] through `describer`, which then knows the cited paths it found gone.
fn looked_up_by<T>(
    index: &Index,
    describer: &refs::Shown<'_>,
    clock: clock::Clock,
    draw: impl FnOnce(render::RefText<'_>, &render::Look<'_>) -> T,
) -> T {
    let shown = |out: &mut String, p: &str, h: &str| describer.write(out, p, h);
    let short = ShortIds::lookups(index);
    let look = render::Look {
        clock,
        ids: Some(&|id| short.short(id)),
    };
    draw(&shown, &look)
}

/// Sessions `recent --all` prints before it reads the rest: a screen's worth.
const FIRST_SCREEN: usize = 20;

/// `recent --all` as text: the newest [`FIRST_SCREEN`] sessions are read and printed first (a
/// pager shows them at once; the ten-year vault has 37,000 sessions), then every session is
/// read as a stream (`recall::stream`) and each one after them printed as soon as it is whole.
/// The output is the one answer `recent -n` of every session prints (test
/// `recent_all_prints_what_a_count_of_every_session_prints`); a capture landing between the two
/// reads is left for the next `recent` (it would be newer than the first screen).
fn print_all(
    ui: &mut Ui,
    vault: &crate::vault::Vault,
    index: &mut Index,
    mut query: recent::Query,
    now: clock::Instant,
) -> CommandResult {
    query.count = Some(FIRST_SCREEN);
    let first = recent::read(vault, index, &query, now)?;
    if !first.record && matches!(first.recent, recent::Recent::Sessions(_)) {
        ui.warn(no_record_note(vault));
    }
    let head = match &first.recent {
        recent::Recent::Sessions(s) if s.len() == FIRST_SCREEN => s,
        // Fewer sessions than a screen: that is every session.
        _ => {
            let text = looked_up(index, query.clock.clone(), |shown, look| {
                render::cli(&first.recent, shown, first.record, look)
            });
            ui.print_painted(&text, Palette::marks)?;
            return Ok(Exit::Clean);
        }
    };
    let palette = ui.palette();
    let mut out = Painted::new(ui.stdout(), palette);
    let mut text = looked_up(index, query.clock.clone(), |shown, look| {
        render::cli_part(head, shown, first.record, look)
    });
    if let Err(e) = out.text(&text).and_then(|_| out.flush()) {
        return quiet_on_broken_pipe(e);
    }
    query.count = None;
    recall::stream::refresh(vault, index)?;
    // The notes made fresh, so the thousands of cited notes' hashes come from the index.
    index.freshen_or_ask()?;
    // Every id read once: the whole record is shown.
    let short = ShortIds::all(index)?;
    let look = render::Look {
        clock: query.clock.clone(),
        ids: Some(&|id| short.short(id)),
    };
    let describer = refs::Shown::from_fresh_index(index)?;
    let shown = |out: &mut String, p: &str, h: &str| describer.write(out, p, h);
    let mut deleted = false;
    let mut seen = 0;
    let streamed = recall::stream::each_session(index, &query, now, |session| {
        let session = session.text();
        deleted |= session.shows_deleted();
        seen += 1;
        if seen <= FIRST_SCREEN {
            return Ok(());
        }
        text.clear();
        text.push_str("\n\n");
        render::cli_session(&mut text, &session, &shown, first.record, &look);
        Ok(out.text(&text)?)
    });
    match streamed {
        Err(IndexError::Io(e)) => return quiet_on_broken_pipe(e),
        other => other?,
    };
    text.clear();
    render::push_cli_hint(&mut text, deleted, first.record);
    match out.text(&text).and_then(|_| out.finish("\n")) {
        Err(e) => quiet_on_broken_pipe(e),
        Ok(()) => Ok(Exit::Clean),
    }
}

/// `recent --all --json`: the document [`json`] makes of every session, written a session at a
/// time as the stream hands them on (spec/recall.md): the whole record's answer is most of a
/// gigabyte on a heavy vault. Each cited note's hash comes from the index made fresh, as
/// [`print_all`] takes it.
fn print_all_json(
    ui: &mut Ui,
    vault: &crate::vault::Vault,
    index: &mut Index,
    mut query: recent::Query,
    now: clock::Instant,
) -> CommandResult {
    query.count = None;
    let record = recall::stream::refresh(vault, index)?;
    index.freshen_or_ask()?;
    let claims = index.supersedes()?;
    let describer = refs::Shown::from_fresh_index(index)?;
    let shown = |out: &mut String, p: &str, h: &str| describer.write(out, p, h);
    let mut out = crate::records::text::JsonSafe::buffered(ui.stdout());
    let head = |empty: Option<String>| -> serde_json::Result<String> {
        Ok(format!(
            "{{\n  \"vault\": {},\n  \"empty\": {},\n  \"sessions\": [",
            serde_json::to_string(&vault.root)?,
            serde_json::to_string(&empty)?
        ))
    };
    let mut sessions = 0;
    let streamed =
        recall::stream::each_session_of(index, &query, now, &claims, |s: LeanSession<Step>| {
            let session = s.into_session();
            let session = JsonSession::of(&session, &shown);
            // At the depth of the document's `sessions` array (a JSON string holds no newline).
            let text = serde_json::to_string_pretty(&session).map_err(std::io::Error::from)?;
            if sessions == 0 {
                out.write_all(head(None).map_err(std::io::Error::from)?.as_bytes())?;
            }
            out.write_all(if sessions == 0 { b"\n    " } else { b",\n    " })?;
            out.write_all(text.replace('\n', "\n    ").as_bytes())?;
            sessions += 1;
            Ok(())
        });
    match streamed {
        Err(IndexError::Io(e)) => return quiet_on_broken_pipe(e),
        other => other?,
    };
    let tail = match sessions {
        0 => {
            let empty = render::empty_state(&recent::nothing_shown(index, &query)?);
            format!("{}]\n}}\n", head(empty)?)
        }
        _ => "\n  ]\n}\n".to_string(),
    };
    if let Err(e) = out.write_all(tail.as_bytes()).and_then(|_| out.flush()) {
        return quiet_on_broken_pipe(e);
    }
    drop(out);
    if !record && sessions > 0 {
        ui.warn(no_record_note(vault));
    }
    Ok(Exit::Clean)
}

/// A reader that stopped reading (`| head`) is not an error; anything else is.
fn quiet_on_broken_pipe(e: std::io::Error) -> CommandResult {
    super::ui::quiet_on_broken_pipe(Err(e))?;
    Ok(Exit::Clean)
}

/// Text printed in parts as [`Ui::print_painted`] prints it whole: made terminal-safe and
/// painted, through one buffer over the command's stdout. Parts must be cut between whole lines
/// of an answer (so no mark is split); a `\r` ending a part waits for the next, as
/// `terminal_safe` keeps a `\r` only before a `\n`.
struct Painted<'a> {
    out: std::io::BufWriter<&'a mut dyn Write>,
    palette: Palette,
    carried_cr: bool,
}

impl<'a> Painted<'a> {
    fn new(out: &'a mut dyn Write, palette: Palette) -> Painted<'a> {
        Painted {
            out: std::io::BufWriter::with_capacity(1 << 16, out),
            palette,
            carried_cr: false,
        }
    }

    /// Writes the next part of the text.
    fn text(&mut self, part: &str) -> std::io::Result<()> {
        let joined;
        let mut part = part;
        if std::mem::take(&mut self.carried_cr) {
            joined = format!("\r{part}");
            part = &joined;
        }
        if let Some(rest) = part.strip_suffix('\r') {
            self.carried_cr = true;
            part = rest;
        }
        let safe = crate::records::text::terminal_safe(part);
        self.out.write_all(self.palette.marks(&safe).as_bytes())
    }

    /// Sends what is buffered.
    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }

    /// Ends the text with `end` (after which a carried `\r` is shown escaped) and flushes.
    fn finish(mut self, end: &str) -> std::io::Result<()> {
        if std::mem::take(&mut self.carried_cr) {
            let safe = crate::records::text::terminal_safe("\r");
            self.out.write_all(safe.as_bytes())?;
        }
        self.out.write_all(end.as_bytes())?;
        self.out.flush()
    }
}

/// Why the entries shown are unverified, and what to do about it.
pub(crate) fn no_record_note(vault: &crate::vault::Vault) -> String {
    let why = match vault.git_dir {
        None => format!("{} is not a git repository", vault.root.display()),
        Some(_) => "refs/rutter/records does not exist yet".to_string(),
    };
    format!("git-rutter: {why}, so these entries are read from the day files as they are (unverified); run `git rutter init` to keep a record that can be verified.")
}

/// `recent --json`: every key always written (`null` or `[]` when it has no value;
/// spec/recall.md, "What recall shows").
#[derive(Serialize)]
struct JsonAnswer<'a> {
    vault: &'a std::path::Path,
    empty: Option<String>,
    sessions: Vec<JsonSession<'a>>,
}

#[derive(Serialize)]
struct JsonSession<'a> {
    session_id: Option<&'a str>,
    project: Option<&'a str>,
    steps: Vec<JsonStep<'a>>,
    total_steps: usize,
    omitted: usize,
}

/// A step: the entry's fields, the day of its file, its status and its supersede links, then the
/// fields a newer writer added to the entry.
#[derive(Serialize)]
struct JsonStep<'a> {
    day: &'a str,
    id: &'a str,
    session_id: Option<&'a str>,
    time: &'a str,
    summary: &'a str,
    refs: Vec<JsonRef<'a>>,
    workspace: Option<JsonWorkspace<'a>>,
    client: Option<&'a str>,
    supersedes: Option<&'a [String]>,
    status: Status,
    superseded_by: &'a [String],
    supersedes_unknown: &'a [String],
    supersedes_set_aside: &'a [String],
    #[serde(flatten)]
    extra: Extra<'a>,
}

/// The keys [`JsonStep`] writes itself.
const STEP_KEYS: &[&str] = &[
    "day",
    "id",
    "session_id",
    "time",
    "summary",
    "refs",
    "workspace",
    "client",
    "supersedes",
    "status",
    "superseded_by",
    "supersedes_unknown",
    "supersedes_set_aside",
];

impl<'a> JsonSession<'a> {
    fn of(s: &'a recent::Session, shown: render::RefText<'_>) -> Self {
        JsonSession {
            session_id: s.session_id.as_deref(),
            project: s.project.as_deref(),
            steps: s.steps.iter().map(|st| JsonStep::of(st, shown)).collect(),
            total_steps: s.total_steps,
            omitted: s.omitted,
        }
    }
}

impl<'a> JsonStep<'a> {
    fn of(step: &'a Step, shown: render::RefText<'_>) -> Self {
        let (e, links) = (&step.entry, &step.supersede);
        let shown = |r: &NoteRef| {
            let mut text = String::new();
            shown(&mut text, &r.path, &r.hash);
            text
        };
        JsonStep {
            day: &step.day,
            id: &e.id,
            session_id: e.session_id.as_deref(),
            time: &e.time,
            summary: &e.summary,
            refs: e
                .refs
                .iter()
                .map(|r| JsonRef::of(r, Some(shown(r))))
                .collect(),
            workspace: e.workspace.as_ref().map(JsonWorkspace::of),
            client: e.client.as_deref(),
            supersedes: e.supersedes.as_deref(),
            status: step.status,
            superseded_by: &links.superseded_by,
            supersedes_unknown: &links.unresolved,
            supersedes_set_aside: &links.set_aside,
            extra: Extra::of(&e.extra, STEP_KEYS),
        }
    }
}

fn json<'a>(
    root: &'a std::path::Path,
    result: &'a recent::Recent,
    shown: render::RefText<'_>,
) -> JsonAnswer<'a> {
    let sessions: &[recent::Session] = match result {
        recent::Recent::Sessions(s) => s,
        _ => &[],
    };
    let sessions = sessions.iter().map(|s| JsonSession::of(s, shown)).collect();
    JsonAnswer {
        vault: root,
        empty: render::empty_state(result),
        sessions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A step's JSON writes each of its keys once, whatever fields a forged line adds.
    #[test]
    fn a_forged_field_cannot_shadow_a_steps_own_key() {
        let mut entry: crate::records::Entry = serde_json::from_str(
            r#"{"id":"a","time":"2026-11-30T10:00:00.000Z","summary":"s","status":"committed","superseded_by":["x"],"newer":1}"#,
        )
        .unwrap();
        entry.refs.push(NoteRef::new("n.md", "sha256:ab", None));
        let step = Step {
            day: "2026-11-30".into(),
            entry,
            status: Status::Unverified,
            supersede: Default::default(),
        };
        let shown = |out: &mut String, p: &str, _: &str| out.push_str(p);
        let text = serde_json::to_string(&JsonStep::of(&step, &shown)).unwrap();
        assert_eq!(text.matches("\"status\"").count(), 1, "{text}");
        assert!(text.contains(r#""status":"unverified""#), "{text}");
        assert!(text.contains(r#""superseded_by":[]"#), "{text}");
        assert!(text.contains(r#""newer":1"#), "{text}");
        assert!(text.contains(r#""session_id":null"#), "{text}");
        assert!(text.contains(r#""shown":"n.md""#), "{text}");
    }
}
