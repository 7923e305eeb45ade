//! `git rutter sync`: one record across machines through a git remote you own.

use super::{CommandError, CommandResult, ErrorKind, Exit, Ui};
use crate::clock;
use crate::count::count;
use crate::hint::Hinted;
use crate::sync::{exposure, Action, SyncError, SyncReport};
use std::path::PathBuf;

/// Send and receive records through a git remote you own, so every machine has them all.
///
/// Fetches refs/rutter/* from REMOTE (else the remote set by `--setup`, git config
/// rutter.syncRemote; there is no default), takes in what the remote has (a fast-forward, or a
/// merge commit whose record files hold the lines of both sides), updates the record files in
/// _librarian/ that have no uncommitted edits, and pushes refs/rutter/records. It never rewrites
/// or force-pushes history; when the remote moved meanwhile it fetches and merges again.
///
/// What the remote sends is checked before anything is taken: git's own object checks on the
/// fetch, then every incoming commit with verify's rules (only record files, as regular files
/// with plain names; no deleted or changed line; no merge that loses a line). A remote that fails
/// is refused whole (exit 1, naming the commit, path and rule); `git rutter status` shows it.
///
/// Transport is the git command on PATH, so your credentials and ssh configuration apply; it
/// never prompts. What travels: the records and, unless `git config rutter.keepCited false`,
/// copies of the notes they cite. Run `--setup REMOTE` once per vault: it refuses a remote that
/// holds other people's commits unless you pass --force.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The remote to sync with (default: git config rutter.syncRemote).
    #[arg(add = clap_complete::engine::ArgValueCompleter::new(super::complete::remotes))]
    pub remote: Option<String>,
    /// Make REMOTE this vault's sync remote (sets rutter.syncRemote and adds the fetch refspec
    /// +refs/rutter/*:refs/remotes/REMOTE/rutter/*, so plain `git fetch` brings the records),
    /// then sync.
    #[arg(long, requires = "remote")]
    pub setup: bool,
    /// With --setup: accept a remote that holds commits by other identities (they are yours).
    #[arg(long, requires = "setup")]
    pub force: bool,
    /// The report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Started by a capture (git config rutter.autoSync): with the configured remote, at most
    /// one at a time, its outcome written to the hook-run log instead of the terminal.
    #[arg(long, hide = true, conflicts_with_all = ["remote", "setup", "json"])]
    pub auto: bool,
}

/// Runs the command.
pub fn run(ui: &mut Ui, vault: Option<PathBuf>, args: Args) -> CommandResult {
    if args.auto {
        return auto(ui, vault);
    }
    let vault = super::interactive_vault(ui, vault.as_deref())?;
    let store = super::open_store(&vault)?;
    if let (true, Some(remote)) = (args.setup, args.remote.as_deref()) {
        let r = crate::sync::setup::setup_sync(&store, remote, args.force).map_err(refusal)?;
        let exposed = r.url.as_deref().and_then(|u| exposure::warning(remote, u));
        let url = r.url.map(|u| format!(" ({u})")).unwrap_or_default();
        ui.warn(format_args!("git-rutter: {remote}{url} is this vault's sync remote (rutter.syncRemote); `git fetch {remote}` now brings its records too."));
        if let Some(line) = exposed {
            ui.warn(format_args!("{line}"));
        }
        if !r.forced_over.is_empty() {
            ui.warn(format_args!(
                "git-rutter: --force: syncing although {remote} holds commits by {}.",
                r.forced_over.join(", ")
            ));
        }
    }
    let remote = crate::sync::sync_remote(&store, args.remote.as_deref()).map_err(refusal)?;
    let report = match crate::sync::sync(&store, &remote, clock::now()) {
        Ok(r) => r,
        Err(e @ SyncError::Refused { .. }) if args.json => {
            ui.print_json(&refused_json(&e))?;
            return Err(refusal(e));
        }
        Err(e) => return Err(refusal(e)),
    };
    refresh_dedupe(ui, &vault, &report);
    if report.after != report.before {
        refresh_index(ui, &vault);
    }
    settle_purges(ui, &vault, &store, &report);
    if args.json {
        let mut value = json(&report);
        let hints = hints(&report);
        if !hints.is_empty() {
            value["hints"] = serde_json::json!(hints);
        }
        ui.print_json(&value)?;
    } else {
        ui.print(&human(&report))?;
    }
    warnings(ui, &report);
    Ok(Exit::findings_if(
        report.refused.is_some() || report.gave_up,
    ))
}

/// The detached sync a capture started (`sync::auto`): quiet, one at a time, and logged in the
/// hook-run log as `synced` or `sync-failed`, where `git rutter status` shows it.
fn auto(ui: &mut Ui, vault: Option<PathBuf>) -> CommandResult {
    use crate::capture::runlog::{self, Outcome, Run};
    // Never the current directory: the capture named its vault.
    let vault = crate::vault::resolve(vault.as_deref(), false)?;
    let store = super::open_store(&vault)?;
    let Some(_one) = crate::sync::auto::exclusive(store.state_dir()) else {
        return Ok(Exit::Clean);
    };
    let synced = crate::sync::sync_remote(&store, None)
        .and_then(|remote| crate::sync::sync(&store, &remote, clock::now()));
    let outcome = match &synced {
        Ok(report) => {
            refresh_dedupe(ui, &vault, report);
            if report.after != report.before {
                refresh_index(ui, &vault);
            }
            settle_purges(ui, &vault, &store, report);
            match hints(report).is_empty() {
                true => Outcome::Synced(human(report).replace('\n', " ")),
                false => Outcome::SyncFailed(format!(
                    "{} {}",
                    human(report).replace('\n', " "),
                    hints(report).join(" ")
                )),
            }
        }
        Err(e) => Outcome::SyncFailed(crate::hint::one_line(e)),
    };
    let run = Run::new(
        clock::now(),
        Some(AUTO_CLIENT),
        None,
        &outcome,
        Some(&vault),
    );
    runlog::record(Some(&vault), &run);
    Ok(Exit::findings_if(synced.is_err()))
}

/// The client label of a detached sync's line in the hook-run log.
pub(crate) const AUTO_CLIENT: &str = "auto-sync";

/// Why sync did not run, as the store says it (with a final period), then what to do; a
/// refusal the user can fix is exit 1, anything else 2.
fn refusal(e: SyncError) -> CommandError {
    let kind = match e.users_to_fix() {
        true => ErrorKind::User,
        false => ErrorKind::CannotRun,
    };
    let refused = CommandError::new(kind, crate::hint::closed(&e.to_string()));
    match e.hint() {
        Some(hint) => refused.hinted(hint),
        None => refused,
    }
}

/// Day files sync rewrote no longer only grew: the dedupe cache reads them again whole.
fn refresh_dedupe(ui: &mut Ui, vault: &crate::vault::Vault, report: &SyncReport) {
    let names: Vec<String> = report
        .checkout
        .updated
        .iter()
        .filter_map(|p| p.rsplit('/').next().map(str::to_string))
        .collect();
    if names.is_empty() {
        return;
    }
    crate::capture::dedupe::DedupeCache::forget(&vault.worktree_state_dir(), &names);
    match crate::recorder::Recorder::lock_vault(vault, crate::lock::DEFAULT_WAIT) {
        Ok(held) => crate::capture::dedupe::DedupeCache::warm(&held, vault),
        Err(e) => ui.warn(format_args!(
            "git-rutter: the dedupe cache will be rebuilt by the next capture ({e})."
        )),
    }
}

/// After purges crossed (spec/purge.md): the index's copy of the purged lines compacted away
/// and `verify --full` run, so the carried witness log and reflog are its new baseline.
fn settle_purges(
    ui: &mut Ui,
    vault: &crate::vault::Vault,
    store: &crate::store::Store,
    report: &SyncReport,
) {
    if report.purges_taken.is_empty() && report.purges_sent.is_empty() {
        return;
    }
    if let Some(e) = &report.expire_error {
        ui.warn(format_args!("git-rutter: the old objects could not be expired after the purge ({e}); run `git gc --prune=now` in the vault."));
    }
    let Ok(mut index) = crate::index::Index::open(vault, false) else {
        return;
    };
    let after = super::purge::settle(vault, store, &mut index, false);
    if let Err(e) = &after.verified {
        ui.warn(format_args!(
            "git-rutter: after the purge: {}",
            crate::hint::closed(&e.to_string())
        ));
    }
    if let Err(e) = &after.index {
        ui.warn(format_args!(
            "git-rutter: the index will catch up with the purge later ({e})."
        ));
    }
}

/// Brings the index and the identity projection up to date with what sync brought (bindings
/// confirmed on another machine take effect here at once); a failure only delays that to the
/// next command that refreshes.
fn refresh_index(ui: &mut Ui, vault: &crate::vault::Vault) {
    use crate::recall::reindex::{self, Mode};
    // No index yet: the first command that needs one builds it (a cold build is seconds on a
    // large vault, not sync's to pay).
    if !crate::index::location(vault).0.exists() {
        return;
    }
    let refreshed = crate::index::Index::open(vault, false)
        .and_then(|mut index| reindex::refresh(vault, &mut index, Mode::Auto, false));
    if let Err(e) = refreshed {
        ui.warn(format_args!(
            "git-rutter: the index will catch up with the synced records later ({e})."
        ));
    }
}

fn short(oid: Option<crate::objectid::ObjectId>) -> String {
    oid.map(|o| crate::shortid::long(&o))
        .unwrap_or_else(|| "-".into())
}

fn human(r: &SyncReport) -> String {
    let remote = &r.remote;
    let mut out = Vec::new();
    if r.committed_pending > 0 {
        out.push(format!(
            "Committed {} first.",
            count(r.committed_pending, "pending entry", "pending entries")
        ));
    }
    out.push(match r.action {
        Action::UpToDate if r.pushed && r.remote_emptied => {
            format!("{remote} holds no records now (it had them at the last fetch).")
        }
        Action::UpToDate if r.pushed => format!("{remote} had no records yet."),
        Action::UpToDate => format!("Up to date with {remote} at {}.", short(r.after)),
        Action::Ahead => format!("{remote} had nothing new."),
        Action::FastForward => format!("Took in {remote}'s records (a fast-forward)."),
        Action::Merged => {
            let how = match r.unioned.len() {
                0 => "each machine's files side by side".to_string(),
                n => format!(
                    "{} written as the union of both sides' lines",
                    count(n, "record file", "record files")
                ),
            };
            let mut s = format!(
                "Merged {remote}'s records with this vault's as {} ({how}",
                short(r.merges.last().copied()),
            );
            if !r.split.is_empty() {
                s.push_str(&format!(
                    "; {} kept whole beside each other",
                    count(r.split.len(), "@1 day file", "@1 day files")
                ));
            }
            s.push_str(").");
            if r.unrelated {
                s.push_str(" The two records had no common history (each machine had started its own); both are kept.");
            }
            s
        }
    });
    if !r.received.is_empty() || r.pushed {
        out.push(format!(
            "Received {}; sent {}.",
            r.received.said(),
            r.sent.said()
        ));
    }
    if r.pushed {
        out.push(format!(
            "Pushed refs/rutter/records to {remote} at {}.",
            short(r.after)
        ));
    }
    if !r.purges_taken.is_empty() {
        out.push(format!(
            "Took the remote's purge of {} (checked against this machine's copy; the history here is rewritten without {}).",
            r.purges_taken.join(", "),
            if r.purges_taken.len() == 1 { "its line" } else { "their lines" }
        ));
    }
    if r.pushed && !r.purges_sent.is_empty() {
        out.push(format!(
            "Sent the purge of {} (the remote's history replaced, with a lease on the tip fetched).",
            r.purges_sent.join(", ")
        ));
    }
    if !r.checkout.updated.is_empty() {
        out.push(format!(
            "Updated {} in _librarian/.",
            count(r.checkout.updated.len(), "record file", "record files")
        ));
    }
    out.join("\n")
}

/// What the warnings of a sync that ran say to do next, each once (`--json` carries them).
const VERIFY_HINT: &str = "Run `git rutter verify`.";
const RESTORE_HINT: &str = "The records hold the synced version; `git rutter restore` writes it (an edited file is moved aside, never deleted).";
const RESTORE_DELETED_HINT: &str =
    "The records hold the synced version; `git rutter restore` writes it.";
const REFUSED_HINT: &str = "Your records are merged here and nothing is lost; fix the remote, then run `git rutter sync` again.";
const AGAIN_HINT: &str = "Run `git rutter sync` again.";
const NOT_SENT_HINT: &str = "To send this clone's records there, run `git rutter sync` in that vault with this clone as its remote, or sync both through a bare repository (docs/sync.md).";

fn hints(r: &SyncReport) -> Vec<&'static str> {
    let wanted = [
        (!r.diverged.is_empty(), VERIFY_HINT),
        (
            r.checkout.left_alone.len() > r.checkout.deleted.len(),
            RESTORE_HINT,
        ),
        (!r.checkout.deleted.is_empty(), RESTORE_DELETED_HINT),
        (r.refused.is_some(), REFUSED_HINT),
        (r.gave_up, AGAIN_HINT),
        (r.not_sent.is_some(), NOT_SENT_HINT),
    ];
    wanted
        .into_iter()
        .filter_map(|(on, hint)| on.then_some(hint))
        .collect()
}

fn warnings(ui: &mut Ui, r: &SyncReport) {
    for path in &r.diverged {
        ui.warn(format_args!("git-rutter: {path} was edited after it was committed; the records keep the committed bytes. {VERIFY_HINT}"));
    }
    for (path, why) in &r.checkout.left_alone {
        let hint = match r.checkout.deleted.contains(path) {
            true => RESTORE_DELETED_HINT,
            false => RESTORE_HINT,
        };
        ui.warn(format_args!(
            "git-rutter: left {path} as it is: {why}. {hint}"
        ));
    }
    for problem in &r.unwitnessed {
        ui.warn(format_args!("git-rutter: {}", crate::hint::closed(problem)));
    }
    if let Some(why) = &r.refused {
        ui.warn(format_args!(
            "git-rutter: {} refused the push: {} {REFUSED_HINT}",
            r.remote,
            crate::hint::closed(why)
        ));
    }
    if r.gave_up {
        ui.warn(format_args!(
            "git-rutter: {} kept moving while this sync pushed; everything received is merged here. {AGAIN_HINT}",
            r.remote
        ));
    }
    if let Some(worktree) = &r.not_sent {
        ui.warn(format_args!(
            "git-rutter: {} is a vault with a working tree ({}): its records were taken in here and none were pushed into it, since a push would leave its day files behind its record. {NOT_SENT_HINT}",
            r.remote,
            worktree.display()
        ));
    }
}

fn json(r: &SyncReport) -> serde_json::Value {
    let oid = |o: Option<crate::objectid::ObjectId>| o.map(|o| o.to_string());
    serde_json::json!({
        "remote": r.remote,
        "url": r.url,
        "action": r.action,
        "before": oid(r.before),
        "after": oid(r.after),
        "remote_tip": oid(r.remote_tip),
        "remote_emptied": r.remote_emptied,
        "merges": r.merges.iter().map(|o| o.to_string()).collect::<Vec<_>>(),
        "unrelated": r.unrelated,
        "unioned": r.unioned,
        "split": r.split,
        "received": r.received.entries,
        "sent": r.sent.entries,
        "received_lines": r.received,
        "sent_lines": r.sent,
        "pushed": r.pushed,
        "refused": r.refused,
        "gave_up": r.gave_up,
        "not_sent": r.not_sent,
        "updated": r.checkout.updated,
        "left_alone": r.checkout.left_alone,
        "committed_pending": r.committed_pending,
        "checked": r.checked,
        "purges_taken": r.purges_taken,
        "purges_sent": r.purges_sent,
    })
}

/// `--json` of a sync that refused what the remote sent: `{remote, action: "refused", …}`.
fn refused_json(e: &SyncError) -> serde_json::Value {
    let SyncError::Refused {
        remote,
        tip,
        refusal,
    } = e
    else {
        return serde_json::Value::Null;
    };
    serde_json::json!({
        "remote": remote,
        "action": "refused",
        "remote_tip": tip.map(|t| t.to_string()),
        "refusal": refusal,
        "message": e.to_string(),
    })
}
