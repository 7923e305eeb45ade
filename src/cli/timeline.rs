//! `git rutter timeline`: the record as one HTML page to open in a browser, filter and keep.

use super::{cannot_run, user_error, CommandError, CommandResult, Exit, FilterArgs, Ui};
use crate::clock;
use crate::index::short_ids::ShortIds;
use crate::index::Index;
use crate::recall::{recent, refs, timeline, uselog};
use std::io::{Read, Write};
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
    /// muse; case-insensitive).
    #[arg(long, value_name = "CLIENT")]
    pub client: Option<String>,
    /// Show times and count days in UTC, as recorded (by default in your time zone).
    #[arg(long)]
    pub utc: bool,
    /// Write the page to FILE (replaced whole; a file git-rutter did not write is never
    /// replaced).
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
    let output = match &args.output {
        Some(f) => Some(Output::check(f)?),
        None => None,
    };
    let vault = super::interactive_vault(ui, vault.as_deref())?;
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
    let answer = recent::read(&vault, &mut index, &query, now)?;
    drop(building);
    let mut notes = Vec::new();
    if !answer.record && matches!(answer.recent, recent::Recent::Sessions(_)) {
        let note = super::recent::no_record_note(&vault);
        ui.warn(&note);
        notes.push(note.trim_start_matches("git-rutter: ").to_string());
    }
    let describer = refs::Shown::new(&index);
    let short = ShortIds::all(&index)?;
    let uses = uselog::read(&vault.root);
    let page = timeline::page(&timeline::Input {
        vault: &vault.root,
        recent: &answer.recent,
        marks: answer.record,
        refs: &|out: &mut String, p: &str, h: &str| describer.write(out, p, h),
        ids: &|id: &str| short.short(id),
        clock: &clock,
        uses: &uses,
        bounds: &filter,
        now,
        notes,
    });
    let output = match (output, args.open) {
        (Some(o), _) => o,
        (None, true) => Output::ours(vault.worktree_state_dir().join("timeline.html")),
        (None, false) => {
            ui.write_raw(page.html.as_bytes())?;
            return Ok(Exit::Clean);
        }
    };
    output.write(page.html.as_bytes())?;
    let what = format!(
        "Wrote the timeline of {} ({}, {}) to {}",
        plural(page.decisions, "decision"),
        plural(page.days, "day"),
        plural(page.projects, "project"),
        crate::records::text::terminal_safe(&output.path.display().to_string())
    );
    if !args.open {
        ui.warn(format!("{what}."));
        return Ok(Exit::Clean);
    }
    let opener = open(&output.path)?;
    ui.warn(format!("{what}; opened it with {}.", opener.display()));
    Ok(Exit::Clean)
}

fn plural(n: usize, what: &str) -> String {
    match n {
        1 => format!("1 {what}"),
        n => format!("{n} {what}s"),
    }
}

/// Where the page goes: an absolute path, and whether a file already there may be replaced.
struct Output {
    path: PathBuf,
    /// No file was there when checked: one that appears meanwhile is not replaced.
    new: bool,
}

impl Output {
    /// `-o FILE`, checked before any work: a new file, or a page git-rutter wrote (it holds
    /// [`timeline::GENERATOR`] near its start). Anything else is refused, so a mistyped name
    /// never replaces a note.
    fn check(file: &Path) -> Result<Output, CommandError> {
        let given = std::path::absolute(file).map_err(cannot_run)?;
        let Some(name) = given.file_name() else {
            return Err(cannot_run(format!("{} names no file.", file.display())));
        };
        // Said as the folder's real path (`../t.html` as the folder it names).
        let path = match given.parent().map(Path::canonicalize) {
            Some(Ok(dir)) => dir.join(name),
            _ => given.clone(),
        };
        let shown = path.display();
        let meta = match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Output { path, new: true });
            }
            Err(e) => return Err(cannot_run(format!("cannot read {shown}: {e}"))),
            Ok(m) => m,
        };
        let refused = |why: &str| {
            user_error(format!("{shown} {why}; nothing was written."))
                .hinted("Name a new file, or remove it first.")
        };
        if !meta.is_file() {
            return Err(refused("exists and is not a regular file"));
        }
        let mut head = [0u8; 1024];
        let n = std::fs::File::open(&path)
            .and_then(|mut f| read_up_to(&mut f, &mut head))
            .map_err(|e| cannot_run(format!("cannot read {shown}: {e}")))?;
        let marker = timeline::GENERATOR.as_bytes();
        if !head[..n].windows(marker.len()).any(|w| w == marker) {
            return Err(refused("exists and is not a timeline git-rutter wrote"));
        }
        Ok(Output { path, new: false })
    }

    /// A file in git-rutter's own folder, replaced whatever it holds.
    fn ours(path: PathBuf) -> Output {
        Output { path, new: false }
    }

    /// Writes `bytes` whole or not at all: a temporary file beside the target, renamed over it
    /// (or, for a new file, linked only if nothing took the name meanwhile).
    fn write(&self, bytes: &[u8]) -> Result<(), CommandError> {
        let shown = self.path.display();
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)
            .map_err(|e| cannot_run(format!("cannot create {}: {e}", dir.display())))?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir)
            .map_err(|e| cannot_run(format!("cannot write in {}: {e}", dir.display())))?;
        tmp.write_all(bytes)
            .and_then(|_| tmp.flush())
            .map_err(|e| cannot_run(format!("cannot write {shown}: {e}")))?;
        let persisted = match self.new {
            true => tmp.persist_noclobber(&self.path),
            false => tmp.persist(&self.path),
        };
        persisted.map_err(|e| match e.error.kind() {
            std::io::ErrorKind::AlreadyExists => user_error(format!(
                "{shown} appeared while the page was made; nothing was written."
            ))
            .hinted("Run the command again."),
            _ => cannot_run(format!("cannot write {shown}: {}", e.error)),
        })?;
        Ok(())
    }
}

/// Reads as much of `buf` as the file fills.
fn read_up_to(f: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
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
