//! `git rutter gate`: how often the stateful tools were reached for, per ISO week.

use super::{cannot_run, CommandResult, Exit, Ui};
use crate::recall::{gate, uselog};
use std::path::PathBuf;

/// Show how often your AI clients used their memory, week by week.
///
/// The MCP server logs one use for each valid librarian-recent call and for each search that
/// found an earlier decision about a note, in _librarian/stateful-use.jsonl. Weeks are ISO
/// weeks (Monday to Sunday, UTC); a week with 3 or more uses is marked "in use": the bar the
/// design sets for a memory that earns its place. FROM and TO (YYYY-MM-DD, both inclusive) limit
/// the range. An event dated after this machine's clock (by more than a day) or more than 20
/// years before it is not counted, and the output says how many there are.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// First day to count (YYYY-MM-DD).
    pub from: Option<String>,
    /// Last day to count (YYYY-MM-DD).
    pub to: Option<String>,
    /// Print the weeks as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(ui: &mut Ui, vault: Option<PathBuf>, args: Args) -> CommandResult {
    let vault = super::interactive_vault(ui, vault.as_deref())?;
    for d in [&args.from, &args.to].into_iter().flatten() {
        if !crate::clock::is_day(d) {
            return Err(cannot_run(format!("{d} is not a date (YYYY-MM-DD)")));
        }
    }
    // Days in YYYY-MM-DD order as text as in time.
    if let (Some(from), Some(to)) = (&args.from, &args.to) {
        if from > to {
            return Err(cannot_run(format!(
                "FROM {from} is after TO {to}, so no week could be counted; give the earlier day first"
            )));
        }
    }
    let events = uselog::read(&vault.root);
    let now = crate::clock::now();
    let g = gate::weekly(&events, args.from.as_deref(), args.to.as_deref(), now);
    if args.json {
        ui.print_json(&serde_json::json!({
            "target": gate::WEEKLY_TARGET,
            "weeks": g.weeks,
            "logged": g.logged,
            "outside": g.outside,
            "counted_from": g.span.from.iso(),
            "counted_until": g.span.until.iso(),
        }))?;
    } else {
        ui.print(&gate::render(&g, args.from.is_some() || args.to.is_some()))?;
    }
    Ok(Exit::Clean)
}
