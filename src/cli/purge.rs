//! `git rutter purge`: the one audited removal of an entry from the record (spec/purge.md).

use super::{user_error, CommandResult, Exit, Ui};
use crate::clock;
use crate::index::entries::Scope;
use crate::index::Index;
use crate::lock;
use crate::recall::source;
use crate::recorder::purge::{self, PurgeError, Purged, Target};
use crate::recorder::Recorder;
use crate::records::purge::REASON_MAX_CHARS;
use crate::records::text::field_safe;
use crate::store::remap::ExpireError;
use crate::store::Store;
use std::path::PathBuf;

/// Purge an entry: remove its bytes from every commit of the record, with a record of why.
///
/// For what must not stay in the record at all (a secret pasted into a summary): unlike
/// `retract`, which hides an entry and keeps its bytes, purge rewrites the history of
/// refs/rutter/records without the entry's line (and the cited copies only it used), commits a
/// purge record (the entry's id, the SHA-256 of its line, your reason, the old and new tips) to
/// _librarian/purges.jsonl, takes the line out of the working day files, and expires the old
/// objects from this repository. `verify` shows the purge as information; `git rutter sync`
/// carries it to the other clones, each of which checks it against its own copy. It cannot
/// reach backups, or a remote's unreachable objects before its host prunes them.
///
/// Exit status 1 when nothing was purged (no such committed entry, ambiguous, purged already,
/// pending lines or edited day files to deal with first).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The entry's id, as `git rutter log` shows it, or its short form as `recent` shows it.
    #[arg(value_name = "ENTRY-ID", add = clap_complete::engine::ArgValueCompleter::new(super::complete::entry_ids))]
    pub entry: String,
    /// Why it is purged (kept in the purge record, on one line, at most 512 characters).
    #[arg(long, value_name = "TEXT")]
    pub reason: String,
    /// Say what would be removed, and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub fn run(ui: &mut Ui, vault: Option<PathBuf>, args: Args) -> CommandResult {
    super::retract::looks_like_an_id(&args.entry)?;
    let reason = super::retract::reason_of(&args.reason, REASON_MAX_CHARS, "purged")?;
    let vault = super::interactive_vault(ui, vault.as_deref())?;
    let store = Store::open(&vault)?;
    let recorder = Recorder::lock(&store, lock::INTERACTIVE_WAIT)?;
    if !crate::journal::Journal::pending(store.state_dir())?.is_empty() {
        return Err(
            user_error("lines are waiting in the pending journal; nothing was purged.")
                .hinted("Run `git rutter commit` first, then purge."),
        );
    }
    let mut index = Index::open(&vault, false)?;
    source::refresh(&vault, &mut index, Scope::Quick(&[]))?;
    let id = super::retract::whole_id(&index, &args.entry, "purged")?;
    let target = purge::find(&store, &id).map_err(refusal)?;
    for path in &target.files {
        let committed = store.committed(path)?.unwrap_or_default();
        if !store
            .working(path)
            .is_some_and(|w| w.starts_with(&committed))
        {
            return Err(user_error(format!("{path} no longer begins with its committed bytes; nothing was purged."))
                .hinted("`git rutter verify` shows what changed; `git rutter restore` puts the committed file back, then purge."));
        }
    }
    if args.dry_run {
        return dry_run(ui, &target, args.json);
    }
    let now = clock::now();
    let done = (recorder.purge(&target, &reason, now, store.sign_wanted())).map_err(refusal)?;
    drop(recorder);
    let after = settle(&vault, &store, &mut index, true);
    report(ui, &target, &done, &after, args.json)?;
    Ok(Exit::Clean)
}

fn refusal(e: PurgeError) -> super::CommandError {
    match e {
        PurgeError::Store(e) => e.into(),
        PurgeError::Ambiguous(id) => user_error(format!("{}; nothing was purged.", PurgeError::Ambiguous(id.clone())))
            .hinted(format!("`git rutter log {id}` shows which commit added each line, and `git rutter verify --full` names a forged one.")),
        other => user_error(format!("{other}; nothing was purged.")),
    }
}

/// What follows a rewrite, each step reported and none undoing it: the index's record cache
/// read again and compacted, the old objects expired (unless the caller did), and
/// `verify --full` on the new history, which also makes the carried logs verify's baseline.
pub(crate) struct After {
    pub index: Result<(), crate::index::IndexError>,
    pub expired: Result<(), ExpireError>,
    /// The commits `verify --full` checked, or what it said.
    pub verified: Result<usize, Unverified>,
}

/// Why `verify --full` after a purge did not come out clean.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Unverified {
    #[error("{0} finding(s); run `git rutter verify --full`")]
    Findings(usize),
    #[error(transparent)]
    CouldNotRun(#[from] crate::store::StoreError),
}

pub(crate) fn settle(
    vault: &crate::vault::Vault,
    store: &Store,
    index: &mut Index,
    expire: bool,
) -> After {
    let index = source::refresh(vault, index, Scope::Full).and_then(|_| index.compact());
    let expired = match expire {
        true => store.expire_unreachable(true),
        false => Ok(()),
    };
    let opts = crate::audit::Options {
        full: true,
        ..Default::default()
    };
    let verified = match crate::audit::verify(store, opts) {
        Ok(r) if !r.failed() => Ok(r.commits_checked),
        Ok(r) => Err(Unverified::Findings(
            r.findings.iter().filter(|f| f.counts()).count(),
        )),
        Err(e) => Err(e.into()),
    };
    After {
        index,
        expired,
        verified,
    }
}

const NOT_REACHED: &str = "Not reached by this purge: the other clones until they sync (`git rutter sync` carries it, and each checks it against its own copy), backups of this vault, and a remote's own unreachable objects until its host prunes them.";

fn dry_run(ui: &mut Ui, t: &Target, json: bool) -> CommandResult {
    if json {
        ui.print_json(&serde_json::json!({
            "entry": t.entry.id, "day": t.day, "files": t.files, "cited": t.cited, "dry_run": true,
        }))?;
    } else {
        ui.print(&format!(
            "would purge {} ({} [{}]) from {} and every commit of refs/rutter/records that holds it{}; nothing was changed.",
            t.entry.id,
            t.day,
            field_safe(t.entry.project().unwrap_or("")),
            t.files.join(", "),
            match t.cited.len() {
                0 => String::new(),
                n => format!(", with {n} cited cop{} only it used", if n == 1 { "y" } else { "ies" }),
            }
        ))?;
    }
    Ok(Exit::Clean)
}

fn report(ui: &mut Ui, t: &Target, done: &Purged, after: &After, json: bool) -> CommandResult {
    let short = |o: &str| crate::shortid::long(o).chars().take(12).collect::<String>();
    if json {
        let err = |e: Option<&dyn std::fmt::Display>| e.map(|e| e.to_string());
        ui.print_json(&serde_json::json!({
            "entry": t.entry.id, "day": t.day, "files": t.files, "cited": t.cited,
            "commit": done.commit.to_string(), "old_tip": done.purge.old_tip,
            "new_tip": done.purge.new_tip, "rewritten": done.rewritten.changed,
            "working": done.working,
            "index_error": err(after.index.as_ref().err().map(|e| e as _)),
            "expire_error": err(after.expired.as_ref().err().map(|e| e as _)),
            "verify_error": err(after.verified.as_ref().err().map(|e| e as _)),
            "not_reached": NOT_REACHED,
        }))?;
        return Ok(Exit::Clean);
    }
    let mut text = format!(
        "purged {} ({} [{}]): its line is gone from {} commit(s) of refs/rutter/records and from {}",
        t.entry.id,
        t.day,
        field_safe(t.entry.project().unwrap_or("")),
        done.rewritten.changed,
        if done.working.is_empty() { "no working file".to_string() } else { done.working.join(", ") },
    );
    if !t.cited.is_empty() {
        text.push_str(&format!(
            "; {} cited cop{} removed",
            t.cited.len(),
            if t.cited.len() == 1 { "y" } else { "ies" }
        ));
    }
    text.push_str(&format!(
        ".\nrecorded in _librarian/purges.jsonl as {} (old tip {}, rewritten tip {}).\n",
        short(&done.commit.to_string()),
        short(&done.purge.old_tip),
        short(&done.purge.new_tip)
    ));
    match &after.expired {
        Ok(()) => text.push_str("expired the old objects from this repository.\n"),
        Err(e) => ui.warn(format_args!("git-rutter: the old objects could not be expired ({e}); run `git gc --prune=now` in the vault.")),
    }
    match &after.verified {
        Ok(n) => text.push_str(&format!("verify --full: clean ({n} commits checked).\n")),
        Err(e) => ui.warn(format_args!(
            "git-rutter: verify --full after the purge: {e}."
        )),
    }
    if let Err(e) = &after.index {
        ui.warn(format_args!(
            "git-rutter: the index could not be refreshed ({e}); run `git rutter reindex --force`."
        ));
    }
    if let Some(w) = &done.unwitnessed {
        ui.warn(format_args!("git-rutter: {w}."));
    }
    text.push_str(NOT_REACHED);
    ui.print(&text)?;
    Ok(Exit::Clean)
}
