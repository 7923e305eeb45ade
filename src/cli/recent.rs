//! `git rutter recent`: what was I working on lately?

use crate::clock;
use crate::recall::{recent, render};
use std::path::PathBuf;

/// Show recent sessions, newest first, each step with its date, project and cited notes.
///
/// Entries are grouped into sessions (a session that moves between projects splits); without
/// COUNT the 20 most recent sessions are shown. Reading never logs use.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// How many sessions to show (default 20).
    #[arg(value_parser = clap::value_parser!(u32).range(1..))]
    pub count: Option<u32>,
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
    #[arg(long, conflicts_with = "count")]
    pub all: bool,
    /// Print the sessions as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(vault: Option<PathBuf>, args: Args) -> anyhow::Result<i32> {
    let vault = super::interactive_vault(vault.as_deref())?;
    let query = recent::Query {
        window_days: args.days,
        count: if args.all {
            None
        } else {
            Some(args.count.map_or(recent::DEFAULT_COUNT, |c| c as usize))
        },
        project: args.project,
        brief: args.brief,
    };
    let result = recent::recent(recent::load_steps(&vault.root), &query, clock::now());
    if args.json {
        let sessions = match &result {
            recent::Recent::Sessions(s) => s.clone(),
            _ => vec![],
        };
        let value = serde_json::json!({
            "vault": vault.root,
            "empty": render::empty_state(&result),
            "sessions": sessions,
        });
        super::print(&serde_json::to_string_pretty(&value)?)?;
    } else {
        super::print(&render::cli(&result))?;
    }
    Ok(super::EXIT_OK)
}
