//! `git rutter timeline`: the record as one HTML page to open in a browser, filter and keep.

use super::page_file::PageFile;
use super::{cannot_run, CommandError, CommandResult, Exit, FilterArgs, Ui};
use crate::clock;
use crate::count::count;
use crate::index::short_ids::ShortIds;
use crate::index::Index;
use crate::recall::{self, recent, refs, timeline, uselog};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Write every decision as one HTML page to open in a browser, filter and keep.
///
/// The page holds the decisions `git rutter recent --all` shows (retracted ones are left out),
/// by day, newest first, and by project: each with its time, short id, client, status mark
/// ([edited after commit], [not committed yet]…) and cited notes, shown as recall shows them
/// now ((changed since capture), (renamed to X), [UNRESOLVED -- …]). Above them a chart of each
/// ISO week: the decisions recorded, and the uses of the memory the MCP server logged. In the
/// page, a box keeps the decisions that hold every word typed (in the summary, project or a
/// cited path, as --grep) and two lists keep one project or one client.
///
/// The page is one file that needs nothing else: no network, no fonts or scripts from elsewhere,
/// and a Content-Security-Policy that lets only its own script and stylesheet run. Every
/// summary is data shown as text, never markup.
///
/// Without -o or --open the page is written to stdout (`git rutter timeline > timeline.html`);
/// a terminal is refused. Days are local days unless --utc. For example, `git rutter timeline
/// --open` shows every decision in your browser, and `git rutter timeline --since 4w --project
/// newsletter -o newsletter.html` keeps one project's last four weeks as a file.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Only decisions whose project is NAME (case-insensitive, whole name).
    #[arg(long, value_name = "NAME")]
    pub project: Option<String>,
    /// Only decisions written by this client (its label: claude, codex, grok, copilot, agy,
    /// muse, cursor, gemini, opencode, windsurf; case-insensitive).
    #[arg(long, value_name = "CLIENT")]
    pub client: Option<String>,
    /// Show times and count days in UTC, as recorded (by default in your time zone).
    #[arg(long)]
    pub utc: bool,
    /// Write the page to FILE, in a folder that exists, outside the vault's _librarian/ and
    /// .git/ (replaced whole; a file that is not a page git-rutter wrote is never replaced).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Open the page in your browser (xdg-open, or open on macOS), written to FILE or, without
    /// -o, to timeline.html in the vault's .git/rutter/.
    #[arg(long)]
    pub open: bool,
}

/// Runs the command.
pub fn run(ui: &mut Ui, vault: Option<PathBuf>, args: Args) -> CommandResult {
    let now = clock::now();
    let clock = clock::Clock::for_flag(args.utc);
    let filter = args
        .filter
        .filter(now, &clock)?
        .of_client(args.client.as_deref());
    if args.output.is_none() && !args.open && ui.stdout_is_terminal() {
        return Err(cannot_run(
            "the timeline is an HTML page, not text for a terminal.",
        )
        .hinted("Write it with `-o FILE`, open it with `--open`, or redirect stdout (`> timeline.html`)."));
    }
    let vault = super::interactive_vault(ui, vault.as_deref())?;
    let output = match &args.output {
        Some(f) => Some(PageFile::check(f, &vault)?),
        None => None,
    };
    let query = recent::Query {
        window_days: None,
        count: None,
        project: args.project,
        brief: false,
        filter: filter.clone(),
        clock: clock.clone(),
    };
    let building = super::progress::Progress::index_build(ui, &vault);
    let mut index = Index::open(&vault, false)?;
    let record = recall::stream::refresh(&vault, &mut index)?;
    // The notes made fresh, so the thousands of cited notes' hashes come from the index (as
    // `recent --all` takes them), not from reading every cited note again.
    index.freshen_or_ask()?;
    drop(building);
    let output = match (output, args.open) {
        (Some(o), _) => Some(o),
        (None, true) => Some(PageFile::ours(
            vault.worktree_state_dir().join("timeline.html"),
        )?),
        (None, false) => None,
    };
    // Counted, then written, from one snapshot of the index.
    let counts = index.read(|index| {
        let w = Written {
            now,
            clock: &clock,
            filter: &filter,
            output: output.as_ref(),
        };
        Ok(write(ui, &vault, index, &query, record, &w))
    })??;
    let Some(output) = output else {
        return Ok(Exit::Clean);
    };
    let what = format!(
        "Wrote the timeline of {} ({}, {}) to {}",
        count(counts.decisions, "decision", "decisions"),
        count(counts.days, "day", "days"),
        count(counts.projects, "project", "projects"),
        crate::records::text::one_line_safe(&output.path.display().to_string())
    );
    if !args.open {
        ui.warn(format!("{what}."));
        return Ok(Exit::Clean);
    }
    let opener = open(&output.path)?;
    ui.warn(format!("{what}; opened it with {}.", opener.display()));
    Ok(Exit::Clean)
}

/// What the page is written with, beside the index and the query.
struct Written<'a> {
    now: clock::Instant,
    clock: &'a clock::Clock,
    filter: &'a crate::records::filter::EntryFilter,
    /// The file; stdout without one.
    output: Option<&'a PageFile>,
}

/// What a page written shows.
struct Counts {
    decisions: usize,
    days: usize,
    projects: usize,
}

/// Counts the page's decisions and writes the page (to the file, or to stdout), reading the
/// index inside the caller's snapshot.
fn write(
    ui: &mut Ui,
    vault: &crate::vault::Vault,
    index: &Index,
    query: &recent::Query,
    record: bool,
    w: &Written<'_>,
) -> Result<Counts, CommandError> {
    let describer = refs::Shown::from_fresh_index(index)?;
    let short = ShortIds::all(index)?;
    let uses = uselog::read(&vault.root);
    let input = timeline::Input {
        vault: &vault.root,
        decisions: timeline::Source::Index { index, query },
        marks: record,
        refs: &|out: &mut String, p: &str, h: &str| describer.write(out, p, h),
        ids: &|id: &str| short.short(id),
        clock: w.clock,
        uses: &uses,
        bounds: w.filter,
        now: w.now,
        notes: Vec::new(),
    };
    let mut page = timeline::page(&input)?;
    if !record && page.decisions > 0 {
        let note = super::recent::no_record_note(vault);
        ui.warn(&note);
        page.note(note.trim_start_matches("git-rutter: "));
    }
    let written = match w.output {
        Some(o) => o.write_with(&|out: &mut dyn std::io::Write| page.write_to(out)),
        None => {
            let mut out = std::io::BufWriter::new(ui.stdout());
            let written = page.write_to(&mut out).and_then(|()| out.flush());
            super::ui::quiet_on_broken_pipe(written).map_err(CommandError::from)
        }
    };
    if let Some(e) = page.failure() {
        return Err(e.into());
    }
    written?;
    Ok(Counts {
        decisions: page.decisions,
        days: page.days,
        projects: page.projects,
    })
}

/// The program that opens a file in the user's browser.
const OPENER: &str = if cfg!(target_os = "macos") {
    "open"
} else {
    "xdg-open"
};

/// Opens `page` with [`OPENER`], found by its absolute path on PATH (never through a relative
/// PATH entry, as git is found). The opener is not waited for beyond a moment: one that hands
/// the page to a running browser exits at once, one that runs the browser itself keeps running.
fn open(page: &Path) -> Result<PathBuf, CommandError> {
    let shown = page.display();
    let Some(program) = crate::store::gitcli::program(OPENER) else {
        return Err(
            cannot_run(format!("no {OPENER} on PATH to open the page with."))
                .hinted(format!("Open {shown} in your browser.")),
        );
    };
    let mut child = std::process::Command::new(&program)
        .arg(page)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| {
            cannot_run(format!("cannot run {}: {e}.", program.display()))
                .hinted(format!("Open {shown} in your browser."))
        })?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    while std::time::Instant::now() < deadline {
        match child.try_wait() {
            Ok(Some(status)) if !status.success() => {
                return Err(cannot_run(format!(
                    "{} could not open the page ({status}).",
                    program.display()
                ))
                .hinted(format!("Open {shown} in your browser.")));
            }
            Ok(Some(_)) | Err(_) => break,
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(20)),
        }
    }
    Ok(program)
}
