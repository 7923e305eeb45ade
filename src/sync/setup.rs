//! `git rutter sync --setup REMOTE`: make a remote the place this vault's records travel to,
//! after checking that it is not shared with other people (spec/sync.md, "Setup").
//!
//! A remote counts as shared when the history it already shows here (its records, fetched now,
//! and the branches of it this clone knows) holds commits whose author email is not the
//! user's. The user may say otherwise (`--force`: those identities are theirs, say another
//! machine's git identity).

use super::{SyncError, SYNC_REMOTE_KEY};
use crate::objectid::ObjectId;
use crate::store::transport;
use crate::store::{Store, StoreError};
use std::collections::BTreeSet;

/// How many commits of each ref the shared check reads (newest first).
const AUTHOR_WALK: usize = 2_000;
/// The identity this tool commits as when the user has none: says nothing about who it is.
const FALLBACK_EMAIL: &str = "rutter@localhost";

/// What `--setup` did.
#[derive(Debug, Default, Clone)]
pub(crate) struct SetupReport {
    pub url: Option<String>,
    /// The fetch refspec was added (false: it was there already).
    pub added_refspec: bool,
    /// Other identities found and accepted with `--force`.
    pub forced_over: Vec<String>,
    /// This vault's writer id (`.git/rutter/machine`).
    pub machine: String,
}

/// Sets `rutter.syncRemote` to `remote` and adds its `refs/rutter/*` fetch refspec, unless the
/// remote looks shared and `force` is false.
pub fn setup_sync(store: &Store, remote: &str, force: bool) -> Result<SetupReport, SyncError> {
    super::known_remote(store, remote)?;
    let mut report = SetupReport {
        url: store.remote_url(remote),
        ..Default::default()
    };
    super::fetch_records(store, remote)?;
    if let Some(tip) = super::tracking_tip(store, remote)? {
        crate::audit::intake::check_tip(store, tip)
            .map_err(|e| super::intake_error(remote, tip, e))?;
    }
    let others = other_authors(store, remote)?;
    if !others.is_empty() && !force {
        return Err(SyncError::LooksShared {
            remote: remote.to_string(),
            others,
        });
    }
    report.forced_over = others;
    if !super::fetches_records(store, remote)? {
        // Replaces a rutter refspec left under another remote name (a renamed remote), else
        // adds one.
        store.replace_local_config(
            &format!("remote.{remote}.fetch"),
            r"^\+refs/rutter/\*:refs/remotes/.*/rutter/\*$",
            &transport::fetch_refspec(remote),
        )?;
        report.added_refspec = true;
    }
    store.set_local_config(SYNC_REMOTE_KEY, remote)?;
    // From now on this vault appends only to its own day files (spec/sync.md).
    report.machine = crate::machine::ensure(store.state_dir()).map_err(StoreError::from)?;
    Ok(report)
}

/// Author emails, other than the user's, of commits the remote shows here: its records (as
/// just fetched) and its branches this clone knows. Sorted, at most a few.
fn other_authors(store: &Store, remote: &str) -> Result<Vec<String>, SyncError> {
    let me = own_emails(store);
    let prefix = format!("refs/remotes/{remote}/");
    let tips = store
        .refs_under(&prefix)?
        .into_iter()
        .filter_map(|(name, oid)| {
            let rest = name.strip_prefix(&prefix).unwrap_or(&name);
            let skip = rest == "HEAD" || (rest.starts_with("rutter/") && rest != "rutter/records");
            (!skip).then_some(oid)
        });
    let mut others = BTreeSet::new();
    for tip in tips.collect::<Vec<ObjectId>>() {
        // A branch may point at a tag or any other object: only commits have authors.
        if store.object_kind(tip)? != Some("commit") {
            continue;
        }
        for oid in store.newest_first(tip, None, AUTHOR_WALK)? {
            let Some(email) = store.commit_info(oid)?.author_email else {
                continue;
            };
            if email != FALLBACK_EMAIL && !me.contains(&email) {
                others.insert(email);
            }
        }
    }
    Ok(others.into_iter().collect())
}

/// Every email git could commit as here, as git picks it: the `GIT_AUTHOR_EMAIL` and
/// `GIT_COMMITTER_EMAIL` variables, `user.email`, `author.email`, `committer.email`, `EMAIL`.
fn own_emails(store: &Store) -> BTreeSet<String> {
    let from_config = ["user.email", "author.email", "committer.email"]
        .into_iter()
        .filter_map(|k| store.config_string(k));
    let from_env = ["GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL", "EMAIL"]
        .into_iter()
        .filter_map(|k| std::env::var(k).ok());
    from_config
        .chain(from_env)
        .map(|e| e.trim().to_lowercase())
        .filter(|e| !e.is_empty())
        .collect()
}
