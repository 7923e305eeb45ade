//! Opt-in signing (`rutter.sign`) with an SSH key through git's own signer: captures stay
//! unsigned, `git rutter commit` and `verify --ack` sign, a seal signs a quiet history, and
//! `verify` checks signatures with `git verify-commit` (bad and uncheckable ones are findings).

use crate::common;
use common::json::{decode, Verify};
use common::*;
use std::process::Command;

/// A vault with one committed capture and an SSH signing key configured (`rutter.sign` on),
/// or `None` when `ssh-keygen` is missing (CI sets `RUTTER_REQUIRE_SSH_KEYGEN=1` to fail then).
fn signing_vault() -> Option<Env> {
    if Command::new("ssh-keygen").arg("-?").output().is_err() {
        assert!(
            std::env::var_os("RUTTER_REQUIRE_SSH_KEYGEN").is_none(),
            "ssh-keygen is required for the signing tests"
        );
        eprintln!("skipped: no ssh-keygen on PATH");
        return None;
    }
    let env = Env::git_vault();
    let key = env.home.join("id_test");
    let key_s = key.to_str().unwrap();
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "test", "-f", key_s])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let public = std::fs::read_to_string(format!("{key_s}.pub")).unwrap();
    let allowed = env.home.join("allowed_signers");
    std::fs::write(&allowed, format!("test@example.com {public}")).unwrap();
    env.git(&["config", "user.name", "Test User"]);
    env.git(&["config", "user.email", "test@example.com"]);
    env.git(&["config", "gpg.format", "ssh"]);
    env.git(&["config", "user.signingKey", key_s]);
    env.git(&[
        "config",
        "gpg.ssh.allowedSignersFile",
        allowed.to_str().unwrap(),
    ]);
    env.git(&["config", "rutter.sign", "true"]);
    capture(&env, "Signed decision.");
    Some(env)
}

fn capture(env: &Env, summary: &str) {
    let r = env.capture(b"", &["--summary", summary, "--ref", "Notes/a.md"]);
    assert!(r.stderr.contains("committed"), "{}", r.stderr);
}

/// `%G?` of the tip: `G` good, `N` none, `B` bad, …
fn tip_sig(env: &Env) -> String {
    env.git(&["log", "-1", "--format=%G?", "refs/rutter/records"])
        .trim()
        .to_string()
}

fn verify_kinds(env: &Env, args: &[&str]) -> (i32, Vec<String>) {
    let mut all = vec!["verify", "--json"];
    all.extend(args);
    let r = env.rutter(&all);
    (r.code, finding_kinds(&r.stdout))
}

#[test]
fn captures_stay_unsigned_and_commit_seals_the_history() {
    let Some(env) = signing_vault() else { return };
    assert_eq!(tip_sig(&env), "N", "a capture never signs");
    let r = env.rutter(&["commit"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("signed the history with a seal commit"),
        "{}",
        r.stdout
    );
    assert_eq!(tip_sig(&env), "G");
    env.git(&["verify-commit", "refs/rutter/records"]);
    let subject = env.git(&["log", "-1", "--format=%s", "refs/rutter/records"]);
    assert_eq!(subject.trim(), "rutter: seal");
    let again = env.rutter(&["commit"]);
    assert!(
        again.stdout.contains("the tip is signed already"),
        "{}",
        again.stdout
    );
    assert_eq!(verify_kinds(&env, &["--full"]), (0, vec![]));
    // `--no-sign` and a capture after the seal: nothing signed, nothing broken.
    capture(&env, "After the seal.");
    assert_eq!(tip_sig(&env), "N");
    assert!(env
        .rutter(&["commit", "--no-sign"])
        .stdout
        .contains("nothing to commit\n"));
    assert_eq!(tip_sig(&env), "N");
    env.git(&["fsck", "--strict"]);
}

#[test]
fn an_acknowledgement_is_signed() {
    let Some(env) = signing_vault() else { return };
    let day = env.day_files()[0].clone();
    let text = std::fs::read_to_string(&day).unwrap();
    std::fs::write(&day, text.replace("Signed decision.", "Edited decision.")).unwrap();
    let r = env.rutter(&["verify", "--json"]);
    let v: Verify = decode(&r.stdout);
    let id = v.findings[0].id.clone();
    let ack = env.rutter(&["verify", "--ack", &id, "--reason", "typo fixed by hand"]);
    assert_eq!(ack.code, 0, "{}", ack.stderr);
    assert_eq!(tip_sig(&env), "G", "the ack commit is signed");
    assert_eq!(verify_kinds(&env, &[]).0, 0);
}

#[test]
fn a_signature_that_does_not_verify_is_a_finding() {
    let Some(env) = signing_vault() else { return };
    env.rutter(&["commit"]);
    let seal = env
        .git(&["rev-parse", "refs/rutter/records"])
        .trim()
        .to_string();
    // A child of the seal carrying the seal's signature over a different message.
    let raw = env.git(&["cat-file", "commit", &seal]);
    let forged = raw
        .replacen(
            &format!(
                "parent {}",
                env.git(&["rev-parse", &format!("{seal}^")]).trim()
            ),
            &format!("parent {seal}"),
            1,
        )
        .replace("rutter: seal", "rutter: forged");
    let path = env.root().join("forged");
    std::fs::write(&path, forged).unwrap();
    let oid = env.git(&["hash-object", "-t", "commit", "-w", path.to_str().unwrap()]);
    env.git(&["update-ref", "refs/rutter/records", oid.trim(), &seal]);
    assert_eq!(tip_sig(&env), "B", "git itself rejects it");
    let (code, kinds) = verify_kinds(&env, &[]);
    assert_eq!(code, 1);
    assert!(kinds.contains(&"bad-signature".to_string()), "{kinds:?}");
}

#[test]
fn a_signature_git_cannot_check_is_reported_as_such() {
    let Some(env) = signing_vault() else { return };
    env.rutter(&["commit"]);
    env.git(&["config", "--unset", "gpg.ssh.allowedSignersFile"]);
    let (code, kinds) = verify_kinds(&env, &["--full"]);
    assert_eq!(code, 1);
    assert_eq!(kinds, ["signature-unchecked"]);
}

#[test]
fn a_failed_signing_keeps_the_pending_line_for_a_later_commit() {
    let Some(env) = signing_vault() else { return };
    let missing = env.home.join("no-such-key");
    env.git(&["config", "user.signingKey", missing.to_str().unwrap()]);
    let day = env.day_files()[0].clone();
    let text = std::fs::read_to_string(&day).unwrap();
    std::fs::write(&day, text.replace("Signed decision.", "Edited decision.")).unwrap();
    let v: Verify = decode(&env.rutter(&["verify", "--json"]).stdout);
    let finding = v.findings[0].id.clone();
    let r = env.rutter(&["verify", "--ack", &finding, "--reason", "kept"]);
    assert_eq!(r.code, 2, "a failed signing is an error: {}", r.stderr);
    assert!(r.stderr.contains("could not sign"), "{}", r.stderr);
    assert!(env.read("_librarian/verify-acks.jsonl").contains("kept"));
    let r = env.rutter(&["commit", "--no-sign"]);
    assert!(r.stdout.contains("committed 1 entry"), "{}", r.stdout);
    let committed = env.git(&["show", "refs/rutter/records:_librarian/verify-acks.jsonl"]);
    assert!(committed.contains("kept"), "{committed}");
}
