//! `git rutter sync --setup REMOTE`: make a remote the place this vault's records travel to,
//! after checking that it is not shared with other people (spec/sync.md, "Setup").
//!
//! A remote counts as shared when the history it already shows here (its records, fetched now,
//! and the branches of it this clone knows) holds commits whose author email is not the
//! user's. The user may say otherwise (`--force`: those identities are theirs, say another
//! machine's git identity).

use super::{transport, SyncError, SYNC_REMOTE_KEY};
use crate::store::{Store, StoreError};
use git2::Oid;
use std::collections::BTreeSet;

/// How many commits of each ref the shared check reads (newest first).
const AUTHOR_WALK: usize = 2_000;
/// The identity this tool commits as when the user has none: says nothing about who it is.
const FALLBACK_EMAIL: &str = "rutter@localhost";

/// What `--setup` did.
#[derive(Debug, Default, Clone)]
pub struct SetupReport {
    pub remote: String,
    pub url: Option<String>,
    /// The fetch refspec was added (false: it was there already).
    pub added_refspec: bool,
    /// Other identities found and accepted with `--force`.
    pub forced_over: Vec<String>,
    /// This vault's writer id (`.git/rutter/machine`).
    pub machine: String,
}

impl Store {
    /// Sets `rutter.syncRemote` to `remote` and adds its `refs/rutter/*` fetch refspec, unless
    /// the remote looks shared and `force` is false.
    pub fn setup_sync(&self, remote: &str, force: bool) -> Result<SetupReport, SyncError> {
        self.known_remote(remote)?;
        let mut report = SetupReport {
            remote: remote.to_string(),
            url: transport::shown_url(&self.repo, remote),
            ..Default::default()
        };
        self.fetch_records(remote)?;
        let others = self.other_authors(remote)?;
        if !others.is_empty() && !force {
            return Err(SyncError::Shared(shared_message(remote, &others)));
        }
        report.forced_over = others;
        if !self.fetches_records(remote)? {
            let mut config = self.repo.config()?.open_level(git2::ConfigLevel::Local)?;
            // Replaces a rutter refspec left under another remote name (a renamed remote), else
            // adds one.
            config.set_multivar(
                &format!("remote.{remote}.fetch"),
                r"^\+refs/rutter/\*:refs/remotes/.*/rutter/\*$",
                &transport::fetch_refspec(remote),
            )?;
            report.added_refspec = true;
        }
        let mut config = self.repo.config()?.open_level(git2::ConfigLevel::Local)?;
        config.set_str(SYNC_REMOTE_KEY, remote)?;
        // From now on this vault appends only to its own day files (spec/sync.md).
        report.machine = super::machine::ensure(self.state_dir()).map_err(StoreError::from)?;
        Ok(report)
    }

    /// Author emails, other than the user's, of commits the remote shows here: its records (as
    /// just fetched) and its branches this clone knows. Sorted, at most a few.
    fn other_authors(&self, remote: &str) -> Result<Vec<String>, SyncError> {
        let me = self.own_emails();
        let mut tips: Vec<Oid> = Vec::new();
        let prefix = format!("refs/remotes/{remote}/");
        for r in self.repo.references_glob(&format!("{prefix}*"))? {
            let r = r?;
            if let (Some(oid), Ok(name)) = (r.target(), r.name()) {
                let rest = name.strip_prefix(&prefix).unwrap_or(name);
                if rest == "HEAD" || (rest.starts_with("rutter/") && rest != "rutter/records") {
                    continue;
                }
                tips.push(oid);
            }
        }
        let mut others = BTreeSet::new();
        for tip in tips {
            let mut walk = self.repo.revwalk()?;
            walk.push(tip)?;
            for oid in walk.take(AUTHOR_WALK) {
                let commit = self.repo.find_commit(oid?)?;
                let author = commit.author();
                let Ok(email) = author.email().map(str::to_lowercase) else {
                    continue;
                };
                if email != FALLBACK_EMAIL && !me.contains(&email) {
                    others.insert(email);
                }
            }
        }
        Ok(others.into_iter().collect())
    }
}

impl Store {
    /// Every email git could commit as here, as git picks it: the `GIT_AUTHOR_EMAIL` and
    /// `GIT_COMMITTER_EMAIL` variables, `user.email`, `author.email`, `committer.email`, `EMAIL`.
    fn own_emails(&self) -> BTreeSet<String> {
        let config = self.repo.config().ok();
        let from_config = ["user.email", "author.email", "committer.email"]
            .into_iter()
            .filter_map(|k| crate::store::cmdline::string(config.as_ref(), k));
        let from_env = ["GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL", "EMAIL"]
            .into_iter()
            .filter_map(|k| std::env::var(k).ok());
        from_config
            .chain(from_env)
            .map(|e| e.trim().to_lowercase())
            .filter(|e| !e.is_empty())
            .collect()
    }
}

fn shared_message(remote: &str, others: &[String]) -> String {
    let shown: Vec<&str> = others.iter().take(3).map(String::as_str).collect();
    let more = match others.len().saturating_sub(3) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    format!(
        "the remote {remote} holds commits by other people ({}{more}), so it looks shared: \
         everything sync pushes (your records and copies of the notes they cite) would be \
         readable by them. Use a remote only you can read (`git remote add NAME URL`, then \
         `git rutter sync --setup NAME`); if those identities are all yours (another machine's \
         git identity), run `git rutter sync --setup {remote} --force`",
        shown.join(", ")
    )
}
