//! A clean start on a clone (DESIGN §3 `init`): a clone does not bring `refs/rutter/records`
//! along, so `init` fetches it from the remote when the remote has it, and starts the ref's
//! reflog and the tip witness log at the tip the clone begins from, so `verify` has evidence
//! from then on and a fresh clone verifies clean.

use super::{Store, StoreError, RECORDS_REF};
use git2::Oid;

fn refusal(rule: String) -> super::intake::Refusal {
    super::intake::Refusal {
        commit: None,
        path: None,
        kind: None,
        rule,
    }
}

/// How a clone was started.
#[derive(Debug, Default, Clone)]
pub struct CloneStart {
    /// `(remote, tip)` when the records were fetched.
    pub fetched: Option<(String, Oid)>,
    /// Why they could not be fetched, when the remote could not be asked.
    pub problem: Option<String>,
    /// The reflog and witness log were started at this tip.
    pub seeded: Option<Oid>,
    /// Why the starting tip could not be witnessed in `.git/rutter/tips`, when it could not.
    pub unwitnessed: Option<String>,
    /// The remote's records were refused (`(remote, tip, why)`): no ref was made.
    pub refused: Option<(String, Option<Oid>, super::intake::Refusal)>,
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
    /// `refs/remotes/<remote>/rutter/records` and creates the local ref there, when the local
    /// ref is missing and the remote has one. Transport is the `git` CLI, so the user's
    /// credentials and ssh config apply; it never prompts. The caller holds the capture lock
    /// and has turned the reflog on.
    pub fn fetch_records_if_missing(&self) -> Result<CloneStart, StoreError> {
        let mut start = CloneStart::default();
        if self.tip()?.is_some() {
            return Ok(start);
        }
        let Some(remote) = self.clone_remote() else {
            return Ok(start);
        };
        let tracking = format!("refs/remotes/{remote}/rutter/records");
        let Some(mut git) = super::gitcli::git_in(self.root()) else {
            start.problem = Some(format!(
                "git was not found on PATH, so the records of {remote} were not fetched; install git and run `git rutter sync {remote}`"
            ));
            return Ok(start);
        };
        let out = git
            .args(super::transport::FSCK_OBJECTS)
            .args([
                "fetch",
                "--no-tags",
                "--quiet",
                "--no-write-fetch-head",
                &remote,
            ])
            .arg(format!("+{RECORDS_REF}:{tracking}"))
            .output();
        let out = match out {
            Ok(o) => o,
            Err(e) => {
                start.problem = Some(format!("could not run git to fetch from {remote}: {e}"));
                return Ok(start);
            }
        };
        if !out.status.success() && super::transport::fsck_refused(&out.stderr) {
            let rule = format!(
                "git's own object checks (fetch.fsckObjects) refused what it sent: {}",
                super::transport::fsck_gist(&out.stderr)
            );
            start.refused = Some((remote, None, refusal(rule)));
            return Ok(start);
        }
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            if !err.contains("couldn't find remote ref") {
                let first = err.lines().next().unwrap_or("").trim().to_string();
                start.problem = Some(format!(
                    "could not fetch {RECORDS_REF} from {remote} ({first})"
                ));
            }
            return Ok(start);
        }
        let tip = self.repo.refname_to_id(&tracking)?;
        // What the remote holds is input: the clone starts from it only when every commit
        // passes the audit's rules (spec/ref-layout.md, "`init`").
        match self.check_incoming(tip, None) {
            Ok(_) => {}
            Err(super::intake::IntakeError::Refused(why)) => {
                start.refused = Some((remote, Some(tip), why));
                return Ok(start);
            }
            Err(super::intake::IntakeError::Store(e)) => return Err(e),
        }
        self.configure_reflog()?;
        let message = format!("rutter: clone: start from {remote} at {tip}");
        self.repo.reference(RECORDS_REF, tip, false, &message)?;
        // The witness log starts here; a failure to write it is said now (verify reports it).
        start.unwitnessed = self.after_commit(tip);
        start.fetched = Some((remote, tip));
        start.seeded = Some(tip);
        Ok(start)
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
    pub fn seed_evidence_if_fresh(&self) -> Result<Option<(Oid, Option<String>)>, StoreError> {
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
        reflog.append(tip, &sig, Some(&message))?;
        reflog.write()?;
        Ok(Some((tip, self.after_commit(tip))))
    }
}
