//! A sync remote is input (issue 18; spec/sync.md, "What sync takes in"): a bare remote whose
//! `refs/rutter/records` was rewritten with git plumbing (`git mktree`, `git hash-object -t tree
//! --literally`), one case per class of hostile history. Each case asserts that `sync` exits 1
//! naming the refusal, that nothing changed outside what a fetch may write (snapshots of the
//! vault's parent folder, HOME and the vault's `.git/`), that the local ref and the working
//! record files are unchanged, that `recent` still works and `status` names the refusal; the
//! same trees through `git clone` + `init`, and through `restore` and `verify` on a forged local
//! ref. The real binary, the real `git`.

use crate::common;
use common::*;
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;

/// A vault at `parent/vault` with one committed capture, synced with the bare remote
/// `remote.git`; a user file beside the vault and a `.bashrc` in HOME.
struct World {
    env: Env,
    remote: PathBuf,
    parent: PathBuf,
}

type Snapshot = BTreeMap<String, String>;

const VICTIM: &str = "user's own file\n";
const BASHRC: &str = "# the user's bashrc\n";

impl World {
    fn new() -> World {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let (home, parent) = (root.join("home"), root.join("parent"));
        let vault = parent.join("vault");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&vault).unwrap();
        std::fs::write(home.join(".bashrc"), BASHRC).unwrap();
        std::fs::write(parent.join("victim.txt"), VICTIM).unwrap();
        let env = Env { tmp, home, vault };
        env.write("Notes/a.md", NOTE_A);
        env.git(&["init", "-q", "-b", "main"]);
        env.git(&["add", "Notes"]);
        env.git(&["commit", "-qm", "notes"]);
        let r = env.rutter(&["init"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let remote = root.join("remote.git");
        env.git(&["init", "-q", "--bare", remote.to_str().unwrap()]);
        env.git(&["remote", "add", "origin", remote.to_str().unwrap()]);
        let w = World {
            env,
            remote,
            parent,
        };
        w.capture("base");
        let r = w.env.rutter(&["sync", "--setup", "origin"]);
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
        w
    }

    fn capture(&self, summary: &str) {
        let r = run_with_stdin(
            self.env
                .cmd()
                .args(["capture", "--summary", summary, "--session", summary]),
            b"",
        );
        assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
    }

    /// `git` in the bare remote.
    fn rgit(&self, args: &[&str]) -> String {
        self.env.git_in(&self.remote, args).trim().to_string()
    }

    /// Plumbing in the bare remote.
    fn r(&self) -> Plumb {
        Plumb {
            dir: self.remote.clone(),
        }
    }

    fn blob(&self, bytes: &[u8]) -> String {
        self.r().blob(bytes)
    }

    fn ls(&self, tree: &str) -> Vec<(String, Vec<u8>, String)> {
        self.r().ls(tree)
    }

    fn raw_tree(&self, entries: Vec<(String, Vec<u8>, String)>) -> String {
        self.r().raw_tree(entries)
    }

    fn put(&self, base: Option<&str>, path: &[&[u8]], mode: &str, oid: &str) -> String {
        self.r().put(base, path, mode, oid)
    }

    fn commit(&self, tree: &str, parents: &[&str]) -> String {
        self.r().commit(tree, parents)
    }

    fn remote_tip(&self) -> String {
        self.rgit(&["rev-parse", "refs/rutter/records"])
    }

    fn local_tip(&self) -> String {
        self.env
            .git(&["rev-parse", "refs/rutter/records"])
            .trim()
            .to_string()
    }

    /// Moves the remote's records to `commit`.
    fn serve(&self, commit: &str) {
        self.rgit(&["update-ref", "refs/rutter/records", commit]);
    }

    /// The remote's tip with `(mode, id)` added at `path`, committed on it and served.
    fn forge(&self, path: &[&[u8]], mode: &str, oid: &str) -> String {
        let tip = self.remote_tip();
        let tree = self.put(Some(&format!("{tip}^{{tree}}")), path, mode, oid);
        let c = self.commit(&tree, &[&tip]);
        self.serve(&c);
        c
    }

    /// Everything under the temp root that a refused sync must leave alone: the vault's parent
    /// folder (the vault, its working files and its `.git/`), HOME. Left out: the remote
    /// itself, and what a fetch and a refusal may write in `.git/` (objects, remote-tracking
    /// refs and their logs, the refusal note for `status`).
    fn snapshot(&self) -> Snapshot {
        let root = self.env.root();
        let skip = [
            "remote.git",
            "parent/vault/.git/objects",
            "parent/vault/.git/refs/remotes",
            "parent/vault/.git/logs/refs/remotes",
            "parent/vault/.git/rutter/sync-refused",
        ];
        let mut out = Snapshot::new();
        let mut todo = vec![root.clone()];
        while let Some(dir) = todo.pop() {
            for e in std::fs::read_dir(&dir).unwrap().flatten() {
                let p = e.path();
                let rel = p.strip_prefix(&root).unwrap().to_string_lossy().to_string();
                if skip.contains(&rel.as_str()) {
                    continue;
                }
                let meta = std::fs::symlink_metadata(&p).unwrap();
                let what = if meta.file_type().is_symlink() {
                    format!("link {:?}", std::fs::read_link(&p).unwrap())
                } else if meta.is_dir() {
                    todo.push(p);
                    "dir".to_string()
                } else {
                    let mut h = std::collections::hash_map::DefaultHasher::new();
                    std::fs::read(&p).unwrap().hash(&mut h);
                    format!("file {:o} {:x}", meta_mode(&meta), h.finish())
                };
                out.insert(rel, what);
            }
        }
        out
    }

    /// Syncs and asserts the refusal: exit 1 naming it, nothing changed but what a fetch
    /// writes, the local ref where it was, `recent` working and `status` naming the refusal.
    fn assert_refused(&self, what: &str) -> String {
        let (before, tip) = (self.snapshot(), self.local_tip());
        let r = self.env.rutter(&["sync"]);
        self.assert_unchanged(what, &r, &before, &tip);
        let s = self.env.rutter(&["status", "--json"]);
        let v: common::json::Status = common::json::decode(&s.stdout);
        assert!(
            v.kinds().contains(&"sync-refused"),
            "{what}: status names the refusal: {}",
            s.stdout
        );
        r.stderr
    }

    fn assert_unchanged(&self, what: &str, r: &Run, before: &Snapshot, tip: &str) {
        assert_eq!(r.code, 1, "{what}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains("refused the records of origin"),
            "{what}: {}",
            r.stderr
        );
        assert_eq!(self.local_tip(), tip, "{what}: the local ref moved");
        assert_same(what, before, &self.snapshot());
        let recent = self.env.rutter(&["recent", "--no-pager"]);
        assert_eq!(recent.code, 0, "{what}: {}", recent.stderr);
        assert!(recent.stdout.contains("base"), "{what}: {}", recent.stdout);
    }

    /// A user's plain `git fetch origin` (git's object checks off, as by default): the
    /// remote's objects and tracking ref are here before sync runs, so sync's own check is the
    /// one that refuses.
    fn plain_fetch(&self) {
        self.env.git(&["fetch", "-q", "origin"]);
    }

    /// A second machine: `git clone` of the remote's notes and `git rutter init` there. The
    /// remote gets a branch first (a bare remote with only records clones as empty).
    fn clone_and_init(&self, what: &str) {
        self.env.git(&["push", "-q", "origin", "main"]);
        let m2 = self.env.root().join("m2");
        std::fs::create_dir_all(&m2).unwrap();
        let before = self.snapshot();
        let vault = m2.join("vault");
        self.env.git(&[
            "clone",
            "-q",
            self.remote.to_str().unwrap(),
            vault.to_str().unwrap(),
        ]);
        let r = self.env.rutter_in(&vault, &["init"]);
        assert_eq!(r.code, 1, "{what}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains("refused the records of origin"),
            "{what}: {}",
            r.stderr
        );
        let mut after = self.snapshot();
        after.retain(|p, _| !p.starts_with("m2/vault"));
        assert_same(what, &before, &after);
        assert!(
            !exists(&vault.join("_librarian")),
            "{what}: init wrote record files"
        );
        let refs = self.env.git_in(&vault, &["for-each-ref", "refs/rutter"]);
        assert!(refs.is_empty(), "{what}: init made a ref: {refs}");
        std::fs::remove_dir_all(&m2).unwrap();
    }
}

/// Plumbing in one repository (the remote, or a vault whose objects are forged in place).
struct Plumb {
    dir: PathBuf,
}

impl Plumb {
    fn git(&self, args: &[&str]) -> String {
        self.git_stdin(args, b"")
    }

    fn git_stdin(&self, args: &[&str], stdin: &[u8]) -> String {
        let mut c = std::process::Command::new("git");
        c.arg("-C").arg(&self.dir).args(args);
        let r = run_with_stdin(&mut c, stdin);
        assert_eq!(r.code, 0, "git {args:?}: {}", r.stderr);
        r.stdout.trim().to_string()
    }

    fn blob(&self, bytes: &[u8]) -> String {
        self.git_stdin(&["hash-object", "-w", "--stdin"], bytes)
    }

    /// The entries of `tree` in the remote: `(mode, name, id)`.
    fn ls(&self, tree: &str) -> Vec<(String, Vec<u8>, String)> {
        let mut c = std::process::Command::new("git");
        c.arg("-C").arg(&self.dir).args(["ls-tree", "-z", tree]);
        let out = c.output().unwrap();
        assert!(out.status.success());
        out.stdout
            .split(|b| *b == 0)
            .filter(|e| !e.is_empty())
            .map(|e| {
                let tab = e.iter().position(|b| *b == b'\t').unwrap();
                let head = String::from_utf8_lossy(&e[..tab]).to_string();
                let mut parts = head.split(' ');
                // `ls-tree` shows folders as `040000`; a tree holds `40000`.
                let mode = parts.next().unwrap().trim_start_matches('0').to_string();
                let oid = parts.nth(1).unwrap().to_string();
                (mode, e[tab + 1..].to_vec(), oid)
            })
            .collect()
    }

    /// A raw tree of `entries`, in git's order, whatever the names and modes.
    fn raw_tree(&self, mut entries: Vec<(String, Vec<u8>, String)>) -> String {
        let key = |e: &(String, Vec<u8>, String)| {
            let mut k = e.1.clone();
            if e.0 == "40000" {
                k.push(b'/');
            }
            k
        };
        entries.sort_by_key(key);
        let mut bytes = Vec::new();
        for (mode, name, oid) in entries {
            bytes.extend_from_slice(mode.as_bytes());
            bytes.push(b' ');
            bytes.extend_from_slice(&name);
            bytes.push(0);
            bytes.extend_from_slice(&hex(&oid));
        }
        self.git_stdin(
            &["hash-object", "-t", "tree", "--literally", "-w", "--stdin"],
            &bytes,
        )
    }

    /// `base` (a tree id, or none) with `(mode, id)` at `path` (names as bytes, any of them).
    fn put(&self, base: Option<&str>, path: &[&[u8]], mode: &str, oid: &str) -> String {
        let mut entries = base.map(|b| self.ls(b)).unwrap_or_default();
        let at = entries.iter().position(|e| e.1 == path[0]);
        let leaf = if path.len() == 1 {
            (mode.to_string(), oid.to_string())
        } else {
            let sub = at
                .map(|i| &entries[i])
                .filter(|e| e.0 == "40000")
                .map(|e| e.2.clone());
            let t = self.put(sub.as_deref(), &path[1..], mode, oid);
            ("40000".to_string(), t)
        };
        if let Some(i) = at {
            entries.remove(i);
        }
        entries.push((leaf.0, path[0].to_vec(), leaf.1));
        self.raw_tree(entries)
    }

    /// A commit of `tree` on `parents` in the remote.
    fn commit(&self, tree: &str, parents: &[&str]) -> String {
        let mut args = vec!["commit-tree", tree];
        for p in parents {
            args.extend(["-p", p]);
        }
        args.extend(["-m", "rutter: capture"]);
        self.git(&args)
    }
}

fn meta_mode(m: &std::fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    m.permissions().mode()
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn assert_same(what: &str, before: &Snapshot, after: &Snapshot) {
    let changed: Vec<String> = before
        .iter()
        .filter(|(p, v)| after.get(*p) != Some(v))
        .map(|(p, _)| format!("changed or removed: {p}"))
        .chain(
            after
                .keys()
                .filter(|p| !before.contains_key(*p))
                .map(|p| format!("created: {p}")),
        )
        .collect();
    assert!(changed.is_empty(), "{what}:\n{}", changed.join("\n"));
}

/// The current year (day files live in its folder in the ref).
fn year(w: &World) -> String {
    let tree = w.rgit(&[
        "ls-tree",
        "--name-only",
        "refs/rutter/records:_librarian/sessions",
    ]);
    tree.lines().next().unwrap().to_string()
}

/// `..` names that reach the vault's parent folder: `_librarian/../..`.
fn up_to_parent(name: &[u8]) -> Vec<&[u8]> {
    vec![b"_librarian", b"..", b"..", name]
}

#[test]
fn dot_dot_entries_are_refused_by_git_and_by_sync_itself() {
    let w = World::new();
    let b = w.blob(b"PWNED by the sync remote\n");
    w.forge(&up_to_parent(b"PWNED.md"), "100644", &b);
    let v = w.blob(b"INJECTED FIRST LINE\n");
    w.forge(&up_to_parent(b"victim.txt"), "100644", &v);
    let err = w.assert_refused("`..`, git's object checks");
    assert!(err.contains("fetch.fsckObjects"), "{err}");
    // Objects fetched by the user's own `git fetch` (no object checks) reach sync's check.
    w.plain_fetch();
    let err = w.assert_refused("`..`, sync's check");
    assert!(err.contains("a `.` or `..` name"), "{err}");
    assert!(err.contains("_librarian/.."), "{err}");
    assert_eq!(
        std::fs::read_to_string(w.parent.join("victim.txt")).unwrap(),
        VICTIM
    );
    assert!(!exists(&w.parent.join("PWNED.md")));
    w.clone_and_init("`..` through a clone");
}

#[test]
fn a_diverged_remote_with_dot_dot_is_refused_before_any_merge() {
    let w = World::new();
    let b = w.blob(b"PWNED\n");
    w.forge(&up_to_parent(b"PWNED.md"), "100644", &b);
    w.capture("local only");
    w.plain_fetch();
    let err = w.assert_refused("`..` on a diverged remote");
    assert!(err.contains("a `.` or `..` name"), "{err}");
}

#[test]
fn dot_and_git_names_and_an_absolute_path_are_refused() {
    let w = World::new();
    let b = w.blob(b"#!/bin/sh\ntouch PWNED\n");
    let cases: Vec<(&str, Vec<&[u8]>)> = vec![
        (".", vec![b"_librarian", b".", b"note-identity.md"]),
        (
            ".git",
            vec![b"_librarian", b"..", b".git", b"hooks", b"post-checkout"],
        ),
        (
            ".GIT",
            vec![b"_librarian", b"..", b".GIT", b"hooks", b"post-checkout"],
        ),
        (
            "git~1",
            vec![b"_librarian", b"..", b"git~1", b"hooks", b"post-checkout"],
        ),
        ("a name with /", vec![b"_librarian", b"../../PWNED.md"]),
    ];
    let abs = w.env.root().join("sentinel/abs-created.txt");
    let mut absolute: Vec<&[u8]> = vec![b"_librarian"];
    absolute.extend(std::iter::repeat_n(&b".."[..], 15));
    let parts: Vec<String> = abs
        .iter()
        .skip(1)
        .map(|c| c.to_string_lossy().to_string())
        .collect();
    absolute.extend(parts.iter().map(|p| p.as_bytes()));
    let cases = cases.into_iter().chain([("an absolute path", absolute)]);
    for (what, path) in cases {
        let start = w.remote_tip();
        w.forge(&path, "100644", &b);
        w.plain_fetch();
        let err = w.assert_refused(what);
        assert!(
            err.contains("never a record path") || err.contains("not a record"),
            "{what}: {err}"
        );
        assert!(!exists(&abs), "{what}");
        assert!(
            !exists(&w.env.vault.join(".git/hooks/post-checkout")),
            "{what}"
        );
        w.serve(&start);
    }
}

/// A ref fetched by hand onto a second machine (no reflog, no witness there) is input like a
/// remote: `init` checks its whole history before it writes a file or starts its evidence.
/// Here it holds a tree no remote could even send (git's pack-objects refuses it): a name with
/// NUL, `note-identity.md\0../../x`, which git's tree format reads as `note-identity.md` with
/// the rest taken for its object id.
#[test]
fn a_ref_fetched_by_hand_is_checked_at_init_a_name_holding_nul_included() {
    let w = World::new();
    w.env.git(&["push", "-q", "origin", "main"]);
    let m2 = w.env.root().join("m2/vault");
    w.env.git(&[
        "clone",
        "-q",
        w.remote.to_str().unwrap(),
        m2.to_str().unwrap(),
    ]);
    w.env.git_in(
        &m2,
        &[
            "fetch",
            "-q",
            "origin",
            "refs/rutter/records:refs/rutter/records",
        ],
    );
    let here = Plumb { dir: m2.clone() };
    let tip = w.env.git_in(&m2, &["rev-parse", "refs/rutter/records"]);
    let tip = tip.trim();
    let b = here.blob(b"x\n");
    let tree = here.put(
        Some(&format!("{tip}^{{tree}}")),
        &[b"_librarian", b"note-identity.md\0../../x"],
        "100644",
        &b,
    );
    let forged = here.commit(&tree, &[tip]);
    w.env
        .git_in(&m2, &["update-ref", "refs/rutter/records", &forged]);
    let r = w.env.rutter_in(&m2, &["init"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("never wrote or witnessed"),
        "{}",
        r.stderr
    );
    assert!(!exists(&m2.join("_librarian")), "nothing was written");
    assert!(
        !exists(&m2.join(".git/rutter/tips")),
        "no evidence was started"
    );
    // The ref as fetched by hand, without the forged commit, is taken.
    w.env
        .git_in(&m2, &["update-ref", "refs/rutter/records", tip]);
    let r = w.env.rutter_in(&m2, &["init"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(exists(&m2.join("_librarian/sessions")), "{}", r.stdout);
}

#[test]
fn symlink_gitlink_and_executable_entries_are_refused() {
    let w = World::new();
    let y = year(&w);
    let link = w.blob(b"../../../home/.bashrc");
    let tip = w.remote_tip();
    let exec = w.blob(b"---\n");
    let cases: Vec<(&str, &str, String, String)> = vec![
        ("symlink", "120000", format!("{y}-01-01.md"), link),
        ("gitlink", "160000", format!("{y}-01-02.md"), tip.clone()),
        ("executable", "100755", format!("{y}-01-03.md"), exec),
    ];
    for (what, mode, name, oid) in cases {
        w.serve(&tip);
        w.forge(
            &[b"_librarian", b"sessions", y.as_bytes(), name.as_bytes()],
            mode,
            &oid,
        );
        w.plain_fetch();
        let err = w.assert_refused(what);
        assert!(err.contains(&format!("mode {mode}")), "{what}: {err}");
        assert!(err.contains("unexpected-mode"), "{what}: {err}");
    }
    // The same entry on a second machine: nothing is taken, nothing is written.
    w.clone_and_init("an executable entry through a clone");
}

#[test]
fn junk_files_and_deep_folders_are_refused_without_being_written() {
    let w = World::new();
    let b = w.blob(b"junk\n");
    let entries: Vec<(String, Vec<u8>, String)> = (0..2000)
        .map(|i| {
            (
                "100644".to_string(),
                format!("f{i:05}.md").into_bytes(),
                b.clone(),
            )
        })
        .collect();
    let junk = w.raw_tree(entries);
    w.forge(&[b"_librarian", b"junk"], "40000", &junk);
    let err = w.assert_refused("junk files");
    assert!(err.contains("_librarian/junk"), "{err}");
    assert!(!exists(&w.env.vault.join("_librarian/junk")));
    let mut deep = w.raw_tree(vec![("100644".into(), b"x.md".to_vec(), b.clone())]);
    for _ in 0..200 {
        deep = w.raw_tree(vec![("40000".into(), b"d".to_vec(), deep)]);
    }
    w.forge(&[b"_librarian", b"deep"], "40000", &deep);
    w.assert_refused("deep folders");
    assert!(!exists(&w.env.vault.join("_librarian/deep")));
}

/// The remote's copy of this vault's own day file, from its year folder.
fn own_day_file(w: &World) -> (Vec<Vec<u8>>, Vec<u8>) {
    let y = year(w);
    let names = w.rgit(&[
        "ls-tree",
        "--name-only",
        &format!("refs/rutter/records:_librarian/sessions/{y}"),
    ]);
    let name = names.lines().last().unwrap().to_string();
    let text = w.rgit(&[
        "show",
        &format!("refs/rutter/records:_librarian/sessions/{y}/{name}"),
    ]);
    let path = vec![
        b"_librarian".to_vec(),
        b"sessions".to_vec(),
        y.into_bytes(),
        name.into_bytes(),
    ];
    (path, format!("{text}\n").into_bytes())
}

fn parts(path: &[Vec<u8>]) -> Vec<&[u8]> {
    path.iter().map(Vec::as_slice).collect()
}

#[test]
fn a_history_that_deletes_or_changes_committed_lines_is_refused() {
    let w = World::new();
    w.capture("KEEP ME");
    w.capture("third");
    let r = w.env.rutter(&["sync"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (path, text) = own_day_file(&w);
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains("KEEP ME"), "{text}");
    let start = w.remote_tip();
    let without: String = text
        .lines()
        .filter(|l| !l.contains("KEEP ME"))
        .map(|l| format!("{l}\n"))
        .collect();
    let changed = text.replace("KEEP ME", "CHANGED");
    for (what, bytes) in [
        ("a deleted line", without.clone()),
        ("a changed line", changed),
        ("a torn append", format!("{text}{{\"half\": ")),
    ] {
        w.serve(&start);
        let b = w.blob(bytes.as_bytes());
        w.forge(&parts(&path), "100644", &b);
        let err = w.assert_refused(what);
        assert!(err.contains("history-rewrite"), "{what}: {err}");
    }
    // A commit that deletes the whole day file.
    w.serve(&start);
    let tip = w.remote_tip();
    let year_tree = w.rgit(&[
        "rev-parse",
        &format!("{tip}:_librarian/sessions/{}", year(&w)),
    ]);
    let kept: Vec<_> = w
        .ls(&year_tree)
        .into_iter()
        .filter(|e| e.1 != path[3])
        .collect();
    let emptied = w.raw_tree(kept);
    w.forge(&[b"_librarian", b"sessions", &path[2]], "40000", &emptied);
    let err = w.assert_refused("a deleted day file");
    assert!(err.contains("history-delete"), "{err}");
    let working = std::fs::read_to_string(w.env.vault.join(format!(
        "_librarian/sessions/{}",
        String::from_utf8_lossy(&path[3])
    )))
    .unwrap();
    assert!(
        working.contains("KEEP ME"),
        "the working file keeps its line"
    );
}

#[test]
fn merges_that_drop_a_line_or_hide_a_deletion_are_refused() {
    let w = World::new();
    w.capture("KEEP ME");
    assert_eq!(w.env.rutter(&["sync"]).code, 0);
    let start = w.remote_tip();
    let (path, text) = own_day_file(&w);
    let text = String::from_utf8(text).unwrap();
    let without: String = text
        .lines()
        .filter(|l| !l.contains("KEEP ME"))
        .map(|l| format!("{l}\n"))
        .collect();
    // A side branch that only adds a file, and a merge of it with the tip whose tree drops the
    // line: every commit but the merge is clean.
    let binding = r#"- 2026-12-02T08:00:00.000Z exact-hash: a.md -> b.md (h) <!-- rutter:binding {"id":"1","from":"a.md","to":"b.md","hash":"h","detected":"exact-hash","ts":"2026-12-02T08:00:00.000Z"} -->"#;
    let ledger = format!("---\ncollection: librarian.note-identity\nschema: note-identity@2\n---\n# Note identity bindings\n\n{binding}\n");
    let side_blob = w.blob(ledger.as_bytes());
    let side_tree = w.put(
        Some(&format!("{start}^{{tree}}")),
        &[b"_librarian", b"note-identity.md"],
        "100644",
        &side_blob,
    );
    let side = w.commit(&side_tree, &[&start]);
    let dropped = w.blob(without.as_bytes());
    let merged_tree = w.put(Some(&side_tree), &parts(&path), "100644", &dropped);
    let merge = w.commit(&merged_tree, &[&start, &side]);
    w.serve(&merge);
    let err = w.assert_refused("a merge that drops a line");
    assert!(err.contains("merge-lost-lines"), "{err}");
    // A remote that is not a descendant of this vault (it captured meanwhile) and hides the
    // deletion in a commit that a merge then joins.
    w.capture("local after");
    let deleting_tree = w.put(
        Some(&format!("{start}^{{tree}}")),
        &parts(&path),
        "100644",
        &dropped,
    );
    let deleting = w.commit(&deleting_tree, &[&start]);
    let hidden = w.commit(&deleting_tree, &[&deleting, &side]);
    w.serve(&hidden);
    let err = w.assert_refused("a deletion hidden behind a merge");
    assert!(
        err.contains("history-rewrite") || err.contains("merge-lost-lines"),
        "{err}"
    );
}

#[test]
fn a_forged_local_ref_is_never_written_outside_the_overlay_and_verify_names_it() {
    let w = World::new();
    let y = year(&w);
    let (b, link) = (w.blob(b"REMOTE BYTES\n"), w.blob(b"../../home/.bashrc"));
    let tip = w.remote_tip();
    w.forge(&up_to_parent(b"victim.txt"), "100644", &b);
    w.forge(&[b"_librarian", b"junk", b"x.md"], "100644", &b);
    w.forge(
        &[
            b"_librarian",
            b"sessions",
            y.as_bytes(),
            format!("{y}-01-01.md").as_bytes(),
        ],
        "160000",
        &tip,
    );
    w.forge(&[b"_librarian", b"note-identity.md"], "120000", &link);
    let misplaced = format!("{}-01-01.md", y.parse::<u32>().unwrap() + 1);
    w.forge(
        &[
            b"_librarian",
            b"sessions",
            y.as_bytes(),
            misplaced.as_bytes(),
        ],
        "100644",
        &b,
    );
    // The forged history lands in the local ref by hand (no sync): readers and writers must
    // still hold.
    w.plain_fetch();
    let forged = w.remote_tip();
    w.env.git(&["update-ref", "refs/rutter/records", &forged]);
    std::fs::remove_file(w.parent.join("victim.txt")).unwrap();
    let before = w.snapshot();
    let r = run_with_stdin(w.env.cmd().arg("restore"), b"");
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let mut after = w.snapshot();
    after.retain(|p, _| !p.starts_with("parent/vault/.git/rutter"));
    let mut before = before;
    before.retain(|p, _| !p.starts_with("parent/vault/.git/rutter"));
    assert_same("restore on a forged ref", &before, &after);
    for args in [&["recent", "--no-pager"][..], &["log", "--no-pager"]] {
        let r = w.env.rutter(args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert!(r.stdout.contains("base"), "{args:?}: {}", r.stdout);
    }
    let v = w.env.rutter(&["verify", "--full", "--json"]);
    assert_eq!(v.code, 1, "{}", v.stdout);
    let kinds = finding_kinds(&v.stdout);
    for kind in ["unexpected-path", "unexpected-mode", "misplaced"] {
        assert!(kinds.iter().any(|k| k == kind), "{kind}: {kinds:?}");
    }
    for named in [
        "_librarian/..",
        "_librarian/junk",
        &format!("{y}-01-01.md"),
        "note-identity.md",
        &misplaced,
    ] {
        assert!(v.stdout.contains(named), "{named}: {}", v.stdout);
    }
    assert!(
        !kinds.iter().any(|k| k == "deleted"),
        "a misplaced day file is not deleted: {kinds:?}"
    );
}

/// The header of a new `@2` day file of `day` (spec/record-format.md).
fn day_header(day: &str) -> String {
    format!(
        "---\ncollection: librarian.sessions\nschema: session-record@2\nday: '{day}'\n---\n# Sessions - {day}\n\n"
    )
}

/// An entry line of `day` (its id `n` seconds after midnight) with this summary.
fn entry_line(day: &str, n: u32, summary: &str) -> String {
    let compact = day.replace('-', "");
    let (h, m, s) = (n / 3600, n / 60 % 60, n % 60);
    let json = serde_json::json!({
        "id": format!("{compact}T{h:02}{m:02}{s:02}000Z-zz-0001"),
        "session_id": "remote",
        "time": format!("{day}T{h:02}:{m:02}:{s:02}.000Z"),
        "summary": summary,
        "refs": [],
    });
    format!("- {h:02}:{m:02}:{s:02} — remote <!-- rutter:entry {json} -->")
}

impl World {
    /// The day of this vault's own capture, as the remote holds it.
    fn day(&self) -> String {
        let (path, _) = own_day_file(self);
        String::from_utf8_lossy(&path[3])[..10].to_string()
    }

    /// The remote's tip with a new file at `_librarian/sessions/<year>/<name>` holding `bytes`,
    /// committed on it and served.
    fn forge_day_file(&self, name: &str, bytes: &[u8]) -> String {
        let b = self.blob(bytes);
        let y = year(self);
        self.forge(
            &[b"_librarian", b"sessions", y.as_bytes(), name.as_bytes()],
            "100644",
            &b,
        )
    }

    /// Syncs a remote that breaks the record grammar: refused as out-of-grammar, the local ref,
    /// the working files and the remote unchanged, nothing written where the file would go.
    fn assert_out_of_grammar(&self, what: &str, written: &str, rule: &str) {
        let remote = self.remote_tip();
        let err = self.assert_refused(what);
        assert!(err.contains("(out-of-grammar)"), "{what}: {err}");
        assert!(err.contains(rule), "{what}: {err}");
        assert_eq!(self.remote_tip(), remote, "{what}: the remote moved");
        assert!(
            !exists(&self.env.vault.join(written)),
            "{what}: {written} was written"
        );
    }
}

/// An entry line from a remote keeps the capture's bounds: a summary of 2,001 characters is
/// refused (counted in `char`s, as capture cuts), one of 2,000 is taken.
#[test]
fn a_summary_longer_than_a_capture_keeps_is_refused() {
    let w = World::new();
    let (start, day) = (w.remote_tip(), w.day());
    let name = format!("{day}.zz-0001.md");
    let written = format!("_librarian/sessions/{name}");
    let long = format!(
        "{}{}\n",
        day_header(&day),
        entry_line(&day, 1, &"é".repeat(2001))
    );
    w.forge_day_file(&name, long.as_bytes());
    w.assert_out_of_grammar(
        "a 2,001-character summary",
        &written,
        "an entry line with a summary of 2001 characters, over the 2000 a capture keeps",
    );
    w.serve(&start);
    let most = format!(
        "{}{}\n",
        day_header(&day),
        entry_line(&day, 1, &"é".repeat(2000))
    );
    w.forge_day_file(&name, most.as_bytes());
    let r = w.env.rutter(&["sync"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(exists(&w.env.vault.join(&written)));
}

/// A line longer than the journal's bound (1 MiB) is refused before it is parsed.
#[test]
fn a_line_longer_than_a_record_line_may_be_is_refused() {
    let w = World::new();
    let day = w.day();
    let name = format!("{day}.zz-0001.md");
    let text = format!(
        "{}{}\n",
        day_header(&day),
        entry_line(&day, 1, &"B".repeat(1 << 20))
    );
    w.forge_day_file(&name, text.as_bytes());
    w.assert_out_of_grammar(
        "a line over 1 MiB",
        &format!("_librarian/sessions/{name}"),
        "over the 1048576 a record line may hold",
    );
}

/// A new day file starts with the `@2` header of its day (or is an `@1` file) and ends with a
/// newline; a junk blob is neither.
#[test]
fn a_day_file_without_its_header_or_final_newline_or_of_junk_is_refused() {
    let w = World::new();
    let (start, day) = (w.remote_tip(), w.day());
    let y = year(&w);
    let name = format!("{day}.zz-0001.md");
    let written = format!("_librarian/sessions/{name}");
    let line = entry_line(&day, 1, "fine");
    let cases = [
        (
            "no header",
            format!("{line}\n").into_bytes(),
            "starts with the `session-record@2` header",
        ),
        (
            "another day's header",
            format!("{}{line}\n", day_header(&format!("{y}-01-01"))).into_bytes(),
            "starts with the `session-record@2` header",
        ),
        (
            "no final newline",
            format!("{}{line}", day_header(&day)).into_bytes(),
            "does not end with a newline",
        ),
        (
            "a line that is no record",
            format!("{}{line}\nPWNED\n", day_header(&day)).into_bytes(),
            "added line 9 of _librarian/sessions/",
        ),
        (
            "a malformed entry",
            format!(
                "{}- x <!-- rutter:entry {{\"id\":1}} -->\n",
                day_header(&day)
            )
            .into_bytes(),
            "an entry line that does not parse",
        ),
        (
            "a junk blob",
            vec![b'a'; 2 << 20],
            "does not end with a newline",
        ),
    ];
    for (what, bytes, rule) in cases {
        w.serve(&start);
        w.forge_day_file(&name, &bytes);
        w.assert_out_of_grammar(what, &written, rule);
    }
    // A line appended to this vault's own day file is held to the same grammar.
    w.serve(&start);
    let (path, text) = own_day_file(&w);
    let appended = [text, b"- 00:00:01 \xe2\x80\x94 hand-typed note\n".to_vec()].concat();
    let b = w.blob(&appended);
    w.forge(&parts(&path), "100644", &b);
    let err = w.assert_refused("an appended line that is no record");
    assert!(err.contains("(out-of-grammar)"), "{err}");
    w.clone_and_init("a day file without its header through a clone");
}

/// A use-log event a remote adds is a JSON object stamped at a plausible time: not in the year
/// 9999 (F-10: it emptied the timeline's chart), not before 2000; one stamped now is taken.
#[test]
fn use_log_events_from_the_future_or_the_distant_past_are_refused() {
    let w = World::new();
    let start = w.remote_tip();
    let use_log = "_librarian/stateful-use.jsonl";
    let (_, text) = own_day_file(&w);
    let text = String::from_utf8(text).unwrap();
    let now = text.split("\"time\":\"").nth(1).unwrap()[..24].to_string();
    let event = |ts: &str| format!("{{\"ts\":\"{ts}\",\"kind\":\"librarian-recent\"}}\n");
    let cases = [
        (
            "an event of the year 9999",
            event("9999-12-31T23:59:59.999Z"),
            "is more than a day after this machine's clock",
        ),
        (
            "an event of 1970",
            event("1970-01-01T00:00:00.000Z"),
            "is before 2000",
        ),
        (
            "a line that is no event",
            format!("{}not json\n", event(&now)),
            "added line 2 of _librarian/stateful-use.jsonl outside the record grammar: not a JSON object",
        ),
    ];
    for (what, bytes, rule) in cases {
        w.serve(&start);
        let b = w.blob(bytes.as_bytes());
        w.forge(&[b"_librarian", b"stateful-use.jsonl"], "100644", &b);
        w.assert_out_of_grammar(what, use_log, rule);
    }
    w.serve(&start);
    let b = w.blob(event(&now).as_bytes());
    w.forge(&[b"_librarian", b"stateful-use.jsonl"], "100644", &b);
    let r = w.env.rutter(&["sync"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(w.env.read(use_log), event(&now));
}

/// An entry a remote added under the id of a local one (a history of its own, merged by sync):
/// `log ID` names, for each line, the commit that added that very line.
#[test]
fn log_names_the_commit_that_added_each_line_also_a_remotes() {
    let w = World::new();
    w.capture("the real decision");
    let line = w
        .env
        .all_records()
        .lines()
        .find(|l| l.contains("the real decision"))
        .unwrap()
        .to_string();
    let id = line
        .split("\"id\":\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_string();
    let day = &id[..4];
    let day = format!("{day}-{}-{}", &id[4..6], &id[6..8]);
    let forged = format!(
        "---\ncollection: librarian.sessions\nschema: session-record@2\nday: '{day}'\n---\n# Sessions - {day}\n\n- 01:00:00 — FORGED <!-- rutter:entry {{\"id\":\"{id}\",\"session_id\":\"s2\",\"time\":\"{day}T01:00:00.000Z\",\"summary\":\"FORGED\",\"refs\":[]}} -->\n"
    );
    let b = w.blob(forged.as_bytes());
    let name = format!("{day}.zz-0001.md");
    let tree = w.put(
        None,
        &[
            b"_librarian",
            b"sessions",
            &day.as_bytes()[..4],
            name.as_bytes(),
        ],
        "100644",
        &b,
    );
    let theirs = w.commit(&tree, &[]);
    w.serve(&theirs);
    let r = w.env.rutter(&["sync"]);
    assert_eq!(
        r.code, 0,
        "an unrelated history that only adds is taken: {}",
        r.stderr
    );
    // The merge's first parent is this vault's capture of the real decision.
    let mine = w.env.git(&["rev-parse", "refs/rutter/records^1"]);
    let log = w.env.rutter(&["log", "--no-pager", &id]);
    assert_eq!(log.code, 0, "{}", log.stderr);
    let row = |needle: &str| {
        log.stdout
            .lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle}: {}", log.stdout))
            .to_string()
    };
    assert!(row("FORGED").starts_with(&theirs[..7]), "{}", log.stdout);
    let real = row("the real decision");
    assert!(real.starts_with(&mine[..7]), "{}\n{mine}", log.stdout);
    assert!(!real.starts_with(&theirs[..7]), "{}", log.stdout);
    // A retraction names an id: with two entries carrying it, it is refused, naming both.
    let r = run_with_stdin(
        w.env.cmd().args(["retract", &id, "--reason", "which one?"]),
        b"",
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("2 recorded entries carry the id")
            && r.stderr.contains("FORGED")
            && r.stderr.contains("the real decision"),
        "{}",
        r.stderr
    );
}

/// Names a remote could use, most of them hostile.
fn hostile_name() -> impl Strategy<Value = Vec<u8>> {
    prop::sample::select(vec![
        b"..".to_vec(),
        b".".to_vec(),
        b".git".to_vec(),
        b".Git".to_vec(),
        b"GIT~1".to_vec(),
        b"a/b".to_vec(),
        b"../x".to_vec(),
        b"junk".to_vec(),
        b"2026-01-01.md".to_vec(),
        b"note-identity.md".to_vec(),
        b"sessions".to_vec(),
        b"\x1b[2J".to_vec(),
        b"\xff".to_vec(),
    ])
}

/// A hostile entry below `_librarian/`: a path of 1 to 4 names and a mode. At least one name
/// or the mode is hostile, or the path is none a record file has.
fn hostile_entry() -> impl Strategy<Value = (Vec<Vec<u8>>, &'static str)> {
    let modes = prop::sample::select(vec!["100644", "100755", "120000", "160000"]);
    (prop::collection::vec(hostile_name(), 1..4), modes)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10, ..ProptestConfig::default() })]

    /// Random hostile trees served by a bare remote never move the ref and never write
    /// outside `_librarian/` (nor inside it).
    #[test]
    fn hostile_trees_from_a_remote_never_move_the_ref_or_reach_the_disk(
        entries in prop::collection::vec(hostile_entry(), 1..4),
        fetched_first in any::<bool>(),
    ) {
        let benign = |(names, mode): &(Vec<Vec<u8>>, &str)| {
            *mode == "100644"
                && (names == &[b"note-identity.md".to_vec()]
                    || names == &[b"sessions".to_vec(), b"2026-01-01.md".to_vec()])
        };
        prop_assume!(entries.iter().any(|e| !benign(e)));
        let w = World::new();
        let content = w.blob(b"PWNED\n");
        let gitlink = w.remote_tip();
        for (names, mode) in &entries {
            let mut path: Vec<&[u8]> = vec![b"_librarian"];
            path.extend(names.iter().map(Vec::as_slice));
            let oid = if *mode == "160000" { &gitlink } else { &content };
            w.forge(&path, mode, oid);
        }
        if fetched_first {
            w.plain_fetch();
        }
        w.assert_refused(&format!("{entries:?}"));
        prop_assert!(!exists(&w.parent.join("PWNED")));
    }
}

/// A remote whose `refs/rutter/records` was pointed at a blob or a tree by hand: sync refuses
/// it by what it is (not git's "not a committish"), changes nothing and `status` names it;
/// `sync --setup` of such a remote refuses it too.
#[test]
fn a_remote_record_ref_that_is_no_commit_is_refused_by_name() {
    let w = World::new();
    let blob = w.blob(b"hi\n");
    let tree = w.raw_tree(vec![]);
    for (kind, oid) in [("blob", &blob), ("tree", &tree)] {
        w.serve(oid);
        let err = w.assert_refused(kind);
        assert!(
            err.contains(&format!(
                "its refs/rutter/records points at a {kind}, not a commit"
            )),
            "{err}"
        );
    }
    let r = w.env.rutter(&["sync", "--setup", "origin"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("points at a tree, not a commit"),
        "{}",
        r.stderr
    );
}
