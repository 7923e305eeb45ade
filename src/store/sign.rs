//! Opt-in signing of record commits (`rutter.sign`, DESIGN §6): a commit is written by git's own
//! signer (`git commit-tree -S`, so `gpg.format`, `user.signingKey` and `gpg.program` apply as
//! they do for `git commit -S`), and a signed commit is checked by `git verify-commit`.
//!
//! Captures never sign (no passphrase or touch prompt after every turn): `git rutter commit`,
//! `verify --ack` and seals do.

use super::oid::ToGit;
use super::{Store, StoreError};
use crate::objectid::ObjectId;
use git2::{Commit, Signature};
use std::io::Write;
use std::process::{Command, Stdio};

/// The git config key that turns signing on.
pub(crate) const SIGN_KEY: &str = "rutter.sign";

/// What `git verify-commit` said about a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SigCheck {
    /// No `gpgsig` header.
    Unsigned,
    Good,
    /// Signed, but the signature does not verify (git's message).
    Bad(String),
    /// Signed, but git could not check it here: no `git`, an unknown key, no allowed-signers
    /// file (git's message).
    Unchecked(String),
}

/// Why a signed commit could not be written.
#[derive(Debug, thiserror::Error)]
pub enum SignError {
    #[error("cannot run git to sign ({0}); install git or set `git config rutter.sign false`")]
    NoGit(std::io::Error),
    #[error("git could not sign the commit: {0}")]
    Failed(String),
}

impl Store {
    /// Whether `rutter.sign` is set (default false).
    /// `rutter.sign` as set, when git cannot read it as a boolean (`maybe`): commits are then
    /// not signed, and `status` says why.
    pub(crate) fn sign_setting_invalid(&self) -> Option<String> {
        let config = self.repo.config().ok()?;
        let raw = config.get_string(SIGN_KEY).ok()?;
        config.get_bool(SIGN_KEY).is_err().then_some(raw)
    }

    pub(crate) fn sign_wanted(&self) -> bool {
        super::cmdline::boolean(self.repo.config().ok().as_ref(), SIGN_KEY).unwrap_or(false)
    }

    /// Writes a signed commit through `git commit-tree -S` with exactly this author, committer
    /// and message; the ref is not moved.
    pub(crate) fn commit_signed(
        &self,
        sig: &Signature<'_>,
        message: &str,
        tree: ObjectId,
        parents: &[ObjectId],
    ) -> Result<ObjectId, StoreError> {
        let mut cmd = git_command()?;
        cmd.arg("--git-dir")
            .arg(self.repo.path())
            .args(["commit-tree", "-S", "-F", "-"])
            .arg(tree.to_string());
        for p in parents {
            cmd.arg("-p").arg(p.to_string());
        }
        let (name, email) = (sig.name().unwrap_or("rutter"), sig.email().unwrap_or(""));
        let date = git_date(sig);
        for role in ["AUTHOR", "COMMITTER"] {
            cmd.env(format!("GIT_{role}_NAME"), name)
                .env(format!("GIT_{role}_EMAIL"), email)
                .env(format!("GIT_{role}_DATE"), &date);
        }
        let out = run_with_input(cmd, message.as_bytes()).map_err(SignError::NoGit)?;
        let text = String::from_utf8_lossy(&out.stdout);
        match (out.status.success(), ObjectId::from_hex(text.trim())) {
            (true, Ok(oid)) => Ok(oid),
            _ => Err(SignError::Failed(conclusion(&out.stderr)).into()),
        }
    }

    /// Checks the signature of commit `id` with `git verify-commit`, when it has one.
    pub(crate) fn check_signature(&self, id: ObjectId) -> SigCheck {
        let commit = match self.repo.find_commit(id.to_git()) {
            Ok(c) => c,
            Err(e) => {
                return SigCheck::Unchecked(format!("the commit cannot be read: {}", e.message()))
            }
        };
        if !is_signed(&commit) {
            return SigCheck::Unsigned;
        }
        let Ok(mut cmd) = git_command() else {
            return SigCheck::Unchecked("git was not found on PATH".to_string());
        };
        cmd.arg("--git-dir")
            .arg(self.repo.path())
            .args(["verify-commit", &commit.id().to_string()]);
        match run_with_input(cmd, b"") {
            Err(e) => SigCheck::Unchecked(format!("cannot run git verify-commit: {e}")),
            Ok(out) if out.status.success() => SigCheck::Good,
            Ok(out) => {
                let why = conclusion(&out.stderr);
                if cannot_check(&String::from_utf8_lossy(&out.stderr)) {
                    SigCheck::Unchecked(why)
                } else {
                    SigCheck::Bad(why)
                }
            }
        }
    }
}

/// Whether `commit` carries a signature header (checked or not).
pub(crate) fn is_signed(commit: &Commit<'_>) -> bool {
    ["gpgsig", "gpgsig-sha256"]
        .iter()
        .any(|h| commit.header_field_bytes(*h).is_ok())
}

/// git's messages for a signature it could not check at all (as opposed to a bad one).
fn cannot_check(stderr: &str) -> bool {
    [
        "allowedSignersFile",
        "No public key",
        "Can't check signature",
        "No principal matched",
        "cannot run",
    ]
    .iter()
    .any(|m| stderr.contains(m))
}

/// `<seconds> <±hhmm>`, git's internal date format.
fn git_date(sig: &Signature<'_>) -> String {
    let when = sig.when();
    let offset = when.offset_minutes();
    let sign = if offset < 0 { '-' } else { '+' };
    let abs = offset.unsigned_abs();
    format!("{} {sign}{:02}{:02}", when.seconds(), abs / 60, abs % 60)
}

/// `git` by its absolute path (see [`super::gitcli`]); stdin is piped by [`run_with_input`].
fn git_command() -> Result<Command, SignError> {
    super::gitcli::git().ok_or_else(|| {
        SignError::NoGit(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "git was not found on PATH",
        ))
    })
}

/// Runs `cmd` with `input` on stdin, capturing stdout and stderr.
fn run_with_input(mut cmd: Command, input: &[u8]) -> std::io::Result<std::process::Output> {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(input)?;
    }
    child.wait_with_output()
}

/// The last non-empty line of git's stderr (its conclusion), or a placeholder.
fn conclusion(stderr: &[u8]) -> String {
    String::from_utf8_lossy(stderr)
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("no message from git")
        .to_string()
}
