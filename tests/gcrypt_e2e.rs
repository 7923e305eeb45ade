//! Sync through a remote its host cannot read (docs/sync.md, "An encrypted remote"):
//! git-remote-gcrypt's `gcrypt::` URLs, a GPG key made in a temporary `GNUPGHOME`, two clones,
//! the real binary, `git` and `gpg`. Both converge, `verify` is clean on both, and no summary's
//! text is in the remote's objects. CI sets `RUTTER_REQUIRE_GCRYPT=1` (and installs
//! git-remote-gcrypt and gnupg), so the test cannot skip there.

use crate::common;
use common::json::{decode, LogRow, Recent, Status};
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether `program` runs here.
fn found(program: &str, arg: &str) -> bool {
    Command::new(program)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The encrypted remote's world: a hermetic environment with its own `GNUPGHOME` and a key.
struct Crypt {
    env: Env,
    gnupg: PathBuf,
    fingerprint: String,
}

impl Crypt {
    fn new() -> Crypt {
        let env = Env::bare();
        let gnupg = env.root().join("gnupg");
        std::fs::create_dir(&gnupg).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&gnupg, std::fs::Permissions::from_mode(0o700)).unwrap();
        let mut c = Crypt {
            env,
            gnupg,
            fingerprint: String::new(),
        };
        let uid = "Rutter Test <test@example.com>";
        c.run(
            "gpg",
            None,
            &[
                "--batch",
                "--passphrase",
                "",
                "--quick-gen-key",
                uid,
                "ed25519",
                "sign",
                "never",
            ],
        );
        let listed = c.run("gpg", None, &["--list-keys", "--with-colons"]);
        c.fingerprint = listed
            .lines()
            .find_map(|l| {
                l.strip_prefix("fpr:")
                    .map(|r| r.trim_matches(':').to_string())
            })
            .expect("a fingerprint");
        let fpr = c.fingerprint.clone();
        c.run(
            "gpg",
            None,
            &[
                "--batch",
                "--passphrase",
                "",
                "--quick-add-key",
                &fpr,
                "cv25519",
                "encr",
                "never",
            ],
        );
        c
    }

    fn command(&self, program: &str, dir: Option<&Path>) -> Command {
        let mut cmd = self.env.cmd_for(program);
        cmd.env("GNUPGHOME", &self.gnupg);
        if let Some(d) = dir {
            cmd.env("LIBRARIAN_VAULT_PATH", d).current_dir(d);
        }
        cmd
    }

    fn run(&self, program: &str, dir: Option<&Path>, args: &[&str]) -> String {
        let r = run_with_stdin(self.command(program, dir).args(args), b"");
        assert_eq!(r.code, 0, "{program} {args:?}: {}{}", r.stdout, r.stderr);
        r.stdout
    }

    fn git(&self, dir: &Path, args: &[&str]) -> String {
        self.run("git", Some(dir), args)
    }

    fn rutter(&self, dir: &Path, args: &[&str]) -> Run {
        run_with_stdin(self.command(BIN, Some(dir)).args(args), b"")
    }

    /// Every object of the bare repository `remote`, decompressed, as text.
    fn objects(&self, remote: &Path) -> String {
        let out = self
            .command("git", None)
            .arg("--git-dir")
            .arg(remote)
            .args(["cat-file", "--batch-all-objects", "--batch"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn summaries(&self, dir: &Path) -> Vec<String> {
        let r = self.rutter(dir, &["recent", "--all", "--json"]);
        let recent: Recent = decode(&r.stdout);
        let mut out: Vec<String> = recent.summaries().into_iter().map(String::from).collect();
        out.sort();
        out
    }
}

impl Drop for Crypt {
    fn drop(&mut self) {
        let _ = self
            .command("gpgconf", None)
            .args(["--kill", "gpg-agent"])
            .output();
    }
}

#[test]
fn two_clones_sync_through_an_encrypted_remote_the_host_cannot_read() {
    let ready = found("git-remote-gcrypt", "--version") || found("which", "git-remote-gcrypt");
    if !(ready && found("gpg", "--version")) {
        assert!(
            std::env::var_os("RUTTER_REQUIRE_GCRYPT").is_none(),
            "git-remote-gcrypt and gpg are required (RUTTER_REQUIRE_GCRYPT is set)"
        );
        eprintln!("skipped: git-remote-gcrypt or gpg is not installed");
        return;
    }
    let c = Crypt::new();
    let root = c.env.root();
    let remote = root.join("remote.git");
    let url = format!("gcrypt::{}", remote.display());
    c.run(
        "git",
        None,
        &["init", "-q", "--bare", remote.to_str().unwrap()],
    );
    let a = root.join("a");
    std::fs::create_dir(&a).unwrap();
    std::fs::write(a.join("zebra.md"), "# Zebras\n").unwrap();
    c.git(&a, &["init", "-q", "-b", "main"]);
    c.git(&a, &["add", "zebra.md"]);
    c.git(&a, &["commit", "-qm", "notes"]);
    c.git(&a, &["remote", "add", "crypt", &url]);
    c.git(
        &a,
        &["config", "remote.crypt.gcrypt-participants", &c.fingerprint],
    );
    c.git(&a, &["push", "-q", "crypt", "main"]);
    assert_eq!(c.rutter(&a, &["init"]).code, 0);
    let setup = c.rutter(&a, &["sync", "--setup", "crypt"]);
    assert_eq!(setup.code, 0, "{}{}", setup.stdout, setup.stderr);
    assert!(!setup.stderr.contains("not encrypted"), "{}", setup.stderr);
    let r = c.rutter(
        &a,
        &[
            "capture",
            "--summary",
            "Moved the zebra herd to the north pasture.",
            "--ref",
            "zebra.md",
        ],
    );
    assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
    let s = c.rutter(&a, &["sync"]);
    assert_eq!(s.code, 0, "{}{}", s.stdout, s.stderr);

    // A second machine clones through the encrypted remote.
    let b = root.join("b");
    c.run("git", None, &["clone", "-q", &url, b.to_str().unwrap()]);
    c.git(
        &b,
        &[
            "config",
            "remote.origin.gcrypt-participants",
            &c.fingerprint,
        ],
    );
    let init = c.rutter(&b, &["init"]);
    assert_eq!(init.code, 0, "{}{}", init.stdout, init.stderr);
    assert_eq!(c.rutter(&b, &["sync", "--setup", "origin"]).code, 0);
    let r = c.rutter(
        &b,
        &[
            "capture",
            "--summary",
            "Agreed on the zebra fences.",
            "--session",
            "B",
        ],
    );
    assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
    assert_eq!(c.rutter(&b, &["sync"]).code, 0);
    assert_eq!(c.rutter(&a, &["sync"]).code, 0);

    let want = [
        "Agreed on the zebra fences.",
        "Moved the zebra herd to the north pasture.",
    ];
    for dir in [&a, &b] {
        assert_eq!(c.summaries(dir), want, "{dir:?}");
        let v = c.rutter(dir, &["verify", "--full"]);
        assert_eq!(v.code, 0, "verify in {dir:?}: {}{}", v.stdout, v.stderr);
        let s = c.rutter(dir, &["status", "--json"]);
        let j: Status = decode(&s.stdout);
        assert_eq!(j.sync().exposure, "encrypted", "{j:#?}");
    }
    assert_eq!(
        c.git(&a, &["rev-parse", "refs/rutter/records^{tree}"]),
        c.git(&b, &["rev-parse", "refs/rutter/records^{tree}"])
    );
    // The host holds ciphertext only: no summary, no cited note's text.
    let objects = c.objects(&remote);
    assert!(!objects.is_empty(), "the remote holds objects");
    for text in ["zebra", "Zebras", "north pasture", "rutter:entry"] {
        assert!(
            !objects.contains(text),
            "{text:?} is readable in the remote"
        );
    }
    // The status line says so.
    let text = c.rutter(&a, &["status"]).stdout;
    assert!(text.contains("encrypted (gcrypt)"), "{text}");

    // A purge crosses the encrypted remote too (spec/purge.md): A purges B's entry, sends it,
    // and B takes it, checked against its own copy.
    let log = c.rutter(&a, &["log", "--grep", "fences", "--json"]);
    let rows: Vec<LogRow> = decode(&log.stdout);
    let id = rows[0].id.clone();
    let p = c.rutter(&a, &["purge", &id, "--reason", "not for the record"]);
    assert_eq!(p.code, 0, "{}{}", p.stdout, p.stderr);
    let sent = c.rutter(&a, &["sync"]);
    assert_eq!(sent.code, 0, "{}{}", sent.stdout, sent.stderr);
    assert!(sent.stdout.contains("Sent the purge"), "{}", sent.stdout);
    let took = c.rutter(&b, &["sync"]);
    assert_eq!(took.code, 0, "{}{}", took.stdout, took.stderr);
    assert!(
        took.stdout.contains("Took the remote's purge"),
        "{}",
        took.stdout
    );
    for dir in [&a, &b] {
        let got = c.summaries(dir);
        assert!(!got.iter().any(|s| s.contains("fences")), "{got:?}");
        assert!(got.iter().any(|s| s.starts_with("purged on ")), "{got:?}");
        let v = c.rutter(dir, &["verify", "--full"]);
        assert_eq!(v.code, 0, "verify in {dir:?}: {}{}", v.stdout, v.stderr);
        // Another sync fetches nothing old back: no object of the clone holds the line.
        assert_eq!(c.rutter(dir, &["sync"]).code, 0);
        let objects = c
            .command("git", Some(dir))
            .args(["cat-file", "--batch-all-objects", "--batch"])
            .output()
            .unwrap();
        let objects = String::from_utf8_lossy(&objects.stdout);
        assert!(!objects.contains("zebra fences"), "in {dir:?}");
    }
}
