//! `git rutter purge` and purges crossing machines (spec/purge.md), on real clones of a bare
//! remote: the entry's bytes are in no object of any clone or of the remote's record history,
//! `verify --full` is clean and names the purge, `git fsck --strict` is clean, and a forged
//! "purge" that drops another line too is refused.

use crate::common;
use common::json::{decode, Recent};
use common::net::*;
use std::path::Path;

const SECRET: &str = "ghp_PurgeMePurgeMePurgeMe0123456789abcd";

fn writer_id(dir: &Path) -> String {
    std::fs::read_to_string(dir.join(".git/rutter/machine"))
        .unwrap()
        .trim()
        .to_string()
}

/// Every object of `dir`'s repository, as `git cat-file --batch-all-objects --batch` prints
/// them (bare remotes included).
fn all_objects(dir: &Path) -> String {
    let out = std::process::Command::new("git")
        .args(["cat-file", "--batch-all-objects", "--batch"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every file under `dir`, recursively, read as bytes (the secret in any of them is a leak).
fn any_file_holds(dir: &Path, needle: &str) -> Vec<String> {
    let mut hits = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                todo.push(p);
            } else if meta.is_file()
                && String::from_utf8_lossy(&std::fs::read(&p).unwrap()).contains(needle)
            {
                hits.push(p.display().to_string());
            }
        }
    }
    hits
}

fn fsck(net: &Net, dir: &Path) {
    let out = std::process::Command::new("git")
        .args(["fsck", "--strict", "--no-dangling"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "fsck in {dir:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = net;
}

/// Three machines that hold the same record: A's two entries, the second holding a secret.
fn three_machines() -> (Net, [std::path::PathBuf; 3], String) {
    let (net, a) = Net::new();
    net.capture(&a, "2026-11-30T09:00:00.000Z", "Kept decision.");
    net.capture(
        &a,
        "2026-11-30T09:05:00.000Z",
        &format!("Set the CI token to {SECRET} by mistake."),
    );
    net.sync(&a);
    let b = net.machine("b");
    let c = net.machine("c");
    net.capture(&b, "2026-11-30T10:00:00.000Z", "B's decision.");
    net.sync(&b);
    net.sync(&c);
    net.sync(&a);
    let id = format!("20261130T090500000Z-{}", writer_id(&a));
    (net, [a, b, c], id)
}

#[test]
fn a_purge_removes_the_entry_from_every_object_and_says_so() {
    let (net, [a, _, _], id) = three_machines();
    assert!(
        all_objects(&a).contains(SECRET),
        "the secret is there first"
    );
    let dry = net.rut(&a, &["purge", &id, "--reason", "a token", "--dry-run"]);
    assert_eq!(dry.code, 0, "{}{}", dry.stdout, dry.stderr);
    assert!(
        dry.stdout
            .starts_with(&format!("would purge {id} (2026-11-30")),
        "{}",
        dry.stdout
    );
    assert!(
        all_objects(&a).contains(SECRET),
        "a dry run changes nothing"
    );
    let r = net.rut(
        &a,
        &["purge", &id, "--reason", "a token pasted into a summary"],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.starts_with(&format!("purged {id} (2026-11-30")),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("verify --full: clean"), "{}", r.stdout);
    assert!(
        r.stdout.contains("Not reached by this purge"),
        "{}",
        r.stdout
    );
    assert!(!all_objects(&a).contains(SECRET), "no object of A holds it");
    assert_eq!(any_file_holds(&a, SECRET), Vec::<String>::new());
    fsck(&net, &a);
    let v = net.rut(&a, &["verify", "--full"]);
    assert_eq!(v.code, 0, "{}", v.stdout);
    assert!(
        v.stdout
            .contains(&format!("purged: entry {id} (2026-11-30) was purged on")),
        "{}",
        v.stdout
    );
    let log = net.rut(&a, &["log"]).stdout;
    assert!(
        log.contains("Kept decision.") && log.contains("B's decision."),
        "{log}"
    );
    // Recall shows the gap where the entry stood, with no content.
    let gap = "purged on 2026-"; // the purge's own date
    let purged_row = log.lines().find(|l| l.contains(&id)).unwrap_or_default();
    assert!(
        purged_row.contains(" purged ") && purged_row.contains(gap),
        "{log}"
    );
    assert!(
        purged_row.ends_with(": a token pasted into a summary"),
        "{purged_row}"
    );
    let recent = net.rut(&a, &["recent", "--all"]).stdout;
    assert!(
        recent.contains(gap) && recent.contains("a token pasted into a summary"),
        "{recent}"
    );
    let json: Recent = decode(&net.rut(&a, &["recent", "--json"]).stdout);
    assert!(json.steps().any(|s| s.status == "purged"), "{json:#?}");
    let again = net.rut(&a, &["purge", &id, "--reason", "again"]);
    assert_eq!(again.code, 1, "{}", again.stderr);
    assert!(
        again.stderr.contains("was purged already"),
        "{}",
        again.stderr
    );
}

#[test]
fn a_purge_crosses_to_every_clone_and_the_remote_checked_against_each_copy() {
    let (net, [a, b, c], id) = three_machines();
    let r = net.rut(&a, &["purge", &id, "--reason", "a token"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let sent = net.sync(&a);
    assert!(
        sent.stdout.contains(&format!("Sent the purge of {id}")),
        "{}",
        sent.stdout
    );
    // A decision captured on C before it hears of the purge survives it.
    net.capture(&c, "2026-11-30T11:00:00.000Z", "C's decision.");
    for dir in [&b, &c] {
        let took = net.sync(dir);
        assert!(
            took.stdout
                .contains(&format!("Took the remote's purge of {id}")),
            "{}",
            took.stdout
        );
    }
    net.sync(&a);
    net.sync(&b);
    let want = ["Kept decision.", "B's decision.", "C's decision."];
    net.converged(&[&a, &b, &c], &want);
    for dir in [&a, &b, &c] {
        assert!(!all_objects(dir).contains(SECRET), "objects of {dir:?}");
        assert_eq!(any_file_holds(dir, SECRET), Vec::<String>::new());
        fsck(&net, dir);
        let v = net.rut(dir, &["verify", "--full"]);
        assert!(
            v.stdout.contains(&format!("purged: entry {id}")),
            "{}",
            v.stdout
        );
    }
    // The remote's record history holds none of it (its host prunes its own unreachable
    // objects; git does so here).
    let log = net.git(&net.remote, &["log", "-p", "refs/rutter/records"]);
    assert!(!log.contains(SECRET));
    net.git(&net.remote, &["gc", "--prune=now", "-q"]);
    assert!(!all_objects(&net.remote).contains(SECRET));
}

#[test]
fn a_forged_purge_that_drops_another_line_is_refused() {
    let (net, [a, b, _], id) = three_machines();
    // A "purge" made by hand on A: the secret's entry and the kept decision both dropped from
    // the history, with a purge record naming only the secret.
    let r = net.rut(&a, &["purge", &id, "--reason", "a token"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let kept = format!("20261130T090000000Z-{}", writer_id(&a));
    let honest = net.git(&a, &["rev-parse", "refs/rutter/records"]);
    let forged = forge_without(&net, &a, &kept);
    assert_ne!(forged.trim(), honest.trim());
    net.git(
        &a,
        &[
            "push",
            "-q",
            "--force",
            "origin",
            &format!("{}:refs/rutter/records", forged.trim()),
        ],
    );
    let before = net.git(&b, &["rev-parse", "refs/rutter/records"]);
    let refused = net.rut(&b, &["sync"]);
    assert_eq!(refused.code, 1, "{}{}", refused.stdout, refused.stderr);
    assert!(
        refused
            .stderr
            .contains("minus exactly the lines its purges"),
        "{}",
        refused.stderr
    );
    assert_eq!(
        net.git(&b, &["rev-parse", "refs/rutter/records"]),
        before,
        "nothing taken"
    );
    assert!(net.rut(&b, &["log"]).stdout.contains("Kept decision."));
}

/// The history of `dir`'s ref rewritten by `git filter-branch`-like plumbing without the entry
/// `id`'s line too: the forger's tip.
fn forge_without(net: &Net, dir: &Path, id: &str) -> String {
    let script = format!(
        "git -c core.hooksPath=/dev/null filter-branch -f --tree-filter 'for f in $(find _librarian/sessions -type f 2>/dev/null); do grep -v \"{id}\" \"$f\" > \"$f.tmp\" || true; mv \"$f.tmp\" \"$f\"; done' refs/rutter/records >/dev/null 2>&1; git rev-parse refs/rutter/records"
    );
    let out = std::process::Command::new("sh")
        .args(["-c", &script])
        .current_dir(dir)
        .env("FILTER_BRANCH_SQUELCH_WARNING", "1")
        .output()
        .unwrap();
    let _ = net;
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A second, different line under an entry's id (forged into the record, or arrived from a
/// remote whose history was made again): a purge removes one line and cannot tell which was
/// meant, so it refuses, dry run included, and changes nothing.
#[test]
fn a_purge_of_an_id_two_different_lines_carry_is_refused() {
    let env = common::Env::git_vault();
    let r = env.capture_at("2026-11-30T10:00:00.000Z", "A first.", &["Notes/a.md"]);
    assert!(r.stderr.contains("committed"), "{}", r.stderr);
    let day = "_librarian/sessions/2026-11-30.md";
    let committed = env.committed(day);
    let line = committed.lines().last().unwrap();
    let forged = format!("{committed}{}\n", line.replace("A first.", "A FORGED."));
    common::Forged {
        writes: &[(&common::in_ref(day), &forged)],
        message: "rutter: capture 2026-11-30",
        why: "a second line under the same id",
        ..Default::default()
    }
    .commit(&env);
    env.write(day, &forged);
    let tip = env.git(&["rev-parse", "refs/rutter/records"]);
    let id = line
        .split("\"id\":\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    for dry in [true, false] {
        let mut args = vec!["purge", id, "--reason", "forged"];
        if dry {
            args.push("--dry-run");
        }
        let r = env.rutter(&args);
        assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
        assert!(
            r.stderr
                .contains(&format!("two different committed lines carry the id {id}"))
                && r.stderr.contains("nothing was purged"),
            "{}",
            r.stderr
        );
        assert_eq!(env.git(&["rev-parse", "refs/rutter/records"]), tip);
    }
    assert_eq!(env.read(day), forged);
}
