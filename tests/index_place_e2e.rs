//! Where the index lives and what may sit there (spec/index.md, "Location and ownership"), end
//! to end with the real binary: a vault folder moved or copied with `cp -a` rebuilds the index
//! its own `.git/` carried along, for every reader and the MCP server (issue 32, F-2); an index
//! another vault built at `LIBRARIAN_DB_PATH` or in the XDG data folder is still refused; a
//! FIFO, symlink or second name planted at the index's names is refused by every reader before
//! any open, and the MCP server still answers (F-6). Every run is bounded, so a reader that
//! blocks on a FIFO fails the test instead of hanging it.

use crate::common;

use common::json::{decode, Status};
use common::Env;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long any one run may take before the test calls it hung (a loaded 2-core machine runs
/// the debug binary; a blocked open never returns at all).
const LIMIT: Duration = Duration::from_secs(30);

const SUMMARY: &str = "Decided the index follows the vault.";

/// A git vault with two notes, one capture citing Notes/a.md, and a built index.
fn indexed() -> Env {
    let env = Env::git_vault();
    capture(&env, &env.vault, SUMMARY, "s1");
    let r = env.rutter(&["reindex"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    env
}

fn capture(env: &Env, vault: &Path, summary: &str, session: &str) {
    let mut c = env.cmd();
    c.env("LIBRARIAN_VAULT_PATH", vault)
        .current_dir(vault)
        .args([
            "capture",
            "--summary",
            summary,
            "--session",
            session,
            "--ref",
            "Notes/a.md",
        ]);
    let r = bounded(c);
    assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
}

/// `git-rutter --vault VAULT ARGS`, run in the vault, bounded by [`LIMIT`].
fn at(env: &Env, vault: &Path, args: &[&str]) -> common::Run {
    let mut c = env.cmd();
    c.env("LIBRARIAN_VAULT_PATH", vault)
        .current_dir(vault)
        .arg("--vault")
        .arg(vault)
        .arg("--no-pager")
        .args(args);
    bounded(c)
}

/// Runs `cmd` to its end, or kills it and fails once [`LIMIT`] passed.
fn bounded(mut cmd: Command) -> common::Run {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} was still running after {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap().into()
}

fn status_json(env: &Env, vault: &Path) -> Status {
    decode(&at(env, vault, &["status", "--json"]).stdout)
}

fn finding_kinds(status: &Status) -> Vec<String> {
    status.kinds().into_iter().map(String::from).collect()
}

/// The vault the index in `vault`'s `.git/` says it serves.
fn index_owner(vault: &Path) -> String {
    let db = rusqlite::Connection::open(vault.join(".git/rutter/index.sqlite")).unwrap();
    db.query_row("SELECT value FROM meta WHERE key = 'vault'", [], |r| {
        r.get(0)
    })
    .unwrap()
}

/// Moves the vault folder, as `mv old new` does.
fn mv(from: &Path, to: &Path) {
    std::fs::rename(from, to).unwrap();
}

const MOVED_NOTE: &str = "(moved or copied since); rebuilt it for";

// ---- the MCP server --------------------------------------------------------------------------

type Client = RunningService<RoleClient, ()>;

/// rmcp's client over `git-rutter mcp` for `vault`; `initialize` must be answered within
/// [`LIMIT`].
async fn serve(env: &Env, vault: &Path) -> Client {
    let mut cmd = env.cmd();
    cmd.env("LIBRARIAN_VAULT_PATH", vault)
        .current_dir(vault)
        .arg("mcp");
    let (transport, _) = TokioChildProcess::builder(tokio::process::Command::from(cmd))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    tokio::time::timeout(LIMIT, ().serve(transport))
        .await
        .expect("initialize was answered in time")
        .unwrap()
}

/// One tool call, answered within [`LIMIT`]: whether it is an error result, and its text.
async fn call(client: &Client, tool: &str, args: Value) -> (bool, String) {
    let params = CallToolRequestParams::new(tool.to_string())
        .with_arguments(args.as_object().cloned().unwrap());
    let result: CallToolResult = tokio::time::timeout(LIMIT, client.call_tool(params))
        .await
        .expect("the tool call was answered in time")
        .unwrap();
    let text = result.content[0].as_text().unwrap().text.clone();
    (result.is_error == Some(true), text)
}

// ---- F-2: a vault moved or copied --------------------------------------------------------------

/// `mv` of the vault folder: the index its `.git/` carried names the old path; every reader
/// rebuilds it once, says so on stderr, and answers as before; `status` calls it information.
#[tokio::test]
async fn a_moved_vault_rebuilds_its_index_and_every_reader_answers() {
    let env = indexed();
    let moved = env.root().join("moved");
    mv(&env.vault, &moved);

    let status = status_json(&env, &moved);
    let index = status.index();
    assert_eq!(index.problem.as_deref(), Some("moved"), "{status:#?}");
    assert_eq!(
        index.problem_detail.as_deref(),
        Some(env.vault.display().to_string().as_str())
    );
    let kinds = finding_kinds(&status);
    assert!(!kinds.iter().any(|k| k.starts_with("index-")), "{kinds:?}");

    let recent = at(&env, &moved, &["recent"]);
    assert_eq!(recent.code, 0, "{}", recent.stderr);
    assert!(recent.stdout.contains(SUMMARY), "{}", recent.stdout);
    assert!(recent.stderr.contains(MOVED_NOTE), "{}", recent.stderr);
    assert_eq!(recent.stderr.matches(MOVED_NOTE).count(), 1);
    assert_eq!(index_owner(&moved), moved.display().to_string());
    let search = at(&env, &moved, &["search", "alpha"]);
    assert_eq!(search.code, 0, "{}", search.stderr);
    assert!(search.stdout.contains("Notes/a.md"), "{}", search.stdout);
    assert!(
        !search.stderr.contains(MOVED_NOTE),
        "said once: {}",
        search.stderr
    );
    let cited = at(&env, &moved, &["cited-by", "Notes/a.md"]);
    assert_eq!(cited.code, 0, "{}", cited.stderr);
    assert!(cited.stdout.contains(SUMMARY), "{}", cited.stdout);

    // Moved again, the MCP server is the first reader: it starts, and rebuilds in the background.
    let again = env.root().join("moved-again");
    mv(&moved, &again);
    let client = serve(&env, &again).await;
    let (failed, text) = call(&client, "librarian-recent", json!({})).await;
    assert!(!failed && text.contains(SUMMARY), "{text}");
    let (failed, text) = call(&client, "librarian-search", json!({"query": "alpha"})).await;
    assert!(!failed && text.contains("Notes/a.md"), "{text}");
    client.cancel().await.unwrap();
    assert_eq!(index_owner(&again), again.display().to_string());
}

/// `cp -a` of the vault: the copy rebuilds its own index, the original keeps its own, and
/// neither ever answers with the other's captures.
#[test]
fn a_copied_vault_and_its_original_each_keep_their_own_index() {
    let env = indexed();
    let copy = env.root().join("copy");
    let cp = Command::new("cp")
        .arg("-a")
        .arg(&env.vault)
        .arg(&copy)
        .status()
        .unwrap();
    assert!(cp.success());
    capture(&env, &copy, "Decided in the copy only.", "s2");
    capture(&env, &env.vault, "Decided in the original only.", "s3");
    for round in 0..2 {
        let original = at(&env, &env.vault, &["recent"]);
        assert_eq!(original.code, 0, "{}", original.stderr);
        assert!(original.stdout.contains("Decided in the original only."));
        assert!(!original.stdout.contains("Decided in the copy only."));
        assert!(!original.stderr.contains(MOVED_NOTE), "{}", original.stderr);
        let copied = at(&env, &copy, &["recent"]);
        assert_eq!(copied.code, 0, "{}", copied.stderr);
        assert!(copied.stdout.contains("Decided in the copy only."));
        assert!(!copied.stdout.contains("Decided in the original only."));
        // Rebuilt once, on the copy's first use; after that each index is its vault's.
        assert_eq!(
            copied.stderr.contains(MOVED_NOTE),
            round == 0,
            "round {round}: {}",
            copied.stderr
        );
    }
    assert_eq!(index_owner(&env.vault), env.vault.display().to_string());
    assert_eq!(index_owner(&copy), copy.display().to_string());
}

/// The refusal stays where another vault can have built the index: at `LIBRARIAN_DB_PATH` (CLI
/// and MCP server, even after a move) and in the XDG data folder of a vault outside git.
#[test]
fn another_vaults_index_is_still_refused_at_librarian_db_path_and_in_the_data_folder() {
    let env = Env::git_vault();
    let db = env.root().join("chosen.sqlite");
    let with_db = |vault: &Path, args: &[&str]| {
        let mut c = env.cmd();
        c.env("LIBRARIAN_VAULT_PATH", vault)
            .env("LIBRARIAN_DB_PATH", &db)
            .current_dir(vault)
            .args(args);
        bounded(c)
    };
    assert_eq!(with_db(&env.vault, &["reindex"]).code, 0);
    let moved = env.root().join("moved");
    mv(&env.vault, &moved);
    let r = with_db(&moved, &["search", "alpha"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("was built for the vault") && r.stderr.contains("reindex --force"),
        "{}",
        r.stderr
    );
    let r = with_db(&moved, &["mcp"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.starts_with("[rutter] fatal: the index "),
        "{}",
        r.stderr
    );

    // Two vaults outside git: each index lives in its own folder of the data home.
    let (a, b) = (env.root().join("plain-a"), env.root().join("plain-b"));
    for v in [&a, &b] {
        std::fs::create_dir_all(v.join("Notes")).unwrap();
        std::fs::write(v.join("Notes/n.md"), "# N\n\nplain words\n").unwrap();
    }
    let data = env.home.join(".local/share/rutter");
    let folders = || -> Vec<PathBuf> {
        std::fs::read_dir(&data)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default()
    };
    assert_eq!(at(&env, &a, &["search", "plain"]).code, 0);
    let a_folder = folders()
        .into_iter()
        .find(|f| f.join("index.sqlite").exists());
    let a_folder = a_folder.expect("a's index in the data folder");
    assert_eq!(at(&env, &b, &["search", "plain"]).code, 0);
    let b_folder = folders()
        .into_iter()
        .find(|f| f != &a_folder && f.join("index.sqlite").exists())
        .expect("b's index in a folder of its own");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(b_folder.join(format!("index.sqlite{suffix}")));
    }
    std::fs::copy(a_folder.join("index.sqlite"), b_folder.join("index.sqlite")).unwrap();
    let r = at(&env, &b, &["search", "plain"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("was built for the vault"), "{}", r.stderr);
    assert!(finding_kinds(&status_json(&env, &b)).contains(&"index-other-vault".to_string()));
}

// ---- F-6: what may sit at the index's names ------------------------------------------------------

/// Something planted at one of the index's names in `.git/rutter/`.
#[derive(Debug, Clone, Copy)]
enum Planted {
    Fifo,
    Symlink,
    HardLink,
}

impl Planted {
    /// Puts it at `name` (after moving what was there aside); what messages call it.
    fn plant(self, env: &Env, name: &str) -> &'static str {
        let at = env.vault.join(".git/rutter").join(name);
        let elsewhere = env.root().join(format!("elsewhere-{name}"));
        if at.exists() {
            std::fs::rename(&at, &elsewhere).unwrap();
        } else {
            std::fs::write(&elsewhere, b"").unwrap();
        }
        match self {
            Planted::Fifo => {
                let made = Command::new("mkfifo").arg(&at).status().unwrap();
                assert!(made.success());
                "is a FIFO"
            }
            Planted::Symlink => {
                std::os::unix::fs::symlink(&elsewhere, &at).unwrap();
                "is a symbolic link"
            }
            Planted::HardLink => {
                std::fs::hard_link(&elsewhere, &at).unwrap();
                "is a file with 2 names"
            }
        }
    }
}

/// A FIFO, a symlink and a second name at `index.sqlite` (and a FIFO at its write-ahead log):
/// `status` and `status --json` name it as a finding, `recent` and `search` refuse it, and the
/// MCP server answers `initialize` and then each tool call with an error result naming it. None
/// of them opens it (a FIFO would block them for good). Removed, the index is rebuilt.
#[tokio::test]
async fn a_fifo_link_or_second_name_at_the_index_is_refused_by_every_reader_without_hanging() {
    let cases = [
        (Planted::Fifo, "index.sqlite"),
        (Planted::Symlink, "index.sqlite"),
        (Planted::HardLink, "index.sqlite"),
        (Planted::Fifo, "index.sqlite-wal"),
    ];
    for (planted, name) in cases {
        let env = indexed();
        let what = planted.plant(&env, name);
        let case = format!("{planted:?} at {name}");
        let path = env.vault.join(".git/rutter").join(name);
        let named = format!("{} {what}", path.display());

        let status = at(&env, &env.vault, &["status"]);
        assert_eq!(status.code, 1, "{case}: {}{}", status.stdout, status.stderr);
        assert!(status.stdout.contains(&named), "{case}: {}", status.stdout);
        assert!(
            status.stdout.contains("remove it"),
            "{case}: {}",
            status.stdout
        );
        let json = status_json(&env, &env.vault);
        assert!(
            finding_kinds(&json).contains(&"index-not-a-file".to_string()),
            "{case}: {json:#?}"
        );
        assert_eq!(
            json.index().problem.as_deref(),
            Some("not-a-file"),
            "{case}"
        );
        for args in [&["recent"][..], &["search", "alpha"]] {
            let r = at(&env, &env.vault, args);
            assert_eq!(r.code, 2, "{case} {args:?}: {}", r.stderr);
            assert!(r.stderr.contains(&named), "{case} {args:?}: {}", r.stderr);
        }

        let client = serve(&env, &env.vault).await;
        for (tool, args) in [
            ("librarian-recent", json!({})),
            ("librarian-search", json!({"query": "alpha"})),
        ] {
            let (failed, text) = call(&client, tool, args).await;
            assert!(failed, "{case} {tool}: {text}");
            assert!(
                text.starts_with("the index is not available: ") && text.contains(&named),
                "{case} {tool}: {text}"
            );
        }
        client.cancel().await.unwrap();

        std::fs::remove_file(&path).unwrap();
        let r = at(&env, &env.vault, &["search", "alpha"]);
        assert_eq!(r.code, 0, "{case}: {}", r.stderr);
        assert!(r.stdout.contains("Notes/a.md"), "{case}: {}", r.stdout);
    }
}

/// How a test runs the binary on a vault its user cannot write: as root (CI), through
/// `setpriv` as `nobody` over a tree made readable to all; as anyone else, with the vault made
/// read-only (given back on drop, so the temp folder can go).
struct ReadOnly {
    root: bool,
    vault: PathBuf,
}

impl ReadOnly {
    fn new(env: &Env) -> ReadOnly {
        let root = rustix::process::geteuid().is_root();
        let chmod = |mode: &str, p: &Path| {
            let ok = Command::new("chmod").args(["-R", mode]).arg(p).status();
            assert!(ok.unwrap().success());
        };
        if root {
            // git and libgit2 refuse a repository another user owns unless told it is safe.
            env.git(&["config", "--global", "--add", "safe.directory", "*"]);
            chmod("a+rX", &env.root());
        } else {
            chmod("a-w", &env.vault);
        }
        ReadOnly {
            root,
            vault: env.vault.clone(),
        }
    }

    fn run(&self, env: &Env, args: &[&str], extra: &[(&str, &Path)]) -> common::Run {
        let mut c = match self.root {
            true => {
                let mut c = env.cmd_for("setpriv");
                c.args([
                    "--reuid=65534",
                    "--regid=65534",
                    "--clear-groups",
                    common::BIN,
                ]);
                c
            }
            false => env.cmd(),
        };
        for (k, v) in extra {
            c.env(k, v);
        }
        c.args(args).output().unwrap().into()
    }
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        if !self.root {
            let _ = Command::new("chmod")
                .args(["-R", "u+w"])
                .arg(&self.vault)
                .status();
        }
    }
}

/// A vault this user cannot write (a read-only mount, a backup, another user's folder): every
/// reader refuses the index by its path, with why and the way on, and `status` names it as the
/// finding `index-unwritable` (it said "not a git-rutter index (attempt to write a readonly
/// database)", and `recent` "index: Permission denied"); with `LIBRARIAN_DB_PATH` at a file
/// this user can write, recall works.
#[test]
fn an_index_that_cannot_be_written_is_refused_by_name_with_the_way_on() {
    let env = Env::git_vault();
    let r = env.capture_at(
        "2026-12-01T10:00:00.000Z",
        "Decided to read only.",
        &["Notes/a.md"],
    );
    assert!(r.stderr.contains("to refs/rutter/records."), "{}", r.stderr);
    assert_eq!(env.rutter(&["recent"]).code, 0, "the index is built");
    let elsewhere = env.root().join("writable");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let ro = ReadOnly::new(&env);
    let _ = Command::new("chmod").arg("a+rwx").arg(&elsewhere).status();
    for args in [&["recent"][..], &["search", "alpha"]] {
        let r = ro.run(&env, args, &[]);
        assert_eq!(r.code, 2, "{args:?}: {}{}", r.stdout, r.stderr);
        for said in ["index.sqlite cannot be written (", "LIBRARIAN_DB_PATH"] {
            assert!(r.stderr.contains(said), "{args:?} {said}: {}", r.stderr);
        }
    }
    let r = ro.run(&env, &["status", "--json"], &[]);
    let s: Status = decode(&r.stdout);
    let kinds: Vec<&str> = s.findings.iter().map(|f| f.kind.as_str()).collect();
    assert!(kinds.contains(&"index-unwritable"), "{kinds:?}");
    let db = elsewhere.join("index.sqlite");
    let r = ro.run(&env, &["recent"], &[("LIBRARIAN_DB_PATH", &db)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("Decided to read only."), "{}", r.stdout);
}
