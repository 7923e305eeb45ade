//! A hermetic environment for end-to-end tests: a temp HOME, no system git config, a real git
//! vault, the real binary and the real `git`.
#![allow(dead_code)]

pub mod decoded;
pub mod json;
pub mod net;
pub mod snap;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_git-rutter");

pub struct Env {
    pub tmp: tempfile::TempDir,
    pub home: PathBuf,
    pub vault: PathBuf,
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

pub const NOTE_A: &str = "# Alpha\n\nThe alpha note.\n";
pub const NOTE_B: &str = "# Beta\n\nThe beta note.\n";

impl Env {
    /// A temp HOME and an empty vault directory (not yet a repository), in a hermetic process
    /// ([`snap::hermetic`]).
    pub fn bare() -> Env {
        snap::hermetic();
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let home = root.join("home");
        let vault = root.join("vault");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&vault).unwrap();
        Env { tmp, home, vault }
    }

    /// A vault with two committed notes, initialised with `git rutter init`.
    pub fn git_vault() -> Env {
        let env = Env::bare();
        env.write("Notes/a.md", NOTE_A);
        env.write("Notes/b.md", NOTE_B);
        env.git(&["init", "-q", "-b", "main"]);
        env.git(&["add", "Notes"]);
        env.git(&["commit", "-qm", "notes"]);
        let r = env.rutter(&["init"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        env
    }

    pub fn root(&self) -> PathBuf {
        self.tmp.path().canonicalize().unwrap()
    }

    pub fn write(&self, rel: &str, text: &str) {
        let p = self.vault.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.vault.join(rel)).unwrap_or_default()
    }

    fn base(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_DATA_HOME", self.home.join(".local/share"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("TZ", "UTC")
            .env("GIT_AUTHOR_NAME", "Test User")
            .env("GIT_AUTHOR_EMAIL", "test@example.com")
            .env("GIT_COMMITTER_NAME", "Test User")
            .env("GIT_COMMITTER_EMAIL", "test@example.com")
            .current_dir(&self.vault)
            .stdin(Stdio::null());
        c
    }

    /// `git` in the vault.
    pub fn git(&self, args: &[&str]) -> String {
        let out = self.base("git").args(args).output().unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `git ARGS` in the vault with the hermetic environment (vault in LIBRARIAN_VAULT_PATH, as
    /// hooks see it) plus `extra` variables; may fail.
    pub fn git_with(&self, args: &[&str], extra: &[(&str, &str)]) -> Run {
        let mut c = self.base("git");
        c.env("LIBRARIAN_VAULT_PATH", &self.vault)
            .envs(extra.iter().copied())
            .args(args);
        run_with_stdin(&mut c, b"")
    }

    /// The bytes of the vault-relative `rel` at the tip of refs/rutter/records, as `git show`
    /// prints them (a day file from its year folder, spec/ref-layout.md).
    pub fn committed(&self, rel: &str) -> String {
        self.git(&["show", &format!("refs/rutter/records:{}", in_ref(rel))])
    }

    /// The vault-relative path of the first day file.
    pub fn first_day(&self) -> String {
        let name = self.day_files()[0]
            .file_name()
            .unwrap()
            .to_string_lossy()
            .to_string();
        format!("_librarian/sessions/{name}")
    }

    /// `git-rutter --vault <vault> ARGS`.
    pub fn rutter(&self, args: &[&str]) -> Run {
        self.base(BIN)
            .arg("--vault")
            .arg(&self.vault)
            .args(args)
            .output()
            .unwrap()
            .into()
    }

    /// `git-rutter ARGS` run in `dir` with the hermetic environment and no vault given: it is
    /// found as an interactive command finds it (current repository, git config).
    pub fn rutter_in(&self, dir: &Path, args: &[&str]) -> Run {
        let mut c = self.base(BIN);
        c.current_dir(dir).args(args);
        run_with_stdin(&mut c, b"")
    }

    /// `git ARGS` in `dir` with the hermetic environment; must succeed.
    pub fn git_in(&self, dir: &Path, args: &[&str]) -> String {
        let out = self
            .base("git")
            .current_dir(dir)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A command for the binary with the hermetic environment, vault in LIBRARIAN_VAULT_PATH.
    pub fn cmd(&self) -> Command {
        self.cmd_for(BIN)
    }

    /// `program` with the environment of [`Env::cmd`].
    pub fn cmd_for(&self, program: &str) -> Command {
        let mut c = self.base(program);
        c.env("LIBRARIAN_VAULT_PATH", &self.vault);
        c
    }

    /// Runs `capture` with `stdin`, vault from LIBRARIAN_VAULT_PATH.
    pub fn capture(&self, stdin: &[u8], extra: &[&str]) -> Run {
        run_with_stdin(self.cmd().arg("capture").args(extra), stdin)
    }

    /// A manual capture at the pinned time `ts` (RUTTER_TIMESTAMP, honoured in debug builds) in
    /// session `S`, citing each of `refs`.
    pub fn capture_at(&self, ts: &str, summary: &str, refs: &[&str]) -> Run {
        let mut c = self.cmd();
        c.env("RUTTER_TIMESTAMP", ts)
            .args(["capture", "--summary", summary, "--session", "S"]);
        for r in refs {
            c.args(["--ref", r]);
        }
        run_with_stdin(&mut c, b"")
    }

    /// Writes a Claude Code transcript whose last assistant message carries `directive` and
    /// returns a Stop payload for it.
    pub fn transcript_payload(
        &self,
        name: &str,
        session: &str,
        directive: &serde_json::Value,
    ) -> Vec<u8> {
        let dir = self.root().join("transcripts");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{name}.jsonl"));
        let user =
            serde_json::json!({"type":"user","message":{"role":"user","content":"please decide"}});
        let text = format!("Done.\n\n<!-- librarian-session {directive} -->");
        let asst = serde_json::json!({"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":text}]}});
        std::fs::write(&path, format!("{user}\n{asst}\n")).unwrap();
        let cwd = self.root().join("code/myproj");
        std::fs::create_dir_all(&cwd).unwrap();
        serde_json::json!({"session_id":session,"transcript_path":path,"cwd":cwd,"hook_event_name":"Stop"})
            .to_string()
            .into_bytes()
    }

    /// The entries of a day file's entry lines (machine parts).
    pub fn day_files(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(self.vault.join("_librarian/sessions"))
            .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect())
            .unwrap_or_default();
        v.sort();
        v
    }

    /// The JSON of every entry line of every day file, in file order.
    pub fn entries(&self) -> Vec<serde_json::Value> {
        self.all_records()
            .lines()
            .filter_map(|l| l.rsplit_once("<!-- rutter:entry "))
            .map(|(_, json)| serde_json::from_str(json.trim_end_matches(" -->")).unwrap())
            .collect()
    }

    pub fn all_records(&self) -> String {
        self.day_files()
            .iter()
            .map(|p| std::fs::read_to_string(p).unwrap())
            .collect()
    }
}

/// Waits until `done`, looking every 10 ms, and fails naming `what` once `limit` has passed:
/// a test waits on the state it expects, never for a fixed time.
pub fn wait_until(what: &str, limit: std::time::Duration, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + limit;
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out after {limit:?} waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

pub fn run_with_stdin(cmd: &mut Command, stdin: &[u8]) -> Run {
    run_with_stdin_and(cmd, stdin, || {})
}

/// [`run_with_stdin`], calling `started` as soon as the process runs (before its stdin is
/// written): a test that must act while the command runs waits for that, not for a clock.
pub fn run_with_stdin_and(cmd: &mut Command, stdin: &[u8], started: impl FnOnce()) -> Run {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // A binary a test just copied can be "busy" for a moment: another test thread that forked
    // while the copy was open for writing holds that descriptor until its child execs.
    let mut tries = 0;
    let mut child = loop {
        match cmd.spawn() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 100 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            spawned => break spawned.unwrap(),
        }
    };
    started();
    let mut pipe = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out.into()
}

pub fn directive(summary: &str, refs: &[&str]) -> serde_json::Value {
    serde_json::json!({"summary": summary, "refs": refs})
}

/// Number of entry lines in a text.
pub fn entry_lines(text: &str) -> usize {
    text.lines()
        .filter(|l| l.contains("<!-- rutter:entry "))
        .count()
}

pub fn exists(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok()
}

/// Where the record ref keeps the vault-relative `rel`: a day file
/// `_librarian/sessions/YYYY-MM-DD[.tag].md` in the folder of its year, anything else at `rel`.
pub fn in_ref(rel: &str) -> String {
    match rel.strip_prefix("_librarian/sessions/") {
        Some(name) if !name.contains('/') && name.len() > 10 && name.as_bytes()[4] == b'-' => {
            format!("_librarian/sessions/{}/{name}", &name[..4])
        }
        _ => rel.to_string(),
    }
}

/// The vault-relative path of what the record ref keeps at `path` (the inverse of [`in_ref`]).
pub fn from_ref(path: &str) -> String {
    match path.strip_prefix("_librarian/sessions/") {
        Some(rest) if rest.len() > 5 && rest.as_bytes()[4] == b'/' => {
            format!("_librarian/sessions/{}", &rest[5..])
        }
        _ => path.to_string(),
    }
}

/// A commit made with real git plumbing through a scratch index, on the tip of
/// `refs/rutter/records`, which is then moved to it with reflog message `why`: `moves` are
/// `(from, to)` paths in the ref's tree, `writes` are `(path in the ref, text)`.
#[derive(Default)]
pub struct Forged<'a> {
    pub moves: &'a [(&'a str, &'a str)],
    pub writes: &'a [(&'a str, &'a str)],
    pub message: &'a str,
    pub why: &'a str,
}

impl Forged<'_> {
    pub fn commit(&self, env: &Env) {
        let index = env.root().join("scratch.index");
        let scratch = [("GIT_INDEX_FILE", index.to_str().unwrap())];
        let git = |args: &[&str]| {
            let r = env.git_with(args, &scratch);
            assert_eq!(r.code, 0, "git {args:?}: {}", r.stderr);
            r.stdout.trim().to_string()
        };
        git(&["read-tree", "refs/rutter/records"]);
        for (from, to) in self.moves {
            let blob = git(&["rev-parse", &format!("refs/rutter/records:{from}")]);
            git(&["update-index", "--force-remove", from]);
            let info = format!("100644,{blob},{to}");
            git(&["update-index", "--add", "--cacheinfo", &info]);
        }
        for (path, text) in self.writes {
            let file = env.root().join("forged.md");
            std::fs::write(&file, text).unwrap();
            let blob = env.git(&["hash-object", "-w", file.to_str().unwrap()]);
            let info = format!("100644,{},{path}", blob.trim());
            git(&["update-index", "--add", "--cacheinfo", &info]);
        }
        let tree = git(&["write-tree"]);
        let tip = git(&["rev-parse", "refs/rutter/records"]);
        let forged = git(&["commit-tree", &tree, "-p", &tip, "-m", self.message]);
        git(&[
            "update-ref",
            "-m",
            self.why,
            "refs/rutter/records",
            &forged,
            &tip,
        ]);
    }
}

/// The `kind` of each finding in the stdout of `verify --json`.
pub fn finding_kinds(verify_json: &str) -> Vec<String> {
    let v: json::Verify = json::decode(verify_json);
    v.findings.into_iter().map(|f| f.kind).collect()
}

/// Holds a lock file with `flock` from another process (as a slow `sync` holds the capture
/// lock) until dropped. [`LockHolder::hold`] returns once the lock is held: polled with
/// `flock -n`, never a fixed sleep. `flock` (util-linux) is required, never skipped.
pub struct LockHolder(std::process::Child);

impl LockHolder {
    pub fn hold(lock: &Path, secs: u32) -> LockHolder {
        let holder = LockHolder(
            // `-o`: the lock is flock's own, not inherited by `sleep`, so killing flock (on
            // drop) releases it at once.
            Command::new("flock")
                .arg("-o")
                .arg(lock)
                .args(["sleep", &secs.to_string()])
                .spawn()
                .expect("flock (util-linux) is needed for this test"),
        );
        let start = std::time::Instant::now();
        while !Self::is_held(lock) {
            assert!(
                start.elapsed() < std::time::Duration::from_secs(10),
                "the lock was never held"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        holder
    }

    /// Whether another process holds `lock` (`flock -n` fails).
    pub fn is_held(lock: &Path) -> bool {
        !Command::new("flock")
            .arg("-n")
            .arg(lock)
            .arg("true")
            .status()
            .expect("flock (util-linux) is needed for this test")
            .success()
    }

    /// Whether the holder still holds it (its process has not exited).
    pub fn still_holding(&mut self) -> bool {
        self.0.try_wait().ok().flatten().is_none()
    }
}

impl Drop for LockHolder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
