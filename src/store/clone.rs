//! The git side of a clean start on a clone (DESIGN §3 `init`; the steps are
//! `crate::setup::clone`'s): fetching the remote's `refs/rutter/records`, creating the local ref
//! at a checked tip, and starting the reflog and the witness log where a ref has no evidence.

use super::oid::{ToGit, ToId};
use super::{Store, StoreError, RECORDS_REF};
use crate::objectid::ObjectId;

/// What fetching a clone's records found.
#[derive(Debug)]
pub enum CloneFetch {
    /// The repository has no remote a clone came from.
    NoRemote,
    /// The remote holds no records.
    NotThere,
    /// The remote could not be asked (why; nothing was fetched).
    Problem(String),
    /// git's own object checks refused what the remote sent (`(remote, what git said)`).
    RefusedByGit(String, String),
    /// The records were fetched into `refs/remotes/<remote>/rutter/records`, at this tip.
    Fetched(String, ObjectId),
}

impl Store {
    /// The remote a clone came from: `origin`, else the only remote.
    fn clone_remote(&self) -> Option<String> {
        let remotes = self.repo.remotes().ok()?;
        let names: Vec<&str> = remotes.iter().flatten().flatten().collect();
        if names.contains(&"origin") {
            return Some("origin".into());
        }
        (names.len() == 1).then(|| names[0].to_string())
    }

    /// Fetches `refs/rutter/records` from the clone's remote into
    /// `refs/remotes/<remote>/rutter/records` (with git's object checks). Transport is the
    /// `git` CLI, so the user's credentials and ssh config apply; it never prompts. Nothing
    /// local but the remote-tracking ref is written.
    pub fn fetch_clone_records(&self) -> Result<CloneFetch, StoreError> {
        let Some(remote) = self.clone_remote() else {
            return Ok(CloneFetch::NoRemote);
        };
        let tracking = format!("refs/remotes/{remote}/rutter/records");
        let Some(mut git) = super::gitcli::git_in(self.root()) else {
            return Ok(CloneFetch::Problem(format!(
                "git was not found on PATH, so the records of {remote} were not fetched; install git and run `git rutter sync {remote}`"
            )));
        };
        git.args(super::transport::FSCK_OBJECTS)
            .args(super::transport::GIT_REF_LOCK_WAIT)
            .args([
                "fetch",
                "--no-tags",
                "--quiet",
                "--no-write-fetch-head",
                &remote,
            ])
            .arg(format!("+{RECORDS_REF}:{tracking}"));
        // Bounded as a sync's fetch is: `init` holds the capture lock meanwhile.
        let wall = super::transport::bounds(self).wall;
        let out = match super::gitcli::output_within(git, wall) {
            Ok(Some(o)) => o,
            Ok(None) => {
                return Ok(CloneFetch::Problem(format!(
                    "the fetch from {remote} ran longer than {} and was stopped (rutter.syncTimeout); run `git rutter sync {remote}` once the connection is back",
                    crate::clock::show_interval(wall.unwrap_or_default())
                )))
            }
            Err(e) => {
                return Ok(CloneFetch::Problem(format!(
                    "could not run git to fetch from {remote}: {e}"
                )))
            }
        };
        if !out.status.success() && super::transport::fsck_refused(&out.stderr) {
            let said = super::transport::fsck_gist(&out.stderr);
            return Ok(CloneFetch::RefusedByGit(remote, said));
        }
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            if err.contains("couldn't find remote ref") {
                return Ok(CloneFetch::NotThere);
            }
            let first = err.lines().next().unwrap_or("").trim().to_string();
            return Ok(CloneFetch::Problem(format!(
                "could not fetch {RECORDS_REF} from {remote} ({first})"
            )));
        }
        let tip = self.repo.refname_to_id(&tracking)?;
        Ok(CloneFetch::Fetched(remote, tip.to_id()))
    }

    /// Creates `refs/rutter/records` at `tip` (fetched from `remote`, and checked by the
    /// caller), with its reflog, and witnesses it. Returns why the tip could not be witnessed,
    /// if it could not. The caller holds the capture lock.
    pub fn start_ref_at(&self, remote: &str, tip: ObjectId) -> Result<Option<String>, StoreError> {
        self.configure_reflog()?;
        let message = format!("rutter: clone: start from {remote} at {tip}");
        self.repo
            .reference(RECORDS_REF, tip.to_git(), false, &message)?;
        // The witness log starts here; a failure to write it is said now (verify reports it).
        Ok(self.after_commit(tip))
    }

    /// Whether this machine holds no evidence of the ref: no witnessed tip and no reflog entry
    /// (a ref fetched by hand, not yet adopted by `init`).
    pub fn ref_is_unwitnessed(&self) -> Result<bool, StoreError> {
        let witnessed =
            std::fs::symlink_metadata(self.state_dir().join("tips")).is_ok_and(|m| m.len() > 0);
        Ok(!witnessed && self.repo.reflog(RECORDS_REF)?.is_empty())
    }

    /// Starts the reflog and the witness log at the tip when this machine has neither (a clone
    /// whose ref was fetched by hand). A vault that has either keeps what it has: a missing
    /// reflog beside a witness log is evidence, reported by verify, never papered over.
    pub fn seed_evidence_if_fresh(&self) -> Result<Option<(ObjectId, Option<String>)>, StoreError> {
        let Some(tip) = self.tip()? else {
            return Ok(None);
        };
        if !self.ref_is_unwitnessed()? {
            return Ok(None);
        }
        let mut reflog = self.repo.reflog(RECORDS_REF)?;
        let sig = self.signature(crate::clock::now())?;
        let message =
            format!("rutter: init: evidence starts at {tip} (no earlier witness on this machine)");
        reflog.append(tip.to_git(), &sig, Some(&message))?;
        reflog.write()?;
        Ok(Some((tip, self.after_commit(tip))))
    }
}
