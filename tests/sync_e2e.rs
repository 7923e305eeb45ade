//! `git rutter sync` between two machines: a bare remote and two clones in separate vault
//! folders, the real binary and the real `git`. Every scenario ends with both clones holding
//! identical record files and ref trees, every entry exactly once, and `verify` clean.

use crate::common;
use common::json::{decode, LogRow, Status};
use common::net::{record_files, summaries, Net};
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The committed day file of `dir` whose text holds `needle`.
fn file_holding(net: &Net, dir: &Path, needle: &str) -> String {
    let out = net.git(
        dir,
        &[
            "grep",
            "-l",
            "-F",
            needle,
            "refs/rutter/records",
            "--",
            "_librarian/sessions",
        ],
    );
    let first = out
        .lines()
        .next()
        .unwrap_or_else(|| panic!("{needle} is committed nowhere"));
    from_ref(first.trim_start_matches("refs/rutter/records:"))
}

/// This vault's writer id (`sync --setup` made it).
fn writer_id(dir: &Path) -> String {
    std::fs::read_to_string(dir.join(".git/rutter/machine"))
        .unwrap()
        .trim()
        .to_string()
}

/// Whether the last merge's message says it only put files side by side (no line union).
fn r_merge_said_side_by_side(net: &Net, dir: &Path) -> bool {
    let body = net.git(dir, &["log", "-1", "--format=%b", "refs/rutter/records"]);
    body.contains(": 0 record file(s) written as the union")
}

#[test]
fn interleaved_captures_synced_in_both_orders_converge() {
    let (net, a) = Net::new();
    let b = net.machine("b");
    net.capture(&a, "2026-11-30T09:00:00.000Z", "A one.");
    net.capture(&b, "2026-11-30T09:30:00.000Z", "B one.");
    net.capture(&a, "2026-11-30T10:00:00.000Z", "A two.");
    net.capture(&b, "2026-12-01T08:00:00.000Z", "B two, next day.");
    // Both indexes exist before the syncs: they must notice what sync brings without a rebuild.
    for dir in [&a, &b] {
        let r = net.rut(dir, &["recent", "--all"]);
        assert!(!r.stdout.contains("B one.") || dir == &b, "{}", r.stdout);
    }
    // B first: the remote only has the start, so B just pushes.
    let r = net.sync(&b);
    assert!(
        r.stdout.contains("Pushed refs/rutter/records"),
        "{}",
        r.stdout
    );
    // A merges: both sides wrote 2026-11-30.
    let r = net.sync(&a);
    assert!(r.stdout.contains("Merged origin's records"), "{}", r.stdout);
    assert!(
        r.stdout.contains("Received 2 entries; sent 2 entries."),
        "{}",
        r.stdout
    );
    let merge = net.git(&a, &["log", "-1", "--format=%s%n%P", "refs/rutter/records"]);
    let mut lines = merge.lines();
    assert_eq!(lines.next(), Some("rutter: merge origin"));
    assert_eq!(lines.next().unwrap().split(' ').count(), 2, "two parents");
    // B takes the merge in: a fast-forward.
    let r = net.sync(&b);
    assert!(r.stdout.contains("fast-forward"), "{}", r.stdout);
    // Every tip sync set is in the reflog, with what moved it, and in the witness log.
    for (dir, said) in [
        (&a, "rutter: merge origin"),
        (&b, "rutter: sync: fast-forward to "),
    ] {
        let tip = net.git(dir, &["rev-parse", "refs/rutter/records"]);
        let reflog = net.git(
            dir,
            &[
                "reflog",
                "show",
                "-1",
                "--format=%H %gs",
                "refs/rutter/records",
            ],
        );
        assert!(
            reflog.starts_with(&format!("{} {said}", tip.trim())),
            "{reflog}"
        );
        let tips = std::fs::read_to_string(dir.join(".git/rutter/tips")).unwrap();
        assert_eq!(tips.lines().last(), Some(tip.trim()), "{tips}");
    }
    let all = ["A one.", "B one.", "A two.", "B two, next day."];
    net.converged(&[&a, &b], &all);
    // One writer per file: each machine appended only to its own day files, so the merge was a
    // union of files and no working day file had a byte rewritten.
    assert!(
        r_merge_said_side_by_side(&net, &a),
        "no file needed a line union"
    );
    let (ida, idb) = (writer_id(&a), writer_id(&b));
    assert_ne!(ida, idb);
    let days: Vec<String> = record_files(&a)
        .into_keys()
        .filter(|p| p.contains("2026-11-30"))
        .collect();
    assert_eq!(
        days,
        [
            format!("_librarian/sessions/2026-11-30.{ida}.md"),
            format!("_librarian/sessions/2026-11-30.{idb}.md")
        ]
        .into_iter()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect::<Vec<_>>()
    );
    let own = a.join(format!("_librarian/sessions/2026-11-30.{ida}.md"));
    let inode = |p: &Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(p).unwrap());
    let before = inode(&own);
    // `log` reads every file of a day as that day.
    let log = net.rut(&a, &["log", "--day", "2026-11-30", "--json"]);
    let rows: Vec<LogRow> = decode(&log.stdout);
    let mut logged: Vec<(String, String)> = rows.into_iter().map(|r| (r.day, r.summary)).collect();
    logged.sort();
    assert_eq!(
        logged,
        [
            ("2026-11-30", "A one."),
            ("2026-11-30", "A two."),
            ("2026-11-30", "B one.")
        ]
        .map(|(d, s)| (d.to_string(), s.to_string()))
    );
    // Then the other order: A pushes first, B merges.
    net.capture(&a, "2026-12-01T09:00:00.000Z", "A three.");
    net.capture(&b, "2026-12-01T09:10:00.000Z", "B three.");
    net.sync(&a);
    let r = net.sync(&b);
    assert!(r.stdout.contains("Merged"), "{}", r.stdout);
    net.sync(&a);
    let all = [&all[..], &["A three.", "B three."]].concat();
    net.converged(&[&a, &b], &all);
    assert_eq!(inode(&own), before, "A's own day file was never replaced");
    // Recall sees every machine's entries.
    for dir in [&a, &b] {
        let recent = net.rut(dir, &["recent", "--all"]).stdout;
        for s in &all {
            assert!(
                recent.contains(s),
                "{s} missing from recent in {dir:?}: {recent}"
            );
        }
    }
    // A fresh clone starts from the merged records and verifies clean.
    let c = net.machine("c");
    net.converged(&[&a, &c], &all);
    let r = net.rut(&c, &["recent", "--all"]);
    assert!(r.stdout.contains("B three."), "{}", r.stdout);
}

#[test]
fn the_same_histories_merge_to_the_same_tree_on_either_machine() {
    let (net, a) = Net::new();
    let b = net.machine("b");
    net.capture(&a, "2026-11-30T09:00:00.000Z", "A one.");
    net.capture(&b, "2026-11-30T09:30:00.000Z", "B one.");
    net.capture(&a, "2026-11-30T10:00:00.000Z", "A two.");
    // A second world with the same histories: copies of the remote and both clones.
    let root = net.env.root();
    for name in ["remote.git", "a", "b"] {
        let out = Command::new("cp")
            .args(["-a", name, &format!("{name}-2")])
            .current_dir(&root)
            .output()
            .unwrap();
        assert!(out.status.success());
    }
    let (a2, b2) = (root.join("a-2"), root.join("b-2"));
    for dir in [&a2, &b2] {
        let url = root.join("remote.git-2");
        net.git(dir, &["remote", "set-url", "origin", url.to_str().unwrap()]);
    }
    // World 1: B pushes, A merges. World 2: A pushes, B merges.
    net.sync(&b);
    net.sync(&a);
    net.sync(&a2);
    net.sync(&b2);
    let (merged_on_a, merged_on_b) = (net.tree(&a), net.tree(&b2));
    assert_eq!(
        merged_on_a, merged_on_b,
        "the merge tree depends only on the histories"
    );
    let parents = |dir: &Path| net.git(dir, &["log", "-1", "--format=%P", "refs/rutter/records"]);
    assert_eq!(parents(&a).split(' ').count(), 2);
    assert_eq!(parents(&b2).split(' ').count(), 2);
}

#[test]
fn concurrent_syncs_converge() {
    let (net, a) = Net::new();
    let b = net.machine("b");
    for i in 0..3 {
        net.capture(
            &a,
            &format!("2026-11-30T09:0{i}:00.000Z"),
            &format!("A {i}."),
        );
        net.capture(
            &b,
            &format!("2026-11-30T09:0{i}:30.000Z"),
            &format!("B {i}."),
        );
    }
    let spawn = |dir: &Path| {
        net.cmd(dir)
            .args(["sync"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (pa, pb) = (spawn(&a), spawn(&b));
    for p in [pa, pb] {
        let out = p.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Whichever pushed second merged the other's push; one more round brings both level.
    net.sync(&a);
    net.sync(&b);
    let want: Vec<String> = (0..3)
        .flat_map(|i| [format!("A {i}."), format!("B {i}.")])
        .collect();
    let want: Vec<&str> = want.iter().map(String::as_str).collect();
    net.converged(&[&a, &b], &want);
    // Two syncs of one vault at once are serialised by the capture lock.
    let (p1, p2) = (spawn(&a), spawn(&a));
    for p in [p1, p2] {
        assert!(p.wait_with_output().unwrap().status.success());
    }
    net.converged(&[&a, &b], &want);
}

#[test]
fn a_sync_while_captures_run_loses_nothing() {
    let (net, a) = Net::new();
    let b = net.machine("b");
    net.capture(&a, "2026-11-30T07:00:00.000Z", "A before.");
    net.capture(&b, "2026-11-30T08:00:00.000Z", "B before.");
    net.sync(&b);
    // A slow remote keeps A's sync (which merges, so it rewrites the day file) in its push
    // while the captures run. No network phase holds the capture lock: each commits at once.
    let (hook, pushing) = net.slow_push("sleep 2");
    let mut want = vec!["A before.".to_string(), "B before.".to_string()];
    let mut sync = net.spawn_sync(&a);
    Net::wait_for_push(&pushing);
    for i in 0..6 {
        let summary = format!("A during {i}.");
        let ts = format!("2026-11-30T09:00:0{i}.000Z");
        let r = net.capture_without_waiting(&a, &ts, &summary, &format!("S{i}"));
        assert!(!r.stderr.contains("not committed yet"), "{}", r.stderr);
        want.push(summary);
    }
    assert!(
        sync.try_wait().unwrap().is_none(),
        "the captures ran while the sync pushed"
    );
    let out = sync.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Merged"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    std::fs::remove_file(&hook).unwrap();
    // The lines committed meanwhile go out with the next sync, without a divergence.
    let r = net.sync(&a);
    assert!(r.stdout.contains("sent 6 entries"), "{}", r.stdout);
    assert!(!r.stderr.contains("edited"), "{}", r.stderr);
    net.sync(&b);
    let want: Vec<&str> = want.iter().map(String::as_str).collect();
    net.converged(&[&a, &b], &want);
    assert_eq!(
        std::fs::read_dir(a.join(".git/rutter/pending"))
            .unwrap()
            .count(),
        0,
        "nothing left pending"
    );
}

#[test]
fn what_another_machine_pushed_during_a_sync_is_received_never_sent() {
    let (net, a) = Net::new();
    let b = net.machine("b");
    net.capture(&a, "2026-11-30T09:00:00.000Z", "A during.");
    // A's first push waits in the remote's hook until B has pushed: A's push then finds the
    // remote moved, and the next round merges B's entry and pushes.
    let (first, done) = (
        net.env.root().join("first-push"),
        net.env.root().join("b-pushed"),
    );
    let hook = net.pre_receive(&format!(
        "#!/bin/sh\ncat >/dev/null\nif [ ! -e '{first}' ]; then touch '{first}'; i=0; while [ ! -e '{done}' ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; fi\n",
        first = first.display(),
        done = done.display()
    ));
    let sync = net
        .cmd(&a)
        .args(["sync", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    Net::wait_for_push(&first);
    net.capture(&b, "2026-11-30T10:00:00.000Z", "B during.");
    net.sync(&b);
    std::fs::write(&done, "").unwrap();
    let out = sync.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_file(&hook).unwrap();
    let v: common::decoded::SyncReport = common::json::decode(&stdout);
    assert!(v.pushed, "{stdout}");
    let (ida, idb) = (writer_id(&a), writer_id(&b));
    assert_eq!(v.received, [format!("20261130T100000000Z-{idb}")]);
    assert_eq!(v.sent, [format!("20261130T090000000Z-{ida}")]);
    net.sync(&b);
    net.converged(&[&a, &b], &["A during.", "B during."]);
}

#[test]
fn retractions_are_counted_as_retractions_not_entries() {
    let (net, a) = Net::new();
    let b = net.machine("b");
    net.capture(&a, "2026-11-30T09:00:00.000Z", "A one.");
    net.capture(&a, "2026-11-30T09:01:00.000Z", "A two.");
    net.sync(&a);
    let ida = writer_id(&a);
    for minute in ["00", "01"] {
        let id = format!("20261130T09{minute}00000Z-{ida}");
        let r = net.rut(&a, &["retract", "--reason", "wrong", &id]);
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    }
    let r = net.rut(&a, &["sync", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: common::decoded::SyncReport = common::json::decode(&r.stdout);
    assert!(v.sent.is_empty(), "{}", r.stdout);
    assert_eq!(v.sent_lines.retractions.len(), 2, "{}", r.stdout);
    let r = net.sync(&b);
    assert!(
        r.stdout
            .contains("Received 2 entries and 2 retractions; sent 0 entries."),
        "{}",
        r.stdout
    );
    net.capture(&a, "2026-11-30T09:02:00.000Z", "A three.");
    let id = format!("20261130T090200000Z-{ida}");
    net.rut(&a, &["retract", "--reason", "wrong too", &id]);
    let r = net.sync(&a);
    assert!(
        r.stdout.contains("sent 1 entry and 1 retraction."),
        "{}",
        r.stdout
    );
}

#[test]
fn a_remote_that_refuses_the_push_loses_nothing() {
    let (net, a) = Net::new();
    let b = net.machine("b");
    net.capture(&b, "2026-11-30T08:00:00.000Z", "B first.");
    net.sync(&b);
    net.capture(&a, "2026-11-30T09:00:00.000Z", "A refused.");
    let hook = net.remote.join("hooks/pre-receive");
    std::fs::write(&hook, "#!/bin/sh\necho 'no pushes today' >&2\nexit 1\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let r = net.rut(&a, &["sync"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("refused the push"), "{}", r.stderr);
    assert!(
        r.stderr.contains("pre-receive hook declined"),
        "{}",
        r.stderr
    );
    // The merge stands locally and verifies clean; nothing is lost.
    assert!(r.stdout.contains("Merged"), "{}", r.stdout);
    assert_eq!(net.rut(&a, &["verify"]).code, 0);
    let mut got = summaries(&a);
    got.sort();
    assert_eq!(got, ["A refused.", "B first."]);
    std::fs::remove_file(&hook).unwrap();
    let r = net.sync(&a);
    assert!(r.stdout.contains("Pushed"), "{}", r.stdout);
    net.sync(&b);
    net.converged(&[&a, &b], &["A refused.", "B first."]);
}

#[test]
fn sync_needs_a_remote_set_up_for_it() {
    let env = Env::git_vault();
    let r = env.rutter(&["sync"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("--setup REMOTE"), "{}", r.stderr);
    let r = env.rutter(&["sync", "nowhere"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("git remote add nowhere"), "{}", r.stderr);
    let bare = env.root().join("bare.git");
    env.git(&["init", "-q", "--bare", bare.to_str().unwrap()]);
    env.git(&["remote", "add", "mine", bare.to_str().unwrap()]);
    let r = env.rutter(&["sync", "mine"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("not set up for rutter"), "{}", r.stderr);
    assert_eq!(
        env.git(&["for-each-ref", "refs/remotes/mine"]),
        "",
        "nothing was fetched"
    );
    let r = env.rutter(&["sync", "--setup", "mine"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("had no records yet"), "{}", r.stdout);
    assert_eq!(env.git(&["config", "rutter.syncRemote"]).trim(), "mine");
    assert_eq!(
        env.git(&["config", "--get-all", "remote.mine.fetch"]),
        "+refs/heads/*:refs/remotes/mine/*\n+refs/rutter/*:refs/remotes/mine/rutter/*\n"
    );
    // Plain git fetch now brings the records along.
    env.git(&["update-ref", "-d", "refs/remotes/mine/rutter/records"]);
    env.git(&["fetch", "-q", "mine"]);
    assert_eq!(
        env.git(&["rev-parse", "refs/remotes/mine/rutter/records"]),
        env.git(&["rev-parse", "refs/rutter/records"])
    );
    let r = env.rutter(&["sync"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("Up to date with mine"), "{}", r.stdout);
    env.capture_at("2026-11-30T09:00:00.000Z", "Sent as JSON.", &[]);
    let r = env.rutter(&["sync", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: common::decoded::SyncReport = common::json::decode(&r.stdout);
    assert_eq!(v.remote, "mine");
    assert_eq!(v.action, "ahead");
    assert!(v.pushed);
    // Once sync is set up, an id carries the writer's tag (spec/record-format.md, "Entry ids").
    let id = format!("20261130T090000000Z-{}", writer_id(&env.vault));
    assert_eq!(v.sent, [id]);
    assert_eq!(
        v.after.as_deref(),
        Some(env.git(&["rev-parse", "refs/rutter/records"]).trim())
    );
}

#[test]
fn a_renamed_sync_remote_is_named_with_the_setup_that_follows_it() {
    let (net, a) = Net::new();
    net.git(&a, &["remote", "rename", "origin", "upstream"]);
    let status = net.rut(&a, &["status"]);
    let line = status
        .stdout
        .lines()
        .find(|l| l.starts_with("sync:"))
        .unwrap_or_else(|| panic!("{}", status.stdout));
    assert!(
        line.contains(
            "upstream fetches this vault's records (run `git rutter sync --setup upstream`)"
        ),
        "{line}"
    );
    assert!(!line.contains("(run `git rutter sync`)"), "{line}");
    let json = net.rut(&a, &["status", "--json"]);
    let v: Status = decode(&json.stdout);
    assert_eq!(v.sync().set_up_remotes, ["upstream"]);
    let missing = v.finding("sync-remote-missing");
    assert!(
        missing.todo.contains("`git rutter sync --setup upstream`"),
        "{missing:?}"
    );
    assert!(!missing.todo.contains("git remote add"), "{missing:?}");
    let r = net.rut(&a, &["sync"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("run `git rutter sync --setup upstream`"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("git remote add"), "{}", r.stderr);
    let r = net.rut(&a, &["sync", "--setup", "upstream"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let status = net.rut(&a, &["status"]);
    assert!(
        status.stdout.contains("in step with it at the last fetch"),
        "{}",
        status.stdout
    );
}

/// A clone whose origin is another vault on this machine (a working tree, not a bare
/// repository): sync takes that vault's records in and pushes none into it, so its day files
/// never fall behind its record there (the push had made verify there call them cut short and
/// recall mark entries edited). The other vault takes this one's with a sync of its own.
#[test]
fn a_vault_with_a_working_tree_is_synced_from_never_pushed_into() {
    let (net, a) = Net::new();
    let c = net.env.root().join("c");
    net.env
        .git(&["clone", "-q", a.to_str().unwrap(), c.to_str().unwrap()]);
    assert_eq!(net.rut(&c, &["init"]).code, 0);
    let r = net.rut(&c, &["sync", "--setup", "origin"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    net.capture(&a, "2026-11-30T09:00:00.000Z", "A one.");
    net.capture(&c, "2026-11-30T09:01:00.000Z", "C one.");
    let r = net.rut(&c, &["sync", "--json"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v: common::decoded::SyncReport = common::json::decode(&r.stdout);
    assert!(!v.pushed && v.sent.is_empty(), "{}", r.stdout);
    assert_eq!(
        v.not_sent.as_deref(),
        Some(format!("{}/", a.canonicalize().unwrap().display()).as_str()),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr.contains("is a vault with a working tree"),
        "{}",
        r.stderr
    );
    assert_eq!(
        net.rut(&a, &["verify"]).code,
        0,
        "the pushed-into vault stays clean"
    );
    let sorted = |dir: &Path| {
        let mut s = summaries(dir);
        s.sort();
        s
    };
    assert_eq!(sorted(&c), ["A one.", "C one."]);
    // The vault takes the clone's records with a sync of its own.
    net.git(&a, &["remote", "add", "c", c.to_str().unwrap()]);
    let r = net.rut(&a, &["sync", "--setup", "c"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(sorted(&a), ["A one.", "C one."]);
    assert_eq!(net.rut(&a, &["verify"]).code, 0);
    assert_eq!(net.rut(&c, &["verify"]).code, 0);
}

#[test]
fn a_remote_that_lost_its_records_is_said_to_have_had_them() {
    let (net, a) = Net::new();
    net.capture(&a, "2026-11-30T09:00:00.000Z", "A one.");
    net.sync(&a);
    // Its records ref deleted (or the remote recreated empty): the next sync sends everything.
    let remote = net.remote.to_str().unwrap().to_string();
    net.git(
        &a,
        &[
            "--git-dir",
            &remote,
            "update-ref",
            "-d",
            "refs/rutter/records",
        ],
    );
    let r = net.rut(&a, &["sync", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: common::decoded::SyncReport = common::json::decode(&r.stdout);
    assert!(v.pushed && v.remote_emptied, "{}", r.stdout);
    assert_eq!(v.sent.len(), 1, "{}", r.stdout);
    std::fs::remove_dir_all(&net.remote).unwrap();
    net.git(&a, &["init", "-q", "--bare", &remote]);
    let r = net.sync(&a);
    assert!(
        r.stdout.contains(
            "origin holds no records now (it had them at the last fetch).\nReceived 0 entries; sent 1 entry."
        ),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("no records yet"), "{}", r.stdout);
    // Deleted on the remote by a push: the copy goes with it, and status does not call a remote
    // synced a moment ago "never fetched".
    net.git(&a, &["push", "-q", "origin", ":refs/rutter/records"]);
    let r = net.rut(&a, &["status"]);
    assert!(
        r.stdout.contains("no copy of its records here, though it was synced (run `git rutter sync` to look again)"),
        "{}",
        r.stdout
    );
    // A remote that never had any is still said to have had none yet.
    let fresh = net.env.root().join("fresh.git");
    net.git(&a, &["init", "-q", "--bare", fresh.to_str().unwrap()]);
    net.git(&a, &["remote", "add", "fresh", fresh.to_str().unwrap()]);
    let r = net.rut(&a, &["sync", "--setup", "fresh"]);
    assert!(
        r.stdout.contains("fresh had no records yet."),
        "{}",
        r.stdout
    );
}

#[test]
fn a_shared_remote_is_refused_unless_forced() {
    let env = Env::git_vault();
    let bare = env.root().join("shared.git");
    env.git(&["init", "-q", "--bare", bare.to_str().unwrap()]);
    env.git(&["remote", "add", "team", bare.to_str().unwrap()]);
    // A teammate's commit on the shared notes branch.
    env.write("Notes/c.md", "# C\n");
    env.git(&["add", "Notes/c.md"]);
    env.git(&[
        "-c",
        "user.name=Other",
        "-c",
        "user.email=other@example.org",
        "commit",
        "-qm",
        "theirs",
        "--author",
        "Other <other@example.org>",
    ]);
    env.git(&["push", "-q", "team", "main"]);
    let r = env.rutter(&["sync", "--setup", "team"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stderr.contains("other@example.org"), "{}", r.stderr);
    assert!(r.stderr.contains("--force"), "{}", r.stderr);
    assert!(
        env.git_with(&["config", "rutter.syncRemote"], &[])
            .stdout
            .is_empty(),
        "nothing was set up"
    );
    let pushed = env.git_with(&["ls-remote", "team", "refs/rutter/records"], &[]);
    assert!(pushed.stdout.is_empty(), "nothing was pushed");
    let r = env.rutter(&["sync", "--setup", "team", "--force"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("--force"), "{}", r.stderr);
}

#[test]
fn credentials_in_a_remote_url_are_never_printed() {
    let env = Env::git_vault();
    env.git(&[
        "remote",
        "add",
        "far",
        "http://me:hunter2@127.0.0.1:9/notes.git?next=http://evil.example/&token=SECRET4#frag-SECRET5",
    ]);
    let r = env.rutter(&["sync", "--setup", "far"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("could not fetch from far"),
        "{}",
        r.stderr
    );
    // One line: git's messages as parts, each sentence closed once, then what to do.
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(
        !r.stderr.contains("..") && !r.stderr.contains(".;"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .trim_end()
            .ends_with("once `git fetch far` works, sync again."),
        "{}",
        r.stderr
    );
    for secret in ["hunter2", "SECRET4", "SECRET5"] {
        assert!(
            !r.stderr.contains(secret) && !r.stdout.contains(secret),
            "{secret}: {}",
            r.stderr
        );
    }
}

#[test]
fn a_working_file_with_edits_is_left_alone_and_reported() {
    let (net, a) = Net::new();
    let b = net.machine("b");
    net.capture(&a, "2026-11-30T09:00:00.000Z", "A one.");
    net.capture(&b, "2026-11-30T09:30:00.000Z", "B one.");
    net.sync(&b);
    net.sync(&a);
    net.sync(&b);
    // On A, the day file that holds B's line is edited by hand; then B adds to it.
    let path = file_holding(&net, &a, "B one.");
    let edited = std::fs::read_to_string(a.join(&path))
        .unwrap()
        .replace("— B one.", "— B one, edited.");
    std::fs::write(a.join(&path), &edited).unwrap();
    net.capture(&b, "2026-11-30T10:00:00.000Z", "B two.");
    net.sync(&b);
    let r = net.sync(&a);
    assert!(
        r.stderr.contains(&format!("left {path} as it is")),
        "{}",
        r.stderr
    );
    assert_eq!(
        std::fs::read_to_string(a.join(&path)).unwrap(),
        edited,
        "never overwritten"
    );
    let committed = net.git(
        &a,
        &["show", &format!("refs/rutter/records:{}", in_ref(&path))],
    );
    assert!(
        committed.contains("B two.") && committed.contains("— B one. "),
        "{committed}"
    );
    let v = net.rut(&a, &["verify"]);
    assert_eq!(v.code, 1, "the edit stays a finding: {}", v.stdout);
    assert!(v.stdout.contains("edited"), "{}", v.stdout);
}

#[test]
fn a_deleted_working_file_is_left_alone_with_one_way_back() {
    let (net, a) = Net::new();
    let b = net.machine("b");
    net.capture(&b, "2026-11-30T09:30:00.000Z", "B one.");
    net.sync(&b);
    net.sync(&a);
    // On A, the day file that holds B's line is deleted; then B adds to it.
    let path = file_holding(&net, &a, "B one.");
    std::fs::remove_file(a.join(&path)).unwrap();
    net.capture(&b, "2026-11-30T10:00:00.000Z", "B two.");
    net.sync(&b);
    let r = net.rut(&a, &["sync", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let warned = format!("git-rutter: left {path} as it is: it was deleted from the working tree. The records hold the synced version; `git rutter restore` writes it.\n");
    assert!(r.stderr.contains(&warned), "{}", r.stderr);
    assert_eq!(r.stderr.matches("restore").count(), 1, "{}", r.stderr);
    let v: common::decoded::SyncReport = common::json::decode(&r.stdout);
    assert_eq!(
        v.hints,
        ["The records hold the synced version; `git rutter restore` writes it."]
    );
    assert!(!a.join(&path).exists(), "left alone");
}

/// A day file the TypeScript reference wrote (`@1`), as it wrote it on one machine.
fn v1_day(summary: &str) -> String {
    format!("---\ncollection: librarian.sessions\nschema: session-record@1\nday: '2026-10-09'\nsessions:\n  - id: 20261009T221653000Z\n    session_id: abc\n    time: '2026-10-09T22:16:53.000Z'\n    summary: '{summary}'\n    refs: []\nrefs: []\n---\n# Sessions - 2026-10-09\n\n- 22:16:53 - {summary}\n")
}

#[test]
fn reference_written_day_files_that_differ_are_both_kept_whole() {
    // Two machines used the TypeScript reference, then git-rutter, each on its own, before
    // they knew of sync: two records without a common history, one day written on both.
    let net = Net::notes_only();
    let day = "_librarian/sessions/2026-10-09.md";
    let (a, b) = (net.clone_of("a"), net.clone_of("b"));
    for (dir, who, minute) in [(&a, "A", 1), (&b, "B", 2)] {
        std::fs::create_dir_all(dir.join("_librarian/sessions")).unwrap();
        let v1 = v1_day(&format!("Written by the reference on {who}."));
        std::fs::write(dir.join(day), v1).unwrap();
        let r = net.rut(dir, &["init"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let ts = format!("2026-10-09T23:0{minute}:00.000Z");
        net.capture(dir, &ts, &format!("{who} after the reference."));
    }
    let r = net.rut(&b, &["sync", "--setup", "origin"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let r = net.rut(&a, &["sync", "--setup", "origin"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("1 @1 day file kept whole beside each other"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("no common history"), "{}", r.stdout);
    net.sync(&b);
    net.converged(
        &[&a, &b],
        &["A after the reference.", "B after the reference."],
    );
    // Readers take both files as the day 2026-10-09: every entry once.
    let recent = net.rut(&a, &["recent", "--all"]);
    for s in [
        "Written by the reference on A.",
        "Written by the reference on B.",
        "A after the reference.",
        "B after the reference.",
    ] {
        assert_eq!(
            recent.stdout.matches(s).count(),
            1,
            "{s}: {}",
            recent.stdout
        );
    }
    let files: Vec<String> = record_files(&a)
        .into_iter()
        .filter(|(p, _)| p.contains("2026-10-09"))
        .map(|(_, t)| t)
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
    for who in ["A", "B"] {
        let v1 = v1_day(&format!("Written by the reference on {who}."));
        let mine = format!("{who} after the reference.");
        assert!(
            files
                .iter()
                .any(|t| t.starts_with(&v1) && t.contains(&mine)),
            "{who}'s version is kept byte for byte: {files:?}"
        );
    }
}

#[test]
fn a_vault_without_records_is_told_to_init_first() {
    let env = Env::bare();
    env.write("_librarian/sessions/2026-11-30.md", "local bytes\n");
    env.git(&["init", "-q", "-b", "main"]);
    let bare = env.root().join("bare.git");
    env.git(&["init", "-q", "--bare", bare.to_str().unwrap()]);
    env.git(&["remote", "add", "mine", bare.to_str().unwrap()]);
    let r = env.rutter(&["sync", "--setup", "mine"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("Run `git rutter init` first"),
        "{}",
        r.stderr
    );
    let refs = env.git(&["for-each-ref", "refs/rutter"]);
    assert_eq!(refs, "", "sync never adopts the working files by itself");
}

/// `verify --json` finding kinds in `dir`.
fn kinds_in(net: &Net, dir: &Path) -> Vec<String> {
    finding_kinds(&net.rut(dir, &["verify", "--full", "--json"]).stdout)
}

#[test]
fn verify_flags_a_merge_that_drops_or_forges_a_line() {
    let (net, a) = Net::new();
    let b = net.machine("b");
    net.capture(&a, "2026-11-30T09:00:00.000Z", "A one.");
    net.capture(&b, "2026-11-30T09:30:00.000Z", "B one.");
    net.sync(&b);
    net.sync(&a);
    assert_eq!(kinds_in(&net, &a), Vec::<String>::new());
    let day = file_holding(&net, &a, "B one.");
    let day = day.as_str();
    let merged = net.git(
        &a,
        &["show", &format!("refs/rutter/records:{}", in_ref(day))],
    );
    let parents = net.git(&a, &["log", "-1", "--format=%P", "refs/rutter/records"]);
    let parents: Vec<&str> = parents.split_whitespace().collect();
    // A merge commit with the same parents whose day file is `text`, moved onto the ref the way
    // a hand-made merge would be.
    let forge = |text: &str| {
        let dir = net.env.root().join("forge");
        std::fs::write(&dir, text).unwrap();
        let blob = net.git(&a, &["hash-object", "-w", dir.to_str().unwrap()]);
        let index = net.env.root().join("forge.index");
        let with_index = |args: &[&str]| {
            let out = Command::new("git")
                .args(args)
                .current_dir(&a)
                .env("GIT_INDEX_FILE", &index)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("HOME", &net.env.home)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        };
        with_index(&["read-tree", "refs/rutter/records^{tree}"]);
        with_index(&[
            "update-index",
            "--cacheinfo",
            &format!("100644,{},{}", blob.trim(), in_ref(day)),
        ]);
        let tree = with_index(&["write-tree"]);
        let commit = net.git(
            &a,
            &[
                "commit-tree",
                &tree,
                "-p",
                parents[0],
                "-p",
                parents[1],
                "-m",
                "rutter: merge forged",
            ],
        );
        net.git(&a, &["update-ref", "refs/rutter/records", commit.trim()]);
        std::fs::write(a.join(day), text).unwrap();
    };
    let dropped: String = merged
        .lines()
        .filter(|l| !l.contains("B one."))
        .map(|l| format!("{l}\n"))
        .collect();
    forge(&dropped);
    let kinds = kinds_in(&net, &a);
    assert!(kinds.contains(&"merge-lost-lines".to_string()), "{kinds:?}");
    let forged_line = merged
        .lines()
        .find(|l| l.contains("B one."))
        .unwrap()
        .replace("B one.", "B forged.")
        .replace("20261130T093000000Z", "20261130T091500000Z");
    forge(&format!("{merged}{forged_line}\n"));
    let kinds = kinds_in(&net, &a);
    assert!(
        kinds.contains(&"merge-added-lines".to_string()),
        "{kinds:?}"
    );
    assert!(
        !kinds.contains(&"merge-lost-lines".to_string()),
        "{kinds:?}"
    );
}

#[test]
fn a_vault_with_a_writer_id_appends_to_its_own_day_files() {
    let env = Env::git_vault();
    std::fs::write(env.vault.join(".git/rutter/machine"), "laptop-0001\n").unwrap();
    let r = env.capture_at(
        "2026-11-30T09:00:00.000Z",
        "On my own file.",
        &["Notes/a.md"],
    );
    assert!(r.stderr.contains("committed"), "{}", r.stderr);
    let own = "_librarian/sessions/2026-11-30.laptop-0001.md";
    let text = env.read(own);
    assert!(
        text.starts_with(
            "---\ncollection: librarian.sessions\nschema: session-record@2\nday: '2026-11-30'\n"
        ),
        "{text}"
    );
    assert!(text.contains("On my own file."), "{text}");
    assert!(!env.vault.join("_librarian/sessions/2026-11-30.md").exists());
    assert_eq!(env.committed(own), text);
    // The same directive again in the same session is still a duplicate.
    let again = env.capture_at(
        "2026-11-30T09:05:00.000Z",
        "On my own file.",
        &["Notes/a.md"],
    );
    assert!(
        again.stderr.contains("already recorded"),
        "{}",
        again.stderr
    );
    let v = env.rutter(&["verify"]);
    assert_eq!(v.code, 0, "{}", v.stdout);
    let recent = env.rutter(&["recent"]);
    assert!(
        recent.stdout.contains("On my own file."),
        "{}",
        recent.stdout
    );
}

#[test]
fn day_files_from_before_sync_merge_by_line_union() {
    // Before sync existed, users pushed the ref by hand; both machines then appended to the
    // same day file.
    let net = Net::notes_only();
    let a = net.clone_of("a");
    assert_eq!(net.rut(&a, &["init"]).code, 0);
    net.capture(&a, "2026-11-30T08:00:00.000Z", "A before the clone.");
    net.git(&a, &["push", "-q", "origin", "refs/rutter/records"]);
    let b = net.clone_of("b");
    assert_eq!(net.rut(&b, &["init"]).code, 0);
    net.capture(&a, "2026-11-30T10:00:00.000Z", "A later.");
    net.capture(&b, "2026-11-30T09:00:00.000Z", "B between.");
    net.capture(&b, "2026-11-30T11:00:00.000Z", "B last.");
    for dir in [&b, &a] {
        let r = net.rut(dir, &["sync", "--setup", "origin"]);
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    }
    net.sync(&b);
    let all = ["A before the clone.", "B between.", "A later.", "B last."];
    net.converged(&[&a, &b], &all);
    let day = std::fs::read_to_string(a.join("_librarian/sessions/2026-11-30.md")).unwrap();
    let at: Vec<usize> = all.iter().map(|s| day.find(s).unwrap()).collect();
    assert!(
        at.windows(2).all(|w| w[0] < w[1]),
        "both sides' lines in time order: {day}"
    );
    let subject = net.git(&a, &["log", "-1", "--format=%s", "refs/rutter/records"]);
    assert_eq!(subject.trim(), "rutter: merge origin");
}

#[test]
fn an_identity_confirmed_on_one_machine_is_honoured_on_the_other() {
    let (net, a) = Net::new();
    let b = net.machine("b");
    let cadence = "# Cadence\n\nGo fortnightly, one long essay per issue.\n";
    std::fs::write(a.join("Notes/cadence.md"), cadence).unwrap();
    net.git(&a, &["add", "Notes"]);
    net.git(&a, &["commit", "-qm", "cadence"]);
    net.git(&a, &["push", "-q", "origin", "main"]);
    let mut c = net.cmd(&a);
    c.env("RUTTER_TIMESTAMP", "2026-11-30T09:00:00.000Z").args([
        "capture",
        "--summary",
        "Decided to go fortnightly.",
        "--ref",
        "Notes/cadence.md",
        "--session",
        "S",
    ]);
    assert!(run_with_stdin(&mut c, b"").stderr.contains("committed"));
    net.sync(&a);
    // B renames and edits the note, and confirms where it went.
    net.git(&b, &["pull", "-q", "origin", "main"]);
    net.sync(&b);
    std::fs::write(
        b.join("Notes/cadence-decision.md"),
        format!("{cadence}\nDecided.\n"),
    )
    .unwrap();
    std::fs::remove_file(b.join("Notes/cadence.md")).unwrap();
    assert_eq!(net.rut(&b, &["reindex"]).code, 0);
    let r = net.rut(
        &b,
        &[
            "identity",
            "confirm",
            "Notes/cadence.md",
            "Notes/cadence-decision.md",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    net.git(&b, &["add", "-A", "Notes"]);
    net.git(&b, &["commit", "-qm", "cadence decided"]);
    net.git(&b, &["push", "-q", "origin", "main"]);
    net.sync(&b);
    // A gets the rename through git and the binding through sync.
    net.git(&a, &["pull", "-q", "origin", "main"]);
    net.sync(&a);
    let recent = net.rut(&a, &["recent"]);
    assert!(
        recent
            .stdout
            .contains("(renamed to Notes/cadence-decision.md; changed since capture)"),
        "{}{}",
        recent.stdout,
        recent.stderr
    );
    net.converged(&[&a, &b], &["Decided to go fortnightly."]);
}

#[test]
fn a_retraction_made_on_one_machine_is_honoured_on_the_other() {
    let (net, a) = Net::new();
    let b = net.machine("b");
    net.capture(&a, "2026-11-30T09:00:00.000Z", "A mistaken.");
    net.capture(&a, "2026-11-30T09:05:00.000Z", "A right.");
    net.sync(&a);
    net.sync(&b);
    // A's ids carry A's writer tag: no other machine stamps them (spec/record-format.md).
    let mistaken = format!("20261130T090000000Z-{}", writer_id(&a));
    let mut c = net.cmd(&b);
    c.env("RUTTER_TIMESTAMP", "2026-11-30T10:00:00.000Z").args([
        "retract",
        &mistaken,
        "--reason",
        "wrong project",
    ]);
    let r = run_with_stdin(&mut c, b"");
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let own = format!("_librarian/sessions/2026-11-30.{}.md", writer_id(&b));
    assert!(
        std::fs::read_to_string(b.join(&own))
            .unwrap()
            .contains("rutter:retract"),
        "the retraction went to B's own day file"
    );
    net.sync(&b);
    net.sync(&a);
    for dir in [&a, &b] {
        let recent = net.rut(dir, &["recent", "--all"]).stdout;
        assert!(!recent.contains("A mistaken."), "{recent}");
        assert!(recent.contains("A right."), "{recent}");
        let log = net.rut(dir, &["log", &mistaken]).stdout;
        assert!(
            log.contains("retracted") && log.contains("wrong project"),
            "{log}"
        );
        let v = net.rut(dir, &["verify"]);
        assert_eq!(v.code, 0, "{}", v.stdout);
    }
}

#[test]
fn an_entry_two_files_of_a_day_hold_alike_is_recalled_once() {
    let env = Env::git_vault();
    env.capture_at("2026-11-30T09:00:00.000Z", "Held twice.", &[]);
    let day = env.read("_librarian/sessions/2026-11-30.md");
    // A second file of the day holding the same entry (as when a merge keeps two `@1` versions
    // that share entries): one day, one entry.
    env.write("_librarian/sessions/2026-11-30.v1-000000000000.md", &day);
    let r = env.rutter(&["recent", "--all"]);
    assert_eq!(r.stdout.matches("Held twice.").count(), 1, "{}", r.stdout);
    // The timeline reads the rows itself, a day at a time: one decision there too.
    let page = env.rutter(&["timeline"]).stdout;
    assert_eq!(page.matches("Held twice.").count(), 1, "{page}");
}

/// `status` names the sync remote, this clone's writer id and where the two stood at the last
/// fetch; a sync remote that is gone or not set up is a finding with what to do.
#[test]
fn status_shows_the_sync_remote_and_where_it_stood() {
    let (net, a) = Net::new();
    let b = net.machine("b");
    let status = |dir: &Path| -> Status { decode(&net.rut(dir, &["status", "--json"]).stdout) };
    let s = status(&a);
    let sync = s.sync();
    assert_eq!(sync.remote, "origin");
    assert!(sync.fetches_records);
    assert_eq!(sync.relation, "up-to-date");
    assert_eq!(sync.machine.as_deref(), Some(writer_id(&a).as_str()));
    net.capture(&b, "2026-11-30T10:00:00.000Z", "Written on b.");
    assert_eq!(status(&b).sync().relation, "ahead");
    net.sync(&b);
    net.capture(&a, "2026-11-30T11:00:00.000Z", "Written on a.");
    net.git(&a, &["fetch", "-q", "origin"]);
    assert_eq!(status(&a).sync().relation, "diverged");
    let text = net.rut(&a, &["status"]).stdout;
    assert!(
        text.contains("sync:     origin (") && text.contains("both sides have new entries"),
        "{text}"
    );
    net.git(
        &a,
        &["config", "--unset-all", "remote.origin.fetch", "rutter"],
    );
    let s = status(&a);
    assert!(s.kinds().contains(&"sync-not-set-up"), "{s:#?}");
    net.git(&a, &["config", "rutter.syncRemote", "gone"]);
    let r = net.rut(&a, &["status"]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("git remote add gone URL"), "{}", r.stdout);
}

/// The other machine's day file, as this vault's working tree holds it (`None`: missing).
fn their_day_file(net: &Net, dir: &Path, needle: &str) -> Option<String> {
    let path = file_holding(net, dir, needle);
    std::fs::read_to_string(dir.join(&path)).ok()
}

/// A sync that stops right after it moved the ref (here a full disk; a `kill -9` there leaves
/// the same) leaves the other machine's day file unwritten; the next sync writes it first, and
/// nothing is reported as deleted or edited (issue 32, F-1).
#[test]
fn a_sync_stopped_after_the_ref_moved_is_finished_by_the_next() {
    let (net, a) = Net::new();
    let b = net.machine("b");
    net.capture(&b, "2026-11-30T08:00:00.000Z", "From b.");
    net.sync(&b);
    net.capture(&a, "2026-11-30T09:00:00.000Z", "From a.");
    let r = net.sync_failing_at(&a, "sync-checkout");
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert_eq!(their_day_file(&net, &a, "From b."), None, "not written yet");
    let v = net.rut(&a, &["verify", "--porcelain"]);
    assert_eq!(
        v.code, 1,
        "the files are behind until a sync finishes: {}",
        v.stdout
    );
    // The next sync brings the files first: not "left alone", not "edited".
    let r = net.sync(&a);
    assert!(!r.stderr.contains("left"), "{}", r.stderr);
    assert!(their_day_file(&net, &a, "From b.").is_some());
    net.sync(&b);
    net.converged(&[&a, &b], &["From a.", "From b."]);
    let recent = net.rut(&a, &["--no-pager", "recent"]);
    assert!(!recent.stdout.contains("deleted"), "{}", recent.stdout);
}

/// A vault whose working files fell behind the ref before sync noted its checkouts (what a
/// stopped sync of an earlier version left): its first sync brings every file that is missing
/// or a line-prefix of its committed version up, and leaves a day file of its own that was
/// deleted here as it is (a `verify` finding).
#[test]
fn files_left_behind_by_an_earlier_version_are_brought_up() {
    let (net, a) = Net::new();
    let b = net.machine("b");
    net.capture(&b, "2026-11-30T08:00:00.000Z", "B one.");
    net.capture(&b, "2026-11-30T08:30:00.000Z", "B two.");
    net.capture(&b, "2026-12-01T08:00:00.000Z", "B next day.");
    net.sync(&b);
    net.capture(&a, "2026-11-30T09:00:00.000Z", "A one.");
    net.sync(&a);
    // What an earlier version left: no note, one of b's files cut back to its first entry
    // (a line-prefix of what is committed), the other gone, and a's own file deleted by hand.
    std::fs::remove_file(a.join(".git/rutter/checkout")).unwrap();
    let cut = file_holding(&net, &a, "B two.");
    let text = std::fs::read_to_string(a.join(&cut)).unwrap();
    let at = text.find("B two.").unwrap();
    let line_start = text[..at].rfind('\n').unwrap() + 1;
    std::fs::write(a.join(&cut), &text[..line_start]).unwrap();
    let gone = file_holding(&net, &a, "B next day.");
    std::fs::remove_file(a.join(&gone)).unwrap();
    let own = file_holding(&net, &a, "A one.");
    std::fs::remove_file(a.join(&own)).unwrap();
    let r = net.sync(&a);
    assert!(!r.stderr.contains("edits"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(a.join(&cut)).unwrap(), text);
    assert!(a.join(&gone).exists(), "another machine's file is written");
    assert!(!a.join(&own).exists(), "a file deleted here stays deleted");
    let v = net.rut(&a, &["verify", "--porcelain"]);
    assert_eq!(v.code, 1);
    assert!(v.stdout.lines().all(|l| l.contains(&own)), "{}", v.stdout);
    net.rut(&a, &["restore"]);
    net.converged(&[&a], &["A one.", "B one.", "B two.", "B next day."]);
}

/// Two syncs of one vault at once take turns: neither fails on the other's locks.
#[test]
fn two_syncs_of_one_vault_take_turns() {
    let (net, a) = Net::new();
    let b = net.machine("b");
    net.capture(&b, "2026-11-30T08:00:00.000Z", "From b.");
    net.sync(&b);
    net.capture(&a, "2026-11-30T09:00:00.000Z", "From a.");
    let _slow = net.pre_receive("#!/bin/sh\ncat >/dev/null\nsleep 1\n");
    let (one, two) = (net.spawn_sync(&a), net.spawn_sync(&a));
    for p in [one, two] {
        let out = p.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    net.sync(&b);
    net.converged(&[&a, &b], &["From a.", "From b."]);
}

/// A remote that hangs in the push is given up after `rutter.syncTimeout` (exit 2, saying
/// so); captures meanwhile commit at once, and the next sync sends everything (issue 32, F-5).
#[test]
fn a_remote_that_hangs_is_given_up_and_captures_commit_meanwhile() {
    let (net, a) = Net::new();
    net.git(&a, &["config", "rutter.syncTimeout", "2s"]);
    let (hook, pushing) = net.slow_push("exec sleep 30");
    net.capture(&a, "2026-11-30T09:00:00.000Z", "Before the hang.");
    let sync = net.spawn_sync(&a);
    Net::wait_for_push(&pushing);
    let r = net.capture(&a, "2026-11-30T09:01:00.000Z", "During the hang.");
    assert!(!r.stderr.contains("not committed yet"), "{}", r.stderr);
    let started = std::time::Instant::now();
    let out = sync.wait_with_output().unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("ran longer than 2s"), "{stderr}");
    std::fs::remove_file(&hook).unwrap();
    let r = net.sync(&a);
    assert!(r.stdout.contains("Pushed"), "{}", r.stdout);
    let b = net.machine("b");
    net.converged(&[&a, &b], &["Before the hang.", "During the hang."]);
}

/// `git-rutter mcp --allow-record` for vault `dir`, spoken to line by line over its stdio.
struct Recorder {
    child: std::process::Child,
    out: std::io::BufReader<std::process::ChildStdout>,
    next: u64,
}

impl Recorder {
    fn start(net: &Net, dir: &Path) -> Recorder {
        let mut child = net
            .cmd(dir)
            .args(["mcp", "--allow-record"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let out = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut r = Recorder {
            child,
            out,
            next: 1,
        };
        let init = serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "claude-code", "version": "1"}});
        r.call("initialize", init);
        r.send(&serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        r
    }

    fn send(&mut self, v: &serde_json::Value) {
        use std::io::Write;
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    }

    /// The result of request `method`.
    fn call(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        use std::io::BufRead;
        let id = self.next;
        self.next += 1;
        self.send(
            &serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        );
        loop {
            let mut line = String::new();
            assert!(
                self.out.read_line(&mut line).unwrap() > 0,
                "the server ended"
            );
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v["result"].clone();
            }
        }
    }

    /// Records `summary`; whether the server said it was saved.
    fn record(&mut self, summary: &str) -> bool {
        let args =
            serde_json::json!({"name": "librarian-record", "arguments": {"summary": summary}});
        let result = self.call("tools/call", args);
        let text = result["content"][0]["text"].as_str().unwrap_or("");
        result["isError"] != true && text.contains("captured 1 entry")
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// A small deterministic generator, so a failing run can be run again as it was.
fn next_random(state: &mut u64) -> u64 {
    *state = state
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    *state >> 33
}

/// One machine's share of the many-clone run: captures from the CLI and through its MCP
/// server, each round followed by a sync, some of them killed at a random moment. The
/// summaries that said they were saved.
fn busy_machine(net: &Net, dir: &Path, name: &str, rounds: usize, seed: u64) -> Vec<String> {
    let mut saved = Vec::new();
    let mut rng = seed;
    let mut mcp = Recorder::start(net, dir);
    for round in 0..rounds {
        for k in 0..2 {
            let summary = format!("{name} round {round} capture {k}.");
            let mut c = net.cmd(dir);
            c.args(["capture", "--summary", &summary, "--session"])
                .arg(format!("{name}-{round}-{k}"));
            let r = run_with_stdin(&mut c, b"");
            if r.code == 0 && r.stderr.contains("captured 1 entry") {
                saved.push(summary);
            }
        }
        let summary = format!("{name} round {round} through MCP.");
        if mcp.record(&summary) {
            saved.push(summary);
        }
        let mut sync = net
            .cmd(dir)
            .arg("sync")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        if next_random(&mut rng).is_multiple_of(3) {
            let ms = next_random(&mut rng) % 600;
            std::thread::sleep(std::time::Duration::from_millis(ms));
            let _ = sync.kill();
        }
        // Killed, refused by a moving remote or done: whatever it was, nothing may be lost.
        let _ = sync.wait();
    }
    saved
}

/// Six clones capture from the CLI and through MCP and sync in a loop through one slow
/// remote, syncs killed at random moments (issue 32, "Done when"): afterwards every capture
/// that said it was saved is in every clone's ref exactly once, the working files are what is
/// committed, `verify --full` is clean everywhere without a `restore`, and `git fsck --strict`
/// finds nothing.
#[test]
fn many_clones_syncing_through_one_slow_remote_lose_and_repeat_nothing() {
    let (net, a) = Net::new();
    let mut dirs = vec![a];
    for i in 1..6 {
        dirs.push(net.machine(&format!("c{i}")));
    }
    let _slow = net.pre_receive("#!/bin/sh\ncat >/dev/null\nsleep 0.2\n");
    let saved: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = dirs
            .iter()
            .enumerate()
            .map(|(i, dir)| {
                let net = &net;
                s.spawn(move || busy_machine(net, dir, &format!("m{i}"), 6, 7919 * (i as u64 + 1)))
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert_eq!(saved.len(), 6 * 6 * 3, "every capture said it was saved");
    // Two passes of plain syncs bring every machine everything.
    for _ in 0..2 {
        for dir in &dirs {
            net.sync(dir);
        }
    }
    let want: Vec<&str> = saved.iter().map(String::as_str).collect();
    let refs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
    net.converged(&refs, &want);
    for dir in &dirs {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["fsck", "--strict", "--no-progress"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git fsck in {dir:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let pending = std::fs::read_dir(dir.join(".git/rutter/pending")).unwrap();
        assert_eq!(pending.count(), 0, "nothing left pending in {dir:?}");
    }
}

/// A sync killed mid-fetch leaves its `git fetch` running on its own for a moment, holding the
/// remote-tracking ref's lock (seen once in the test above): the next sync waits for that lock
/// instead of failing on it.
#[test]
fn a_sync_waits_for_a_fetch_left_running_by_a_killed_sync() {
    let (net, a) = Net::new();
    let b = net.machine("b");
    net.capture(&a, "2026-11-30T08:00:00.000Z", "From A.");
    net.sync(&a);
    net.sync(&b);
    net.capture(&a, "2026-11-30T09:00:00.000Z", "From A again.");
    net.sync(&a);
    let dir = b.join(".git/refs/remotes/origin/rutter");
    std::fs::create_dir_all(&dir).unwrap();
    let lock = dir.join("records.lock");
    std::fs::write(&lock, "").unwrap();
    let r = std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(std::time::Duration::from_millis(700));
            std::fs::remove_file(&lock).unwrap();
        });
        net.sync(&b)
    });
    assert!(!r.stderr.contains("cannot lock ref"), "{}", r.stderr);
    let tip = |dir: &Path| net.git(dir, &["rev-parse", "refs/rutter/records"]);
    assert_eq!(tip(&b), tip(&a), "b has what a pushed");
}

/// A sync killed while it moved `refs/rutter/records` (the fail point dies holding the ref's
/// lock, as a SIGKILL inside libgit2's update leaves it; seen once in the test above) stops
/// nothing: the next plain sync moves the killed writer's lock aside and converges.
#[test]
fn a_sync_killed_while_moving_the_ref_leaves_nothing_that_stops_the_next() {
    let (net, a) = Net::new();
    let b = net.machine("b");
    net.capture(&a, "2026-11-30T08:00:00.000Z", "From A.");
    net.sync(&a);
    net.capture(&b, "2026-11-30T09:00:00.000Z", "From B.");
    let r = net.sync_failing_at(&b, "ref-update-killed");
    assert_ne!(r.code, 0, "the fail point kills the sync: {}", r.stderr);
    assert!(b.join(".git/refs/rutter/records.lock").exists());
    net.sync(&b);
    net.sync(&a);
    assert!(!b.join(".git/refs/rutter/records.lock").exists());
    assert!(b.join(".git/rutter/stale-locks").is_dir());
    net.converged(&[&a, &b], &["From A.", "From B."]);
}

/// A sync that runs far longer than any should (here its remote hangs and nothing bounds it)
/// is a `status` finding naming its process; one that runs a short while, or one that was
/// stopped, is information only (issue 32, F-5).
#[test]
fn a_sync_that_runs_far_too_long_is_a_status_finding() {
    let (net, a) = Net::new();
    net.git(&a, &["config", "rutter.syncTimeout", "off"]);
    let (hook, pushing) = net.slow_push("exec sleep 60");
    net.capture(&a, "2026-11-30T08:00:00.000Z", "Waiting to go out.");
    let mut sync = net
        .cmd(&a)
        .env("RUTTER_TIMESTAMP", "2026-11-30T08:00:00.000Z")
        .arg("sync")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    Net::wait_for_push(&pushing);
    // The findings of `status --json` at `ts` (no client is installed here: that one aside).
    let status_at = |ts: &str| {
        let r = run_with_stdin(
            net.cmd(&a)
                .env("RUTTER_TIMESTAMP", ts)
                .args(["status", "--json"]),
            b"",
        );
        let v: Status = decode(&r.stdout);
        let kinds: Vec<String> = v
            .kinds()
            .into_iter()
            .filter(|k| *k != "hook-missing")
            .map(str::to_string)
            .collect();
        (kinds, v)
    };
    let (kinds, v) = status_at("2026-11-30T08:05:00.000Z");
    assert!(kinds.is_empty(), "{v:#?}");
    let running = v.sync().running.as_ref().unwrap();
    assert!(running.alive, "{v:#?}");
    assert_eq!(running.pid, sync.id());
    let (kinds, v) = status_at("2026-11-30T09:05:00.000Z");
    assert_eq!(kinds, ["sync-stuck"], "{v:#?}");
    let text = run_with_stdin(
        net.cmd(&a)
            .env("RUTTER_TIMESTAMP", "2026-11-30T09:05:00.000Z")
            .arg("status"),
        b"",
    );
    assert!(
        text.stdout.contains(&format!("kill {}", sync.id())),
        "{}",
        text.stdout
    );
    // Stopped, it is information: the next sync finishes what it left.
    sync.kill().unwrap();
    sync.wait().unwrap();
    let (kinds, v) = status_at("2026-11-30T09:05:00.000Z");
    assert!(kinds.is_empty(), "{v:#?}");
    assert!(!v.sync().running.as_ref().unwrap().alive, "{v:#?}");
    std::fs::remove_file(&hook).unwrap();
    net.sync(&a);
    let (_, v) = status_at("2026-11-30T09:06:00.000Z");
    assert!(v.sync().running.is_none(), "{v:#?}");
}

/// A remote git would read as an option, or whose name git does not take (set by hand in the
/// config), is refused by what is wrong with its name, not as "no such remote", and the hint
/// is a command the shell runs as written; an unknown name still gets `git remote add`, and so
/// does a URL or a path given where a name goes.
#[test]
fn remote_names_git_does_not_take_are_refused_by_name() {
    let env = common::Env::git_vault();
    let url = env.root().join("remote.git");
    let url = url.to_str().unwrap();
    env.git(&["config", "remote.-x.url", url]);
    env.git(&["config", "remote.my remote.url", url]);
    let cases = [
        (
            vec!["sync", "--setup", "--", "-x"],
            "\"-x\" starts with '-', which git would read as an option",
        ),
        (
            vec!["sync", "--setup", "my remote"],
            "\"my remote\" is not a name git takes for a remote",
        ),
        (
            vec!["sync", "--setup", "nothere"],
            "no remote named \"nothere\". Add it with `git remote add nothere URL`",
        ),
        // A URL or a path given for a name: no rename to suggest, a remote to add.
        (
            vec!["sync", "--setup", "/srv/git/notes.git"],
            "\"/srv/git/notes.git\" is not the name of a git remote, so sync refuses it. Sync \
             takes a remote's name: add one for it (`git remote add NAME /srv/git/notes.git`)",
        ),
        (
            vec!["sync", "--setup", "git@example.invalid:me/notes.git"],
            "(`git remote add NAME git@example.invalid:me/notes.git`)",
        ),
    ];
    for (args, said) in cases {
        let r = env.rutter(&args);
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(said), "{args:?}: {}", r.stderr);
    }
    let r = env.rutter(&["sync", "--setup", "my remote"]);
    assert!(
        r.stderr.contains("`git remote rename -- 'my remote' NAME`"),
        "{}",
        r.stderr
    );
    let set = env.git_with(&["config", "--get", "rutter.syncRemote"], &[]);
    assert_eq!(set.code, 1, "no sync remote was set: {}", set.stdout);
}
