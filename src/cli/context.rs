//! `git rutter context`: the brief a new session starts with, and (hidden) `--hook CLIENT`, the
//! session-start hook that prints it in that client's output shape and always exits 0.

use super::{user_error, CommandResult, Exit, Ui};
use crate::clock;
use crate::recall::{context, session_start};
use std::path::PathBuf;

/// Print the brief a new AI session starts with: what was decided lately, bounded in bytes.
///
/// The newest decisions of the working directory's project (named as capture names it: the
/// repository's folder), then the newest elsewhere, each with the cited notes that changed since
/// it was recorded; how fresh this machine's record is (when it last synced, and whether that
/// failed); and how to ask for more through the MCP tools. The text is framed as data from the
/// record, never as instructions, and holds whole lines only: it stays within --max-bytes
/// (default 2048, or `git config rutter.contextBytes N`; 512 to 65536) and says how many
/// decisions it left out. It reads only the record cache and the index: no network, no scan of
/// the notes.
///
/// `install-hook` registers it as the session-start hook of Claude Code, Codex, Gemini CLI and
/// Cursor, which hand the text to each new (resumed, cleared, compacted) session; `git config
/// rutter.context false` turns that off. An injection is logged in the state folder (`context-runs.jsonl`), never as a
/// use: the gate counts only what a client reached for.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The most bytes the brief may take (512 to 65536; default rutter.contextBytes or 2048).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(MAX_BYTES_RANGE))]
    pub max_bytes: Option<u64>,
    /// The project to brief on (default: the one of the current directory, as capture names it).
    #[arg(long, value_name = "NAME")]
    pub project: Option<String>,
    /// Print the brief as JSON: its text, the decisions it shows, how many it left out.
    #[arg(long)]
    pub json: bool,
    /// Run as CLIENT's session-start hook: read its payload on stdin, print its output shape.
    #[arg(long, value_name = "CLIENT", hide = true,
          value_parser = clap::builder::PossibleValuesParser::new(session_start::CLIENTS))]
    pub hook: Option<String>,
}

/// Runs `context --hook CLIENT`: prints the client's output shape; the exit status is always 0.
pub fn run_hook(vault: Option<PathBuf>, client: &str) -> i32 {
    use std::io::Write;
    let out = std::panic::catch_unwind(|| session_start::run(client, vault, std::io::stdin()))
        .unwrap_or_else(|_| session_start::output(client, ""));
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{out}");
    let _ = stdout.flush();
    // The worker may still be reading a stdin the client never closed: do not wait for it.
    std::process::exit(0)
}

/// Runs the command.
pub fn run(ui: &mut Ui, vault: Option<PathBuf>, args: Args) -> CommandResult {
    let now = clock::now();
    let vault = super::interactive_vault(ui, vault.as_deref())?;
    let store = crate::store::Store::open(&vault).ok();
    let max_bytes =
        context::budget(store.as_ref(), args.max_bytes.map(|n| n as usize)).map_err(user_error)?;
    let project = args.project.or_else(|| {
        let cwd = std::env::current_dir().ok()?;
        crate::capture::workspace::derive_workspace(Some(&cwd.to_string_lossy()))
            .map(|w| w.project.clone())
    });
    let (mut index, building) = super::open_index(ui, &vault)?;
    let freshness = crate::recall::sync_state::line(store.as_ref(), now);
    let brief = context::read(
        &vault,
        &mut index,
        project.as_deref(),
        freshness,
        max_bytes,
        now,
    )?;
    drop(building);
    match args.json {
        true => ui.print_json(&brief)?,
        false => ui.print(&brief.text)?,
    }
    Ok(Exit::Clean)
}

/// What `--max-bytes` takes: out of it is a usage error (exit 2), as `search --limit 0` is.
const MAX_BYTES_RANGE: std::ops::RangeInclusive<u64> =
    context::MIN_MAX_BYTES as u64..=context::MAX_MAX_BYTES as u64;
