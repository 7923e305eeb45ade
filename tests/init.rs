//! `git rutter init` on new, existing, reference-written and cloned vaults.

use crate::common;
use common::*;

const V1_DAY: &str = "---\ncollection: librarian.sessions\nschema: session-record@1\nday: '2026-10-09'\nsessions:\n  - id: 20261009T221653000Z\n    session_id: abc\n    time: '2026-10-09T22:16:53.000Z'\n    summary: 'Decided to go fortnightly: one long essay per issue.'\n    refs:\n      - path: Notes/a.md\n        hash: 'sha256:9a5c0f3ba40d4b35a3f1bdf1fd0e5bd0b7c1b3c1d2e0f0a0b0c0d0e0f0a0b0c0'\n    workspace:\n      cwd: /home/me/newsletter\n      project: newsletter-notes\nrefs:\n  - path: Notes/a.md\n    hash: 'sha256:9a5c0f3ba40d4b35a3f1bdf1fd0e5bd0b7c1b3c1d2e0f0a0b0c0d0e0f0a0b0c0'\n---\n# Sessions - 2026-10-09\n\n- 22:16:53 [newsletter-notes] - Decided to go fortnightly: one long essay per issue. (refs: Notes/a.md@sha256:9a5c0f3)\n";

#[test]
fn init_makes_a_repository_without_touching_branches_and_adopts_records() {
    let env = Env::bare();
    env.write("Notes/a.md", NOTE_A);
    env.write("_librarian/sessions/2026-10-09.md", V1_DAY);
    env.write(
        "_librarian/sessions/2026-10-09.md.tmp-123-456",
        "stray temp file",
    );
    env.write(
        "_librarian/positions/2026-08.md",
        "---\nschema: position-event@1-provisional\n---\n",
    );
    env.write(
        "_librarian/stateful-use.jsonl",
        "{\"ts\":\"2026-10-09T00:00:00.000Z\",\"kind\":\"librarian-recent\"}\n",
    );
    let r = env.rutter(&["init"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("Initialised a git repository"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("adopting 3 existing record file(s)"),
        "{}",
        r.stdout
    );
    let listing = env.git(&["ls-tree", "-r", "--name-only", "refs/rutter/records"]);
    assert_eq!(
        listing.lines().collect::<Vec<_>>(),
        [
            "_librarian/positions/2026-08.md",
            "_librarian/sessions/2026/2026-10-09.md",
            "_librarian/stateful-use.jsonl"
        ]
    );
    assert_eq!(
        env.git(&[
            "show",
            "refs/rutter/records:_librarian/sessions/2026/2026-10-09.md"
        ]),
        V1_DAY
    );
    assert!(
        std::process::Command::new("git")
            .args(["rev-parse", "--verify", "-q", "HEAD"])
            .current_dir(&env.vault)
            .env("HOME", &env.home)
            .output()
            .unwrap()
            .stdout
            .is_empty(),
        "no commit on the user's branch"
    );
    assert!(std::fs::read_to_string(env.vault.join(".git/info/exclude"))
        .unwrap()
        .contains("/_librarian/"));
    assert!(!env.git(&["status", "--porcelain"]).contains("_librarian"));
    let again = env.rutter(&["init"]);
    assert_eq!(again.code, 0);
    assert!(again.stdout.contains("already exists"), "{}", again.stdout);
    assert_eq!(
        env.git(&["rev-list", "--count", "refs/rutter/records"])
            .trim(),
        "1"
    );
    let exclude = std::fs::read_to_string(env.vault.join(".git/info/exclude")).unwrap();
    assert_eq!(exclude.matches("/_librarian/").count(), 1, "idempotent");
}

/// A capture into a git repository `init` never prepared starts the ref, and keeps the
/// records out of `git status` (and of a `git add .`) as `init` does.
#[test]
fn a_capture_that_starts_the_ref_keeps_the_records_out_of_git_status() {
    let env = Env::bare();
    env.write("Notes/a.md", NOTE_A);
    env.git(&["init", "-q", "-b", "main"]);
    env.git(&["add", "Notes"]);
    env.git(&["commit", "-qm", "notes"]);
    let r = env.capture_at("2026-11-30T10:00:00.000Z", "Decided without init.", &[]);
    assert!(r.stderr.contains("to refs/rutter/records."), "{}", r.stderr);
    assert!(!env.git(&["status", "--porcelain"]).contains("_librarian"));
    let r = env.rutter(&["init"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let exclude = std::fs::read_to_string(env.vault.join(".git/info/exclude")).unwrap();
    assert_eq!(exclude.matches("/_librarian/").count(), 1, "{exclude}");
}

#[test]
fn a_reference_written_day_keeps_its_bytes_and_gains_v2_lines() {
    let env = Env::bare();
    env.write("Notes/a.md", NOTE_A);
    let today = "_librarian/sessions/2026-11-30.md";
    env.write(today, &V1_DAY.replace("2026-10-09", "2026-11-30"));
    env.rutter(&["init"]);
    let before = env.read(today);
    let mut c = env.cmd();
    c.env("RUTTER_TIMESTAMP", "2026-11-30T10:00:00.000Z")
        .arg("capture");
    let r = run_with_stdin(
        &mut c,
        br#"{"summary":"A new decision after the old one.","session_id":"abc"}"#,
    );
    assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
    let after = env.read(today);
    assert!(after.starts_with(&before));
    assert!(
        after[before.len()..].starts_with("- 10:00:00 — A new decision"),
        "{after}"
    );
    let out = env.rutter(&["recent", "--all"]).stdout;
    assert!(
        out.contains("one session, 2 steps") || out.contains("Decided to go fortnightly"),
        "{out}"
    );
    assert!(out.contains("A new decision after the old one."), "{out}");
    assert_eq!(
        env.git(&["show", &format!("refs/rutter/records:{}", in_ref(today))]),
        after
    );
}

/// `init` reads the adopted day files' dedupe keys without building their entries (the `@1`
/// fast path's borrowed values, the key written straight from them): a capture that repeats an
/// entry of a reference-written file is still a duplicate, answered from the shard `init`
/// wrote, and a new one is not.
#[test]
fn a_capture_repeating_an_adopted_reference_entry_is_a_duplicate() {
    let env = Env::bare();
    env.write("Notes/a.md", NOTE_A);
    env.write("_librarian/sessions/2026-10-09.md", V1_DAY);
    let r = env.rutter(&["init"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let shards = env.vault.join(".git/rutter/dedupe/shards");
    let written: Vec<_> = std::fs::read_dir(&shards).unwrap().collect();
    assert_eq!(written.len(), 1, "one session, one shard");
    let capture = |summary: &str| {
        let payload =
            serde_json::json!({"summary": summary, "refs": ["Notes/a.md"], "session_id": "abc"});
        run_with_stdin(env.cmd().arg("capture"), payload.to_string().as_bytes())
    };
    let again = capture("Decided to go fortnightly: one long essay per issue.");
    assert!(
        again.stderr.contains("directive unchanged"),
        "{}",
        again.stderr
    );
    assert_eq!(entry_lines(&env.all_records()), 0);
    let new = capture("Decided to go weekly after all.");
    assert!(new.stderr.contains("captured 1 entry"), "{}", new.stderr);
    assert_eq!(entry_lines(&env.all_records()), 1);
}

#[test]
fn a_user_who_tracks_the_overlay_is_not_excluded() {
    let env = Env::bare();
    env.write("_librarian/sessions/2026-10-09.md", V1_DAY);
    env.git(&["init", "-q"]);
    env.git(&["add", "_librarian"]);
    env.git(&["commit", "-qm", "track records"]);
    let r = env.rutter(&["init"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        !std::fs::read_to_string(env.vault.join(".git/info/exclude"))
            .unwrap_or_default()
            .contains("/_librarian/")
    );
}

#[test]
fn init_on_a_clone_restores_missing_records_and_never_overwrites() {
    let env = Env::git_vault();
    env.rutter(&[
        "capture",
        "--summary",
        "Recorded on the first machine.",
        "--session",
        "S",
    ]);
    let day = env.day_files()[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .to_string();
    let clone = env.root().join("clone");
    env.git(&[
        "clone",
        "-q",
        env.vault.to_str().unwrap(),
        clone.to_str().unwrap(),
    ]);
    let git_in_clone = |args: &[&str]| {
        let o = std::process::Command::new("git")
            .args(args)
            .current_dir(&clone)
            .env("HOME", &env.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    git_in_clone(&[
        "fetch",
        "-q",
        "origin",
        "refs/rutter/records:refs/rutter/records",
    ]);
    std::fs::create_dir_all(clone.join("_librarian")).unwrap();
    std::fs::write(
        clone.join("_librarian/stateful-use.jsonl"),
        "local, different\n",
    )
    .unwrap();
    env.write(
        "_librarian/stateful-use.jsonl",
        "{\"ts\":\"2026-11-30T07:00:00.000Z\",\"kind\":\"librarian-recent\"}\n",
    );
    env.rutter(&["commit"]);
    git_in_clone(&[
        "fetch",
        "-q",
        "origin",
        "+refs/rutter/records:refs/rutter/records",
    ]);
    let r: Run = std::process::Command::new(BIN)
        .args(["--vault", clone.to_str().unwrap(), "init"])
        .env("HOME", &env.home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap()
        .into();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains(&format!("Restored _librarian/sessions/{day}")),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr.contains("stateful-use.jsonl differs"),
        "{}",
        r.stderr
    );
    assert_eq!(
        std::fs::read_to_string(clone.join(format!("_librarian/sessions/{day}"))).unwrap(),
        env.read(&format!("_librarian/sessions/{day}"))
    );
    assert_eq!(
        std::fs::read_to_string(clone.join("_librarian/stateful-use.jsonl")).unwrap(),
        "local, different\n"
    );
}

#[test]
fn init_global_records_the_vault_for_hooks() {
    let env = Env::bare();
    let r = env.rutter(&["init", "--global"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let cfg = std::fs::read_to_string(env.home.join(".gitconfig")).unwrap();
    assert!(
        cfg.contains("[rutter]") && cfg.contains(&env.vault.display().to_string()),
        "{cfg}"
    );
    let mut c = std::process::Command::new(BIN);
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .env("HOME", &env.home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .arg("capture");
    let r = run_with_stdin(&mut c, br#"{"summary":"Found through git config."}"#);
    assert!(r.stderr.contains("captured 1 entry"), "{}", r.stderr);
}

#[test]
fn init_only_appends_to_an_exclude_file_it_cannot_read_as_text() {
    let env = Env::bare();
    env.git(&["init", "-q", "-b", "main"]);
    let exclude = env.vault.join(".git/info/exclude");
    let mine: &[u8] = b"# mine\n*.swp\n\xff\xfe latin-1 \xe9t\xe9";
    std::fs::write(&exclude, mine).unwrap();
    let r = env.rutter(&["init"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let after = std::fs::read(&exclude).unwrap();
    assert!(
        after.starts_with(mine),
        "the user's bytes stay, byte for byte"
    );
    assert_eq!(
        &after[mine.len()..],
        b"\n# rutter: records live in refs/rutter/records\n/_librarian/\n"
    );
    let again = env.rutter(&["init"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(
        std::fs::read(&exclude).unwrap(),
        after,
        "a second init adds nothing"
    );
}

/// Clones the fixture's vault (a plain `git clone`: the records ref does not come along).
fn plain_clone(env: &Env, name: &str) -> std::path::PathBuf {
    let clone = env.root().join(name);
    env.git(&[
        "clone",
        "-q",
        env.vault.to_str().unwrap(),
        clone.to_str().unwrap(),
    ]);
    clone
}

#[test]
fn init_on_a_fresh_clone_fetches_the_records_and_verifies_clean() {
    let env = Env::git_vault();
    for (ts, s) in [
        ("2026-11-29T09:00:00.000Z", "Decided on the first machine."),
        (
            "2026-11-30T09:00:00.000Z",
            "Decided again on the first machine.",
        ),
    ] {
        env.capture_at(ts, s, &["Notes/a.md"]);
    }
    let clone = plain_clone(&env, "clone");
    let r = env.rutter_in(&clone, &["init"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let tip = env
        .git(&["rev-parse", "refs/rutter/records"])
        .trim()
        .to_string();
    assert!(
        r.stdout.contains(&format!(
            "Started refs/rutter/records at the records fetched from origin ({}).\n",
            &tip[..12]
        )),
        "{}",
        r.stdout
    );
    // One line says where the ref started: no "already exists" after it.
    assert!(!r.stdout.contains("already exists"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("Restored _librarian/sessions/2026-11-29.md"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("start at"), "{}", r.stdout);
    // The second machine is told that its captures stay here until it syncs, and how.
    let told = "Captures made here stay on this machine until it syncs with origin: run `git rutter sync --setup origin`";
    assert!(r.stdout.contains(told), "{}", r.stdout);
    let status = env.rutter_in(&clone, &["status", "--json"]);
    let status: common::json::Status = common::json::decode(&status.stdout);
    let record = status.record.expect("a record");
    assert!(record.sync.is_none());
    assert_eq!(record.record_remotes, ["origin"]);
    let status = env.rutter_in(&clone, &["status"]);
    assert!(
        status.stdout.contains(
            "sync:     not set up; origin holds this vault's records, and captures made here stay on this machine (run `git rutter sync --setup origin`)"
        ),
        "{}",
        status.stdout
    );
    assert_eq!(
        env.git_in(&clone, &["rev-parse", "refs/rutter/records"])
            .trim(),
        tip
    );
    let verify = env.rutter_in(&clone, &["verify"]);
    assert_eq!(
        verify.code, 0,
        "a fresh clone verifies clean: {}{}",
        verify.stdout, verify.stderr
    );
    let recent = env.rutter_in(&clone, &["recent"]);
    assert!(
        recent.stdout.contains("Decided on the first machine."),
        "{}",
        recent.stdout
    );
    assert!(
        recent
            .stdout
            .contains("Decided again on the first machine."),
        "{}",
        recent.stdout
    );
    // A capture on the clone extends the fetched history; verify stays clean.
    let r = env.rutter_in(
        &clone,
        &[
            "--vault",
            ".",
            "capture",
            "--summary",
            "On the clone.",
            "--session",
            "C",
        ],
    );
    assert!(r.stderr.contains("committed"), "{}", r.stderr);
    assert_eq!(env.rutter_in(&clone, &["verify"]).code, 0);
    let again = env.rutter_in(&clone, &["init"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(
        !again.stdout.contains("fetched from") && !again.stdout.contains("start at"),
        "{}",
        again.stdout
    );
    // Once it syncs, status shows the sync remote instead.
    let setup = env.rutter_in(&clone, &["sync", "--setup", "origin"]);
    assert_eq!(setup.code, 0, "{}{}", setup.stdout, setup.stderr);
    let status = env.rutter_in(&clone, &["status", "--json"]);
    let status: common::json::Status = common::json::decode(&status.stdout);
    let record = status.record.expect("a record");
    assert_eq!(record.sync.expect("the sync remote").remote, "origin");
    assert!(record.record_remotes.is_empty());
}

#[test]
fn a_clone_whose_records_were_fetched_by_hand_starts_its_evidence_at_init() {
    let env = Env::git_vault();
    env.capture_at("2026-11-30T09:00:00.000Z", "Decided before the clone.", &[]);
    let clone = plain_clone(&env, "clone");
    env.git_in(
        &clone,
        &[
            "fetch",
            "-q",
            "origin",
            "refs/rutter/records:refs/rutter/records",
        ],
    );
    let r = env.rutter_in(&clone, &["init"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("start at"), "{}", r.stdout);
    let verify = env.rutter_in(&clone, &["verify"]);
    assert_eq!(verify.code, 0, "{}{}", verify.stdout, verify.stderr);
    let reflog = env.git_in(&clone, &["reflog", "show", "refs/rutter/records"]);
    assert!(reflog.contains("evidence starts at"), "{reflog}");
}

#[test]
fn a_vault_with_a_witness_log_never_gets_a_new_reflog_papered_over() {
    let env = Env::git_vault();
    env.capture_at("2026-11-30T09:00:00.000Z", "Decided.", &[]);
    std::fs::remove_file(env.vault.join(".git/logs/refs/rutter/records")).unwrap();
    let r = env.rutter(&["init"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stdout.contains("start at"), "{}", r.stdout);
    let verify = env.rutter(&["verify"]);
    assert_eq!(
        verify.code, 1,
        "the missing reflog stays a finding: {}",
        verify.stdout
    );
    assert!(
        verify.stdout.contains("ref-unverifiable"),
        "{}",
        verify.stdout
    );
}

#[test]
fn a_clone_of_a_remote_without_records_starts_its_own() {
    let env = Env::bare();
    env.write("Notes/a.md", "# A\n");
    env.git(&["init", "-q", "-b", "main"]);
    env.git(&["add", "Notes"]);
    env.git(&["commit", "-qm", "notes"]);
    let clone = plain_clone(&env, "clone");
    let r = env.rutter_in(&clone, &["init"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stdout.contains("fetched from"), "{}", r.stdout);
    assert!(
        r.stdout.contains("Created refs/rutter/records"),
        "{}",
        r.stdout
    );
    // No remote ref is not a problem; the one line is that hooks find no vault yet (none is
    // configured here), with what makes this one theirs.
    assert_eq!(
        r.stderr,
        "git-rutter: note: hooks and the MCP server find no vault yet (neither LIBRARIAN_VAULT_PATH nor git config --global rutter.vault is set), so nothing is captured; run `git rutter init --global` here to make them use this one.\n"
    );
    assert_eq!(env.rutter_in(&clone, &["verify"]).code, 0);
}

/// The adoption's blobs are written as one pack (issue 13) that real `git` accepts whole:
/// `fsck --strict`, `verify-pack -v`, and every file read back through the documented path.
#[test]
fn the_adoption_pack_is_one_valid_pack_that_git_reads() {
    let env = Env::bare();
    let mut files: Vec<(String, String)> = (1..=28)
        .map(|d| {
            let day = format!("2026-09-{d:02}");
            let text = V1_DAY.replace("2026-10-09", &day);
            (format!("_librarian/sessions/{day}.md"), text)
        })
        .collect();
    // Larger than 64 KiB, so its size needs three bytes of the entry header.
    let big = V1_DAY.replace("2026-10-09", "2026-10-01")
        + &"- 10:00:00 — a line of a long day\n".repeat(3000);
    files.push(("_librarian/sessions/2026-10-01.md".into(), big));
    // Two files with the same bytes: one blob, written once.
    let month = "---\nschema: position-event@1-provisional\n---\n".to_string();
    files.push(("_librarian/positions/2026-08.md".into(), month.clone()));
    files.push(("_librarian/positions/2026-09.md".into(), month));
    for (path, text) in &files {
        env.write(path, text);
    }
    let r = env.rutter(&["init"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("adopting 31 existing"), "{}", r.stdout);

    let pack_dir = env.vault.join(".git/objects/pack");
    let idx: Vec<_> = std::fs::read_dir(&pack_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "idx"))
        .collect();
    assert_eq!(idx.len(), 1, "one pack: {idx:?}");
    let verified = env.git(&["verify-pack", "-v", idx[0].to_str().unwrap()]);
    let blobs = verified.lines().filter(|l| l.contains(" blob ")).count();
    assert_eq!(blobs, 30, "30 distinct blobs, none twice:\n{verified}");
    assert!(verified.contains("non delta: 30 objects"), "{verified}");
    let loose = env.git(&["count-objects", "-v"]);
    assert!(loose.contains("in-pack: 30\n"), "{loose}");
    env.git(&["fsck", "--strict", "--no-dangling"]);
    for (path, text) in &files {
        assert_eq!(&env.committed(path), text, "{path}");
        let id = env.git(&[
            "rev-parse",
            &format!("refs/rutter/records:{}", in_ref(path)),
        ]);
        assert_eq!(env.git(&["cat-file", "-t", id.trim()]), "blob\n");
    }
}

/// The review's §b 9: a tip `init` could not witness is said at once (as a capture says it),
/// not left for the first `verify` to find.
#[test]
fn init_says_when_its_first_tip_cannot_be_witnessed() {
    let env = Env::bare();
    env.write("Notes/a.md", "# A\n");
    let r = run_with_stdin(
        env.cmd()
            .env("RUTTER_FAILPOINTS", "tips-write")
            .args(["init", env.vault.to_str().unwrap()]),
        b"",
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("could not be witnessed"), "{}", r.stderr);
}

/// The review: a repository with SHA-256 object names was met with libgit2's "unknown object
/// format", said twice. `init` now refuses it by name and writes nothing: no record, no state
/// folder, no vault setting; the repository stays as git left it (`git fsck` clean).
#[test]
fn a_sha256_repository_is_refused_by_name_and_left_as_it_was() {
    let env = Env::bare();
    env.write("Notes/a.md", NOTE_A);
    env.git(&["init", "-q", "-b", "main", "--object-format=sha256"]);
    env.git(&["add", "Notes"]);
    env.git(&["commit", "-qm", "notes"]);
    let refs = env.git(&["for-each-ref"]);
    for args in [&["init"][..], &["log"], &["verify"]] {
        let r = env.rutter(args);
        assert_eq!(r.code, 2, "{args:?}: {}{}", r.stdout, r.stderr);
        let said = r.stderr.trim_end();
        assert!(
            said.starts_with("git-rutter: the vault ")
                && said.contains("SHA-256 object names (extensions.objectFormat = sha256)")
                && said.matches("SHA-256").count() == 2
                && !said.contains("class="),
            "{args:?}: {said}"
        );
    }
    assert!(!env.vault.join(".git/rutter").exists());
    assert_eq!(env.git(&["for-each-ref"]), refs);
    let config = env.git_with(&["config", "--get-regexp", "^rutter"], &[]);
    assert_eq!(
        (config.code, config.stdout.as_str()),
        (1, ""),
        "no rutter setting"
    );
    env.git(&["fsck", "--strict"]);
}

/// A file under `_librarian/` that is not a record (a scratch note kept there by hand) would be
/// the root of the record history, refused by every other machine's intake for good: `init`
/// refuses it by name, creates no ref and no pack, and adopts once it is moved away.
#[test]
fn init_refuses_to_adopt_a_file_that_is_not_a_record_and_writes_nothing() {
    let env = Env::bare();
    env.write("Notes/a.md", NOTE_A);
    env.write("_librarian/sessions/2026-10-09.md", V1_DAY);
    env.write("_librarian/sessions/2026-01-01.md", "my scratch\n");
    let refused = env.rutter(&["init"]);
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert!(
        refused.stderr.contains(
            "_librarian/sessions/2026-01-01.md is not a record file (line 1: a new day file starts with"
        ) && refused
            .stderr
            .contains("Move _librarian/sessions/2026-01-01.md out of _librarian/"),
        "{}",
        refused.stderr
    );
    assert!(env.git(&["for-each-ref", "refs/rutter"]).trim().is_empty());
    let packs = env.vault.join(".git/objects/pack");
    let left: Vec<_> = std::fs::read_dir(&packs)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "no pack left behind: {left:?}");
    std::fs::rename(
        env.vault.join("_librarian/sessions/2026-01-01.md"),
        env.vault.join("Notes/scratch.md"),
    )
    .unwrap();
    let adopted = env.rutter(&["init"]);
    assert_eq!(adopted.code, 0, "{}", adopted.stderr);
    assert!(
        adopted
            .stdout
            .contains("adopting 1 existing record file(s)"),
        "{}",
        adopted.stdout
    );
    let verified = env.rutter(&["verify"]);
    assert_eq!(verified.code, 0, "{}", verified.stdout);
}

/// git's own folders are never vaults: `init` of a bare repository refuses it instead of
/// nesting a new repository inside it (which git then found instead of the bare one), a
/// capture into a work tree's `.git` folder writes nothing there, and `init` with `GIT_DIR`
/// set and no folder named refuses rather than prepare the current folder.
#[test]
fn git_directories_are_never_vaults_and_init_never_ignores_git_dir() {
    let env = Env::bare();
    let bare = env.root().join("bare.git");
    env.git(&["init", "-q", "--bare", bare.to_str().unwrap()]);
    let r = env.rutter_in(&env.root(), &["init", bare.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("bare.git cannot be prepared as a vault: it is a bare git repository"),
        "{}",
        r.stderr
    );
    std::fs::write(env.root().join("afile"), "x").unwrap();
    let r = env.rutter_in(&env.root(), &["init", "afile"]);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (
            2,
            "git-rutter: afile cannot be prepared as a vault: not a directory\n"
        ),
        "named as given, and no word about its notes"
    );
    assert!(
        !bare.join(".git").exists(),
        "no repository nested in the bare one"
    );
    env.write("Notes/a.md", NOTE_A);
    env.git(&["init", "-q", "-b", "main"]);
    let git_dir = env.vault.join(".git");
    let mut c = env.cmd();
    c.env("LIBRARIAN_VAULT_PATH", &git_dir).args([
        "capture",
        "--summary",
        "Into git's own folder.",
    ]);
    let r = run_with_stdin(&mut c, b"");
    assert_eq!(r.code, 0);
    assert!(
        r.stderr
            .contains("inside a git repository's own .git folder"),
        "{}",
        r.stderr
    );
    assert!(!git_dir.join("_librarian").exists());
    let other = env.root().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let mut c = env.cmd();
    c.current_dir(&other)
        .env("GIT_DIR", &git_dir)
        .env_remove("LIBRARIAN_VAULT_PATH")
        .arg("init");
    let r = run_with_stdin(&mut c, b"");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("GIT_DIR is set"), "{}", r.stderr);
    assert!(
        !other.join(".git").exists(),
        "the current folder was left alone"
    );
}

/// An exclude file `init` cannot write (a symlink, which it never writes through) stops it
/// before the record ref exists, so a second `init` once it is fixed starts clean instead of
/// finding a ref whose files show in `git status`.
#[test]
fn an_exclude_file_init_cannot_write_stops_it_before_the_ref_exists() {
    let env = Env::bare();
    env.write("Notes/a.md", NOTE_A);
    env.git(&["init", "-q", "-b", "main"]);
    let exclude = env.vault.join(".git/info/exclude");
    std::fs::remove_file(&exclude).unwrap();
    let elsewhere = env.root().join("elsewhere");
    std::os::unix::fs::symlink(&elsewhere, &exclude).unwrap();
    let r = env.rutter(&["init"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(env.git(&["for-each-ref", "refs/rutter"]).trim().is_empty());
    assert!(!elsewhere.exists(), "never written through the link");
    std::fs::remove_file(&exclude).unwrap();
    let r = env.rutter(&["init"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!env.git(&["status", "--porcelain"]).contains("_librarian"));
}
