//! `git rutter commit`: commits journalled (pending) entries and new use-log lines.

use super::{CommandResult, Exit, Ui};
use crate::audit::worktree;
use crate::lock;
use crate::recorder::Recorder;
use crate::store::Store;
use crate::{capture, clock};
use std::path::PathBuf;

/// Commit pending record lines to refs/rutter/records.
///
/// A capture that could not commit (the lock was busy, the ref was locked by another git
/// process, a disk error) leaves its line in the day file and a record in
/// .git/rutter/pending/. This command commits those lines, plus complete new lines of the use
/// log, in one commit. It is safe to run at any time; with nothing pending it does nothing
/// (unless signing is on, below).
///
/// A complete record line in a day file that no capture wrote (in no pending journal record:
/// typed by hand, or by another program) is never committed: each one is named on stderr and
/// the exit status is 1, as `git rutter verify` reports it (`unverified`).
///
/// With signing on (`git config rutter.sign true`, or --sign) the commit is signed by git's own
/// signer, as `git commit -S` would sign it (gpg.format, user.signingKey). When nothing is
/// pending and the tip is not signed yet, an empty `rutter: seal` commit signs the history up to
/// here. Captures never sign; run this (daily, or before pushing the ref) instead.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Sign, whatever rutter.sign says.
    #[arg(long, conflicts_with = "no_sign")]
    sign: bool,
    /// Do not sign, whatever rutter.sign says.
    #[arg(long)]
    no_sign: bool,
}

/// Runs the command.
pub fn run(ui: &mut Ui, vault: Option<PathBuf>, args: Args) -> CommandResult {
    let vault = super::interactive_vault(ui, vault.as_deref())?;
    let store = Store::open(&vault)?;
    let recorder = Recorder::lock(&store, lock::INTERACTIVE_WAIT)?;
    let journal = recorder.journal_path()?;
    let sign = args.sign || (store.sign_wanted() && !args.no_sign);
    // Lines the day files could not take when they were captured are appended first.
    capture::sweep::sweep(&vault);
    let mut slot = capture::write::CacheSlot::default();
    let mut earlier = recorder.replay_pending(&mut slot.dedupe(&vault));
    let out = recorder.commit(&earlier.in_memory, clock::now(), sign)?;
    earlier.finish();
    if earlier.placed > 0 {
        ui.warn(format_args!(
            "git-rutter: moved {} earlier entr{} that waited in the pending journal or aside into the day files.",
            earlier.placed,
            if earlier.placed == 1 { "y" } else { "ies" }
        ));
    }
    for note in earlier.waiting.iter().chain(&earlier.refused) {
        ui.warn(format_args!("git-rutter: {note}"));
    }
    for path in &out.diverged {
        ui.warn(format_args!("git-rutter: {path} was edited after it was committed; the commit keeps the committed bytes. Run `git rutter verify`."));
    }
    if let Some(problem) = &out.unwitnessed {
        ui.warn(format_args!("git-rutter: {problem}."));
    }
    let rejected = journal.join(crate::journal::REJECTED_DIR);
    for (name, why) in &out.refused {
        ui.warn(format_args!("git-rutter: refused the pending record {name} ({why}); it was moved to {} and is never committed. Look at it; if it holds a line you want, capture it again with `git rutter capture --summary`.", rejected.display()));
    }
    let unverified = worktree::unjournalled(&store)?;
    for f in &unverified {
        let (path, entry) = (f.path.as_deref(), f.entry.as_deref());
        ui.warn(format_args!(
            "git-rutter: {} holds {}, a line no capture wrote; it was not committed. Run `git rutter verify` for what to do.",
            path.unwrap_or_default(),
            entry.unwrap_or_default()
        ));
    }
    match out.commit {
        // No entry, yet a commit: the use log's new lines (MCP reads log their use there).
        Some(oid) if out.entries.is_empty() => ui.print(&format!(
            "committed the use log's new lines (no entry waited) to refs/rutter/records as {}",
            crate::shortid::long(&oid)
        ))?,
        Some(oid) => ui.print(&format!(
            "committed {} entr{} to refs/rutter/records as {}",
            out.entries.len(),
            if out.entries.len() == 1 { "y" } else { "ies" },
            crate::shortid::long(&oid)
        ))?,
        None if sign => match recorder.seal(clock::now())? {
            Some((oid, unwitnessed)) => {
                if let Some(problem) = unwitnessed {
                    ui.warn(format_args!("git-rutter: {problem}."));
                }
                ui.print(&format!(
                    "nothing to commit; signed the history with a seal commit {}",
                    crate::shortid::long(&oid)
                ))?
            }
            None => ui.print("nothing to commit; the tip is signed already")?,
        },
        None => ui.print("nothing to commit")?,
    }
    Ok(Exit::findings_if(
        !out.refused.is_empty()
            || !earlier.waiting.is_empty()
            || !earlier.refused.is_empty()
            || !out.held.is_empty()
            || !unverified.is_empty(),
    ))
}
