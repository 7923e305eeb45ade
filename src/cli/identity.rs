//! `git rutter identity confirm`: bind a dead cited path to where the note is now.

use super::{CommandResult, Exit, Ui};
use crate::recall::confirm;
use std::path::PathBuf;

/// Note identity: confirm where a cited note went.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: IdentityCommand,
}

/// The identity subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum IdentityCommand {
    Confirm(ConfirmArgs),
}

/// Confirm that the dead path FROM (the ref with HASH, when FROM was cited with several) now
/// lives at TO.
///
/// Use it for a reference shown as [UNRESOLVED -- candidates: …]: a note that was edited as well
/// as renamed, or whose content several notes share. TO must be a current note. The binding is
/// appended to _librarian/note-identity.md, committed to refs/rutter/records, and shown at once;
/// a later automatic match never overrides it (a conflict is shown instead).
#[derive(Debug, clap::Args)]
#[command(override_usage = "git rutter identity confirm <FROM> [HASH] <TO>")]
pub struct ConfirmArgs {
    /// FROM [HASH] TO.
    #[arg(num_args = 0.., value_name = "ARGS")]
    pub args: Vec<String>,
}

/// Runs the command; refusals are exit status 1.
pub fn run(ui: &mut Ui, vault: Option<PathBuf>, args: Args) -> CommandResult {
    let IdentityCommand::Confirm(c) = args.command;
    let (from, hash, to) = match c.args.as_slice() {
        [from, to] => (from, None, to),
        [from, hash, to] => (from, Some(hash.as_str()), to),
        _ => {
            ui.warn("usage: git rutter identity confirm <from-path> <to-path>\n       git rutter identity confirm <from-path> <hash> <to-path>");
            return Ok(Exit::Findings);
        }
    };
    let vault = super::interactive_vault(ui, vault.as_deref())?;
    let (mut index, building) = super::open_index(ui, &vault)?;
    drop(building);
    let out = confirm::confirm(&vault, &mut index, from, hash, to)?;
    ui.warn(&out.message);
    Ok(Exit::findings_if(!out.ok))
}
