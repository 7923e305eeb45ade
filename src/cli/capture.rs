//! `git rutter capture`: the Stop hook. Reads the client's payload on stdin, appends one entry
//! line and commits it. Prints nothing on stdout and always exits 0.

use crate::capture::{self, directive::Directive, runlog, Request};
use crate::clock;
use std::io::Read;
use std::path::PathBuf;

/// Capture the session directives of an AI client's turn from its Stop-hook payload on stdin.
///
/// With --client NAME the payload is read as that client sends it: Claude Code's transcript
/// (`transcript_path`), the final message of Codex, Grok and Muse Code, Copilot CLI's
/// `events.jsonl` and agy's transcript (read from the end, waiting up to 3 s for the turn's final
/// message). Every `<!-- librarian-session {"summary": ..., "refs": [...]} -->` line the main
/// agent wrote in the current turn, outside code, becomes one entry, appended to today's day
/// file and committed to refs/rutter/records together. A direct payload `{"summary": ...,
/// "refs": [...]}` is captured as given. With --summary the capture is manual and stdin is not
/// read.
///
/// Sessions in a repository with `git config rutter.capture false` are not captured. Capture
/// never uses the current directory to find the vault, prints nothing on stdout, and always
/// exits 0: problems are one line on stderr.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The client running the hook: how its payload is read, and the label its entries record.
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(capture::CLIENTS))]
    pub client: Option<String>,
    /// Capture this summary instead of reading stdin.
    #[arg(long)]
    pub summary: Option<String>,
    /// A note the summary cites (repeatable; with --summary): relative to where you stand
    /// inside the vault, as git takes paths, else to the vault's root.
    #[arg(long = "ref", value_name = "PATH", requires = "summary")]
    pub refs: Vec<String>,
    /// The session id to record (with --summary).
    #[arg(long, requires = "summary")]
    pub session: Option<String>,
    /// The working directory to derive the project from (with --summary; default: current).
    #[arg(long, requires = "summary")]
    pub cwd: Option<String>,
}

/// Runs the capture; the exit status is always 0.
pub fn run(vault: Option<PathBuf>, args: Args) -> i32 {
    // A ref typed by hand is taken as `show` and `cited-by` take a path: relative to where you
    // stand inside the vault (as git takes paths), else to the vault's root.
    let root = crate::vault::resolve(vault.as_deref(), false)
        .ok()
        .map(|v| v.root);
    let refs = match &root {
        Some(root) => args
            .refs
            .iter()
            .map(|r| super::show::vault_relative(root, r))
            .collect(),
        None => args.refs,
    };
    let manual = args.summary.map(|summary| Directive {
        summary,
        refs,
        supersedes: vec![],
    });
    let mut stdin = Vec::new();
    if manual.is_none() {
        let _ = std::io::stdin()
            .take(capture::payload::MAX_STDIN + 1)
            .read_to_end(&mut stdin);
    }
    let cwd = match (&manual, args.cwd) {
        (Some(_), None) => std::env::current_dir()
            .ok()
            .map(|p| p.display().to_string()),
        (_, cwd) => cwd,
    };
    let req = Request {
        vault,
        stdin,
        client: args.client,
        manual,
        session_id: args.session,
        cwd,
    };
    let client = req.client.clone();
    let lines = match std::panic::catch_unwind(|| capture::run(req)) {
        Ok(report) => {
            crate::sync::auto::after_capture(
                report.vault.as_ref(),
                report.store.as_ref(),
                clock::now(),
            );
            report.lines
        }
        Err(_) => {
            let why = "internal error; nothing was lost, please report it.";
            let outcome = capture::Outcome::Error(format!("error: {why}"));
            let run = runlog::Run::new(clock::now(), client.as_deref(), None, &outcome, None);
            runlog::record(None, &run);
            vec![format!("[librarian-capture] error: {why}")]
        }
    };
    say(&lines);
    0
}

/// Writes the hook's lines to stderr, ignoring every error: a hook whose stderr is closed or a
/// broken pipe (`2>&-`, a client that stopped reading) still exits 0 (`eprintln!` would panic).
/// Each line is one field (spec/output.md): a ref, path or message the model or the payload
/// wrote never moves the cursor, sets the title or starts a line of its own on the terminal or
/// in the client that shows the hook's stderr.
pub fn say(lines: &[String]) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    for l in lines {
        let _ = writeln!(err, "{}", crate::records::text::field_safe(l));
    }
    let _ = err.flush();
}
