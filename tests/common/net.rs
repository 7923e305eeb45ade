//! Two machines and a bare remote for the sync tests (`tests/sync_e2e.rs`,
//! `tests/auto_sync_e2e.rs`): a notes repository pushed to a bare remote, clones in separate
//! vault folders, the real binary and the real `git`.

use super::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A bare remote and the environment its clones share.
pub struct Net {
    pub env: Env,
    pub remote: PathBuf,
}

impl Net {
    /// A notes repository pushed to a bare remote; the first machine (`a`) inits, sets the
    /// remote up for sync and pushes its (empty) record, as a user would.
    pub fn new() -> (Net, PathBuf) {
        let net = Net::notes_only();
        let a = net.clone_of("a");
        let r = net.rut(&a, &["init"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let r = net.rut(&a, &["sync", "--setup", "origin"]);
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
        (net, a)
    }

    /// A notes repository pushed to a bare remote; no records anywhere yet.
    pub fn notes_only() -> Net {
        let env = Env::bare();
        env.write("Notes/a.md", NOTE_A);
        env.git(&["init", "-q", "-b", "main"]);
        env.git(&["add", "Notes"]);
        env.git(&["commit", "-qm", "notes"]);
        let remote = env.root().join("remote.git");
        env.git(&["clone", "-q", "--bare", ".", remote.to_str().unwrap()]);
        Net { env, remote }
    }

    /// A second machine: a clone that inits (starting from the remote's records) and sets up
    /// sync.
    pub fn machine(&self, name: &str) -> PathBuf {
        let dir = self.clone_of(name);
        let r = self.rut(&dir, &["init"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(
            r.stdout
                .contains("Started refs/rutter/records at the records fetched from origin"),
            "{}",
            r.stdout
        );
        let r = self.rut(&dir, &["sync", "--setup", "origin"]);
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
        dir
    }

    pub fn clone_of(&self, name: &str) -> PathBuf {
        let dir = self.env.root().join(name);
        self.env.git(&[
            "clone",
            "-q",
            self.remote.to_str().unwrap(),
            dir.to_str().unwrap(),
        ]);
        dir
    }

    /// The binary with the hermetic environment, vault `dir`.
    pub fn cmd(&self, dir: &Path) -> Command {
        let mut c = self.env.cmd();
        c.env("LIBRARIAN_VAULT_PATH", dir).current_dir(dir);
        c
    }

    pub fn rut(&self, dir: &Path, args: &[&str]) -> Run {
        run_with_stdin(self.cmd(dir).args(args), b"")
    }

    /// A capture at the pinned time `ts`.
    pub fn capture(&self, dir: &Path, ts: &str, summary: &str) -> Run {
        let mut c = self.cmd(dir);
        c.env("RUTTER_TIMESTAMP", ts)
            .args(["capture", "--summary", summary, "--session", "S"]);
        let r = run_with_stdin(&mut c, b"");
        assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
        r
    }

    /// A capture that gives up on the capture lock after 50 ms (it then journals its line).
    pub fn capture_without_waiting(
        &self,
        dir: &Path,
        ts: &str,
        summary: &str,
        session: &str,
    ) -> Run {
        let mut c = self.cmd(dir);
        c.env("RUTTER_TIMESTAMP", ts)
            .env("RUTTER_LOCK_WAIT_MS", "50")
            .args(["capture", "--summary", summary, "--session", session]);
        let r = run_with_stdin(&mut c, b"");
        assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
        r
    }

    /// Installs `script` as the remote's `pre-receive` hook; returns its path.
    pub fn pre_receive(&self, script: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let hook = self.remote.join("hooks/pre-receive");
        std::fs::write(&hook, script).unwrap();
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
        hook
    }

    /// `git rutter sync` in `dir`, started and not waited for (its output piped).
    pub fn spawn_sync(&self, dir: &Path) -> std::process::Child {
        self.cmd(dir)
            .arg("sync")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// A pre-receive hook that, once a push reaches the remote, leaves a mark and then runs
    /// `then` (`sleep 2`, `exec sleep 60`): the hook's path and the mark's.
    pub fn slow_push(&self, then: &str) -> (PathBuf, PathBuf) {
        let mark = self.env.root().join("pushing");
        let hook = self.pre_receive(&format!(
            "#!/bin/sh\ncat >/dev/null\ntouch '{}'\n{then}\n",
            mark.display()
        ));
        (hook, mark)
    }

    /// Waits (at most 20 s) until a push has reached the hook of [`Net::slow_push`].
    pub fn wait_for_push(mark: &Path) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !mark.exists() {
            assert!(
                std::time::Instant::now() < deadline,
                "no push reached the remote"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Whether some process holds `dir`'s capture lock (`flock -n` fails while one does).
    pub fn lock_held(&self, dir: &Path) -> bool {
        !Command::new("flock")
            .arg("-n")
            .arg(dir.join(".git/rutter/lock"))
            .arg("true")
            .status()
            .unwrap()
            .success()
    }

    pub fn sync(&self, dir: &Path) -> Run {
        let r = self.rut(dir, &["sync"]);
        assert_eq!(r.code, 0, "sync in {dir:?}: {}{}", r.stdout, r.stderr);
        r
    }

    /// `sync` in `dir` with the fail point `point` armed (its exit is the caller's to judge).
    pub fn sync_failing_at(&self, dir: &Path, point: &str) -> Run {
        run_with_stdin(
            self.cmd(dir).env("RUTTER_FAILPOINTS", point).arg("sync"),
            b"",
        )
    }

    pub fn git(&self, dir: &Path, args: &[&str]) -> String {
        self.env.git_in(dir, args)
    }

    pub fn tree(&self, dir: &Path) -> String {
        self.git(dir, &["rev-parse", "refs/rutter/records^{tree}"])
    }

    /// Both clones hold the same ref tree and the same record files, equal to what is
    /// committed; every entry of `want` is there exactly once, nothing else; verify is clean.
    pub fn converged(&self, dirs: &[&Path], want: &[&str]) {
        let first = self.tree(dirs[0]);
        for dir in dirs {
            assert_eq!(self.tree(dir), first, "ref trees differ in {dir:?}");
            assert_eq!(
                record_files(dir),
                record_files(dirs[0]),
                "record files differ in {dir:?}"
            );
            for (path, text) in record_files(dir) {
                let committed = self.git(
                    dir,
                    &["show", &format!("refs/rutter/records:{}", in_ref(&path))],
                );
                assert_eq!(
                    text, committed,
                    "{path} in {dir:?} is not what is committed"
                );
            }
            let mut got = summaries(dir);
            got.sort();
            let mut expected: Vec<String> = want.iter().map(|s| s.to_string()).collect();
            expected.sort();
            assert_eq!(got, expected, "entries in {dir:?}");
            let v = self.rut(dir, &["verify", "--full"]);
            assert_eq!(v.code, 0, "verify in {dir:?}: {}{}", v.stdout, v.stderr);
        }
    }
}

/// Every file under `_librarian/` (the acknowledgements log aside), path → text.
pub fn record_files(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.join("_librarian")];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if !e.file_name().to_string_lossy().starts_with('.') {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().to_string();
                out.insert(rel, std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    out
}

/// The summaries of every entry line in the working day files.
pub fn summaries(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for text in record_files(dir)
        .into_iter()
        .filter(|(p, _)| p.starts_with("_librarian/sessions/"))
        .map(|(_, t)| t)
    {
        for l in text.lines() {
            if let Some(at) = l.rfind("<!-- rutter:entry ") {
                let json = &l[at + 18..l.len() - 4];
                let v: serde_json::Value = serde_json::from_str(json).unwrap();
                out.push(v["summary"].as_str().unwrap().to_string());
            }
        }
    }
    out
}
