//! Snapshots of human output: a command's stdout, stderr and exit status as one text, laid out
//! as jj's tests lay them out (`[EOF]` after each stream, `------- stderr -------` before
//! stderr, `[exit status: N]` when not 0), with what differs between machines and runs (the
//! temporary folder, the test HOME, commit ids, writer ids) replaced by stable placeholders.
//!
//! A command runs in this process ([`Env::here`]: parsed as the binary parses it and dispatched
//! through a [`rutter::cli::Ui`] writing to buffers, as `cli::dispatch` maps its result to an
//! exit status) or as the spawned binary ([`Env::spawned`]) when it depends on the environment
//! of its own process (the HOME status reads hook runs from). In-process commands share one
//! hermetic environment ([`hermetic`]): set once, before the first of them runs, and never
//! changed afterwards, so tests running on parallel threads all see the same one.

use super::{run_with_stdin, Env};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The instant every in-process command (and [`Env::spawned`]) sees as now.
pub const NOW: &str = "2026-12-01T09:00:00.000Z";

/// What a command printed and how it exited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    pub stdout: String,
    pub stderr: String,
    pub status: i32,
}

impl fmt::Display for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        stream(f, &self.stdout)?;
        if !self.stderr.is_empty() {
            writeln!(f, "------- stderr -------")?;
            stream(f, &self.stderr)?;
        }
        if self.status != 0 {
            writeln!(f, "[exit status: {}]", self.status)?;
        }
        Ok(())
    }
}

/// One stream, ended by `[EOF]`; output that does not end with a newline says so.
fn stream(f: &mut fmt::Formatter<'_>, text: &str) -> fmt::Result {
    if text.is_empty() {
        return Ok(());
    }
    write!(f, "{text}")?;
    if !text.ends_with('\n') {
        writeln!(f)?;
        writeln!(f, "[no newline]")?;
    }
    writeln!(f, "[EOF]")
}

/// The HOME of in-process commands, once the process is hermetic.
static HOME: OnceLock<PathBuf> = OnceLock::new();

/// Variables of the test runner that stay: the search path, cargo's and insta's own settings,
/// and what CI asks of the tests themselves (`RUTTER_REQUIRE_*`: a missing tool fails rather
/// than skips; `RUTTER_BLESS`: rewrite a pinned fixture).
fn kept(name: &str) -> bool {
    name == "PATH"
        || name == "CI"
        || name == "TMPDIR"
        || name == "RUTTER_BLESS"
        || name.starts_with("RUTTER_REQUIRE_")
        || name.starts_with("CARGO")
        || name.starts_with("INSTA_")
        || name.starts_with("RUST_")
        || name.starts_with("LLVM_")
}

/// Makes this test process hermetic, once, before any in-process command runs: every variable
/// but [`kept`] ones removed (no GIT_DIR, LIBRARIAN_VAULT_PATH, NO_COLOR, PAGER of the caller),
/// then the environment of tests/common's spawned commands (a HOME of its own, no system git
/// config, TZ=UTC, a fixed identity) and the clock pinned at [`NOW`]. Returns that HOME.
///
/// Every test shares the process (tests/tests.rs), so [`Env::bare`] calls this too: whichever
/// test runs first, every test sees this environment from its first `Env` on (a test that
/// makes one while the environment changes waits here until it is done).
pub fn hermetic() -> &'static Path {
    HOME.get_or_init(|| {
        let home = Path::new(env!("CARGO_TARGET_TMPDIR")).join("human-output-home");
        let _ = std::fs::remove_dir_all(&home);
        std::fs::create_dir_all(&home).unwrap();
        let home = home.canonicalize().unwrap();
        for (name, _) in std::env::vars_os() {
            if !name.to_str().is_some_and(kept) {
                std::env::remove_var(name);
            }
        }
        for (name, value) in [
            ("HOME", home.to_str().unwrap()),
            ("GIT_CONFIG_NOSYSTEM", "1"),
            ("TZ", "UTC"),
            ("GIT_AUTHOR_NAME", "Test User"),
            ("GIT_AUTHOR_EMAIL", "test@example.com"),
            ("GIT_COMMITTER_NAME", "Test User"),
            ("GIT_COMMITTER_EMAIL", "test@example.com"),
            ("RUTTER_TIMESTAMP", NOW),
        ] {
            std::env::set_var(name, value);
        }
        std::env::set_var("XDG_CONFIG_HOME", home.join(".config"));
        std::env::set_var("XDG_DATA_HOME", home.join(".local/share"));
        home
    })
}

impl Env {
    /// A vault with two committed notes, initialised, in a hermetic process.
    pub fn snap_vault() -> Env {
        hermetic();
        Env::git_vault()
    }

    /// An empty vault folder (not a repository), in a hermetic process.
    pub fn snap_bare() -> Env {
        hermetic();
        Env::bare()
    }

    /// `git-rutter --vault <vault> ARGS`, run in this process; redacted.
    pub fn here(&self, args: &[&str]) -> Output {
        self.here_at(&self.vault, args)
    }

    /// `git-rutter --vault VAULT ARGS` (another vault of the run), run in this process;
    /// redacted.
    pub fn here_at(&self, vault: &Path, args: &[&str]) -> Output {
        self.here_with(&["--vault", vault.to_str().unwrap()], args)
    }

    /// `git-rutter GLOBAL ARGS` (GLOBAL: `--vault X` or nothing), run in this process through
    /// a Ui writing to buffers, colour off; redacted.
    pub fn here_with(&self, global: &[&str], args: &[&str]) -> Output {
        self.run_here(global, args, false)
    }

    /// As [`Env::here`], with colour on, each escape character shown as `␛`.
    pub fn here_painted(&self, args: &[&str]) -> Output {
        let vault = self.vault.to_str().unwrap().to_string();
        let mut out = self.run_here(&["--vault", &vault], args, true);
        out.stdout = out.stdout.replace('\u{1b}', "␛");
        out.stderr = out.stderr.replace('\u{1b}', "␛");
        out
    }

    fn run_here(&self, global: &[&str], args: &[&str], color: bool) -> Output {
        hermetic();
        let argv = ["git-rutter"].iter().chain(global).chain(args);
        let cli = <rutter::cli::Cli as clap::Parser>::try_parse_from(argv)
            .unwrap_or_else(|e| panic!("{e}"));
        let (mut ui, got) = rutter::cli::Ui::with_buffers(color);
        let status = rutter::cli::dispatch(&mut ui, cli);
        drop(ui);
        self.redact(Output {
            stdout: got.stdout(),
            stderr: got.stderr(),
            status,
        })
    }

    /// `git-rutter --vault <vault> ARGS` as its own process, in the hermetic environment of
    /// [`Env::cmd`] (HOME is this test's) at [`NOW`]; redacted.
    pub fn spawned(&self, args: &[&str]) -> Output {
        let mut c = self.cmd();
        c.env("RUTTER_TIMESTAMP", NOW)
            .arg("--vault")
            .arg(&self.vault)
            .args(args);
        let run = run_with_stdin(&mut c, b"");
        self.redact(Output {
            stdout: run.stdout,
            stderr: run.stderr,
            status: run.code,
        })
    }

    /// `output` with the run's own names replaced: commit ids (and record files' blob ids) of
    /// every repository in the temporary folder by `[c1]`, `[c2]`… in the order they first
    /// appear (whole, or cut to 7 or 12 characters), writer ids by `[writer1]`…, the temporary folder by `[TMP]`, the
    /// in-process HOME by `[HOME]`.
    pub fn redact(&self, output: Output) -> Output {
        let mut names = Names {
            commits: self.commits(),
            writers: self.writers(),
            shown: HashMap::new(),
        };
        let mut text = |t: &str| {
            let mut t = t.to_string();
            for (path, name) in [
                (self.root(), "[TMP]"),
                (self.tmp.path().to_path_buf(), "[TMP]"),
            ] {
                t = t.replace(path.to_str().unwrap(), name);
            }
            if let Some(home) = HOME.get() {
                t = t.replace(home.to_str().unwrap(), "[HOME]");
            }
            names.replace(&t)
        };
        Output {
            stdout: text(&output.stdout),
            stderr: text(&output.stderr),
            status: output.status,
        }
    }

    /// The git repositories of the run: the vault and every folder beside it that is one.
    fn repositories(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(self.root())
            .map(|rd| rd.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        dirs.sort();
        dirs.into_iter()
            .filter(|d| d.join(".git").exists() || d.join("HEAD").is_file())
            .collect()
    }

    /// Every commit any repository of the run holds or its reflogs name, and the blobs of its
    /// record files (a finding names the committed blob a deleted file had; their bytes hold
    /// the run's folder, so their ids differ from run to run, as commit ids do).
    fn commits(&self) -> Vec<String> {
        let mut all = Vec::new();
        for repo in self.repositories() {
            let out = Command::new("git")
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("HOME", &self.home)
                .arg("-C")
                .arg(&repo)
                .args(["rev-list", "--all", "--reflog", "--objects"])
                .output();
            if let Ok(out) = out {
                all.extend(
                    String::from_utf8_lossy(&out.stdout)
                        .lines()
                        .filter_map(|l| match l.split_once(' ') {
                            None => Some(l),
                            Some((id, path)) => path.starts_with("_librarian/").then_some(id),
                        })
                        .map(String::from),
                );
            }
        }
        all.sort();
        all.dedup();
        all
    }

    /// The writer ids (`.git/rutter/machine`) of the run's repositories.
    fn writers(&self) -> Vec<String> {
        self.repositories()
            .iter()
            .filter_map(|r| std::fs::read_to_string(r.join(".git/rutter/machine")).ok())
            .map(|id| id.trim().to_string())
            .filter(|id| !id.is_empty())
            .collect()
    }
}

/// The names [`Env::redact`] replaces, and the placeholders given so far.
struct Names {
    commits: Vec<String>,
    writers: Vec<String>,
    shown: HashMap<String, String>,
}

impl Names {
    fn replace(&mut self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut word = String::new();
        let mut chars = text.chars().chain(std::iter::once('\0'));
        while let Some(c) = chars.next() {
            if c.is_ascii_alphanumeric() || c == '-' {
                word.push(c);
                continue;
            }
            let taken = std::mem::take(&mut word);
            out.push_str(&self.name(&taken));
            if c == '\0' {
                break;
            }
            out.push(c);
            // A colour escape (`ESC [ … m`) is copied whole: its letters are no part of a word.
            if c == '\u{1b}' {
                for e in chars.by_ref() {
                    out.push(e);
                    if e.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
        }
        out
    }

    /// A word's placeholder, or the word (a writer id may appear inside a file name, so it is
    /// looked for anywhere in the word; a commit id only as a whole word).
    fn name(&mut self, word: &str) -> String {
        let mut word = word.to_string();
        for w in self.writers.clone() {
            if word.contains(w.as_str()) {
                let n = self.placeholder(&w, "writer");
                word = word.replace(w.as_str(), &n);
            }
        }
        let hex = matches!(word.len(), 7 | 12 | 40)
            && word
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !hex {
            return word;
        }
        let full: Vec<&String> = self
            .commits
            .iter()
            .filter(|c| c.starts_with(&word))
            .collect();
        match full.as_slice() {
            [one] => {
                let one = (*one).clone();
                self.placeholder(&one, "c")
            }
            _ => word,
        }
    }

    fn placeholder(&mut self, key: &str, kind: &str) -> String {
        let n = self
            .shown
            .keys()
            .filter(|k| k.starts_with(&format!("{kind}:")))
            .count();
        self.shown
            .entry(format!("{kind}:{key}"))
            .or_insert_with(|| format!("[{kind}{}]", n + 1))
            .clone()
    }
}
