//! `git rutter mcp`: the MCP server over stdio, for AI clients (Claude Code, Codex, Grok, …).

use std::path::PathBuf;

/// Serve the vault to an AI client over MCP on stdin/stdout.
///
/// Tools: librarian-search, librarian-get-note, librarian-recent (read-only). The vault comes
/// from --vault, LIBRARIAN_VAULT_PATH or git config rutter.vault, never from the current
/// directory. stdout carries only MCP frames; diagnostics go to stderr. The index is refreshed
/// in the background after start; exits when the client closes stdin. Register it with a
/// client, e.g. `claude mcp add rutter --scope user -- git-rutter mcp` (see docs/clients.md).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Also serve librarian-record, which records a decision as a Stop hook would (for MCP
    /// clients without a hook; the working directory gives the entry's project).
    #[arg(long)]
    pub allow_record: bool,
}

/// Runs the server; returns 0 when the client closes stdin, 1 on a fatal start-up error.
pub fn run(vault: Option<PathBuf>, args: Args) -> i32 {
    crate::mcp::server::run(vault.as_deref(), args.allow_record)
}
